//! The general statistics of the store, as memcached's `stats` lists them: the memcache
//! front's `stats`, the HTTP front's `/goblin/stats` and the server's INFO section all show
//! this one list.
//!
//! Every field memcached 1.6.18 prints comes in its order (but `libevent`, the version of a
//! library Goblin does not use), each from one of three sources ([`Source`]): a counter of
//! [`super::stats::Stats`] of the same name, a value Goblin computes (sizes, settings,
//! rusage), or 0 for the counters of memcached mechanisms Goblin does not have (its slab
//! rebalancer, segmented LRU and crawler, its log watchers, its own hash table, per
//! connection buffer pools, SASL): nothing of theirs ever happens here. Goblin's own fields
//! follow.

use std::collections::HashMap;

use super::{clock, Store};

/// Version reported by `version` and `stats`.
pub const VERSION: &str = concat!("1.6.18-goblin-", env!("CARGO_PKG_VERSION"));

/// Where a field's value comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Source {
    /// The store counter of that name.
    Counter,
    /// Computed in [`own_value`].
    Own,
    /// A memcached mechanism Goblin does not have: always 0.
    Absent,
}

use Source::{Absent, Counter, Own};

/// memcached 1.6.18's `stats` fields in its order.
const MEMCACHED_FIELDS: &[(&str, Source)] = &[
    ("pid", Own),
    ("uptime", Own),
    ("time", Own),
    ("version", Own),
    ("pointer_size", Own),
    ("rusage_user", Own),
    ("rusage_system", Own),
    ("max_connections", Own),
    ("curr_connections", Counter),
    ("total_connections", Counter),
    ("rejected_connections", Counter),
    ("connection_structures", Own),
    ("response_obj_oom", Absent),
    ("response_obj_count", Absent),
    ("response_obj_bytes", Absent),
    ("read_buf_count", Absent),
    ("read_buf_bytes", Absent),
    ("read_buf_bytes_free", Absent),
    ("read_buf_oom", Absent),
    ("reserved_fds", Absent),
    ("cmd_get", Counter),
    ("cmd_set", Counter),
    ("cmd_flush", Counter),
    ("cmd_touch", Counter),
    ("cmd_meta", Counter),
    ("get_hits", Counter),
    ("get_misses", Counter),
    ("get_expired", Counter),
    // flush_all drops every item at once (or at its time), so no read finds a flushed one.
    ("get_flushed", Absent),
    ("delete_misses", Counter),
    ("delete_hits", Counter),
    ("incr_misses", Counter),
    ("incr_hits", Counter),
    ("decr_misses", Counter),
    ("decr_hits", Counter),
    ("cas_misses", Counter),
    ("cas_hits", Counter),
    ("cas_badval", Counter),
    ("touch_hits", Counter),
    ("touch_misses", Counter),
    ("store_too_large", Counter),
    ("store_no_memory", Counter),
    ("auth_cmds", Absent),
    ("auth_errors", Absent),
    ("bytes_read", Counter),
    ("bytes_written", Counter),
    ("limit_maxbytes", Own),
    ("accepting_conns", Own),
    ("listen_disabled_num", Absent),
    ("time_in_listen_disabled_us", Absent),
    ("threads", Own),
    ("conn_yields", Absent),
    ("hash_power_level", Absent),
    ("hash_bytes", Absent),
    ("hash_is_expanding", Absent),
    ("slab_reassign_rescues", Absent),
    ("slab_reassign_chunk_rescues", Absent),
    ("slab_reassign_evictions_nomem", Absent),
    ("slab_reassign_inline_reclaim", Absent),
    ("slab_reassign_busy_items", Absent),
    ("slab_reassign_busy_deletes", Absent),
    ("slab_reassign_running", Absent),
    ("slabs_moved", Absent),
    ("lru_crawler_running", Absent),
    ("lru_crawler_starts", Absent),
    ("lru_maintainer_juggles", Absent),
    ("malloc_fails", Absent),
    ("log_worker_dropped", Absent),
    ("log_worker_written", Absent),
    ("log_watcher_skipped", Absent),
    ("log_watcher_sent", Absent),
    ("log_watchers", Absent),
    ("unexpected_napi_ids", Absent),
    ("round_robin_fallback", Absent),
    ("bytes", Own),
    ("curr_items", Own),
    ("total_items", Counter),
    ("slab_global_page_pool", Absent),
    ("expired_unfetched", Counter),
    ("evicted_unfetched", Counter),
    // SIEVE evicts only items not read since its hand last passed them.
    ("evicted_active", Absent),
    ("evictions", Counter),
    ("reclaimed", Counter),
    ("crawler_reclaimed", Absent),
    ("crawler_items_checked", Absent),
    ("lrutail_reflocked", Absent),
    ("moves_to_cold", Absent),
    ("moves_to_warm", Absent),
    ("moves_within_lru", Absent),
    ("direct_reclaims", Absent),
    ("lru_bumps_dropped", Absent),
];

/// CPU time of the process (user, system) as memcached prints it: seconds.microseconds.
fn rusage() -> (String, String) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
    let fmt = |t: libc::timeval| format!("{}.{:06}", t.tv_sec, t.tv_usec);
    (fmt(r.ru_utime), fmt(r.ru_stime))
}

/// What the computed fields are made of, gathered once per `stats`.
struct Snapshot {
    bytes: u64,
    items: u64,
    rusage: (String, String),
}

/// The value of a field Goblin computes.
fn own_value(store: &Store, name: &str, snap: &Snapshot) -> String {
    let cfg = store.config();
    match name {
        "pid" => std::process::id().to_string(),
        "uptime" => clock::uptime().to_string(),
        "time" => clock::unix_now().to_string(),
        "version" => VERSION.to_string(),
        "pointer_size" => (8 * std::mem::size_of::<usize>()).to_string(),
        "rusage_user" => snap.rusage.0.clone(),
        "rusage_system" => snap.rusage.1.clone(),
        "max_connections" => cfg.max_connections.to_string(),
        // The peak of open connections, and one listener per event loop.
        "connection_structures" => {
            let peak = store
                .stats
                .peak_connections
                .load(std::sync::atomic::Ordering::Relaxed);
            (peak + cfg.cores as u64).to_string()
        }
        "limit_maxbytes" => store.memory_limit().to_string(),
        // Goblin never stops accepting (one over the limit is answered and closed).
        "accepting_conns" => "1".to_string(),
        "threads" => cfg.cores.to_string(),
        "bytes" => snap.bytes.to_string(),
        "curr_items" => snap.items.to_string(),
        other => unreachable!("{other} is not computed"),
    }
}

/// The fields of `stats` (and of the INFO section): memcached's, then Goblin's own.
pub fn general_stats(store: &Store) -> Vec<(String, String)> {
    let g = store.gauges();
    let listed = store.stats.counters();
    let counters: HashMap<&str, u64> = listed.iter().copied().collect();
    let snap = Snapshot {
        bytes: g.arena_bytes + g.head_bytes,
        items: g.items,
        rusage: rusage(),
    };
    let mut v: Vec<(String, String)> = Vec::with_capacity(MEMCACHED_FIELDS.len() + 16);
    for &(name, from) in MEMCACHED_FIELDS {
        let value = match from {
            Counter => counters[name].to_string(),
            Own => own_value(store, name, &snap),
            Absent => "0".to_string(),
        };
        v.push((name.to_string(), value));
    }
    // Goblin's own counters, in declaration order (the peak is shown as
    // connection_structures).
    for (name, n) in listed {
        if name != "peak_connections" && !MEMCACHED_FIELDS.iter().any(|(f, _)| *f == name) {
            v.push((name.to_string(), n.to_string()));
        }
    }
    for (k, n) in [
        ("arena_bytes", g.arena_bytes),
        ("arena_mapped_bytes", g.arena_mapped),
        ("head_bytes", g.head_bytes),
        ("tail_bytes", g.tail_bytes),
    ] {
        v.push((k.to_string(), n.to_string()));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StoreArgs;

    #[test]
    fn every_counter_field_is_a_counter_and_fields_are_unique() {
        let args = StoreArgs {
            small_memory: Some(8 << 20),
            cores: Some(1),
            ..StoreArgs::default()
        };
        let store = Store::new(args.resolve().unwrap()).unwrap();
        let names: Vec<&str> = store.stats.counters().iter().map(|(k, _)| *k).collect();
        for (f, from) in MEMCACHED_FIELDS {
            assert_eq!(names.contains(f), *from == Counter, "{f}");
        }
        let stats = general_stats(&store);
        let mut seen: Vec<&str> = stats.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(&seen[..3], ["pid", "uptime", "time"]);
        let shared = MEMCACHED_FIELDS
            .iter()
            .filter(|(_, from)| *from == Counter)
            .count();
        let own = names.len() - shared - 1;
        assert_eq!(seen.len(), MEMCACHED_FIELDS.len() + own + 4);
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), stats.len(), "a field is listed twice");
    }
}
