//! The score index of a large set, after Python's SortedContainers: the ids
//! in `(score, member)` order, cut into small sorted blocks.
//!
//! * `slab`: the blocks, each a `Vec` of arena ids (`u16` or `u32`, see
//!   `id`), 1 to `BLOCK_MAX` long, in no particular order; an insert or
//!   remove shifts ids inside one block only.
//! * `maxes`: in order, the score and id of each block's last entry and the
//!   block's slab index, a dense array searched first, so locating a block
//!   touches neither the blocks nor (unless scores tie) the arena. A split
//!   pushes the new block at the slab's end and shifts only `maxes` (16 bytes
//!   a block, not the 40 of the block list and the maxima together).
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
use crate::order::{cmp_key, cmp_members};

/// Most ids in one block.
pub(crate) const BLOCK_MAX: usize = 512;
/// Blocks shorter than this merge into a neighbour.
const BLOCK_MIN: usize = BLOCK_MAX / 8;

/// Sorted blocks of ids with per-block maxima and a positional index.
#[derive(Clone, Debug)]
pub(crate) struct Blocks<I> {
    /// The blocks, found through `maxes` (a block's slab index is not its place in order).
    slab: Vec<Vec<I>>,
    /// One per block, in order.
    maxes: Vec<Max<I>>,
    /// Empty until a rank is asked for after the last change of the block list.
    sizes: OnceLock<Fenwick>,
    len: usize,
}

/// The last entry of a block: its score, and its id for breaking ties; and where the
/// block is in the slab (in what would be the padding after a `u32` id).
#[derive(Clone, Copy, Debug)]
struct Max<I> {
    score: f64,
    id: I,
    block: u32,
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
    cmp_members(arena.member(id), member).is_lt()
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
            slab: Vec::new(),
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

    /// Number of blocks.
    #[inline]
    fn count(&self) -> usize {
        self.maxes.len()
    }

    /// The `b`th block in order.
    #[inline]
    fn block(&self, b: usize) -> &Vec<I> {
        &self.slab[self.maxes[b].block as usize]
    }

    /// The `b`th block in order, to change.
    #[inline]
    fn block_mut(&mut self, b: usize) -> &mut Vec<I> {
        &mut self.slab[self.maxes[b].block as usize]
    }

    /// The blocks in order.
    fn ordered(&self) -> impl ExactSizeIterator<Item = &Vec<I>> + '_ {
        self.maxes.iter().map(|m| &self.slab[m.block as usize])
    }

    /// Puts `block`, whose last entry has score `score`, at place `at` in order (at the
    /// slab's end). Does not reindex.
    fn insert_block(&mut self, at: usize, block: Vec<I>, score: f64) {
        let id = *block.last().expect("blocks are never empty");
        let slot = u32::try_from(self.slab.len()).expect("fewer than 2^32 blocks");
        self.slab.push(block);
        self.maxes.insert(
            at,
            Max {
                score,
                id,
                block: slot,
            },
        );
    }

    /// Takes the block at place `at` out of the order and the slab (the slab's last block
    /// moves into its slot). Does not reindex.
    fn remove_block(&mut self, at: usize) -> Vec<I> {
        let slot = self.maxes.remove(at).block;
        let last = (self.slab.len() - 1) as u32;
        if slot != last {
            let moved = self
                .maxes
                .iter_mut()
                .find(|m| m.block == last)
                .expect("every block has a maximum");
            moved.block = slot;
        }
        self.slab.swap_remove(slot as usize)
    }

    /// Drops every empty block, renumbering the slab.
    fn drop_empty_blocks(&mut self) {
        let mut slots = Vec::with_capacity(self.slab.len());
        let mut next = 0;
        for block in &self.slab {
            slots.push(if block.is_empty() { u32::MAX } else { next });
            next += u32::from(!block.is_empty());
        }
        self.slab.retain(|block| !block.is_empty());
        self.maxes.retain_mut(|m| {
            m.block = slots[m.block as usize];
            m.block != u32::MAX
        });
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
        if b == self.count() {
            return (b, 0);
        }
        let p = search_block(arena, self.block(b), |id| pred(arena.score(id), id));
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
        match I::position(self.block(b), I::new(id)) {
            Some(p) => (b, p),
            None => unreachable!("id {id} is not in the block its key selects"),
        }
    }

    /// The rank of position `(block, offset)`.
    pub(crate) fn rank_at(&self, (block, offset): (usize, usize)) -> usize {
        if block == self.count() {
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
        if b == self.count() {
            return (b, 0);
        }
        // Inside the block, each probe reads the entry's score, and its member only on a tie.
        let p = search_block(
            arena,
            self.block(b),
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
        Some(self.block(b)[p].get())
    }

    /// Inserts `id`, whose arena entry holds `(score, member)` (the caller's copy of its
    /// key, so the entry is not decoded again), which must be absent.
    pub(crate) fn insert(&mut self, arena: &Arena, id: u32, score: f64, member: &[u8]) {
        let id = I::new(id);
        if self.slab.is_empty() {
            self.insert_block(0, vec![id], score);
            self.len = 1;
            self.reindex();
            return;
        }
        let (mut b, mut p) = self.locate(arena, score, member);
        if b == self.count() {
            b -= 1;
            p = self.block(b).len();
        }
        let mut structural = false;
        if self.block(b).len() == BLOCK_MAX {
            if p == 0 || p == BLOCK_MAX {
                // At either edge of a full block (sorted loads, pops):
                // start a new block there and keep this one full.
                let at = if p == 0 { b } else { b + 1 };
                self.insert_block(at, vec![id], score);
                self.len += 1;
                self.reindex();
                return;
            }
            // Both halves get room for a quarter more, so the insert that follows (and
            // the next few) grow neither.
            let left = self.block_mut(b);
            let mut right = Vec::with_capacity(BLOCK_MAX / 2 + BLOCK_MAX / 8);
            right.extend_from_slice(&left[BLOCK_MAX / 2..]);
            left.truncate(BLOCK_MAX / 2);
            left.shrink_to(BLOCK_MAX / 2 + BLOCK_MAX / 8);
            // The right half ends where the whole block did.
            self.insert_block(b + 1, right, self.maxes[b].score);
            self.set_max(arena, b);
            if p > BLOCK_MAX / 2 {
                b += 1;
                p -= BLOCK_MAX / 2;
            }
            structural = true;
        }
        let block = self.block_mut(b);
        reserve_one(block);
        block.insert(p, id);
        if p + 1 == block.len() {
            let max = &mut self.maxes[b];
            (max.score, max.id) = (score, id);
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
        self.len -= 1;
        let block = self.block_mut(b);
        block.remove(p);
        if block.len() < BLOCK_MIN {
            self.rebalance(arena, b);
            return;
        }
        let last = p == block.len();
        trim(block);
        if last {
            self.set_max(arena, b);
        }
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
            let block = self.block_mut(b);
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
        self.drop_empty_blocks();
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
        if self.block(b).is_empty() {
            self.remove_block(b);
        } else if !self.merge_if_short(arena, b) {
            trim(self.block_mut(b));
            self.set_max(arena, b);
        }
        self.shrink_lists();
        self.reindex();
    }

    /// Merges block `b` (if it exists, is short and has a neighbour) with
    /// the next block, or the previous one for the last block, splitting an
    /// overfull result in two. Does not reindex. Returns whether it merged.
    fn merge_if_short(&mut self, arena: &Arena, b: usize) -> bool {
        let count = self.count();
        if b >= count || self.block(b).len() >= BLOCK_MIN || count < 2 {
            return false;
        }
        let left = if b + 1 < count { b } else { b - 1 };
        let right = self.remove_block(left + 1);
        let block = self.block_mut(left);
        block.reserve_exact(right.len());
        block.extend_from_slice(&right);
        if block.len() > BLOCK_MAX {
            let tail = block.split_off(block.len() / 2);
            block.shrink_to(block.len() + block.len() / 4);
            // (The right block's maximum may be stale: a removal that left it short.)
            let last = *tail.last().expect("half of a full block");
            self.insert_block(left + 1, tail, arena.score(last.get()));
        }
        self.set_max(arena, left);
        true
    }

    /// Sets the maximum of the `b`th block from its last id.
    fn set_max(&mut self, arena: &Arena, b: usize) {
        let id = *self.block(b).last().expect("blocks are never empty");
        let max = &mut self.maxes[b];
        (max.score, max.id) = (arena.score(id.get()), id);
    }

    /// Gives back spare room in the slab and maxima after shrinking.
    fn shrink_lists(&mut self) {
        let count = self.count();
        if self.slab.capacity() > 8 && self.slab.capacity() > count * 2 {
            self.slab.shrink_to(count + count / 4);
            self.maxes.shrink_to(count + count / 4);
        }
    }

    fn reindex(&mut self) {
        self.sizes.take();
    }

    /// The positional index, built first if a change dropped it.
    #[inline]
    fn sizes(&self) -> &Fenwick {
        self.sizes
            .get_or_init(|| Fenwick::over(self.ordered().map(Vec::len)))
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
        for max in &mut self.maxes {
            let block = &mut self.slab[max.block as usize];
            for id in block.iter_mut() {
                *id = I::new(f(id.get()));
            }
            max.id = *block.last().expect("blocks are never empty");
        }
    }

    /// Every id in order.
    pub(crate) fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.ordered().flatten().map(|id| id.get())
    }

    /// The same index with `u32` ids.
    pub(crate) fn widen(&self) -> Blocks<u32> {
        let mut slab = Vec::with_capacity(self.slab.len());
        slab.extend(self.slab.iter().map(|blk| {
            let mut wide = Vec::with_capacity(blk.capacity());
            wide.extend(blk.iter().map(|id| id.get()));
            wide
        }));
        Blocks {
            slab,
            maxes: self
                .maxes
                .iter()
                .map(|m| Max {
                    score: m.score,
                    id: m.id.get(),
                    block: m.block,
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
        ids.extend(self.ordered().flatten());
        self.slab = Vec::new();
        self.maxes = Vec::new();
        // The slab in order again.
        self.slab = ids.chunks(BLOCK_MAX).map(<[I]>::to_vec).collect();
        self.maxes = self
            .slab
            .iter()
            .zip(0..)
            .map(|(blk, block)| {
                let id = *blk.last().expect("chunks are non-empty");
                Max {
                    score: arena.score(id.get()),
                    id,
                    block,
                }
            })
            .collect();
        // Built now, with exactly its capacity (the optimized layout).
        self.sizes = OnceLock::from(Fenwick::over(self.slab.iter().map(Vec::len)));
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
        self.slab.capacity() * std::mem::size_of::<Vec<I>>()
            + self
                .slab
                .iter()
                .map(|b| b.capacity() * std::mem::size_of::<I>())
                .sum::<usize>()
            + self.maxes.capacity() * std::mem::size_of::<Max<I>>()
            + self.sizes.get().map_or(0, Fenwick::memory_bytes)
    }

    /// Checks order, block sizes, maxima and the positional index.
    pub(crate) fn validate(&self, arena: &Arena) {
        assert_eq!(self.slab.len(), self.maxes.len(), "one maximum per block");
        let mut slots: Vec<u32> = self.maxes.iter().map(|m| m.block).collect();
        slots.sort_unstable();
        assert!(
            slots.iter().copied().eq(0..self.slab.len() as u32),
            "each slab block in the order once"
        );
        let mut total = 0;
        for (b, block) in self.ordered().enumerate() {
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
        let index = self.index;
        while self.front.1 == index.block(self.front.0).len() {
            self.front = (self.front.0 + 1, 0);
        }
        let id = index.block(self.front.0)[self.front.1].get();
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
        let index = self.index;
        while self.back.1 == 0 {
            self.back.0 -= 1;
            self.back.1 = index.block(self.back.0).len();
        }
        self.back.1 -= 1;
        self.back_rank -= 1;
        Some(index.block(self.back.0)[self.back.1].get())
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

    /// Splits in the middle of blocks, removals that empty or merge blocks (moving the
    /// slab's last block into the hole) and range removals across blocks keep the slab and
    /// the order in step with a sorted model.
    #[test]
    fn slab_follows_splits_merges_and_range_removals() {
        let mut arena = Arena::with_capacity(0);
        let mut blocks: Blocks<u32> = Blocks::default();
        let mut model: Vec<(u64, u32)> = Vec::new();
        let key = |i: u64| (i * 7919) % 10007;
        for i in 0..6 * BLOCK_MAX as u64 {
            let (k, member) = (key(i), format!("m{i:05}"));
            let id = arena.push(member.as_bytes(), k as f64);
            blocks.insert(&arena, id, k as f64, member.as_bytes());
            model.push((k, id));
        }
        model.sort_unstable();
        blocks.validate(&arena);
        let check = |blocks: &Blocks<u32>, model: &[(u64, u32)]| {
            blocks.validate(&arena);
            assert!(blocks.ids().eq(model.iter().map(|&(_, id)| id)));
        };
        check(&blocks, &model);
        // Remove most of the first blocks one by one: merges and emptied blocks.
        let mut n = 0;
        model.retain(|&(k, id)| {
            n += 1;
            if n % 5 == 0 || n > 3 * BLOCK_MAX {
                return true;
            }
            let member = arena.member(id).to_vec();
            blocks.remove(&arena, id, k as f64, &member);
            false
        });
        check(&blocks, &model);
        let removed = blocks.remove_range(&arena, 100..100 + 2 * BLOCK_MAX);
        let expect: Vec<u32> = model
            .drain(100..100 + 2 * BLOCK_MAX)
            .map(|(_, id)| id)
            .collect();
        assert_eq!(removed, expect);
        check(&blocks, &model);
    }

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
