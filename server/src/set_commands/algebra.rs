//! SMEMBERS, SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE, as
//! Redis 7.2's sinterGenericCommand and sunionDiffGenericCommand compute them; Redis 8.10's
//! SDIFFCARD and SUNIONCARD.

use super::{bulk, read_set, write_set_reply};
use crate::commands::Ctx;
use crate::keyspace::WrongType;
use crate::keyspace::{Member, Set, SetConfig, SetEncoding, Value, ValueCow};
use crate::pubsub::notify;
use crate::resp::reply::ReplyWriter;
use crate::zset_commands::parse;
use goblin_zset::hll;

/// The values of the keys, None for missing ones (a small set is rebuilt from its record).
type Inputs<'c> = Vec<Option<ValueCow<'c>>>;

/// The sets of `found`, None for missing keys.
fn sets_of<'v>(found: &'v Inputs<'_>) -> Vec<Option<&'v Set>> {
    found
        .iter()
        .map(|v| v.as_deref().and_then(|v| v.as_set().ok()))
        .collect()
}

/// Looks every key up in order (expiring, counting hits), stopping at the first of
/// another type once WRONGTYPE is replied; then the sets beside the reply writer.
fn inputs<'c, 'a>(
    ctx: &'c mut Ctx<'a>,
    keys: &[&[u8]],
) -> Result<(Inputs<'c>, &'c mut ReplyWriter<'a>), WrongType> {
    for k in keys {
        read_set(ctx, k)?;
    }
    let Ctx {
        server,
        client,
        out,
        ..
    } = ctx;
    let db = server.keyspace.db(client.db);
    let sets = keys.iter().map(|k| db.get(k).map(|e| e.value)).collect();
    Ok((sets, out))
}

/// What an intersection is for.
enum InterMode<'k> {
    /// Reply the members.
    Reply,
    /// Reply how many, stopping at a limit (0: none).
    Card(usize),
    /// Store them at the key.
    Store(&'k [u8]),
}

/// Whether `m` is in `set`.
fn has(set: &Set, m: Member) -> bool {
    m.with_bytes(|b| set.contains(b))
}

fn inter_generic(ctx: &mut Ctx, keys: &[&[u8]], mode: InterMode) {
    let cfg = ctx.server.config.set;
    let Ok((found, out)) = inputs(ctx, keys) else {
        return;
    };
    let Some(mut sets) = sets_of(&found).into_iter().collect::<Option<Vec<&Set>>>() else {
        // An empty input: the intersection is empty.
        return match mode {
            InterMode::Reply => out.set(0),
            InterMode::Card(_) => out.int(0),
            InterMode::Store(dst) => store(ctx, dst, Set::new_intset(), "sinterstore"),
        };
    };
    // Smallest first (a stable sort, as glibc's qsort for these sizes).
    sets.sort_by_key(|s| s.len());
    let first = sets[0];
    let members = first.iter().filter(|&m| {
        sets[1..]
            .iter()
            .all(|s| std::ptr::eq(*s, first) || has(s, m))
    });
    match mode {
        InterMode::Card(limit) => {
            let n = if limit > 0 {
                members.take(limit).count()
            } else {
                members.count()
            };
            out.int(n as i64);
        }
        InterMode::Reply => {
            let all: Vec<Member> = members.collect();
            out.set(all.len());
            for m in all {
                bulk(out, m);
            }
        }
        InterMode::Store(dst) => {
            // An intset when the smallest input is one, else a listpack, converted as
            // members arrive and back to an intset if they are all integers.
            let mut result = match first.encoding() {
                SetEncoding::Intset => Set::new_intset(),
                _ => Set::new_listpack(),
            };
            for m in members {
                m.with_bytes(|b| result.add(b, &cfg));
            }
            if !result.is_empty() {
                result.maybe_convert_to_intset(&cfg);
            }
            store(ctx, dst, result, "sinterstore");
        }
    }
}

/// Stores `result` at `dst` and replies its size; an empty result deletes `dst`.
fn store(ctx: &mut Ctx, dst: &[u8], result: Set, event: &'static str) {
    let db = ctx.client.db;
    let n = result.len();
    if n == 0 {
        if ctx.server.keyspace.delete(db, dst) {
            ctx.notify(notify::GENERIC, "del", dst);
        }
    } else {
        ctx.server.keyspace.store(db, dst, Value::Set(result));
        ctx.notify(notify::SET, event, dst);
    }
    ctx.server.keyspace.add_dirty(1);
    ctx.out.int(n as i64);
}

/// The union of `sets` built as Redis builds it: a fresh intset that every member is added
/// to in turn, converting as it goes.
pub(super) fn union_of<'s>(sets: impl Iterator<Item = &'s Set>, cfg: &SetConfig) -> Set {
    let mut result = Set::new_intset();
    for s in sets {
        for m in s.iter() {
            m.with_bytes(|b| result.add(b, cfg));
        }
    }
    result
}

/// The difference of the first set and the others, by whichever of Redis's two
/// algorithms it would pick (they can leave the result in different forms).
fn diff_of(sets: &[Option<&Set>], cfg: &SetConfig) -> Set {
    let mut result = Set::new_intset();
    let Some(first) = sets[0] else {
        return result;
    };
    let others: Vec<&Set> = sets[1..].iter().flatten().copied().collect();
    if others.iter().any(|s| std::ptr::eq(*s, first)) {
        return result;
    }
    let algo_one = (first.len() * (others.len() + 1)) / 2;
    let algo_two = first.len() + others.iter().map(|s| s.len()).sum::<usize>();
    if algo_one <= algo_two {
        for m in first.iter() {
            if !others.iter().any(|s| has(s, m)) {
                m.with_bytes(|b| result.add(b, cfg));
            }
        }
    } else {
        for m in first.iter() {
            m.with_bytes(|b| result.add(b, cfg));
        }
        for s in others {
            for m in s.iter() {
                m.with_bytes(|b| result.remove(b));
            }
            if result.is_empty() {
                break;
            }
        }
    }
    result
}

fn union_diff_generic(ctx: &mut Ctx, keys: &[&[u8]], dst: Option<&[u8]>, diff: bool) {
    let cfg = ctx.server.config.set;
    let Ok((found, _)) = inputs(ctx, keys) else {
        return;
    };
    let sets = sets_of(&found);
    let result = if diff {
        diff_of(&sets, &cfg)
    } else {
        union_of(sets.iter().flatten().copied(), &cfg)
    };
    match dst {
        Some(dst) => {
            let event = if diff { "sdiffstore" } else { "sunionstore" };
            store(ctx, dst, result, event)
        }
        None => write_set_reply(&mut ctx.out, &result),
    }
}

/// SMEMBERS key
pub fn smembers(ctx: &mut Ctx, args: &[&[u8]]) {
    inter_generic(ctx, &args[1..], InterMode::Reply);
}

/// SINTER key [key ...]
pub fn sinter(ctx: &mut Ctx, args: &[&[u8]]) {
    inter_generic(ctx, &args[1..], InterMode::Reply);
}

/// SINTERSTORE destination key [key ...]
pub fn sinterstore(ctx: &mut Ctx, args: &[&[u8]]) {
    inter_generic(ctx, &args[2..], InterMode::Store(args[1]));
}

/// Parses `numkeys key [key ...]` then the options (SINTERCARD's and SDIFFCARD's `LIMIT
/// limit`, with SINTERCARD's errors; SUNIONCARD's `APPROX` too when `approx` is allowed):
/// the keys, the limit (0: none) and whether APPROX was given; None after the error reply.
fn card_args<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    approx_allowed: bool,
) -> Option<(Vec<&'a [u8]>, usize, bool)> {
    let numkeys_error = Some("ERR numkeys should be greater than 0");
    let numkeys = parse::int_in_range(ctx, args[1], 1, i64::MAX, numkeys_error)? as usize;
    if numkeys > args.len() - 2 {
        ctx.error("ERR Number of keys can't be greater than number of args");
        return None;
    }
    let (mut limit, mut approx) = (0, false);
    let mut j = 2 + numkeys;
    while j < args.len() {
        if args[j].eq_ignore_ascii_case(b"LIMIT") && j + 1 < args.len() {
            let negative = Some("ERR LIMIT can't be negative");
            limit = parse::int_in_range(ctx, args[j + 1], 0, i64::MAX, negative)? as usize;
            j += 2;
        } else if approx_allowed && args[j].eq_ignore_ascii_case(b"APPROX") {
            approx = true;
            j += 1;
        } else {
            ctx.syntax_error();
            return None;
        }
    }
    Some((args[2..2 + numkeys].to_vec(), limit, approx))
}

/// `card`, at most `limit` when one is given (not 0).
fn capped(card: usize, limit: usize) -> i64 {
    (if limit > 0 { card.min(limit) } else { card }) as i64
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit]
pub fn sintercard(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Some((keys, limit, _)) = card_args(ctx, args, false) {
        inter_generic(ctx, &keys, InterMode::Card(limit));
    }
}

/// SDIFFCARD numkeys key [key ...] [LIMIT limit] (Redis 8.10): the size of SDIFF's result,
/// at most `limit` when one is given.
pub fn sdiffcard(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((keys, limit, _)) = card_args(ctx, args, false) else {
        return;
    };
    let cfg = ctx.server.config.set;
    let Ok((found, _)) = inputs(ctx, &keys) else {
        return;
    };
    let card = diff_of(&sets_of(&found), &cfg).len();
    ctx.out.int(capped(card, limit));
}

/// SUNIONCARD numkeys key [key ...] [APPROX] [LIMIT limit] (Redis 8.10): how many distinct
/// members the sets hold together, counting stopping at `limit`. With APPROX, the
/// HyperLogLog estimate of the union (what PFADD of every member then PFCOUNT gives:
/// Redis's 16384 registers, 0.81% standard error), capped at `limit` alike.
pub fn sunioncard(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some((keys, limit, approx)) = card_args(ctx, args, true) else {
        return;
    };
    let Ok((found, out)) = inputs(ctx, &keys) else {
        return;
    };
    let sets: Vec<&Set> = sets_of(&found).into_iter().flatten().collect();
    let card = if approx {
        approx_union_card(&sets)
    } else {
        exact_union_card(&sets, limit)
    };
    out.int(capped(card, limit));
}

/// The distinct members of `sets`, counted until `limit` (0: all).
fn exact_union_card(sets: &[&Set], limit: usize) -> usize {
    let mut seen: hashbrown::HashSet<Vec<u8>> = hashbrown::HashSet::new();
    for s in sets {
        for m in s.iter() {
            // One hash a member; a copy only for a member not seen before.
            m.with_bytes(|b| {
                seen.get_or_insert_with(b, <[u8]>::to_vec);
            });
            if limit > 0 && seen.len() >= limit {
                return limit;
            }
        }
    }
    seen.len()
}

/// The HyperLogLog estimate of the members of `sets` together.
fn approx_union_card(sets: &[&Set]) -> usize {
    let mut registers: Box<hll::Registers> = Box::new([0; hll::REGISTERS]);
    for s in sets {
        for m in s.iter() {
            let (index, count) = m.with_bytes(hll::pattern);
            registers[index] = registers[index].max(count);
        }
    }
    hll::count_registers(&registers) as usize
}

/// SUNION key [key ...]
pub fn sunion(ctx: &mut Ctx, args: &[&[u8]]) {
    union_diff_generic(ctx, &args[1..], None, false);
}

/// SUNIONSTORE destination key [key ...]
pub fn sunionstore(ctx: &mut Ctx, args: &[&[u8]]) {
    union_diff_generic(ctx, &args[2..], Some(args[1]), false);
}

/// SDIFF key [key ...]
pub fn sdiff(ctx: &mut Ctx, args: &[&[u8]]) {
    union_diff_generic(ctx, &args[1..], None, true);
}

/// SDIFFSTORE destination key [key ...]
pub fn sdiffstore(ctx: &mut Ctx, args: &[&[u8]]) {
    union_diff_generic(ctx, &args[2..], Some(args[1]), true);
}
