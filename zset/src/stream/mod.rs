//! The stream engine (Redis's t_stream.c model): entries of field-value pairs under
//! increasing ids, packed in nodes, with consumer groups. No I/O.
//!
//! # Layout and bytes per entry
//!
//! ```text
//! Stream (in its Box)          168 B: length, last id, first id, max deleted id,
//!                                      entries added (8 + 3 * 16 + 8), the groups'
//!                                      BTreeMap (24), the node index (80)
//! nodes: NodeIndex (see `index`)        the tail node (16 B key + 40 B node) inline, the
//!                                       others in a BTreeMap<StreamId, Node>: leaves of
//!                                       up to 11 pairs, ~90 B of index per node
//! Node: compact listpack (see `node`)   40 B + master fields + entries, each a listpack
//!                                       item without backlen; trimmed to size when the
//!                                       next node opens, the tail grows by an eighth
//!   per entry, fields as the master's:  flags 1 + ms delta 1..3 + seq delta 1
//!                                       + per value (header 1 + data)
//!   e.g. "user" u+8 digits, "amount" 16-bit integer, ids 1 ms apart:
//!         3 + (1 + 9) + (3..4) = 16..17 B, + the index's ~1 B at 100 entries a node
//! ```
//!
//! A node takes entries until its listpack would reach `stream-node-max-bytes` bytes or it
//! holds `stream-node-max-entries` entries (deleted ones counting), then the next entry
//! opens a new node. The nodes convert to and from Redis's listpacks byte for byte, which
//! RDB and DUMP write and load (after validation, [`Node::validate`]).
//!
//! The index is a B-tree map keyed by each node's first (master) id rather than Redis's
//! rax: seeking the node of an id is one `range(..=id).next_back()`, walking in either
//! direction and removing the head nodes (trimming) are the map's own operations, and at
//! about 90 B per node of a hundred entries it costs under a byte per entry.
//!
//! Deleting an entry flags it in its node (a tombstone) and moves it from the node's live
//! count to its deleted count; a node whose last live entry goes is removed.

mod group;
mod id;
mod index;
mod info;
mod lp;
mod node;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use index::{NodeIndex, NodeRange};

pub use group::{Claim, ClaimHow, Consumer, Group, Nack, NackRef, NEVER};
pub use id::{StreamId, ID_TEXT_LEN};
pub use node::Pairs;

use node::{Entries, Node, RawEntry};

pub use crate::packed::Item;

/// The largest total of field and value bytes one entry may have, and the largest node
/// (Redis's STREAM_LISTPACK_MAX_SIZE).
pub const MAX_ENTRY_BYTES: usize = 1 << 30;

/// Node limits, as Redis's `stream-node-max-bytes` and `stream-node-max-entries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// A node stops taking entries at this many bytes (0: no limit but 1 GiB).
    pub node_max_bytes: usize,
    /// A node stops taking entries at this many entries (0: no limit).
    pub node_max_entries: usize,
}

impl Default for StreamConfig {
    fn default() -> StreamConfig {
        StreamConfig {
            node_max_bytes: 4096,
            node_max_entries: 100,
        }
    }
}

/// How XADD picks the new entry's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewId {
    /// `*`: the current time, or the last id's successor.
    Auto,
    /// `<ms>-*`: the given time, the sequence after the last id's at that time.
    AutoSeq(u64),
    /// An explicit id.
    Exact(StreamId),
}

/// Why an entry was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendError {
    /// The id is not greater than the stream's last id.
    IdTooSmall,
    /// The fields and values exceed [`MAX_ENTRY_BYTES`].
    TooLarge,
}

/// A trimming strategy (XADD and XTRIM's MAXLEN and MINID).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    /// Keep at most this many entries.
    MaxLen(u64),
    /// Keep no entry whose id is below this.
    MinId(StreamId),
}

/// Why XSETID was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetIdError {
    /// The id is below the stream's max deleted entry id.
    BelowMaxDeleted,
    /// The id is below the stream's last entry.
    BelowTop,
    /// The entries-added count is below the stream's length.
    EntriesAddedBelowLength,
}

/// A stream: its entries in nodes, its counters and its consumer groups.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    nodes: NodeIndex,
    len: u64,
    last_id: StreamId,
    first_id: StreamId,
    max_deleted_id: StreamId,
    entries_added: u64,
    groups: BTreeMap<Box<[u8]>, Group>,
}

/// The counters a loaded stream states (RDB), beside its nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamMeta {
    /// Entries in the stream.
    pub len: u64,
    /// The last id generated.
    pub last_id: StreamId,
    /// The first live entry's id (0-0 when empty).
    pub first_id: StreamId,
    /// The largest id ever deleted.
    pub max_deleted_id: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
}

/// One entry met by a range walk.
#[derive(Clone, Copy)]
pub struct EntryRef<'a> {
    node: &'a Node,
    raw: RawEntry,
}

impl<'a> EntryRef<'a> {
    /// The entry id.
    pub fn id(&self) -> StreamId {
        self.raw.id
    }

    /// Number of field-value pairs.
    pub fn len(&self) -> usize {
        self.raw.fields
    }

    /// Whether the entry has no pairs (never, for entries XADD made).
    pub fn is_empty(&self) -> bool {
        self.raw.fields == 0
    }

    /// The field-value pairs in order.
    pub fn pairs(&self) -> Pairs<'a> {
        self.node.pairs(&self.raw)
    }
}

impl Stream {
    /// An empty stream.
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Live entries.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the stream has no live entry (a stream key may be empty).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The counters.
    pub fn meta(&self) -> StreamMeta {
        StreamMeta {
            len: self.len,
            last_id: self.last_id,
            first_id: self.first_id,
            max_deleted_id: self.max_deleted_id,
            entries_added: self.entries_added,
        }
    }

    /// The last id generated (0-0 for a stream that never had one).
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// Number of nodes (XINFO's radix-tree-keys).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Every node's key and listpack, in order (RDB).
    pub fn nodes(&self) -> impl Iterator<Item = (StreamId, Vec<u8>)> + '_ {
        self.nodes.iter().map(|(k, n)| (*k, n.to_listpack()))
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| name.len() + g.memory_bytes())
            .sum();
        self.nodes.memory_bytes()
            + groups
            + info::btree_bytes::<Box<[u8]>, Group>(self.groups.len())
    }

    /// The id `how` gives the next entry at Unix time `now_ms`, before the order check.
    fn candidate_id(&self, how: NewId, now_ms: u64) -> Result<StreamId, AppendError> {
        let last = self.last_id;
        match how {
            NewId::Exact(id) => Ok(id),
            NewId::AutoSeq(ms) if ms == last.ms => match last.seq.checked_add(1) {
                Some(seq) => Ok(StreamId::new(ms, seq)),
                None => Err(AppendError::IdTooSmall),
            },
            NewId::AutoSeq(ms) => Ok(StreamId::new(ms, 0)),
            NewId::Auto if now_ms > last.ms => Ok(StreamId::new(now_ms, 0)),
            NewId::Auto => last.next().ok_or(AppendError::IdTooSmall),
        }
    }

    /// Adds an entry of `pairs` (field, value, field, value...; at least one pair) with the
    /// id `how` picks at Unix time `now_ms`, as Redis's streamAppendItem.
    pub fn append(
        &mut self,
        how: NewId,
        pairs: &[&[u8]],
        now_ms: u64,
        cfg: &StreamConfig,
    ) -> Result<StreamId, AppendError> {
        debug_assert!(pairs.len() >= 2 && pairs.len().is_multiple_of(2));
        let id = self.candidate_id(how, now_ms)?;
        if id <= self.last_id {
            return Err(AppendError::IdTooSmall);
        }
        let data: usize = pairs.iter().map(|p| p.len()).sum();
        if data > MAX_ENTRY_BYTES {
            return Err(AppendError::TooLarge);
        }
        let max_bytes = match cfg.node_max_bytes {
            0 => MAX_ENTRY_BYTES,
            n => n.min(MAX_ENTRY_BYTES),
        };
        let full = |n: &Node| {
            n.lp_len() + data >= max_bytes
                || (cfg.node_max_entries != 0 && n.total() >= cfg.node_max_entries as u64)
        };
        match self.nodes.tail_mut() {
            Some((master, tail)) if !full(tail) => tail.append(master, id, pairs),
            _ => self.nodes.push(id, Node::create(pairs)),
        }
        self.len += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.len == 1 {
            self.first_id = id;
        }
        Ok(id)
    }

    /// The live entries with ids in `start..=end`, ascending or (`rev`) descending.
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool) -> Range<'_> {
        let from = self.nodes.seek(start).map_or(start, |(k, _)| *k);
        let nodes = if start <= end {
            self.nodes.range(from, end)
        } else {
            self.nodes.range(StreamId::MAX, StreamId::MIN)
        };
        Range {
            nodes,
            start,
            end,
            rev,
            walking: None,
            current: Vec::new(),
        }
    }

    /// The first (`first`) or last entry's id, tombstones included unless
    /// `skip_tombstones`; [`StreamId::MAX`] (first) or [`StreamId::MIN`] (last) when there
    /// is none (Redis's streamGetEdgeID).
    pub fn edge_id(&self, first: bool, skip_tombstones: bool) -> StreamId {
        let pick = |(master, node): (&StreamId, &Node)| {
            let mut entries = node
                .entries(*master)
                .filter(|e| !skip_tombstones || !e.deleted());
            if first {
                entries.next()
            } else {
                entries.last()
            }
            .map(|e| e.id)
        };
        let found = if first {
            self.nodes.iter().find_map(pick)
        } else {
            self.nodes.iter().rev().find_map(pick)
        };
        found.unwrap_or(if first { StreamId::MAX } else { StreamId::MIN })
    }

    /// Whether a live entry has an id above `id` (the last live entry's id is above it, as
    /// Redis checks for new entries for a group): at once when the tail node starts past
    /// `id` (every node holds a live entry), else by the range walk from `id`.
    pub fn has_live_after(&self, id: StreamId) -> bool {
        match id.next() {
            None => false,
            Some(_) if self.nodes.tail_key().is_some_and(|k| k > id) => true,
            Some(from) => self.range(from, StreamId::MAX, false).next().is_some(),
        }
    }

    /// The node holding `id` live and the entry, if any.
    fn find(&self, id: StreamId) -> Option<(StreamId, RawEntry)> {
        let (master, node) = self.nodes.seek(id)?;
        let e = node.entries(*master).find(|e| e.id >= id)?;
        (e.id == id && !e.deleted()).then_some((*master, e))
    }

    /// Whether a live entry has id `id`.
    pub fn contains(&self, id: StreamId) -> bool {
        self.find(id).is_some()
    }

    /// Deletes the entries `ids` (XDEL): returns how many existed. Keeps the max deleted
    /// id and the first id as Redis does.
    pub fn delete(&mut self, ids: &[StreamId]) -> u64 {
        let (mut deleted, mut first_gone) = (0, false);
        for &id in ids {
            let Some((master, entry)) = self.find(id) else {
                continue;
            };
            let node = self.nodes.get_mut(master).expect("found above");
            if node.live() == 1 {
                self.nodes.remove(master);
            } else {
                node.mark_deleted(&[entry]);
            }
            self.len -= 1;
            first_gone |= id == self.first_id;
            self.max_deleted_id = self.max_deleted_id.max(id);
            deleted += 1;
        }
        if deleted > 0 {
            if self.len == 0 {
                self.first_id = StreamId::MIN;
            } else if first_gone {
                self.first_id = self.edge_id(true, true);
            }
        }
        deleted
    }

    /// Trims from the head (Redis's streamTrim): whole nodes while they go entirely, then,
    /// unless `approx`, entries of the next node; never more than `limit` entries when
    /// `limit` is not 0. Returns the number removed.
    pub fn trim(&mut self, how: Trim, approx: bool, limit: u64) -> u64 {
        let mut deleted = 0;
        while let Some((master, node)) = self.nodes.first_mut() {
            if let Trim::MaxLen(max) = how {
                if self.len <= max {
                    break;
                }
            }
            let live = node.live();
            if limit != 0 && deleted + live > limit {
                break;
            }
            let whole = match how {
                Trim::MaxLen(max) => self.len - live >= max,
                Trim::MinId(min) => node.last_id(master) < min,
            };
            if whole {
                self.nodes.remove(master);
                self.len -= live;
                deleted += live;
                continue;
            }
            if approx {
                break;
            }
            let mut victims = Vec::new();
            let mut len = self.len;
            for e in node.entries(master) {
                let stop = match how {
                    Trim::MaxLen(max) => len <= max,
                    Trim::MinId(min) => e.id >= min,
                };
                if stop {
                    break;
                }
                if !e.deleted() {
                    victims.push(e);
                    len -= 1;
                }
            }
            node.mark_deleted(&victims);
            let n = victims.len() as u64;
            self.len -= n;
            deleted += n;
            break;
        }
        if self.len == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.edge_id(true, true);
        }
        deleted
    }

    /// Sets the last id, and optionally the entries-added count and the max deleted id
    /// (XSETID), with Redis's checks in Redis's order.
    pub fn set_id(
        &mut self,
        id: StreamId,
        entries_added: Option<u64>,
        max_deleted: Option<StreamId>,
    ) -> Result<(), SetIdError> {
        if id < self.max_deleted_id {
            return Err(SetIdError::BelowMaxDeleted);
        }
        if self.len > 0 {
            if id < self.edge_id(false, true) {
                return Err(SetIdError::BelowTop);
            }
            if entries_added.is_some_and(|n| n < self.len) {
                return Err(SetIdError::EntriesAddedBelowLength);
            }
        }
        self.last_id = id;
        if let Some(n) = entries_added {
            self.entries_added = n;
        }
        if let Some(m) = max_deleted.filter(|m| !m.is_zero()) {
            self.max_deleted_id = m;
        }
        Ok(())
    }

    /// A stream of loaded nodes (key, listpack bytes) and counters, each node validated
    /// in order; the counters are taken as stated, as Redis takes them, once the live
    /// entries are found to number `meta.len`.
    pub fn from_nodes(nodes: Vec<(StreamId, Vec<u8>)>, meta: StreamMeta) -> Result<Stream, String> {
        let mut s = Stream::new();
        let mut last = None;
        let mut live = 0u64;
        for (master, bytes) in nodes {
            if last.is_some_and(|l| master <= l) {
                return Err(format!("stream node {master} out of order"));
            }
            let (n, node_last) = Node::validate(master, &bytes, last)?;
            live += n;
            last = Some(node_last);
            s.nodes.push(master, Node::from_listpack(&bytes));
        }
        if live != meta.len {
            return Err(format!(
                "stream states {} entries but its nodes hold {live}",
                meta.len
            ));
        }
        // A last id below an entry would let XADD append out of order.
        if let Some(last) = last.filter(|&l| l > meta.last_id) {
            return Err(format!(
                "stream last id {} is below its entry {last}",
                meta.last_id
            ));
        }
        s.len = meta.len;
        s.last_id = meta.last_id;
        s.first_id = meta.first_id;
        s.max_deleted_id = meta.max_deleted_id;
        s.entries_added = meta.entries_added;
        Ok(s)
    }

    /// Sets the first id from the entries (loading RDB type 15, which does not store it).
    pub fn derive_first_id(&mut self) {
        self.first_id = self.edge_id(true, true);
    }

    /// The read counter a group whose last id is `id` has, counted from the first entry
    /// ever added, when it can be known (Redis's streamEstimateDistanceFromFirstEverEntry):
    /// 0 for a stream never written; the entries added for the last id (or any id up to it
    /// in an emptied stream); the entries before the first one for an id before it, one
    /// more for the first id itself, when no deletion happened past the first entry.
    pub fn estimate_entries_read(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.len == 0 && id <= self.last_id {
            return Some(self.entries_added);
        }
        match id.cmp(&self.last_id) {
            std::cmp::Ordering::Equal => return Some(self.entries_added),
            std::cmp::Ordering::Greater => return None,
            std::cmp::Ordering::Less => {}
        }
        if self.max_deleted_id.is_zero() || self.max_deleted_id < self.first_id {
            match id.cmp(&self.first_id) {
                // A loaded stream may state fewer entries added than it holds.
                std::cmp::Ordering::Less => {
                    return Some(self.entries_added.saturating_sub(self.len))
                }
                std::cmp::Ordering::Equal => {
                    return Some(self.entries_added.saturating_sub(self.len) + 1)
                }
                std::cmp::Ordering::Greater => {}
            }
        }
        None
    }

    /// Whether a deleted entry may lie at or after `start` (Redis's
    /// streamRangeHasTombstones without an end): the max deleted id is past the first
    /// entry and not before `start`.
    fn has_tombstones_from(&self, start: StreamId) -> bool {
        self.len > 0
            && !self.max_deleted_id.is_zero()
            && self.first_id <= self.max_deleted_id
            && start <= self.max_deleted_id
    }

    /// Delivers to group `name` the entries after its last id (up to `count`, 0: all), as
    /// XREADGROUP `>` does: per entry the last id moves to it and the read counter with it
    /// (one more when valid and no deleted entry lies ahead, else estimated when the
    /// stream ever had entries), and unless `noack` the entry becomes pending for
    /// `consumer` (which exists) at `now`. Returns the ids delivered.
    pub fn read_group(
        &mut self,
        name: &[u8],
        consumer: &[u8],
        count: usize,
        noack: bool,
        now: u64,
    ) -> Vec<StreamId> {
        let Some(last) = self.groups.get(name).map(|g| g.last_id) else {
            return Vec::new();
        };
        let Some(start) = last.next() else {
            return Vec::new();
        };
        let limit = if count == 0 { usize::MAX } else { count };
        let ids: Vec<StreamId> = self
            .range(start, StreamId::MAX, false)
            .take(limit)
            .map(|e| e.id())
            .collect();
        for &id in &ids {
            let ahead = self.has_tombstones_from(id);
            let estimate = self.estimate_entries_read(id);
            let added = self.entries_added;
            let g = self.groups.get_mut(name).expect("looked up above");
            g.entries_read = match g.entries_read {
                Some(n) if !ahead => Some(n + 1),
                _ if added != 0 => estimate,
                kept => kept,
            };
            g.last_id = id;
            if !noack {
                g.deliver(id, now, consumer);
            }
        }
        ids
    }

    /// The consumer groups, in name order.
    pub fn groups(&self) -> &BTreeMap<Box<[u8]>, Group> {
        &self.groups
    }

    /// The group `name`.
    pub fn group(&self, name: &[u8]) -> Option<&Group> {
        self.groups.get(name)
    }

    /// The group `name`, for writing.
    pub fn group_mut(&mut self, name: &[u8]) -> Option<&mut Group> {
        self.groups.get_mut(name)
    }

    /// Adds group `name`; false when it exists.
    pub fn create_group(&mut self, name: &[u8], group: Group) -> bool {
        if self.groups.contains_key(name) {
            return false;
        }
        self.groups.insert(name.into(), group);
        true
    }

    /// Removes group `name`; false when there is none.
    pub fn destroy_group(&mut self, name: &[u8]) -> bool {
        self.groups.remove(name).is_some()
    }

    /// Checks every internal invariant, panicking on the first violation; for tests. The
    /// first id is not among them: a loaded stream keeps the one its file states, as Redis
    /// does (the engine's own tests check it).
    pub fn validate(&self) {
        let mut live = 0;
        let mut last: Option<StreamId> = None;
        for (master, node) in self.nodes.iter() {
            let lp = node.to_listpack();
            assert_eq!(lp.len(), node.lp_len(), "listpack size");
            assert_eq!(
                Node::from_listpack(&lp).to_listpack(),
                lp,
                "listpack round trip"
            );
            let (n, node_last) = Node::validate(*master, &lp, last).expect("well-formed node");
            assert!(n > 0, "a node keeps a live entry");
            live += n;
            last = Some(node_last);
        }
        assert_eq!(live, self.len, "length");
        assert!(last.is_none_or(|l| l <= self.last_id), "last id");
        for g in self.groups.values() {
            g.check().expect("consistent group");
        }
    }
}

/// The live entries of an id range (see [`Stream::range`]). Ascending, a node's entries are
/// decoded as they are handed out, so a short read (COUNT) stops early; descending, each
/// node's entries in range are decoded at once, as a listpack entry is found from its start.
pub struct Range<'a> {
    nodes: NodeRange<'a>,
    start: StreamId,
    end: StreamId,
    rev: bool,
    /// Ascending: the current node and its entries still to walk.
    walking: Option<(&'a Node, Entries<'a>)>,
    /// Descending: the current node's entries in range still to hand out, the next one last.
    current: Vec<EntryRef<'a>>,
}

impl<'a> Range<'a> {
    /// The next entry in ascending order.
    fn next_up(&mut self) -> Option<EntryRef<'a>> {
        loop {
            if let Some((node, entries)) = &mut self.walking {
                for raw in entries.by_ref() {
                    if raw.id > self.end {
                        // Ids ascend: no later entry, nor node, is in range.
                        self.walking = None;
                        return None;
                    }
                    if !raw.deleted() && raw.id >= self.start {
                        return Some(EntryRef { node, raw });
                    }
                }
            }
            let (master, node) = self.nodes.next()?;
            self.walking = Some((node, node.entries(*master)));
        }
    }

    /// The next entry in descending order.
    fn next_down(&mut self) -> Option<EntryRef<'a>> {
        loop {
            if let Some(e) = self.current.pop() {
                return Some(e);
            }
            let (master, node) = self.nodes.next_back()?;
            let (start, end) = (self.start, self.end);
            self.current.extend(
                node.entries(*master)
                    .filter(|e| !e.deleted() && (start..=end).contains(&e.id))
                    .map(|raw| EntryRef { node, raw }),
            );
        }
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        if self.rev {
            self.next_down()
        } else {
            self.next_up()
        }
    }
}
