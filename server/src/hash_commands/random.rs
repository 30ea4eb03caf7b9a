//! HRANDFIELD, with Redis 7.2's cases for the count.

use super::lazy::expire_all_due;
use super::{read_hash, write_pair};
use crate::commands::Ctx;
use crate::keyspace::Hash;
use crate::resp::reply::ReplyWriter;
use crate::zset_commands::parse;
use hashbrown::HashSet;

/// How much larger than the count a hash must be for HRANDFIELD to draw fields one by one
/// instead of keeping random ones of all of them (Redis's HRANDFIELD_SUB_STRATEGY_MUL).
const HRANDFIELD_SUB_STRATEGY_MUL: usize = 3;

/// HRANDFIELD key [count [WITHVALUES]]
pub fn hrandfield(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 2 {
        let mut rng = ctx.server.keyspace.command_rng();
        if let Some((hash, out)) = lookup(ctx, args[1], ReplyWriter::null) {
            out.bulk(hash.random(rng.next_u64()).0);
        }
        return;
    }
    let Some(l) = parse::int_in_range(ctx, args[2], -i64::MAX, i64::MAX, None) else {
        return;
    };
    let with_values = match args {
        [_, _, _] => false,
        [_, _, _, opt] if opt.eq_ignore_ascii_case(b"withvalues") => true,
        _ => return ctx.syntax_error(),
    };
    if with_values && !(-i64::MAX / 2..=i64::MAX / 2).contains(&l) {
        return ctx.error("ERR value is out of range");
    }
    with_count(ctx, args[1], l, with_values);
}

/// The hash at `key` for HRANDFIELD, beside the reply writer: looked up (a hit or a
/// miss, or WRONGTYPE), then rid of its due fields, as Redis's hashTypeExpireIfNeeded;
/// None after the reply `missing` when the key is absent or went with its fields.
fn lookup<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    key: &[u8],
    missing: fn(&mut ReplyWriter<'a>),
) -> Option<(&'c Hash, &'c mut ReplyWriter<'a>)> {
    match read_hash(ctx, key) {
        Err(_) => return None,
        Ok(None) => {
            missing(&mut ctx.out);
            return None;
        }
        Ok(Some(_)) => {}
    }
    if expire_all_due(ctx, key) {
        missing(&mut ctx.out);
        return None;
    }
    let (db, now) = (ctx.client.db, ctx.now_ms);
    let Ctx { server, out, .. } = ctx;
    let hash = server.keyspace.peek(db, key, now)?.value.as_hash().ok()?;
    Some((hash, out))
}

/// The reply header for `n` picks: pairs are flat in RESP2, nested in RESP3.
fn header(out: &mut ReplyWriter, n: usize, with_values: bool) {
    if with_values && !out.is_resp3() {
        out.array(2 * n);
    } else {
        out.array(n);
    }
}

/// HRANDFIELD with a count, Redis's cases: a negative count (or 1) draws with repetition;
/// a count at least the size replies the whole hash; a count near the size (or any count
/// on a listpack) keeps random fields of all of them in the hash's order; a small count
/// draws until it has that many distinct fields.
fn with_count(ctx: &mut Ctx, key: &[u8], l: i64, with_values: bool) {
    let (count, unique) = (l.unsigned_abs() as usize, l >= 0);
    let mut rng = ctx.server.keyspace.command_rng();
    let cap = ctx.reply_cap();
    let Some((hash, out)) = lookup(ctx, key, |out| out.array(0)) else {
        return;
    };
    if count == 0 {
        return out.array(0);
    }
    let size = hash.len();
    let listpack = hash.encoding().is_packed();
    if !unique || count == 1 {
        header(out, count, with_values);
        let all: Vec<(&[u8], &[u8])> = if listpack {
            hash.iter().collect()
        } else {
            Vec::new()
        };
        for _ in 0..count {
            let (f, v) = if listpack {
                all[rng.below(size)]
            } else {
                hash.random(rng.next_u64())
            };
            write_pair(out, f, v, with_values);
            if out.position() > cap {
                return ctx.close_for_output_limit();
            }
        }
        return;
    }
    let picks: Vec<(&[u8], &[u8])> = if count >= size {
        hash.iter().collect()
    } else if listpack || count * HRANDFIELD_SUB_STRATEGY_MUL > size {
        let all: Vec<(&[u8], &[u8])> = hash.iter().collect();
        let mut keep = vec![true; size];
        let mut left = size;
        while left > count {
            if std::mem::replace(&mut keep[rng.below(size)], false) {
                left -= 1;
            }
        }
        all.into_iter()
            .zip(keep)
            .filter_map(|(p, k)| k.then_some(p))
            .collect()
    } else {
        let mut seen = HashSet::with_capacity(count);
        let mut picks = Vec::with_capacity(count);
        while picks.len() < count {
            let p = hash.random(rng.next_u64());
            if seen.insert(p.0) {
                picks.push(p);
            }
        }
        picks
    };
    header(out, picks.len(), with_values);
    for (f, v) in picks {
        write_pair(out, f, v, with_values);
    }
}
