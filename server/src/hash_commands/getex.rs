//! HGETEX and HGETDEL (Redis 8.0): reply the values of the named fields of a hash, then
//! set or clear their times (HGETEX) or remove them (HGETDEL).
//!
//! Fields whose time has passed read as missing and are removed on the way (replayed as
//! HDEL, one "hexpired" event). HGETEX is replayed as HPEXPIREAT with the absolute time
//! or as HPERSIST, HGETDEL as HDEL; a time in the past removes the fields instead
//! (replayed as HDEL), as Redis's hgetexCommand and hgetdelCommand.

use super::field_ttl::{parse_fields, parse_time, COUNT_ERROR};
use super::lazy::{field_clock, removes_due, take_field, Found};
use super::write_hash;
use crate::commands::expire::Unit;
use crate::commands::Ctx;
use crate::pubsub::notify;

/// What HGETEX does to the times of the fields it finds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    Keep,
    Persist,
    /// Gives them this absolute time, Unix ms.
    Expire(u64),
}

/// HGETEX's option at `args[2]`, and where its FIELDS is; None after the error reply.
fn parse_change(ctx: &mut Ctx, args: &[&[u8]]) -> Option<(Change, usize)> {
    let (unit, relative) = match args[2].to_ascii_lowercase().as_slice() {
        b"ex" => (Unit::Seconds, true),
        b"px" => (Unit::Millis, true),
        b"exat" => (Unit::Seconds, false),
        b"pxat" => (Unit::Millis, false),
        b"persist" => return Some((Change::Persist, 3)),
        _ => return Some((Change::Keep, 2)),
    };
    let base = if relative { ctx.now_ms as i64 } else { 0 };
    let at = parse_time(ctx, args[3], unit, base, "hgetex")?;
    Some((Change::Expire(at), 4))
}

/// The reply of both: each field's value, or null.
fn reply_values(ctx: &mut Ctx, values: &[Option<Vec<u8>>]) {
    ctx.out.array(values.len());
    for v in values {
        match v {
            Some(v) => ctx.out.bulk(v),
            None => ctx.out.null(),
        }
    }
}

/// What a visit of the named fields did.
#[derive(Default)]
struct Visit<'a> {
    values: Vec<Option<Vec<u8>>>,
    /// Fields found due (removed when this server removes due fields).
    expired: usize,
    /// Fields whose time was set or cleared.
    updated: usize,
    /// Fields removed by the command itself.
    deleted: usize,
    /// Fields to replay as HDEL, in order.
    hdels: Vec<&'a [u8]>,
    /// Whether the hash was left empty.
    emptied: bool,
    /// The hash's earliest field time afterwards.
    next: Option<u64>,
}

impl<'a> Visit<'a> {
    /// Counts a field found due; it is replayed as HDEL when this server removed it.
    fn note_expired(&mut self, field: &'a [u8], removed: bool) -> Option<Vec<u8>> {
        self.expired += 1;
        if removed {
            self.hdels.push(field);
        }
        None
    }
}

/// Replies the visit's values, logs its HDELs, and fires "hexpired" and the change's
/// events; returns false when nothing changed (Redis's early return).
fn report(ctx: &mut Ctx, key: &[u8], visit: &Visit) -> bool {
    reply_values(ctx, &visit.values);
    let db = ctx.client.db;
    for f in &visit.hdels {
        ctx.server.keyspace.field_expired(db, key, f.to_vec());
    }
    if visit.expired + visit.deleted + visit.updated == 0 {
        return false;
    }
    ctx.server.keyspace.signal_modified(db, key);
    if visit.expired > 0 {
        ctx.notify(notify::HASH, "hexpired", key);
    }
    true
}

/// Deletes the hash when the command left it empty ("del").
fn drop_if_emptied(ctx: &mut Ctx, key: &[u8], emptied: bool) {
    if emptied {
        let db = ctx.client.db;
        ctx.server.keyspace.delete(db, key);
        ctx.notify(notify::GENERIC, "del", key);
    }
}

/// HGETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
/// PXAT unix-time-milliseconds | PERSIST] FIELDS numfields field [field ...]
pub fn hgetex(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let Ok(found) = write_hash(ctx, key) else {
        return;
    };
    let exists = found.is_some();
    let Some((change, fields_at)) = parse_change(ctx, args) else {
        return;
    };
    let Some(fields) = parse_fields(ctx, args, fields_at, COUNT_ERROR) else {
        return;
    };
    let (clock, removes) = (field_clock(ctx), removes_due(ctx));
    // Redis's checkAlreadyExpired: a past time removes the fields, except on a replica
    // and while loading.
    let past = matches!(change, Change::Expire(t) if t <= ctx.now_ms) && removes;
    if !exists {
        return reply_values(ctx, &vec![None; fields.len()]);
    }
    let Ok(Some(hash)) = write_hash(ctx, key) else {
        return;
    };
    if change != Change::Keep {
        hash.enable_field_expiry();
    }
    let mut visit = Visit::default();
    for &f in &fields {
        let value = match take_field(hash, f, clock, removes) {
            Found::Live(v) => Some(v),
            Found::Missing => None,
            Found::Expired => visit.note_expired(f, removes),
        };
        if value.is_some() {
            match change {
                Change::Keep => {}
                Change::Persist => {
                    if hash.get_with_expiry(f).is_some_and(|(_, t)| t.is_some()) {
                        hash.set_field_expiry(f, None);
                        visit.updated += 1;
                    }
                }
                Change::Expire(_) if past => {
                    hash.remove(f);
                    visit.deleted += 1;
                    visit.hdels.push(f);
                }
                Change::Expire(at) => {
                    hash.set_field_expiry(f, Some(at));
                    visit.updated += 1;
                }
            }
        }
        visit.values.push(value);
    }
    (visit.emptied, visit.next) = (hash.is_empty(), hash.min_field_expiry());
    if !report(ctx, key, &visit) {
        return;
    }
    let db = ctx.client.db;
    ctx.server
        .keyspace
        .add_dirty((visit.deleted + visit.updated) as u64);
    let at = match change {
        Change::Expire(at) if visit.updated > 0 => at.to_string(),
        _ => String::new(),
    };
    let mut argv: Vec<&[u8]> = vec![];
    match change {
        Change::Persist if visit.updated > 0 => {
            ctx.notify(notify::HASH, "hpersist", key);
            argv.extend_from_slice(&[b"HPERSIST", key]);
        }
        Change::Expire(_) if visit.updated > 0 => {
            ctx.notify(notify::HASH, "hexpire", key);
            argv.extend_from_slice(&[b"HPEXPIREAT", key, at.as_bytes()]);
            if let (Some(t), false) = (visit.next, visit.emptied) {
                ctx.server.keyspace.register_field_expiry(db, key, t);
            }
        }
        _ if visit.deleted > 0 => ctx.notify(notify::HASH, "hdel", key),
        _ => {}
    }
    if argv.is_empty() {
        // Only the HDELs replay it.
        ctx.propagate_nothing();
    } else {
        argv.extend_from_slice(&args[fields_at..]);
        ctx.propagate_instead(&argv);
    }
    drop_if_emptied(ctx, key, visit.emptied);
}

/// HGETDEL key FIELDS numfields field [field ...]: replayed as HDEL key field...
pub fn hgetdel(ctx: &mut Ctx, args: &[&[u8]]) {
    let key = args[1];
    let Ok(found) = write_hash(ctx, key) else {
        return;
    };
    let exists = found.is_some();
    let Some(fields) = parse_fields(ctx, args, 2, COUNT_ERROR) else {
        return;
    };
    let (clock, removes) = (field_clock(ctx), removes_due(ctx));
    if !exists {
        return reply_values(ctx, &vec![None; fields.len()]);
    }
    let Ok(Some(hash)) = write_hash(ctx, key) else {
        return;
    };
    let mut visit = Visit::default();
    for &f in &fields {
        let value = match take_field(hash, f, clock, removes) {
            Found::Live(v) => {
                hash.remove(f);
                visit.deleted += 1;
                Some(v)
            }
            Found::Missing => None,
            Found::Expired => visit.note_expired(f, removes),
        };
        visit.values.push(value);
    }
    visit.emptied = hash.is_empty();
    if !report(ctx, key, &visit) {
        return;
    }
    if visit.deleted > 0 {
        ctx.notify(notify::HASH, "hdel", key);
        ctx.server.keyspace.add_dirty(visit.deleted as u64);
        let mut argv: Vec<&[u8]> = vec![b"HDEL", key];
        argv.extend_from_slice(&fields);
        ctx.propagate_instead(&argv);
    } else {
        ctx.propagate_nothing();
    }
    drop_if_emptied(ctx, key, visit.emptied);
}
