//! The member arena of a large set: one contiguous byte buffer of entries
//! (see `entry`), each addressed by its `u32` byte offset, its *id*.
//!
//! Removing a member only counts its bytes as garbage; the owner rewrites the
//! arena (and every id it holds) once garbage exceeds half of it. Offsets are
//! `u32`, which caps one set's arena at 4 GiB.

use crate::entry::{self, Entry};

/// Arena ids are byte offsets, so the arena may not grow past this.
const MAX_BYTES: usize = u32::MAX as usize;

/// Arenas smaller than this are never compacted (not worth a rewrite).
const COMPACT_MIN_BYTES: usize = 4096;

/// Starts loading the cache line at `p` into all cache levels. A hint only: any address
/// is allowed, nothing is dereferenced.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of the x86-64 baseline, and a prefetch reads nothing: any
        // address, valid or not, is allowed.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Packed, length-prefixed `(member, score)` entries addressed by offset.
#[derive(Clone, Debug, Default)]
pub(crate) struct Arena {
    bytes: Vec<u8>,
    garbage: usize,
}

impl Arena {
    /// An empty arena with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Arena {
        Arena {
            bytes: Vec::with_capacity(capacity),
            garbage: 0,
        }
    }

    /// Appends an entry and returns its id.
    ///
    /// # Panics
    /// If the arena would pass 4 GiB.
    pub(crate) fn push(&mut self, member: &[u8], score: f64) -> u32 {
        let n = entry::encoded_len(member, score);
        let at = self.bytes.len();
        assert!(at + n <= MAX_BYTES, "sorted set arena exceeds 4 GiB");
        if self.bytes.capacity() - at < n {
            // Grow by a quarter, not double: the slack is memory the set
            // holds, and appending bytes is cheap to repeat.
            let extra = n.max(self.bytes.capacity() / 4).max(64);
            self.bytes.reserve_exact(extra.min(MAX_BYTES - at));
        }
        self.bytes.resize(at + n, 0);
        entry::encode(&mut self.bytes[at..], member, score);
        at as u32
    }

    /// Rewrites the score of entry `id` in place when the new encoding has
    /// the same length; returns false (and changes nothing) otherwise.
    pub(crate) fn overwrite_score(&mut self, id: u32, member: &[u8], score: f64) -> bool {
        let start = id as usize;
        let old = self.get(id);
        if entry::encoded_len(member, score) != old.end - start {
            return false;
        }
        let end = old.end;
        entry::encode(&mut self.bytes[start..end], member, score);
        true
    }

    /// Rewrites the score of entry `id` in place when the new score is stored in as many
    /// bytes as the old one; returns false (and changes nothing) otherwise.
    pub(crate) fn rewrite_score(&mut self, id: u32, score: f64) -> bool {
        entry::rewrite_score(&mut self.bytes, id as usize, score)
    }

    /// The entry with id `id`.
    #[inline]
    pub(crate) fn get(&self, id: u32) -> Entry<'_> {
        entry::decode(&self.bytes, id as usize)
    }

    /// Asks the CPU to start loading entry `id` (a hint: it never faults, and does
    /// nothing off x86-64), so a search can overlap the cache misses of its next probes.
    #[inline]
    pub(crate) fn prefetch(&self, id: u32) {
        prefetch(self.bytes.as_ptr().wrapping_add(id as usize));
    }

    /// The score of entry `id`.
    #[inline]
    pub(crate) fn score(&self, id: u32) -> f64 {
        entry::score_at(&self.bytes, id as usize)
    }

    /// The member bytes of entry `id`, found from the header alone (the score is skipped).
    #[inline]
    pub(crate) fn member(&self, id: u32) -> &[u8] {
        let (start, end) = entry::member_span(&self.bytes, id as usize);
        &self.bytes[start..end]
    }

    /// Marks entry `id` as dead; its bytes become garbage.
    pub(crate) fn free(&mut self, id: u32) {
        self.garbage += self.get(id).end - id as usize;
    }

    /// Copies entry `id` of `other` to the end of this arena, returning the new id.
    pub(crate) fn copy_from(&mut self, other: &Arena, id: u32) -> u32 {
        let e = other.get(id);
        let at = self.bytes.len();
        assert!(
            at + (e.end - id as usize) <= MAX_BYTES,
            "sorted set arena exceeds 4 GiB"
        );
        self.bytes
            .extend_from_slice(&other.bytes[id as usize..e.end]);
        at as u32
    }

    /// Bytes written so far: the offset the next entry gets.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Bytes of live entries.
    pub(crate) fn live_bytes(&self) -> usize {
        self.bytes.len() - self.garbage
    }

    /// Whether dead entries make up more than half of a non-trivial arena.
    pub(crate) fn wants_compaction(&self) -> bool {
        self.bytes.len() >= COMPACT_MIN_BYTES && self.garbage * 2 > self.bytes.len()
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.bytes.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_get_free_copy() {
        let mut a = Arena::with_capacity(0);
        let x = a.push(b"alpha", 1.5);
        let y = a.push(b"b", -0.0);
        assert_eq!(a.member(x), b"alpha");
        assert_eq!(a.score(x), 1.5);
        assert!(a.score(y).is_sign_negative());
        a.free(x);
        assert_eq!(a.garbage, 5 + 1 + 8);
        assert_eq!(a.live_bytes(), a.get(y).end - y as usize);
        let mut b = Arena::with_capacity(a.live_bytes());
        let y2 = b.copy_from(&a, y);
        assert_eq!(b.member(y2), b"b");
        assert_eq!(b.memory_bytes(), b.live_bytes());
    }

    #[test]
    fn overwrite_only_when_same_length() {
        let mut a = Arena::with_capacity(0);
        let x = a.push(b"m", 3.0);
        assert!(a.overwrite_score(x, b"m", 7.0));
        assert_eq!(a.score(x), 7.0);
        assert!(!a.overwrite_score(x, b"m", 0.25));
        assert_eq!(a.score(x), 7.0);
    }

    #[test]
    fn rewrite_score_only_when_same_width() {
        let mut a = Arena::with_capacity(0);
        let x = a.push(b"member", 300.0);
        let y = a.push(b"next", 1.0);
        assert!(a.rewrite_score(x, -200.0), "i16 to i16");
        assert_eq!(a.score(x), -200.0);
        assert!(a.rewrite_score(x, 1000.0), "back to i16");
        assert!(
            !a.rewrite_score(x, 70_000.0),
            "i16 to i24 changes the width"
        );
        assert_eq!(a.score(x), 1000.0);
        assert!(!a.rewrite_score(y, 0.0), "i8 to zero changes the width");
        assert_eq!(a.score(y), 1.0);
        let z = a.push(b"z", 0.5);
        assert!(a.rewrite_score(z, -0.0), "f64 to f64 (-0 stays a f64)");
        assert!(a.score(z).is_sign_negative() && a.score(z) == 0.0);
        assert!(a.rewrite_score(z, 2.5e300));
        assert_eq!(a.score(z), 2.5e300);
        assert_eq!(a.member(x), b"member");
        assert_eq!(a.member(z), b"z");
        assert_eq!(a.get(x).end, y as usize);
    }

    #[test]
    fn compaction_threshold() {
        let mut a = Arena::with_capacity(0);
        let ids: Vec<u32> = (0..1000).map(|i| a.push(b"member", f64::from(i))).collect();
        assert!(!a.wants_compaction());
        for &id in &ids[..600] {
            a.free(id);
        }
        assert!(a.wants_compaction());
    }
}
