//! ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT, ZRANDMEMBER, ZSCAN.

use super::{parse, read_scores, read_zset, read_zset_and_out, write_members};
use crate::commands::Ctx;
use crate::errors;
use crate::glob::glob_match;

/// ZCARD key
pub fn zcard(ctx: &mut Ctx, args: &[&[u8]]) {
    let Ok(set) = read_zset(ctx, args[1]) else {
        return;
    };
    let n = set.map_or(0, |s| s.len());
    ctx.out.int(n as i64);
}

/// ZSCORE key member
pub fn zscore(ctx: &mut Ctx, args: &[&[u8]]) {
    let Ok(score) = read_scores(ctx, args[1], |set| set?.score(args[2])) else {
        return;
    };
    match score {
        Some(score) => ctx.out.double(score),
        None => ctx.out.null(),
    }
}

/// ZMSCORE key member [member ...]
pub fn zmscore(ctx: &mut Ctx, args: &[&[u8]]) {
    let members = &args[2..];
    let Ok(scores) = read_scores(ctx, args[1], |set| -> Vec<Option<f64>> {
        match set {
            Some(set) => members.iter().map(|m| set.score(m)).collect(),
            None => vec![None; members.len()],
        }
    }) else {
        return;
    };
    ctx.out.array(scores.len());
    for score in scores {
        match score {
            Some(s) => ctx.out.double(s),
            None => ctx.out.null(),
        }
    }
}

fn rank_generic(ctx: &mut Ctx, args: &[&[u8]], reverse: bool) {
    if args.len() > 4 {
        let name = if reverse { "zrevrank" } else { "zrank" };
        return ctx.error(&errors::wrong_arity(name));
    }
    let withscore = match args.get(3) {
        None => false,
        Some(a) if a.eq_ignore_ascii_case(b"WITHSCORE") => true,
        Some(_) => return ctx.syntax_error(),
    };
    let Ok(set) = read_zset(ctx, args[1]) else {
        return;
    };
    let found = set.and_then(|set| {
        let rank = set.rank(args[2])?;
        // The score only when asked for: it costs another walk to the member.
        let score = if withscore {
            set.get_by_rank(rank).map(|(_, s)| s)?
        } else {
            0.0
        };
        Some((if reverse { set.len() - 1 - rank } else { rank }, score))
    });
    match (found, withscore) {
        (Some((rank, _)), false) => ctx.out.int(rank as i64),
        (Some((rank, score)), true) => {
            ctx.out.array(2);
            ctx.out.int(rank as i64);
            ctx.out.double(score);
        }
        (None, false) => ctx.out.null(),
        (None, true) => ctx.out.null_array(),
    }
}

/// ZRANK key member [WITHSCORE]
pub fn zrank(ctx: &mut Ctx, args: &[&[u8]]) {
    rank_generic(ctx, args, false);
}

/// ZREVRANK key member [WITHSCORE]
pub fn zrevrank(ctx: &mut Ctx, args: &[&[u8]]) {
    rank_generic(ctx, args, true);
}

/// ZCOUNT key min max
pub fn zcount(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(range) = parse::score_range(ctx, args[2], args[3]) else {
        return;
    };
    let Ok(set) = read_zset(ctx, args[1]) else {
        return;
    };
    let n = set.map_or(0, |s| s.score_range_ranks(&range).len());
    ctx.out.int(n as i64);
}

/// ZLEXCOUNT key min max
pub fn zlexcount(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(range) = parse::lex_range(ctx, args[2], args[3]) else {
        return;
    };
    let Ok(set) = read_zset(ctx, args[1]) else {
        return;
    };
    let n = set.map_or(0, |s| s.lex_range_ranks(&range).len());
    ctx.out.int(n as i64);
}

/// ZRANDMEMBER key [count [WITHSCORES]]
pub fn zrandmember(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 2 {
        let Ok(set) = read_zset(ctx, args[1]) else {
            return;
        };
        let len = set.map_or(0, |s| s.len());
        if len == 0 {
            return ctx.out.null();
        }
        let rank = (ctx.server.keyspace.random() % len as u64) as usize;
        let member = read_zset(ctx, args[1])
            .ok()
            .flatten()
            .and_then(|s| s.get_by_rank(rank))
            .map(|(m, _)| m.to_vec())
            .expect("rank in range");
        return ctx.out.bulk(&member);
    }
    let withscores = match args.get(3) {
        None => false,
        Some(a) if args.len() == 4 && a.eq_ignore_ascii_case(b"WITHSCORES") => true,
        Some(_) => return ctx.syntax_error(),
    };
    let Some(count) = parse::int_in_range(ctx, args[2], -i64::MAX, i64::MAX, None) else {
        return;
    };
    if withscores && !(-i64::MAX / 2..=i64::MAX / 2).contains(&count) {
        return ctx.error("ERR value is out of range");
    }
    let Ok(set) = read_zset(ctx, args[1]) else {
        return;
    };
    let len = set.map_or(0, |s| s.len());
    if count == 0 || len == 0 {
        return ctx.out.array(0);
    }
    if count < 0 {
        return zrandmember_repeating(ctx, args[1], count.unsigned_abs() as usize, withscores);
    }
    let ranks: Vec<usize> = if count as usize >= len {
        (0..len).collect()
    } else {
        // A partial Fisher-Yates shuffle over the ranks picks `count` distinct members.
        let count = count as usize;
        let mut pool: Vec<usize> = (0..len).collect();
        for i in 0..count {
            let j = i + (ctx.server.keyspace.random() % (len - i) as u64) as usize;
            pool.swap(i, j);
        }
        pool.truncate(count);
        pool
    };
    let set = read_zset(ctx, args[1])
        .ok()
        .flatten()
        .expect("checked above");
    let picked: Vec<(Vec<u8>, f64)> = ranks
        .iter()
        .filter_map(|&r| set.get_by_rank(r))
        .map(|(m, s)| (m.to_vec(), s))
        .collect();
    write_members(
        &mut ctx.out,
        picked.iter().map(|(m, s)| (m.as_slice(), *s)),
        withscores,
    );
}

/// ZRANDMEMBER with a negative count: `count` members drawn with repetition, written as
/// they are drawn (the count may be far beyond what can be sent), stopping once past the
/// client's output limit, as Redis does.
fn zrandmember_repeating(ctx: &mut Ctx, key: &[u8], count: usize, withscores: bool) {
    let mut rng = ctx.server.keyspace.command_rng();
    let cap = ctx.reply_cap();
    let (Ok(Some(set)), out) = read_zset_and_out(ctx, key) else {
        return;
    };
    let nested = withscores && out.is_resp3();
    out.array(if withscores && !nested {
        count * 2
    } else {
        count
    });
    for _ in 0..count {
        let (member, score) = set
            .get_by_rank(rng.below(set.len()))
            .expect("rank in range");
        if nested {
            out.array(2);
        }
        out.bulk(member);
        if withscores {
            out.double(score);
        }
        if out.position() > cap {
            return ctx.close_for_output_limit();
        }
    }
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count]
pub fn zscan(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(cursor) = crate::numbers::parse_cursor(args[2]) else {
        return ctx.error(errors::INVALID_CURSOR);
    };
    let Some(opts) = crate::commands::ScanOptions::parse(ctx, &args[3..], false) else {
        return;
    };
    let mut found = Vec::new();
    let next = match read_zset(ctx, args[1]) {
        Ok(Some(set)) => set.scan(cursor, opts.count, &mut found),
        Ok(None) => 0,
        Err(_) => return,
    };
    if let Some(pattern) = &opts.pattern {
        found.retain(|(m, _)| glob_match(pattern, m, false));
    }
    ctx.out.array(2);
    ctx.out.bulk(next.to_string().as_bytes());
    ctx.out.array(found.len() * 2);
    for (member, score) in &found {
        ctx.out.bulk(member);
        ctx.out.bulk(&crate::numbers::double_to_bytes(*score));
    }
}
