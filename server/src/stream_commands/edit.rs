//! XDEL and XSETID.

use super::id::{self, IdRules};
use super::trim::strict_id;
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::stream::SetIdError;
use crate::keyspace::Value;
use crate::pubsub::notify;

/// XDEL key id [id ...]: the key is looked up first (a missing key replies 0 whatever the
/// ids), then every id is checked before any is deleted.
pub fn xdel(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let Ok(found) = ctx.write_typed(key, Value::as_stream_mut) else {
        return;
    };
    if found.is_none() {
        return ctx.out.int(0);
    }
    let mut ids = Vec::with_capacity(args.len() - 2);
    for arg in &args[2..] {
        match id::parse(arg, IdRules::STRICT) {
            Some(p) => ids.push(p.id),
            None => return ctx.error(id::INVALID_ID),
        }
    }
    let Ok(Some(stream)) = ctx.write_typed(key, Value::as_stream_mut) else {
        return;
    };
    let deleted = stream.delete(&ids);
    if deleted > 0 {
        let db = ctx.client.db;
        ctx.server.keyspace.signal_modified(db, key);
        ctx.notify(notify::STREAM, "xdel", key);
        ctx.server.keyspace.add_dirty(deleted);
    }
    ctx.out.int(deleted as i64);
}

/// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]. As in
/// Redis 7.2, it signals no modification (WATCH and tracking do not see it).
pub fn xsetid(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(last) = strict_id(ctx, args[2]) else {
        return;
    };
    let (mut entries_added, mut max_deleted) = (None, None);
    let mut i = 3;
    while i < args.len() {
        let more = i + 1 < args.len();
        if args[i].eq_ignore_ascii_case(b"ENTRIESADDED") && more {
            let Some(n) = ctx.int_arg(args[i + 1]) else {
                return;
            };
            if n < 0 {
                return ctx.error("ERR entries_added must be positive");
            }
            entries_added = Some(n as u64);
        } else if args[i].eq_ignore_ascii_case(b"MAXDELETEDID") && more {
            let Some(m) = strict_id(ctx, args[i + 1]).map(|p| p.id) else {
                return;
            };
            if last.id < m {
                return ctx.error(
                    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                );
            }
            max_deleted = Some(m);
        } else {
            return ctx.syntax_error();
        }
        i += 2;
    }
    let key = args[1];
    let Ok(found) = ctx.write_typed(key, Value::as_stream_mut) else {
        return;
    };
    let Some(stream) = found else {
        return ctx.error(errors::NO_SUCH_KEY);
    };
    match stream.set_id(last.id, entries_added, max_deleted) {
        Ok(()) => {}
        Err(SetIdError::BelowMaxDeleted) => {
            return ctx.error(
                "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id",
            )
        }
        Err(SetIdError::BelowTop) => {
            return ctx
                .error("ERR The ID specified in XSETID is smaller than the target stream top item")
        }
        Err(SetIdError::EntriesAddedBelowLength) => return ctx.error(
            "ERR The entries_added specified in XSETID is smaller than the target stream length",
        ),
    }
    ctx.out.ok();
    ctx.server.keyspace.add_dirty(1);
    ctx.notify(notify::STREAM, "xsetid", key);
}
