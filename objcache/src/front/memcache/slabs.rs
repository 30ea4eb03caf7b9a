//! memcached's slab classes, for the replies that show them: `me` (`cls=`, `size=`),
//! `stats items`, `stats slabs` and `stats sizes`. Goblin has no slabs; these replies say
//! where memcached 1.6.18 with its defaults (`-n 48`, `-f 1.25`, 1 MiB pages, 512 KiB
//! largest chunk) would put each object, so tools that parse them see the same numbers for
//! the same keys and values.
//!
//! The per-class counters (`get_hits`, `cmd_set`, ... in `stats slabs`; `evicted`,
//! `reclaimed`, ... in `stats items`) are kept by class as memcached keeps them
//! ([`crate::store::stats::SlabStats`]). What depends on memcached's slab allocator and LRU
//! segments is modelled: a class's pages are those its present objects need, and at least
//! one once an item was stored in it (memcached keeps pages after deletes); every object
//! sits in the COLD segment, where memcached's maintainer moves idle items within seconds,
//! and the counters of segment moves, the LRU crawler and tail repairs stay 0.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::store::classes::{
    class_of, entry_class, item_total, CHUNK_HEADER, CHUNK_MAX, CHUNK_SIZES, CLASSES, ITEM_HEADER,
    PAGE_SIZE,
};
use crate::store::clock;
use crate::store::stats::SlabStats;
use crate::store::Entry;
use crate::store::Store;

/// Calls `f` with the class of every chunk memcached would allocate for the item: one, or
/// for items over `CHUNK_MAX` a header chunk and the data chunks (each as large as needed,
/// at most `CHUNK_MAX`, as `do_item_alloc_chunk` takes them).
fn chunks(key_len: usize, flags: u32, value_len: usize, mut f: impl FnMut(usize)) {
    let total = item_total(key_len, flags, value_len);
    if total <= u64::from(CHUNK_MAX) {
        return f(class_of(total));
    }
    let suffix = if flags == 0 { 0 } else { 4 };
    f(class_of(
        key_len as u64 + 1 + suffix + ITEM_HEADER + CHUNK_HEADER + 8,
    ));
    let mut remain = value_len as u64 + 2;
    while remain > 0 {
        let class = class_of((remain + CHUNK_HEADER).min(u64::from(CHUNK_MAX)));
        f(class);
        remain -= remain.min(u64::from(CHUNK_SIZES[class - 1]) - CHUNK_HEADER);
    }
}

/// `stats sizes_enable` was given (memcached's size histogram is off at start).
static SIZES_ENABLED: AtomicBool = AtomicBool::new(false);

/// What the present objects of one class add up to.
#[derive(Clone, Copy, Default)]
struct ClassUse {
    /// Items whose class this is.
    items: u64,
    /// Their `ITEM_ntotal` sum (memcached's `mem_requested`).
    requested: u64,
    /// Oldest last access among them.
    oldest: Option<u32>,
    /// Chunks of this class the objects would take (large items spread over classes).
    chunks: u64,
}

/// Every live object of the store, classed as memcached would class it, with the store's
/// per-class counters.
pub struct Census<'a> {
    classes: [ClassUse; CLASSES + 1],
    counters: &'a SlabStats,
    /// Items by `ITEM_ntotal` rounded up to 32 bytes (memcached's `stats sizes` buckets).
    sizes: std::collections::BTreeMap<u64, u64>,
}

impl<'a> Census<'a> {
    /// Walks the store.
    pub fn of(store: &'a Store) -> Census<'a> {
        let mut c = Census {
            classes: [ClassUse::default(); CLASSES + 1],
            counters: &store.stats.classes,
            sizes: Default::default(),
        };
        store.for_each_item(|e, _| c.add(e));
        c
    }

    fn add(&mut self, e: &Entry) {
        let key_len = usize::from(e.key_len);
        let size = e.size as usize;
        let total = item_total(key_len, e.flags, size);
        let u = &mut self.classes[entry_class(e)];
        u.items += 1;
        u.requested += total;
        u.oldest = Some(u.oldest.map_or(e.atime, |t| t.min(e.atime)));
        *self.sizes.entry(total.div_ceil(32) * 32).or_default() += 1;
        chunks(key_len, e.flags, size, |class| {
            self.classes[class].chunks += 1
        });
    }

    /// The `stats items` reply, END included.
    pub fn items(&self) -> String {
        let now = clock::now();
        let mut s = String::new();
        for (class, u) in self.classes.iter().enumerate().filter(|(_, u)| u.items > 0) {
            let age = u.oldest.map_or(0, |t| now.saturating_sub(t));
            let fields: [(&str, u64); 7] = [
                ("number", u.items),
                ("number_hot", 0),
                ("number_warm", 0),
                ("number_cold", u.items),
                ("age_hot", 0),
                ("age_warm", 0),
                ("age", u64::from(age)),
            ];
            for (name, v) in fields {
                let _ = write!(s, "STAT items:{class}:{name} {v}\r\n");
            }
            let _ = write!(s, "STAT items:{class}:mem_requested {}\r\n", u.requested);
            for (name, v) in self.item_events(class) {
                let _ = write!(s, "STAT items:{class}:{name} {v}\r\n");
            }
        }
        s.push_str("END\r\n");
        s
    }

    /// The `stats slabs` reply, END included: pages are those the present objects need.
    pub fn slabs(&self) -> String {
        let mut s = String::new();
        let (mut active, mut malloced) = (0u64, 0u64);
        for (class, u) in self.classes.iter().enumerate().skip(1) {
            let counters = self.counters.of(class);
            let stored = counters.cmd_set.load(Ordering::Relaxed) > 0;
            if u.chunks == 0 && !stored {
                continue;
            }
            let size = u64::from(CHUNK_SIZES[class - 1]);
            let per_page = PAGE_SIZE / size;
            let pages = u.chunks.div_ceil(per_page).max(u64::from(stored));
            active += 1;
            malloced += pages * PAGE_SIZE;
            let fields: [(&str, u64); 7] = [
                ("chunk_size", size),
                ("chunks_per_page", per_page),
                ("total_pages", pages),
                ("total_chunks", pages * per_page),
                ("used_chunks", u.chunks),
                ("free_chunks", pages * per_page - u.chunks),
                ("free_chunks_end", 0),
            ];
            for (name, v) in fields {
                let _ = write!(s, "STAT {class}:{name} {v}\r\n");
            }
            for (name, v) in counters.slab_fields() {
                let _ = write!(s, "STAT {class}:{name} {v}\r\n");
            }
        }
        let _ = write!(
            s,
            "STAT active_slabs {active}\r\nSTAT total_malloced {malloced}\r\nEND\r\n"
        );
        s
    }

    /// The `stats items` fields after `mem_requested` of `class`, in memcached's order.
    fn item_events(&self, class: usize) -> [(&'static str, u64); 20] {
        let c = self.counters.of(class);
        let v = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        [
            ("evicted", v(&c.evicted)),
            ("evicted_nonzero", v(&c.evicted_nonzero)),
            (
                "evicted_time",
                u64::from(c.evicted_time.load(Ordering::Relaxed)),
            ),
            ("outofmemory", v(&c.outofmemory)),
            ("tailrepairs", 0),
            ("reclaimed", v(&c.reclaimed)),
            ("expired_unfetched", v(&c.expired_unfetched)),
            ("evicted_unfetched", v(&c.evicted_unfetched)),
            ("evicted_active", 0),
            ("crawler_reclaimed", 0),
            ("crawler_items_checked", 0),
            ("lrutail_reflocked", 0),
            ("moves_to_cold", 0),
            ("moves_to_warm", 0),
            ("moves_within_lru", 0),
            ("direct_reclaims", 0),
            ("hits_to_hot", 0),
            ("hits_to_warm", 0),
            ("hits_to_cold", 0),
            ("hits_to_temp", 0),
        ]
    }

    /// The `stats sizes` reply: the histogram while enabled, END included.
    pub fn sizes(&self) -> String {
        if !SIZES_ENABLED.load(Ordering::Relaxed) {
            return "STAT sizes_status disabled\r\nEND\r\n".to_string();
        }
        let mut s = String::new();
        for (bucket, n) in &self.sizes {
            let _ = write!(s, "STAT {bucket} {n}\r\n");
        }
        s.push_str("END\r\n");
        s
    }
}

/// `stats sizes_enable` / `stats sizes_disable`: memcached replies with the status line
/// only (no END).
pub fn set_sizes_enabled(on: bool) -> &'static str {
    SIZES_ENABLED.store(on, Ordering::Relaxed);
    if on {
        "STAT sizes_status enabled"
    } else {
        "STAT sizes_status disabled"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_items() {
        // A 600000-byte value under a 20-byte key: header chunk in class 3, then a
        // 512 KiB chunk and the rest in class 31 (as memcached's `stats slabs` shows).
        let mut got = Vec::new();
        chunks(20, 0, 600_000, |c| got.push(c));
        assert_eq!(got, vec![3, 39, 31]);
        got.clear();
        chunks(3, 7, 524_200, |c| got.push(c));
        assert_eq!(got, vec![39]);
    }
}
