//! The hashtable form: members packed in the sorted-set engine's arena (a varint header
//! and the bytes, a zero score taking none) and indexed by its Swiss table of `u32`
//! arena offsets. No allocation per member.
//!
//! Random members come from random slots: a uniformly drawn slot that holds an id is a
//! uniformly drawn member, and the table is kept at least a quarter full, so a draw takes
//! four probes or fewer on average. SSCAN cursors are member-hash thresholds (see
//! `SwissIndex::scan`), stable across growth, shrinking and compaction.

use crate::arena::Arena;
use crate::hash::hash;
use crate::swiss::SwissIndex;

/// Most members (and arena bytes) a size hint reserves up front.
const RESERVE_LIMIT: usize = 1 << 24;

/// A large set.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableSet {
    arena: Arena,
    index: SwissIndex<u32>,
}

impl TableSet {
    /// An empty set with room for `len` members and `bytes` arena bytes.
    pub(crate) fn with_capacity(len: usize, bytes: usize) -> TableSet {
        TableSet {
            arena: Arena::with_capacity(bytes.min(RESERVE_LIMIT)),
            index: SwissIndex::with_capacity(len.min(RESERVE_LIMIT)),
        }
    }

    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    fn find(&self, member: &[u8]) -> Option<usize> {
        let arena = &self.arena;
        self.index
            .find(hash(member), |id| arena.member(id) == member)
    }

    /// Whether `member` is held.
    pub(crate) fn contains(&self, member: &[u8]) -> bool {
        self.find(member).is_some()
    }

    /// Adds `member`; false when it was already held.
    pub(crate) fn insert(&mut self, member: &[u8]) -> bool {
        if self.contains(member) {
            return false;
        }
        let id = self.arena.push(member, 0.0);
        let arena = &self.arena;
        self.index
            .insert(hash(member), id, |x| hash(arena.member(x)));
        true
    }

    /// Removes `member`; false when it was not held.
    pub(crate) fn remove(&mut self, member: &[u8]) -> bool {
        match self.find(member) {
            Some(slot) => {
                self.remove_slot(slot);
                true
            }
            None => false,
        }
    }

    fn remove_slot(&mut self, slot: usize) {
        self.arena.free(self.index.id(slot));
        self.index.remove_slot(slot);
        let arena = &self.arena;
        self.index.maybe_shrink(|x| hash(arena.member(x)));
        if self.arena.wants_compaction() {
            let live = self.arena.live_bytes();
            self.rewrite_arena(live + live / 8);
        }
    }

    /// Copies the live entries into a fresh arena of `capacity` bytes; the index keeps
    /// its slots and only its ids change.
    fn rewrite_arena(&mut self, capacity: usize) {
        let mut fresh = Arena::with_capacity(capacity);
        let old = &self.arena;
        self.index.rewrite_ids(|id| fresh.copy_from(old, id));
        self.arena = fresh;
    }

    /// A uniformly drawn member (the set is not empty).
    pub(crate) fn random(&self, seed: u64) -> &[u8] {
        self.arena
            .member(self.index.id(self.index.random_slot(seed)))
    }

    /// Removes and returns a uniformly drawn member (the set is not empty).
    pub(crate) fn pop_random(&mut self, seed: u64) -> Vec<u8> {
        let slot = self.index.random_slot(seed);
        let member = self.arena.member(self.index.id(slot)).to_vec();
        self.remove_slot(slot);
        member
    }

    /// Every member, in slot order.
    pub(crate) fn members(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.index.iter_ids().map(|id| self.arena.member(id))
    }

    /// One SSCAN step from `cursor`: about `count` members to `emit`; the next cursor, 0
    /// at the end.
    pub(crate) fn scan(&self, cursor: u64, count: usize, mut emit: impl FnMut(&[u8])) -> u64 {
        let arena = &self.arena;
        self.index.scan(
            cursor,
            count,
            |id| hash(arena.member(id)),
            |id| emit(arena.member(id)),
        )
    }

    /// Heap bytes held, the table's own header included.
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<TableSet>() + self.arena.memory_bytes() + self.index.memory_bytes()
    }

    /// Checks the index and the arena accounting.
    pub(crate) fn validate(&self) {
        let arena = &self.arena;
        self.index.validate(|id| hash(arena.member(id)));
        let live: usize = self
            .index
            .iter_ids()
            .map(|id| arena.get(id).end - id as usize)
            .sum();
        assert_eq!(live, arena.live_bytes(), "arena live bytes");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_80_bytes() {
        assert_eq!(std::mem::size_of::<TableSet>(), 80);
    }

    #[test]
    fn insert_remove_compact_scan_random() {
        let mut t = TableSet::with_capacity(10, 0);
        for i in 0..5000 {
            assert!(t.insert(format!("member:{i}").as_bytes()));
        }
        assert!(!t.insert(b"member:7"));
        for i in (0..5000).filter(|i| i % 3 != 0) {
            assert!(t.remove(format!("member:{i}").as_bytes()));
        }
        t.validate();
        assert_eq!(t.len(), 1667);
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        loop {
            cursor = t.scan(cursor, 100, |m| assert!(seen.insert(m.to_vec())));
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(seen.len(), 1667);
        for seed in 0..100 {
            assert!(t.contains(t.random(seed)));
        }
        let popped = t.pop_random(42);
        assert!(!t.contains(&popped));
        t.validate();
    }
}
