//! Expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX|XX|GT|LT), TTL, PTTL,
//! EXPIRETIME, PEXPIRETIME, PERSIST.

use super::Ctx;
use crate::keyspace::Cause;
use crate::propagate::deletion_verb;
use crate::pubsub::notify;

/// How an expire command gives its time (the key's and the hash fields' commands).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Seconds,
    Millis,
}

/// Conditions of EXPIRE and friends.
#[derive(Default)]
struct Conditions {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_conditions(ctx: &mut Ctx, opts: &[&[u8]]) -> Option<Conditions> {
    let mut c = Conditions::default();
    for opt in opts {
        match opt.to_ascii_uppercase().as_slice() {
            b"NX" => c.nx = true,
            b"XX" => c.xx = true,
            b"GT" => c.gt = true,
            b"LT" => c.lt = true,
            _ => {
                ctx.error(&format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(opt)
                ));
                return None;
            }
        }
    }
    if c.nx && (c.xx || c.gt || c.lt) {
        ctx.error("ERR NX and XX, GT or LT options at the same time are not compatible");
        return None;
    }
    if c.gt && c.lt {
        ctx.error("ERR GT and LT options at the same time are not compatible");
        return None;
    }
    Some(c)
}

fn expire_generic(ctx: &mut Ctx, args: &[&[u8]], unit: Unit, relative: bool, name: &str) {
    let Some(cond) = parse_conditions(ctx, &args[3..]) else {
        return;
    };
    let Some(mut when) = ctx.int_arg(args[2]) else {
        return;
    };
    let invalid = format!("ERR invalid expire time in '{name}' command");
    if let Unit::Seconds = unit {
        match when.checked_mul(1000) {
            Some(ms) => when = ms,
            None => return ctx.error(&invalid),
        }
    }
    if relative {
        match when.checked_add(ctx.now_ms as i64) {
            Some(at) => when = at,
            None => return ctx.error(&invalid),
        }
    }
    let db = ctx.db();
    let key = args[1];
    let Some(entry) = ctx.server.keyspace.lookup_write(db, key, ctx.now_ms) else {
        return ctx.out.int(0);
    };
    let current = entry.expire_at().map(|v| v as i64);
    let refused = (cond.nx && current.is_some())
        || (cond.xx && current.is_none())
        || (cond.gt && current.is_none_or(|c| when <= c))
        || (cond.lt && current.is_some_and(|c| when >= c));
    if refused {
        return ctx.out.int(0);
    }
    // Redis's checkAlreadyExpired: a time in the past deletes the key, except while
    // loading and on a replica, where the key keeps it (and expires later, or by the
    // master's DEL).
    let already_expired = when <= ctx.now_ms as i64
        && !ctx.server.keyspace.expiry_paused()
        && !ctx.server.replication.is_replica();
    if already_expired {
        delete_already_expired(ctx, key);
    } else {
        ctx.server.keyspace.set_expiry(db, key, when.max(1) as u64);
        ctx.server.keyspace.signal_modified(db, key);
        ctx.notify(notify::GENERIC, "expire", key);
        // Replayed as PEXPIREAT key ms [conditions] (Redis's expireGenericCommand).
        let at = when.to_string();
        let mut argv: Vec<&[u8]> = vec![b"PEXPIREAT", key, at.as_bytes()];
        argv.extend_from_slice(&args[3..]);
        ctx.propagate_instead(&argv);
    }
    ctx.server.keyspace.add_dirty(1);
    ctx.out.int(1);
}

/// Deletes a key a command gave a time already past (Redis's checkAlreadyExpired case of
/// EXPIRE, GETEX, ...): its value freed, and the command replayed, as UNLINK under
/// lazyfree-lazy-expire and as DEL otherwise; fires "del". Returns true when it existed.
pub(crate) fn delete_already_expired(ctx: &mut Ctx, key: &[u8]) -> bool {
    let db = ctx.db();
    if !ctx.server.keyspace.delete_as_expired(db, key) {
        return false;
    }
    ctx.notify(notify::GENERIC, "del", key);
    let lazy = ctx.server.keyspace.removal_is_lazy(Cause::Expired);
    ctx.propagate_instead(&[deletion_verb(lazy), key]);
    true
}

/// EXPIRE key seconds [NX|XX|GT|LT]
pub fn expire(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Seconds, true, "expire");
}

/// PEXPIRE key milliseconds [NX|XX|GT|LT]
pub fn pexpire(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Millis, true, "pexpire");
}

/// EXPIREAT key unix-time-seconds [NX|XX|GT|LT]
pub fn expireat(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Seconds, false, "expireat");
}

/// PEXPIREAT key unix-time-milliseconds [NX|XX|GT|LT]
pub fn pexpireat(ctx: &mut Ctx, args: &[&[u8]]) {
    expire_generic(ctx, args, Unit::Millis, false, "pexpireat");
}

/// Shared by TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 missing, -1 no expiry. The lookup does
/// not update the key's access time (LOOKUP_NOTOUCH in Redis).
fn ttl_generic(ctx: &mut Ctx, args: &[&[u8]], unit: Unit, absolute: bool) {
    let db = ctx.db();
    let now = ctx.now_ms as i64;
    let Some(entry) = ctx
        .server
        .keyspace
        .lookup_read(db, args[1], ctx.now_ms, false)
    else {
        return ctx.out.int(-2);
    };
    let Some(at) = entry.expire_at() else {
        return ctx.out.int(-1);
    };
    let ms = if absolute {
        at as i64
    } else {
        (at as i64 - now).max(0)
    };
    ctx.out.int(match unit {
        Unit::Millis => ms,
        Unit::Seconds => (ms + 500) / 1000,
    });
}

/// TTL key
pub fn ttl(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Seconds, false);
}

/// PTTL key
pub fn pttl(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Millis, false);
}

/// EXPIRETIME key
pub fn expiretime(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Seconds, true);
}

/// PEXPIRETIME key
pub fn pexpiretime(ctx: &mut Ctx, args: &[&[u8]]) {
    ttl_generic(ctx, args, Unit::Millis, true);
}

/// PERSIST key
pub fn persist(ctx: &mut Ctx, args: &[&[u8]]) {
    let db = ctx.db();
    if !ctx
        .server
        .keyspace
        .exists_for_write(db, args[1], ctx.now_ms)
    {
        return ctx.out.int(0);
    }
    if ctx.server.keyspace.persist(db, args[1]) {
        ctx.server.keyspace.signal_modified(db, args[1]);
        ctx.notify(notify::GENERIC, "persist", args[1]);
        ctx.server.keyspace.add_dirty(1);
        ctx.out.int(1);
    } else {
        ctx.out.int(0);
    }
}
