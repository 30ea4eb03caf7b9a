//! Hot tails in RAM, in the RAM of --memory that the head slots do not use. While there is
//! room, every tail written or read goes in; once full, only a tail read again (the index's
//! fetched bit says so: admission by frequency) takes the place of another, chosen by CLOCK
//! (a second chance for tails read since the hand last passed). A kept tail is the verified read
//! buffer itself, found by digest and CAS value, so a replaced object's old tail is never
//! served: it only waits for the hand.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::AlignedBuf;
use crate::store::digest::Digest;

struct Slot {
    cas: u64,
    buf: Arc<AlignedBuf>,
    visited: bool,
}

#[derive(Default)]
struct Inner {
    map: HashMap<[u8; 32], Slot>,
    clock: VecDeque<[u8; 32]>,
    bytes: u64,
}

/// The hot-tail cache of a store.
pub struct TailCache {
    inner: Mutex<Inner>,
    memory: AtomicU64,
    heads: Arc<AtomicU64>,
    bytes: AtomicU64,
}

impl TailCache {
    /// A cache sharing `memory` bytes with the head slots, whose bytes in use `heads` counts.
    pub fn new(memory: u64, heads: Arc<AtomicU64>) -> TailCache {
        TailCache {
            inner: Mutex::new(Inner::default()),
            memory: AtomicU64::new(memory),
            heads,
            bytes: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the RAM shared with the head slots (memcached's `cache_memlimit`); call
    /// [`TailCache::trim`] after the heads have shrunk.
    pub fn set_memory(&self, memory: u64) {
        self.memory.store(memory, Ordering::Relaxed);
    }

    fn budget(&self) -> u64 {
        self.memory
            .load(Ordering::Relaxed)
            .saturating_sub(self.heads.load(Ordering::Relaxed))
    }

    /// Bytes of tails kept.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The kept tail of the object `digest` with CAS value `cas`.
    pub fn get(&self, digest: &Digest, cas: u64) -> Option<Arc<AlignedBuf>> {
        let mut inner = self.lock();
        let slot = inner.map.get_mut(&digest.0).filter(|s| s.cas == cas)?;
        slot.visited = true;
        Some(Arc::clone(&slot.buf))
    }

    /// True when [`TailCache::offer`] would now keep an extent of `len` bytes (read before
    /// when `hot`): a stream collects the chunks of such a tail for it.
    pub fn wants(&self, len: usize, hot: bool) -> bool {
        let (len, budget) = (len as u64, self.budget());
        len <= budget / 4 && (hot || self.bytes() + len <= budget)
    }

    /// True while the cache is filling: a tail of the largest carved size
    /// (`tail::carve::MAX_CARVED`) would be kept without evicting another.
    pub fn has_room(&self) -> bool {
        self.wants(super::carve::MAX_CARVED, false)
    }

    /// Keeps a verified tail extent: always when it fits in the free room, and when `hot`
    /// also if room can be made by evicting others.
    pub fn offer(&self, digest: &Digest, cas: u64, buf: Arc<AlignedBuf>, hot: bool) {
        let len = buf.len() as u64;
        let budget = self.budget();
        if len > budget / 4 {
            return;
        }
        let mut inner = self.lock();
        if !hot && inner.bytes + len > budget {
            return;
        }
        while inner.bytes + len > budget {
            if !Self::evict_one(&mut inner) {
                return;
            }
        }
        inner.bytes += len;
        let fresh = Slot {
            cas,
            buf,
            visited: false,
        };
        match inner.map.insert(digest.0, fresh) {
            Some(old) => inner.bytes -= old.buf.len() as u64,
            None => inner.clock.push_back(digest.0),
        }
        self.bytes.store(inner.bytes, Ordering::Relaxed);
    }

    /// Evicts until the kept tails fit beside the heads again (after heads grew).
    pub fn trim(&self) {
        if self.bytes() <= self.budget() {
            return;
        }
        let budget = self.budget();
        let mut inner = self.lock();
        while inner.bytes > budget && Self::evict_one(&mut inner) {}
        self.bytes.store(inner.bytes, Ordering::Relaxed);
    }

    /// Drops every kept tail.
    pub fn clear(&self) {
        let mut inner = self.lock();
        *inner = Inner::default();
        self.bytes.store(0, Ordering::Relaxed);
    }

    fn evict_one(inner: &mut Inner) -> bool {
        while let Some(key) = inner.clock.pop_front() {
            let Some(slot) = inner.map.get_mut(&key) else {
                continue;
            };
            if slot.visited {
                slot.visited = false;
                inner.clock.push_back(key);
                continue;
            }
            let gone = inner.map.remove(&key).expect("present");
            inner.bytes -= gone.buf.len() as u64;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(pages: usize) -> Arc<AlignedBuf> {
        Arc::new(AlignedBuf::new(pages * 4096))
    }

    #[test]
    fn keeps_within_the_memory_heads_leave() {
        let heads = Arc::new(AtomicU64::new(0));
        let c = TailCache::new(64 * 4096, Arc::clone(&heads));
        let d: Vec<Digest> = (0..20u8).map(|i| Digest::of(&[i])).collect();
        for (i, k) in d.iter().enumerate() {
            c.offer(k, i as u64, buf(8), true);
        }
        assert_eq!(c.bytes(), 64 * 4096);
        assert!(c.get(&d[0], 0).is_none(), "the oldest were evicted");
        assert!(c.get(&d[19], 19).is_some());
        assert!(
            c.get(&d[19], 18).is_none(),
            "another version is never served"
        );
        heads.store(32 * 4096, Ordering::Relaxed);
        c.trim();
        assert!(c.bytes() <= 32 * 4096);
        c.offer(&d[0], 0, buf(64), true);
        assert!(c.get(&d[0], 0).is_none(), "too large for the budget");
    }

    #[test]
    fn visited_tails_get_a_second_chance() {
        let heads = Arc::new(AtomicU64::new(0));
        let c = TailCache::new(16 * 4096, heads);
        let (a, b, x) = (Digest::of(b"a"), Digest::of(b"b"), Digest::of(b"x"));
        c.offer(&a, 1, buf(4), false);
        c.offer(&b, 1, buf(4), false);
        c.offer(&Digest::of(b"c"), 1, buf(4), false);
        c.offer(&Digest::of(b"d"), 1, buf(4), false);
        assert!(c.get(&a, 1).is_some());
        c.offer(&x, 1, buf(4), false);
        assert!(c.get(&x, 1).is_none(), "a cold tail does not evict");
        c.offer(&x, 1, buf(4), true);
        assert!(c.get(&a, 1).is_some(), "a was visited");
        assert!(c.get(&b, 1).is_none(), "b was not");
        assert!(c.get(&x, 1).is_some());
        c.clear();
        assert_eq!(c.bytes(), 0);
    }

    #[test]
    fn has_room_while_a_largest_carved_tail_fits_without_evicting() {
        let c = TailCache::new(16 << 20, Arc::new(AtomicU64::new(0)));
        assert!(c.has_room());
        for i in 0..7u8 {
            c.offer(&Digest::of(&[i]), 1, buf(512), false);
        }
        assert_eq!(c.bytes(), 14 << 20);
        assert!(c.has_room(), "2 MiB of 16 are left");
        c.offer(&Digest::of(b"b"), 1, buf(1), false);
        assert!(!c.has_room(), "under 2 MiB are left");
    }
}
