//! Goblin's set engine (Redis's set type): three forms with Redis 7.2's encodings and
//! the conversions of its t_set.c, on the sorted-set engine's arena, hash and Swiss table.
//!
//! * `intset`: sorted integers at the narrowest width (`OBJECT ENCODING` "intset").
//! * `listpack`: packed members in insertion order ("listpack").
//! * `table`: arena plus Swiss index ("hashtable").
//!
//! # Layout and bytes per member
//!
//! ```text
//! Set: 24 bytes inline (in the keyspace entry's value; the sorted set's niche leaves the
//! value 32 bytes), one exact-size heap buffer per small form:
//!
//! intset   (all members integers, <= set-max-intset-entries = 512)
//!   buf: [width: 1][v0][v1]...[vn-1]   ascending, little-endian, one width for all:
//!        2 bytes while every value fits i16, 4 for i32, 8 for i64
//!   cost: 1 + 2, 4 or 8 B/member (Redis: the same plus an 8-byte header)
//!
//! listpack (<= set-max-listpack-entries = 128 members of <= 64 bytes)
//!   buf: [count: 4][hdr|member][hdr|member]...   insertion order
//!        hdr = varint(len << 3 | 1): 1 byte for members < 16 B, 2 below 2 KiB
//!   cost: 4 + member + 1 B each ("m:1234567" costs 10 B)
//!
//! hashtable (anything larger)
//!   arena (Vec<u8>): [hdr|member]...          member + 1 (+ up to 1/4 growth slack,
//!                     ^ id = u32 byte offset                 garbage below half)
//!   swiss: Vec<[16 ctrl bytes | 16 u32 ids]>, 80 B per 16-slot group
//!          (1 + 4) / load = 5.7 B at 7/8 full .. 8.6 B just after growth by half
//!   header: 80 B, boxed
//!   14-byte members: 15 + ~5.7..8.6       => ~21..24 B/member
//!   "0".."999999":   ~6.9 + ~5.7..8.6     => ~13..16 B/member
//! ```
//!
//! Random members (SPOP, SRANDMEMBER) are O(1): an index into the intset, a walk of at
//! most 128 listpack entries, or random Swiss-table slots until one is occupied (at
//! least a quarter are, so four probes or fewer on average, exactly uniform). SSCAN on a
//! hashtable set walks member-hash thresholds that survive any resize or compaction;
//! the two small forms return everything in one step, as Redis does.

mod intset;
pub(crate) mod listpack;
mod table;

pub use intset::parse_int;

use intset::{digits, IntSet};
use listpack::PackSet;
use table::TableSet;

/// Redis's limit on intset entries (1G), whatever `set-max-intset-entries` says.
const INTSET_HARD_LIMIT: usize = 1 << 30;

/// The thresholds of the small forms, as Redis's `set-max-*` parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetConfig {
    /// `set-max-intset-entries` (default 512).
    pub max_intset_entries: usize,
    /// `set-max-listpack-entries` (default 128).
    pub max_listpack_entries: usize,
    /// `set-max-listpack-value` (default 64).
    pub max_listpack_value: usize,
}

impl Default for SetConfig {
    fn default() -> SetConfig {
        SetConfig {
            max_intset_entries: 512,
            max_listpack_entries: 128,
            max_listpack_value: 64,
        }
    }
}

impl SetConfig {
    /// The most entries an intset keeps (Redis's intsetMaxEntries).
    fn intset_max(&self) -> usize {
        self.max_intset_entries.min(INTSET_HARD_LIMIT)
    }
}

/// A set's form, named as `OBJECT ENCODING` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetEncoding {
    /// Sorted integers.
    Intset,
    /// Packed members in insertion order.
    Listpack,
    /// Arena and Swiss index.
    Hashtable,
}

impl SetEncoding {
    /// The name `OBJECT ENCODING` replies with.
    pub fn as_str(&self) -> &'static str {
        match self {
            SetEncoding::Intset => "intset",
            SetEncoding::Listpack => "listpack",
            SetEncoding::Hashtable => "hashtable",
        }
    }
}

/// One member as a form holds it: an intset's integer or stored bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member<'a> {
    /// An intset member.
    Int(i64),
    /// Member bytes.
    Bytes(&'a [u8]),
}

impl Member<'_> {
    /// Calls `f` with the member's bytes (an integer's decimal text).
    #[inline]
    pub fn with_bytes<R>(self, f: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Member::Int(v) => f(itoa::Buffer::new().format(v).as_bytes()),
            Member::Bytes(b) => f(b),
        }
    }

    /// The member's bytes, owned.
    pub fn to_vec(self) -> Vec<u8> {
        self.with_bytes(<[u8]>::to_vec)
    }
}

/// The form of a small set's bytes kept outside the set (see [`Set::packed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PackedSet {
    /// An intset's buffer: `[width: 1][integers]`.
    Intset,
    /// A listpack's entries, without the count in front (the entries give it).
    Listpack,
}

/// What [`add_to_listpack_entries`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordAdd {
    /// The member was held: nothing is written.
    Held,
    /// The member is new: the entries with it are written.
    Added,
    /// The set would convert (nothing is written): the caller's general path adds it.
    Declined,
}

/// SADD of `member` to a listpack set where a key's record holds its entries
/// ([`Set::packed`]'s [`PackedSet::Listpack`] bytes), without rebuilding the set: the
/// entries with `member` appended are written into `out` (cleared first) when it is new
/// and the set stays a listpack, by [`Set::add`]'s rule.
pub fn add_to_listpack_entries(
    entries: &[u8],
    member: &[u8],
    cfg: &SetConfig,
    out: &mut Vec<u8>,
) -> RecordAdd {
    let (held, count) = listpack::find_in_entries(entries, member);
    if held {
        return RecordAdd::Held;
    }
    if count >= cfg.max_listpack_entries || member.len() > cfg.max_listpack_value {
        return RecordAdd::Declined;
    }
    out.clear();
    out.reserve(entries.len() + 10 + member.len());
    out.extend_from_slice(entries);
    crate::entry::put_unscored(out, member);
    RecordAdd::Added
}

/// A set of unique byte strings.
#[derive(Clone, Debug)]
pub struct Set {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Int(IntSet),
    Pack(PackSet),
    Table(Box<TableSet>),
}

impl Set {
    /// An empty intset.
    pub fn new_intset() -> Set {
        Set {
            repr: Repr::Int(IntSet::default()),
        }
    }

    /// An empty listpack.
    pub fn new_listpack() -> Set {
        Set {
            repr: Repr::Pack(PackSet::default()),
        }
    }

    /// An empty hashtable with room for `len` members and `bytes` arena bytes.
    pub fn new_hashtable(len: usize, bytes: usize) -> Set {
        Set {
            repr: Repr::Table(Box::new(TableSet::with_capacity(len, bytes))),
        }
    }

    /// An empty set for about `size_hint` members of which `first` is one, in the form
    /// Redis 7.2's setTypeCreate picks (a hashtable is reserved for them).
    pub fn create(first: &[u8], size_hint: usize, cfg: &SetConfig) -> Set {
        if parse_int(first).is_some() && size_hint <= cfg.max_intset_entries {
            Set::new_intset()
        } else if size_hint <= cfg.max_listpack_entries {
            Set::new_listpack()
        } else {
            Set::new_hashtable(size_hint, 0)
        }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Int(s) => s.len(),
            Repr::Pack(s) => s.len(),
            Repr::Table(s) => s.len(),
        }
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current form.
    pub fn encoding(&self) -> SetEncoding {
        match &self.repr {
            Repr::Int(_) => SetEncoding::Intset,
            Repr::Pack(_) => SetEncoding::Listpack,
            Repr::Table(_) => SetEncoding::Hashtable,
        }
    }

    /// Whether `member` is held.
    pub fn contains(&self, member: &[u8]) -> bool {
        match &self.repr {
            Repr::Int(s) => parse_int(member).is_some_and(|v| s.contains(v)),
            Repr::Pack(s) => s.contains(member),
            Repr::Table(s) => s.contains(member),
        }
    }

    /// Before a write of `size_hint` members: converts a small form that cannot hold
    /// that many to a hashtable reserved for them (Redis's setTypeMaybeConvert).
    pub fn maybe_convert(&mut self, size_hint: usize, cfg: &SetConfig) {
        let too_many = match &self.repr {
            Repr::Int(_) => size_hint > cfg.max_intset_entries,
            Repr::Pack(_) => size_hint > cfg.max_listpack_entries,
            Repr::Table(_) => false,
        };
        if too_many {
            self.convert_to_table(size_hint);
        }
    }

    /// Adds `member`; false when it was already held. Converts as Redis 7.2's
    /// setTypeAdd: an intset past its limit becomes a hashtable; an intset that gains a
    /// non-integer becomes a listpack when that fits, else a hashtable; a full listpack,
    /// or one that gains a member that is too long, becomes a hashtable.
    pub fn add(&mut self, member: &[u8], cfg: &SetConfig) -> bool {
        match &mut self.repr {
            Repr::Table(t) => t.insert(member),
            Repr::Pack(p) => {
                if p.contains(member) {
                    return false;
                }
                if p.len() < cfg.max_listpack_entries && member.len() <= cfg.max_listpack_value {
                    p.push(member);
                } else {
                    let cap = p.len() + 1;
                    self.convert_to_table(cap);
                    self.add_new_to_table(member);
                }
                true
            }
            Repr::Int(s) => {
                if let Some(v) = parse_int(member) {
                    if !s.insert(v) {
                        return false;
                    }
                    let len = s.len();
                    if len > cfg.intset_max() {
                        self.convert_to_table(len);
                    }
                    return true;
                }
                let widest = s.min_max().map_or(0, |(lo, hi)| digits(lo).max(digits(hi)));
                let len = s.len();
                if len < cfg.max_listpack_entries
                    && member.len() <= cfg.max_listpack_value
                    && widest <= cfg.max_listpack_value
                {
                    self.convert_to_listpack();
                    if let Repr::Pack(p) = &mut self.repr {
                        p.push(member);
                    }
                } else {
                    self.convert_to_table(len + 1);
                    self.add_new_to_table(member);
                }
                true
            }
        }
    }

    fn add_new_to_table(&mut self, member: &[u8]) {
        if let Repr::Table(t) = &mut self.repr {
            t.insert(member);
        }
    }

    /// Removes `member`; false when it was not held. Nothing converts back.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Int(s) => parse_int(member).is_some_and(|v| s.remove(v)),
            Repr::Pack(s) => s.remove(member),
            Repr::Table(s) => s.remove(member),
        }
    }

    /// Every member: an intset ascending, a listpack in insertion order, a hashtable in
    /// slot order.
    pub fn iter(&self) -> impl Iterator<Item = Member<'_>> + '_ {
        let (ints, packed, table) = match &self.repr {
            Repr::Int(s) => (Some(s), None, None),
            Repr::Pack(s) => (None, Some(s), None),
            Repr::Table(s) => (None, None, Some(s)),
        };
        let ints = ints
            .into_iter()
            .flat_map(|s| (0..s.len()).map(|i| Member::Int(s.get(i))));
        let packed = packed
            .into_iter()
            .flat_map(|s| s.members().map(Member::Bytes));
        let table = table
            .into_iter()
            .flat_map(|s| s.members().map(Member::Bytes));
        ints.chain(packed).chain(table)
    }

    /// A uniformly drawn member, from the random `seed` (the set is not empty).
    pub fn random(&self, seed: u64) -> Member<'_> {
        match &self.repr {
            Repr::Int(s) => Member::Int(s.get((seed % s.len() as u64) as usize)),
            Repr::Pack(s) => Member::Bytes(s.get((seed % s.len() as u64) as usize)),
            Repr::Table(s) => Member::Bytes(s.random(seed)),
        }
    }

    /// Removes and returns a uniformly drawn member (the set is not empty).
    pub fn pop_random(&mut self, seed: u64) -> Vec<u8> {
        if let Repr::Table(t) = &mut self.repr {
            return t.pop_random(seed);
        }
        let member = self.random(seed).to_vec();
        self.remove(&member);
        member
    }

    /// When every member is an integer and an intset holds them all, converts to an
    /// intset (Redis's maybeConvertToIntset, at the end of SINTERSTORE).
    pub fn maybe_convert_to_intset(&mut self, cfg: &SetConfig) {
        if matches!(self.repr, Repr::Int(_)) || self.len() > cfg.intset_max() {
            return;
        }
        let mut ints = IntSet::default();
        for m in self.iter() {
            match m {
                Member::Int(v) => ints.insert(v),
                Member::Bytes(b) => match parse_int(b) {
                    Some(v) => ints.insert(v),
                    None => return,
                },
            };
        }
        self.repr = Repr::Int(ints);
    }

    /// Converts to a listpack.
    fn convert_to_listpack(&mut self) {
        let mut p = PackSet::default();
        for m in self.iter() {
            m.with_bytes(|b| p.push(b));
        }
        self.repr = Repr::Pack(p);
    }

    /// Converts to a hashtable reserved for `cap` members.
    fn convert_to_table(&mut self, cap: usize) {
        let bytes = match &self.repr {
            Repr::Pack(p) => listpack::bytes_for(p.members()),
            _ => 0,
        };
        let mut t = TableSet::with_capacity(cap, bytes);
        for m in self.iter() {
            m.with_bytes(|b| t.insert(b));
        }
        self.repr = Repr::Table(Box::new(t));
    }

    /// One SSCAN step: some members to `emit`, and the cursor to pass next (0 when the
    /// scan is complete). The small forms give everything at once.
    pub fn scan(&self, cursor: u64, count: usize, mut emit: impl FnMut(&[u8])) -> u64 {
        match &self.repr {
            Repr::Table(t) => t.scan(cursor, count, emit),
            _ => {
                for m in self.iter() {
                    m.with_bytes(&mut emit);
                }
                0
            }
        }
    }

    /// An intset's width (2, 4 or 8) and packed contents, the body of an RDB intset blob.
    pub fn intset_contents(&self) -> Option<(u8, &[u8])> {
        match &self.repr {
            Repr::Int(s) => Some((s.width(), s.contents())),
            _ => None,
        }
    }

    /// The intset of an RDB blob's `width` and `contents`, converted to a hashtable when
    /// it holds more than `set-max-intset-entries` (as Redis loads it); None when the
    /// blob is not strictly ascending at a valid width.
    pub fn from_intset_contents(width: u8, contents: &[u8], cfg: &SetConfig) -> Option<Set> {
        let mut set = Set {
            repr: Repr::Int(IntSet::from_contents(width, contents)?),
        };
        if set.len() > cfg.max_intset_entries {
            set.convert_to_table(set.len());
        }
        Some(set)
    }

    /// A small set's bytes, for a caller that keeps it elsewhere (the key table, inside the
    /// key's record): the intset's buffer or the listpack's entries; None for a hashtable.
    pub fn packed(&self) -> Option<(PackedSet, &[u8])> {
        match &self.repr {
            Repr::Int(s) => Some((PackedSet::Intset, s.bytes())),
            Repr::Pack(s) => Some((PackedSet::Listpack, s.entry_bytes())),
            Repr::Table(_) => None,
        }
    }

    /// The set whose bytes [`Set::packed`] gave.
    pub fn from_packed(form: PackedSet, bytes: &[u8]) -> Set {
        let repr = match form {
            PackedSet::Intset => Repr::Int(IntSet::from_bytes(bytes)),
            PackedSet::Listpack => Repr::Pack(PackSet::from_entry_bytes(bytes)),
        };
        let set = Set { repr };
        debug_assert!({
            set.validate();
            true
        });
        set
    }

    /// Heap bytes this set holds (the inline 24 bytes are the caller's to count).
    pub fn memory_bytes(&self) -> usize {
        match &self.repr {
            Repr::Int(s) => s.memory_bytes(),
            Repr::Pack(s) => s.memory_bytes(),
            Repr::Table(s) => s.memory_bytes(),
        }
    }

    /// Checks every internal invariant, panicking on the first violation; for tests.
    pub fn validate(&self) {
        match &self.repr {
            Repr::Int(s) => s.validate(),
            Repr::Pack(s) => s.validate(),
            Repr::Table(s) => s.validate(),
        }
    }
}

#[cfg(test)]
mod tests;
