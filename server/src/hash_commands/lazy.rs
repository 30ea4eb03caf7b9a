//! Lazy field expiry (Redis 7.4's hashTypeGetValue with HFE_LAZY_EXPIRE): a command that
//! touches a field whose time has passed sees it missing and, on a master, removes it:
//! HDEL is propagated, "hexpired" fired, and the hash goes with its last field ("del").
//! Commands that list fields (HGETALL, HSCAN) leave due fields out without removing them;
//! HLEN counts them until they are removed.

use crate::commands::Ctx;
use crate::keyspace::Hash;
use crate::pubsub::notify;
use goblin_zset::hash::field_alive;

/// The time fields are judged against: 0, which keeps every field alive, while expiry is
/// paused (a replica applying its master's stream, an AOF loading), as Redis treats
/// fields as alive for its master client; the command's time otherwise.
pub(super) fn field_clock(ctx: &Ctx) -> u64 {
    if ctx.server.keyspace.expiry_paused() {
        0
    } else {
        ctx.now_ms
    }
}

/// Whether this server removes due fields itself: not a replica (its master's HDEL
/// does), and expiry not held by a write pause.
pub(super) fn removes_due(ctx: &Ctx) -> bool {
    !ctx.server.keyspace.expiry_paused()
        && !ctx.server.keyspace.expiry_held()
        && !ctx.server.replication.is_replica()
}

/// The value of `field` if it is alive at `clock`.
pub(super) fn live_value<'h>(hash: &'h Hash, field: &[u8], clock: u64) -> Option<&'h [u8]> {
    hash.get_with_expiry(field)
        .filter(|&(_, t)| field_alive(t, clock))
        .map(|(v, _)| v)
}

/// Whether some field of `hash` is due at `clock` (so a read may have to remove one).
pub(super) fn has_due(hash: &Hash, clock: u64) -> bool {
    hash.min_field_expiry()
        .is_some_and(|t| !field_alive(Some(t), clock))
}

/// Removes those of `fields` of the hash at `key` whose time has passed, when this server
/// removes due fields: HDEL propagated for each, "hexpired" once, and "del" with the last
/// field. Returns true when the hash went.
pub(super) fn expire_fields(ctx: &mut Ctx, key: &[u8], fields: &[&[u8]]) -> bool {
    if !removes_due(ctx) {
        return false;
    }
    let (db, now) = (ctx.client.db, ctx.now_ms);
    let Some(entry) = ctx.server.keyspace.lookup_write(db, key, now) else {
        return false;
    };
    let Ok(hash) = entry.value.as_hash_mut() else {
        return false;
    };
    let mut removed = Vec::new();
    for &f in fields {
        if hash
            .get_with_expiry(f)
            .is_some_and(|(_, t)| !field_alive(t, now))
        {
            hash.remove(f);
            removed.push(f.to_vec());
        }
    }
    if removed.is_empty() {
        return false;
    }
    let emptied = hash.is_empty();
    for f in removed {
        ctx.server.keyspace.field_expired(db, key, f);
    }
    ctx.server.keyspace.after_fields_expired(db, key, emptied);
    emptied
}

/// Removes every due field of the hash at `key` first (HRANDFIELD, as Redis's
/// hashTypeExpireIfNeeded); true when the hash went with them.
pub(super) fn expire_all_due(ctx: &mut Ctx, key: &[u8]) -> bool {
    let (db, now) = (ctx.client.db, ctx.now_ms);
    let due = ctx
        .server
        .keyspace
        .db(db)
        .get(key)
        .is_some_and(|e| e.value.as_hash().is_ok_and(|h| has_due(h, now)));
    if !due || !removes_due(ctx) {
        return false;
    }
    let Some(entry) = ctx.server.keyspace.lookup_write(db, key, now) else {
        return false;
    };
    let Ok(hash) = entry.value.as_hash_mut() else {
        return false;
    };
    let removed = hash.take_expired(now, usize::MAX);
    let emptied = hash.is_empty();
    if let Some(at) = hash.min_field_expiry() {
        ctx.server.keyspace.register_field_expiry(db, key, at);
    }
    for f in removed {
        ctx.server.keyspace.field_expired(db, key, f);
    }
    ctx.server.keyspace.after_fields_expired(db, key, emptied);
    emptied
}

/// In a write's own hash (HINCRBY, HSETNX), removes `field` when its time has passed
/// and this server removes due fields; true when it did (see [`report_in_place`]);
/// `removes` is [`removes_due`].
pub(super) fn expire_in_place(hash: &mut Hash, field: &[u8], now: u64, removes: bool) -> bool {
    removes
        && hash
            .get_with_expiry(field)
            .is_some_and(|(_, t)| !field_alive(t, now))
        && hash.remove(field)
}

/// Reports a field a write removed with [`expire_in_place`]: HDEL propagated,
/// "hexpired", and "del" when it was the hash's last field (Redis deletes the hash and
/// adds a new one for the write, which fires no "new").
pub(super) fn report_in_place(ctx: &mut Ctx, key: &[u8], field: &[u8], emptied: bool) {
    let db = ctx.client.db;
    ctx.server.keyspace.field_expired(db, key, field.to_vec());
    ctx.notify(notify::HASH, "hexpired", key);
    if emptied {
        ctx.notify(notify::GENERIC, "del", key);
    }
}

/// What a command that names fields found at one of them (Redis's GetFieldRes).
pub(super) enum Found {
    /// The field is held and alive: its value.
    Live(Vec<u8>),
    /// The field is not held.
    Missing,
    /// The field's time had passed; it was removed when `removes` (see [`take_field`]).
    Expired,
}

/// Looks `field` up in a write's own hash (HGETEX, HGETDEL, HSETEX's FNX / FXX test) as
/// Redis's hashTypeGetValue with HFE_LAZY_AVOID_HASH_DEL: a field whose time has passed
/// at `clock` is removed when `removes` ([`removes_due`]), the hash staying even when
/// emptied; the caller reports it ([`Ctx`]'s keyspace `field_expired`).
pub(super) fn take_field(hash: &mut Hash, field: &[u8], clock: u64, removes: bool) -> Found {
    match hash.get_with_expiry(field) {
        None => Found::Missing,
        Some((v, t)) if field_alive(t, clock) => Found::Live(v.to_vec()),
        Some(_) => {
            if removes {
                hash.remove(field);
            }
            Found::Expired
        }
    }
}
