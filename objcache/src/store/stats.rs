//! Store-wide counters, named as memcached names them in `stats` where it has a name, and
//! memcached's per-slab-class counters ([`SlabStats`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::classes::CLASSES;

macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        /// Relaxed atomic counters shared by every event loop.
        #[derive(Default)]
        pub struct Stats {
            $($(#[$doc])* pub $name: AtomicU64,)*
            /// The same events by slab class, where memcached counts them so.
            pub classes: SlabStats,
        }

        impl Stats {
            /// Every counter as `(memcached field name, value)`, in declaration order.
            pub fn counters(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name.load(Ordering::Relaxed)),)*]
            }

            /// memcached's `stats reset`: zeroes every counter and every class's counters,
            /// but the gauges of the present state ([`KEPT_BY_RESET`]).
            pub fn reset(&self) {
                $(if !KEPT_BY_RESET.contains(&stringify!($name)) {
                    self.$name.store(0, Ordering::Relaxed);
                })*
                self.classes.reset();
            }
        }
    };
}

/// The counters `stats reset` leaves alone: memcached keeps these in its `stats_state`
/// (connections open now and the connection structures allocated), which it never wipes.
pub const KEPT_BY_RESET: [&str; 2] = ["curr_connections", "peak_connections"];

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
    /// `me` commands: memcached 1.6.18 counts its meta_cmds there alone, not for mg, ms,
    /// md, ma or mn.
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

/// memcached's counters of one slab class: the command counters of `stats slabs` and the
/// eviction counters of `stats items`.
#[derive(Default)]
pub struct ClassCounters {
    /// Reads that found an item of the class.
    pub get_hits: AtomicU64,
    /// Storage commands whose new item is of the class.
    pub cmd_set: AtomicU64,
    /// Deletes of an item of the class.
    pub delete_hits: AtomicU64,
    /// incr of an item of the class.
    pub incr_hits: AtomicU64,
    /// decr of an item of the class.
    pub decr_hits: AtomicU64,
    /// cas that matched an item of the class.
    pub cas_hits: AtomicU64,
    /// cas that found an item of the class with another CAS value.
    pub cas_badval: AtomicU64,
    /// Touches of an item of the class.
    pub touch_hits: AtomicU64,
    /// Live items evicted to make room.
    pub evicted: AtomicU64,
    /// Of those, items with an expiry.
    pub evicted_nonzero: AtomicU64,
    /// Seconds since the last access of the last item evicted.
    pub evicted_time: AtomicU32,
    /// Storage commands that found no room for an item of the class.
    pub outofmemory: AtomicU64,
    /// Expired items removed (on access or to make room).
    pub reclaimed: AtomicU64,
    /// Of those, items never read.
    pub expired_unfetched: AtomicU64,
    /// Evicted items never read.
    pub evicted_unfetched: AtomicU64,
}

impl ClassCounters {
    /// The per-class fields of memcached's `stats slabs`, in its order.
    pub fn slab_fields(&self) -> [(&'static str, u64); 8] {
        let v = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [
            ("get_hits", v(&self.get_hits)),
            ("cmd_set", v(&self.cmd_set)),
            ("delete_hits", v(&self.delete_hits)),
            ("incr_hits", v(&self.incr_hits)),
            ("decr_hits", v(&self.decr_hits)),
            ("cas_hits", v(&self.cas_hits)),
            ("cas_badval", v(&self.cas_badval)),
            ("touch_hits", v(&self.touch_hits)),
        ]
    }
}

/// [`ClassCounters`] for each slab class (index = class id; 0 is unused, as in memcached).
pub struct SlabStats {
    classes: [ClassCounters; CLASSES + 1],
}

impl Default for SlabStats {
    fn default() -> Self {
        SlabStats {
            classes: std::array::from_fn(|_| ClassCounters::default()),
        }
    }
}

impl SlabStats {
    /// Zeroes the counters of every class.
    fn reset(&self) {
        for c in &self.classes {
            let zero = |a: &AtomicU64| a.store(0, Ordering::Relaxed);
            for a in [
                &c.get_hits,
                &c.cmd_set,
                &c.delete_hits,
                &c.incr_hits,
                &c.decr_hits,
                &c.cas_hits,
                &c.cas_badval,
                &c.touch_hits,
                &c.evicted,
                &c.evicted_nonzero,
                &c.outofmemory,
                &c.reclaimed,
                &c.expired_unfetched,
                &c.evicted_unfetched,
            ] {
                zero(a);
            }
            c.evicted_time.store(0, Ordering::Relaxed);
        }
    }

    /// The counters of class `class` (1..=[`CLASSES`]).
    pub fn of(&self, class: usize) -> &ClassCounters {
        &self.classes[class.min(CLASSES)]
    }
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
        incr(&s.classes.of(3).cas_badval);
        assert_eq!(s.classes.of(3).slab_fields()[6], ("cas_badval", 1));
        assert_eq!(s.classes.of(2).slab_fields()[6], ("cas_badval", 0));
        incr(&s.curr_connections);
        s.reset();
        let c = s.counters();
        assert!(c.contains(&("get_hits", 0)) && c.contains(&("bytes_read", 0)));
        assert!(
            c.contains(&("curr_connections", 1)),
            "a gauge survives the reset"
        );
        assert_eq!(s.classes.of(3).slab_fields()[6], ("cas_badval", 0));
    }
}
