//! XGROUP CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER and HELP, with the checks of
//! Redis's xgroupCommand in its order: the options, the key (WRONGTYPE, then "requires the
//! key to exist" unless MKSTREAM), the group (NOGROUP for the subcommands that need it),
//! then the subcommand's own argument count.

use super::id::{self, IdRules};
use crate::commands::{help_reply, subcommand_syntax_error, Ctx};
use crate::errors;
use crate::keyspace::stream::{Group, NEVER};
use crate::keyspace::{Stream, StreamId, Value};
use crate::pubsub::notify;

/// What the shared checks found.
struct Target {
    /// ENTRIESREAD: None when absent or -1.
    entries_read: Option<u64>,
    /// MKSTREAM was given.
    mkstream: bool,
}

/// The options and the key and group checks shared by the subcommands that take a key;
/// None after the error reply.
fn prepare(ctx: &mut Ctx, args: &[&[u8]]) -> Option<Target> {
    let sub = args[1];
    let create = sub.eq_ignore_ascii_case(b"CREATE");
    let setid = sub.eq_ignore_ascii_case(b"SETID");
    let mut t = Target {
        entries_read: None,
        mkstream: false,
    };
    let mut i = 5;
    while i < args.len() {
        if create && args[i].eq_ignore_ascii_case(b"MKSTREAM") {
            t.mkstream = true;
            i += 1;
        } else if (create || setid)
            && args[i].eq_ignore_ascii_case(b"ENTRIESREAD")
            && i + 1 < args.len()
        {
            let n = ctx.int_arg(args[i + 1])?;
            if n < -1 {
                ctx.error("ERR value for ENTRIESREAD must be positive or -1");
                return None;
            }
            t.entries_read = u64::try_from(n).ok();
            i += 2;
        } else {
            subcommand_syntax_error(ctx, args);
            return None;
        }
    }
    let (key, group) = (args[2], args[3]);
    let found = ctx.write_typed(key, Value::as_stream_mut).ok()?;
    let has_group = found.as_ref().map(|s| s.group(group).is_some());
    if !t.mkstream {
        match has_group {
            None => {
                ctx.error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.");
                return None;
            }
            Some(false) if !create && !sub.eq_ignore_ascii_case(b"DESTROY") => {
                ctx.error(&super::no_group(key, group));
                return None;
            }
            _ => {}
        }
    }
    Some(t)
}

/// The stream at `key`, which [`prepare`] found (or MKSTREAM is about to create).
fn stream<'c>(ctx: &'c mut Ctx, key: &[u8]) -> Option<&'c mut Stream> {
    ctx.write_typed(key, Value::as_stream_mut).ok().flatten()
}

/// A change of the group: counted, and the keyspace event `event`.
fn changed(ctx: &mut Ctx, event: &'static str, key: &[u8]) {
    ctx.server.keyspace.add_dirty(1);
    ctx.notify(notify::STREAM, event, key);
}

/// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD entries-read]
pub fn create(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(t) = prepare(ctx, args) else {
        return;
    };
    if args.len() > 8 {
        return subcommand_syntax_error(ctx, args);
    }
    let (key, name) = (args[2], args[3]);
    let last = if args[4] == b"$" {
        stream(ctx, key).map_or(StreamId::MIN, |s| s.last_id())
    } else {
        match id::parse(args[4], IdRules::STRICT) {
            Some(p) => p.id,
            None => return ctx.error(id::INVALID_ID),
        }
    };
    let (db, now_ms) = (ctx.client.db, ctx.now_ms);
    let make = || Value::Stream(Box::default());
    let (entry, _) = ctx
        .server
        .keyspace
        .lookup_write_or_create(db, key, now_ms, make);
    let Ok(s) = entry.value.as_stream_mut() else {
        return ctx.error(errors::WRONGTYPE);
    };
    if s.create_group(name, Group::new(last, t.entries_read)) {
        ctx.out.ok();
        changed(ctx, "xgroup-create", key);
    } else {
        ctx.error("BUSYGROUP Consumer Group name already exists");
    }
}

/// XGROUP SETID key group id|$ [ENTRIESREAD entries-read]
pub fn setid(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(t) = prepare(ctx, args) else {
        return;
    };
    if args.len() != 5 && args.len() != 7 {
        return subcommand_syntax_error(ctx, args);
    }
    let (key, name) = (args[2], args[3]);
    let given = if args[4] == b"$" {
        None
    } else {
        match id::parse(args[4], IdRules::loose(0)) {
            Some(p) => Some(p.id),
            None => return ctx.error(id::INVALID_ID),
        }
    };
    let Some(s) = stream(ctx, key) else {
        return;
    };
    let last = given.unwrap_or(s.last_id());
    if let Some(g) = s.group_mut(name) {
        g.last_id = last;
        g.entries_read = t.entries_read;
    }
    ctx.out.ok();
    changed(ctx, "xgroup-setid", key);
}

/// XGROUP DESTROY key group
pub fn destroy(ctx: &mut Ctx, args: &[&[u8]]) {
    if prepare(ctx, args).is_none() {
        return;
    }
    let key = args[2];
    let destroyed = stream(ctx, key).is_some_and(|s| s.destroy_group(args[3]));
    ctx.out.int(i64::from(destroyed));
    if destroyed {
        changed(ctx, "xgroup-destroy", key);
        let db = ctx.client.db;
        ctx.server.keyspace.signal_ready(db, key);
    }
}

/// XGROUP CREATECONSUMER key group consumer
pub fn createconsumer(ctx: &mut Ctx, args: &[&[u8]]) {
    if prepare(ctx, args).is_none() {
        return;
    }
    let (key, now_ms) = (args[2], ctx.now_ms);
    let created = stream(ctx, key)
        .and_then(|s| s.group_mut(args[3]))
        .is_some_and(|g| g.create_consumer(args[4], now_ms, NEVER));
    ctx.out.int(i64::from(created));
    if created {
        changed(ctx, "xgroup-createconsumer", key);
    }
}

/// XGROUP DELCONSUMER key group consumer: replies how many entries it had pending.
pub fn delconsumer(ctx: &mut Ctx, args: &[&[u8]]) {
    if prepare(ctx, args).is_none() {
        return;
    }
    let key = args[2];
    let pending = stream(ctx, key)
        .and_then(|s| s.group_mut(args[3]))
        .and_then(|g| g.delete_consumer(args[4]));
    ctx.out.int(pending.unwrap_or(0) as i64);
    if pending.is_some() {
        changed(ctx, "xgroup-delconsumer", key);
    }
}

/// XGROUP HELP
pub fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    help_reply(
        ctx,
        "XGROUP",
        &[
            "CREATE <key> <groupname> <id|$> [option]",
            "    Create a new consumer group. Options are:",
            "    * MKSTREAM",
            "      Create the empty stream if it does not exist.",
            "    * ENTRIESREAD entries_read",
            "      Set the group's entries_read counter (internal use).",
            "CREATECONSUMER <key> <groupname> <consumer>",
            "    Create a new consumer in the specified group.",
            "DELCONSUMER <key> <groupname> <consumer>",
            "    Remove the specified consumer.",
            "DESTROY <key> <groupname>",
            "    Remove the specified group.",
            "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
            "    Set the current group ID and entries_read counter.",
        ],
    );
}
