//! The large form (Redis's "skiplist" encoding): the member arena, the Swiss
//! member index and the block-sorted score index, kept in step.
//!
//! The arena is the only place member bytes and scores live. The member
//! index maps a member to its arena id; the score index holds the ids in
//! order. Compaction and `optimize` rewrite the arena in score order, which
//! changes every id, so they rebuild the member index from the score index.

use std::ops::Range;

use crate::arena::Arena;
use crate::blocks::{BlockIter, Blocks};
use crate::hash::hash;
use crate::id::Id;
use crate::order::{cmp_score, members_eq, rank_range};
use crate::swiss::{groups_for, SwissIndex};
use crate::{LexRange, ScoreRange};

/// Most members (and arena bytes) `with_capacity` reserves up front.
const RESERVE_LIMIT: usize = 1 << 24;

/// A large sorted set.
#[derive(Clone, Debug)]
pub(crate) struct LargeSet<I> {
    arena: Arena,
    index: SwissIndex<I>,
    order: Blocks<I>,
}

impl<I: Id> LargeSet<I> {
    /// An empty set whose member index has room for `len` members and whose
    /// arena has room for `bytes` bytes (each up to a limit, so a wrong hint
    /// cannot allocate without bound).
    pub(crate) fn with_capacity(len: usize, bytes: usize) -> LargeSet<I> {
        LargeSet {
            arena: Arena::with_capacity(bytes.min(RESERVE_LIMIT)),
            index: SwissIndex::with_capacity(len.min(RESERVE_LIMIT)),
            order: Blocks::default(),
        }
    }

    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// The slot and id of `member`.
    fn find(&self, member: &[u8]) -> Option<(usize, u32)> {
        let arena = &self.arena;
        self.index
            .find_entry(hash(member), |id| members_eq(arena.member(id), member))
    }

    /// The score of `member`.
    pub(crate) fn score(&self, member: &[u8]) -> Option<f64> {
        self.find(member).map(|(_, id)| self.arena.score(id))
    }

    /// Inserts or updates; returns the previous score. Numerically equal
    /// scores leave the stored one (and its sign) alone, as Redis does.
    pub(crate) fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        if let Some((slot, id)) = self.find(member) {
            let old = self.arena.score(id);
            if cmp_score(old, score).is_ne() {
                self.order.remove(&self.arena, id, old, member);
                let id = if self.arena.rewrite_score(id, score) {
                    id
                } else {
                    let moved = self.arena.push(member, score);
                    self.arena.free(id);
                    self.index.set_id(slot, moved);
                    moved
                };
                self.order.insert(&self.arena, id, score, member);
                self.maybe_compact();
            }
            return Some(old);
        }
        let id = self.arena.push(member, score);
        let arena = &self.arena;
        self.index
            .insert(hash(member), id, |x| hash(arena.member(x)));
        self.order.insert(&self.arena, id, score, member);
        // Growth can carry a small, mostly dead arena past the threshold.
        self.maybe_compact();
        None
    }

    /// Removes `member`, returning its score.
    pub(crate) fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let (slot, id) = self.find(member)?;
        let score = self.arena.score(id);
        self.order.remove(&self.arena, id, score, member);
        self.index.remove_slot(slot);
        self.arena.free(id);
        self.after_removal();
        Some(score)
    }

    /// The rank of `member`.
    pub(crate) fn rank(&self, member: &[u8]) -> Option<usize> {
        let (_, id) = self.find(member)?;
        let score = self.arena.score(id);
        Some(self.order.rank_of(&self.arena, id, score, member))
    }

    /// The entry at `rank`.
    pub(crate) fn get_by_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        let e = self.arena.get(self.order.id_at(rank)?);
        Some((e.member, e.score))
    }

    /// Entries at `ranks` (clamped), from either end.
    pub(crate) fn range(&self, ranks: Range<usize>) -> LargeIter<'_, I> {
        LargeIter {
            arena: &self.arena,
            ids: self.order.range(ranks),
        }
    }

    /// Ranks of the entries whose scores lie in `range`.
    pub(crate) fn score_range_ranks(&self, range: &ScoreRange) -> Range<usize> {
        let start = self
            .order
            .count_where(&self.arena, |s, _| range.before_start(s));
        let end = self
            .order
            .count_where(&self.arena, |s, _| range.before_end(s));
        rank_range(start, end)
    }

    /// Ranks of the entries whose members lie in `range`.
    pub(crate) fn lex_range_ranks(&self, range: &LexRange) -> Range<usize> {
        let arena = &self.arena;
        let start = self
            .order
            .count_where(arena, |_, id| range.before_start(arena.member(id)));
        let end = self
            .order
            .count_where(arena, |_, id| range.before_end(arena.member(id)));
        rank_range(start, end)
    }

    /// Removes the entries at `ranks` (clamped); returns how many.
    pub(crate) fn remove_rank_range(&mut self, ranks: Range<usize>) -> usize {
        let removed = self.order.remove_range(&self.arena, ranks);
        for &id in &removed {
            let slot = self
                .index
                .find(hash(self.arena.member(id)), |x| x == id)
                .expect("every ordered id is indexed");
            self.index.remove_slot(slot);
            self.arena.free(id);
        }
        self.after_removal();
        removed.len()
    }

    fn after_removal(&mut self) {
        let arena = &self.arena;
        self.index.maybe_shrink(|x| hash(arena.member(x)));
        self.maybe_compact();
    }

    fn maybe_compact(&mut self) {
        if self.arena.wants_compaction() {
            let live = self.arena.live_bytes();
            self.rewrite_arena(live + live / 8, self.index.groups());
        }
    }

    /// Rewrites the arena in score order with room for `capacity` bytes and
    /// rebuilds the member index with `groups` groups for the new ids.
    fn rewrite_arena(&mut self, capacity: usize, groups: usize) {
        let mut fresh = Arena::with_capacity(capacity);
        let old = &self.arena;
        self.order.rewrite_ids(|id| fresh.copy_from(old, id));
        self.arena = fresh;
        let arena = &self.arena;
        self.index
            .resize(groups, self.order.ids(), |x| hash(arena.member(x)));
    }

    /// Repacks the score index into full blocks, the arena to its live bytes
    /// and the member index to load `density`.
    pub(crate) fn optimize(&mut self, density: f64) {
        self.order.repack(&self.arena);
        let live = self.arena.live_bytes();
        self.rewrite_arena(live, groups_for(self.len(), density));
    }

    /// One ZSCAN step (see [`SwissIndex::scan`]).
    pub(crate) fn scan(&self, cursor: u64, count: usize, out: &mut Vec<(Vec<u8>, f64)>) -> u64 {
        let arena = &self.arena;
        self.index.scan(
            cursor,
            count,
            |id| hash(arena.member(id)),
            |id| {
                let e = arena.get(id);
                out.push((e.member.to_vec(), e.score));
            },
        )
    }

    /// Whether the next arena entry would start past what `I` can address,
    /// so the set must widen before an insert. When dead entries are what
    /// pushed it there, compacting the arena is preferred (and done here).
    pub(crate) fn needs_wider_ids(&mut self) -> bool {
        if self.arena.len() <= I::MAX_OFFSET {
            return false;
        }
        let live = self.arena.live_bytes();
        if live < I::MAX_OFFSET / 4 * 3 {
            self.rewrite_arena(live + live / 8, self.index.groups());
            return false;
        }
        true
    }

    /// The same set with `u32` ids; the arena moves over unchanged.
    pub(crate) fn widen(self) -> LargeSet<u32> {
        LargeSet {
            index: self.index.widen(),
            order: self.order.widen(),
            arena: self.arena,
        }
    }

    /// Heap bytes held, including this struct's own box.
    pub(crate) fn memory_bytes(&self) -> usize {
        std::mem::size_of::<LargeSet<I>>()
            + self.arena.memory_bytes()
            + self.index.memory_bytes()
            + self.order.memory_bytes()
    }

    /// Checks that the three structures agree.
    pub(crate) fn validate(&self) {
        let arena = &self.arena;
        self.order.validate(arena);
        self.index.validate(|id| hash(arena.member(id)));
        assert_eq!(self.index.len(), self.order.len(), "index and order sizes");
        let mut live = 0;
        for id in self.order.ids() {
            let e = arena.get(id);
            assert!(!e.score.is_nan(), "NaN stored");
            live += e.end - id as usize;
            assert_eq!(
                self.find(e.member).map(|(_, x)| x),
                Some(id),
                "member index points at the entry"
            );
        }
        assert_eq!(live, arena.live_bytes(), "arena garbage accounting");
        assert!(!arena.wants_compaction(), "arena left over half garbage");
        let mut indexed: Vec<u32> = self.index.iter_ids().collect();
        let mut ordered: Vec<u32> = self.order.ids().collect();
        indexed.sort_unstable();
        ordered.sort_unstable();
        assert_eq!(indexed, ordered, "same ids in both indexes");
    }
}

/// Entries of a large set over a rank range, from either end.
#[derive(Clone, Debug)]
pub(crate) struct LargeIter<'a, I> {
    arena: &'a Arena,
    ids: BlockIter<'a, I>,
}

impl<'a, I: Id> Iterator for LargeIter<'a, I> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<(&'a [u8], f64)> {
        let e = self.arena.get(self.ids.next()?);
        Some((e.member, e.score))
    }

    fn nth(&mut self, n: usize) -> Option<(&'a [u8], f64)> {
        let e = self.arena.get(self.ids.nth(n)?);
        Some((e.member, e.score))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ids.size_hint()
    }
}

impl<I: Id> DoubleEndedIterator for LargeIter<'_, I> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let e = self.arena.get(self.ids.next_back()?);
        Some((e.member, e.score))
    }

    fn nth_back(&mut self, n: usize) -> Option<Self::Item> {
        let e = self.arena.get(self.ids.nth_back(n)?);
        Some((e.member, e.score))
    }
}

impl<I: Id> ExactSizeIterator for LargeIter<'_, I> {}
