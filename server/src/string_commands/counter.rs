//! INCR, DECR, INCRBY, DECRBY (64-bit integers, stored `int`) and INCRBYFLOAT (long double
//! arithmetic, stored as text). The key keeps its expiry.

use super::long_double::{LongDouble, Parsed};
use super::write_string;
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::{IntSum, StringValue, Value};
use crate::pubsub::notify;

/// INCR's error when the sum does not fit 64 bits.
const OVERFLOW: &str = "ERR increment or decrement would overflow";

/// Stores the new value at `key`: in place when the key exists (its expiry kept), else as
/// a new key.
pub(super) fn put(ctx: &mut Ctx, key: &[u8], value: StringValue) {
    let db = ctx.db();
    match ctx.server.keyspace.lookup_write(db, key, ctx.now_ms) {
        Some(entry) => {
            *entry.value = Value::Str(value);
            ctx.server.keyspace.signal_modified(db, key);
        }
        None => ctx.server.keyspace.store(db, key, Value::Str(value)),
    }
    ctx.server.keyspace.add_dirty(1);
}

/// Adds `by` to the integer at `key` (0 when missing) and replies with the result. One
/// lookup finds the key (changed in place, its expiry kept) or creates it; an `int` in the
/// key's record is added to where it lies.
fn incr_by(ctx: &mut Ctx, key: &[u8], by: i64) {
    let db = ctx.db();
    let value = match ctx.server.keyspace.add_to_int(db, key, ctx.now_ms, by) {
        IntSum::Sum(value) => value,
        IntSum::Overflow => return ctx.error(OVERFLOW),
        IntSum::Other(entry) => {
            let Ok(s) = entry.value.as_string_mut() else {
                return ctx.error(errors::WRONGTYPE);
            };
            let Some(value) = s.as_int().map(|v| v.checked_add(by)) else {
                return ctx.error(errors::NOT_AN_INTEGER);
            };
            let Some(value) = value else {
                return ctx.error(OVERFLOW);
            };
            *s = StringValue::from_int(value);
            ctx.server.keyspace.signal_modified(db, key);
            value
        }
    };
    ctx.server.keyspace.add_dirty(1);
    ctx.notify(notify::STRING, "incrby", key);
    ctx.out.int(value);
}

/// INCR key
pub fn incr(ctx: &mut Ctx, args: &[&[u8]]) {
    incr_by(ctx, args[1], 1);
}

/// DECR key
pub fn decr(ctx: &mut Ctx, args: &[&[u8]]) {
    incr_by(ctx, args[1], -1);
}

/// INCRBY key increment
pub fn incrby(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Some(by) = ctx.int_arg(args[2]) {
        incr_by(ctx, args[1], by);
    }
}

/// DECRBY key decrement
pub fn decrby(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(by) = ctx.int_arg(args[2]) else {
        return;
    };
    if by == i64::MIN {
        return ctx.error("ERR decrement would overflow");
    }
    incr_by(ctx, args[1], -by);
}

/// INCRBYFLOAT key increment: the sum in long double, stored and replied as Redis prints it.
pub fn incrbyfloat(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let current = match write_string(ctx, key) {
        Err(_) => return,
        Ok(None) => Some(Parsed::Finite(LongDouble::from_i64(0))),
        Ok(Some(s)) => match s.as_int() {
            Some(v) => Some(Parsed::Finite(LongDouble::from_i64(v))),
            None => LongDouble::parse(&s.bytes()),
        },
    };
    let (Some(current), Some(by)) = (current, LongDouble::parse(args[2])) else {
        return ctx.error(errors::NOT_A_FLOAT);
    };
    let sum = match (current, by) {
        (Parsed::Finite(a), Parsed::Finite(b)) => a.add(b),
        _ => None,
    };
    let Some(sum) = sum else {
        return ctx.error("ERR increment would produce NaN or Infinity");
    };
    let text = sum.to_text();
    put(ctx, key, StringValue::from_text(&text));
    ctx.notify(notify::STRING, "incrbyfloat", key);
    ctx.out.bulk(&text);
    // The result, so float formatting never makes a replay differ (as Redis).
    ctx.propagate_instead(&[b"SET", key, &text, b"KEEPTTL"]);
}
