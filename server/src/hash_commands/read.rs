//! HGET, HMGET, HGETALL, HKEYS, HVALS, HEXISTS, HLEN, HSTRLEN, HSCAN.
//!
//! Fields whose time has passed read as missing; HGET, HMGET, HEXISTS and HSTRLEN then
//! remove those they touched (see `lazy`), HGETALL, HKEYS, HVALS and HSCAN leave them
//! out, and HLEN counts them until they are removed, as Redis 7.4.

use super::lazy::{expire_fields, field_clock, has_due, live_value};
use super::{read_hash, read_hash_and_out};
use crate::commands::{write_scan_reply, Ctx, ScanOptions};
use crate::errors;
use crate::glob::glob_match;
use crate::keyspace::WrongType;
use goblin_zset::hash::field_alive;

/// HGET key field
pub fn hget(ctx: &mut Ctx, args: &[&[u8]]) {
    let clock = field_clock(ctx);
    let (Ok(found), out) = read_hash_and_out(ctx, args[1]) else {
        return;
    };
    match found.and_then(|h| live_value(h, args[2], clock)) {
        Some(v) => out.bulk(v),
        None => out.null(),
    }
    if found.is_some_and(|h| has_due(h, clock)) {
        expire_fields(ctx, args[1], &args[2..]);
    }
}

/// HMGET key field [field ...]
pub fn hmget(ctx: &mut Ctx, args: &[&[u8]]) {
    let clock = field_clock(ctx);
    let (Ok(found), out) = read_hash_and_out(ctx, args[1]) else {
        return;
    };
    out.array(args.len() - 2);
    for f in &args[2..] {
        match found.and_then(|h| live_value(h, f, clock)) {
            Some(v) => out.bulk(v),
            None => out.null(),
        }
    }
    if found.is_some_and(|h| has_due(h, clock)) {
        expire_fields(ctx, args[1], &args[2..]);
    }
}

/// What HGETALL, HKEYS and HVALS reply of each pair.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parts {
    Fields,
    Values,
    Both,
}

/// HGETALL, HKEYS and HVALS (Redis's genericHgetallCommand): every live pair in the
/// hash's order; HGETALL as a map (a flat array in RESP2), the others as arrays.
fn get_all(ctx: &mut Ctx, key: &[u8], parts: Parts) {
    let clock = field_clock(ctx);
    let (Ok(found), out) = read_hash_and_out(ctx, key) else {
        return;
    };
    let len = found.map_or(0, |h| h.live_len(clock));
    if parts == Parts::Both {
        out.map(len);
    } else {
        out.array(len);
    }
    let live = found
        .into_iter()
        .flat_map(|h| h.iter_with_expiry())
        .filter(|e| field_alive(e.2, clock));
    for (f, v, _) in live {
        if parts != Parts::Values {
            out.bulk(f);
        }
        if parts != Parts::Fields {
            out.bulk(v);
        }
    }
}

/// HGETALL key
pub fn hgetall(ctx: &mut Ctx, args: &[&[u8]]) {
    get_all(ctx, args[1], Parts::Both);
}

/// HKEYS key
pub fn hkeys(ctx: &mut Ctx, args: &[&[u8]]) {
    get_all(ctx, args[1], Parts::Fields);
}

/// HVALS key
pub fn hvals(ctx: &mut Ctx, args: &[&[u8]]) {
    get_all(ctx, args[1], Parts::Values);
}

/// HEXISTS key field
pub fn hexists(ctx: &mut Ctx, args: &[&[u8]]) {
    one_field(ctx, args, |v| i64::from(v.is_some()));
}

/// HSTRLEN key field
pub fn hstrlen(ctx: &mut Ctx, args: &[&[u8]]) {
    one_field(ctx, args, |v| v.map_or(0, <[u8]>::len) as i64);
}

/// HEXISTS and HSTRLEN: an integer from the live value of `args[2]`, then the lazy
/// removal of the field if due.
fn one_field(ctx: &mut Ctx, args: &[&[u8]], reply: impl FnOnce(Option<&[u8]>) -> i64) {
    let clock = field_clock(ctx);
    let Ok(found) = read_hash(ctx, args[1]) else {
        return;
    };
    let n = reply(found.and_then(|h| live_value(h, args[2], clock)));
    let due = found.is_some_and(|h| has_due(h, clock));
    ctx.out.int(n);
    if due {
        expire_fields(ctx, args[1], &args[2..]);
    }
}

/// HLEN key (fields whose time has passed count until they are removed)
pub fn hlen(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Ok(found) = read_hash(ctx, args[1]) {
        let n = found.map_or(0, |h| h.len());
        ctx.out.int(n as i64);
    }
}

/// HSCAN key cursor [MATCH pattern] [COUNT count]: fields and their values, flat; MATCH
/// applies to the fields; fields whose time has passed are left out.
pub fn hscan(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(cursor) = crate::numbers::parse_cursor(args[2]) else {
        return ctx.error(errors::INVALID_CURSOR);
    };
    // The key is looked up (and its type checked) before the options are parsed, as Redis.
    match read_hash(ctx, args[1]) {
        Err(WrongType) => return,
        Ok(None) => return write_scan_reply(ctx, 0, std::iter::empty()),
        Ok(Some(_)) => {}
    }
    let Some(opts) = ScanOptions::parse(ctx, &args[3..], false) else {
        return;
    };
    let (db, now, clock) = (ctx.client.db, ctx.now_ms, field_clock(ctx));
    let hash = ctx
        .server
        .keyspace
        .peek(db, args[1], now)
        .and_then(|e| e.value.as_hash().ok())
        .expect("looked up above");
    let mut found: Vec<Vec<u8>> = Vec::new();
    let next = hash.scan(cursor, opts.count, |f, v, t| {
        let matches = opts
            .pattern
            .as_ref()
            .is_none_or(|p| glob_match(p, f, false));
        if matches && field_alive(t, clock) {
            found.push(f.to_vec());
            found.push(v.to_vec());
        }
    });
    write_scan_reply(ctx, next, found.iter().map(Vec::as_slice));
}
