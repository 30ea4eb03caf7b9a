//! The index over a stream's nodes: a B-tree map keyed by each node's master id, with the
//! tail node (the one entries are appended to) held beside the map rather than in it. A
//! stream of one node, as most small streams are, so allocates no B-tree leaf (11 slots,
//! about 630 B), and XADD reaches its node without walking the tree.

use std::collections::btree_map::{self, BTreeMap};

use super::info::btree_bytes;
use super::node::Node;
use super::StreamId;

/// The nodes of a stream by master id; every key in the map is below the tail's.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeIndex {
    tree: BTreeMap<StreamId, Node>,
    tail: Option<(StreamId, Node)>,
}

/// The nodes whose keys fall in a range, in key order from either end.
pub(crate) type NodeRange<'a> = std::iter::Chain<
    btree_map::Range<'a, StreamId, Node>,
    std::option::IntoIter<(&'a StreamId, &'a Node)>,
>;

impl NodeIndex {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.tree.len() + usize::from(self.tail.is_some())
    }

    /// Every node, in key order.
    pub fn iter(&self) -> NodeRange<'_> {
        self.range(StreamId::MIN, StreamId::MAX)
    }

    /// The nodes keyed `from..=to` (none when `from > to`).
    pub fn range(&self, from: StreamId, to: StreamId) -> NodeRange<'_> {
        let tree = if from <= to {
            self.tree.range(from..=to)
        } else {
            self.tree.range(from..from)
        };
        let tail = self
            .tail
            .as_ref()
            .filter(|(k, _)| (from..=to).contains(k))
            .map(|(k, n)| (k, n));
        tree.chain(tail)
    }

    /// The node that would hold `id`: the last one keyed at most `id`.
    pub fn seek(&self, id: StreamId) -> Option<(&StreamId, &Node)> {
        match &self.tail {
            Some((k, n)) if *k <= id => Some((k, n)),
            _ => self.tree.range(..=id).next_back(),
        }
    }

    /// The tail node's key.
    pub fn tail_key(&self) -> Option<StreamId> {
        self.tail.as_ref().map(|(k, _)| *k)
    }

    /// The tail node and its key.
    pub fn tail_mut(&mut self) -> Option<(StreamId, &mut Node)> {
        self.tail.as_mut().map(|(k, n)| (*k, n))
    }

    /// The first node and its key.
    pub fn first_mut(&mut self) -> Option<(StreamId, &mut Node)> {
        if self.tree.is_empty() {
            return self.tail_mut();
        }
        self.tree.iter_mut().next().map(|(k, n)| (*k, n))
    }

    /// The node keyed `key`.
    pub fn get_mut(&mut self, key: StreamId) -> Option<&mut Node> {
        match &mut self.tail {
            Some((k, n)) if *k == key => Some(n),
            _ => self.tree.get_mut(&key),
        }
    }

    /// Makes `node`, keyed above every node, the tail; the previous tail, shrunk to its
    /// size, moves into the map.
    pub fn push(&mut self, key: StreamId, node: Node) {
        if let Some((k, mut old)) = self.tail.replace((key, node)) {
            old.shrink_to_fit();
            self.tree.insert(k, old);
        }
    }

    /// Removes the node keyed `key`; the last node of the map becomes the tail when the
    /// tail goes.
    pub fn remove(&mut self, key: StreamId) {
        match &self.tail {
            Some((k, _)) if *k == key => self.tail = self.tree.pop_last(),
            _ => {
                self.tree.remove(&key);
            }
        }
    }

    /// Heap bytes held: the nodes and the map's own.
    pub fn memory_bytes(&self) -> usize {
        let nodes: usize = self.iter().map(|(_, n)| n.memory_bytes()).sum();
        nodes + btree_bytes::<StreamId, Node>(self.tree.len())
    }
}
