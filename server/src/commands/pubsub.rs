//! The pub/sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB, the
//! RESP2 subscribed-mode gate, and dropping a client's subscriptions (RESET, disconnect).
//!
//! PUBLISH writes each message into the receiver's output: its own reply stream when the
//! receiver is the publisher, otherwise the lease output of the client registry, after which
//! the receiver is woken, so `net` writes it out at once even when that client sends nothing.
//! Subscribers are held to `client-output-buffer-limit pubsub` when `net` services them.

use super::server_cmds::subcommand_syntax_error;
use super::table::StatSlot;
use super::{Command, Ctx, Flags};
use crate::clients::{Client, Clients};
use crate::pubsub::{frame, Kind, PendingPushes};
use crate::resp::reply::ReplyWriter;
use crate::server::Server;

/// Flags of the subscribe family: allowed in RESP2's subscribed mode.
const SUB: Flags = Flags::NOSCRIPT
    .with(Flags::LOADING)
    .with(Flags::STALE)
    .with(Flags::SUBSCRIBED_CONTEXT);
/// Flags of PUBLISH / SPUBLISH.
const PUB: Flags = Flags::LOADING.with(Flags::STALE).with(Flags::FAST);
/// Flags of the PUBSUB subcommands.
const INTROSPECT: Flags = Flags::LOADING.with(Flags::STALE);

const fn sub(name: &'static str, arity: i32, handler: super::Handler) -> Command {
    Command::simple(name, arity, INTROSPECT, handler)
}

static PUBSUB_SUBS: [Command; 6] = [
    sub("pubsub|channels", -2, channels),
    sub("pubsub|numsub", -2, numsub),
    sub("pubsub|numpat", 2, numpat),
    sub("pubsub|shardchannels", -2, shardchannels),
    sub("pubsub|shardnumsub", -2, shardnumsub),
    sub("pubsub|help", 2, help),
];

/// How many of [`COMMANDS`] are the (un)subscribe family (they come first).
const SUBSCRIBE_FAMILY: usize = 6;

/// The pub/sub commands of the table.
pub static COMMANDS: [Command; 9] = [
    Command::simple("subscribe", -2, SUB, subscribe),
    Command::simple("unsubscribe", -1, SUB, unsubscribe),
    Command::simple("psubscribe", -2, SUB, psubscribe),
    Command::simple("punsubscribe", -1, SUB, punsubscribe),
    Command::simple("ssubscribe", -2, SUB, ssubscribe),
    Command::simple("sunsubscribe", -1, SUB, sunsubscribe),
    Command::simple("publish", 3, PUB, publish),
    Command::simple("spublish", 3, PUB, spublish),
    Command {
        name: "pubsub",
        arity: -2,
        flags: INTROSPECT,
        handler: super::table::container,
        subcommands: &PUBSUB_SUBS,
        slot: StatSlot::new(),
    },
];

/// The error for a command other than the subscribe family, PING, QUIT and RESET from a
/// RESP2 client in subscribed mode.
pub fn not_in_subscribed_context(name: &str) -> String {
    format!("ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
}

/// Whether the client is a RESP2 client in subscribed mode (only the subscribe family, PING,
/// QUIT and RESET run; PING answers as a message).
#[inline]
pub fn in_subscribed_mode(client: &Client) -> bool {
    !client.resp3 && client.subscriptions.active()
}

/// Whether the command's replies are all (un)subscribe confirmations, which CLIENT REPLY
/// OFF / SKIP do not silence (Redis 7.2).
pub fn replies_are_pushes(cmd: &Command) -> bool {
    COMMANDS[..SUBSCRIBE_FAMILY]
        .iter()
        .any(|c| std::ptr::eq(c, cmd))
}

/// SUBSCRIBE channel [channel ...]
fn subscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    subscribe_to(ctx, Kind::Channel, &args[1..]);
}

/// PSUBSCRIBE pattern [pattern ...]
fn psubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    subscribe_to(ctx, Kind::Pattern, &args[1..]);
}

/// SSUBSCRIBE shardchannel [shardchannel ...]
fn ssubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    subscribe_to(ctx, Kind::Shard, &args[1..]);
}

/// UNSUBSCRIBE [channel ...]
fn unsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_from(ctx, Kind::Channel, &args[1..]);
}

/// PUNSUBSCRIBE [pattern ...]
fn punsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_from(ctx, Kind::Pattern, &args[1..]);
}

/// SUNSUBSCRIBE [shardchannel ...]
fn sunsubscribe(ctx: &mut Ctx, args: &[&[u8]]) {
    unsubscribe_from(ctx, Kind::Shard, &args[1..]);
}

/// Subscribes to each name in turn, confirming each with the count after it.
fn subscribe_to(ctx: &mut Ctx, kind: Kind, names: &[&[u8]]) {
    let (what, _) = kind.confirmations();
    for &name in names {
        if ctx
            .client
            .subscriptions
            .names_mut(kind)
            .insert(name.to_vec())
        {
            ctx.server.pubsub.add(kind, name, ctx.client.id);
        }
        let count = ctx.client.subscriptions.confirmed_count(kind);
        frame::confirmation(&mut ctx.out, what, Some(name), count);
    }
}

/// Unsubscribes from each name (from every name of the kind without any), confirming each;
/// from nothing, one confirmation with a null name.
fn unsubscribe_from(ctx: &mut Ctx, kind: Kind, names: &[&[u8]]) {
    let (_, what) = kind.confirmations();
    let all: Vec<Vec<u8>>;
    let names: Vec<&[u8]> = if names.is_empty() {
        all = ctx
            .client
            .subscriptions
            .names(kind)
            .iter()
            .cloned()
            .collect();
        if all.is_empty() {
            let count = ctx.client.subscriptions.confirmed_count(kind);
            return frame::confirmation(&mut ctx.out, what, None, count);
        }
        all.iter().map(Vec::as_slice).collect()
    } else {
        names.to_vec()
    };
    for name in names {
        if ctx.client.subscriptions.names_mut(kind).remove(name) {
            ctx.server.pubsub.remove(kind, name, ctx.client.id);
        }
        let count = ctx.client.subscriptions.confirmed_count(kind);
        frame::confirmation(&mut ctx.out, what, Some(name), count);
    }
}

/// Drops every subscription of a client, without confirmations (RESET, a closed connection).
pub fn drop_subscriptions(server: &mut Server, client: &mut Client) {
    for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
        for name in client.subscriptions.names_mut(kind).drain() {
            server.pubsub.remove(kind, &name, client.id);
        }
    }
}

/// PUBLISH channel message (in cluster mode also sent to every node over the bus).
fn publish(ctx: &mut Ctx, args: &[&[u8]]) {
    publish_to(ctx, Kind::Channel, args);
}

/// SPUBLISH shardchannel message (in cluster mode also sent to the shard's other nodes).
fn spublish(ctx: &mut Ctx, args: &[&[u8]]) {
    publish_to(ctx, Kind::Shard, args);
}

/// Delivers a PUBLISH / SPUBLISH here, and sends it on: over the cluster bus in cluster
/// mode, else down the replication stream (not into the AOF), as Redis.
fn publish_to(ctx: &mut Ctx, kind: Kind, args: &[&[u8]]) {
    let receivers = deliver(ctx, kind, args[1], args[2]);
    match ctx.server.cluster.as_deref_mut() {
        Some(cluster) => cluster.queue_publish(args[1], args[2], kind == Kind::Shard),
        None => ctx.force_propagation_to_replicas(),
    }
    ctx.out.int(receivers as i64);
}

/// Sends a message to the subscribers of `channel` (and, for a plain channel, to those of
/// the patterns matching it), as Redis does: channel subscribers first. Returns how many
/// received it.
fn deliver(ctx: &mut Ctx, kind: Kind, channel: &[u8], payload: &[u8]) -> usize {
    deliver_to(ctx.server, None, kind, channel, payload)
}

/// Delivers a message another cluster node received (a PUBLISH or PUBLISHSHARD of the
/// bus) to this node's subscribers; returns how many received it.
pub fn deliver_from_bus(server: &mut Server, shard: bool, channel: &[u8], payload: &[u8]) -> usize {
    let kind = if shard { Kind::Shard } else { Kind::Channel };
    deliver_to(server, None, kind, channel, payload)
}

/// The client whose command fired keyspace notifications (and its replies), once the
/// command replied.
type Running<'c, 'w> = Option<(&'c Client, &'c mut ReplyWriter<'w>)>;

/// The body of [`deliver`] and [`deliver_from_bus`].
fn deliver_to(
    server: &mut Server,
    mut me: Running,
    kind: Kind,
    channel: &[u8],
    payload: &[u8],
) -> usize {
    let Server {
        pubsub,
        clients,
        pushes,
        config,
        ..
    } = server;
    let hard = config.pubsub_output_limit.hard;
    let mut receivers = 0;
    for &id in pubsub.subscribers(kind, channel) {
        send(clients, pushes, hard, &mut me, id, |w| {
            frame::message(w, kind, None, channel, payload)
        });
        receivers += 1;
    }
    if kind == Kind::Channel {
        for (pattern, ids) in pubsub.matching_patterns(channel) {
            for &id in ids {
                send(clients, pushes, hard, &mut me, id, |w| {
                    frame::message(w, kind, Some(pattern), channel, payload)
                });
                receivers += 1;
            }
        }
    }
    receivers
}

/// Publishes the keyspace notifications fired since the last call (see
/// [`crate::pubsub::notify`]), in order; `me` is the client whose command fired them,
/// whose own frames follow its reply.
pub fn publish_notifications(server: &mut Server, mut me: Option<(&Client, &mut ReplyWriter)>) {
    if !server.keyspace.notifier.has_pending() {
        return;
    }
    for event in server.keyspace.notifier.take() {
        for (channel, payload) in server.keyspace.notifier.channels(&event) {
            let me = me.as_mut().map(|(c, w)| (&**c, &mut **w));
            deliver_to(server, me, Kind::Channel, &channel, &payload);
        }
    }
}

/// Writes one frame for client `id`: into `me`'s replies (after its command), held for the
/// client whose command runs (to follow its reply), or through the registry to another
/// client ([`Clients::push_to`], with `hard_limit` as client-output-buffer-limit pubsub's).
fn send(
    clients: &mut Clients,
    pushes: &mut PendingPushes,
    hard_limit: u64,
    me: &mut Running,
    id: u64,
    write: impl Fn(&mut ReplyWriter),
) {
    if let Some((client, out)) = me {
        if client.id == id {
            return write(out);
        }
    }
    if !pushes.hold(id, &write) {
        clients.push_to(id, hard_limit, |out, _| write(out));
    }
}

/// PUBSUB CHANNELS [pattern]
fn channels(ctx: &mut Ctx, args: &[&[u8]]) {
    list_names(ctx, Kind::Channel, args);
}

/// PUBSUB SHARDCHANNELS [pattern]
fn shardchannels(ctx: &mut Ctx, args: &[&[u8]]) {
    list_names(ctx, Kind::Shard, args);
}

/// The active names of `kind` matching the optional pattern.
fn list_names(ctx: &mut Ctx, kind: Kind, args: &[&[u8]]) {
    if args.len() > 3 {
        return subcommand_syntax_error(ctx, args);
    }
    let names = ctx.server.pubsub.names(kind, args.get(2).copied());
    ctx.out.array(names.len());
    for name in names {
        ctx.out.bulk(name);
    }
}

/// PUBSUB NUMSUB [channel ...]
fn numsub(ctx: &mut Ctx, args: &[&[u8]]) {
    count_subscribers(ctx, Kind::Channel, &args[2..]);
}

/// PUBSUB SHARDNUMSUB [shardchannel ...]
fn shardnumsub(ctx: &mut Ctx, args: &[&[u8]]) {
    count_subscribers(ctx, Kind::Shard, &args[2..]);
}

/// Each name with its number of subscribers (patterns not counted), as a flat array.
fn count_subscribers(ctx: &mut Ctx, kind: Kind, names: &[&[u8]]) {
    ctx.out.array(names.len() * 2);
    for name in names {
        ctx.out.bulk(name);
        let n = ctx.server.pubsub.subscribers(kind, name).len();
        ctx.out.int(n as i64);
    }
}

/// PUBSUB NUMPAT
fn numpat(ctx: &mut Ctx, _args: &[&[u8]]) {
    let n = ctx.server.pubsub.len(Kind::Pattern);
    ctx.out.int(n as i64);
}

/// PUBSUB HELP (Redis's text, "Prints this help." included).
fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    const LINES: [&str; 14] = [
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
    ];
    ctx.out.array(LINES.len());
    for line in LINES {
        ctx.out.simple(line);
    }
}
