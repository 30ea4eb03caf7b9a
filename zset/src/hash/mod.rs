//! Goblin's hash engine (Redis's hash type): two forms with Redis 7.2's encodings and the
//! conversions of its t_hash.c, on the sorted-set engine's arena, hash and Swiss table.
//!
//! * `listpack`: packed field/value pairs in insertion order (`OBJECT ENCODING`
//!   "listpack").
//! * `table`: arena plus Swiss index of fields ("hashtable").
//! * `shape`: a listpack's shaped form for a caller that keeps it elsewhere: a field list
//!   many hashes share kept once in a dictionary ([`FieldShapes`]), the values alone here.
//! * `digest`: the member hash, which every Swiss table of the crate uses (the sorted
//!   sets', the sets' and this one's), reached as `crate::hash::hash`.
//!
//! # Layout and bytes per field
//!
//! ```text
//! Hash: 16 bytes inline (in the keyspace entry's value, which stays 32 bytes), one
//! exact-size heap buffer for the small form:
//!
//! listpack (<= hash-max-listpack-entries = 512 pairs, every field and value
//!           <= hash-max-listpack-value = 64 bytes)
//!   buf: [count: 4][hdr|field][hdr|value][hdr|field][hdr|value]...   insertion order
//!        hdr = varint(len << 3 | 1): 1 byte below 16 B, 2 below 2 KiB
//!   cost: 4 + (1 + field + 1 + value) B per pair
//!         ("age" = "36": 7 B; a 5-field profile of 60 B of text: 74 B, one allocation)
//!
//! hashtable (anything larger)
//!   arena (Vec<u8>): [hdr|field][hdr|value]...    2 + field + value
//!                     ^ id = u32 byte offset      (+ up to 1/4 growth slack, garbage
//!                                                  below half)
//!   swiss: Vec<[16 ctrl bytes | 16 u32 ids]>, 80 B per 16-slot group
//!          (1 + 4) / load = 5.7 B at 7/8 full .. 8.6 B just after growth by half
//!   header: 104 B, boxed (80, and an empty B-tree for field times)
//!   "field:123456" = 8-byte value: 22 + ~5.7..8.6 (+ slack) => ~28..36 B/field
//! ```
//!
//! A field's value is found through the field's entry: the value entry starts where the
//! field entry ends, so the index holds one id per pair. Random fields (HRANDFIELD) are
//! O(1) on a hashtable (random Swiss-table slots until one is occupied, exactly uniform)
//! and a walk of at most 512 pairs on a listpack. HSCAN on a hashtable walks field-hash
//! thresholds that survive any resize or compaction; a listpack returns everything in one
//! step, as Redis does.
//!
//! Limits: a hashtable's arena is capped at 4 GiB (ids are `u32` offsets), as a set's.
//!
//! # Field expiry (Redis 7.4's HEXPIRE)
//!
//! A field's expiry time (Unix ms) is the score of its field entry, which costs 0 bytes
//! at 0 (no time) and 7 bytes with one, so a hash without times costs exactly what it did.
//! The listpack gets a mark bit in its count and Redis's listpackex order (timed fields
//! first, earliest first); the hashtable keeps a B-tree of `(time, field hash)`, 16 bytes
//! per timed field, unallocated while none has a time (its header is 104 bytes, was 80). Times are kept, never acted on: the
//! caller decides when a field is due and removes it ([`Hash::take_expired`]).

mod digest;
mod listpack;
mod shape;
mod table;

pub(crate) use digest::hash;

use listpack::PackHash;
pub use shape::{shape_id, FieldShapes};
use table::TableHash;

/// The thresholds of the small form, as Redis's `hash-max-listpack-*` parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashConfig {
    /// `hash-max-listpack-entries` (default 512, Redis 7.2's).
    pub max_listpack_entries: usize,
    /// `hash-max-listpack-value` (default 64): the longest field or value a listpack keeps.
    pub max_listpack_value: usize,
}

impl Default for HashConfig {
    fn default() -> HashConfig {
        HashConfig {
            max_listpack_entries: 512,
            max_listpack_value: 64,
        }
    }
}

/// A hash's form, named as `OBJECT ENCODING` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashEncoding {
    /// Packed pairs in insertion order.
    Listpack,
    /// Arena and Swiss index.
    Hashtable,
    /// Packed pairs that may carry expiry times (Redis 7.4's listpackex).
    ListpackEx,
}

impl HashEncoding {
    /// The name `OBJECT ENCODING` replies with.
    pub fn as_str(&self) -> &'static str {
        match self {
            HashEncoding::Listpack => "listpack",
            HashEncoding::Hashtable => "hashtable",
            HashEncoding::ListpackEx => "listpackex",
        }
    }

    /// Whether this is a packed form (listpack or listpackex).
    pub fn is_packed(&self) -> bool {
        *self != HashEncoding::Hashtable
    }
}

/// Whether a field with expiry time `expire_at` is alive at `now` (Redis's lazy check:
/// a field is due once its time is before the command's time).
pub fn field_alive(expire_at: Option<u64>, now: u64) -> bool {
    expire_at.is_none_or(|t| t >= now)
}

/// A map of unique byte-string fields to byte-string values.
#[derive(Clone, Debug)]
pub struct Hash {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Pack(PackHash),
    Table(Box<TableHash>),
}

impl Default for Hash {
    fn default() -> Hash {
        Hash::new()
    }
}

impl Hash {
    /// An empty hash in the listpack form (Redis's createHashObject).
    pub fn new() -> Hash {
        Hash {
            repr: Repr::Pack(PackHash::default()),
        }
    }

    /// An empty hash in the form Redis's loader picks for `len` pairs: a listpack unless
    /// `len` is past `hash-max-listpack-entries`, else a hashtable reserved for them.
    pub fn with_expected(len: usize, cfg: &HashConfig) -> Hash {
        if len > cfg.max_listpack_entries {
            Hash {
                repr: Repr::Table(Box::new(TableHash::with_capacity(len, 0))),
            }
        } else {
            Hash::new()
        }
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.len(),
            Repr::Table(t) => t.len(),
        }
    }

    /// Whether the hash has no field.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current form.
    pub fn encoding(&self) -> HashEncoding {
        match &self.repr {
            Repr::Pack(p) if p.is_ex() => HashEncoding::ListpackEx,
            Repr::Pack(_) => HashEncoding::Listpack,
            Repr::Table(_) => HashEncoding::Hashtable,
        }
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match &self.repr {
            Repr::Pack(p) => p.get(field),
            Repr::Table(t) => t.get(field),
        }
    }

    /// Whether `field` is held.
    pub fn contains(&self, field: &[u8]) -> bool {
        self.get(field).is_some()
    }

    /// The value of `field` and its expiry time.
    pub fn get_with_expiry(&self, field: &[u8]) -> Option<(&[u8], Option<u64>)> {
        match &self.repr {
            Repr::Pack(p) => p.get_with_expiry(field),
            Repr::Table(t) => t.get_with_expiry(field),
        }
    }

    /// Sets `field` to `value`; true when the field is new. A held field loses its expiry
    /// time (HSET). As Redis's hashTypeSet: a listpack converts to a hashtable first when
    /// the field or the value is longer than `hash-max-listpack-value`, and after the write
    /// when it holds more than `hash-max-listpack-entries` pairs. Nothing converts back.
    pub fn set(&mut self, field: &[u8], value: &[u8], cfg: &HashConfig) -> bool {
        self.set_inner(field, value, cfg, false)
    }

    /// As [`Hash::set`], but a held field keeps its expiry time (HINCRBY, HINCRBYFLOAT).
    pub fn set_keep_ttl(&mut self, field: &[u8], value: &[u8], cfg: &HashConfig) -> bool {
        self.set_inner(field, value, cfg, true)
    }

    fn set_inner(&mut self, field: &[u8], value: &[u8], cfg: &HashConfig, keep: bool) -> bool {
        if let Repr::Pack(_) = self.repr {
            if field.len().max(value.len()) > cfg.max_listpack_value {
                self.convert_to_table(self.len() + 1);
            }
        }
        match &mut self.repr {
            Repr::Pack(p) => {
                let added = p.set(field, value, keep);
                if p.len() > cfg.max_listpack_entries {
                    self.convert_to_table(self.len());
                }
                added
            }
            Repr::Table(t) => t.set(field, value, keep),
        }
    }

    /// Makes the hash able to keep field expiry times: a listpack becomes a listpackex (as
    /// Redis converts on a hash's first HEXPIRE-family write); other forms are unchanged.
    pub fn enable_field_expiry(&mut self) {
        if let Repr::Pack(p) = &mut self.repr {
            p.make_ex();
        }
    }

    /// Sets (Some) or clears (None) the expiry time of `field`; false when the field is not
    /// held. A time on a plain listpack makes it a listpackex first.
    pub fn set_field_expiry(&mut self, field: &[u8], expire_at: Option<u64>) -> bool {
        if expire_at.is_some() {
            self.enable_field_expiry();
        }
        match &mut self.repr {
            Repr::Pack(p) if !p.is_ex() => p.get_with_expiry(field).is_some(),
            Repr::Pack(p) => p.set_expiry(field, expire_at),
            Repr::Table(t) => t.set_expiry(field, expire_at),
        }
    }

    /// The earliest expiry time of a field, if any field has one.
    pub fn min_field_expiry(&self) -> Option<u64> {
        match &self.repr {
            Repr::Pack(p) => p.min_expiry(),
            Repr::Table(t) => t.min_expiry(),
        }
    }

    /// Removes up to `max` fields whose time is at or before `now`, earliest first, and
    /// returns their names (active expiry).
    pub fn take_expired(&mut self, now: u64, max: usize) -> Vec<Vec<u8>> {
        match &mut self.repr {
            Repr::Pack(p) => p.take_expired(now, max),
            Repr::Table(t) => t.take_expired(now, max),
        }
    }

    /// Number of fields alive at `now` (HGETALL's count: due fields not removed yet are
    /// left out).
    pub fn live_len(&self, now: u64) -> usize {
        match self.min_field_expiry() {
            Some(t) if t < now => self
                .iter_with_expiry()
                .filter(|e| field_alive(e.2, now))
                .count(),
            _ => self.len(),
        }
    }

    /// Converts a listpack to a hashtable up front when one write brings more pairs than a
    /// listpack holds (the count test of Redis's hashTypeTryConversion), reserving room
    /// for them all.
    pub fn maybe_convert(&mut self, incoming: usize, cfg: &HashConfig) {
        if self.encoding() == HashEncoding::Listpack && incoming > cfg.max_listpack_entries {
            self.convert_to_table(self.len() + incoming);
        }
    }

    /// Removes `field`; false when it was not held.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Pack(p) => p.remove(field),
            Repr::Table(t) => t.remove(field),
        }
    }

    /// Every pair: insertion order for a listpack, slot order for a hashtable.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.repr {
            Repr::Pack(p) => Box::new(p.pairs()),
            Repr::Table(t) => Box::new(t.pairs()),
        })
    }

    /// Every pair with its field's expiry time, in [`Hash::iter`]'s order.
    pub fn iter_with_expiry(&self) -> IterEx<'_> {
        IterEx(match &self.repr {
            Repr::Pack(p) => Box::new(p.triples()),
            Repr::Table(t) => Box::new(t.triples()),
        })
    }

    /// A uniformly drawn pair (the hash is not empty); `seed` is the caller's randomness.
    pub fn random(&self, seed: u64) -> (&[u8], &[u8]) {
        match &self.repr {
            Repr::Pack(p) => p
                .pairs()
                .nth((seed % p.len() as u64) as usize)
                .expect("index below len"),
            Repr::Table(t) => t.random(seed),
        }
    }

    /// One HSCAN step: some pairs to `emit` with their fields' expiry times, and the
    /// cursor to pass next (0 when the scan is complete). A listpack gives everything at
    /// once.
    pub fn scan(
        &self,
        cursor: u64,
        count: usize,
        mut emit: impl FnMut(&[u8], &[u8], Option<u64>),
    ) -> u64 {
        match &self.repr {
            Repr::Table(t) => t.scan(cursor, count, emit),
            Repr::Pack(p) => {
                for (f, v, t) in p.triples() {
                    emit(f, v, t);
                }
                0
            }
        }
    }

    /// Converts to a hashtable reserved for `cap` pairs.
    fn convert_to_table(&mut self, cap: usize) {
        let Repr::Pack(p) = &self.repr else {
            return;
        };
        let mut t = TableHash::with_capacity(cap, p.entry_bytes());
        for (f, v, at) in p.triples() {
            t.set_with_expiry(f, v, at, false);
        }
        self.repr = Repr::Table(Box::new(t));
    }

    /// The listpack's bytes (a count and the pairs, with the listpackex mark and times),
    /// for a caller that keeps a small hash elsewhere (the key table, inside a key's
    /// record); None for a hashtable.
    pub fn packed(&self) -> Option<&[u8]> {
        match &self.repr {
            Repr::Pack(p) => Some(p.bytes()),
            Repr::Table(_) => None,
        }
    }

    /// The listpack hash whose bytes [`Hash::packed`] gave.
    pub fn from_packed(bytes: &[u8]) -> Hash {
        Hash::from_pack(PackHash::from_bytes(bytes))
    }

    /// The hash of listpack `p`, checked in debug builds.
    fn from_pack(p: PackHash) -> Hash {
        let hash = Hash {
            repr: Repr::Pack(p),
        };
        debug_assert!({
            hash.validate();
            true
        });
        hash
    }

    /// Heap bytes this hash holds (the inline 16 bytes are the caller's to count).
    pub fn memory_bytes(&self) -> usize {
        match &self.repr {
            Repr::Pack(p) => p.memory_bytes(),
            Repr::Table(t) => t.memory_bytes(),
        }
    }

    /// Checks every internal invariant, panicking on the first violation; for tests.
    pub fn validate(&self) {
        match &self.repr {
            Repr::Pack(p) => p.validate(),
            Repr::Table(t) => t.validate(),
        }
    }
}

/// The pairs of a [`Hash`], from [`Hash::iter`] (one boxed walk of either form).
pub struct Iter<'a>(Box<dyn Iterator<Item = (&'a [u8], &'a [u8])> + 'a>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

/// A field, its value and its expiry time.
pub type Triple<'a> = (&'a [u8], &'a [u8], Option<u64>);

/// The pairs of a [`Hash`] with their expiry times, from [`Hash::iter_with_expiry`].
pub struct IterEx<'a>(Box<dyn Iterator<Item = Triple<'a>> + 'a>);

impl<'a> Iterator for IterEx<'a> {
    type Item = Triple<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

#[cfg(test)]
mod tests;
