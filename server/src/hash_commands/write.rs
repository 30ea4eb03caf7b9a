//! HSET, HMSET, HSETNX, HDEL, HINCRBY, HINCRBYFLOAT.

use super::lazy::{expire_in_place, field_clock, removes_due, report_in_place};
use super::with_hash_or_create;
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::Value;
use crate::numbers::parse_i64;
use crate::pubsub::notify;
use crate::string_commands::long_double::{LongDouble, Parsed};
use crate::zset_commands::after_write;

/// HSET key field value [field value ...] (and HMSET, which replies OK)
pub fn hset(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() % 2 == 1 {
        let name = String::from_utf8_lossy(args[0]).to_lowercase();
        return ctx.error(&errors::wrong_arity(&name));
    }
    let pairs = &args[2..];
    let Some((added, created)) = with_hash_or_create(ctx, args[1], |h, cfg| {
        h.maybe_convert(pairs.len() / 2, cfg);
        pairs
            .chunks_exact(2)
            .filter(|p| h.set(p[0], p[1], cfg))
            .count()
    }) else {
        return;
    };
    if !created {
        ctx.server.keyspace.signal_modified(ctx.client.db, args[1]);
    }
    ctx.notify(notify::HASH, "hset", args[1]);
    ctx.server.keyspace.add_dirty((pairs.len() / 2) as u64);
    if args[0][1].eq_ignore_ascii_case(&b's') {
        ctx.out.int(added as i64);
    } else {
        ctx.out.ok();
    }
}

/// HSETNX key field value (a field whose time has passed is removed first, then set)
pub fn hsetnx(ctx: &mut Ctx, args: &[&[u8]]) {
    let (field, value) = (args[2], args[3]);
    let (now, removes) = (field_clock(ctx), removes_due(ctx));
    let Some(((added, expired, emptied), created)) = with_hash_or_create(ctx, args[1], |h, cfg| {
        let expired = expire_in_place(h, field, now, removes);
        let emptied = expired && h.is_empty();
        (
            !h.contains(field) && h.set(field, value, cfg),
            expired,
            emptied,
        )
    }) else {
        return;
    };
    if expired {
        report_in_place(ctx, args[1], field, emptied);
    }
    if added {
        if !created {
            ctx.server.keyspace.signal_modified(ctx.client.db, args[1]);
        }
        ctx.notify(notify::HASH, "hset", args[1]);
        ctx.server.keyspace.add_dirty(1);
    }
    ctx.out.int(i64::from(added));
}

/// HDEL key field [field ...]
pub fn hdel(ctx: &mut Ctx, args: &[&[u8]]) {
    let Ok(found) = ctx.write_typed(args[1], Value::as_hash_mut) else {
        return;
    };
    let Some(hash) = found else {
        return ctx.out.int(0);
    };
    let mut deleted = 0;
    for f in &args[2..] {
        if hash.remove(f) {
            deleted += 1;
            if hash.is_empty() {
                break;
            }
        }
    }
    if deleted > 0 {
        let empty = hash.is_empty();
        after_write(ctx, args[1], empty, notify::HASH, "hdel");
        ctx.server.keyspace.add_dirty(deleted as u64);
    }
    ctx.out.int(deleted);
}

/// Why an increment of a hash field was refused.
enum Refused {
    /// The stored value is not a number of the command's kind.
    NotANumber,
    /// The result is out of the command's range.
    Overflow,
}

/// A field's new value after HINCRBY or HINCRBYFLOAT, and whether it has a time to live.
struct Incremented {
    text: Vec<u8>,
    timed: bool,
}

/// Sets `field` of the hash at `key` (created when absent) to `step(current value)`, the
/// body of HINCRBY and HINCRBYFLOAT: the new value's text, or the error to reply. A field
/// whose time has passed is removed first (counting from 0); a live one keeps its time.
fn increment(
    ctx: &mut Ctx,
    args: &[&[u8]],
    event: &'static str,
    step: impl FnOnce(Option<&[u8]>) -> Result<Vec<u8>, Refused>,
) -> Option<Result<Incremented, Refused>> {
    let (key, field) = (args[1], args[2]);
    let (now, removes) = (field_clock(ctx), removes_due(ctx));
    let ((result, expired, emptied), created) = with_hash_or_create(ctx, key, |h, cfg| {
        let expired = expire_in_place(h, field, now, removes);
        let emptied = expired && h.is_empty();
        // One lookup: the value to step from, and the time the write keeps.
        let found = h.get_with_expiry(field);
        let timed = found.is_some_and(|(_, at)| at.is_some());
        let result = step(found.map(|(value, _)| value)).map(|text| {
            h.set_keep_ttl(field, &text, cfg);
            Incremented { text, timed }
        });
        (result, expired, emptied)
    })?;
    if expired {
        report_in_place(ctx, key, field, emptied);
    }
    if result.is_ok() {
        if !created {
            ctx.server.keyspace.signal_modified(ctx.client.db, key);
        }
        ctx.notify(notify::HASH, event, key);
        ctx.server.keyspace.add_dirty(1);
    }
    Some(result)
}

/// HINCRBY key field increment
pub fn hincrby(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(by) = parse_i64(args[3]) else {
        return ctx.error(errors::NOT_AN_INTEGER);
    };
    let result = increment(ctx, args, "hincrby", |current| {
        let old = match current {
            Some(text) => parse_i64(text).ok_or(Refused::NotANumber)?,
            None => 0,
        };
        let new = old.checked_add(by).ok_or(Refused::Overflow)?;
        Ok(new.to_string().into_bytes())
    });
    match result {
        None => {}
        Some(Ok(done)) => ctx.out.int(parse_i64(&done.text).expect("written above")),
        Some(Err(Refused::NotANumber)) => ctx.error("ERR hash value is not an integer"),
        Some(Err(Refused::Overflow)) => ctx.error("ERR increment or decrement would overflow"),
    }
}

/// HINCRBYFLOAT key field increment: the sum in x87 long double and its text as Redis
/// prints it, as INCRBYFLOAT.
pub fn hincrbyfloat(ctx: &mut Ctx, args: &[&[u8]]) {
    let by = match LongDouble::parse(args[3]) {
        None => return ctx.error(errors::NOT_A_FLOAT),
        Some(Parsed::Infinite) => return ctx.error("ERR value is NaN or Infinity"),
        Some(Parsed::Finite(v)) => v,
    };
    let result = increment(ctx, args, "hincrbyfloat", |current| {
        let old = match current.map(LongDouble::parse) {
            None => LongDouble::from_i64(0),
            Some(Some(Parsed::Finite(v))) => v,
            // An infinite stored value parses, and no sum with it is finite.
            Some(Some(Parsed::Infinite)) => return Err(Refused::Overflow),
            Some(None) => return Err(Refused::NotANumber),
        };
        old.add(by)
            .map(|sum| sum.to_text())
            .ok_or(Refused::Overflow)
    });
    match result {
        None => {}
        Some(Ok(Incremented { text, timed })) => {
            ctx.out.bulk(&text);
            // As Redis: replayed as the value it set, not as the increment; for a field
            // with a time to live as Redis 8 replays it, HSETEX KEEPTTL, so the replay keeps
            // the time (HSET would drop it). A field without one replays as HSET, which
            // Redis 7.2 readers of the stream understand too.
            if timed {
                let argv: [&[u8]; 7] = [
                    b"HSETEX", args[1], b"KEEPTTL", b"FIELDS", b"1", args[2], &text,
                ];
                ctx.propagate_instead(&argv);
            } else {
                ctx.propagate_instead(&[b"HSET", args[1], args[2], &text]);
            }
        }
        Some(Err(Refused::NotANumber)) => ctx.error("ERR hash value is not a float"),
        Some(Err(Refused::Overflow)) => ctx.error("ERR increment would produce NaN or Infinity"),
    }
}
