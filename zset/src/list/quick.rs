//! The quicklist form: a deque of packed nodes, each filled up to
//! `list-max-listpack-size` as Redis 7.2's quicklist fills them (a byte limit for a
//! negative fill, an entry count for a positive one), an element larger than a node's
//! limit alone in a plain node, with the element total kept so an index is found by
//! skipping whole nodes by their counts, from the nearer end. Inserts, replacements,
//! splits and merges follow quicklist.c's choices, so nodes (and with them the
//! listpack / quicklist conversions) come out as in Redis.
//!
//! Under a compress depth `d` (`list-compress-depth`, fixed when the quicklist is made,
//! as Redis fixes it), every node more than `d` nodes from both ends is held
//! LZF-compressed when Redis's rules let it compress (see `Node::compress`). Where
//! quicklist.c decompresses nodes for use and recompresses them (`__quicklistCompress`
//! after a node is added or deleted, `quicklistDecompressNodeForUse` and
//! `quicklistRecompressOnly` around an insert, a replacement, a split, a merge or a
//! partial deletion), a write here decompresses the nodes it changes and then settles
//! the nodes near both ends and the ones it touched (`Quick::settle`). One difference: a
//! raw interior node Redis failed to compress and then grew by an insert stays raw
//! in Redis until an iterator passes over it; here it is compressed at once. Reads
//! decompress a node into a temporary copy and leave the list as it was, as Redis's
//! iterators leave it.

use std::collections::VecDeque;
use std::ops::{ControlFlow, Range};

use super::node::{lp_entry_len, Encoded, Node, LP_OVERHEAD};
use super::{exceeds_limit, node_limit, packed_threshold, End, SIZE_SAFETY_LIMIT};
use crate::set::Member;

/// Redis's estimate of a listpack's growth on top of the element bytes.
const SIZE_ESTIMATE_OVERHEAD: usize = 8;

/// A deque of nodes.
#[derive(Clone, Debug, Default)]
pub(super) struct Quick {
    nodes: VecDeque<Node>,
    len: usize,
    /// The offsets of the tail node's elements, built by a pop at the back and kept while
    /// only pushes and pops at the back change that node (empty otherwise), so back pops
    /// do not walk the node's codes: a node's entries read front to back only.
    tail: Vec<u32>,
    /// The compress depth: nodes more than this many from both ends are compressed
    /// (0: none is).
    depth: u16,
}

/// Redis's `COMPRESS_MAX`: the largest compress depth a quicklist keeps.
const COMPRESS_MAX: i64 = (1 << 16) - 1;

/// Nodes past the depth at each end that a settle also checks: an insert adds at most two
/// nodes, so a node leaving the end's depth is at most two past it.
const SETTLE_MARGIN: usize = 3;

/// Whether an element of `len` bytes goes in a plain node of its own (Redis's
/// `isLargeElement`): over the byte limit, or over 8 KiB under a count fill, or at least
/// the packed threshold.
fn is_large(len: usize, fill: i64) -> bool {
    len >= packed_threshold()
        || match node_limit(fill) {
            (Some(size), _) => len > size,
            _ => len > SIZE_SAFETY_LIMIT,
        }
}

/// Whether `node` takes one more element of `len` bytes (Redis's
/// `_quicklistNodeAllowInsert`).
fn allows_insert(node: &Node, len: usize, fill: i64) -> bool {
    !node.plain()
        && !is_large(len, fill)
        && !exceeds_limit(
            fill,
            node.lp_bytes() + len + SIZE_ESTIMATE_OVERHEAD,
            node.count() + 1,
        )
}

/// Whether nodes `a` and `b` fit one (Redis's `_quicklistNodeAllowMerge`).
fn allows_merge(a: &Node, b: &Node, fill: i64) -> bool {
    !a.plain()
        && !b.plain()
        && !exceeds_limit(
            fill,
            a.lp_bytes() + b.lp_bytes() - LP_OVERHEAD,
            a.count() + b.count(),
        )
}

impl Quick {
    /// An empty quicklist with compress depth `depth` (clamped as Redis's
    /// `quicklistSetCompressDepth` clamps it).
    pub(super) fn new(depth: i64) -> Quick {
        Quick {
            depth: depth.clamp(0, COMPRESS_MAX) as u16,
            ..Quick::default()
        }
    }

    /// A quicklist holding one node (the listpack form's buffer).
    pub(super) fn from_node(node: Node, depth: i64) -> Quick {
        let mut q = Quick::new(depth);
        q.len = node.count();
        if q.len > 0 {
            q.nodes.push_back(node);
        }
        q
    }

    /// The compress depth.
    pub(super) fn depth(&self) -> u16 {
        self.depth
    }

    /// Whether node `ni` is more than the depth from both ends (where nodes compress).
    fn interior(&self, ni: usize) -> bool {
        let d = usize::from(self.depth);
        d > 0 && ni >= d && ni + d < self.nodes.len()
    }

    /// Makes node `ni` readable in place (quicklist.c's `quicklistDecompressNodeForUse`).
    fn open(&mut self, ni: usize) {
        if let Some(n) = self.nodes.get_mut(ni) {
            n.decompress();
        }
    }

    /// Brings the nodes near both ends and the nodes in `touched` to their form: interior
    /// ones compressed (where they compress), the others readable. Redis's
    /// `__quicklistCompress` after a node is added or removed, and its recompression of
    /// the nodes a write decompressed.
    fn settle(&mut self, touched: Range<usize>) {
        if self.depth == 0 {
            return;
        }
        let n = self.nodes.len();
        let reach = (usize::from(self.depth) + SETTLE_MARGIN).min(n);
        let ends = (0..reach).chain(n - reach..n);
        for ni in ends.chain(touched.start.min(n)..touched.end.min(n)) {
            if self.interior(ni) {
                self.nodes[ni].compress();
            } else {
                self.nodes[ni].decompress();
            }
        }
    }

    /// The only node, when there is exactly one and it is packed.
    pub(super) fn single_node(&self) -> Option<&Node> {
        (self.nodes.len() == 1 && !self.nodes[0].plain()).then(|| &self.nodes[0])
    }

    /// Takes the only node out (the caller checked [`Quick::single_node`]).
    pub(super) fn into_node(self) -> Node {
        self.nodes.into_iter().next().unwrap_or_default()
    }

    /// Number of elements.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The nodes, front to back.
    pub(super) fn nodes(&self) -> impl DoubleEndedIterator<Item = &Node> + '_ {
        self.nodes.iter()
    }

    /// Heap bytes: the node table and every node.
    pub(super) fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.tail.capacity() * 4
            + self.nodes.iter().map(Node::memory_bytes).sum::<usize>()
    }

    /// The node holding element `i` (< len) and the index inside it, found from the
    /// nearer end.
    fn locate(&self, i: usize) -> (usize, usize) {
        if i < self.len / 2 {
            let mut rest = i;
            for (ni, n) in self.nodes.iter().enumerate() {
                if rest < n.count() {
                    return (ni, rest);
                }
                rest -= n.count();
            }
        } else {
            let mut after = self.len - i;
            for (ni, n) in self.nodes.iter().enumerate().rev() {
                if after <= n.count() {
                    return (ni, n.count() - after);
                }
                after -= n.count();
            }
        }
        unreachable!("index {i} below the length {}", self.len)
    }

    /// Pushes `s` at one end.
    pub(super) fn push(&mut self, end: End, s: &[u8], fill: i64) {
        let e = Encoded::of(s);
        self.len += 1;
        if end == End::Front && self.nodes.len() <= 1 {
            self.tail.clear();
        }
        if is_large(s.len(), fill) {
            if end == End::Back {
                self.tail.clear();
            }
            match end {
                End::Front => self.nodes.push_front(Node::new_plain(e)),
                End::Back => self.nodes.push_back(Node::new_plain(e)),
            };
            return self.settle(0..0);
        }
        let at_end = match end {
            End::Front => self.nodes.front_mut(),
            End::Back => self.nodes.back_mut(),
        };
        match at_end {
            Some(n) if allows_insert(n, s.len(), fill) => match end {
                End::Front => n.insert(0, e),
                End::Back => {
                    if !self.tail.is_empty() && self.tail.len() == n.count() {
                        self.tail.push(n.end_offset() as u32);
                    } else {
                        self.tail.clear();
                    }
                    n.insert(n.count(), e)
                }
            },
            full => {
                if let Some(n) = full {
                    n.shrink();
                }
                let mut node = Node::default();
                node.insert(0, e);
                match end {
                    End::Front => self.nodes.push_front(node),
                    End::Back => {
                        self.tail.clear();
                        self.nodes.push_back(node)
                    }
                }
                self.settle(0..0);
            }
        }
    }

    /// Removes and returns the element at one end.
    pub(super) fn pop(&mut self, end: End) -> Option<Vec<u8>> {
        let v = match end {
            End::Front => {
                if self.nodes.len() == 1 {
                    self.tail.clear();
                }
                let node = self.nodes.front_mut()?;
                let v = node.take(0);
                if node.count() == 0 {
                    self.nodes.pop_front();
                    self.settle(0..0);
                }
                v
            }
            End::Back => {
                let node = self.nodes.back_mut()?;
                if self.tail.len() != node.count() {
                    self.tail = node.offsets();
                }
                let at = self.tail.pop().expect("one offset per element") as usize;
                let v = node.take_last_at(at);
                if node.count() == 0 {
                    self.nodes.pop_back();
                    self.settle(0..0);
                }
                v
            }
        };
        self.len -= 1;
        Some(v)
    }

    /// Calls `f` with element `i` (< len), read out of a temporary copy when its node is
    /// compressed.
    pub(super) fn get<R>(&self, i: usize, f: impl FnOnce(Member<'_>) -> R) -> R {
        let (ni, at) = self.locate(i);
        with_readable(&self.nodes[ni], |n| f(n.get(at)))
    }

    /// Calls `f` with the elements from `from`, in order, until it breaks.
    pub(super) fn each_from(
        &self,
        from: usize,
        mut f: impl FnMut(Member<'_>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if from >= self.len {
            return ControlFlow::Continue(());
        }
        let (first, at) = self.locate(from);
        for (k, node) in self.nodes.range(first..).enumerate() {
            let start = if k == 0 { at } else { 0 };
            with_readable(node, |n| n.iter_from(start).try_for_each(&mut f))?;
        }
        ControlFlow::Continue(())
    }

    /// Calls `f` with every element from the back to the front, until it breaks.
    pub(super) fn each_rev(&self, mut f: impl FnMut(Member<'_>) -> ControlFlow<()>) {
        for node in self.nodes.iter().rev() {
            let flow = with_readable(node, |n| {
                let in_node: Vec<Member<'_>> = n.iter_from(0).collect();
                in_node.into_iter().rev().try_for_each(&mut f)
            });
            if flow.is_break() {
                return;
            }
        }
    }

    /// Inserts `s` next to element `pivot` (< len), after it or before it, as Redis's
    /// `_quicklistInsert` does: into the pivot's node when it has room, else at the near
    /// end of the neighbour node, else into a node split at the pivot (merged with its
    /// neighbours where they fit); a large element in a plain node of its own.
    pub(super) fn insert(&mut self, pivot: usize, after: bool, s: &[u8], fill: i64) {
        self.tail.clear();
        let (ni, _) = self.locate(pivot);
        for k in ni.saturating_sub(1)..=ni + 1 {
            self.open(k);
        }
        self.insert_opened(pivot, after, s, fill);
        self.settle(ni.saturating_sub(2)..ni + 5);
    }

    /// [`Quick::insert`] once the pivot's node and its neighbours are readable.
    fn insert_opened(&mut self, pivot: usize, after: bool, s: &[u8], fill: i64) {
        let e = Encoded::of(s);
        let (ni, at) = self.locate(pivot);
        self.len += 1;
        let count = self.nodes[ni].count();
        let at_tail = after && at + 1 == count;
        let at_head = !after && at == 0;
        let split_at = at + usize::from(after);
        if is_large(s.len(), fill) {
            let plain = Node::new_plain(e);
            if self.nodes[ni].plain() || at_tail || at_head {
                self.nodes.insert(ni + usize::from(after), plain);
            } else {
                let tail = self.nodes[ni].split_off(split_at);
                self.nodes.insert(ni + 1, tail);
                self.nodes.insert(ni + 1, plain);
            }
            return;
        }
        let allows = |q: &Quick, k: usize| allows_insert(&q.nodes[k], s.len(), fill);
        if allows(self, ni) {
            self.nodes[ni].insert(split_at, e);
        } else if at_tail && ni + 1 < self.nodes.len() && allows(self, ni + 1) {
            self.nodes[ni + 1].insert(0, e);
        } else if at_head && ni > 0 && allows(self, ni - 1) {
            let prev = &mut self.nodes[ni - 1];
            prev.insert(prev.count(), e);
        } else if (at_tail && ni + 1 == self.nodes.len()) || (at_head && ni == 0) {
            let mut fresh = Node::default();
            fresh.insert(0, e);
            self.nodes.insert(ni + usize::from(after), fresh);
        } else {
            // Split at the pivot: the part past it (after) or before it (before) becomes
            // a new node beside the pivot's, and takes the element at its near end.
            let mut part = self.nodes[ni].split_off(split_at);
            let center = if after {
                part.insert(0, e);
                self.nodes.insert(ni + 1, part);
                ni
            } else {
                let node = &mut self.nodes[ni];
                node.insert(node.count(), e);
                self.nodes.insert(ni + 1, part);
                ni + 1
            };
            self.merge_around(center, fill);
        }
    }

    /// Merges around node `c` as Redis's `_quicklistMergeNodes`: the two before it, the two
    /// after it, then `c` with the one before and the result with the one after.
    fn merge_around(&mut self, mut c: usize, fill: i64) {
        let fits = |q: &Quick, a: usize| {
            a + 1 < q.nodes.len() && allows_merge(&q.nodes[a], &q.nodes[a + 1], fill)
        };
        if c >= 2 && fits(self, c - 2) {
            self.merge_pair(c - 2);
            c -= 1;
        }
        if fits(self, c + 1) {
            self.merge_pair(c + 1);
        }
        let target = if c >= 1 && fits(self, c - 1) {
            self.merge_pair(c - 1);
            c - 1
        } else {
            c
        };
        if fits(self, target) {
            self.merge_pair(target);
        }
    }

    /// Appends node `a + 1` to node `a`.
    fn merge_pair(&mut self, a: usize) {
        let mut b = self.nodes.remove(a + 1).expect("a node after");
        b.decompress();
        self.nodes[a].decompress();
        self.nodes[a].append(&b);
    }

    /// Replaces element `i` (< len) with `s`, as Redis's `quicklistReplaceEntry`: in place
    /// in a packed node that takes it; a plain node's element by a large one; otherwise an
    /// insert after the element and its removal.
    pub(super) fn replace(&mut self, i: usize, s: &[u8], fill: i64) {
        self.tail.clear();
        let (ni, at) = self.locate(i);
        self.open(ni);
        let node = &self.nodes[ni];
        let large = is_large(s.len(), fill);
        let in_place = if node.plain() {
            large
        } else {
            let old = node.get(at).with_bytes(lp_entry_len);
            let new_sz = (node.lp_bytes() + lp_entry_len(s)).saturating_sub(old);
            !large && !exceeds_limit(fill, new_sz, node.count())
        };
        if in_place {
            let node = &mut self.nodes[ni];
            node.remove(at, 1);
            node.insert(at, Encoded::of(s));
            self.settle(ni..ni + 1);
        } else {
            self.insert(i, true, s, fill);
            self.remove(i, 1);
        }
    }

    /// Removes `n` elements from index `i` (`i + n <= len`).
    pub(super) fn remove(&mut self, i: usize, mut n: usize) {
        if n == 0 {
            return;
        }
        self.tail.clear();
        self.len -= n;
        let (first, mut at) = self.locate_for_remove(i);
        let mut ni = first;
        while n > 0 {
            let node = &mut self.nodes[ni];
            let k = n.min(node.count() - at);
            n -= k;
            if k == node.count() {
                self.nodes.remove(ni);
            } else {
                node.decompress();
                node.remove(at, k);
                ni += 1;
            }
            at = 0;
        }
        self.settle(first..first + 2);
    }

    /// [`Quick::locate`] before the length was lowered.
    fn locate_for_remove(&self, i: usize) -> (usize, usize) {
        let mut rest = i;
        for (ni, n) in self.nodes.iter().enumerate() {
            if rest < n.count() {
                return (ni, rest);
            }
            rest -= n.count();
        }
        unreachable!("index {i} beyond the nodes")
    }

    /// Keeps the elements `f` accepts (visiting from the front or back), stopping after
    /// `limit` removals; returns how many were removed.
    pub(super) fn remove_where(
        &mut self,
        from_back: bool,
        limit: usize,
        mut f: impl FnMut(Member) -> bool,
    ) -> usize {
        self.tail.clear();
        let mut removed = 0;
        let order: Vec<usize> = if from_back {
            (0..self.nodes.len()).rev().collect()
        } else {
            (0..self.nodes.len()).collect()
        };
        let (mut emptied, mut changed) = (Vec::new(), Vec::new());
        for ni in order {
            if removed == limit {
                break;
            }
            let node = &mut self.nodes[ni];
            let hits: Vec<usize> = with_readable(node, |n| {
                n.iter_from(0)
                    .enumerate()
                    .filter(|(_, m)| f(*m))
                    .map(|(i, _)| i)
                    .collect()
            });
            if hits.is_empty() {
                continue;
            }
            node.decompress();
            let take: Vec<usize> = if from_back {
                hits.into_iter().rev().take(limit - removed).collect()
            } else {
                hits.into_iter().take(limit - removed).collect()
            };
            let mut sorted = take;
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            for i in &sorted {
                node.remove(*i, 1);
            }
            removed += sorted.len();
            if node.count() == 0 {
                emptied.push(ni);
            } else {
                changed.push(ni);
            }
        }
        emptied.sort_unstable_by(|a, b| b.cmp(a));
        for &ni in &emptied {
            self.nodes.remove(ni);
        }
        self.len -= removed;
        for ni in changed {
            let at = ni - emptied.iter().filter(|&&e| e < ni).count();
            self.settle(at..at + 1);
        }
        if !emptied.is_empty() {
            self.settle(0..0);
        }
        removed
    }

    /// Checks every node and the total, and that exactly the interior nodes that compress
    /// are compressed; for tests.
    pub(super) fn validate(&self) {
        let mut total = 0;
        for (ni, n) in self.nodes.iter().enumerate() {
            n.validate();
            assert!(n.count() > 0, "no empty node");
            total += n.count();
            if n.compressed() {
                assert!(self.interior(ni), "node {ni} compressed within the depth");
            } else if self.interior(ni) {
                assert!(!n.clone().compress(), "interior node {ni} left raw");
            }
        }
        assert_eq!(total, self.len, "length");
        if !self.tail.is_empty() {
            let back = self.nodes.back().expect("offsets of a tail node");
            assert_eq!(self.tail, back.offsets(), "tail offsets");
        }
    }
}

/// Calls `f` with `node` readable: itself, or a decompressed copy.
fn with_readable<R>(node: &Node, f: impl FnOnce(&Node) -> R) -> R {
    if node.compressed() {
        f(&node.decompressed())
    } else {
        f(node)
    }
}
