//! The score index of a large set, after Python's SortedContainers: the ids
//! in `(score, member)` order, cut into small sorted blocks.
//!
//! * `blocks`: each block is a `Vec` of arena ids (`u16` or `u32`, see
//!   `id`), 1 to `BLOCK_MAX`
//!   long; an insert or remove shifts ids inside one block only.
//! * `maxes`: the score and id of each block's last entry, a dense array
//!   searched first, so locating a block touches neither the blocks nor
//!   (unless scores tie) the arena.
//! * `sizes`: a Fenwick tree over block lengths, so the rank of a position
//!   and the position of a rank are O(log blocks). It is built when a rank
//!   is first asked for and dropped when blocks split, merge or go: a split
//!   shifts every later block, so keeping it would cost a rebuild (O(blocks))
//!   per split, which writes that never ask a rank (ZADD, ZREM) need not pay.
//!
//! A full block splits in two before an insert; a block that drops below
//! `BLOCK_MIN` merges into a neighbour. `repack` fills every block to
//! `BLOCK_MAX` with no spare capacity (the optimized layout).

use std::ops::Range;
use std::sync::OnceLock;

use crate::arena::Arena;
use crate::fenwick::Fenwick;
use crate::id::Id;
use crate::order::cmp_key;

/// Most ids in one block.
pub(crate) const BLOCK_MAX: usize = 512;
/// Blocks shorter than this merge into a neighbour.
const BLOCK_MIN: usize = BLOCK_MAX / 8;

/// Sorted blocks of ids with per-block maxima and a positional index.
#[derive(Clone, Debug)]
pub(crate) struct Blocks<I> {
    blocks: Vec<Vec<I>>,
    maxes: Vec<Max<I>>,
    /// Empty until a rank is asked for after the last change of the block list.
    sizes: OnceLock<Fenwick>,
    len: usize,
}

/// The last entry of a block: its score, and its id for breaking ties.
#[derive(Clone, Copy, Debug)]
struct Max<I> {
    score: f64,
    id: I,
}

/// The first index of `block` whose entry fails `pred` (which holds on a prefix), as
/// `partition_point`, reading as few arena entries and waiting on fewer of them: every
/// probe is a likely cache miss (ids are in score order, their entries are not), so each
/// step starts loading the entries of both possible next probes before it compares, and
/// the search waits on about half as many misses in a row.
#[inline]
fn search_block<I: Id>(arena: &Arena, block: &[I], pred: impl Fn(u32) -> bool) -> usize {
    let (mut lo, mut len) = (0, block.len());
    while len > 1 {
        let half = len / 2;
        let rest = len - half;
        // Next probe: lo + rest / 2 if this one holds, lo + half + rest / 2 if not
        // (both in bounds: rest / 2 < rest <= len - half).
        arena.prefetch(block[lo + rest / 2].get());
        arena.prefetch(block[lo + half + rest / 2].get());
        if pred(block[lo + half].get()) {
            lo += half;
        }
        len = rest;
    }
    if len == 1 && pred(block[lo].get()) {
        lo + 1
    } else {
        lo
    }
}

/// Whether the entry `id`, whose score is `s`, sorts before `(score, member)`: the member
/// is read only on a score tie, out of line, so the searches inline the rest.
#[inline(always)]
fn key_lt(arena: &Arena, s: f64, id: u32, score: f64, member: &[u8]) -> bool {
    // Numeric order, so -0 and 0 tie (and NaN is never stored).
    s < score || (s == score && member_lt(arena, id, member))
}

/// Whether the member of entry `id` sorts before `member` (a score tie).
#[inline(never)]
fn member_lt(arena: &Arena, id: u32, member: &[u8]) -> bool {
    arena.member(id) < member
}

/// Grows a block's capacity by a quarter (not double) when it is full.
fn reserve_one<I>(block: &mut Vec<I>) {
    if block.len() == block.capacity() {
        let extra = (block.capacity() / 4).max(8).min(BLOCK_MAX - block.len());
        block.reserve_exact(extra.max(1));
    }
}

/// Gives back capacity a block no longer needs.
fn trim<I>(block: &mut Vec<I>) {
    if block.capacity() > 16 && block.capacity() > block.len() * 2 {
        block.shrink_to(block.len() + block.len() / 4);
    }
}

impl<I> Default for Blocks<I> {
    fn default() -> Blocks<I> {
        Blocks {
            blocks: Vec::new(),
            maxes: Vec::new(),
            sizes: OnceLock::new(),
            len: 0,
        }
    }
}

impl<I: Id> Blocks<I> {
    /// Number of ids held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The first block whose last entry fails `pred` (or `blocks` if none
    /// does), searching the block maxima: a fixed number of halvings whose
    /// step is a conditional move, not a branch.
    #[inline]
    fn block_where(&self, pred: impl Fn(f64, u32) -> bool) -> usize {
        let maxes = self.maxes.as_slice();
        if maxes.is_empty() {
            return 0;
        }
        // The answer lies in lo..=lo + size.
        let (mut lo, mut size) = (0, maxes.len());
        while size > 1 {
            let half = size / 2;
            let mid = lo + half;
            let max = maxes[mid];
            lo = if pred(max.score, max.id.get()) {
                mid
            } else {
                lo
            };
            size -= half;
        }
        let max = maxes[lo];
        lo + usize::from(pred(max.score, max.id.get()))
    }

    /// The first position (block, offset) at which `pred` fails. `pred`
    /// receives an entry's score and id and must hold on a prefix of the
    /// order; block maxima answer the block-level search. Past the end is
    /// `(blocks, 0)`.
    pub(crate) fn partition_point(
        &self,
        arena: &Arena,
        pred: impl Fn(f64, u32) -> bool,
    ) -> (usize, usize) {
        let b = self.block_where(&pred);
        if b == self.blocks.len() {
            return (b, 0);
        }
        let p = search_block(arena, &self.blocks[b], |id| pred(arena.score(id), id));
        (b, p)
    }

    /// The position of `id`, which must be present with key `(score, member)` (the
    /// caller's copy, so the entry is not decoded again). The block comes from
    /// the maxima; inside it the id is found by comparing ids, a vector at a time (see `Id::position`),
    /// which reads one contiguous block instead of the arena entries a
    /// binary search by key would.
    fn position_of(&self, arena: &Arena, id: u32, score: f64, member: &[u8]) -> (usize, usize) {
        // Scores first; a block maximum's member is read (an arena miss) only on a tie.
        let b = self.block_where(|s, x| key_lt(arena, s, x, score, member));
        match I::position(&self.blocks[b], I::new(id)) {
            Some(p) => (b, p),
            None => unreachable!("id {id} is not in the block its key selects"),
        }
    }

    /// The rank of position `(block, offset)`.
    pub(crate) fn rank_at(&self, (block, offset): (usize, usize)) -> usize {
        if block == self.blocks.len() {
            self.len
        } else {
            self.sizes().prefix(block) + offset
        }
    }

    /// How many entries satisfy `pred` (a prefix predicate, as above).
    pub(crate) fn count_where(&self, arena: &Arena, pred: impl Fn(f64, u32) -> bool) -> usize {
        self.rank_at(self.partition_point(arena, pred))
    }

    /// Position of the first entry not less than `(score, member)`.
    fn locate(&self, arena: &Arena, score: f64, member: &[u8]) -> (usize, usize) {
        // Block maxima compare scores first and read a member only on a tie.
        let b = self.block_where(|s, id| key_lt(arena, s, id, score, member));
        if b == self.blocks.len() {
            return (b, 0);
        }
        // Inside the block, each probe reads the entry's score, and its member only on a tie.
        let p = search_block(
            arena,
            &self.blocks[b],
            #[inline(always)]
            |id| key_lt(arena, arena.score(id), id, score, member),
        );
        (b, p)
    }

    /// Rank of the entry `id`, which must be present with key `(score, member)`.
    pub(crate) fn rank_of(&self, arena: &Arena, id: u32, score: f64, member: &[u8]) -> usize {
        self.rank_at(self.position_of(arena, id, score, member))
    }

    /// The id at `rank`.
    pub(crate) fn id_at(&self, rank: usize) -> Option<u32> {
        if rank >= self.len {
            return None;
        }
        let (b, p) = self.sizes().select(rank);
        Some(self.blocks[b][p].get())
    }

    /// Inserts `id`, whose arena entry holds `(score, member)` (the caller's copy of its
    /// key, so the entry is not decoded again), which must be absent.
    pub(crate) fn insert(&mut self, arena: &Arena, id: u32, score: f64, member: &[u8]) {
        let id = I::new(id);
        if self.blocks.is_empty() {
            self.blocks.push(vec![id]);
            self.maxes.push(Max { score, id });
            self.len = 1;
            self.reindex();
            return;
        }
        let (mut b, mut p) = self.locate(arena, score, member);
        if b == self.blocks.len() {
            b -= 1;
            p = self.blocks[b].len();
        }
        let mut structural = false;
        if self.blocks[b].len() == BLOCK_MAX {
            if p == 0 || p == BLOCK_MAX {
                // At either edge of a full block (sorted loads, pops):
                // start a new block there and keep this one full.
                let at = if p == 0 { b } else { b + 1 };
                self.blocks.insert(at, vec![id]);
                self.maxes.insert(at, Max { score, id });
                self.len += 1;
                self.reindex();
                return;
            }
            let right = self.blocks[b].split_off(BLOCK_MAX / 2);
            self.blocks[b].shrink_to(BLOCK_MAX / 2 + BLOCK_MAX / 8);
            self.maxes.insert(b + 1, self.maxes[b]);
            self.blocks.insert(b + 1, right);
            self.set_max(arena, b);
            self.set_max(arena, b + 1);
            if p > BLOCK_MAX / 2 {
                b += 1;
                p -= BLOCK_MAX / 2;
            }
            structural = true;
        }
        let block = &mut self.blocks[b];
        reserve_one(block);
        block.insert(p, id);
        if p + 1 == block.len() {
            self.maxes[b] = Max { score, id };
        }
        self.len += 1;
        if structural {
            self.reindex();
        } else {
            self.add_size(b, 1);
        }
    }

    /// Removes `id`, which must be present with key `(score, member)`.
    pub(crate) fn remove(&mut self, arena: &Arena, id: u32, score: f64, member: &[u8]) {
        let (b, p) = self.position_of(arena, id, score, member);
        self.blocks[b].remove(p);
        self.len -= 1;
        if self.blocks[b].len() < BLOCK_MIN {
            self.rebalance(arena, b);
            return;
        }
        if p == self.blocks[b].len() {
            self.set_max(arena, b);
        }
        trim(&mut self.blocks[b]);
        self.add_size(b, -1);
    }

    /// Removes the entries at `ranks`, returning their ids in order.
    pub(crate) fn remove_range(&mut self, arena: &Arena, ranks: Range<usize>) -> Vec<u32> {
        let end = ranks.end.min(self.len);
        if ranks.start >= end {
            return Vec::new();
        }
        let mut removed = Vec::with_capacity(end - ranks.start);
        let (first, mut p) = self.sizes().select(ranks.start);
        let mut b = first;
        while removed.len() < end - ranks.start {
            let block = &mut self.blocks[b];
            let take = (end - ranks.start - removed.len()).min(block.len() - p);
            removed.extend(block.drain(p..p + take).map(Id::get));
            if !block.is_empty() {
                trim(block);
                self.set_max(arena, b);
            }
            b += 1;
            p = 0;
        }
        self.len -= removed.len();
        // Drop emptied blocks (their maxima with them), then mend the seam.
        let mut keep = self.blocks.iter().map(|blk| !blk.is_empty());
        self.maxes.retain(|_| keep.next().unwrap_or(true));
        self.blocks.retain(|blk| !blk.is_empty());
        self.shrink_lists();
        // Only the blocks at the seam were cut short; merge the later first
        // so the earlier index stays valid.
        self.merge_if_short(arena, first + 1);
        self.merge_if_short(arena, first);
        self.reindex();
        removed
    }

    /// Drops block `b` if empty or merges it into a neighbour if short,
    /// then reindexes.
    fn rebalance(&mut self, arena: &Arena, b: usize) {
        if self.blocks[b].is_empty() {
            self.blocks.remove(b);
            self.maxes.remove(b);
        } else if !self.merge_if_short(arena, b) {
            self.set_max(arena, b);
            trim(&mut self.blocks[b]);
        }
        self.shrink_lists();
        self.reindex();
    }

    /// Merges block `b` (if it exists, is short and has a neighbour) with
    /// the next block, or the previous one for the last block, splitting an
    /// overfull result in two. Does not reindex. Returns whether it merged.
    fn merge_if_short(&mut self, arena: &Arena, b: usize) -> bool {
        if b >= self.blocks.len() || self.blocks[b].len() >= BLOCK_MIN || self.blocks.len() < 2 {
            return false;
        }
        let left = if b + 1 < self.blocks.len() { b } else { b - 1 };
        let right = self.blocks.remove(left + 1);
        self.maxes.remove(left + 1);
        let block = &mut self.blocks[left];
        block.reserve_exact(right.len());
        block.extend_from_slice(&right);
        if block.len() > BLOCK_MAX {
            let tail = block.split_off(block.len() / 2);
            block.shrink_to(block.len() + block.len() / 4);
            self.blocks.insert(left + 1, tail);
            self.maxes.insert(left + 1, self.maxes[left]);
            self.set_max(arena, left + 1);
        }
        self.set_max(arena, left);
        true
    }

    fn set_max(&mut self, arena: &Arena, b: usize) {
        let id = *self.blocks[b].last().expect("blocks are never empty");
        self.maxes[b] = Max {
            score: arena.score(id.get()),
            id,
        };
    }

    /// Gives back spare room in the block list and maxima after shrinking.
    fn shrink_lists(&mut self) {
        if self.blocks.capacity() > 8 && self.blocks.capacity() > self.blocks.len() * 2 {
            self.blocks
                .shrink_to(self.blocks.len() + self.blocks.len() / 4);
            self.maxes
                .shrink_to(self.blocks.len() + self.blocks.len() / 4);
        }
    }

    fn reindex(&mut self) {
        self.sizes.take();
    }

    /// The positional index, built first if a change dropped it.
    #[inline]
    fn sizes(&self) -> &Fenwick {
        self.sizes
            .get_or_init(|| Fenwick::over(self.blocks.iter().map(Vec::len)))
    }

    /// Adds `delta` to the length of block `b` in the positional index, if built.
    #[inline]
    fn add_size(&mut self, b: usize, delta: i32) {
        if let Some(sizes) = self.sizes.get_mut() {
            sizes.add(b, delta);
        }
    }

    /// Replaces every id, in order, by `f(id)` (after compaction).
    pub(crate) fn rewrite_ids(&mut self, mut f: impl FnMut(u32) -> u32) {
        for id in self.blocks.iter_mut().flatten() {
            *id = I::new(f(id.get()));
        }
        for (max, block) in self.maxes.iter_mut().zip(&self.blocks) {
            max.id = *block.last().expect("blocks are never empty");
        }
    }

    /// Every id in order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().flatten().map(|id| id.get())
    }

    /// The same index with `u32` ids.
    pub(crate) fn widen(&self) -> Blocks<u32> {
        let mut blocks = Vec::with_capacity(self.blocks.len());
        blocks.extend(self.blocks.iter().map(|blk| {
            let mut wide = Vec::with_capacity(blk.capacity());
            wide.extend(blk.iter().map(|id| id.get()));
            wide
        }));
        Blocks {
            blocks,
            maxes: self
                .maxes
                .iter()
                .map(|m| Max {
                    score: m.score,
                    id: m.id.get(),
                })
                .collect(),
            sizes: self.sizes.clone(),
            len: self.len,
        }
    }

    /// Refills every block to `BLOCK_MAX` with exactly the capacity used.
    ///
    /// The old blocks are freed before the new ones are allocated: new blocks made while
    /// the old ones lived took the heap's holes between them, and the old ones then left
    /// block-sized holes between the new ones that no trim can give back (W2 at 1M: 5 MB
    /// of the heap free in 1,500 chunks, RSS 31.7 -> 32.4 B a member after OPTIMIZE).
    pub(crate) fn repack(&mut self, arena: &Arena) {
        let mut ids: Vec<I> = Vec::with_capacity(self.len);
        ids.extend(self.blocks.iter().flatten());
        self.blocks = Vec::new();
        self.maxes = Vec::new();
        self.blocks = ids.chunks(BLOCK_MAX).map(<[I]>::to_vec).collect();
        self.maxes = self
            .blocks
            .iter()
            .map(|blk| {
                let id = *blk.last().expect("chunks are non-empty");
                Max {
                    score: arena.score(id.get()),
                    id,
                }
            })
            .collect();
        // Built now, with exactly its capacity (the optimized layout).
        self.sizes = OnceLock::from(Fenwick::over(self.blocks.iter().map(Vec::len)));
    }

    /// Ids at `ranks` (clamped), front to back.
    pub(crate) fn range(&self, ranks: Range<usize>) -> BlockIter<'_, I> {
        let end = ranks.end.min(self.len);
        let start = ranks.start.min(end);
        BlockIter {
            index: self,
            front: self.sizes().select(start),
            back: self.sizes().select(end),
            front_rank: start,
            back_rank: end,
        }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.blocks.capacity() * std::mem::size_of::<Vec<I>>()
            + self
                .blocks
                .iter()
                .map(|b| b.capacity() * std::mem::size_of::<I>())
                .sum::<usize>()
            + self.maxes.capacity() * std::mem::size_of::<Max<I>>()
            + self.sizes.get().map_or(0, Fenwick::memory_bytes)
    }

    /// Checks order, block sizes, maxima and the positional index.
    pub(crate) fn validate(&self, arena: &Arena) {
        assert_eq!(self.blocks.len(), self.maxes.len(), "one maximum per block");
        let mut total = 0;
        for (b, block) in self.blocks.iter().enumerate() {
            assert!(
                !block.is_empty() && block.len() <= BLOCK_MAX,
                "block {b} size"
            );
            assert!(block.capacity() <= BLOCK_MAX, "block {b} over-allocated");
            let last = *block.last().expect("non-empty");
            assert_eq!(self.maxes[b].id, last, "last id of block {b}");
            assert_eq!(
                self.maxes[b].score.to_bits(),
                arena.score(last.get()).to_bits(),
                "maximum of block {b}"
            );
            assert_eq!(self.rank_at((b, 0)), total, "Fenwick prefix at block {b}");
            assert_eq!(
                self.sizes().select(total),
                (b, 0),
                "Fenwick select at block {b}"
            );
            total += block.len();
        }
        assert_eq!(total, self.len, "length");
        let mut prev: Option<u32> = None;
        for id in self.ids() {
            if let Some(p) = prev {
                let (a, b) = (arena.get(p), arena.get(id));
                assert!(
                    cmp_key(a.score, a.member, b.score, b.member).is_lt(),
                    "entries out of order"
                );
            }
            prev = Some(id);
        }
    }
}

/// Ids over a rank range, from either end. Skipping (`nth`, `nth_back`,
/// and so `skip` for ZRANGE ... LIMIT) jumps through the Fenwick tree in
/// O(log blocks) instead of stepping.
#[derive(Clone, Debug)]
pub(crate) struct BlockIter<'a, I> {
    index: &'a Blocks<I>,
    /// Position of the next id from the front.
    front: (usize, usize),
    /// Position just past the next id from the back.
    back: (usize, usize),
    front_rank: usize,
    back_rank: usize,
}

impl<I: Id> Iterator for BlockIter<'_, I> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.front_rank == self.back_rank {
            return None;
        }
        let blocks = &self.index.blocks;
        while self.front.1 == blocks[self.front.0].len() {
            self.front = (self.front.0 + 1, 0);
        }
        let id = blocks[self.front.0][self.front.1].get();
        self.front.1 += 1;
        self.front_rank += 1;
        Some(id)
    }

    fn nth(&mut self, n: usize) -> Option<u32> {
        if n > 0 {
            self.front_rank = (self.front_rank + n).min(self.back_rank);
            self.front = self.index.sizes().select(self.front_rank);
        }
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back_rank - self.front_rank;
        (n, Some(n))
    }
}

impl<I: Id> DoubleEndedIterator for BlockIter<'_, I> {
    fn next_back(&mut self) -> Option<u32> {
        if self.front_rank == self.back_rank {
            return None;
        }
        let blocks = &self.index.blocks;
        while self.back.1 == 0 {
            self.back.0 -= 1;
            self.back.1 = blocks[self.back.0].len();
        }
        self.back.1 -= 1;
        self.back_rank -= 1;
        Some(blocks[self.back.0][self.back.1].get())
    }

    fn nth_back(&mut self, n: usize) -> Option<u32> {
        if n > 0 {
            self.back_rank = self.back_rank.saturating_sub(n).max(self.front_rank);
            self.back = self.index.sizes().select(self.back_rank);
        }
        self.next_back()
    }
}

impl<I: Id> ExactSizeIterator for BlockIter<'_, I> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_drops_the_positional_index_until_a_rank_is_asked() {
        let mut arena = Arena::with_capacity(0);
        let mut blocks: Blocks<u32> = Blocks::default();
        // Ascending inserts fill whole blocks (a new one starts at the full one's edge).
        let ids: Vec<u32> = (0..2 * BLOCK_MAX as u32)
            .map(|i| {
                let member = format!("m{i:05}");
                let id = arena.push(member.as_bytes(), f64::from(i * 2));
                blocks.insert(&arena, id, f64::from(i * 2), member.as_bytes());
                id
            })
            .collect();
        let rank = |blocks: &Blocks<u32>, arena: &Arena, id: u32| {
            let e = arena.get(id);
            blocks.rank_of(arena, id, e.score, e.member)
        };
        assert_eq!(rank(&blocks, &arena, ids[10]), 10);
        assert!(blocks.sizes.get().is_some(), "built by the rank query");
        let mid = arena.push(b"mid", 11.0);
        blocks.insert(&arena, mid, 11.0, b"mid");
        assert!(blocks.sizes.get().is_none(), "the split dropped it");
        assert_eq!(rank(&blocks, &arena, mid), 6);
        assert_eq!(rank(&blocks, &arena, ids[6]), 7);
        assert!(blocks.sizes.get().is_some(), "rebuilt");
        // An insert that splits nothing keeps it up to date.
        let more = arena.push(b"more", 13.0);
        blocks.insert(&arena, more, 13.0, b"more");
        assert!(blocks.sizes.get().is_some());
        assert_eq!(rank(&blocks, &arena, ids[7]), 9);
        assert_eq!(
            blocks.id_at(2 * BLOCK_MAX + 1),
            Some(ids[2 * BLOCK_MAX - 1])
        );
        blocks.validate(&arena);
    }
}
