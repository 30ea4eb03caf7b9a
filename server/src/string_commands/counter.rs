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

/// INCRBYFLOAT's error when the sum is no finite number.
const NAN_OR_INFINITY: &str = "ERR increment would produce NaN or Infinity";

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
/// One lookup finds the key (changed in place, its expiry kept) or creates it.
pub fn incrbyfloat(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let by = match LongDouble::parse(args[2]) {
        Some(Parsed::Finite(by)) => by,
        // No sum is possible: only which error to give is left.
        by => return refuse_incrbyfloat(ctx, key, by.is_some()),
    };
    let zero = LongDouble::from_i64(0);
    let Some(fresh) = zero.add(by) else {
        return ctx.error(NAN_OR_INFINITY);
    };
    let db = ctx.db();
    // A new key holds 0 + increment (so -0 makes "0", as Redis's sum).
    let mut made = None;
    let (entry, _) = ctx
        .server
        .keyspace
        .lookup_write_or_create(db, key, ctx.now_ms, || {
            let text = fresh.to_text();
            let value = Value::Str(StringValue::from_text(&text));
            made = Some(text);
            value
        });
    let text = match made {
        Some(text) => text,
        None => {
            let Ok(s) = entry.value.as_string_mut() else {
                return ctx.error(errors::WRONGTYPE);
            };
            let sum = match as_long_double(s) {
                Some(Parsed::Finite(current)) => current.add(by),
                Some(Parsed::Infinite) => None,
                None => return ctx.error(errors::NOT_A_FLOAT),
            };
            let Some(sum) = sum else {
                return ctx.error(NAN_OR_INFINITY);
            };
            let text = sum.to_text();
            *s = StringValue::from_text(&text);
            ctx.server.keyspace.signal_modified(db, key);
            text
        }
    };
    ctx.server.keyspace.add_dirty(1);
    ctx.notify(notify::STRING, "incrbyfloat", key);
    ctx.out.bulk(&text);
    // The result, so float formatting never makes a replay differ (as Redis).
    ctx.propagate_instead(&[b"SET", key, &text, b"KEEPTTL"]);
}

/// INCRBYFLOAT's error when its increment is no finite number (`parsed`: it is a number,
/// infinite), in Redis's order: the key's type, then both numbers, then the sum.
fn refuse_incrbyfloat(ctx: &mut Ctx, key: &[u8], parsed: bool) {
    let current_ok = match write_string(ctx, key) {
        Err(_) => return,
        Ok(None) => true,
        Ok(Some(s)) => as_long_double(s).is_some(),
    };
    if current_ok && parsed {
        ctx.error(NAN_OR_INFINITY);
    } else {
        ctx.error(errors::NOT_A_FLOAT);
    }
}

/// A string's value as a long double (an int-encoded one exactly); None when it is no
/// number.
fn as_long_double(s: &StringValue) -> Option<Parsed> {
    match s.as_int() {
        Some(v) => Some(Parsed::Finite(LongDouble::from_i64(v))),
        None => LongDouble::parse(&s.bytes()),
    }
}
