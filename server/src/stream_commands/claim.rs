//! XCLAIM and XAUTOCLAIM: pending entries change owner.
//!
//! Both create the consumer on first use, drop from the PEL the entries the stream no
//! longer holds, and propagate as Redis does: an `XCLAIM ... FORCE JUSTID LASTID` per entry
//! claimed or dropped (a replica drops the entry as well, its entry being gone too), and
//! for XCLAIM's LASTID that moved the group's last id with nothing else propagated, an
//! `XGROUP SETID ... ENTRIESREAD`.

use super::id::{self, IdRules};
use super::{no_key_or_group, propagate_claim, propagate_group_id, see_consumer, write_entry};
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::stream::{Claim, ClaimHow};
use crate::keyspace::{Stream, StreamId, Value};
use crate::resp::reply::ReplyWriter;

/// What XCLAIM's options asked for.
struct ClaimOptions {
    how: ClaimHow,
    last_id: StreamId,
}

/// XCLAIM's ids and options after min-idle-time: the ids are the arguments up to the first
/// that is not one; the rest are options. None after the error reply.
fn parse_claim(
    ctx: &mut Ctx,
    args: &[&[u8]],
    min_idle: i64,
) -> Option<(Vec<StreamId>, ClaimOptions)> {
    let now = ctx.now_ms;
    let ids: Vec<StreamId> = args[5..]
        .iter()
        .map_while(|a| id::parse(a, IdRules::STRICT).map(|p| p.id))
        .collect();
    let mut how = ClaimHow {
        now,
        min_idle,
        delivery_time: now,
        retry_count: None,
        justid: false,
        force: false,
    };
    let mut delivery: Option<i64> = None;
    let mut last_id = StreamId::MIN;
    let mut j = 5 + ids.len();
    while j < args.len() {
        let more = j + 1 < args.len();
        let opt = args[j];
        let value = |ctx: &mut Ctx, name: &str| {
            let v = crate::numbers::parse_i64(args[j + 1]);
            if v.is_none() {
                ctx.error(&format!("ERR Invalid {name} option argument for XCLAIM"));
            }
            v
        };
        if opt.eq_ignore_ascii_case(b"FORCE") {
            how.force = true;
        } else if opt.eq_ignore_ascii_case(b"JUSTID") {
            how.justid = true;
        } else if opt.eq_ignore_ascii_case(b"IDLE") && more {
            delivery = Some((now as i64).wrapping_sub(value(ctx, "IDLE")?));
            j += 1;
        } else if opt.eq_ignore_ascii_case(b"TIME") && more {
            delivery = Some(value(ctx, "TIME")?);
            j += 1;
        } else if opt.eq_ignore_ascii_case(b"RETRYCOUNT") && more {
            how.retry_count = u64::try_from(value(ctx, "RETRYCOUNT")?).ok();
            j += 1;
        } else if opt.eq_ignore_ascii_case(b"LASTID") && more {
            j += 1;
            match id::parse(args[j], IdRules::STRICT) {
                Some(p) => last_id = p.id,
                None => {
                    ctx.error(id::INVALID_ID);
                    return None;
                }
            }
        } else {
            let text = String::from_utf8_lossy(crate::errors::until_nul(opt));
            ctx.error(&format!("ERR Unrecognized XCLAIM option '{text}'"));
            return None;
        }
        j += 1;
    }
    // A bogus delivery time (negative, or in the future) becomes now, as Redis decides.
    if let Some(t) = delivery {
        how.delivery_time = u64::try_from(t).ok().filter(|&t| t <= now).unwrap_or(now);
    }
    Some((ids, ClaimOptions { how, last_id }))
}

/// Whether `key` holds a stream with group `group`; false after the WRONGTYPE or NOGROUP
/// reply.
fn has_group(ctx: &mut Ctx, key: &[u8], group: &[u8]) -> bool {
    let Ok(found) = ctx.read_typed(key, Value::as_stream) else {
        return false;
    };
    if found.is_none_or(|s| s.group(group).is_none()) {
        no_key_or_group(ctx, key, group, "");
        return false;
    }
    true
}

/// The stream at `key`, which [`has_group`] found.
fn stream<'c>(ctx: &'c mut Ctx, key: &[u8]) -> &'c mut Stream {
    match ctx.write_typed(key, Value::as_stream_mut) {
        Ok(Some(s)) => s,
        _ => unreachable!("the key was looked up just before"),
    }
}

/// Writes a claimed entry: its id (JUSTID) or the whole entry.
fn write_claimed(out: &mut ReplyWriter, s: &Stream, id: StreamId, justid: bool) {
    match s.range(id, id, false).next() {
        Some(e) if !justid => write_entry(out, &e),
        _ => out.bulk(id.to_string().as_bytes()),
    }
}

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
pub fn xclaim(ctx: &mut Ctx, args: &[&[u8]]) {
    ctx.propagate_nothing();
    let (key, group, consumer) = (args[1], args[2], args[3]);
    if !has_group(ctx, key, group) {
        return;
    }
    let Some(min_idle) = crate::numbers::parse_i64(args[4]) else {
        return ctx.error("ERR Invalid min-idle-time argument for XCLAIM");
    };
    let Some((ids, o)) = parse_claim(ctx, args, min_idle.max(0)) else {
        return;
    };
    let mut moved_last = None;
    let g = stream(ctx, key).group_mut(group).expect("group checked");
    if o.last_id > g.last_id {
        g.last_id = o.last_id;
        moved_last = Some((g.last_id, g.entries_read));
    }
    see_consumer(ctx, key, group, consumer);
    let mut reply = Vec::new();
    let mut out = ReplyWriter::new(&mut reply, ctx.out.is_resp3());
    let mut claimed = 0;
    for (j, &id) in ids.iter().enumerate() {
        let s = stream(ctx, key);
        let exists = s.contains(id);
        let g = s.group_mut(group).expect("group checked");
        let outcome = g.claim(id, consumer, exists, &o.how);
        let last = g.last_id;
        let nack = match outcome {
            Claim::Skipped => continue,
            Claim::Dropped(nack) => nack,
            Claim::Claimed(nack) => {
                write_claimed(&mut out, s, id, o.how.justid);
                claimed += 1;
                nack
            }
        };
        propagate_claim(ctx, key, group, args[5 + j], &nack, last);
        moved_last = None;
        ctx.server.keyspace.add_dirty(1);
    }
    if let Some((last, read)) = moved_last {
        propagate_group_id(ctx, key, group, last, read);
        ctx.server.keyspace.add_dirty(1);
    }
    ctx.out.array(claimed);
    ctx.out.raw(&reply);
}

/// XAUTOCLAIM's largest COUNT (Redis's LONG_MAX / 16, so its allocations cannot overflow).
const AUTOCLAIM_MAX_COUNT: i64 = i64::MAX / 16;
/// XAUTOCLAIM looks at up to this many PEL entries per entry it may claim.
const AUTOCLAIM_ATTEMPTS_FACTOR: usize = 10;

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
///
/// Claims up to COUNT entries idle long enough from `start` on, looking at ten times as
/// many; replies the id to continue from (0-0 at the end), the entries claimed, and the
/// ids dropped from the PEL as gone from the stream (which count toward COUNT).
pub fn xautoclaim(ctx: &mut Ctx, args: &[&[u8]]) {
    ctx.propagate_nothing();
    let (key, group, consumer) = (args[1], args[2], args[3]);
    let Some(min_idle) = crate::numbers::parse_i64(args[4]) else {
        return ctx.error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
    };
    let Some((start, excluded)) = id::parse_bound(args[5], 0) else {
        return ctx.error(id::INVALID_ID);
    };
    let Some(start) = (if excluded { start.next() } else { Some(start) }) else {
        return ctx.error("ERR invalid start ID for the interval");
    };
    let (mut count, mut justid) = (100usize, false);
    let mut j = 6;
    while j < args.len() {
        if args[j].eq_ignore_ascii_case(b"COUNT") && j + 1 < args.len() {
            match crate::numbers::parse_i64(args[j + 1]) {
                Some(n @ 1..=AUTOCLAIM_MAX_COUNT) => count = n as usize,
                _ => return ctx.error("ERR COUNT must be > 0"),
            }
            j += 1;
        } else if args[j].eq_ignore_ascii_case(b"JUSTID") {
            justid = true;
        } else {
            return ctx.error(errors::SYNTAX);
        }
        j += 1;
    }
    if !has_group(ctx, key, group) {
        return;
    }
    see_consumer(ctx, key, group, consumer);
    let now = ctx.now_ms;
    let how = ClaimHow {
        now,
        min_idle: min_idle.max(0),
        delivery_time: now,
        retry_count: None,
        justid,
        force: false,
    };
    // The PEL entries looked at (each costs an attempt; each claimed or dropped counts
    // toward COUNT), and the one to continue from.
    let (looked, next) = {
        let s = stream(ctx, key);
        let g = s.group(group).expect("group checked");
        let attempts = count.saturating_mul(AUTOCLAIM_ATTEMPTS_FACTOR);
        let mut pel = g.pending_from(start);
        let (mut looked, mut tried, mut budget, mut ended) = (Vec::new(), 0, count, false);
        while tried < attempts && budget > 0 {
            let Some((id, nack)) = pel.next() else {
                ended = true;
                break;
            };
            tried += 1;
            let idle = (now as i64).wrapping_sub(nack.delivery_time as i64);
            if !s.contains(id) || how.min_idle == 0 || idle >= how.min_idle {
                looked.push(id);
                budget -= 1;
            }
        }
        let next = match ended {
            true => StreamId::MIN,
            false => pel.next().map_or(StreamId::MIN, |(id, _)| id),
        };
        (looked, next)
    };
    let mut reply = Vec::new();
    let mut out = ReplyWriter::new(&mut reply, ctx.out.is_resp3());
    let (mut claimed, mut deleted) = (0, Vec::new());
    for id in looked {
        let s = stream(ctx, key);
        let exists = s.contains(id);
        let g = s.group_mut(group).expect("group checked");
        let outcome = g.claim(id, consumer, exists, &how);
        let last = g.last_id;
        let nack = match outcome {
            Claim::Skipped => continue,
            Claim::Dropped(nack) => {
                deleted.push(id);
                nack
            }
            Claim::Claimed(nack) => {
                write_claimed(&mut out, s, id, justid);
                claimed += 1;
                nack
            }
        };
        propagate_claim(ctx, key, group, id.to_string().as_bytes(), &nack, last);
        ctx.server.keyspace.add_dirty(1);
    }
    ctx.out.array(3);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(claimed);
    ctx.out.raw(&reply);
    ctx.out.array(deleted.len());
    for id in deleted {
        ctx.out.bulk(id.to_string().as_bytes());
    }
}
