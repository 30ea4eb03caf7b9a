//! Goblin's list engine (Redis's list type): a deque of packed nodes, with Redis 7.2's
//! two encodings and the conversions of its t_list.c.
//!
//! * `node`: one packed buffer of elements, integers narrowed as listpack narrows them.
//! * `quick`: the deque of nodes ("quicklist").
//!
//! A small list is one node held inline ("listpack"); it becomes a quicklist when a
//! write would take it past `list-max-listpack-size`, and a quicklist of one node
//! becomes a listpack again when it shrinks to half the limit (7.2's hysteresis).
//!
//! # Layout and bytes per element
//!
//! ```text
//! List: 24 bytes inline (in the keyspace entry's value)
//!
//! listpack: one node, inline
//!   buf (Vec<u8>): [count: u32][lp_bytes: u32][code|data]...      (see `node`)
//!   cost: 8 + 24 inline + the entries; 10 elements of "e:1234567" cost 8 + 100
//!
//! quicklist: Box -> { nodes: VecDeque<Node> (24 B per slot), len: usize,
//!                     tail: Vec<u32> (the tail node's offsets, after a back pop) }
//!   each node: one buffer as above, filled to 8 KiB of Redis's listpack size
//!   (-2, the default) or to a count (a positive fill)
//!   cost: 1 + len per element below 240 B; a 16-byte element is 17 B, plus
//!         (8 + 24 + malloc's 16) / ~470 elements per node = 0.1 B
//! ```
//!
//! Pushes and pops at either end touch one end node: O(1) in the list's length. Entries
//! read front to back only, so a quicklist keeps the offsets of its tail node's elements
//! (4 B each, built by the first back pop, kept up by back pushes and pops): a back pop
//! is O(1) too, amortized. A listpack's back pop walks its codes (at most a few hundred).
//! LINDEX, LSET, LRANGE and LINSERT skip whole nodes by their counts from the nearer end.
//!
//! Under `list-compress-depth` a quicklist holds its interior nodes LZF-compressed as
//! Redis does (see `quick`), so reads hand elements to a callback: an element of a
//! compressed node lives in a temporary copy for the call.

mod node;
mod quick;
#[cfg(test)]
mod tests;

use std::ops::ControlFlow;

use crate::set::Member;
use node::{member_eq, Encoded, Node};
use quick::Quick;

/// Redis's byte limits per node for fills -1..-5.
const OPTIMIZATION_LEVEL: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
/// The byte cap a count fill still honours (Redis's `SIZE_SAFETY_LIMIT`).
const SIZE_SAFETY_LIMIT: usize = 8192;

/// Redis's default packed threshold: 1 GiB.
const DEFAULT_PACKED_THRESHOLD: usize = 1 << 30;

/// Elements of at least this many bytes go in a plain node of their own (Redis's
/// `packed_threshold`, set by DEBUG QUICKLIST-PACKED-THRESHOLD; process-wide, as Redis's).
static PACKED_THRESHOLD: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(DEFAULT_PACKED_THRESHOLD);

/// Sets the packed threshold (0: back to the default 1 GiB); false, and nothing changes,
/// for 4 GiB less 1 MiB or more (Redis's quicklistisSetPackedThreshold).
pub fn set_packed_threshold(bytes: u64) -> bool {
    if bytes > (1u64 << 32) - (1 << 20) {
        return false;
    }
    let bytes = if bytes == 0 {
        DEFAULT_PACKED_THRESHOLD
    } else {
        bytes as usize
    };
    PACKED_THRESHOLD.store(bytes, std::sync::atomic::Ordering::Relaxed);
    true
}

fn packed_threshold() -> usize {
    PACKED_THRESHOLD.load(std::sync::atomic::Ordering::Relaxed)
}

/// The list parameters, as Redis's `list-max-listpack-size` and `list-compress-depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListConfig {
    /// `list-max-listpack-size` (alias `list-max-ziplist-size`, default -2): a negative
    /// value -1..-5 caps a node at 4, 8, 16, 32 or 64 KiB; a positive one at that many
    /// entries.
    pub max_listpack_size: i64,
    /// `list-compress-depth` (default 0): a quicklist made under depth `d` keeps every
    /// node more than `d` nodes from both ends LZF-compressed; 0 compresses none.
    pub compress_depth: i64,
}

impl Default for ListConfig {
    fn default() -> ListConfig {
        ListConfig {
            max_listpack_size: -2,
            compress_depth: 0,
        }
    }
}

/// One quicklist node as an RDB record carries it (QUICKLIST_2).
#[derive(Debug)]
pub enum StoredNode<'a> {
    /// A readable node: its elements (one, for a plain node).
    Elements {
        /// Whether the node is plain (one large element).
        plain: bool,
        /// The elements, in order.
        items: Vec<Member<'a>>,
    },
    /// A compressed node: Redis's node bytes as LZF.
    Compressed {
        /// Whether the node is plain (the bytes are its element, not a listpack).
        plain: bool,
        /// The length the LZF data expands to.
        raw_len: usize,
        /// The LZF data.
        lzf: &'a [u8],
    },
}

/// The figures DEBUG OBJECT prints for a quicklist (Redis's `ql_*` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuicklistStats {
    /// Number of nodes.
    pub nodes: usize,
    /// The compress depth the quicklist was made with.
    pub compress_depth: u16,
    /// Sum of Redis's node sizes (listpack bytes, or a plain node's element length),
    /// as if none were compressed.
    pub uncompressed_size: usize,
}

/// The byte and entry limits of a node under `fill` (Redis's `quicklistNodeLimit`).
fn node_limit(fill: i64) -> (Option<usize>, Option<usize>) {
    if fill >= 0 {
        (None, Some(fill.max(1) as usize))
    } else {
        let level = ((-fill - 1) as usize).min(OPTIMIZATION_LEVEL.len() - 1);
        (Some(OPTIMIZATION_LEVEL[level]), None)
    }
}

/// Whether a node of `bytes` listpack bytes and `count` entries is over the limit of
/// `fill` (Redis's `quicklistNodeExceedsLimit`).
fn exceeds_limit(fill: i64, bytes: usize, count: usize) -> bool {
    match node_limit(fill) {
        (Some(size), _) => bytes > size,
        (None, Some(n)) => bytes > SIZE_SAFETY_LIMIT || count > n,
        (None, None) => false,
    }
}

/// A list's form, named as `OBJECT ENCODING` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListEncoding {
    /// One packed node.
    Listpack,
    /// A deque of packed nodes.
    Quicklist,
}

impl ListEncoding {
    /// The name `OBJECT ENCODING` replies with.
    pub fn as_str(&self) -> &'static str {
        match self {
            ListEncoding::Listpack => "listpack",
            ListEncoding::Quicklist => "quicklist",
        }
    }
}

/// One end of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The head (index 0, LPUSH / LPOP).
    Front,
    /// The tail (index -1, RPUSH / RPOP).
    Back,
}

impl End {
    /// The other end.
    pub fn other(self) -> End {
        match self {
            End::Front => End::Back,
            End::Back => End::Front,
        }
    }
}

/// LPUSH / RPUSH of `items` at `end` of a listpack list where a key's record holds its
/// entries ([`List::packed`]'s bytes), without rebuilding the list: when the push leaves it
/// a listpack, by [`List::push`]'s rule, the entries with `items` pushed are written into
/// `out` (cleared first) and the list's new length is returned; None, `out` untouched,
/// when the push would convert it to a quicklist (the caller's general path pushes then).
pub fn push_to_listpack_entries(
    entries: &[u8],
    end: End,
    items: &[&[u8]],
    cfg: &ListConfig,
    out: &mut Vec<u8>,
) -> Option<usize> {
    let (count, lp_bytes, _) = node::walk_entries(entries, 0);
    let add: usize = items.iter().map(|s| s.len()).sum();
    let len = count + items.len();
    if exceeds_limit(cfg.max_listpack_size, lp_bytes + add, len) {
        return None;
    }
    out.clear();
    out.reserve(entries.len() + add + 5 * items.len());
    match end {
        // LPUSH's order: the last item ends up at the front.
        End::Front => {
            items.iter().rev().for_each(|s| node::put_entry(out, s));
            out.extend_from_slice(entries);
        }
        End::Back => {
            out.extend_from_slice(entries);
            items.iter().for_each(|s| node::put_entry(out, s));
        }
    }
    Some(len)
}

/// A list of byte strings.
#[derive(Clone, Debug)]
pub struct List {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Pack(Node),
    Quick(Box<Quick>),
}

impl Default for List {
    fn default() -> List {
        List::new()
    }
}

impl List {
    /// An empty list in the listpack form.
    pub fn new() -> List {
        List {
            repr: Repr::Pack(Node::default()),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Pack(n) => n.count(),
            Repr::Quick(q) => q.len(),
        }
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current form.
    pub fn encoding(&self) -> ListEncoding {
        match &self.repr {
            Repr::Pack(_) => ListEncoding::Listpack,
            Repr::Quick(_) => ListEncoding::Quicklist,
        }
    }

    /// A listpack's entries (without the node's count and size, which they give), for a
    /// caller that keeps a small list elsewhere (the key table, inside the key's record);
    /// None for a quicklist.
    pub fn packed(&self) -> Option<&[u8]> {
        match &self.repr {
            Repr::Pack(n) => n.entry_bytes(),
            Repr::Quick(_) => None,
        }
    }

    /// The listpack whose entries [`List::packed`] gave.
    pub fn from_packed(entries: &[u8]) -> List {
        List {
            repr: Repr::Pack(Node::from_entry_bytes(entries)),
        }
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        match &self.repr {
            Repr::Pack(n) => n.memory_bytes(),
            Repr::Quick(q) => std::mem::size_of::<Quick>() + q.memory_bytes(),
        }
    }

    /// Converts a listpack that `items` more would take past the limit into a quicklist
    /// (Redis's `listTypeTryConvertListpack`: the element bytes as they arrive, one entry
    /// each). Every write that adds calls it; LINSERT and LSET call it first themselves,
    /// as Redis converts before it finds the pivot or checks the index.
    pub fn prepare_push(&mut self, items: &[&[u8]], cfg: &ListConfig) {
        let Repr::Pack(node) = &mut self.repr else {
            return;
        };
        let add: usize = items.iter().map(|s| s.len()).sum();
        if exceeds_limit(
            cfg.max_listpack_size,
            node.lp_bytes() + add,
            node.count() + items.len(),
        ) {
            let node = std::mem::take(node);
            self.repr = Repr::Quick(Box::new(Quick::from_node(node, cfg.compress_depth)));
        }
    }

    /// Converts a quicklist of one node back to a listpack when it is within the limit,
    /// or within half of it after a removal (Redis's `listTypeTryConvertQuicklist`).
    fn shrink_check(&mut self, cfg: &ListConfig, shrinking: bool) {
        let Repr::Quick(q) = &mut self.repr else {
            return;
        };
        let Some(node) = q.single_node() else {
            return;
        };
        let (mut size, mut count) = node_limit(cfg.max_listpack_size);
        if shrinking {
            size = size.map(|s| s / 2);
            count = count.map(|c| c / 2);
        }
        if size.is_some_and(|s| node.lp_bytes() > s) || count.is_some_and(|c| q.len() > c) {
            return;
        }
        let q = std::mem::take(q);
        self.repr = Repr::Pack(q.into_node());
    }

    /// Pushes `items` one after another at `end` (LPUSH's order: the last item ends up at
    /// the front).
    pub fn push(&mut self, end: End, items: &[&[u8]], cfg: &ListConfig) {
        self.prepare_push(items, cfg);
        for s in items {
            match &mut self.repr {
                Repr::Pack(n) => match end {
                    End::Front => n.insert(0, Encoded::of(s)),
                    End::Back => n.insert(n.count(), Encoded::of(s)),
                },
                Repr::Quick(q) => q.push(end, s, cfg.max_listpack_size),
            }
        }
    }

    /// Builds a list from elements in order, each node filled as pushes fill it, in the
    /// form Redis settles a loaded list in.
    pub fn from_elements<'a>(items: impl IntoIterator<Item = &'a [u8]>, cfg: &ListConfig) -> List {
        let mut q = Quick::new(cfg.compress_depth);
        for s in items {
            q.push(End::Back, s, cfg.max_listpack_size);
        }
        let mut list = List {
            repr: Repr::Quick(Box::new(q)),
        };
        list.shrink_check(cfg, false);
        list
    }

    /// Removes and returns up to `n` elements from `end`, in pop order.
    pub fn pop(&mut self, end: End, n: usize, cfg: &ListConfig) -> Vec<Vec<u8>> {
        let n = n.min(self.len());
        let popped = match &mut self.repr {
            Repr::Pack(node) => (0..n)
                .map(|_| match end {
                    End::Front => node.take(0),
                    End::Back => node.take(node.count() - 1),
                })
                .collect(),
            Repr::Quick(q) => (0..n).filter_map(|_| q.pop(end)).collect(),
        };
        self.shrink_check(cfg, true);
        popped
    }

    /// Calls `f` with element `i` (< len) and returns what it returns.
    pub fn get<R>(&self, i: usize, f: impl FnOnce(Member<'_>) -> R) -> R {
        match &self.repr {
            Repr::Pack(n) => f(n.get(i)),
            Repr::Quick(q) => q.get(i, f),
        }
    }

    /// Calls `f` with the elements from index `from` to the end, in order, until it
    /// breaks.
    pub fn each_from(&self, from: usize, mut f: impl FnMut(Member<'_>) -> ControlFlow<()>) {
        match &self.repr {
            Repr::Pack(n) => {
                let _ = n.iter_from(from.min(n.count())).try_for_each(&mut f);
            }
            Repr::Quick(q) => {
                let _ = q.each_from(from, f);
            }
        }
    }

    /// Calls `f` with every element from the back to the front, until it breaks.
    pub fn each_rev(&self, mut f: impl FnMut(Member<'_>) -> ControlFlow<()>) {
        match &self.repr {
            Repr::Pack(n) => {
                let in_node: Vec<Member<'_>> = n.iter_from(0).collect();
                let _ = in_node.into_iter().rev().try_for_each(&mut f);
            }
            Repr::Quick(q) => q.each_rev(f),
        }
    }

    /// Every element copied out, in order.
    pub fn to_vecs(&self) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(self.len());
        self.each_from(0, |m| {
            out.push(m.to_vec());
            ControlFlow::Continue(())
        });
        out
    }

    /// Each node, front to back, as Redis's QUICKLIST_2 record writes it: a compressed
    /// node as its LZF blob, any other as its elements.
    pub fn stored_nodes(&self) -> Vec<StoredNode<'_>> {
        fn elements(n: &Node) -> StoredNode<'_> {
            StoredNode::Elements {
                plain: n.plain(),
                items: n.iter_from(0).collect(),
            }
        }
        match &self.repr {
            Repr::Pack(n) => vec![elements(n)],
            Repr::Quick(q) => q
                .nodes()
                .map(|n| match n.lzf() {
                    Some((raw_len, lzf)) => StoredNode::Compressed {
                        plain: n.plain(),
                        raw_len,
                        lzf,
                    },
                    None => elements(n),
                })
                .collect(),
        }
    }

    /// The nodes of a quicklist (None for a listpack).
    pub fn quicklist_nodes(&self) -> Option<usize> {
        match &self.repr {
            Repr::Quick(q) => Some(q.nodes().count()),
            Repr::Pack(_) => None,
        }
    }

    /// The `ql_*` figures of a quicklist (None for a listpack).
    pub fn quicklist_stats(&self) -> Option<QuicklistStats> {
        let Repr::Quick(q) = &self.repr else {
            return None;
        };
        Some(QuicklistStats {
            nodes: q.nodes().count(),
            compress_depth: q.depth(),
            uncompressed_size: q.nodes().map(Node::redis_sz).sum(),
        })
    }

    /// Replaces element `i` (< len) with `s` (LSET).
    pub fn set(&mut self, i: usize, s: &[u8], cfg: &ListConfig) {
        self.prepare_push(&[s], cfg);
        match &mut self.repr {
            Repr::Pack(n) => {
                n.remove(i, 1);
                n.insert(i, Encoded::of(s));
            }
            Repr::Quick(q) => q.replace(i, s, cfg.max_listpack_size),
        }
        self.shrink_check(cfg, true);
    }

    /// Inserts `s` next to element `pivot` (< len), after it or before it (LINSERT).
    pub fn insert(&mut self, pivot: usize, after: bool, s: &[u8], cfg: &ListConfig) {
        self.prepare_push(&[s], cfg);
        match &mut self.repr {
            Repr::Pack(n) => n.insert(pivot + usize::from(after), Encoded::of(s)),
            Repr::Quick(q) => q.insert(pivot, after, s, cfg.max_listpack_size),
        }
    }

    /// Removes `n` elements from index `i` (`i + n <= len`) (LTRIM).
    pub fn remove_range(&mut self, i: usize, n: usize, cfg: &ListConfig) {
        match &mut self.repr {
            Repr::Pack(node) => node.remove(i, n),
            Repr::Quick(q) => q.remove(i, n),
        }
        self.shrink_check(cfg, true);
    }

    /// Removes up to `limit` elements equal to `value`, scanning from the front or the
    /// back (LREM); returns how many were removed.
    pub fn remove_value(
        &mut self,
        value: &[u8],
        from_back: bool,
        limit: usize,
        cfg: &ListConfig,
    ) -> usize {
        let e = Encoded::of(value);
        let removed = match &mut self.repr {
            Repr::Pack(node) => {
                let mut q = Quick::from_node(std::mem::take(node), 0);
                let removed = q.remove_where(from_back, limit, |m| member_eq(m, e));
                *node = q.into_node();
                removed
            }
            Repr::Quick(q) => q.remove_where(from_back, limit, |m| member_eq(m, e)),
        };
        self.shrink_check(cfg, true);
        removed
    }

    /// Whether element `m` reads as the bytes `value`.
    pub fn element_eq(m: Member, value: &[u8]) -> bool {
        member_eq(m, Encoded::of(value))
    }

    /// Checks every internal invariant, panicking on the first violation; for tests.
    pub fn validate(&self) {
        match &self.repr {
            Repr::Pack(n) => n.validate(),
            Repr::Quick(q) => q.validate(),
        }
    }
}
