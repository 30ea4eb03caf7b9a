//! GET, GETDEL, GETEX, MGET.

use super::read_string;
use super::set::{expire_at, Family, Options};
use crate::commands::expire::delete_already_expired;
use crate::commands::Ctx;
use crate::keyspace::{Value, WrongType};
use crate::pubsub::notify;

/// Replies with the string at `key` or null (Redis's getGenericCommand); false after the
/// WRONGTYPE reply.
pub(super) fn reply_value(ctx: &mut Ctx, key: &[u8]) -> bool {
    let (found, out) = ctx.read_typed_and_out(key, Value::as_string);
    match found {
        Ok(Some(s)) => out.bulk(&s.bytes()),
        Ok(None) => out.null(),
        Err(_) => return false,
    }
    true
}

/// GET key
pub fn get(ctx: &mut Ctx, args: &[&[u8]]) {
    reply_value(ctx, args[1]);
}

/// The bytes of the string at `key` (one counted lookup); None when absent or after the
/// WRONGTYPE reply, whichever `Err` tells.
fn copy_value(ctx: &mut Ctx, key: &[u8]) -> Result<Option<Vec<u8>>, WrongType> {
    Ok(read_string(ctx, key)?.map(|s| s.bytes().to_vec()))
}

/// GETDEL key: the value, and the key deleted.
pub fn getdel(ctx: &mut Ctx, args: &[&[u8]]) {
    match copy_value(ctx, args[1]) {
        Ok(Some(value)) => {
            ctx.out.bulk(&value);
            let db = ctx.db();
            ctx.server.keyspace.delete(db, args[1]);
            ctx.notify(notify::GENERIC, "del", args[1]);
            ctx.server.keyspace.add_dirty(1);
            ctx.propagate_instead(&[b"DEL", args[1]]);
        }
        Ok(None) => ctx.out.null(),
        Err(_) => {}
    }
}

/// GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]
pub fn getex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(o) = Options::parse(ctx, &args[2..], Family::Get) else {
        return;
    };
    let key = args[1];
    let value = match copy_value(ctx, key) {
        Ok(Some(value)) => value,
        Ok(None) => return ctx.out.null(),
        Err(_) => return,
    };
    let at = match o.expiry {
        Some(e) => match expire_at(ctx, e, "getex") {
            Some(at) => Some((at, e.relative)),
            None => return,
        },
        None => None,
    };
    ctx.out.bulk(&value);
    let db = ctx.db();
    match at {
        Some((at, false)) if at <= ctx.now_ms as i64 => {
            delete_already_expired(ctx, key);
            ctx.server.keyspace.add_dirty(1);
        }
        Some((at, _)) => {
            ctx.server.keyspace.set_expiry(db, key, at as u64);
            ctx.server.keyspace.signal_modified(db, key);
            ctx.notify(notify::GENERIC, "expire", key);
            ctx.server.keyspace.add_dirty(1);
            // Redis 7.2 writes every form as PEXPIREAT (7.0 kept PXAT as given).
            let at = at.to_string();
            ctx.propagate_instead(&[b"PEXPIREAT", key, at.as_bytes()]);
        }
        None if o.persist && ctx.server.keyspace.persist(db, key) => {
            ctx.server.keyspace.signal_modified(db, key);
            ctx.notify(notify::GENERIC, "persist", key);
            ctx.server.keyspace.add_dirty(1);
            ctx.propagate_instead(&[b"PERSIST", key]);
        }
        None => {}
    }
}

/// MGET key [key ...]: null for a missing key and for one of another type.
pub fn mget(ctx: &mut Ctx, args: &[&[u8]]) {
    let keys = &args[1..];
    ctx.out.array(keys.len());
    let db = ctx.db();
    let touch = !ctx.client.no_touch;
    for key in keys {
        let entry = ctx.server.keyspace.lookup_read(db, key, ctx.now_ms, touch);
        match entry.map(|e| e.value.as_string()) {
            Some(Ok(s)) => ctx.out.bulk(&s.bytes()),
            _ => ctx.out.null(),
        }
    }
}
