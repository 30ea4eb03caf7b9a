//! The classic memcache commands: retrieval, storage, delete, incr/decr, touch, flush_all,
//! version, verbosity and stats, replying exactly as memcached 1.6 does.

use std::fmt::Write as _;

use super::parse::{Request, KEY_MAX};
use super::{push_value_line, Output, TailFetch};
use crate::clock;
use crate::digest::Digest;
use crate::stats::{self};
use crate::store::{Arith, Body, Deleted, Mode, Store, Stored};

/// What the connection does after a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next request.
    Continue,
    /// Flush replies, then close.
    Close,
}

/// Version reported by `version` and `stats`.
pub const VERSION: &str = concat!("1.6.18-goblin-", env!("CARGO_PKG_VERSION"));

/// Runs a request that carries no data block (storage commands go through [`finish_store`]).
pub fn run(store: &Store, req: Request<'_>, out: &mut Output) -> Flow {
    match req {
        Request::Get { keys, cas, touch } => get(store, &keys, cas, touch, out),
        Request::Delete { key, noreply } => {
            let r = store.delete(&Digest::of(key), 0);
            let c = if r == Deleted::Deleted {
                &store.stats.delete_hits
            } else {
                &store.stats.delete_misses
            };
            stats::incr(c);
            reply(
                out,
                noreply,
                if r == Deleted::Deleted {
                    "DELETED"
                } else {
                    "NOT_FOUND"
                },
            );
        }
        Request::Arith {
            key,
            incr,
            delta,
            noreply,
        } => {
            let r = store.arith(&Digest::of(key), incr, delta, 0, None);
            let (hit, miss) = if incr {
                (&store.stats.incr_hits, &store.stats.incr_misses)
            } else {
                (&store.stats.decr_hits, &store.stats.decr_misses)
            };
            match r {
                Arith::Value { value, .. } => {
                    stats::incr(hit);
                    reply(out, noreply, &value.to_string());
                }
                Arith::NotFound => {
                    stats::incr(miss);
                    reply(out, noreply, "NOT_FOUND");
                }
                Arith::NonNumeric | Arith::Exists => reply(
                    out,
                    noreply,
                    "CLIENT_ERROR cannot increment or decrement non-numeric value",
                ),
                Arith::NoMemory => reply(out, noreply, "SERVER_ERROR out of memory"),
            }
        }
        Request::Touch {
            key,
            exptime,
            noreply,
        } => {
            stats::incr(&store.stats.cmd_touch);
            if store.touch(&Digest::of(key), clock::expiry(i64::from(exptime))) {
                stats::incr(&store.stats.touch_hits);
                reply(out, noreply, "TOUCHED");
            } else {
                stats::incr(&store.stats.touch_misses);
                reply(out, noreply, "NOT_FOUND");
            }
        }
        Request::FlushAll { delay, noreply } => {
            store.flush(i64::from(delay));
            reply(out, noreply, "OK");
        }
        Request::Version => out.line(&format!("VERSION {VERSION}")),
        Request::Verbosity { noreply } => reply(out, noreply, "OK"),
        Request::Stats(sub) => stats_command(store, sub, out),
        Request::Quit | Request::Close => return Flow::Close,
        Request::Error {
            reply: text,
            noreply,
            ..
        } => reply(out, noreply, text),
        Request::Store { .. } | Request::Meta { .. } => {
            unreachable!("storage and meta requests are routed by the connection")
        }
    }
    Flow::Continue
}

fn reply(out: &mut Output, noreply: bool, text: &str) {
    if !noreply {
        out.line(text);
    }
}

/// get, gets, gat and gats. A key over 250 bytes anywhere makes the whole reply
/// CLIENT_ERROR (memcached discards the replies of the earlier keys).
pub fn get(store: &Store, keys: &[&[u8]], with_cas: bool, touch: Option<i32>, out: &mut Output) {
    if keys.iter().any(|k| k.len() > KEY_MAX) {
        out.line("CLIENT_ERROR bad command line format");
        return;
    }
    let exptime = touch.map(|t| clock::expiry(i64::from(t)));
    for key in keys {
        let d = Digest::of(key);
        let found = store.lookup(&d, true, |e, body| {
            if let Some(t) = exptime {
                e.exptime = t;
            }
            let cas = with_cas.then_some(e.cas);
            match body {
                Body::Whole(v) => {
                    let b = out.bytes();
                    push_value_line(b, key, e.flags, e.size, cas);
                    b.extend_from_slice(v);
                    b.extend_from_slice(b"\r\n");
                }
                Body::Split { head, tail } => {
                    let mut line = Vec::with_capacity(head.len() + key.len() + 64);
                    push_value_line(&mut line, key, e.flags, e.size, cas);
                    line.extend_from_slice(head);
                    out.push_tail(TailFetch {
                        prefix: line,
                        tail,
                        on_fail: Vec::new(),
                        token: None,
                    });
                }
            }
        });
        let s = &store.stats;
        match (touch.is_some(), found.is_some()) {
            (true, true) => [&s.cmd_touch, &s.touch_hits]
                .into_iter()
                .for_each(stats::incr),
            (true, false) => [&s.cmd_touch, &s.touch_misses]
                .into_iter()
                .for_each(stats::incr),
            (false, true) => [&s.cmd_get, &s.get_hits].into_iter().for_each(stats::incr),
            (false, false) => [&s.cmd_get, &s.get_misses]
                .into_iter()
                .for_each(stats::incr),
        };
    }
    out.line("END");
}

/// Replies to a storage command whose value would exceed the item size limit; a `set`
/// also drops the old value, as memcached does.
pub fn too_large(store: &Store, mode: Mode, key: &[u8], noreply: bool, out: &mut Output) {
    if mode == Mode::Set {
        store.delete(&Digest::of(key), 0);
    }
    reply(out, noreply, "SERVER_ERROR object too large for cache");
}

/// Completes a classic storage command once its data block (with the CRLF) has arrived.
#[allow(clippy::too_many_arguments)]
pub fn finish_store(
    store: &Store,
    mode: Mode,
    key: &[u8],
    flags: u32,
    exptime: i32,
    cas: u64,
    noreply: bool,
    block: &[u8],
    out: &mut Output,
) {
    stats::incr(&store.stats.cmd_set);
    let Some(data) = block.strip_suffix(b"\r\n") else {
        reply(out, noreply, "CLIENT_ERROR bad data chunk");
        return;
    };
    let r = store.store(
        &Digest::of(key),
        mode,
        flags,
        clock::expiry(i64::from(exptime)),
        data,
        cas,
        false,
    );
    let text = match r {
        Stored::Stored { .. } => "STORED",
        Stored::Exists => "EXISTS",
        Stored::NotFound => "NOT_FOUND",
        Stored::NotStored => "NOT_STORED",
        Stored::NoMemory => "SERVER_ERROR out of memory storing object",
    };
    reply(out, noreply, text);
}

fn stats_command(store: &Store, sub: Option<&[u8]>, out: &mut Output) {
    match sub {
        None => {
            let mut text = String::with_capacity(2048);
            for (k, v) in general_stats(store) {
                let _ = write!(text, "STAT {k} {v}\r\n");
            }
            text.push_str("END");
            out.line(&text);
        }
        Some(b"reset") => out.line("RESET"),
        Some(b"settings") => {
            let cfg = store.config();
            let mut text = String::new();
            let _ = write!(text, "STAT maxbytes {}\r\n", cfg.small_memory + cfg.memory);
            let _ = write!(text, "STAT item_size_max {}\r\n", cfg.max_item_size);
            let _ = write!(text, "STAT num_threads {}\r\n", cfg.cores);
            let _ = write!(text, "STAT tcpport {}\r\n", cfg.memcache_port.unwrap_or(0));
            let _ = write!(text, "STAT evictions on\r\nSTAT cas_enabled yes\r\nEND");
            out.line(&text);
        }
        Some(b"items" | b"slabs" | b"sizes" | b"conns") => out.line("END"),
        Some(b"detail") => out.line("CLIENT_ERROR usage: stats detail on|off|dump"),
        Some(_) => out.line("ERROR"),
    }
}

/// The fields of `stats` (and of the INFO section), memcached names first.
pub fn general_stats(store: &Store) -> Vec<(String, String)> {
    let g = store.gauges();
    let cfg = store.config();
    let mut v: Vec<(String, String)> = Vec::with_capacity(64);
    let mut put = |k: &str, val: String| v.push((k.to_string(), val));
    put("pid", std::process::id().to_string());
    put("uptime", (clock::now() - 62).to_string());
    put("time", clock::unix_now().to_string());
    put("version", VERSION.to_string());
    put(
        "pointer_size",
        (8 * std::mem::size_of::<usize>()).to_string(),
    );
    for (k, n) in store.stats.counters() {
        put(k, n.to_string());
    }
    put(
        "limit_maxbytes",
        (cfg.small_memory + cfg.memory).to_string(),
    );
    put("threads", cfg.cores.to_string());
    put("bytes", (g.arena_bytes + g.head_bytes).to_string());
    put("curr_items", g.items.to_string());
    put("arena_bytes", g.arena_bytes.to_string());
    put("arena_mapped_bytes", g.arena_mapped.to_string());
    put("head_bytes", g.head_bytes.to_string());
    put("tail_bytes", g.tail_bytes.to_string());
    v
}
