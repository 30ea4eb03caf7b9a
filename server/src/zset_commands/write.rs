//! ZADD, ZINCRBY, ZREM, ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX.

use super::{after_write, parse, write_zset};
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::{RecordZSet, SortedSet, Value, ZSetMut};
use crate::pubsub::notify;
use goblin_zset::{Config, RecordInsert};

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

impl AddFlags {
    /// The flag option `arg` names (any case), if it names one: told by its length and
    /// its letters upper-cased at once, not by six comparisons (a score is no option).
    #[inline]
    fn named(&mut self, arg: &[u8]) -> Option<&mut bool> {
        if !(2..=4).contains(&arg.len()) {
            return None;
        }
        let mut name = [0u8; 4];
        for (n, c) in name.iter_mut().zip(arg) {
            *n = c.to_ascii_uppercase();
        }
        Some(match &name[..arg.len()] {
            b"NX" => &mut self.nx,
            b"XX" => &mut self.xx,
            b"GT" => &mut self.gt,
            b"LT" => &mut self.lt,
            b"CH" => &mut self.ch,
            b"INCR" => &mut self.incr,
            _ => return None,
        })
    }
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

/// Why adding one member stopped.
enum Stop {
    /// The result is NaN (nothing changed).
    Nan,
    /// A key's record declined the write, or no longer holds the set (nothing changed):
    /// the set's value takes it.
    Declined,
}

/// What ZADD's rules read and write of a set: a value, or a small set where its key's
/// record holds it.
trait Members {
    /// The score of `member`.
    fn score(&self, member: &[u8]) -> Result<Option<f64>, Stop>;
    /// Inserts or updates `member`, returning its previous score.
    fn insert(&mut self, member: &[u8], score: f64, cfg: &Config) -> Result<Option<f64>, Stop>;
}

impl Members for SortedSet {
    #[inline]
    fn score(&self, member: &[u8]) -> Result<Option<f64>, Stop> {
        Ok(goblin_zset::ZSet::score(self, member))
    }

    #[inline]
    fn insert(&mut self, member: &[u8], score: f64, cfg: &Config) -> Result<Option<f64>, Stop> {
        Ok(SortedSet::insert(self, member, score, cfg))
    }
}

impl Members for RecordZSet<'_> {
    #[inline]
    fn score(&self, member: &[u8]) -> Result<Option<f64>, Stop> {
        RecordZSet::score(self, member).ok_or(Stop::Declined)
    }

    #[inline]
    fn insert(&mut self, member: &[u8], score: f64, cfg: &Config) -> Result<Option<f64>, Stop> {
        match RecordZSet::insert(self, member, score, cfg) {
            RecordInsert::Added { .. } => Ok(None),
            RecordInsert::Updated { old, .. } | RecordInsert::Unchanged(old) => Ok(Some(old)),
            RecordInsert::Declined => Err(Stop::Declined),
        }
    }
}

/// Adds or updates one member under ZADD's rules (Redis's zsetAdd).
fn add_one(
    set: &mut impl Members,
    member: &[u8],
    score: f64,
    f: &AddFlags,
    cfg: &Config,
) -> Result<Outcome, Stop> {
    if !(f.nx || f.xx || f.gt || f.lt || f.incr) {
        // Plain ZADD: one lookup inserts or updates and tells which it was (an equal score
        // leaves the member as it is).
        return Ok(match set.insert(member, score, cfg)? {
            None => Outcome::Added(score),
            Some(old) if old == score => Outcome::Same(score),
            Some(_) => Outcome::Updated(score),
        });
    }
    match set.score(member)? {
        Some(current) => {
            if f.nx {
                return Ok(Outcome::Refused);
            }
            let new = if f.incr { current + score } else { score };
            if new.is_nan() {
                return Err(Stop::Nan);
            }
            if (f.lt && new >= current) || (f.gt && new <= current) {
                return Ok(Outcome::Refused);
            }
            if new == current {
                return Ok(Outcome::Same(new));
            }
            set.insert(member, new, cfg)?;
            Ok(Outcome::Updated(new))
        }
        None if f.xx => Ok(Outcome::Refused),
        None => {
            set.insert(member, score, cfg)?;
            Ok(Outcome::Added(score))
        }
    }
}

/// What ZADD's members did, counted as they are added.
#[derive(Default)]
struct Tally {
    added: i64,
    updated: i64,
    /// The score of the last member added or kept (ZADD INCR's reply).
    last: Option<f64>,
    /// A result was NaN: the members from it on were left.
    nan: bool,
}

impl Tally {
    /// Adds `pairs` in order, up to a NaN result; Err(the pairs left) when a key's record
    /// declines one (nothing of it done).
    fn add_all<'p, 'm>(
        &mut self,
        set: &mut impl Members,
        pairs: &'p [(f64, &'m [u8])],
        f: &AddFlags,
        cfg: &Config,
    ) -> Result<(), &'p [(f64, &'m [u8])]> {
        for (i, &(score, member)) in pairs.iter().enumerate() {
            match add_one(set, member, score, f, cfg) {
                Ok(Outcome::Added(s)) => {
                    self.added += 1;
                    self.last = Some(s);
                }
                Ok(Outcome::Updated(s)) => {
                    self.updated += 1;
                    self.last = Some(s);
                }
                Ok(Outcome::Same(s)) => self.last = Some(s),
                Ok(Outcome::Refused) => self.last = None,
                Err(Stop::Nan) => {
                    self.nan = true;
                    break;
                }
                Err(Stop::Declined) => return Err(&pairs[i..]),
            }
        }
        Ok(())
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
    // count and the first member, as Redis 7.2 does, and its room from all the members. A
    // small set its key's record holds is written there while it can be.
    let (found, created) = ctx
        .server
        .keyspace
        .lookup_zset_for_write(db, key, ctx.now_ms, || {
            Value::ZSet(SortedSet::for_zadd(pairs, &cfg))
        });
    let mut tally = Tally::default();
    let mut empty = false;
    let left = match found {
        ZSetMut::Record(mut set) if pairs.len() <= cfg.max_listpack_entries => {
            match tally.add_all(&mut set, pairs, f, &cfg) {
                Ok(()) => {
                    empty = set.is_empty();
                    None
                }
                Err(rest) => Some((set.into_entry(), rest)),
            }
        }
        ZSetMut::Record(set) => Some((set.into_entry(), pairs)),
        ZSetMut::Entry(entry) => Some((entry, pairs)),
    };
    if let Some((entry, rest)) = left {
        let Ok(set) = entry.value.as_zset_mut() else {
            // Another type: found, so nothing was created.
            return ctx.error(errors::WRONGTYPE);
        };
        set.maybe_convert(rest.len(), &cfg);
        if tally.add_all(set, rest, f, &cfg).is_err() {
            unreachable!("a value takes every write");
        }
        empty = set.is_empty();
    }
    let Tally {
        added,
        updated,
        last,
        nan,
    } = tally;
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
    while let Some(flag) = args.get(i).and_then(|a| f.named(a)) {
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
