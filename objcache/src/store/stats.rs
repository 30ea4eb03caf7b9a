//! Store-wide counters, named as memcached names them in `stats` where it has a name.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Relaxed atomic counters shared by every event loop.
        #[derive(Default)]
        pub struct Stats {
            $($(#[$doc])* pub $name: AtomicU64,)*
        }

        impl Stats {
            /// Every counter as `(memcached field name, value)`, in declaration order.
            pub fn counters(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name.load(Ordering::Relaxed)),)*]
            }
        }
    };
}

counters! {
    /// Connections open now.
    curr_connections,
    /// Connections accepted since start.
    total_connections,
    /// Connections refused because --memcache-max-connections were open.
    rejected_connections,
    /// Most connections open at once since start (memcached counts the connection
    /// structures it allocated, which it keeps for reuse: the same peak).
    peak_connections,
    /// Keys looked up by get, gets, gat, gats and mg.
    cmd_get,
    /// Storage commands whose data arrived.
    cmd_set,
    /// flush_all commands.
    cmd_flush,
    /// Touch commands (touch, gat, gats, mg T).
    cmd_touch,
    /// Meta commands.
    cmd_meta,
    /// Lookups that found a live item.
    get_hits,
    /// Lookups that found nothing.
    get_misses,
    /// Reads that found the item expired (counted in get_misses too).
    get_expired,
    /// Deletes that found nothing.
    delete_misses,
    /// Deletes that removed an item.
    delete_hits,
    /// incr on a present item.
    incr_hits,
    /// incr on a missing item.
    incr_misses,
    /// decr on a present item.
    decr_hits,
    /// decr on a missing item.
    decr_misses,
    /// cas that stored.
    cas_hits,
    /// cas on a missing item.
    cas_misses,
    /// cas with a stale CAS value.
    cas_badval,
    /// Touches of a present item.
    touch_hits,
    /// Touches of a missing item.
    touch_misses,
    /// Storage commands refused because the item was over --max-item-size.
    store_too_large,
    /// Storage commands that failed for lack of memory.
    store_no_memory,
    /// Bytes received from clients.
    bytes_read,
    /// Bytes sent to clients.
    bytes_written,
    /// Items stored since start.
    total_items,
    /// Live items removed to make room.
    evictions,
    /// Of the evictions, items never read since they were stored.
    evicted_unfetched,
    /// Expired items removed to make room or on access.
    reclaimed,
    /// Of the reclaimed items, those never read since they were stored.
    expired_unfetched,
    /// Arena blocks compacted.
    arena_compactions,
    /// Bytes of tails written to the pool files.
    ssd_bytes_written,
    /// Bytes read from the pool files.
    ssd_bytes_read,
    /// Tail reads that returned data of another object or a short extent (dropped).
    ssd_check_failures,
    /// Tail reads or writes that failed with an I/O error (object dropped).
    ssd_io_errors,
}

/// Adds `n` to a counter.
pub fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// Adds one to a counter.
pub fn incr(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values() {
        let s = Stats::default();
        incr(&s.get_hits);
        add(&s.bytes_read, 10);
        let c = s.counters();
        assert!(c.contains(&("get_hits", 1)));
        assert!(c.contains(&("bytes_read", 10)));
        assert_eq!(c[0].0, "curr_connections");
    }
}
