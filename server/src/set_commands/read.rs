//! SCARD, SISMEMBER, SMISMEMBER, SRANDMEMBER, SSCAN.

use super::{bulk, read_set, read_set_and_out};
use crate::commands::{write_scan_reply, Ctx, ScanOptions};
use crate::errors;
use crate::glob::glob_match;
use crate::keyspace::WrongType;
use crate::keyspace::{Member, SetEncoding};
use crate::zset_commands::parse;
use hashbrown::HashSet;

/// SCARD key
pub fn scard(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Ok(set) = read_set(ctx, args[1]) {
        let n = set.map_or(0, |s| s.len());
        ctx.out.int(n as i64);
    }
}

/// SISMEMBER key member
pub fn sismember(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Ok(set) = read_set(ctx, args[1]) {
        let found = set.is_some_and(|s| s.contains(args[2]));
        ctx.out.int(i64::from(found));
    }
}

/// SMISMEMBER key member [member ...]
pub fn smismember(ctx: &mut Ctx, args: &[&[u8]]) {
    let (Ok(set), out) = read_set_and_out(ctx, args[1]) else {
        return;
    };
    out.array(args.len() - 2);
    for m in &args[2..] {
        out.int(i64::from(set.is_some_and(|s| s.contains(m))));
    }
}

/// How much larger than the count a set must be for SRANDMEMBER to draw members one by
/// one instead of removing random ones from a copy (Redis's SRANDMEMBER_SUB_STRATEGY_MUL).
const SRANDMEMBER_SUB_STRATEGY_MUL: usize = 3;

/// SRANDMEMBER key [count]
pub fn srandmember(ctx: &mut Ctx, args: &[&[u8]]) {
    match args.len() {
        2 => {
            let mut rng = ctx.server.keyspace.command_rng();
            match read_set_and_out(ctx, args[1]) {
                (Ok(Some(set)), out) => bulk(out, set.random(rng.next_u64())),
                (Ok(None), out) => out.null(),
                (Err(WrongType), _) => {}
            }
        }
        3 => srandmember_count(ctx, args),
        _ => ctx.syntax_error(),
    }
}

/// SRANDMEMBER with a count, Redis's cases: a negative count (or 1) draws with
/// repetition; a count at least the size replies the whole set; a count near the size
/// (or any count on a listpack) keeps random members of all of them in the set's order;
/// a small count draws until it has that many distinct members.
fn srandmember_count(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(l) = parse::int_in_range(ctx, args[2], -i64::MAX, i64::MAX, None) else {
        return;
    };
    let (count, unique) = (l.unsigned_abs() as usize, l >= 0);
    let mut rng = ctx.server.keyspace.command_rng();
    let cap = ctx.reply_cap();
    let (Ok(found), out) = read_set_and_out(ctx, args[1]) else {
        return;
    };
    let Some(set) = found else {
        return out.array(0);
    };
    if count == 0 {
        return out.array(0);
    }
    let size = set.len();
    if !unique || count == 1 {
        out.array(count);
        for _ in 0..count {
            bulk(out, set.random(rng.next_u64()));
            if out.position() > cap {
                return ctx.close_for_output_limit();
            }
        }
        return;
    }
    let all: Vec<Member> = set.iter().collect();
    let picks: Vec<usize> = if count >= size {
        (0..size).collect()
    } else if set.encoding() == SetEncoding::Listpack || count * SRANDMEMBER_SUB_STRATEGY_MUL > size
    {
        let mut keep = vec![true; size];
        let mut left = size;
        while left > count {
            let i = rng.below(size);
            if std::mem::replace(&mut keep[i], false) {
                left -= 1;
            }
        }
        (0..size).filter(|&i| keep[i]).collect()
    } else {
        let mut seen = HashSet::with_capacity(count);
        let mut picks = Vec::with_capacity(count);
        while picks.len() < count {
            let i = rng.below(size);
            if seen.insert(i) {
                picks.push(i);
            }
        }
        picks
    };
    out.array(picks.len());
    for i in picks {
        bulk(out, all[i]);
    }
}

/// SSCAN key cursor [MATCH pattern] [COUNT count]
pub fn sscan(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(cursor) = crate::numbers::parse_cursor(args[2]) else {
        return ctx.error(errors::INVALID_CURSOR);
    };
    // The key is looked up (and its type checked) before the options are parsed, as Redis.
    match read_set(ctx, args[1]) {
        Err(WrongType) => return,
        Ok(None) => return write_scan_reply(ctx, 0, std::iter::empty()),
        Ok(Some(_)) => {}
    }
    let Some(opts) = ScanOptions::parse(ctx, &args[3..], false) else {
        return;
    };
    let db = ctx.client.db;
    let value = ctx
        .server
        .keyspace
        .db(db)
        .get(args[1])
        .expect("looked up above")
        .value;
    let set = value.as_set().expect("type checked above");
    let mut found: Vec<Vec<u8>> = Vec::new();
    let next = set.scan(cursor, opts.count, |m| {
        if opts
            .pattern
            .as_ref()
            .is_none_or(|p| glob_match(p, m, false))
        {
            found.push(m.to_vec());
        }
    });
    write_scan_reply(ctx, next, found.iter().map(Vec::as_slice));
}
