//! The hashtable form: each pair packed in the sorted-set engine's arena as two adjacent
//! entries (the field's, then the value's, each a varint header and the bytes) and
//! indexed by its Swiss table of `u32` arena offsets of the field entries. No allocation
//! per pair.
//!
//! A value rewritten at the same encoded length is overwritten in place; otherwise the
//! pair is appended anew and its slot takes the new offset. Random fields come from
//! random slots (`SwissIndex::random_slot`); HSCAN cursors are field-hash thresholds
//! (see `SwissIndex::scan`), stable across growth, shrinking and compaction.
//!
//! Field expiry: a field's expiry time (Unix ms) is the score of its field entry (0, no
//! byte, without one), and `ttls` orders the timed fields as `(time, field hash)` pairs
//! (16 bytes each in a B-tree) for active expiry; empty, it holds no allocation (24 bytes
//! of header).

use super::hash;
use super::listpack::{score_ttl, ttl_score};
use crate::arena::Arena;
use crate::swiss::SwissIndex;
use std::collections::BTreeSet;

/// Most pairs (and arena bytes) a size hint reserves up front.
const RESERVE_LIMIT: usize = 1 << 24;

/// A large hash.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableHash {
    arena: Arena,
    index: SwissIndex<u32>,
    ttls: BTreeSet<(u64, u64)>,
}

/// The arena offset of the value entry of the pair whose field entry is `id`.
#[inline]
fn value_id(arena: &Arena, id: u32) -> u32 {
    arena.get(id).end as u32
}

/// The field and value of the pair at `id`.
#[inline]
fn pair(arena: &Arena, id: u32) -> (&[u8], &[u8]) {
    let f = arena.get(id);
    (f.member, arena.member(f.end as u32))
}

impl TableHash {
    /// An empty hash with room for `len` pairs and `bytes` arena bytes.
    pub(crate) fn with_capacity(len: usize, bytes: usize) -> TableHash {
        TableHash {
            arena: Arena::with_capacity(bytes.min(RESERVE_LIMIT)),
            index: SwissIndex::with_capacity(len.min(RESERVE_LIMIT)),
            ttls: BTreeSet::new(),
        }
    }

    /// Number of pairs.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    fn find(&self, field: &[u8]) -> Option<usize> {
        self.find_hashed(field, hash(field))
    }

    /// [`TableHash::find`] of a field whose hash `h` is known.
    #[inline]
    fn find_hashed(&self, field: &[u8], h: u64) -> Option<usize> {
        let arena = &self.arena;
        self.index.find(h, |id| arena.member(id) == field)
    }

    /// The value of `field`.
    pub(crate) fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.find(field)
            .map(|slot| pair(&self.arena, self.index.id(slot)).1)
    }

    /// The value of `field` and its expiry time.
    pub(crate) fn get_with_expiry(&self, field: &[u8]) -> Option<(&[u8], Option<u64>)> {
        self.find(field).map(|slot| {
            let id = self.index.id(slot);
            let (_, v) = pair(&self.arena, id);
            (v, score_ttl(self.arena.score(id)))
        })
    }

    /// Sets `field` to `value`; true when the field is new. A held field keeps its time
    /// when `keep_ttl` (HINCRBY), else loses it (HSET).
    pub(crate) fn set(&mut self, field: &[u8], value: &[u8], keep_ttl: bool) -> bool {
        self.set_with_expiry(field, value, None, keep_ttl)
    }

    /// Sets `field` to `value` with expiry time `expire_at` (kept from before instead when
    /// `keep_ttl` and the field is held); true when the field is new.
    pub(crate) fn set_with_expiry(
        &mut self,
        field: &[u8],
        value: &[u8],
        expire_at: Option<u64>,
        keep_ttl: bool,
    ) -> bool {
        // Hashed once: for the lookup and, when new, the insert.
        let h = hash(field);
        let Some(slot) = self.find_hashed(field, h) else {
            let id = self.push_pair(field, value, expire_at);
            let arena = &self.arena;
            self.index.insert(h, id, |x| hash(arena.member(x)));
            self.index_ttl(expire_at, field);
            return true;
        };
        let id = self.index.id(slot);
        let old = score_ttl(self.arena.score(id));
        let new = if keep_ttl { old } else { expire_at };
        let vid = value_id(&self.arena, id);
        // Rewrites the value entry in place when the time stays and the new value has
        // the same length.
        if old != new || !self.arena.overwrite_score(vid, value, 0.0) {
            self.free_pair(id);
            let moved = self.push_pair(field, value, new);
            self.index.set_id(slot, moved);
            self.unindex_ttl(old, field);
            self.index_ttl(new, field);
            self.maybe_compact();
        }
        false
    }

    /// Sets or clears the expiry time of `field`; false when it is not held.
    pub(crate) fn set_expiry(&mut self, field: &[u8], expire_at: Option<u64>) -> bool {
        let Some((value, old)) = self.get_with_expiry(field) else {
            return false;
        };
        if old != expire_at {
            let value = value.to_vec();
            self.set_with_expiry(field, &value, expire_at, false);
        }
        true
    }

    /// Records that `field` expires at `expire_at`.
    fn index_ttl(&mut self, expire_at: Option<u64>, field: &[u8]) {
        if let Some(t) = expire_at {
            self.ttls.insert((t, hash(field)));
        }
    }

    /// Forgets that `field` (no longer held, or with another time) expired at
    /// `expire_at`, unless another field of the same hash has that time.
    fn unindex_ttl(&mut self, expire_at: Option<u64>, field: &[u8]) {
        let Some(t) = expire_at else {
            return;
        };
        let h = hash(field);
        if self.find_timed(t, h).is_none() {
            self.drop_ttl_entry(t, h);
        }
    }

    /// Removes `(t, h)` from the expiry index.
    fn drop_ttl_entry(&mut self, t: u64, h: u64) {
        self.ttls.remove(&(t, h));
    }

    /// The slot of a field with hash `h` expiring at `t`.
    fn find_timed(&self, t: u64, h: u64) -> Option<usize> {
        let arena = &self.arena;
        self.index.find(h, |id| {
            let e = arena.get(id);
            score_ttl(e.score) == Some(t) && hash(e.member) == h
        })
    }

    /// The earliest expiry time of a field.
    pub(crate) fn min_expiry(&self) -> Option<u64> {
        self.ttls.first().map(|&(t, _)| t)
    }

    /// Removes up to `max` fields whose time is at or before `now`, earliest first,
    /// returning their names.
    pub(crate) fn take_expired(&mut self, now: u64, max: usize) -> Vec<Vec<u8>> {
        let mut taken = Vec::new();
        while taken.len() < max {
            let Some(&(t, h)) = self.ttls.first() else {
                break;
            };
            if t > now {
                break;
            }
            match self.find_timed(t, h) {
                Some(slot) => {
                    let field = self.arena.member(self.index.id(slot)).to_vec();
                    self.remove(&field);
                    taken.push(field);
                }
                None => self.drop_ttl_entry(t, h),
            }
        }
        taken
    }

    /// Appends a pair to the arena, returning the field entry's id.
    fn push_pair(&mut self, field: &[u8], value: &[u8], expire_at: Option<u64>) -> u32 {
        let id = self.arena.push(field, ttl_score(expire_at));
        self.arena.push(value, 0.0);
        id
    }

    fn free_pair(&mut self, id: u32) {
        let vid = value_id(&self.arena, id);
        self.arena.free(id);
        self.arena.free(vid);
    }

    /// Removes `field`; false when it was not held.
    pub(crate) fn remove(&mut self, field: &[u8]) -> bool {
        let Some(slot) = self.find(field) else {
            return false;
        };
        let id = self.index.id(slot);
        let old = score_ttl(self.arena.score(id));
        self.free_pair(id);
        self.index.remove_slot(slot);
        self.unindex_ttl(old, field);
        let arena = &self.arena;
        self.index.maybe_shrink(|x| hash(arena.member(x)));
        self.maybe_compact();
        true
    }

    /// Rewrites the arena once dead pairs make up more than half of it; the index keeps
    /// its slots and only its ids change.
    fn maybe_compact(&mut self) {
        if !self.arena.wants_compaction() {
            return;
        }
        let live = self.arena.live_bytes();
        let mut fresh = Arena::with_capacity(live + live / 8);
        let old = &self.arena;
        self.index.rewrite_ids(|id| {
            let new = fresh.copy_from(old, id);
            fresh.copy_from(old, value_id(old, id));
            new
        });
        self.arena = fresh;
    }

    /// A uniformly drawn pair (the hash is not empty).
    pub(crate) fn random(&self, seed: u64) -> (&[u8], &[u8]) {
        pair(&self.arena, self.index.id(self.index.random_slot(seed)))
    }

    /// Every pair, in slot order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.index.iter_ids().map(|id| pair(&self.arena, id))
    }

    /// Every pair with its field's expiry time, in slot order.
    pub(crate) fn triples(&self) -> impl Iterator<Item = (&[u8], &[u8], Option<u64>)> + '_ {
        self.index.iter_ids().map(|id| {
            let (f, v) = pair(&self.arena, id);
            (f, v, score_ttl(self.arena.score(id)))
        })
    }

    /// One HSCAN step from `cursor`: about `count` pairs to `emit` with their fields'
    /// expiry times; the next cursor, 0 at the end.
    pub(crate) fn scan(
        &self,
        cursor: u64,
        count: usize,
        mut emit: impl FnMut(&[u8], &[u8], Option<u64>),
    ) -> u64 {
        let arena = &self.arena;
        self.index.scan(
            cursor,
            count,
            |id| hash(arena.member(id)),
            |id| {
                let (f, v) = pair(arena, id);
                emit(f, v, score_ttl(arena.score(id)))
            },
        )
    }

    /// Heap bytes held, the table's own header included.
    pub(crate) fn memory_bytes(&self) -> usize {
        // A B-tree node holds up to 11 pairs; count them at two thirds full.
        let ttls = self.ttls.len() * 16 * 3 / 2;
        std::mem::size_of::<TableHash>()
            + self.arena.memory_bytes()
            + self.index.memory_bytes()
            + ttls
    }

    /// Checks the index and the arena accounting.
    pub(crate) fn validate(&self) {
        let arena = &self.arena;
        self.index.validate(|id| hash(arena.member(id)));
        let live: usize = self
            .index
            .iter_ids()
            .map(|id| arena.get(value_id(arena, id)).end - id as usize)
            .sum();
        assert_eq!(live, arena.live_bytes(), "arena live bytes");
        let timed: BTreeSet<(u64, u64)> = self
            .triples()
            .filter_map(|(f, _, t)| t.map(|t| (t, hash(f))))
            .collect();
        assert_eq!(timed, self.ttls, "expiry index");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_104_bytes() {
        assert_eq!(std::mem::size_of::<TableHash>(), 104);
    }

    #[test]
    fn set_update_remove_compact_scan_random() {
        let mut t = TableHash::with_capacity(10, 0);
        for i in 0..5000 {
            assert!(t.set(format!("field:{i}").as_bytes(), b"v", false));
        }
        assert!(!t.set(b"field:7", b"w", false), "same length: in place");
        assert!(!t.set(b"field:8", b"a longer value", false), "moved");
        assert_eq!(t.get(b"field:7"), Some(&b"w"[..]));
        assert_eq!(t.get(b"field:8"), Some(&b"a longer value"[..]));
        for i in (0..5000).filter(|i| i % 3 != 0) {
            assert!(t.remove(format!("field:{i}").as_bytes()));
        }
        assert!(!t.remove(b"field:1"));
        t.validate();
        assert_eq!(t.len(), 1667);
        assert_eq!(t.get(b"field:3"), Some(&b"v"[..]));
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        loop {
            cursor = t.scan(cursor, 100, |f, v, _| {
                assert_eq!(t.get(f), Some(v));
                assert!(seen.insert(f.to_vec()));
            });
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 1667);
        for seed in 0..100 {
            let (f, v) = t.random(seed);
            assert_eq!(t.get(f), Some(v));
        }
    }

    #[test]
    fn expiry_times_index_and_expire_earliest_first() {
        let mut t = TableHash::with_capacity(10, 0);
        for i in 0..100 {
            t.set(format!("f{i}").as_bytes(), b"v", false);
        }
        for i in 0..50u64 {
            assert!(t.set_expiry(format!("f{i}").as_bytes(), Some(1000 + i % 10)));
        }
        assert!(!t.set_expiry(b"nope", Some(1)));
        assert_eq!(t.min_expiry(), Some(1000));
        t.set(b"f0", b"w", true);
        assert_eq!(t.get_with_expiry(b"f0"), Some((&b"w"[..], Some(1000))));
        t.set(b"f10", b"w", false);
        assert_eq!(t.get_with_expiry(b"f10"), Some((&b"w"[..], None)));
        t.validate();
        let due = t.take_expired(1001, 100);
        assert_eq!(due.len(), 9, "f0..f49 at 1000/1001 less f10");
        assert_eq!(t.min_expiry(), Some(1002));
        assert_eq!(t.take_expired(2000, 5).len(), 5);
        t.validate();
        for i in 0..50 {
            t.set_expiry(format!("f{i}").as_bytes(), None);
        }
        assert_eq!(t.min_expiry(), None);
        assert!(t.ttls.is_empty());
        t.validate();
    }
}
