//! One node of a stream: a listpack holding a master entry and the entries that follow it,
//! ids delta-encoded against the node's key (its master id), Redis's t_stream.c layout
//! item for item, so a node is an RDB node as it stands.
//!
//! ```text
//! master: [live][deleted][n][field 1]..[field n][0]
//! entry:  [flags][ms - master.ms][seq - master.seq]  [n][field 1][value 1]..[lp-count]
//!     or  [flags][ms - master.ms][seq - master.seq]  [value 1]..[value n][lp-count]
//!         (the second form when the fields are the master's: flag SAME_FIELDS)
//! ```
//!
//! Integers take 1 byte + 1 backlen for 0..=127, 2 + 1 up to +-4095, and up to 9 + 1;
//! strings that are canonical decimal integers are stored as integers. An entry of two
//! short values with the master's fields so costs 4 fixed items (flags, two deltas,
//! lp-count: 8 bytes while the deltas stay under 128 ms and 128 sequence steps, 10 within
//! 4 s) plus each value's 1-byte header, data and 1-byte backlen. Deleted entries keep
//! their bytes with flag DELETED until the node goes.

use super::lp::{self, HEADER};
use super::StreamId;
use crate::packed::{listpack_items, Item};

/// Entry flag: the entry was deleted (a tombstone).
pub(crate) const FLAG_DELETED: i64 = 1;
/// Entry flag: the entry's fields are the master entry's, and only its values are stored.
pub(crate) const FLAG_SAME_FIELDS: i64 = 2;

/// A node: the listpack bytes.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    lp: Vec<u8>,
}

/// The position of an entry inside its node, decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawEntry {
    /// Byte position of the flags item.
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

/// The master entry's parts: field count, first field, first entry.
struct Master {
    fields: usize,
    first_field: usize,
    first_entry: usize,
}

impl Node {
    /// A node whose master entry and first entry come from `pairs` (field, value, ...),
    /// the entry's id being the node's key; room reserved for `capacity` bytes.
    pub fn create(pairs: &[&[u8]], capacity: usize) -> Node {
        let mut lp = lp::new(capacity);
        let n = pairs.len() / 2;
        lp::append(&mut lp, Item::Int(1));
        lp::append(&mut lp, Item::Int(0));
        lp::append(&mut lp, Item::Int(n as i64));
        for field in pairs.iter().step_by(2) {
            lp::append_bytes(&mut lp, field);
        }
        lp::append(&mut lp, Item::Int(0));
        let mut node = Node { lp };
        node.push_entry(StreamId::MIN, FLAG_SAME_FIELDS, pairs);
        node
    }

    /// A node of listpack bytes that [`Node::validate`] accepted.
    pub fn from_validated(lp: Vec<u8>) -> Node {
        Node { lp }
    }

    /// The listpack bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.lp
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.lp.capacity()
    }

    /// Drops spare capacity (a node no longer appended to).
    pub fn shrink_to_fit(&mut self) {
        self.lp.shrink_to_fit();
    }

    /// Live entries.
    pub fn live(&self) -> u64 {
        lp::read_int(&self.lp, HEADER).0 as u64
    }

    /// Live and deleted entries.
    pub fn total(&self) -> u64 {
        let (live, next) = lp::read_int(&self.lp, HEADER);
        (live + lp::read_int(&self.lp, next).0) as u64
    }

    fn master(&self) -> Master {
        let deleted = lp::skip(&self.lp, HEADER);
        let count = lp::skip(&self.lp, deleted);
        let (fields, first_field) = lp::read_int(&self.lp, count);
        let mut pos = first_field;
        for _ in 0..fields {
            pos = lp::skip(&self.lp, pos);
        }
        Master {
            fields: fields as usize,
            first_field,
            first_entry: lp::skip(&self.lp, pos),
        }
    }

    /// Appends an entry (the caller checked `id` follows the node's last one and updated
    /// nothing else): bumps the live count, compresses the fields when they are the master's.
    pub fn append(&mut self, master_id: StreamId, id: StreamId, pairs: &[&[u8]]) {
        let live = self.live();
        lp::replace_int(&mut self.lp, HEADER, live as i64 + 1);
        let m = self.master();
        let mut same = m.fields == pairs.len() / 2;
        let mut pos = m.first_field;
        for field in pairs.iter().step_by(2) {
            if !same {
                break;
            }
            let (item, next) = lp::read(&self.lp, pos);
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

    fn push_entry(&mut self, delta: StreamId, flags: i64, pairs: &[&[u8]]) {
        let lp = &mut self.lp;
        let n = pairs.len() / 2;
        lp::append(lp, Item::Int(flags));
        lp::append(lp, Item::Int(delta.ms as i64));
        lp::append(lp, Item::Int(delta.seq as i64));
        let same = flags & FLAG_SAME_FIELDS != 0;
        if !same {
            lp::append(lp, Item::Int(n as i64));
        }
        for pair in pairs.chunks_exact(2) {
            if !same {
                lp::append_bytes(lp, pair[0]);
            }
            lp::append_bytes(lp, pair[1]);
        }
        let lp_count = 3 + n + if same { 0 } else { n + 1 };
        lp::append(lp, Item::Int(lp_count as i64));
    }

    /// Every entry, tombstones included, in id order.
    pub fn entries(&self, master_id: StreamId) -> Entries<'_> {
        Entries {
            lp: &self.lp,
            master_id,
            master_fields: self.master().fields,
            pos: self.master().first_entry,
        }
    }

    /// The id of the last entry, tombstone or not.
    pub fn last_id(&self, master_id: StreamId) -> StreamId {
        self.entries(master_id).last().map_or(master_id, |e| e.id)
    }

    /// Marks live `entries` of this node deleted and moves them from the live count to the
    /// deleted count. The flags keep their 1-byte width, so the positions hold until the
    /// counters (which may change width) are written last.
    pub fn mark_deleted(&mut self, entries: &[RawEntry]) {
        for e in entries {
            lp::replace_int(&mut self.lp, e.flags_pos, e.flags | FLAG_DELETED);
        }
        self.add_to_counts(-(entries.len() as i64));
    }

    /// Moves `n` entries from the deleted count to the live count (negative: the other way).
    fn add_to_counts(&mut self, n: i64) {
        let live = lp::read_int(&self.lp, HEADER).0;
        lp::replace_int(&mut self.lp, HEADER, live + n);
        let deleted_pos = lp::skip(&self.lp, HEADER);
        let deleted = lp::read_int(&self.lp, deleted_pos).0;
        lp::replace_int(&mut self.lp, deleted_pos, deleted - n);
    }

    /// The field-value pairs of `entry`.
    pub fn pairs(&self, entry: &RawEntry) -> Pairs<'_> {
        let same = entry.flags & FLAG_SAME_FIELDS != 0;
        Pairs {
            lp: &self.lp,
            fields: same.then(|| self.master().first_field),
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

/// Iterator over a node's entries, tombstones included.
pub(crate) struct Entries<'a> {
    lp: &'a [u8],
    master_id: StreamId,
    master_fields: usize,
    pos: usize,
}

impl Iterator for Entries<'_> {
    type Item = RawEntry;

    fn next(&mut self) -> Option<RawEntry> {
        if self.lp[self.pos] == 0xff {
            return None;
        }
        let flags_pos = self.pos;
        let (flags, p) = lp::read_int(self.lp, flags_pos);
        let (ms, p) = lp::read_int(self.lp, p);
        let (seq, mut p) = lp::read_int(self.lp, p);
        let fields = if flags & FLAG_SAME_FIELDS != 0 {
            self.master_fields
        } else {
            let (n, next) = lp::read_int(self.lp, p);
            p = next;
            n as usize
        };
        let body = p;
        let items = if flags & FLAG_SAME_FIELDS != 0 {
            fields
        } else {
            fields * 2
        };
        for _ in 0..items + 1 {
            p = lp::skip(self.lp, p);
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
    lp: &'a [u8],
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
        let field = match &mut self.fields {
            Some(at) => {
                let (f, next) = lp::read(self.lp, *at);
                *at = next;
                f
            }
            None => {
                let (f, next) = lp::read(self.lp, self.pos);
                self.pos = next;
                f
            }
        };
        let (value, next) = lp::read(self.lp, self.pos);
        self.pos = next;
        Some((field, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Pairs<'_> {}
