//! INCREX (Redis 8.8): INCRBY or INCRBYFLOAT with bounds and an expiry in one command.
//!
//! `INCREX key [BYINT n | BYFLOAT f] [LBOUND l] [UBOUND u] [SATURATE]
//! [EX s | PX ms | EXAT t | PXAT t | PERSIST] [ENX]`, options in any order, each once.
//! The reply is `[new value, increment applied]`: integers in integer mode, long doubles
//! (RESP2 bulk, RESP3 double, printed as INCRBYFLOAT prints) with BYFLOAT. A result past
//! a bound (LBOUND / UBOUND, else the type's limits) is refused (`[current, 0]`, nothing
//! changed) or, with SATURATE, held at the bound. Replayed as `SET key value` with KEEPTTL,
//! PXAT or nothing (PERSIST), or as DEL / UNLINK when the expiry is already past; events
//! incrby / incrbyfloat, then expire or persist (or del alone for a past expiry), as
//! Redis's unit/type/increx.tcl shows them.

use std::cmp::Ordering;

use super::counter::put;
use super::long_double::{LongDouble, Parsed};
use super::set::{optional_expire_at, Expiry};
use super::write_string;
use crate::commands::expire::delete_already_expired;
use crate::commands::Ctx;
use crate::errors;
use crate::keyspace::StringValue;
use crate::pubsub::notify;

/// The increment, which also picks the mode.
#[derive(Clone, Copy)]
enum By {
    Int(i64),
    Float(LongDouble),
}

/// INCREX's options as given.
#[derive(Default)]
struct Options<'a> {
    by: Option<By>,
    lbound: Option<&'a [u8]>,
    ubound: Option<&'a [u8]>,
    saturate: bool,
    expiry: Option<Expiry<'a>>,
    persist: bool,
    enx: bool,
}

impl<'a> Options<'a> {
    /// Parses the options after the key; a repeated or conflicting option, or a token
    /// without its value, is a syntax error.
    fn parse(ctx: &mut Ctx, args: &[&'a [u8]]) -> Option<Options<'a>> {
        let mut o = Options::default();
        let mut j = 0;
        while j < args.len() {
            let opt = args[j].to_ascii_uppercase();
            let next = args.get(j + 1).copied();
            match (opt.as_slice(), next) {
                (b"BYINT", Some(n)) if o.by.is_none() => {
                    let Some(v) = crate::numbers::parse_i64(n) else {
                        ctx.error("ERR Increment is not an integer or out of range");
                        return None;
                    };
                    o.by = Some(By::Int(v));
                    j += 1;
                }
                (b"BYFLOAT", Some(f)) if o.by.is_none() => {
                    match LongDouble::parse(f) {
                        Some(Parsed::Finite(v)) => o.by = Some(By::Float(v)),
                        Some(Parsed::Infinite) => {
                            ctx.error("ERR BYFLOAT increment cannot be Infinity");
                            return None;
                        }
                        None => {
                            ctx.error("ERR Increment is not a valid float");
                            return None;
                        }
                    }
                    j += 1;
                }
                (b"LBOUND", Some(l)) if o.lbound.is_none() => {
                    o.lbound = Some(l);
                    j += 1;
                }
                (b"UBOUND", Some(u)) if o.ubound.is_none() => {
                    o.ubound = Some(u);
                    j += 1;
                }
                (b"SATURATE", _) if !o.saturate => o.saturate = true,
                (b"PERSIST", _) if o.expiry.is_none() && !o.persist && !o.enx => o.persist = true,
                (b"ENX", _) if !o.enx && !o.persist => o.enx = true,
                (b"EX" | b"PX" | b"EXAT" | b"PXAT", Some(text))
                    if o.expiry.is_none() && !o.persist =>
                {
                    o.expiry = Some(Expiry {
                        text,
                        seconds: opt[0] == b'E',
                        relative: opt.len() == 2,
                    });
                    j += 1;
                }
                _ => {
                    ctx.syntax_error();
                    return None;
                }
            }
            j += 1;
        }
        if o.enx && o.expiry.is_none() {
            ctx.error("ERR ENX flag requires an expiration");
            return None;
        }
        Some(o)
    }
}

/// A number of the command's mode.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(LongDouble),
}

impl Num {
    /// Zero in integer or float mode.
    fn zero(float: bool) -> Num {
        if float {
            Num::Float(LongDouble::from_i64(0))
        } else {
            Num::Int(0)
        }
    }

    /// The keyspace event of a change to it: INCRBY's or INCRBYFLOAT's.
    fn event(self) -> &'static str {
        match self {
            Num::Int(_) => "incrby",
            Num::Float(_) => "incrbyfloat",
        }
    }

    /// Replies it: an integer, or a long double as INCRBYFLOAT prints it.
    fn reply(self, ctx: &mut Ctx) {
        match self {
            Num::Int(v) => ctx.out.int(v),
            Num::Float(v) => ctx.out.double_text(&v.to_text()),
        }
    }

    /// The value stored for it.
    fn stored(self) -> StringValue {
        match self {
            Num::Int(v) => StringValue::from_int(v),
            Num::Float(v) => StringValue::from_text(&v.to_text()),
        }
    }

    /// Its text, for the SET that replays it.
    fn text(self) -> Vec<u8> {
        match self {
            Num::Int(v) => v.to_string().into_bytes(),
            Num::Float(v) => v.to_text(),
        }
    }
}

/// What the sum comes to: the new value and the increment applied, or None when refused.
type Outcome = Option<(Num, Num)>;

/// The error of a saturated increment that does not fit the type.
const DELTA_OVERFLOW: &str = "ERR applied increment would overflow";

/// Integer mode: `current + by` within `[lo, hi]`, or held there with `saturate`.
fn sum_int(
    current: i64,
    by: i64,
    lo: i64,
    hi: i64,
    saturate: bool,
) -> Result<Outcome, &'static str> {
    let sum = current as i128 + by as i128;
    if (lo as i128..=hi as i128).contains(&sum) {
        return Ok(Some((Num::Int(sum as i64), Num::Int(by))));
    }
    if !saturate {
        return Ok(None);
    }
    let held = sum.clamp(lo as i128, hi as i128) as i64;
    let delta = i64::try_from(held as i128 - current as i128).map_err(|_| DELTA_OVERFLOW)?;
    Ok(Some((Num::Int(held), Num::Int(delta))))
}

/// Float mode: as [`sum_int`], in long double; a sum past LDBL_MAX is out of bounds.
fn sum_float(
    current: LongDouble,
    by: LongDouble,
    lo: LongDouble,
    hi: LongDouble,
    saturate: bool,
) -> Result<Outcome, &'static str> {
    let sum = current.add(by);
    let held = match sum {
        Some(s) if s.compare(lo) == Ordering::Less => lo,
        Some(s) if s.compare(hi) == Ordering::Greater => hi,
        Some(s) => return Ok(Some((Num::Float(s), Num::Float(by)))),
        None if by.is_negative() => lo,
        None => hi,
    };
    if !saturate {
        return Ok(None);
    }
    let delta = held.add(current.neg()).ok_or(DELTA_OVERFLOW)?;
    Ok(Some((Num::Float(held), Num::Float(delta))))
}

/// A bound of integer mode, or None after the error reply.
fn int_bound(ctx: &mut Ctx, text: Option<&[u8]>, default: i64) -> Option<i64> {
    match text {
        None => Some(default),
        Some(t) => ctx.int_arg(t),
    }
}

/// A bound of float mode, or None after the error reply.
fn float_bound(ctx: &mut Ctx, text: Option<&[u8]>, default: LongDouble) -> Option<LongDouble> {
    match text.map(LongDouble::parse) {
        None => Some(default),
        Some(Some(Parsed::Finite(v))) => Some(v),
        Some(_) => {
            ctx.error(errors::NOT_A_FLOAT);
            None
        }
    }
}

/// The current value in the command's mode (0 when the key is missing), or None after
/// the error reply.
fn current(ctx: &mut Ctx, key: &[u8], float: bool) -> Option<Num> {
    let found = match write_string(ctx, key) {
        Err(_) => return None,
        Ok(None) => return Some(Num::zero(float)),
        Ok(Some(s)) => s,
    };
    let parsed = match (found.as_int(), float) {
        (Some(v), false) => Ok(Num::Int(v)),
        (None, false) => Err(errors::NOT_AN_INTEGER),
        (Some(v), true) => Ok(Num::Float(LongDouble::from_i64(v))),
        (None, true) => match LongDouble::parse(&found.bytes()) {
            Some(Parsed::Finite(v)) => Ok(Num::Float(v)),
            Some(Parsed::Infinite) => Err("ERR value cannot be Infinity"),
            None => Err(errors::NOT_A_FLOAT),
        },
    };
    parsed.map_err(|e| ctx.error(e)).ok()
}

/// INCREX key [BYINT n|BYFLOAT f] [LBOUND l] [UBOUND u] [SATURATE]
/// [EX s|PX ms|EXAT t|PXAT t|PERSIST] [ENX]
pub fn increx(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let Some(o) = Options::parse(ctx, &args[2..]) else {
        return;
    };
    let Some(at) = optional_expire_at(ctx, o.expiry, "increx") else {
        return;
    };
    let float = matches!(o.by, Some(By::Float(_)));
    let outcome = if let Some(By::Float(by)) = o.by {
        let Some(lo) = float_bound(ctx, o.lbound, LongDouble::MAX.neg()) else {
            return;
        };
        let Some(hi) = float_bound(ctx, o.ubound, LongDouble::MAX) else {
            return;
        };
        if lo.compare(hi) == Ordering::Greater {
            return ctx.error("ERR LBOUND can't be greater than UBOUND");
        }
        let Some(Num::Float(cur)) = current(ctx, key, float) else {
            return;
        };
        sum_float(cur, by, lo, hi, o.saturate).map(|r| (Num::Float(cur), r))
    } else {
        let by = match o.by {
            Some(By::Int(n)) => n,
            _ => 1,
        };
        let Some(lo) = int_bound(ctx, o.lbound, i64::MIN) else {
            return;
        };
        let Some(hi) = int_bound(ctx, o.ubound, i64::MAX) else {
            return;
        };
        if lo > hi {
            return ctx.error("ERR LBOUND can't be greater than UBOUND");
        }
        let Some(Num::Int(cur)) = current(ctx, key, float) else {
            return;
        };
        sum_int(cur, by, lo, hi, o.saturate).map(|r| (Num::Int(cur), r))
    };
    let (cur, result) = match outcome {
        Err(e) => return ctx.error(e),
        Ok(r) => r,
    };
    let Some((value, delta)) = result else {
        // Refused: nothing changes, nothing replays.
        ctx.out.array(2);
        cur.reply(ctx);
        return Num::zero(float).reply(ctx);
    };
    apply(ctx, key, value, at, &o);
    ctx.out.array(2);
    value.reply(ctx);
    delta.reply(ctx);
}

/// Stores `value` and sets the expiry as the options say, with the events and the
/// replayed command.
fn apply(ctx: &mut Ctx, key: &[u8], value: Num, at: Option<i64>, o: &Options) {
    let db = ctx.db();
    let had_ttl = ctx
        .server
        .keyspace
        .db(db)
        .get(key)
        .and_then(|e| e.expire_at())
        .is_some();
    // ENX leaves a key's expiry alone; otherwise EX / PX / EXAT / PXAT set it.
    let at = at.filter(|_| !(o.enx && had_ttl));
    let already_expired = at.is_some_and(|t| t <= ctx.now_ms as i64)
        && !ctx.server.keyspace.expiry_paused()
        && !ctx.server.replication.is_replica();
    if already_expired {
        // A missing key stays missing: nothing changed, nothing replays.
        if delete_already_expired(ctx, key) {
            ctx.server.keyspace.add_dirty(1);
        }
        return;
    }
    put(ctx, key, value.stored());
    ctx.notify(notify::STRING, value.event(), key);
    let text = value.text();
    if let Some(at) = at {
        ctx.server.keyspace.set_expiry(db, key, at as u64);
        ctx.notify(notify::GENERIC, "expire", key);
        let at = at.to_string();
        ctx.propagate_instead(&[b"SET", key, &text, b"PXAT", at.as_bytes()]);
    } else if o.persist {
        if ctx.server.keyspace.persist(db, key) {
            ctx.notify(notify::GENERIC, "persist", key);
        }
        ctx.propagate_instead(&[b"SET", key, &text]);
    } else {
        ctx.propagate_instead(&[b"SET", key, &text, b"KEEPTTL"]);
    }
}
