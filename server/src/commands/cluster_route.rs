//! Cluster mode's routing of a command (Redis's getNodeByQuery and clusterRedirectClient):
//! the slot of its keys (found with [`super::keyspecs`]), and whether this node serves it
//! or the client is sent elsewhere: MOVED, ASK, CROSSSLOT, TRYAGAIN, CLUSTERDOWN. EXEC is
//! routed on the keys of every queued command; inside MULTI each command is routed as it is
//! queued, and a refusal fails the transaction.

use super::{keyspecs, Command, Ctx, Flags};
use crate::cluster::node::{flags, NodeId};
use crate::cluster::slot::key_slot;

/// Why a command is not served here.
#[derive(Debug, PartialEq, Eq)]
pub enum Redirect {
    /// Keys in different slots.
    CrossSlot,
    /// A multi-key command during a slot's migration with some keys missing.
    Unstable,
    /// The cluster is down.
    DownState,
    /// The cluster is down and this is a write (reads allowed when down).
    DownReadOnlyState,
    /// The slot has no owner.
    DownUnbound,
    /// The slot belongs to another node.
    Moved(u16, NodeId),
    /// The slot is being migrated and the key is no longer here.
    Ask(u16, NodeId),
}

/// Whether `client` is one whose commands are obeyed without routing: the AOF loader's
/// and this node's master's link (Redis's mustObeyClient).
fn obeys_unconditionally(ctx: &Ctx) -> bool {
    ctx.client.fd < 0 || ctx.client.repl_role == crate::clients::ReplRole::Master
}

/// Whether the dispatcher must route `cmd` (it has keys, or it is EXEC).
pub fn needs_routing(ctx: &Ctx, cmd: &Command) -> bool {
    ctx.server.cluster.is_some()
        && !obeys_unconditionally(ctx)
        && (cmd.name == "exec" || keyspecs::has_keys(cmd) || is_shard_pubsub(cmd))
}

/// SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH: their shard channels are routed like keys.
fn is_shard_pubsub(cmd: &Command) -> bool {
    matches!(cmd.name, "ssubscribe" | "sunsubscribe" | "spublish")
}

/// Routes `cmd` with `args` for the running client: None when this node serves it.
pub fn route(ctx: &Ctx, cmd: &'static Command, args: &[&[u8]]) -> Option<Redirect> {
    let cluster = ctx.server.cluster.as_ref()?;
    let state = &cluster.state;
    let myself = state.myself;
    let is_exec = cmd.name == "exec";
    let single;
    let queued: Vec<(&'static Command, Vec<&[u8]>)> = if is_exec {
        let queue = ctx.client.multi.as_ref()?;
        queue
            .iter()
            .map(|(c, argv)| (*c, argv.iter().map(Vec::as_slice).collect()))
            .collect()
    } else {
        single = vec![(cmd, args.to_vec())];
        single
    };
    let shard_pubsub = is_shard_pubsub(cmd);
    let mut first: Option<&[u8]> = None;
    let mut slot = 0u16;
    let mut owner: Option<NodeId> = None;
    let (mut migrating, mut importing, mut multiple) = (false, false, false);
    let (mut missing, mut existing) = (0usize, 0usize);
    let mut writes = false;
    for (c, argv) in &queued {
        writes |= c.flags.contains(Flags::WRITE);
        let keys = keyspecs::keys(c, argv).unwrap_or_default();
        let channels = is_shard_pubsub(c);
        for k in keys
            .into_iter()
            .filter(|k| channels || !k.flags.is_not_key())
        {
            let key = argv[k.pos];
            let this = key_slot(key);
            match first {
                None => {
                    first = Some(key);
                    slot = this;
                    owner = state.slots[slot as usize];
                    let Some(n) = owner else {
                        return Some(Redirect::DownUnbound);
                    };
                    if n == myself && state.migrating.contains_key(&slot) {
                        migrating = true;
                    } else if state.importing.contains_key(&slot) {
                        importing = true;
                    }
                }
                Some(f) if f != key => {
                    if this != slot {
                        return Some(Redirect::CrossSlot);
                    }
                    multiple = true;
                }
                _ => {}
            }
            if (migrating || importing) && !shard_pubsub {
                let present = ctx
                    .server
                    .keyspace
                    .db(0)
                    .get(key)
                    .is_some_and(|e| !e.is_expired(ctx.now_ms));
                if present {
                    existing += 1;
                } else {
                    missing += 1;
                }
            }
        }
    }
    let n = owner?;
    if !state.ok {
        let config = &ctx.server.config.cluster;
        if shard_pubsub {
            if !config.allow_pubsubshard_when_down {
                return Some(Redirect::DownState);
            }
        } else if !config.allow_reads_when_down {
            return Some(Redirect::DownState);
        } else if cmd.flags.contains(Flags::WRITE) {
            return Some(Redirect::DownReadOnlyState);
        }
    }
    if (migrating || importing) && cmd.name == "migrate" {
        return None;
    }
    if migrating && missing > 0 {
        if existing > 0 {
            return Some(Redirect::Unstable);
        }
        return Some(Redirect::Ask(slot, state.migrating[&slot]));
    }
    if importing && (ctx.client.cluster.asking || cmd.name == "restore-asking") {
        if multiple && missing > 0 {
            return Some(Redirect::Unstable);
        }
        return None;
    }
    let me = state.me();
    let write = cmd.flags.contains(Flags::WRITE) || (is_exec && writes);
    if (ctx.client.cluster.readonly || shard_pubsub)
        && !write
        && me.has(flags::SLAVE)
        && me.replica_of == Some(n)
    {
        return None;
    }
    if n != myself {
        return Some(Redirect::Moved(slot, n));
    }
    None
}

/// The error reply for a redirect (clusterRedirectClient).
pub fn message(server: &crate::server::Server, redirect: &Redirect) -> String {
    let endpoint = |id: &NodeId| -> (String, u16) {
        let node = server.cluster.as_ref().and_then(|c| c.state.nodes.get(id));
        match node {
            Some(n) => (
                preferred_endpoint(&server.config.cluster.preferred_endpoint, n),
                n.port,
            ),
            None => ("?".into(), 0),
        }
    };
    match redirect {
        Redirect::CrossSlot => "CROSSSLOT Keys in request don't hash to the same slot".into(),
        Redirect::Unstable => "TRYAGAIN Multiple keys request during rehashing of slot".into(),
        Redirect::DownState => "CLUSTERDOWN The cluster is down".into(),
        Redirect::DownReadOnlyState => {
            "CLUSTERDOWN The cluster is down and only accepts read commands".into()
        }
        Redirect::DownUnbound => "CLUSTERDOWN Hash slot not served".into(),
        Redirect::Moved(slot, n) | Redirect::Ask(slot, n) => {
            let (host, port) = endpoint(n);
            let kind = if matches!(redirect, Redirect::Ask(..)) {
                "ASK"
            } else {
                "MOVED"
            };
            format!("{kind} {slot} {host}:{port}")
        }
    }
}

/// The address clients are given for `node` (cluster-preferred-endpoint-type): its IP, its
/// hostname ("?" when it announces none), or "" for unknown-endpoint.
pub fn preferred_endpoint(kind: &str, node: &crate::cluster::node::Node) -> String {
    match kind {
        "ip" => node.ip.clone(),
        "hostname" if !node.hostname.is_empty() => node.hostname.clone(),
        "hostname" => "?".into(),
        _ => String::new(),
    }
}

/// Routes the command about to run or be queued: None when it may go on; otherwise the
/// refusal was replied (and a transaction failed or discarded, as Redis does).
pub fn check(ctx: &mut Ctx, cmd: &'static Command, args: &[&[u8]]) -> Option<()> {
    let redirect = route(ctx, cmd, args)?;
    let text = message(ctx.server, &redirect);
    if cmd.name == "exec" {
        super::multi::end_transaction(ctx);
    } else if ctx.client.multi.is_some() {
        ctx.client.multi_failed = true;
    }
    ctx.error(&text);
    ctx.server
        .stats
        .command(cmd.slot.get(), cmd.name)
        .rejected_calls += 1;
    Some(())
}

/// The check of a command a script calls in cluster mode (Redis's
/// scriptVerifyClusterState): `Err` with the refusal (a key this node does not serve, keys
/// across slots, the cluster down); else the slot of the command's keys, when it has keys
/// and is routed, for the script's same-slot rule.
pub fn script_check(
    ctx: &Ctx,
    cmd: &'static Command,
    args: &[&[u8]],
) -> Result<Option<u16>, &'static str> {
    if !needs_routing(ctx, cmd) {
        return Ok(None);
    }
    if let Some(redirect) = route(ctx, cmd, args) {
        return Err(match redirect {
            Redirect::DownReadOnlyState => {
                "Script attempted to execute a write command while the cluster is down and readonly"
            }
            Redirect::DownState => {
                "Script attempted to execute a command while the cluster is down"
            }
            _ => "Script attempted to access a non local key in a cluster node",
        });
    }
    let keys = keyspecs::keys(cmd, args).unwrap_or_default();
    let channels = is_shard_pubsub(cmd);
    Ok(keys
        .into_iter()
        .find(|k| channels || !k.flags.is_not_key())
        .map(|k| key_slot(args[k.pos])))
}

/// Unblocks with an error the clients blocked on keys of a slot this node does not serve
/// any more, or every blocked client while the cluster is down
/// (clusterRedirectBlockedClientIfNeeded).
pub fn redirect_blocked_clients(server: &mut crate::server::Server) {
    if server.cluster.is_none() || server.clients.blocked() == 0 {
        return;
    }
    super::blocking::refuse_blocked(server, |server, client| {
        let cluster = server.cluster.as_deref()?;
        let state = &cluster.state;
        let blocked = client.blocked.as_ref()?;
        if !state.ok {
            return Some(message(server, &Redirect::DownState));
        }
        let slot = key_slot(blocked.keys.first()?);
        let mut owner = state.slots[slot as usize];
        let me = state.me();
        let write =
            super::lookup(&blocked.command[0]).is_some_and(|c| c.flags.contains(Flags::WRITE));
        if client.cluster.readonly && !write && me.has(flags::SLAVE) && me.replica_of == owner {
            owner = Some(state.myself);
        }
        if owner == Some(state.myself) || state.importing.contains_key(&slot) {
            return None;
        }
        Some(match owner {
            None => message(server, &Redirect::DownUnbound),
            Some(n) => message(server, &Redirect::Moved(slot, n)),
        })
    });
}

/// After a command: ASKING lasts for one command (outside MULTI), as Redis's resetClient.
pub fn after_command(ctx: &mut Ctx, name: &[u8]) {
    if ctx.client.multi.is_none() && !name.eq_ignore_ascii_case(b"asking") {
        ctx.client.cluster.asking = false;
    }
}
