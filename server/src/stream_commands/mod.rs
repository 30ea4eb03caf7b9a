//! The stream commands (X*), on the `goblin-zset` stream engine.
//!
//! - [`add`]: XADD, XTRIM.
//! - [`read`]: XRANGE, XREVRANGE, XLEN.
//! - [`edit`]: XDEL, XSETID.
//! - [`xread`]: XREAD, blocking or not.
//! - [`group`]: XGROUP and its subcommands.
//! - [`ack`]: XACK, on the pending entries of a group.
//! - [`info`]: XINFO STREAM, GROUPS, CONSUMERS and HELP.
//! - [`readgroup`]: XREADGROUP, blocking or not.
//! - [`pending`]: XPENDING, the summary and the extended form.
//! - [`claim`]: XCLAIM, XAUTOCLAIM.
//! - `id`: id arguments as Redis parses them; `trim`: the MAXLEN / MINID options and their
//!   rewrite for propagation.
//!
//! Writes propagate as Redis propagates them: XADD with the id it generated, an
//! approximate trim (`~`) as the exact one it came to.

mod ack;
mod add;
mod claim;
mod edit;
mod group;
mod id;
mod info;
mod pending;
mod read;
mod readgroup;
mod trim;
mod xread;

use crate::clients::ReplRole;
use crate::commands::{container, Command, Ctx, Flags, StatSlot};
use crate::errors::until_nul;
use crate::keyspace::stream::{with_item_bytes, EntryRef, Nack, ID_TEXT_LEN};
use crate::keyspace::{StreamId, Value};
use crate::resp::reply::ReplyWriter;

const WDF: Flags = Flags::WRITE.with(Flags::DENYOOM).with(Flags::FAST);
const W: Flags = Flags::WRITE;
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);

/// Every stream command.
pub static COMMANDS: [Command; 15] = [
    Command::simple("xadd", -5, WDF, add::xadd),
    Command::simple("xtrim", -4, W, add::xtrim),
    Command::simple("xrange", -4, R, read::xrange),
    Command::simple("xrevrange", -4, R, read::xrevrange),
    Command::simple("xlen", 2, RF, read::xlen),
    Command::simple("xdel", -3, WF, edit::xdel),
    Command::simple("xsetid", -3, WDF, edit::xsetid),
    Command::simple("xread", -4, R.with(Flags::BLOCKING), xread::xread),
    Command::simple("xack", -4, WF, ack::xack),
    Command::simple(
        "xreadgroup",
        -7,
        W.with(Flags::BLOCKING),
        readgroup::xreadgroup,
    ),
    Command::simple("xpending", -3, R, pending::xpending),
    Command::simple("xclaim", -6, WF, claim::xclaim),
    Command::simple("xautoclaim", -6, WF, claim::xautoclaim),
    Command {
        name: "xgroup",
        arity: -2,
        flags: Flags::NONE,
        handler: container,
        subcommands: &XGROUP_SUBS,
        slot: StatSlot::new(),
    },
    Command {
        name: "xinfo",
        arity: -2,
        flags: Flags::NONE,
        handler: container,
        subcommands: &XINFO_SUBS,
        slot: StatSlot::new(),
    },
];

const WD: Flags = Flags::WRITE.with(Flags::DENYOOM);
const LS: Flags = Flags::LOADING.with(Flags::STALE);

/// XGROUP's subcommands.
static XGROUP_SUBS: [Command; 6] = [
    Command::simple("xgroup|create", -5, WD, group::create),
    Command::simple("xgroup|createconsumer", 5, WD, group::createconsumer),
    Command::simple("xgroup|delconsumer", 5, W, group::delconsumer),
    Command::simple("xgroup|destroy", 4, W, group::destroy),
    Command::simple("xgroup|help", 2, LS, group::help),
    Command::simple("xgroup|setid", -5, W, group::setid),
];

/// XINFO's subcommands.
static XINFO_SUBS: [Command; 4] = [
    Command::simple("xinfo|consumers", 4, R, info::consumers),
    Command::simple("xinfo|groups", 3, R, info::groups),
    Command::simple("xinfo|help", 2, LS, info::help),
    Command::simple("xinfo|stream", -3, R, info::stream_info),
];

/// The NOGROUP error for group `group` of key `key`.
fn no_group(key: &[u8], group: &[u8]) -> String {
    format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        String::from_utf8_lossy(group),
        String::from_utf8_lossy(key)
    )
}

/// Whether the running client is obeyed unconditionally: the AOF loader or this server's
/// master (Redis's mustObeyClient).
fn obeys_unconditionally(ctx: &Ctx) -> bool {
    ctx.client.id == crate::aof::load::AOF_CLIENT_ID || ctx.client.repl_role == ReplRole::Master
}

/// Writes entries as XRANGE replies them: an array of `[id, [field, value, ...]]`.
fn write_entries(out: &mut ReplyWriter, entries: &[EntryRef]) {
    out.array(entries.len());
    for e in entries {
        write_entry(out, e);
    }
}

/// One entry: `[id, [field, value, ...]]`.
fn write_entry(out: &mut ReplyWriter, e: &EntryRef) {
    out.array(2);
    out.bulk(e.id().format(&mut [0; ID_TEXT_LEN]));
    out.array(e.len() * 2);
    for (field, value) in e.pairs() {
        with_item_bytes(field, |b| out.bulk(b));
        with_item_bytes(value, |b| out.bulk(b));
    }
}

/// The reply header of XREAD and XREADGROUP for `n` streams served: a map in RESP3, an
/// array of `[key, entries]` pairs in RESP2.
fn write_served_header(out: &mut ReplyWriter, n: usize) {
    if out.is_resp3() {
        out.map(n);
    } else {
        out.array(n);
    }
}

/// The key of one served stream, before its entries (in RESP2 the pair's header first).
fn write_served_key(out: &mut ReplyWriter, key: &[u8]) {
    if !out.is_resp3() {
        out.array(2);
    }
    out.bulk(key);
}

/// Propagates pending entry `id` (as the command wrote it) of `group` as Redis's
/// streamPropagateXCLAIM: `XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID
/// LASTID last`, which recreates the entry's record on a replica or from the AOF, or,
/// for an entry gone from the stream, removes it there too.
fn propagate_claim(
    ctx: &mut Ctx,
    key: &[u8],
    group: &[u8],
    id: &[u8],
    nack: &Nack,
    last: StreamId,
) {
    if !ctx.propagating() {
        return;
    }
    let (time, count, last) = (
        nack.delivery_time.to_string(),
        nack.delivery_count.to_string(),
        last.to_string(),
    );
    ctx.propagate_instead(&[
        b"XCLAIM",
        key,
        group,
        &nack.consumer,
        b"0",
        id,
        b"TIME",
        time.as_bytes(),
        b"RETRYCOUNT",
        count.as_bytes(),
        b"FORCE",
        b"JUSTID",
        b"LASTID",
        last.as_bytes(),
    ]);
}

/// Propagates the last id and read counter of `group` as Redis's streamPropagateGroupID:
/// `XGROUP SETID key group last ENTRIESREAD n` (-1 when unknown).
fn propagate_group_id(ctx: &mut Ctx, key: &[u8], group: &[u8], last: StreamId, read: Option<u64>) {
    if !ctx.propagating() {
        return;
    }
    let (last, read) = (last.to_string(), read.map_or(-1, |n| n as i64).to_string());
    ctx.propagate_instead(&[
        b"XGROUP",
        b"SETID",
        key,
        group,
        last.as_bytes(),
        b"ENTRIESREAD",
        read.as_bytes(),
    ]);
}

/// Consumer `consumer` of `group` at `key` tried to read or claim: created when absent
/// (counted as a change, with the keyspace event `xgroup-createconsumer`), seen now.
/// Returns whether it was created.
fn see_consumer(ctx: &mut Ctx, key: &[u8], group: &[u8], consumer: &[u8]) -> bool {
    let now = ctx.now_ms;
    let created = match ctx.write_typed(key, Value::as_stream_mut) {
        Ok(Some(s)) => s
            .group_mut(group)
            .is_some_and(|g| g.see_consumer(consumer, now)),
        _ => false,
    };
    if created {
        ctx.server.keyspace.add_dirty(1);
        ctx.notify(crate::pubsub::notify::STREAM, "xgroup-createconsumer", key);
    }
    created
}

/// The NOGROUP error (no such key or group) of XPENDING, XCLAIM and XAUTOCLAIM (`suffix` after it for XREADGROUP).
fn no_key_or_group(ctx: &mut Ctx, key: &[u8], group: &[u8], suffix: &str) {
    ctx.error(&format!(
        "NOGROUP No such key '{}' or consumer group '{}'{suffix}",
        String::from_utf8_lossy(until_nul(key)),
        String::from_utf8_lossy(until_nul(group)),
    ));
}
