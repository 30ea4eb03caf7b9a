//! LPOP, RPOP, LMPOP and the blocking BLPOP, BRPOP, BLMPOP.

use super::write_list;
use crate::commands::{block_or_null, first_present, Ctx};
use crate::errors;
use crate::keyspace::{End, Value, WrongType};
use crate::pubsub::notify;
use crate::zset_commands::{after_write, parse};

/// Pops up to `count` elements from `end` of the list at `key` (removing the key when
/// it empties; one change per element); empty when the key is missing, `Err` after the
/// WRONGTYPE reply.
pub(super) fn pop_from(
    ctx: &mut Ctx,
    key: &[u8],
    end: End,
    count: usize,
) -> Result<Vec<Vec<u8>>, WrongType> {
    let cfg = ctx.server.config.list;
    let Some(list) = write_list(ctx, key)? else {
        return Ok(Vec::new());
    };
    let popped = list.pop(end, count, &cfg);
    let empty = list.is_empty();
    if !popped.is_empty() {
        let event = match end {
            End::Front => "lpop",
            End::Back => "rpop",
        };
        after_write(ctx, key, empty, notify::LIST, event);
        ctx.server.keyspace.add_dirty(popped.len() as u64);
    }
    Ok(popped)
}

/// What a pop from the blocking or multi-key forms replays as in the AOF (Redis's rewrite):
/// LPOP or RPOP of the key, with the count when `count` is given.
fn propagate_pop(ctx: &mut Ctx, key: &[u8], end: End, count: Option<usize>) {
    let name: &[u8] = match end {
        End::Front => b"LPOP",
        End::Back => b"RPOP",
    };
    match count {
        Some(n) => ctx.propagate_instead(&[name, key, n.to_string().as_bytes()]),
        None => ctx.propagate_instead(&[name, key]),
    }
}

/// Replies elements as an array.
fn write_elements(ctx: &mut Ctx, elements: &[Vec<u8>]) {
    ctx.out.array(elements.len());
    for e in elements {
        ctx.out.bulk(e);
    }
}

fn pop_generic(ctx: &mut Ctx, args: &[&[u8]], end: End, name: &str) {
    if args.len() > 3 {
        return ctx.error(&errors::wrong_arity(name));
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
    let Ok(found) = write_list(ctx, args[1]) else {
        return;
    };
    if found.is_none() {
        return match count {
            Some(_) => ctx.out.null_array(),
            None => ctx.out.null(),
        };
    }
    let Ok(mut popped) = pop_from(ctx, args[1], end, count.unwrap_or(1)) else {
        return;
    };
    match count {
        Some(_) => write_elements(ctx, &popped),
        None => ctx.out.bulk(&popped.pop().expect("a non-empty list")),
    }
}

/// LPOP key [count]
pub fn lpop(ctx: &mut Ctx, args: &[&[u8]]) {
    pop_generic(ctx, args, End::Front, "lpop");
}

/// RPOP key [count]
pub fn rpop(ctx: &mut Ctx, args: &[&[u8]]) {
    pop_generic(ctx, args, End::Back, "rpop");
}

/// The first of `keys` holding a list.
fn first_ready(ctx: &mut Ctx, keys: &[&[u8]]) -> Result<Option<usize>, WrongType> {
    first_present(ctx, keys, Value::as_list_mut)
}

/// Parses `numkeys key... LEFT|RIGHT [COUNT count]` starting at `at`.
fn parse_mpop<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    at: usize,
) -> Option<(Vec<&'a [u8]>, End, usize)> {
    let (keys, right, count) = parse::mpop_args(ctx, args, at, [b"LEFT", b"RIGHT"])?;
    Some((keys, if right { End::Back } else { End::Front }, count))
}

/// Pops from the first non-empty key and replies `[key, [element, ...]]`; false when all
/// are empty (true too after a WRONGTYPE reply).
fn mpop_reply(ctx: &mut Ctx, keys: &[&[u8]], end: End, count: usize) -> bool {
    let i = match first_ready(ctx, keys) {
        Ok(Some(i)) => i,
        Ok(None) => return false,
        Err(_) => return true,
    };
    let Ok(popped) = pop_from(ctx, keys[i], end, count) else {
        return true;
    };
    propagate_pop(ctx, keys[i], end, Some(popped.len()));
    ctx.out.array(2);
    ctx.out.bulk(keys[i]);
    write_elements(ctx, &popped);
    true
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]
pub fn lmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((keys, end, count)) = parse_mpop(ctx, args, 1) else {
        return;
    };
    if !mpop_reply(ctx, &keys, end, count) {
        ctx.out.null_array();
    }
}

fn bpop_generic(ctx: &mut Ctx, args: &[&[u8]], end: End) {
    let Some(deadline) = parse::timeout(ctx, args[args.len() - 1]) else {
        return;
    };
    let keys = &args[1..args.len() - 1];
    match first_ready(ctx, keys) {
        Err(_) => {}
        Ok(Some(i)) => {
            let Ok(popped) = pop_from(ctx, keys[i], end, 1) else {
                return;
            };
            propagate_pop(ctx, keys[i], end, None);
            ctx.out.array(2);
            ctx.out.bulk(keys[i]);
            ctx.out.bulk(&popped[0]);
        }
        Ok(None) => block_or_null(ctx, keys, deadline, true),
    }
}

/// BLPOP key [key ...] timeout
pub fn blpop(ctx: &mut Ctx, args: &[&[u8]]) {
    bpop_generic(ctx, args, End::Front);
}

/// BRPOP key [key ...] timeout
pub fn brpop(ctx: &mut Ctx, args: &[&[u8]]) {
    bpop_generic(ctx, args, End::Back);
}

/// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
pub fn blmpop(ctx: &mut Ctx, args: &[&[u8]]) {
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
