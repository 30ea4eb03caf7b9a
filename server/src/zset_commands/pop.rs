//! ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP.

use super::{after_write, parse, write_zset};
use crate::commands::{block_or_null, first_present, Ctx};
use crate::keyspace::{Value, WrongType};
use crate::pubsub::notify;

/// Which end to pop from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Min,
    Max,
}

/// Pops up to `count` members from the set at `key`; empty when the key is missing,
/// `Err` after the WRONGTYPE reply.
fn pop(
    ctx: &mut Ctx,
    key: &[u8],
    end: End,
    count: usize,
) -> Result<Vec<(Vec<u8>, f64)>, WrongType> {
    let Some(set) = write_zset(ctx, key)? else {
        return Ok(Vec::new());
    };
    let len = set.len();
    let n = count.min(len);
    let ranks = match end {
        End::Min => 0..n,
        End::Max => len - n..len,
    };
    let mut popped: Vec<(Vec<u8>, f64)> = set
        .iter_ranks(ranks.clone())
        .map(|(m, s)| (m.to_vec(), s))
        .collect();
    if end == End::Max {
        popped.reverse();
    }
    set.remove_rank_range(ranks);
    let empty = set.is_empty();
    if n > 0 {
        let event = match end {
            End::Min => "zpopmin",
            End::Max => "zpopmax",
        };
        after_write(ctx, key, empty, notify::ZSET, event);
    }
    ctx.server.keyspace.add_dirty(n as u64);
    Ok(popped)
}

/// ZPOPMIN or ZPOPMAX, the command a blocking or multi-key pop from `end` replays as.
fn propagate_pop(ctx: &mut Ctx, end: End, key: &[u8], count: Option<usize>) {
    let name: &[u8] = match end {
        End::Min => b"ZPOPMIN",
        End::Max => b"ZPOPMAX",
    };
    match count {
        Some(n) => ctx.propagate_instead(&[name, key, n.to_string().as_bytes()]),
        None => ctx.propagate_instead(&[name, key]),
    }
}

/// Writes popped pairs flat ([m, s, m, s]) or nested ([[m, s], ...]).
fn write_pairs(ctx: &mut Ctx, popped: &[(Vec<u8>, f64)], nested: bool) {
    ctx.out.array(if nested {
        popped.len()
    } else {
        popped.len() * 2
    });
    for (member, score) in popped {
        if nested {
            ctx.out.array(2);
        }
        ctx.out.bulk(member);
        ctx.out.double(*score);
    }
}

fn zpop_generic(ctx: &mut Ctx, args: &[&[u8]], end: End) {
    if args.len() > 3 {
        return ctx.syntax_error();
    }
    let count = match args.get(2) {
        None => None,
        Some(arg) => match parse::int_in_range(
            ctx,
            arg,
            0,
            i64::MAX,
            Some("ERR value is out of range, must be positive"),
        ) {
            Some(c) => Some(c as usize),
            None => return,
        },
    };
    let Ok(popped) = pop(ctx, args[1], end, count.unwrap_or(1)) else {
        return;
    };
    let nested = ctx.out.is_resp3() && count.is_some();
    write_pairs(ctx, &popped, nested);
}

/// ZPOPMIN key [count]
pub fn zpopmin(ctx: &mut Ctx, args: &[&[u8]]) {
    zpop_generic(ctx, args, End::Min);
}

/// ZPOPMAX key [count]
pub fn zpopmax(ctx: &mut Ctx, args: &[&[u8]]) {
    zpop_generic(ctx, args, End::Max);
}

/// The first of `keys` holding a sorted set.
fn first_ready(ctx: &mut Ctx, keys: &[&[u8]]) -> Result<Option<usize>, WrongType> {
    first_present(ctx, keys, Value::as_zset_mut)
}

/// Parses `numkeys key... MIN|MAX [COUNT count]` starting at `at`.
fn parse_mpop<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    at: usize,
) -> Option<(Vec<&'a [u8]>, End, usize)> {
    let (keys, max, count) = parse::mpop_args(ctx, args, at, [b"MIN", b"MAX"])?;
    Some((keys, if max { End::Max } else { End::Min }, count))
}

/// Pops from the first non-empty key and replies `[key, [[m, s], ...]]`; false when all
/// are empty (true too after a WRONGTYPE reply).
fn mpop_reply(ctx: &mut Ctx, keys: &[&[u8]], end: End, count: usize) -> bool {
    let i = match first_ready(ctx, keys) {
        Ok(Some(i)) => i,
        Ok(None) => return false,
        Err(_) => return true,
    };
    let Ok(popped) = pop(ctx, keys[i], end, count) else {
        return true;
    };
    ctx.out.array(2);
    ctx.out.bulk(keys[i]);
    write_pairs(ctx, &popped, true);
    propagate_pop(ctx, end, keys[i], Some(popped.len()));
    true
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]
pub fn zmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((keys, end, count)) = parse_mpop(ctx, args, 1) else {
        return;
    };
    if !mpop_reply(ctx, &keys, end, count) {
        ctx.out.null_array();
    }
}

fn bzpop_generic(ctx: &mut Ctx, args: &[&[u8]], end: End) {
    let Some(deadline) = parse::timeout(ctx, args[args.len() - 1]) else {
        return;
    };
    let keys = &args[1..args.len() - 1];
    match first_ready(ctx, keys) {
        Err(_) => {}
        Ok(Some(i)) => {
            let Ok(popped) = pop(ctx, keys[i], end, 1) else {
                return;
            };
            let (member, score) = &popped[0];
            ctx.out.array(3);
            ctx.out.bulk(keys[i]);
            ctx.out.bulk(member);
            ctx.out.double(*score);
            propagate_pop(ctx, end, keys[i], None);
        }
        Ok(None) => block_or_null(ctx, keys, deadline, true),
    }
}

/// BZPOPMIN key [key ...] timeout
pub fn bzpopmin(ctx: &mut Ctx, args: &[&[u8]]) {
    bzpop_generic(ctx, args, End::Min);
}

/// BZPOPMAX key [key ...] timeout
pub fn bzpopmax(ctx: &mut Ctx, args: &[&[u8]]) {
    bzpop_generic(ctx, args, End::Max);
}

/// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
pub fn bzmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((keys, end, count)) = parse_mpop(ctx, args, 2) else {
        return;
    };
    let Some(deadline) = parse::timeout(ctx, args[1]) else {
        return;
    };
    if !mpop_reply(ctx, &keys, end, count) {
        block_or_null(ctx, &keys, deadline, true);
    }
}
