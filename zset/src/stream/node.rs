//! One node of a stream: a master entry and the entries that follow it, ids delta-encoded
//! against the node's key (its master id), Redis's t_stream.c listpack node item for item
//! but held compact: each item is a listpack element without its `backlen`, and the items
//! that follow from the others (the live and deleted counts, the master entry's zero
//! terminator, each entry's lp-count) are counters beside the bytes or left out.
//! [`Node::to_listpack`] writes Redis's listpack byte for byte (RDB, DUMP), and
//! [`Node::from_listpack`] reads a validated one back.
//!
//! ```text
//! Node (40 B): bytes (Vec, 24 B), live u32, deleted u32, listpack size u32, first entry u32
//! bytes:    [n][field 1]..[field n]  entry entry ...
//! entry:    [flags][ms - master.ms][seq - master.seq]  [n][field 1][value 1]..
//!      or   [flags][ms - master.ms][seq - master.seq]  [value 1]..[value n]
//!           (the second form when the fields are the master's: flag SAME_FIELDS)
//! listpack: [live][deleted][n][field 1]..[field n][0], then each entry as above and its
//!           [lp-count], every item followed by its 1..5-byte backlen
//! ```
//!
//! An element takes 1 byte for an integer 0..=127, 2 up to +-4095, 3, 4, 5 or 9 beyond;
//! a string that is a canonical decimal integer is stored as the integer, others take a
//! 1-byte header under 64 bytes (2 under 4096, else 5) and the data. An entry of two values
//! with the master's fields so costs 3 bytes (flags and deltas under 128) and each value's
//! element: "u" + 8 digits and a 16-bit integer take 3 + 10 + 3..4 = 16..17 B, where
//! Redis's listpack spends 7 B more (five backlens and the lp-count). Deleted entries keep
//! their bytes with flag DELETED until the node goes.

use super::lp::{self, HEADER};
use super::StreamId;
use crate::packed::{encode_listpack_item, listpack_items, push_backlen, Item};

/// Entry flag: the entry was deleted (a tombstone).
pub(crate) const FLAG_DELETED: i64 = 1;
/// Entry flag: the entry's fields are the master entry's, and only its values are stored.
pub(crate) const FLAG_SAME_FIELDS: i64 = 2;

/// A node: its compact bytes and counters (see the module comment).
#[derive(Clone, Debug)]
pub(crate) struct Node {
    bytes: Vec<u8>,
    live: u32,
    deleted: u32,
    /// The listpack's size less its header, end byte and two count items.
    lp_rest: u32,
    /// Position of the first entry, after the master fields.
    first_entry: u32,
}

/// The position of an entry inside its node, decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawEntry {
    /// Byte position of the flags element.
    pub flags_pos: usize,
    /// The entry id.
    pub id: StreamId,
    /// The flags.
    pub flags: i64,
    /// Number of field-value pairs.
    pub fields: usize,
    /// Position of the first field (or value, with SAME_FIELDS).
    pub body: usize,
}

impl RawEntry {
    /// Whether the entry is a tombstone.
    pub fn deleted(&self) -> bool {
        self.flags & FLAG_DELETED != 0
    }
}

/// The most bytes the elements of an entry of `pairs` can take: flags, two deltas and a
/// field count of at most 9 bytes each, and each field and value's data and header.
fn entry_bound(pairs: &[&[u8]]) -> usize {
    4 * 9 + pairs.iter().map(|p| p.len() + 9).sum::<usize>()
}

impl Node {
    /// A node whose master entry and first entry come from `pairs` (field, value, ...),
    /// the entry's id being the node's key.
    pub fn create(pairs: &[&[u8]]) -> Node {
        let mut node = Node {
            bytes: Vec::with_capacity(2 * entry_bound(pairs)),
            live: 0,
            deleted: 0,
            lp_rest: 0,
            first_entry: 0,
        };
        let mut size = lp::push(&mut node.bytes, Item::Int((pairs.len() / 2) as i64));
        for field in pairs.iter().step_by(2) {
            size += lp::push_bytes(&mut node.bytes, field);
        }
        node.lp_rest = (size + lp::int_size(0)) as u32;
        node.first_entry = node.bytes.len() as u32;
        node.push_entry(StreamId::MIN, FLAG_SAME_FIELDS, pairs);
        node
    }

    /// The node of a listpack that [`Node::validate`] accepted. Integers where the layout
    /// has them are taken at their narrowest encoding, fields and values as they stand.
    pub fn from_listpack(lp: &[u8]) -> Node {
        let (live, pos) = lp::read_int(lp, HEADER);
        let (deleted, pos) = lp::read_int(lp, pos);
        let mut node = Node {
            bytes: Vec::with_capacity(lp.len()),
            live: live as u32,
            deleted: deleted as u32,
            lp_rest: 0,
            first_entry: 0,
        };
        let (fields, mut pos) = lp::read_int(lp, pos);
        node.put_int(fields);
        for _ in 0..fields {
            pos = node.copy_item(lp, pos);
        }
        pos = lp::skip(lp, pos);
        node.lp_rest += lp::int_size(0) as u32;
        node.first_entry = node.bytes.len() as u32;
        while lp[pos] != 0xff {
            let mut items = 3;
            let flags = lp::read_int(lp, pos).0;
            for _ in 0..3 {
                let (v, next) = lp::read_int(lp, pos);
                node.put_int(v);
                pos = next;
            }
            let values = if flags & FLAG_SAME_FIELDS != 0 {
                fields
            } else {
                let (n, next) = lp::read_int(lp, pos);
                node.put_int(n);
                pos = next;
                items += 1;
                2 * n
            };
            for _ in 0..values {
                pos = node.copy_item(lp, pos);
            }
            pos = lp::skip(lp, pos);
            node.lp_rest += lp::int_size(items + values) as u32;
        }
        node.bytes.shrink_to_fit();
        node
    }

    /// Appends the integer `v` as an element.
    fn put_int(&mut self, v: i64) {
        self.lp_rest += lp::push(&mut self.bytes, Item::Int(v)) as u32;
    }

    /// Appends the element of the listpack item at `pos` of `lp` as it stands; returns the
    /// position of the next item.
    fn copy_item(&mut self, lp: &[u8], pos: usize) -> usize {
        let len = lp::element_len(lp, pos);
        self.bytes.extend_from_slice(&lp[pos..pos + len]);
        self.lp_rest += lp::item_size(len) as u32;
        pos + lp::item_size(len)
    }

    /// The node as Redis's listpack.
    pub fn to_listpack(&self) -> Vec<u8> {
        let mut w = ListpackWriter::new(self.lp_len());
        w.int(self.live as i64);
        w.int(self.deleted as i64);
        let fields = self.master_fields();
        let mut pos = w.copy(&self.bytes, 0);
        for _ in 0..fields {
            pos = w.copy(&self.bytes, pos);
        }
        w.int(0);
        while pos < self.bytes.len() {
            let flags = lp::read_bare_int(&self.bytes, pos).0;
            for _ in 0..3 {
                pos = w.copy(&self.bytes, pos);
            }
            let (values, fixed) = if flags & FLAG_SAME_FIELDS != 0 {
                (fields, 3)
            } else {
                let n = lp::read_bare_int(&self.bytes, pos).0 as usize;
                pos = w.copy(&self.bytes, pos);
                (2 * n, 4)
            };
            for _ in 0..values {
                pos = w.copy(&self.bytes, pos);
            }
            w.int((fixed + values) as i64);
        }
        let lp = w.finish();
        debug_assert_eq!(lp.len(), self.lp_len());
        lp
    }

    /// The size of the node as a listpack (what `stream-node-max-bytes` limits).
    pub fn lp_len(&self) -> usize {
        HEADER
            + 1
            + lp::int_size(self.live as i64)
            + lp::int_size(self.deleted as i64)
            + self.lp_rest as usize
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Drops spare capacity (a node no longer appended to).
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }

    /// Live entries.
    pub fn live(&self) -> u64 {
        self.live as u64
    }

    /// Live and deleted entries.
    pub fn total(&self) -> u64 {
        self.live as u64 + self.deleted as u64
    }

    fn master_fields(&self) -> usize {
        lp::read_bare_int(&self.bytes, 0).0 as usize
    }

    /// Appends an entry (the caller checked `id` follows the node's last one and updated
    /// nothing else): compresses the fields when they are the master's.
    pub fn append(&mut self, master_id: StreamId, id: StreamId, pairs: &[&[u8]]) {
        let (fields, mut pos) = lp::read_bare_int(&self.bytes, 0);
        let mut same = fields as usize == pairs.len() / 2;
        for field in pairs.iter().step_by(2) {
            if !same {
                break;
            }
            let (item, next) = lp::read_bare(&self.bytes, pos);
            same = item_eq(item, field);
            pos = next;
        }
        let flags = if same { FLAG_SAME_FIELDS } else { 0 };
        let delta = StreamId::new(
            id.ms.wrapping_sub(master_id.ms),
            id.seq.wrapping_sub(master_id.seq),
        );
        self.push_entry(delta, flags, pairs);
    }

    /// Appends an entry's elements, making room first: an eighth of the node more, or the
    /// entry's bound if larger, so a growing node holds little spare (it is shrunk when the
    /// next node opens) at a handful of reallocations per hundred entries.
    fn push_entry(&mut self, delta: StreamId, flags: i64, pairs: &[&[u8]]) {
        let bound = entry_bound(pairs);
        if self.bytes.capacity() - self.bytes.len() < bound {
            self.bytes.reserve_exact(bound.max(self.bytes.len() / 8));
        }
        let b = &mut self.bytes;
        let n = pairs.len() / 2;
        let mut size = lp::push(b, Item::Int(flags))
            + lp::push(b, Item::Int(delta.ms as i64))
            + lp::push(b, Item::Int(delta.seq as i64));
        let same = flags & FLAG_SAME_FIELDS != 0;
        if !same {
            size += lp::push(b, Item::Int(n as i64));
        }
        for pair in pairs.chunks_exact(2) {
            if !same {
                size += lp::push_bytes(b, pair[0]);
            }
            size += lp::push_bytes(b, pair[1]);
        }
        let lp_count = 3 + n + if same { 0 } else { n + 1 };
        size += lp::int_size(lp_count as i64);
        self.lp_rest += size as u32;
        self.live += 1;
    }

    /// Every entry, tombstones included, in id order.
    pub fn entries(&self, master_id: StreamId) -> Entries<'_> {
        Entries {
            bytes: &self.bytes,
            master_id,
            master_fields: self.master_fields(),
            pos: self.first_entry as usize,
        }
    }

    /// The id of the last entry, tombstone or not.
    pub fn last_id(&self, master_id: StreamId) -> StreamId {
        self.entries(master_id).last().map_or(master_id, |e| e.id)
    }

    /// Marks live `entries` of this node deleted and moves them from the live count to the
    /// deleted count. A flags element is one byte (flags 0..=3), rewritten in place.
    pub fn mark_deleted(&mut self, entries: &[RawEntry]) {
        for e in entries {
            self.bytes[e.flags_pos] = (e.flags | FLAG_DELETED) as u8;
        }
        self.live -= entries.len() as u32;
        self.deleted += entries.len() as u32;
    }

    /// The field-value pairs of `entry`.
    pub fn pairs(&self, entry: &RawEntry) -> Pairs<'_> {
        let same = entry.flags & FLAG_SAME_FIELDS != 0;
        Pairs {
            bytes: &self.bytes,
            fields: same.then(|| lp::read_bare(&self.bytes, 0).1),
            pos: entry.body,
            left: entry.fields,
        }
    }

    /// Checks that `bytes` is a well-formed node for key `master_id` whose entries come
    /// after `after` (Redis's deep streamValidateListpackIntegrity, plus the id order).
    /// Returns its live entry count and its last entry id.
    pub fn validate(
        master_id: StreamId,
        bytes: &[u8],
        after: Option<StreamId>,
    ) -> Result<(u64, StreamId), String> {
        let mut items = Vec::new();
        listpack_items(bytes, &mut |i| {
            items.push(i);
            Ok(())
        })?;
        let mut c = Cursor(items.into_iter());
        let live = c.int("live count")?;
        let deleted = c.int("deleted count")?;
        let fields = c.int("master field count")?;
        let most = bytes.len() as i64;
        if live <= 0 || deleted < 0 || !(0..most).contains(&fields) {
            return Err("stream node counts out of range".into());
        }
        for _ in 0..fields {
            c.any("master field")?;
        }
        if c.int("master terminator")? != 0 {
            return Err("stream node master entry has no zero terminator".into());
        }
        let (mut seen, mut seen_live, mut last) = (0i64, 0i64, after);
        while !c.0.as_slice().is_empty() {
            let flags = c.int("flags")?;
            if !(0..=3).contains(&flags) {
                return Err(format!("stream entry flags {flags} out of range"));
            }
            let ms = c.int("ms delta")?;
            let seq = c.int("seq delta")?;
            let id = StreamId::new(
                master_id.ms.wrapping_add(ms as u64),
                master_id.seq.wrapping_add(seq as u64),
            );
            if id < master_id || last.is_some_and(|l| id <= l) {
                return Err(format!("stream entry {id} out of order"));
            }
            last = Some(id);
            let (items, want) = if flags & FLAG_SAME_FIELDS != 0 {
                (fields, fields + 3)
            } else {
                let n = c.int("field count")?;
                if !(0..most).contains(&n) {
                    return Err("stream entry field count out of range".into());
                }
                (2 * n, 2 * n + 4)
            };
            for _ in 0..items {
                c.any("field or value")?;
            }
            if c.int("lp-count")? != want {
                return Err("stream entry lp-count does not match".into());
            }
            seen += 1;
            if flags & FLAG_DELETED == 0 {
                seen_live += 1;
            }
        }
        if seen != live + deleted || seen_live != live {
            return Err("stream node counts do not match its entries".into());
        }
        Ok((live as u64, last.unwrap_or(master_id)))
    }
}

/// The items of a node being validated, read in order.
struct Cursor<'a>(std::vec::IntoIter<Item<'a>>);

impl<'a> Cursor<'a> {
    fn any(&mut self, what: &str) -> Result<Item<'a>, String> {
        self.0
            .next()
            .ok_or_else(|| format!("stream node ends before its {what}"))
    }

    fn int(&mut self, what: &str) -> Result<i64, String> {
        match self.any(what)? {
            Item::Int(v) => Ok(v),
            Item::Str(s) => {
                lp::canonical_int(s).ok_or_else(|| format!("stream node {what} is not an integer"))
            }
        }
    }
}

/// Whether a listpack item holds the bytes `s`.
fn item_eq(item: Item, s: &[u8]) -> bool {
    match item {
        Item::Str(b) => b == s,
        Item::Int(v) => lp::canonical_int(s) == Some(v),
    }
}

/// Writes a listpack item by item: bare elements copied with their backlen, integers
/// encoded; the header is filled in at the end.
struct ListpackWriter {
    out: Vec<u8>,
    items: usize,
}

impl ListpackWriter {
    fn new(capacity: usize) -> ListpackWriter {
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(&[0; HEADER]);
        ListpackWriter { out, items: 0 }
    }

    fn int(&mut self, v: i64) {
        encode_listpack_item(Item::Int(v), &mut self.out);
        self.items += 1;
    }

    /// Copies the bare element at `pos` of `bytes`; returns the next position.
    fn copy(&mut self, bytes: &[u8], pos: usize) -> usize {
        let len = lp::element_len(bytes, pos);
        self.out.extend_from_slice(&bytes[pos..pos + len]);
        push_backlen(len, &mut self.out);
        self.items += 1;
        pos + len
    }

    fn finish(mut self) -> Vec<u8> {
        self.out.push(0xff);
        let total = self.out.len() as u32;
        self.out[0..4].copy_from_slice(&total.to_le_bytes());
        let count = self.items.min(u16::MAX as usize) as u16;
        self.out[4..6].copy_from_slice(&count.to_le_bytes());
        self.out
    }
}

/// Iterator over a node's entries, tombstones included.
pub(crate) struct Entries<'a> {
    bytes: &'a [u8],
    master_id: StreamId,
    master_fields: usize,
    pos: usize,
}

impl Iterator for Entries<'_> {
    type Item = RawEntry;

    fn next(&mut self) -> Option<RawEntry> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let flags_pos = self.pos;
        let (flags, p) = lp::read_bare_int(self.bytes, flags_pos);
        let (ms, p) = lp::read_bare_int(self.bytes, p);
        let (seq, mut p) = lp::read_bare_int(self.bytes, p);
        let same = flags & FLAG_SAME_FIELDS != 0;
        let fields = if same {
            self.master_fields
        } else {
            let (n, next) = lp::read_bare_int(self.bytes, p);
            p = next;
            n as usize
        };
        let body = p;
        let items = if same { fields } else { fields * 2 };
        for _ in 0..items {
            p += lp::element_len(self.bytes, p);
        }
        self.pos = p;
        Some(RawEntry {
            flags_pos,
            id: StreamId::new(
                self.master_id.ms.wrapping_add(ms as u64),
                self.master_id.seq.wrapping_add(seq as u64),
            ),
            flags,
            fields,
            body,
        })
    }
}

/// Iterator over one entry's field-value pairs.
pub struct Pairs<'a> {
    bytes: &'a [u8],
    /// The next master field, when the entry uses the master's fields.
    fields: Option<usize>,
    pos: usize,
    left: usize,
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (Item<'a>, Item<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let at = self.fields.as_mut().unwrap_or(&mut self.pos);
        let (field, next) = lp::read_bare(self.bytes, *at);
        *at = next;
        let (value, next) = lp::read_bare(self.bytes, self.pos);
        self.pos = next;
        Some((field, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Pairs<'_> {}
