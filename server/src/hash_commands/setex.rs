//! HSETEX (Redis 8.0): sets fields of a hash, all or none under FNX / FXX, and gives them
//! a time, keeps theirs (KEEPTTL) or clears it (no option, as HSET).
//!
//! Replayed as given, EX / PX / EXAT turned into PXAT with the absolute time; a time in
//! the past removes the fields it set (replayed as HDEL only), as Redis's hsetexCommand.

use super::field_ttl::parse_time;
use super::lazy::{field_clock, removes_due, take_field, Found};
use super::{with_hash_or_create, write_hash};
use crate::commands::expire::Unit;
use crate::commands::Ctx;
use crate::errors;
use crate::pubsub::notify;

/// FNX / FXX: set the fields only if none / all of them are held.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    Fnx,
    Fxx,
}

/// What HSETEX does to the times of the fields it sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Times {
    /// No option: a field set loses its time (as HSET).
    Clear,
    Keep,
    /// This absolute time, Unix ms, given at `args[pos]`.
    At {
        at: u64,
        pos: usize,
    },
}

/// HSETEX's parsed arguments.
struct Options {
    cond: Option<Cond>,
    times: Times,
    /// Where the field / value pairs start.
    first: usize,
}

/// Parses HSETEX's options up to FIELDS (Redis's hsetexParseArgs, with its errors in its
/// order); None after the error reply.
fn parse(ctx: &mut Ctx, args: &[&[u8]]) -> Option<Options> {
    let arity = || errors::wrong_arity("hsetex");
    let mut opts = Options {
        cond: None,
        times: Times::Clear,
        first: 0,
    };
    let mut i = 2;
    while i < args.len() {
        let word = args[i].to_ascii_uppercase();
        let timed = match word.as_slice() {
            b"EX" => Some((Unit::Seconds, true)),
            b"PX" => Some((Unit::Millis, true)),
            b"EXAT" => Some((Unit::Seconds, false)),
            b"PXAT" => Some((Unit::Millis, false)),
            _ => None,
        };
        match word.as_slice() {
            b"FIELDS" => {
                if i + 3 >= args.len() {
                    ctx.error(&arity());
                    return None;
                }
                let n = crate::numbers::parse_i64(args[i + 1])
                    .filter(|n| (1..=i64::from(i32::MAX)).contains(n));
                let Some(n) = n else {
                    ctx.error("ERR invalid number of fields");
                    return None;
                };
                let remaining = args.len() - i - 2;
                if !remaining.is_multiple_of(2) || n as usize != remaining / 2 {
                    ctx.error(&arity());
                    return None;
                }
                opts.first = i + 2;
                return Some(opts);
            }
            b"EX" | b"PX" | b"EXAT" | b"PXAT" | b"KEEPTTL" if opts.times != Times::Clear => {
                ctx.error(
                    "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified",
                );
                return None;
            }
            b"KEEPTTL" => opts.times = Times::Keep,
            b"FNX" | b"FXX" if opts.cond.is_some() => {
                ctx.error("ERR Only one of FXX or FNX arguments can be specified");
                return None;
            }
            b"FNX" => opts.cond = Some(Cond::Fnx),
            b"FXX" => opts.cond = Some(Cond::Fxx),
            _ => match timed {
                Some(_) if i + 1 >= args.len() => {
                    ctx.error("ERR missing expire time");
                    return None;
                }
                Some((unit, relative)) => {
                    i += 1;
                    let base = if relative { ctx.now_ms as i64 } else { 0 };
                    let at = parse_time(ctx, args[i], unit, base, "hsetex")?;
                    opts.times = Times::At { at, pos: i };
                }
                None => {
                    let arg = String::from_utf8_lossy(args[i]);
                    ctx.error(&format!("ERR unknown argument: {arg}"));
                    return None;
                }
            },
        }
        i += 1;
    }
    // The arity leaves no way here without FIELDS; answered as Redis would a short call.
    ctx.error(&arity());
    None
}

/// What HSETEX did to the hash.
#[derive(Default)]
struct Outcome<'a> {
    /// Whether FNX / FXX refused the write.
    refused: bool,
    /// Fields the FNX / FXX test found due.
    expired: usize,
    /// Fields to replay as HDEL, in order (due ones removed, ones set with a past time).
    hdels: Vec<&'a [u8]>,
    /// Fields given a time.
    updated: usize,
    /// Fields set and removed for their past time.
    deleted: usize,
    emptied: bool,
    next: Option<u64>,
}

/// HSETEX key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds |
/// PXAT unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]
pub fn hsetex(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(opts) = parse(ctx, args) else {
        return;
    };
    let key = args[1];
    let Ok(found) = write_hash(ctx, key) else {
        return;
    };
    if found.is_none() && opts.cond == Some(Cond::Fxx) {
        return ctx.out.int(0);
    }
    let (clock, removes) = (field_clock(ctx), removes_due(ctx));
    let past = matches!(opts.times, Times::At { at, .. } if at <= ctx.now_ms) && removes;
    let pairs = &args[opts.first..];
    let Some((out, created)) = with_hash_or_create(ctx, key, |h, cfg| {
        let mut out = Outcome::default();
        if let Some(cond) = opts.cond {
            let mut held = 0;
            for pair in pairs.chunks_exact(2) {
                let exists = match take_field(h, pair[0], clock, removes) {
                    Found::Live(_) => true,
                    Found::Missing => false,
                    Found::Expired => {
                        out.expired += 1;
                        if removes {
                            out.hdels.push(pair[0]);
                        }
                        false
                    }
                };
                held += usize::from(exists);
                if exists == (cond == Cond::Fnx) {
                    break;
                }
            }
            out.refused = match cond {
                Cond::Fnx => held != 0,
                Cond::Fxx => held != pairs.len() / 2,
            };
        }
        if !out.refused {
            h.maybe_convert(pairs.len() / 2, cfg);
            if let Times::At { .. } = opts.times {
                h.enable_field_expiry();
            }
            for pair in pairs.chunks_exact(2) {
                let (field, value) = (pair[0], pair[1]);
                match opts.times {
                    Times::Clear => {
                        h.set(field, value, cfg);
                    }
                    Times::Keep => {
                        h.set_keep_ttl(field, value, cfg);
                    }
                    Times::At { .. } if past => {
                        h.set_keep_ttl(field, value, cfg);
                        h.remove(field);
                        out.deleted += 1;
                        out.hdels.push(field);
                    }
                    Times::At { at, .. } => {
                        h.set_keep_ttl(field, value, cfg);
                        h.set_field_expiry(field, Some(at));
                        out.updated += 1;
                    }
                }
            }
        }
        (out.emptied, out.next) = (h.is_empty(), h.min_field_expiry());
        out
    }) else {
        return;
    };
    let db = ctx.client.db;
    for f in &out.hdels {
        ctx.server.keyspace.field_expired(db, key, f.to_vec());
    }
    if out.refused {
        ctx.out.int(0);
        ctx.propagate_nothing();
    } else {
        ctx.out.int(1);
        ctx.server.keyspace.add_dirty((pairs.len() / 2) as u64);
        propagate(ctx, args, opts.times, out.deleted > 0);
    }
    if !out.refused || out.expired > 0 {
        if !created {
            ctx.server.keyspace.signal_modified(db, key);
        }
        if out.expired > 0 {
            ctx.notify(notify::HASH, "hexpired", key);
        }
        if !out.refused {
            ctx.notify(notify::HASH, "hset", key);
            if out.deleted > 0 {
                ctx.notify(notify::HASH, "hdel", key);
            } else if out.updated > 0 {
                ctx.notify(notify::HASH, "hexpire", key);
            }
        }
    }
    if out.emptied {
        ctx.server.keyspace.delete(db, key);
        ctx.notify(notify::GENERIC, "del", key);
    } else if let (Some(t), true) = (out.next, out.updated > 0) {
        ctx.server.keyspace.register_field_expiry(db, key, t);
    }
}

/// Replays a successful HSETEX: nothing when a past time removed the fields (their
/// HDELs replay it), EX / PX / EXAT as PXAT with the absolute time, else as given.
fn propagate(ctx: &mut Ctx, args: &[&[u8]], times: Times, deleted: bool) {
    if deleted {
        return ctx.propagate_nothing();
    }
    if let Times::At { at, pos } = times {
        if !args[pos - 1].eq_ignore_ascii_case(b"PXAT") {
            let at = at.to_string();
            let mut argv = args.to_vec();
            argv[pos - 1] = b"PXAT";
            argv[pos] = at.as_bytes();
            ctx.propagate_instead(&argv);
        }
    }
}
