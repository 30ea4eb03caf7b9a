//! ZADD, ZINCRBY, ZREM, ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX.

use super::{after_write, parse, write_zset};
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::{SortedSet, Value};
use crate::pubsub::notify;

/// ZADD's options.
#[derive(Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// What adding one member did.
enum Outcome {
    /// A new member with this score.
    Added(f64),
    /// The member's score changed to this.
    Updated(f64),
    /// The member already had this score.
    Same(f64),
    /// NX, XX, GT or LT stopped the change.
    Refused,
}

/// Adds or updates one member under ZADD's rules (Redis's zsetAdd). Err on a NaN result.
fn add_one(
    set: &mut SortedSet,
    member: &[u8],
    score: f64,
    f: &AddFlags,
    cfg: &goblin_zset::Config,
) -> Result<Outcome, ()> {
    if !(f.nx || f.xx || f.gt || f.lt || f.incr) {
        // Plain ZADD: one lookup inserts or updates and tells which it was (an equal score
        // leaves the member as it is).
        return Ok(match set.insert(member, score, cfg) {
            None => Outcome::Added(score),
            Some(old) if old == score => Outcome::Same(score),
            Some(_) => Outcome::Updated(score),
        });
    }
    match set.score(member) {
        Some(current) => {
            if f.nx {
                return Ok(Outcome::Refused);
            }
            let new = if f.incr { current + score } else { score };
            if new.is_nan() {
                return Err(());
            }
            if (f.lt && new >= current) || (f.gt && new <= current) {
                return Ok(Outcome::Refused);
            }
            if new == current {
                return Ok(Outcome::Same(new));
            }
            set.insert(member, new, cfg);
            Ok(Outcome::Updated(new))
        }
        None if f.xx => Ok(Outcome::Refused),
        None => {
            set.insert(member, score, cfg);
            Ok(Outcome::Added(score))
        }
    }
}

/// Shared by ZADD and ZINCRBY once arguments are parsed.
fn add_generic(ctx: &mut Ctx, key: &[u8], pairs: &[(f64, &[u8])], f: &AddFlags) {
    let db = ctx.client.db;
    let cfg = ctx.server.config.zset;
    if f.xx {
        // XX never creates: an absent key (or another type) is answered here.
        let Ok(found) = write_zset(ctx, key) else {
            return;
        };
        if found.is_none() {
            return if f.incr {
                ctx.out.null()
            } else {
                ctx.out.int(0)
            };
        }
    }
    // One keyspace lookup finds the set or creates it, its encoding chosen from the member
    // count and the first member, as Redis 7.2 does, and its room from all the members.
    let (entry, created) = ctx
        .server
        .keyspace
        .lookup_write_or_create(db, key, ctx.now_ms, || {
            Value::ZSet(SortedSet::for_zadd(pairs, &cfg))
        });
    let Ok(set) = entry.value.as_zset_mut() else {
        // Another type: found, so nothing was created.
        return ctx.error(errors::WRONGTYPE);
    };
    set.maybe_convert(pairs.len(), &cfg);
    let (mut added, mut updated) = (0i64, 0i64);
    let mut last = None;
    let mut nan = false;
    for &(score, member) in pairs {
        match add_one(set, member, score, f, &cfg) {
            Ok(Outcome::Added(s)) => {
                added += 1;
                last = Some(s);
            }
            Ok(Outcome::Updated(s)) => {
                updated += 1;
                last = Some(s);
            }
            Ok(Outcome::Same(s)) => last = Some(s),
            Ok(Outcome::Refused) => last = None,
            Err(()) => {
                nan = true;
                break;
            }
        }
    }
    let empty = set.is_empty();
    if added + updated > 0 {
        let event = if f.incr { "zincr" } else { "zadd" };
        after_write(ctx, key, empty, notify::ZSET, event);
    } else if created && empty {
        ctx.server.keyspace.delete(db, key);
    } else if created {
        ctx.server.keyspace.signal_modified(db, key);
    }
    ctx.server
        .keyspace
        .add_dirty(if nan { 0 } else { (added + updated) as u64 });
    if nan {
        return ctx.error("ERR resulting score is not a number (NaN)");
    }
    if f.incr {
        match last {
            Some(s) => ctx.out.double(s),
            None => ctx.out.null(),
        }
    } else {
        ctx.out.int(if f.ch { added + updated } else { added });
    }
}

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
pub fn zadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut f = AddFlags::default();
    let mut i = 2;
    while i < args.len() {
        let a = args[i];
        let flag = if a.eq_ignore_ascii_case(b"NX") {
            &mut f.nx
        } else if a.eq_ignore_ascii_case(b"XX") {
            &mut f.xx
        } else if a.eq_ignore_ascii_case(b"GT") {
            &mut f.gt
        } else if a.eq_ignore_ascii_case(b"LT") {
            &mut f.lt
        } else if a.eq_ignore_ascii_case(b"CH") {
            &mut f.ch
        } else if a.eq_ignore_ascii_case(b"INCR") {
            &mut f.incr
        } else {
            break;
        };
        *flag = true;
        i += 1;
    }
    let elements = args.len() - i;
    if elements == 0 || !elements.is_multiple_of(2) {
        return ctx.syntax_error();
    }
    if f.nx && f.xx {
        return ctx.error("ERR XX and NX options at the same time are not compatible");
    }
    if (f.nx && (f.gt || f.lt)) || (f.gt && f.lt) {
        return ctx.error("ERR GT, LT, and/or NX options at the same time are not compatible");
    }
    if f.incr && elements > 2 {
        return ctx.error("ERR INCR option supports a single increment-element pair");
    }
    if elements == 2 {
        // The usual single pair, without a vector.
        if let Some(score) = parse::score(ctx, args[i]) {
            add_generic(ctx, args[1], &[(score, args[i + 1])], &f);
        }
        return;
    }
    let mut pairs = Vec::with_capacity(elements / 2);
    for pair in args[i..].chunks(2) {
        let Some(score) = parse::score(ctx, pair[0]) else {
            return;
        };
        pairs.push((score, pair[1]));
    }
    add_generic(ctx, args[1], &pairs, &f);
}

/// ZINCRBY key increment member
pub fn zincrby(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(increment) = parse::score(ctx, args[2]) else {
        return;
    };
    add_generic(
        ctx,
        args[1],
        &[(increment, args[3])],
        &AddFlags {
            incr: true,
            ..AddFlags::default()
        },
    );
}

/// ZREM key member [member ...]
pub fn zrem(ctx: &mut Ctx, args: &[&[u8]]) {
    let Ok(found) = write_zset(ctx, args[1]) else {
        return;
    };
    let Some(set) = found else {
        return ctx.out.int(0);
    };
    let removed = args[2..].iter().filter(|m| set.remove(m).is_some()).count();
    let empty = set.is_empty();
    if removed > 0 {
        after_write(ctx, args[1], empty, notify::ZSET, "zrem");
    }
    ctx.server.keyspace.add_dirty(removed as u64);
    ctx.out.int(removed as i64);
}

/// Removes a rank range and replies with the count (shared by the ZREMRANGEBY* commands).
fn remove_ranks(
    ctx: &mut Ctx,
    key: &[u8],
    event: &'static str,
    ranks: impl FnOnce(&SortedSet) -> std::ops::Range<usize>,
) {
    let Ok(found) = write_zset(ctx, key) else {
        return;
    };
    let Some(set) = found else {
        return ctx.out.int(0);
    };
    let ranks = ranks(set);
    let removed = set.remove_rank_range(ranks);
    let empty = set.is_empty();
    if removed > 0 {
        after_write(ctx, key, empty, notify::ZSET, event);
    }
    ctx.server.keyspace.add_dirty(removed as u64);
    ctx.out.int(removed as i64);
}

/// ZREMRANGEBYRANK key start stop
pub fn zremrangebyrank(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(start) = ctx.int_arg(args[2]) else {
        return;
    };
    let Some(end) = ctx.int_arg(args[3]) else {
        return;
    };
    remove_ranks(ctx, args[1], "zremrangebyrank", |set| {
        parse::rank_range(start, end, set.len()).unwrap_or(0..0)
    });
}

/// ZREMRANGEBYSCORE key min max
pub fn zremrangebyscore(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(range) = parse::score_range(ctx, args[2], args[3]) else {
        return;
    };
    remove_ranks(ctx, args[1], "zremrangebyscore", |set| {
        set.score_range_ranks(&range)
    });
}

/// ZREMRANGEBYLEX key min max
pub fn zremrangebylex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(range) = parse::lex_range(ctx, args[2], args[3]) else {
        return;
    };
    remove_ranks(ctx, args[1], "zremrangebylex", |set| {
        set.lex_range_ranks(&range)
    });
}
