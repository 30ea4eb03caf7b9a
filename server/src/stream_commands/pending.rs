//! XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
//!
//! The summary form: how many entries are pending, the first and last id, and per
//! consumer with pending entries how many (its count as a bulk string, as Redis). The
//! extended form: the pending entries in an id range (of one consumer when named), each
//! with its consumer, the milliseconds since its last delivery and its delivery count;
//! IDLE keeps those idle at least that long. The arguments are checked before the key, in
//! Redis's order (the count before the ids).

use super::id;
use super::no_key_or_group;
use crate::commands::Ctx;
use crate::keyspace::stream::{Group, NackRef};
use crate::keyspace::{StreamId, Value};

/// The extended form's arguments.
struct Extended<'a> {
    min_idle: i64,
    start: StreamId,
    end: StreamId,
    count: usize,
    consumer: Option<&'a [u8]>,
}

/// Parses the extended form's arguments; None after the error reply.
fn parse_extended<'a>(ctx: &mut Ctx, args: &[&'a [u8]]) -> Option<Extended<'a>> {
    let mut at = 3;
    let mut min_idle = 0;
    if args[3].eq_ignore_ascii_case(b"IDLE") {
        min_idle = ctx.int_arg(args[4])?;
        if args.len() < 8 {
            ctx.syntax_error();
            return None;
        }
        at += 2;
    }
    let count = ctx.int_arg(args[at + 2])?.max(0) as usize;
    let Some((start, excluded)) = id::parse_bound(args[at], 0) else {
        ctx.error(id::INVALID_ID);
        return None;
    };
    let Some(start) = (if excluded { start.next() } else { Some(start) }) else {
        ctx.error("ERR invalid start ID for the interval");
        return None;
    };
    let Some((end, excluded)) = id::parse_bound(args[at + 1], u64::MAX) else {
        ctx.error(id::INVALID_ID);
        return None;
    };
    let Some(end) = (if excluded { end.prev() } else { Some(end) }) else {
        ctx.error("ERR invalid end ID for the interval");
        return None;
    };
    Some(Extended {
        min_idle,
        start,
        end,
        count,
        consumer: args.get(at + 3).copied(),
    })
}

/// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
pub fn xpending(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() != 3 && !(6..=9).contains(&args.len()) {
        return ctx.syntax_error();
    }
    let extended = if args.len() >= 6 {
        match parse_extended(ctx, args) {
            Some(e) => Some(e),
            None => return,
        }
    } else {
        None
    };
    let (key, group) = (args[1], args[2]);
    let now = ctx.now_ms;
    let (found, out) = ctx.read_typed_and_out(key, Value::as_stream);
    let Ok(found) = found else {
        return;
    };
    let Some(g) = found.and_then(|s| s.group(group)) else {
        return no_key_or_group(ctx, key, group, "");
    };
    let Some(e) = extended else {
        return summary(out, g);
    };
    let pel: Box<dyn Iterator<Item = (StreamId, NackRef)>> = match e.consumer {
        None => Box::new(g.pending_from(e.start)),
        Some(name) => match g.consumer(name) {
            None => return out.array(0),
            Some(c) => Box::new(g.consumer_pending(c, e.start)),
        },
    };
    let idle = |n: &NackRef| (now as i64).wrapping_sub(n.delivery_time as i64);
    let rows: Vec<_> = pel
        .take_while(|(id, _)| *id <= e.end)
        .filter(|(_, n)| e.min_idle == 0 || idle(n) >= e.min_idle)
        .take(e.count)
        .collect();
    out.array(rows.len());
    for (id, n) in rows {
        out.array(4);
        out.bulk(id.to_string().as_bytes());
        out.bulk(n.consumer);
        out.int(idle(&n).max(0));
        out.int(n.delivery_count as i64);
    }
}

/// The summary form's reply.
fn summary(out: &mut crate::resp::reply::ReplyWriter, g: &Group) {
    out.array(4);
    out.int(g.pending_len() as i64);
    let Some((first, last)) = g.pending_bounds() else {
        out.null();
        out.null();
        return out.null_array();
    };
    out.bulk(first.to_string().as_bytes());
    out.bulk(last.to_string().as_bytes());
    let owners: Vec<_> = g.consumers().filter(|c| c.pending_len() > 0).collect();
    out.array(owners.len());
    for c in owners {
        out.array(2);
        out.bulk(c.name());
        out.bulk(c.pending_len().to_string().as_bytes());
    }
}
