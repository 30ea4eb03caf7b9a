//! memcached's slab classes, for the replies that show them: `me` (`cls=`, `size=`),
//! `stats items`, `stats slabs` and `stats sizes`. Goblin has no slabs; these replies say
//! where memcached 1.6.18 with its defaults (`-n 48`, `-f 1.25`, 1 MiB pages, 512 KiB
//! largest chunk) would put each object, so tools that parse them see the same numbers for
//! the same keys and values.
//!
//! What depends on memcached's history rather than on the objects present (pages kept after
//! deletes, per-class hit counters, LRU segment moves) is reported as on a server where
//! nothing else happened: pages are those the present objects need, counters are 0, and every
//! object sits in the COLD segment, where memcached's maintainer moves idle items within
//! seconds.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use super::parse::item_total;
use crate::store::clock;
use crate::store::Entry;
use crate::store::Store;

/// memcached's `sizeof(item)` on 64-bit builds.
const ITEM_HEADER: u64 = 48;
/// `sizeof(item_chunk)`: the header of each chunk of a large item.
const CHUNK_HEADER: u64 = 48;
/// `settings.slab_page_size`.
const PAGE_SIZE: u64 = 1 << 20;
/// `settings.slab_chunk_size_max`: the largest class; bigger items are chained chunks.
const CHUNK_MAX: u32 = 512 << 10;
/// Number of slab classes memcached makes with its defaults.
pub const CLASSES: usize = 39;

/// Chunk size of each class (class `i` is `CHUNK_SIZES[i - 1]`), as `slabs_init` computes
/// them: from `sizeof(item) + 48`, times 1.25 (truncated, as on memcached's unsigned int,
/// which `* 5 / 4` reproduces exactly), aligned to 8, until the next size reaches
/// `CHUNK_MAX / 1.25`; the last class is `CHUNK_MAX`.
pub const CHUNK_SIZES: [u32; CLASSES] = chunk_sizes();

const fn chunk_sizes() -> [u32; CLASSES] {
    let mut sizes = [0u32; CLASSES];
    let mut size = ITEM_HEADER as u32 + 48;
    let mut i = 0;
    while (size as u64) * 5 < (CHUNK_MAX as u64) * 4 {
        if !size.is_multiple_of(8) {
            size += 8 - size % 8;
        }
        sizes[i] = size;
        i += 1;
        size = size * 5 / 4;
    }
    sizes[i] = CHUNK_MAX;
    assert!(i + 1 == CLASSES, "memcached's defaults make 39 classes");
    sizes
}

/// memcached's `slabs_clsid`: the smallest class whose chunks hold `ntotal` bytes (the
/// largest class for anything bigger, as for chunked items).
pub fn class_of(ntotal: u64) -> usize {
    CHUNK_SIZES
        .iter()
        .position(|&c| ntotal <= u64::from(c))
        .map_or(CLASSES, |i| i + 1)
}

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

/// Every live object of the store, classed as memcached would class it.
pub struct Census {
    classes: [ClassUse; CLASSES + 1],
    /// Items by `ITEM_ntotal` rounded up to 32 bytes (memcached's `stats sizes` buckets).
    sizes: std::collections::BTreeMap<u64, u64>,
}

impl Census {
    /// Walks the store.
    pub fn of(store: &Store) -> Census {
        let mut c = Census {
            classes: [ClassUse::default(); CLASSES + 1],
            sizes: Default::default(),
        };
        store.for_each_item(|e| c.add(e));
        c
    }

    fn add(&mut self, e: &Entry) {
        let key_len = usize::from(e.key_len);
        let size = e.size as usize;
        let total = item_total(key_len, e.flags, size);
        let u = &mut self.classes[class_of(total)];
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
            for name in ITEMS_ZERO {
                let _ = write!(s, "STAT items:{class}:{name} 0\r\n");
            }
        }
        s.push_str("END\r\n");
        s
    }

    /// The `stats slabs` reply, END included: pages are those the present objects need.
    pub fn slabs(&self) -> String {
        let mut s = String::new();
        let (mut active, mut malloced) = (0u64, 0u64);
        for (class, u) in self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, u)| u.chunks > 0)
        {
            let size = u64::from(CHUNK_SIZES[class - 1]);
            let per_page = PAGE_SIZE / size;
            let pages = u.chunks.div_ceil(per_page);
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
            for name in SLABS_ZERO {
                let _ = write!(s, "STAT {class}:{name} 0\r\n");
            }
        }
        let _ = write!(
            s,
            "STAT active_slabs {active}\r\nSTAT total_malloced {malloced}\r\nEND\r\n"
        );
        s
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

/// `stats items` fields after `mem_requested`: event counters Goblin keeps store-wide or
/// not at all, 0 as on a server where none of them happened.
const ITEMS_ZERO: [&str; 20] = [
    "evicted",
    "evicted_nonzero",
    "evicted_time",
    "outofmemory",
    "tailrepairs",
    "reclaimed",
    "expired_unfetched",
    "evicted_unfetched",
    "evicted_active",
    "crawler_reclaimed",
    "crawler_items_checked",
    "lrutail_reflocked",
    "moves_to_cold",
    "moves_to_warm",
    "moves_within_lru",
    "direct_reclaims",
    "hits_to_hot",
    "hits_to_warm",
    "hits_to_cold",
    "hits_to_temp",
];

/// `stats slabs` per-class command counters (Goblin counts them store-wide only).
const SLABS_ZERO: [&str; 8] = [
    "get_hits",
    "cmd_set",
    "delete_hits",
    "incr_hits",
    "decr_hits",
    "cas_hits",
    "cas_badval",
    "touch_hits",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_match_memcached_vv() {
        // `memcached -vv` with the defaults prints these chunk sizes.
        assert_eq!(&CHUNK_SIZES[..6], &[96, 120, 152, 192, 240, 304]);
        assert_eq!(CHUNK_SIZES[17], 4544);
        assert_eq!(CHUNK_SIZES[36], 315_872);
        assert_eq!(CHUNK_SIZES[37], 394_840);
        assert_eq!(CHUNK_SIZES[38], 524_288);
    }

    #[test]
    fn class_and_chunks_of_items() {
        // `set foo 0 0 3`: memcached's `me` says cls=1 size=65.
        assert_eq!(item_total(3, 0, 3), 65);
        assert_eq!(class_of(65), 1);
        assert_eq!(class_of(96), 1);
        assert_eq!(class_of(97), 2);
        // 100000-byte value, 2-byte key: cls=32 size=100061.
        assert_eq!(class_of(item_total(2, 0, 100_000)), 32);
        assert_eq!(class_of(10 << 20), CLASSES);
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
