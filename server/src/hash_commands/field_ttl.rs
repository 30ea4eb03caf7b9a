//! Hash-field expiry (Redis 7.4): HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT (NX, XX, GT,
//! LT), HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST.
//!
//! Each takes `FIELDS numfields field...` and replies one integer per field. A time set
//! is replayed as HPEXPIREAT with the absolute time and only the fields it was set on; a
//! time in the past removes the field instead (replayed as HDEL), as Redis's
//! hexpireGenericCommand.

use super::lazy::{field_clock, removes_due};
use super::{read_hash, write_hash};
use crate::commands::expire::Unit;
use crate::commands::Ctx;
use crate::keyspace::WrongType;
use crate::pubsub::notify;
use goblin_zset::hash::field_alive;

/// The latest absolute time a field may be given, Unix ms (Redis's HFE_MAX_ABS_TIME_MSEC:
/// 2^48 - 1 with two bits kept back).
const MAX_ABS_TIME_MS: i64 = ((1 << 48) - 1) >> 2;

/// Reply for a field that is not held (or whose time has passed).
const NO_FIELD: i64 = -2;
/// Reply of HTTL and HPERSIST for a field without a time.
const NO_TTL: i64 = -1;

/// The NX / XX / GT / LT condition of HEXPIRE and friends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    Always,
    Nx,
    Xx,
    Gt,
    Lt,
}

impl Cond {
    fn parse(arg: &[u8]) -> Option<Cond> {
        Some(match arg.to_ascii_lowercase().as_slice() {
            b"nx" => Cond::Nx,
            b"xx" => Cond::Xx,
            b"gt" => Cond::Gt,
            b"lt" => Cond::Lt,
            _ => return None,
        })
    }

    /// Whether a field whose time is `current` may be given `at` (a field without a time
    /// passes LT, as in Redis).
    fn allows(self, current: Option<u64>, at: u64) -> bool {
        match (self, current) {
            (Cond::Always, _) => true,
            (Cond::Nx, c) => c.is_none(),
            (Cond::Xx | Cond::Gt, None) => false,
            (Cond::Lt, None) => true,
            (Cond::Xx, Some(_)) => true,
            (Cond::Gt, Some(c)) => at > c,
            (Cond::Lt, Some(c)) => at < c,
        }
    }
}

/// Parses `FIELDS numfields field...` starting at `args[at]`: the fields, or None after
/// the error reply. `count_error` is the command's text for a bad count; a missing count
/// (HGETEX's options can take the arguments the arity left for it) is an arity error.
pub(super) fn parse_fields<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    at: usize,
    count_error: &str,
) -> Option<Vec<&'a [u8]>> {
    if !args[at].eq_ignore_ascii_case(b"fields") {
        ctx.error("ERR Mandatory argument FIELDS is missing or not at the right position");
        return None;
    }
    let Some(count) = args.get(at + 1) else {
        let name = String::from_utf8_lossy(args[0]).to_lowercase();
        ctx.error(&crate::errors::wrong_arity(&name));
        return None;
    };
    let Some(n) = crate::numbers::parse_i64(count).filter(|&n| n >= 1) else {
        ctx.error(count_error);
        return None;
    };
    let fields = &args[at + 2..];
    if n as u64 != fields.len() as u64 {
        ctx.error("ERR The `numfields` parameter must match the number of arguments");
        return None;
    }
    Some(fields.to_vec())
}

/// The absolute time in Unix ms that `arg` gives, or None after the error reply.
pub(super) fn parse_time(
    ctx: &mut Ctx,
    arg: &[u8],
    unit: Unit,
    base: i64,
    name: &str,
) -> Option<u64> {
    let mut when = ctx.int_arg(arg)?;
    if when < 0 {
        ctx.error("ERR invalid expire time, must be >= 0");
        return None;
    }
    let invalid = format!("ERR invalid expire time in '{name}' command");
    if unit == Unit::Seconds {
        if when > MAX_ABS_TIME_MS / 1000 {
            ctx.error(&invalid);
            return None;
        }
        when *= 1000;
    }
    if when > MAX_ABS_TIME_MS - base {
        ctx.error(&invalid);
        return None;
    }
    Some((when + base) as u64)
}

/// What HEXPIRE did to one field (its reply).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    NoField = -2,
    NotMet = 0,
    Set = 1,
    Deleted = 2,
}

/// HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT (Redis's hexpireGenericCommand).
fn expire_generic(ctx: &mut Ctx, args: &[&[u8]], unit: Unit, relative: bool, name: &str) {
    let key = args[1];
    if let Err(WrongType) = write_hash(ctx, key) {
        return;
    }
    let base = if relative { ctx.now_ms as i64 } else { 0 };
    let Some(at) = parse_time(ctx, args[2], unit, base, name) else {
        return;
    };
    let (cond, fields_at) = match Cond::parse(args[3]) {
        Some(c) => (c, 4),
        None => (Cond::Always, 3),
    };
    let Some(fields) = parse_fields(
        ctx,
        args,
        fields_at,
        "ERR Parameter `numFields` should be greater than 0",
    ) else {
        return;
    };
    let db = ctx.client.db;
    // Redis's checkAlreadyExpired: a past time removes the field, except while loading
    // and on a replica.
    let past = at <= ctx.now_ms && removes_due(ctx);
    let Ok(Some(hash)) = write_hash(ctx, key) else {
        ctx.out.array(fields.len());
        return fields.iter().for_each(|_| ctx.out.int(NO_FIELD));
    };
    hash.enable_field_expiry();
    let outcomes: Vec<Outcome> = fields
        .iter()
        .map(|f| match hash.get_with_expiry(f) {
            None => Outcome::NoField,
            Some((_, current)) if !cond.allows(current, at) => Outcome::NotMet,
            Some(_) if past => {
                hash.remove(f);
                Outcome::Deleted
            }
            Some(_) => {
                hash.set_field_expiry(f, Some(at));
                Outcome::Set
            }
        })
        .collect();
    let emptied = hash.is_empty();
    let next = hash.min_field_expiry();
    ctx.out.array(outcomes.len());
    for o in &outcomes {
        ctx.out.int(*o as i64);
    }
    let deleted: Vec<&[u8]> = fields
        .iter()
        .zip(&outcomes)
        .filter_map(|(f, o)| (*o == Outcome::Deleted).then_some(*f))
        .collect();
    let set: Vec<&[u8]> = fields
        .iter()
        .zip(&outcomes)
        .filter_map(|(f, o)| (*o == Outcome::Set).then_some(*f))
        .collect();
    if deleted.is_empty() && set.is_empty() {
        return;
    }
    ctx.server
        .keyspace
        .add_dirty((deleted.len() + set.len()) as u64);
    for f in &deleted {
        ctx.server.keyspace.field_expired(db, key, f.to_vec());
    }
    if emptied {
        ctx.server.keyspace.delete(db, key);
        ctx.notify(notify::HASH, "hdel", key);
        ctx.notify(notify::GENERIC, "del", key);
    } else {
        ctx.server.keyspace.signal_modified(db, key);
        let event = if deleted.is_empty() {
            "hexpire"
        } else {
            "hdel"
        };
        ctx.notify(notify::HASH, event, key);
        if let Some(t) = next {
            ctx.server.keyspace.register_field_expiry(db, key, t);
        }
    }
    if set.is_empty() {
        // Only HDELs replay it.
        ctx.propagate_nothing();
        return;
    }
    // Replayed as HPEXPIREAT key ms [condition] FIELDS n field... with the fields set.
    let (at, n) = (at.to_string(), set.len().to_string());
    let mut argv: Vec<&[u8]> = vec![b"HPEXPIREAT", key, at.as_bytes()];
    if cond != Cond::Always {
        argv.push(args[3]);
    }
    argv.extend_from_slice(&[b"FIELDS", n.as_bytes()]);
    argv.extend_from_slice(&set);
    ctx.propagate_instead(&argv);
}

/// HEXPIRE key seconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
pub fn hexpire(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Seconds, true, "hexpire");
}

/// HPEXPIRE key milliseconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
pub fn hpexpire(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Millis, true, "hpexpire");
}

/// HEXPIREAT key unix-time-seconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
pub fn hexpireat(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Seconds, false, "hexpireat");
}

/// HPEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT] FIELDS numfields field [field ...]
pub fn hpexpireat(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Millis, false, "hpexpireat");
}

/// HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME (Redis's httlGenericCommand): per field -2 when
/// absent or due, -1 without a time, else the time left (or the time) in the unit,
/// seconds rounded up.
fn ttl_generic(ctx: &mut Ctx, args: &[&[u8]], unit: Unit, relative: bool) {
    let clock = field_clock(ctx);
    let base = if relative { ctx.now_ms } else { 0 };
    // The key is looked up (and its type checked) before the arguments are.
    let Ok(found) = read_hash(ctx, args[1]) else {
        return;
    };
    let times: Option<Vec<Option<Option<u64>>>> = found.map(|h| {
        args[4..]
            .iter()
            .map(|f| h.get_with_expiry(f).map(|(_, t)| t))
            .collect()
    });
    let Some(fields) = parse_fields(ctx, args, 2, COUNT_ERROR) else {
        return;
    };
    ctx.out.array(fields.len());
    for i in 0..fields.len() {
        let reply = match times.as_ref().and_then(|t| t[i]) {
            None => NO_FIELD,
            Some(None) => NO_TTL,
            Some(Some(t)) if !field_alive(Some(t), clock) => NO_FIELD,
            Some(Some(t)) => {
                let left = t as i64 - base as i64;
                match unit {
                    Unit::Seconds => (left + 999) / 1000,
                    Unit::Millis => left,
                }
            }
        };
        ctx.out.int(reply);
    }
}

/// The error for a bad field count of HTTL, HPERSIST, HGETEX and HGETDEL.
pub(super) const COUNT_ERROR: &str = "ERR Number of fields must be a positive integer";

/// HTTL key FIELDS numfields field [field ...]
pub fn httl(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Seconds, true);
}

/// HPTTL key FIELDS numfields field [field ...]
pub fn hpttl(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Millis, true);
}

/// HEXPIRETIME key FIELDS numfields field [field ...]
pub fn hexpiretime(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Seconds, false);
}

/// HPEXPIRETIME key FIELDS numfields field [field ...]
pub fn hpexpiretime(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Millis, false);
}

/// HPERSIST key FIELDS numfields field [field ...]: per field 1 when its time was
/// removed, -1 without a time, -2 when absent or due. One "hpersist" event and one change
/// for the whole command.
pub fn hpersist(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    if let Err(WrongType) = write_hash(ctx, key) {
        return;
    }
    let Some(fields) = parse_fields(ctx, args, 2, COUNT_ERROR) else {
        return;
    };
    let clock = field_clock(ctx);
    let Ok(Some(hash)) = write_hash(ctx, key) else {
        ctx.out.array(fields.len());
        return fields.iter().for_each(|_| ctx.out.int(NO_FIELD));
    };
    let replies: Vec<i64> = fields
        .iter()
        .map(|f| match hash.get_with_expiry(f) {
            None => NO_FIELD,
            Some((_, None)) => NO_TTL,
            Some((_, Some(t))) if !field_alive(Some(t), clock) => NO_FIELD,
            Some(_) => {
                hash.set_field_expiry(f, None);
                1
            }
        })
        .collect();
    ctx.out.array(replies.len());
    for r in &replies {
        ctx.out.int(*r);
    }
    if replies.contains(&1) {
        ctx.notify(notify::HASH, "hpersist", key);
        let db = ctx.client.db;
        ctx.server.keyspace.signal_modified(db, key);
        ctx.server.keyspace.add_dirty(1);
    }
}
