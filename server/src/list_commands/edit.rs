//! LSET, LTRIM, LREM.

use super::{position, write_list};
use crate::commands::Ctx;
use crate::errors;
use crate::pubsub::notify;
use crate::zset_commands::after_write;

/// LSET key index element
pub fn lset(ctx: &mut Ctx, args: &[&[u8]]) {
    let (key, element) = (args[1], args[3]);
    let cfg = ctx.server.config.list;
    let Ok(found) = write_list(ctx, key) else {
        return;
    };
    if found.is_none() {
        return ctx.error(errors::NO_SUCH_KEY);
    }
    let Some(index) = ctx.int_arg(args[2]) else {
        return;
    };
    let list = write_list(ctx, key).ok().flatten().expect("checked above");
    // Redis converts before it checks the index.
    list.prepare_push(&[element], &cfg);
    let Some(i) = position(index, list.len()) else {
        return ctx.error("ERR index out of range");
    };
    list.set(i, element, &cfg);
    ctx.server.keyspace.signal_modified(ctx.client.db, key);
    ctx.notify(notify::LIST, "lset", key);
    ctx.server.keyspace.add_dirty(1);
    ctx.out.ok();
}

/// LTRIM key start stop
pub fn ltrim(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(start) = ctx.int_arg(args[2]) else {
        return;
    };
    let Some(stop) = ctx.int_arg(args[3]) else {
        return;
    };
    let cfg = ctx.server.config.list;
    let key = args[1];
    let Ok(found) = write_list(ctx, key) else {
        return;
    };
    let Some(list) = found else {
        return ctx.out.ok();
    };
    let len = list.len();
    let keep = crate::zset_commands::parse::rank_range(start, stop, len).unwrap_or(0..0);
    let (head, tail) = (keep.start, len - keep.end.max(keep.start));
    let tail_from = len - tail;
    list.remove_range(tail_from, tail, &cfg);
    list.remove_range(0, head, &cfg);
    let empty = list.is_empty();
    // Redis signals the key even when nothing was trimmed.
    after_write(ctx, key, empty, notify::LIST, "ltrim");
    ctx.server.keyspace.add_dirty((head + tail) as u64);
    ctx.out.ok();
}

/// LREM key count element
pub fn lrem(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(count) = ctx.int_arg(args[2]) else {
        return;
    };
    let cfg = ctx.server.config.list;
    let key = args[1];
    let Ok(found) = write_list(ctx, key) else {
        return;
    };
    let Some(list) = found else {
        return ctx.out.int(0);
    };
    let limit = match count.unsigned_abs() {
        0 => usize::MAX,
        n => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let removed = list.remove_value(args[3], count < 0, limit, &cfg);
    let empty = list.is_empty();
    if removed > 0 {
        after_write(ctx, key, empty, notify::LIST, "lrem");
        ctx.server.keyspace.add_dirty(removed as u64);
    }
    ctx.out.int(removed as i64);
}
