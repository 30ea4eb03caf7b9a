//! LMOVE, RPOPLPUSH and the blocking BLMOVE, BRPOPLPUSH.

use super::{end_arg, write_list};
use crate::commands::{block_or_null, Ctx};
use crate::keyspace::{End, List, Value};
use crate::pubsub::notify;
use crate::zset_commands::{after_write, parse};

/// Moves one element from `from` of the list at `src` to `to` of the list at `dst`
/// (created when absent) and replies it; one change, as Redis counts it. False, with
/// nothing replied, when `src` is missing.
fn move_one(ctx: &mut Ctx, src: &[u8], dst: &[u8], from: End, to: End) -> bool {
    let (db, cfg) = (ctx.client.db, ctx.server.config.list);
    let Ok(found) = write_list(ctx, src) else {
        return true;
    };
    if found.is_none() {
        return false;
    }
    // The destination's type is checked before anything moves.
    if src != dst && write_list(ctx, dst).is_err() {
        return true;
    }
    let list = write_list(ctx, src).ok().flatten().expect("checked above");
    let value = list.pop(from, 1, &cfg).pop().expect("a non-empty list");
    let (pushed, popped) = (
        match to {
            End::Front => "lpush",
            End::Back => "rpush",
        },
        match from {
            End::Front => "lpop",
            End::Back => "rpop",
        },
    );
    if src == dst {
        list.push(to, &[&value], &cfg);
        ctx.server.keyspace.signal_modified(db, src);
        ctx.notify(notify::LIST, pushed, dst);
        ctx.notify(notify::LIST, popped, src);
    } else {
        // As Redis's lmoveGenericCommand: the push's events, then the pop's.
        let empty = list.is_empty();
        let (entry, created) =
            ctx.server
                .keyspace
                .lookup_write_or_create(db, dst, ctx.now_ms, || Value::List(List::new()));
        let list = entry.value.as_list_mut().expect("checked above");
        list.push(to, &[&value], &cfg);
        if !created {
            ctx.server.keyspace.signal_modified(db, dst);
        }
        ctx.notify(notify::LIST, pushed, dst);
        after_write(ctx, src, empty, notify::LIST, popped);
    }
    ctx.server.keyspace.add_dirty(1);
    ctx.out.bulk(&value);
    true
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT
pub fn lmove(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(from) = end_arg(ctx, args[3]) else {
        return;
    };
    let Some(to) = end_arg(ctx, args[4]) else {
        return;
    };
    if !move_one(ctx, args[1], args[2], from, to) {
        ctx.out.null();
    }
}

/// RPOPLPUSH source destination
pub fn rpoplpush(ctx: &mut Ctx, args: &[&[u8]]) {
    if !move_one(ctx, args[1], args[2], End::Back, End::Front) {
        ctx.out.null();
    }
}

/// Moves, or waits on the source until `deadline` (inside MULTI: the null reply). A move
/// replays in the AOF as its non-blocking form (`replay`: LMOVE's or RPOPLPUSH's argv).
fn blocking_move(
    ctx: &mut Ctx,
    args: &[&[u8]],
    from: End,
    to: End,
    deadline: Option<u64>,
    replay: &[&[u8]],
) {
    if move_one(ctx, args[1], args[2], from, to) {
        ctx.propagate_instead(replay);
    } else {
        block_or_null(ctx, &args[1..2], deadline, false);
    }
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout
pub fn blmove(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(from) = end_arg(ctx, args[3]) else {
        return;
    };
    let Some(to) = end_arg(ctx, args[4]) else {
        return;
    };
    let Some(deadline) = parse::timeout(ctx, args[5]) else {
        return;
    };
    blocking_move(
        ctx,
        args,
        from,
        to,
        deadline,
        &[b"LMOVE", args[1], args[2], args[3], args[4]],
    );
}

/// BRPOPLPUSH source destination timeout
pub fn brpoplpush(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(deadline) = parse::timeout(ctx, args[3]) else {
        return;
    };
    blocking_move(
        ctx,
        args,
        End::Back,
        End::Front,
        deadline,
        &[b"RPOPLPUSH", args[1], args[2]],
    );
}
