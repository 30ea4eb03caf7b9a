//! LPUSH, RPUSH, LPUSHX, RPUSHX, LINSERT.

use std::ops::ControlFlow;

use super::write_list;
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::{End, List};
use crate::pubsub::notify;

/// Pushes `args[2..]` onto the list at `args[1]` (created unless `only_existing`) and
/// replies its length; each element counts one change, as in Redis. A listpack list its
/// key's record holds takes the elements there while it stays one.
fn push_generic(ctx: &mut Ctx, args: &[&[u8]], end: End, only_existing: bool) {
    let (db, key, items) = (ctx.client.db, args[1], &args[2..]);
    let cfg = ctx.server.config.list;
    let Some((found, created)) =
        ctx.server
            .keyspace
            .lookup_list_for_push(db, key, ctx.now_ms, !only_existing)
    else {
        return ctx.out.int(0);
    };
    // One lookup finds or creates the list; another type is replied here.
    let Ok(len) = found.push(end, items, &cfg) else {
        return ctx.error(errors::WRONGTYPE);
    };
    if !created {
        ctx.server.keyspace.signal_modified(db, key);
        // A longer list may be enough for a BLMOVEM EXACTLY waiting on it.
        ctx.server.keyspace.signal_ready(db, key);
    }
    let event = match end {
        End::Front => "lpush",
        End::Back => "rpush",
    };
    ctx.notify(notify::LIST, event, key);
    ctx.server.keyspace.add_dirty(items.len() as u64);
    ctx.out.int(len as i64);
}

/// LPUSH key element [element ...]
pub fn lpush(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Front, false);
}

/// RPUSH key element [element ...]
pub fn rpush(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Back, false);
}

/// LPUSHX key element [element ...]
pub fn lpushx(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Front, true);
}

/// RPUSHX key element [element ...]
pub fn rpushx(ctx: &mut Ctx, args: &[&[u8]]) {
    push_generic(ctx, args, End::Back, true);
}

/// LINSERT key BEFORE|AFTER pivot element
pub fn linsert(ctx: &mut Ctx, args: &[&[u8]]) {
    let (key, pivot, element) = (args[1], args[3], args[4]);
    let after = if args[2].eq_ignore_ascii_case(b"AFTER") {
        true
    } else if args[2].eq_ignore_ascii_case(b"BEFORE") {
        false
    } else {
        return ctx.syntax_error();
    };
    let cfg = ctx.server.config.list;
    let Ok(found) = write_list(ctx, key) else {
        return;
    };
    let Some(list) = found else {
        return ctx.out.int(0);
    };
    // Redis converts before it looks for the pivot, found or not.
    list.prepare_push(&[element], &cfg);
    let (mut at, mut seen) = (None, 0);
    list.each_from(0, |m| {
        if List::element_eq(m, pivot) {
            at = Some(seen);
            return ControlFlow::Break(());
        }
        seen += 1;
        ControlFlow::Continue(())
    });
    let Some(at) = at else {
        return ctx.out.int(-1);
    };
    list.insert(at, after, element, &cfg);
    let len = list.len();
    ctx.server.keyspace.signal_modified(ctx.client.db, key);
    ctx.server.keyspace.signal_ready(ctx.client.db, key);
    ctx.notify(notify::LIST, "linsert", key);
    ctx.server.keyspace.add_dirty(1);
    ctx.out.int(len as i64);
}
