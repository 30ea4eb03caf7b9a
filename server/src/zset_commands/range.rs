//! ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZRANGESTORE, and the legacy forms
//! ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX.
//!
//! One routine serves them all, as Redis's zrangeGenericCommand does: the legacy commands
//! preset the range type and direction, which then cannot be given again as options.

use super::{parse, read_zset_and_out, store_result, write_members};
use crate::commands::Ctx;
use goblin_zset::{LexRange, ScoreRange};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Auto,
    Rank,
    Score,
    Lex,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Auto,
    Forward,
    Reverse,
}

/// The parsed range.
enum Range {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// `key_at` is the index of the source key; `store` the destination for ZRANGESTORE.
fn zrange_generic(
    ctx: &mut Ctx,
    args: &[&[u8]],
    key_at: usize,
    store: Option<&[u8]>,
    mut kind: Kind,
    mut direction: Direction,
) {
    let (mut min_at, mut max_at) = (key_at + 1, key_at + 2);
    let mut withscores = false;
    let (mut offset, mut limit) = (0i64, -1i64);
    let mut j = key_at + 3;
    while j < args.len() {
        let left = args.len() - j - 1;
        let a = args[j];
        if store.is_none() && a.eq_ignore_ascii_case(b"WITHSCORES") {
            withscores = true;
        } else if a.eq_ignore_ascii_case(b"LIMIT") && left >= 2 {
            let Some(o) = ctx.int_arg(args[j + 1]) else {
                return;
            };
            let Some(l) = ctx.int_arg(args[j + 2]) else {
                return;
            };
            (offset, limit) = (o, l);
            j += 2;
        } else if direction == Direction::Auto && a.eq_ignore_ascii_case(b"REV") {
            direction = Direction::Reverse;
        } else if kind == Kind::Auto && a.eq_ignore_ascii_case(b"BYLEX") {
            kind = Kind::Lex;
        } else if kind == Kind::Auto && a.eq_ignore_ascii_case(b"BYSCORE") {
            kind = Kind::Score;
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    if direction == Direction::Auto {
        direction = Direction::Forward;
    }
    if kind == Kind::Auto {
        kind = Kind::Rank;
    }
    if limit != -1 && kind == Kind::Rank {
        return ctx.error(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
    }
    if withscores && kind == Kind::Lex {
        return ctx.error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    }
    let reverse = direction == Direction::Reverse;
    if reverse && kind != Kind::Rank {
        std::mem::swap(&mut min_at, &mut max_at);
    }
    let range = match kind {
        Kind::Score => match parse::score_range(ctx, args[min_at], args[max_at]) {
            Some(r) => Range::Score(r),
            None => return,
        },
        Kind::Lex => match parse::lex_range(ctx, args[min_at], args[max_at]) {
            Some(r) => Range::Lex(r),
            None => return,
        },
        _ => {
            let Some(start) = ctx.int_arg(args[min_at]) else {
                return;
            };
            let Some(end) = ctx.int_arg(args[max_at]) else {
                return;
            };
            Range::Rank(start, end)
        }
    };
    let (set, out) = read_zset_and_out(ctx, args[key_at]);
    let Ok(set) = set else {
        return;
    };
    let Some(set) = set else {
        return match store {
            Some(dst) => {
                let n = store_result(ctx, dst, Vec::new(), "zrangestore");
                ctx.out.int(n as i64);
            }
            None => out.array(0),
        };
    };
    let len = set.len();
    let (ranks, limited) = match &range {
        Range::Rank(start, end) => match parse::rank_range(*start, *end, len) {
            Some(r) if reverse => (len - r.end..len - r.start, false),
            Some(r) => (r, false),
            None => (0..0, false),
        },
        Range::Score(r) => (set.score_range_ranks(r), true),
        Range::Lex(r) => (set.lex_range_ranks(r), true),
    };
    let (skip, take) = if !limited {
        (0, usize::MAX)
    } else if offset < 0 {
        (0, 0)
    } else {
        (
            offset as usize,
            if limit < 0 {
                usize::MAX
            } else {
                limit as usize
            },
        )
    };
    let iter = set.iter_ranks(ranks);
    let Some(dst) = store else {
        // The reply is written straight from the set: no member is copied first.
        return if reverse {
            write_members(out, iter.rev().skip(skip).take(take), withscores)
        } else {
            write_members(out, iter.skip(skip).take(take), withscores)
        };
    };
    let to_vec = |(m, s): (&[u8], f64)| (m.to_vec(), s);
    let members: Vec<(Vec<u8>, f64)> = if reverse {
        iter.rev().skip(skip).take(take).map(to_vec).collect()
    } else {
        iter.skip(skip).take(take).map(to_vec).collect()
    };
    let n = store_result(ctx, dst, members, "zrangestore");
    ctx.out.int(n as i64);
}

/// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
pub fn zrange(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Kind::Auto, Direction::Auto);
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
pub fn zrangestore(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 2, Some(args[1]), Kind::Auto, Direction::Auto);
}

/// ZREVRANGE key start stop [WITHSCORES]
pub fn zrevrange(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Kind::Rank, Direction::Reverse);
}

/// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
pub fn zrangebyscore(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Kind::Score, Direction::Forward);
}

/// ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]
pub fn zrevrangebyscore(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Kind::Score, Direction::Reverse);
}

/// ZRANGEBYLEX key min max [LIMIT offset count]
pub fn zrangebylex(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Kind::Lex, Direction::Forward);
}

/// ZREVRANGEBYLEX key max min [LIMIT offset count]
pub fn zrevrangebylex(ctx: &mut Ctx, args: &[&[u8]]) {
    zrange_generic(ctx, args, 1, None, Kind::Lex, Direction::Reverse);
}
