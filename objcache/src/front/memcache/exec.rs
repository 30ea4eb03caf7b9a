//! The classic memcache commands: retrieval, storage, delete, incr/decr, touch, flush_all,
//! version, verbosity and stats, replying exactly as memcached 1.6 does.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};

use super::dump;
use super::parse::{strtoul, Request, KEY_MAX};
use super::slabs::{self, Census};
use super::{push_value_line, Output, TailFetch};
use crate::store::classes::{entry_class, item_class};
use crate::store::clock;
use crate::store::stats::{self};
use crate::store::Digest;
use crate::store::{general_stats, Arith, Body, Deleted, KeyNote, Mode, Store, Stored, VERSION};

/// What the connection does after a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next request.
    Continue,
    /// Flush replies, then close.
    Close,
}

/// Runs a request that carries no data block (storage commands go through [`finish_store`]).
pub fn run(store: &Store, req: Request<'_>, out: &mut Output) -> Flow {
    match req {
        Request::Get { keys, cas, touch } => get(store, &keys, cas, touch, out),
        Request::Delete { key, noreply } => {
            let text = match store.delete(&Digest::of(key), 0) {
                Deleted::Deleted(e) => {
                    count_delete_hit(store, &e);
                    "DELETED"
                }
                _ => {
                    stats::incr(&store.stats.delete_misses);
                    "NOT_FOUND"
                }
            };
            reply(out, noreply, text);
        }
        Request::Arith {
            key,
            incr,
            delta,
            noreply,
        } => {
            let d = Digest::of(key);
            // The key length goes into the item when incr relinks it under a longer value.
            let r = store.arith(&d, KeyNote::new(key, false), incr, delta, 0, None);
            match r {
                Arith::Value { value, prior, .. } => {
                    count_arith_hit(store, incr, prior.as_ref());
                    reply(out, noreply, &value.to_string());
                }
                Arith::NotFound => {
                    count_arith_miss(store, incr);
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
            if let Some(e) = store.touch(&Digest::of(key), clock::expiry(i64::from(exptime))) {
                count_hit(store, true, &e);
                reply(out, noreply, "TOUCHED");
            } else {
                count_miss(store, true);
                reply(out, noreply, "NOT_FOUND");
            }
        }
        Request::FlushAll { delay, noreply } => {
            store.flush(i64::from(delay));
            reply(out, noreply, "OK");
        }
        Request::Version => out.line(&format!("VERSION {VERSION}")),
        Request::Verbosity { level, noreply } => {
            VERBOSITY.store(level.min(MAX_VERBOSITY), Ordering::Relaxed);
            reply(out, noreply, "OK")
        }
        Request::Shutdown { mode_ok } => return shutdown(store, mode_ok, out),
        Request::MemLimit { megabytes, noreply } => {
            reply(out, noreply, mem_limit(store, megabytes));
        }
        Request::Stats(args) => stats_command(store, &args, out),
        // Of the crawler's sub-commands Goblin has metadump (it has no crawler to tune).
        Request::LruCrawler(args) => match args[..] {
            [b"metadump", which] => out.bytes().extend(dump::metadump(store, which)),
            _ => out.line("ERROR"),
        },
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

/// memcached's highest verbosity level; a higher one asked for is this.
const MAX_VERBOSITY: u32 = 2;

/// The level `verbosity` set (memcached's `-v` count): at 2, each request line is logged,
/// as memcached -vv prints them.
static VERBOSITY: AtomicU32 = AtomicU32::new(0);

/// The level the last `verbosity` command set.
pub fn verbosity() -> u32 {
    VERBOSITY.load(Ordering::Relaxed)
}

/// `cache_memlimit`: memcached's bounds (at least 8 MB; a number over a billion is taken
/// for bytes given by mistake), then the store's RAM limit is set to that many megabytes
/// (see [`Store::set_memory_limit`]: shrinking evicts and unmaps blocks). A limit that
/// would leave a shard of the arena less than one --block gets memcached's reply for a
/// limit it cannot apply.
fn mem_limit(store: &Store, megabytes: u32) -> &'static str {
    if megabytes < 8 {
        "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m"
    } else if megabytes > 1_000_000_000 {
        "MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes"
    } else if store.set_memory_limit(u64::from(megabytes) << 20) {
        "OK"
    } else {
        "MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust"
    }
}

/// `shutdown`: refused unless --memcache-enable-shutdown (memcached's -A); then the process
/// stops as on SIGINT, as memcached raises SIGINT (`graceful`, memcached's restart with its
/// memory file kept, does the same here: Goblin has no such file), and the connection closes.
fn shutdown(store: &Store, mode_ok: bool, out: &mut Output) -> Flow {
    if !store.config().shutdown_enabled {
        out.line("ERROR: shutdown not enabled");
        return Flow::Continue;
    }
    if !mode_ok {
        out.line("CLIENT_ERROR invalid shutdown mode");
        return Flow::Continue;
    }
    crate::store_log!(Notice, "memcache shutdown command: stopping as on SIGINT");
    // SAFETY: signal(2) restores SIGINT's default action, which the parent may have left
    // ignored (a shell's background job, nohup): goblin-store installs no handler of its
    // own, so the default is what stops it. raise(2) then sends the signal to this process.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::raise(libc::SIGINT);
    }
    Flow::Close
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
            count_hit(store, touch.is_some(), e);
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
        if found.is_none() {
            count_miss(store, touch.is_some());
        }
    }
    out.line("END");
}

/// Counts a read (`touch`: one that set a new expiry) that found item `e`: the command, the
/// hit, and the hit in the item's slab class.
pub fn count_hit(store: &Store, touch: bool, e: &crate::store::Entry) {
    let s = &store.stats;
    let class = s.classes.of(entry_class(e));
    let counters = if touch {
        [&s.cmd_touch, &s.touch_hits, &class.touch_hits]
    } else {
        [&s.cmd_get, &s.get_hits, &class.get_hits]
    };
    counters.into_iter().for_each(stats::incr);
}

/// Counts a read that found nothing: the command and the miss.
pub fn count_miss(store: &Store, touch: bool) {
    let s = &store.stats;
    let counters = if touch {
        [&s.cmd_touch, &s.touch_misses]
    } else {
        [&s.cmd_get, &s.get_misses]
    };
    counters.into_iter().for_each(stats::incr);
}

/// Counts a delete that removed (or invalidated) item `e`, store-wide and in its class.
pub fn count_delete_hit(store: &Store, e: &crate::store::Entry) {
    let s = &store.stats;
    [&s.delete_hits, &s.classes.of(entry_class(e)).delete_hits]
        .into_iter()
        .for_each(stats::incr);
}

/// Counts an incr or decr that changed item `prior` (store-wide and in its slab class); an
/// item created from an initial value (`None`) is no hit.
pub fn count_arith_hit(store: &Store, incr: bool, prior: Option<&crate::store::Entry>) {
    let Some(e) = prior else { return };
    let s = &store.stats;
    let class = s.classes.of(entry_class(e));
    let counters = if incr {
        [&s.incr_hits, &class.incr_hits]
    } else {
        [&s.decr_hits, &class.decr_hits]
    };
    counters.into_iter().for_each(stats::incr);
}

/// Counts an incr or decr that found no item (or another CAS value).
pub fn count_arith_miss(store: &Store, incr: bool) {
    let s = &store.stats;
    stats::incr(if incr { &s.incr_misses } else { &s.decr_misses });
}

/// Counts a storage command whose data arrived: store-wide and in the slab class of the item
/// it makes of `key_len`, `flags` and `len` value bytes, as memcached counts `cmd_set`.
pub fn count_set(store: &Store, key_len: usize, flags: u32, len: usize) {
    let s = &store.stats;
    let class = s.classes.of(item_class(key_len, flags, len));
    [&s.cmd_set, &class.cmd_set]
        .into_iter()
        .for_each(stats::incr);
}

/// Counts a storage command that found no room for its item, store-wide and in the item's
/// slab class (memcached's `outofmemory`).
pub fn count_no_memory(store: &Store, key_len: usize, flags: u32, len: usize) {
    let s = &store.stats;
    let class = s.classes.of(item_class(key_len, flags, len));
    [&s.store_no_memory, &class.outofmemory]
        .into_iter()
        .for_each(stats::incr);
}

/// Replies to a storage command whose value would exceed the item size limit; a `set`
/// also drops the old value, as memcached does.
pub fn too_large(store: &Store, mode: Mode, key: &[u8], noreply: bool, out: &mut Output) {
    stats::incr(&store.stats.store_too_large);
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
    // The block holds the value and its CRLF (or what came in their place).
    count_set(store, key.len(), flags, block.len().saturating_sub(2));
    let Some(data) = block.strip_suffix(b"\r\n") else {
        reply(out, noreply, "CLIENT_ERROR bad data chunk");
        return;
    };
    let d = Digest::of(key);
    let r = store.store(
        &d,
        KeyNote::new(key, false),
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
        Stored::NoMemory => {
            count_no_memory(store, key.len(), flags, data.len());
            "SERVER_ERROR out of memory storing object"
        }
    };
    reply(out, noreply, text);
}

/// `stats` and its sub-commands, in memcached's `process_stat` order.
fn stats_command(store: &Store, args: &[&[u8]], out: &mut Output) {
    let Some(&sub) = args.first() else {
        let mut text = String::with_capacity(2048);
        for (k, v) in general_stats(store) {
            let _ = write!(text, "STAT {k} {v}\r\n");
        }
        text.push_str("END");
        return out.line(&text);
    };
    let text = match sub {
        b"reset" => {
            store.stats.reset();
            return out.line("RESET");
        }
        // Goblin keeps no per-prefix counters: on and off are accepted, dump is empty.
        b"detail" => {
            return out.line(match args.get(1).copied() {
                Some(b"on" | b"off") => "OK",
                Some(b"dump") => "END",
                _ => "CLIENT_ERROR usage: stats detail on|off|dump",
            })
        }
        b"settings" => settings(store),
        b"cachedump" => {
            let error = match (args.get(1), args.get(2)) {
                (Some(id), Some(limit)) => match (strtoul(id), strtoul(limit)) {
                    (Some(id), Some(_)) if id >= 64 => "CLIENT_ERROR Illegal slab id",
                    (Some(id), Some(limit)) => {
                        let listed = dump::cachedump(store, id as usize, limit);
                        return out.bytes().extend(listed);
                    }
                    _ => "CLIENT_ERROR bad command line format",
                },
                _ => "CLIENT_ERROR bad command line",
            };
            return out.line(error);
        }
        b"conns" => conns(store),
        // memcached built with extstore but running without it lists nothing.
        b"extstore" => "END\r\n".to_string(),
        b"items" => Census::of(store).items(),
        b"slabs" => Census::of(store).slabs(),
        b"sizes" => Census::of(store).sizes(),
        // memcached replies to these with the status line alone.
        b"sizes_enable" => return out.line(slabs::set_sizes_enabled(true)),
        b"sizes_disable" => return out.line(slabs::set_sizes_enabled(false)),
        _ => return out.line("ERROR"),
    };
    out.bytes().extend_from_slice(text.as_bytes());
}

/// `stats settings`: memcached's fields in its order, with Goblin's value where it has the
/// setting and memcached's default where it does not.
fn settings(store: &Store) -> String {
    let cfg = store.config();
    let socket = cfg.memcache_socket.as_ref();
    let inter = cfg.listen_address.to_string();
    let ours = [
        ("maxbytes", store.memory_limit().to_string()),
        ("maxconns", cfg.max_connections.to_string()),
        // memcached on a Unix socket alone still shows its -p, 11211 unless given.
        (
            "tcpport",
            cfg.memcache_port
                .unwrap_or(if socket.is_some() { 11211 } else { 0 })
                .to_string(),
        ),
        ("udpport", "0".to_string()),
        ("inter", inter),
    ];
    let mut text = String::with_capacity(4096);
    for (k, v) in ours {
        let _ = write!(text, "STAT {k} {v}\r\n");
    }
    for &(k, v) in SETTINGS_DEFAULTS {
        let v = match k {
            "num_threads" => cfg.cores.to_string(),
            "item_size_max" => cfg.max_item_size.to_string(),
            "verbosity" => verbosity().to_string(),
            "shutdown_command" => if cfg.shutdown_enabled { "yes" } else { "no" }.to_string(),
            "domain_socket" => socket.map_or("NULL".into(), |(p, _)| p.display().to_string()),
            "umask" => format!("{:o}", socket.map_or(0o700, |&(_, perm)| perm)),
            _ => v.to_string(),
        };
        let _ = write!(text, "STAT {k} {v}\r\n");
    }
    text.push_str("END\r\n");
    text
}

/// `stats settings` after `inter`, with memcached 1.6.18's defaults (`verbosity`,
/// `domain_socket`, `umask`, `num_threads`, `item_size_max` and `shutdown_command` are
/// replaced by Goblin's).
const SETTINGS_DEFAULTS: &[(&str, &str)] = &[
    ("verbosity", ""),
    ("oldest", "0"),
    ("evictions", "on"),
    ("domain_socket", ""),
    ("umask", ""),
    ("shutdown_command", ""),
    ("growth_factor", "1.25"),
    ("chunk_size", "48"),
    ("num_threads", ""),
    ("num_threads_per_udp", "4"),
    ("stat_key_prefix", ":"),
    ("detail_enabled", "no"),
    ("reqs_per_event", "20"),
    ("cas_enabled", "yes"),
    ("tcp_backlog", "1024"),
    ("binding_protocol", "auto-negotiate"),
    ("auth_enabled_sasl", "no"),
    ("auth_enabled_ascii", "no"),
    ("item_size_max", ""),
    ("maxconns_fast", "yes"),
    ("hashpower_init", "0"),
    ("slab_reassign", "yes"),
    ("slab_automove", "1"),
    ("slab_automove_ratio", "0.80"),
    ("slab_automove_window", "30"),
    ("slab_chunk_max", "524288"),
    ("lru_crawler", "yes"),
    ("lru_crawler_sleep", "100"),
    ("lru_crawler_tocrawl", "0"),
    ("tail_repair_time", "0"),
    ("flush_enabled", "yes"),
    ("dump_enabled", "yes"),
    ("hash_algorithm", "murmur3"),
    ("lru_maintainer_thread", "yes"),
    ("lru_segmented", "yes"),
    ("hot_lru_pct", "20"),
    ("warm_lru_pct", "40"),
    ("hot_max_factor", "0.20"),
    ("warm_max_factor", "2.00"),
    ("temp_lru", "no"),
    ("temporary_ttl", "61"),
    ("idle_timeout", "0"),
    ("watcher_logbuf_size", "262144"),
    ("worker_logbuf_size", "65536"),
    ("read_buf_mem_limit", "0"),
    ("track_sizes", "no"),
    ("inline_ascii_response", "no"),
    ("ext_item_size", "512"),
    ("ext_item_age", "4294967295"),
    ("ext_low_ttl", "0"),
    ("ext_recache_rate", "2000"),
    ("ext_wbuf_size", "4194304"),
    ("ext_compact_under", "0"),
    ("ext_drop_under", "0"),
    ("ext_max_sleep", "1000000"),
    ("ext_max_frag", "0.80"),
    ("slab_automove_freeratio", "0.010"),
    ("ext_drop_unread", "no"),
    ("ssl_enabled", "no"),
    ("ssl_chain_cert", "(null)"),
    ("ssl_key", "(null)"),
    ("ssl_verify_mode", "0"),
    ("ssl_keyformat", "1"),
    ("ssl_ciphers", "NULL"),
    ("ssl_ca_cert", "NULL"),
    ("ssl_wbuf_size", "16384"),
    ("ssl_session_cache", "no"),
    ("ssl_kernel_tls", "no"),
    ("ssl_min_version", "tlsv1.2"),
    ("num_napi_ids", "(null)"),
    ("memory_file", "(null)"),
];

/// `stats conns`: memcached lists every socket; Goblin's sessions do not see the others, so
/// this lists the listener of each event loop (`--cores` of them, sharing the port), then
/// the Unix-domain listener they share.
fn conns(store: &Store) -> String {
    let cfg = store.config();
    let addr = cfg.listen_address;
    let tcp = cfg.memcache_port.map(|port| format!("tcp:{addr}:{port}"));
    let unix = cfg
        .memcache_socket
        .as_ref()
        .map(|(path, _)| format!("unix:{}", path.display()));
    let listeners = std::iter::repeat_n(tcp, cfg.cores).flatten().chain(unix);
    let idle = clock::uptime();
    let mut text = String::new();
    for (id, at) in listeners.enumerate() {
        let _ = write!(
            text,
            "STAT {id}:addr {at}\r\nSTAT {id}:state conn_listening\r\nSTAT {id}:secs_since_last_cmd {idle}\r\n"
        );
    }
    text.push_str("END\r\n");
    text
}
