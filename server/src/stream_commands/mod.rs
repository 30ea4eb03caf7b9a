//! The stream commands (X*), on the `goblin-zset` stream engine.
//!
//! - [`add`]: XADD, XTRIM.
//! - [`read`]: XRANGE, XREVRANGE, XLEN.
//! - [`edit`]: XDEL, XSETID.
//! - [`xread`]: XREAD, blocking or not.
//! - [`group`]: XGROUP and its subcommands.
//! - [`ack`]: XACK, on the pending entries of a group.
//! - [`info`]: XINFO STREAM, GROUPS, CONSUMERS and HELP.
//! - `id`: id arguments as Redis parses them; `trim`: the MAXLEN / MINID options and their
//!   rewrite for propagation.
//!
//! Writes propagate as Redis propagates them: XADD with the id it generated, an
//! approximate trim (`~`) as the exact one it came to.

mod ack;
mod add;
mod edit;
mod group;
mod id;
mod info;
mod read;
mod trim;
mod xread;

use crate::clients::ReplRole;
use crate::commands::{container, Command, Ctx, Flags, StatSlot};
use crate::keyspace::stream::{with_item_bytes, EntryRef};
use crate::resp::reply::ReplyWriter;

const WDF: Flags = Flags::WRITE.with(Flags::DENYOOM).with(Flags::FAST);
const W: Flags = Flags::WRITE;
const WF: Flags = Flags::WRITE.with(Flags::FAST);
const R: Flags = Flags::READONLY;
const RF: Flags = Flags::READONLY.with(Flags::FAST);

/// Every stream command.
pub static COMMANDS: [Command; 11] = [
    Command::simple("xadd", -5, WDF, add::xadd),
    Command::simple("xtrim", -4, W, add::xtrim),
    Command::simple("xrange", -4, R, read::xrange),
    Command::simple("xrevrange", -4, R, read::xrevrange),
    Command::simple("xlen", 2, RF, read::xlen),
    Command::simple("xdel", -3, WF, edit::xdel),
    Command::simple("xsetid", -3, WDF, edit::xsetid),
    Command::simple("xread", -4, R.with(Flags::BLOCKING), xread::xread),
    Command::simple("xack", -4, WF, ack::xack),
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
    out.bulk(e.id().to_string().as_bytes());
    out.array(e.len() * 2);
    for (field, value) in e.pairs() {
        with_item_bytes(field, |b| out.bulk(b));
        with_item_bytes(value, |b| out.bulk(b));
    }
}
