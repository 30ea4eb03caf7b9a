//! The general statistics of the store, as memcached's `stats` lists them: the memcache
//! front's `stats`, the HTTP front's `/goblin/stats` and the server's INFO section all show
//! this one list.

use super::{clock, Store};

/// Version reported by `version` and `stats`.
pub const VERSION: &str = concat!("1.6.18-goblin-", env!("CARGO_PKG_VERSION"));

/// The fields of `stats` (and of the INFO section), memcached names first.
pub fn general_stats(store: &Store) -> Vec<(String, String)> {
    let g = store.gauges();
    let cfg = store.config();
    let mut v: Vec<(String, String)> = Vec::with_capacity(64);
    let mut put = |k: &str, val: String| v.push((k.to_string(), val));
    put("pid", std::process::id().to_string());
    put("uptime", clock::uptime().to_string());
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
