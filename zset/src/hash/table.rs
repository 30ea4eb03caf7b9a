//! The hashtable form: each pair packed in the sorted-set engine's arena as two adjacent
//! entries (the field's, then the value's, each a varint header and the bytes) and
//! indexed by its Swiss table of `u32` arena offsets of the field entries. No allocation
//! per pair.
//!
//! A value rewritten at the same encoded length is overwritten in place; otherwise the
//! pair is appended anew and its slot takes the new offset. Random fields come from
//! random slots (`SwissIndex::random_slot`); HSCAN cursors are field-hash thresholds
//! (see `SwissIndex::scan`), stable across growth, shrinking and compaction.

use super::hash;
use crate::arena::Arena;
use crate::swiss::SwissIndex;

/// Most pairs (and arena bytes) a size hint reserves up front.
const RESERVE_LIMIT: usize = 1 << 24;

/// A large hash.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableHash {
    arena: Arena,
    index: SwissIndex<u32>,
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
        }
    }

    /// Number of pairs.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    fn find(&self, field: &[u8]) -> Option<usize> {
        let arena = &self.arena;
        self.index.find(hash(field), |id| arena.member(id) == field)
    }

    /// The value of `field`.
    pub(crate) fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.find(field)
            .map(|slot| pair(&self.arena, self.index.id(slot)).1)
    }

    /// Sets `field` to `value`; true when the field is new.
    pub(crate) fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        let Some(slot) = self.find(field) else {
            let id = self.push_pair(field, value);
            let arena = &self.arena;
            self.index
                .insert(hash(field), id, |x| hash(arena.member(x)));
            return true;
        };
        let id = self.index.id(slot);
        let vid = value_id(&self.arena, id);
        // Rewrites the value entry when the new one has the same length.
        if !self.arena.overwrite_score(vid, value, 0.0) {
            self.free_pair(id);
            let new = self.push_pair(field, value);
            self.index.set_id(slot, new);
            self.maybe_compact();
        }
        false
    }

    /// Appends a pair to the arena, returning the field entry's id.
    fn push_pair(&mut self, field: &[u8], value: &[u8]) -> u32 {
        let id = self.arena.push(field, 0.0);
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
        self.free_pair(self.index.id(slot));
        self.index.remove_slot(slot);
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

    /// One HSCAN step from `cursor`: about `count` pairs to `emit`; the next cursor, 0 at
    /// the end.
    pub(crate) fn scan(
        &self,
        cursor: u64,
        count: usize,
        mut emit: impl FnMut(&[u8], &[u8]),
    ) -> u64 {
        let arena = &self.arena;
        self.index.scan(
            cursor,
            count,
            |id| hash(arena.member(id)),
            |id| {
                let (f, v) = pair(arena, id);
                emit(f, v)
            },
        )
    }

    /// Heap bytes held, the table's own header included.
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<TableHash>() + self.arena.memory_bytes() + self.index.memory_bytes()
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_80_bytes() {
        assert_eq!(std::mem::size_of::<TableHash>(), 80);
    }

    #[test]
    fn set_update_remove_compact_scan_random() {
        let mut t = TableHash::with_capacity(10, 0);
        for i in 0..5000 {
            assert!(t.set(format!("field:{i}").as_bytes(), b"v"));
        }
        assert!(!t.set(b"field:7", b"w"), "same length: in place");
        assert!(!t.set(b"field:8", b"a longer value"), "moved");
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
            cursor = t.scan(cursor, 100, |f, v| {
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
}
