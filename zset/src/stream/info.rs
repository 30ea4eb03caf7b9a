//! What XINFO reports beyond the stored counters: tombstones in an id range, a group's lag,
//! and the node count of the radix tree Redis would index the nodes with; and the bytes a
//! B-tree map of the engine holds (MEMORY USAGE).

use super::{Group, Stream, StreamId};

impl Stream {
    /// Whether the ids `start..=end` may hold a deleted entry (Redis's
    /// streamRangeHasTombstones): the largest deleted id is known, is not before the first
    /// entry, and falls in the range. An empty stream has none.
    pub fn range_has_tombstones(&self, start: StreamId, end: StreamId) -> bool {
        let deleted = self.max_deleted_id;
        self.len > 0
            && !deleted.is_zero()
            && deleted >= self.first_id
            && (start..=end).contains(&deleted)
    }

    /// The number of entries not yet delivered to `group` (XINFO's `lag`), None when it
    /// cannot be known: 0 for a stream never written; the entries added less the group's
    /// read counter when that is known and no tombstone lies past its last id; otherwise
    /// less the counter estimated from the group's last id. Negative when a stated
    /// ENTRIESREAD exceeds the entries added, as Redis replies it.
    pub fn lag(&self, group: &Group) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        let read = match group.entries_read {
            Some(n) if !self.range_has_tombstones(group.last_id, StreamId::MAX) => n,
            _ => self.estimate_entries_read(group.last_id)?,
        };
        Some((self.entries_added as i64).wrapping_sub(read as i64))
    }

    /// The nodes of the radix tree (Redis's rax) that would index this stream's nodes by
    /// their 16-byte big-endian master ids: XINFO's `radix-tree-nodes`.
    pub fn radix_tree_nodes(&self) -> usize {
        rax_node_count(
            self.nodes
                .iter()
                .map(|(id, _)| u128::from_be_bytes(id.to_be_bytes())),
        )
    }
}

/// Slots of a std B-tree node.
const BTREE_CAPACITY: usize = 11;
/// Entries a node ends up holding: a node splits at 6 + 1 + 4 when appended past its end
/// (ids, in order), and fills to about two thirds under random inserts (names).
const BTREE_FILL: usize = 7;

/// The heap bytes of a std `BTreeMap<K, V>` of `len` entries: its leaves (a header and 11
/// slots each, allocated whole) and its internal nodes (12 child pointers more).
pub(crate) fn btree_bytes<K, V>(len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let leaf = 16 + BTREE_CAPACITY * (std::mem::size_of::<K>() + std::mem::size_of::<V>());
    let internal = leaf + (BTREE_CAPACITY + 1) * std::mem::size_of::<usize>();
    let (mut nodes, mut bytes) = (len.div_ceil(BTREE_FILL), 0);
    bytes += nodes * leaf;
    while nodes > 1 {
        nodes = nodes.div_ceil(BTREE_FILL + 1);
        bytes += nodes * internal;
    }
    bytes
}

/// The bytes of a rax key.
const KEY_BYTES: usize = 16;

/// The nodes of a rax holding `keys` (distinct, ascending, all 16 bytes).
///
/// A rax keeps one node for the root, one for each key (an empty leaf, as no key here is
/// a prefix of another), one for each prefix with two or more continuations (a branching
/// node holding one byte per child), and one for each child of a branching node: the
/// node that starts the child's compressed run. That child node is the next branching
/// node or leaf itself when the run is empty (it starts one byte below the branching
/// node), so the extra node exists only for edges longer than one byte.
///
/// Over sorted keys the branching prefixes are the common prefixes of neighbours: a stack
/// of their depths (the open branching nodes of the rightmost path) gives each branching
/// node and each leaf its parent's depth, hence the length of the edge above it.
fn rax_node_count(keys: impl Iterator<Item = u128>) -> usize {
    let mut nodes = 1;
    let mut open: Vec<usize> = Vec::with_capacity(KEY_BYTES + 1);
    let mut prev: Option<u128> = None;
    // The common prefix of the previous key with the one before it.
    let mut prev_lcp: Option<usize> = None;
    // An edge from a branching node at `parent` to a node at `child` needs a node between.
    let long_edge = |parent: usize, child: usize| usize::from(child > parent + 1);
    for key in keys {
        nodes += 1;
        let Some(p) = prev.replace(key) else {
            continue;
        };
        let lcp = (p ^ key).leading_zeros() as usize / 8;
        // The previous key's parent is the deeper of its two neighbours' common prefixes.
        nodes += long_edge(prev_lcp.map_or(lcp, |l| l.max(lcp)), KEY_BYTES);
        while let Some(&depth) = open.last().filter(|&&d| d > lcp) {
            open.pop();
            let parent = open.last().map_or(lcp, |&top| top.max(lcp));
            nodes += long_edge(parent, depth);
        }
        if open.last() != Some(&lcp) {
            open.push(lcp);
            // The root is counted already, branching or not.
            nodes += usize::from(lcp > 0);
        }
        prev_lcp = Some(lcp);
    }
    if let Some(l) = prev_lcp {
        nodes += long_edge(l, KEY_BYTES);
    }
    while let Some(depth) = open.pop() {
        if let Some(&parent) = open.last() {
            nodes += long_edge(parent, depth);
        }
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{NewId, StreamConfig, Trim};
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// The model: every prefix of the keys with its set of next bytes, and the rule that a
    /// rax node sits at the root, at a key, at a prefix with two or more next bytes, or
    /// right below such a prefix.
    fn model(keys: &BTreeSet<u128>) -> usize {
        let mut next: BTreeMap<Vec<u8>, BTreeSet<u8>> = BTreeMap::new();
        for k in keys {
            let b = k.to_be_bytes();
            for d in 0..KEY_BYTES {
                next.entry(b[..d].to_vec()).or_default().insert(b[d]);
            }
        }
        let branching = |p: &[u8]| next.get(p).is_some_and(|n| n.len() > 1);
        let mut count = 1 + keys.len();
        for p in next.keys().filter(|p| !p.is_empty()) {
            if branching(p) || branching(&p[..p.len() - 1]) {
                count += 1;
            }
        }
        count
    }

    fn count(keys: &BTreeSet<u128>) -> usize {
        rax_node_count(keys.iter().copied())
    }

    #[test]
    fn small_trees_count_as_redis_reports() {
        // Figures read from Redis 7.2.4's XINFO STREAM.
        assert_eq!(count(&BTreeSet::new()), 1);
        assert_eq!(count(&[1u128].into()), 2);
        let ids = |v: &[(u64, u64)]| {
            v.iter()
                .map(|&(ms, seq)| u128::from_be_bytes(StreamId::new(ms, seq).to_be_bytes()))
                .collect::<BTreeSet<_>>()
        };
        // 1-1 and 2-1 differ in byte 7 only: root run, branch, two leaves, two runs.
        assert_eq!(count(&ids(&[(1, 1), (2, 1)])), 6);
        assert_eq!(count(&ids(&[(1, 1), (2, 1), (3, 1)])), 8);
        // 5-0 and 5-1 differ in the last byte: root run, branch, two leaves.
        assert_eq!(count(&ids(&[(5, 0), (5, 1)])), 4);
    }

    /// A stream of entries 1-0 ..= n-0.
    fn stream_of(n: u64) -> Stream {
        let mut s = Stream::new();
        let cfg = StreamConfig::default();
        for ms in 1..=n {
            let id = NewId::Exact(StreamId::new(ms, 0));
            s.append(id, &[b"f", b"v"], 0, &cfg).unwrap();
        }
        s
    }

    #[test]
    fn lag_follows_the_read_counter_until_a_tombstone_lies_ahead() {
        let at = |ms| StreamId::new(ms, 0);
        assert_eq!(Stream::new().lag(&Group::new(at(5), None)), Some(0));
        let mut s = stream_of(10);
        assert_eq!(s.lag(&Group::new(at(4), Some(4))), Some(6));
        // A stated counter past the entries added gives a negative lag, as Redis replies.
        assert_eq!(s.lag(&Group::new(at(4), Some(12))), Some(-2));
        // Unknown counter: estimated at the last id and before the first entry only.
        assert_eq!(s.lag(&Group::new(at(10), None)), Some(0));
        assert_eq!(s.lag(&Group::new(at(0), None)), Some(10));
        assert_eq!(s.lag(&Group::new(at(4), None)), None);
        s.delete(&[at(7)]);
        assert!(s.range_has_tombstones(at(4), StreamId::MAX));
        assert!(!s.range_has_tombstones(at(8), StreamId::MAX));
        assert_eq!(s.lag(&Group::new(at(4), Some(4))), None);
        assert_eq!(s.lag(&Group::new(at(8), Some(8))), Some(2));
        // Trimming past the tombstone leaves none before the first entry.
        s.trim(Trim::MinId(at(8)), false, 0);
        assert!(!s.range_has_tombstones(StreamId::MIN, StreamId::MAX));
        assert_eq!(s.lag(&Group::new(at(0), None)), Some(3));
    }

    #[test]
    fn btree_bytes_counts_whole_nodes() {
        let leaf = 16 + 11 * 32;
        assert_eq!(btree_bytes::<u128, u128>(0), 0);
        assert_eq!(btree_bytes::<u128, u128>(1), leaf);
        assert_eq!(btree_bytes::<u128, u128>(7), leaf);
        assert_eq!(btree_bytes::<u128, u128>(8), 2 * leaf + leaf + 12 * 8);
    }

    fn key() -> impl Strategy<Value = u128> {
        // Clustered keys, so that prefixes are shared at every depth.
        (0u8..4, 0u8..3, 0u16..512, 0u8..3, any::<u8>()).prop_map(|(a, b, c, d, e)| {
            let mut k = [0u8; 16];
            k[0] = a;
            k[5] = b;
            k[7] = (c >> 8) as u8;
            k[8] = c as u8;
            k[14] = d;
            k[15] = e;
            u128::from_be_bytes(k)
        })
    }

    proptest! {
        #[test]
        fn matches_the_prefix_model(keys in proptest::collection::btree_set(key(), 0..60)) {
            prop_assert_eq!(count(&keys), model(&keys));
        }
    }
}
