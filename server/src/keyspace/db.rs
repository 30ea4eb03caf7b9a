//! One database: the compact key table of `goblin_zset::keytable` holding the values.
//!
//! Layout:
//!
//! ```text
//!  table: KeyTable<Value>   index: Swiss table of 4-byte record handles (5 B a slot)
//!                           record: [hdr 1][access clock 3][expiry 0|12][key len][key][value]
//!                             value in the record: an `int` string (1-8 bytes), an inline
//!                             string (<= 22 bytes, the `embstr`/`raw` flag in the header)
//!                             or a small collection's packed form of up to 255 bytes,
//!                             its tag (`tag`) in the header: a listpack hash (count and
//!                             pairs) or its shaped form (a shape number and the values,
//!                             the field names in `packer`'s dictionary), an intset (width
//!                             and integers), a listpack set's, list's or sorted set's
//!                             entries (no count: they give it; a sorted set's with its
//!                             members' shared prefix once when that is smaller);
//!                             any other value: a 4-byte index into the table's slab of
//!                             `Value`s (32 B each)
//!  out + scratch            a record-held value handed out as a `Value` (`&Value` for a
//!                           read, `&mut Value` for a write): the copy lives in `scratch`
//!                           and a written one is put back into its record ("settled")
//!                           before the table next changes shape; readers meanwhile see
//!                           the copy
//! ```
//!
//! A 5-field profile hash is so one record of about 60 bytes (key, shape number, values)
//! where it was a record, a 32-byte slab slot and a separate 96-byte malloc chunk (about
//! 100 bytes with its field names, before they went into the shape dictionary: H1 went
//! from 21.5 to 14.3 RSS bytes a field, Redis 7.2.4 32.2); reading it costs
//! rebuilding the listpack in `scratch` (one allocation), and a string costs no allocation.
//! Small sets, lists and sorted sets live in their records the same way: a key of 10
//! 16-byte list elements is a ~190-byte record where it was a 28-byte record, a 32-byte
//! slab slot and a 192-byte malloc chunk (about 60 bytes less a key).
//!
//! A key with an expiry carries it in its record (12 bytes) and is listed for the sampling
//! of active expiry and of the volatile eviction policies; the 24-bit access clock is
//! Redis's `lru` field (seconds of the LRU clock, wrapping after 194 days, or the LFU
//! counter with its decrement time).
//!
//! SCAN walks hash thresholds (`KeyTable::scan`): a key present for the whole scan is
//! returned exactly once, whatever grows, shrinks or moves meanwhile; a key added during the
//! scan may or may not be returned, as Redis promises.

use super::field_expiry::FieldExpiry;
use super::set::{RecordListpack, SetMut};
use super::slots::SlotIndex;
use super::string::{Compact, StringValue};
use super::value::{Value, WrongType};
use super::zset::{RecordZSet, ZSetMut, ZSetRef};
use super::{Hash, List, Set, SortedSet};
use crate::cluster::slot::key_slot;
use goblin_zset::hash::{shape_id, FieldShapes};
use goblin_zset::keytable::STR_MAX;
use goblin_zset::keytable::{self as kt, KeyTable};
use goblin_zset::list::{push_to_listpack_entries, End, ListConfig};
use goblin_zset::set::{add_to_listpack_entries, PackedSet, RecordAdd, SetConfig};
use goblin_zset::{Config, RecordInsert, RecordSet, ZSet};
use std::ops::Deref;

pub use goblin_zset::keytable::{Slot, CLOCK_MAX};

/// A key found by a keyspace lookup: its value (in the table's slab, or the copy of a
/// record-held string) and its record.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    /// The value.
    pub value: &'a Value,
    table: &'a KeyTable<Value>,
    packer: &'a Packer,
    slot: Slot,
}

impl<'a> Entry<'a> {
    /// The key's record (read on demand: most lookups want the value alone).
    #[inline]
    fn record(&self) -> kt::EntryRef<'a, Value> {
        self.table.entry(self.slot)
    }

    /// The key bytes.
    #[inline]
    pub fn key(&self) -> &'a [u8] {
        self.record().key()
    }

    /// The expiry time in Unix milliseconds, if any.
    #[inline]
    pub fn expire_at(&self) -> Option<u64> {
        self.record().expire_at()
    }

    /// Whether the key's time has come at Unix time `now_ms`.
    #[inline]
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at().is_some_and(|at| at <= now_ms)
    }

    /// The 24-bit access field (LRU seconds or LFU counter, see `lfu`).
    #[inline]
    pub fn accessed(&self) -> u32 {
        self.record().clock()
    }

    /// Bytes the key costs (MEMORY USAGE): its record, index slot, slab slot and
    /// volatile-list entry in the table, and a heap value's own allocations (a record-held
    /// value's bytes are its record's).
    pub fn memory_usage(&self) -> usize {
        self.packer.value_bytes(self.value, self.record().value())
            + self.table.entry_bytes(self.slot)
    }
}

/// A key found for writing: its value, to change in place.
pub struct EntryMut<'a> {
    /// The value.
    pub value: &'a mut Value,
    expire_at: Option<u64>,
}

impl EntryMut<'_> {
    /// The expiry time in Unix milliseconds, if any.
    #[inline]
    pub fn expire_at(&self) -> Option<u64> {
        self.expire_at
    }
}

/// A value read through a shared [`Db`]: borrowed from the table's slab, or rebuilt from a
/// record (an `int` or inline string costs no allocation, a small collection one); read it
/// through the `Deref`.
pub enum ValueCow<'a> {
    /// A value in the slab (or the checked-out copy).
    Borrowed(&'a Value),
    /// A value rebuilt from its record.
    Owned(Value),
}

impl Deref for ValueCow<'_> {
    type Target = Value;

    #[inline]
    fn deref(&self) -> &Value {
        match self {
            ValueCow::Borrowed(v) => v,
            ValueCow::Owned(v) => v,
        }
    }
}

/// A key read through a shared [`Db`] (SCAN, snapshots, sampling).
pub struct DbEntry<'a> {
    /// The value.
    pub value: ValueCow<'a>,
    record: kt::EntryRef<'a, Value>,
}

impl<'a> DbEntry<'a> {
    /// The key bytes.
    #[inline]
    pub fn key(&self) -> &'a [u8] {
        self.record.key()
    }

    /// The expiry time in Unix milliseconds, if any.
    #[inline]
    pub fn expire_at(&self) -> Option<u64> {
        self.record.expire_at()
    }

    /// Whether the key's time has come at Unix time `now_ms` (it is dead, though not yet
    /// removed).
    #[inline]
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at().is_some_and(|at| at <= now_ms)
    }

    /// The 24-bit access field.
    #[inline]
    pub fn accessed(&self) -> u32 {
        self.record.clock()
    }
}

/// A removed key's value and expiry.
pub struct Removed {
    /// The value.
    pub value: Value,
    /// The expiry time in Unix milliseconds, if it had one.
    pub expire_at: Option<u64>,
}

/// One numbered database.
pub struct Db {
    table: KeyTable<Value>,
    /// The slot whose record-held string is checked out into `scratch`.
    out: Option<Slot>,
    /// The shape of the checked-out record when it is a shaped hash.
    out_shape: Option<u32>,
    /// Whether the checked-out copy was handed out for writing (it is put back).
    dirty: bool,
    scratch: Value,
    /// Field shapes and the buffer of the record forms written.
    packer: Packer,
    /// The keys of each hash slot (cluster mode, database 0), else None.
    slot_index: Option<Box<SlotIndex>>,
    /// The hashes with field expiry times, for active field expiry.
    pub(super) field_expiry: FieldExpiry,
}

impl Default for Db {
    fn default() -> Db {
        Db {
            table: KeyTable::default(),
            out: None,
            out_shape: None,
            dirty: false,
            scratch: placeholder(),
            packer: Packer::default(),
            slot_index: None,
            field_expiry: FieldExpiry::default(),
        }
    }
}

/// What a sorted-set lookup finds in a record (see `Db::zset_kind`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// A small sorted set, read and written where the record holds it.
    ZSet,
    /// A heap value.
    Heap,
    /// Another value the record holds (a string or another small collection).
    Other,
}

/// Pushes `items` at `end` of the list `value` is: its new length, or `Err` for another
/// type.
#[inline]
fn push_onto(
    value: &mut Value,
    end: End,
    items: &[&[u8]],
    cfg: &ListConfig,
) -> Result<usize, WrongType> {
    let list = value.as_list_mut()?;
    list.push(end, items, cfg);
    Ok(list.len())
}

/// The value `scratch` holds when nothing is checked out (no allocation).
#[inline]
fn placeholder() -> Value {
    Value::Str(StringValue::from_int(0))
}

/// The tags of the packed forms a record holds (the key table's 3-bit tag).
mod tag {
    pub const HASH: u8 = 0;
    pub const SET_LISTPACK: u8 = 1;
    pub const SET_INTSET: u8 = 2;
    pub const LIST: u8 = 3;
    pub const ZSET: u8 = 4;
    pub const HASH_SHAPED: u8 = 5;
    pub const ZSET_PREFIXED: u8 = 6;
}

/// How values go into records and back: the dictionary of hash field shapes (see
/// `goblin_zset::hash::FieldShapes`: a small hash whose field list many share keeps its
/// values and a shape number alone) and a buffer for a shaped form being written.
#[derive(Default)]
struct Packer {
    shapes: FieldShapes,
    buf: Vec<u8>,
}

impl Packer {
    /// How the table keeps `value` inside its record, when it can: an `int` or inline
    /// string, or a small collection's packed form of up to [`STR_MAX`] bytes (a hash's
    /// shaped form when it has one). `sighted`: the value is being stored, so a hash's field
    /// list counts towards becoming a shape.
    #[inline]
    fn record_value<'a>(
        &'a mut self,
        value: &'a Value,
        sighted: bool,
    ) -> Option<kt::Value<'a, Value>> {
        if let Value::Hash(h) = value {
            let shaped = if sighted {
                let id = self.shapes.note(h, &mut self.buf);
                id.is_some_and(|id| h.shaped_as(id, &mut self.buf))
            } else {
                h.shaped(&self.shapes, &mut self.buf)
            };
            if shaped && self.buf.len() <= STR_MAX {
                return Some(kt::Value::Packed(tag::HASH_SHAPED, &self.buf));
            }
        }
        unshaped_record_value(value, &mut self.buf)
    }

    /// Whether `value` fits inside a record.
    fn fits(&self, value: &Value) -> bool {
        let mut buf = Vec::new();
        plain_record_value(value).is_some()
            || matches!(value, Value::Hash(h) if h.shaped(&self.shapes, &mut buf) && buf.len() <= STR_MAX)
    }

    /// The collection a record's packed form of tag `tag` stands for.
    fn unpacked(&self, tag: u8, bytes: &[u8]) -> Value {
        match tag {
            tag::HASH => Value::Hash(Hash::from_packed(bytes)),
            tag::HASH_SHAPED => Value::Hash(Hash::from_shaped(&self.shapes, bytes)),
            tag::SET_LISTPACK => Value::Set(Set::from_packed(PackedSet::Listpack, bytes)),
            tag::SET_INTSET => Value::Set(Set::from_packed(PackedSet::Intset, bytes)),
            tag::LIST => Value::List(List::from_packed(bytes)),
            tag::ZSET => Value::ZSet(SortedSet::from(ZSet::from_packed(bytes))),
            tag::ZSET_PREFIXED => Value::ZSet(SortedSet::from(ZSet::from_prefixed(bytes))),
            _ => unreachable!("packed tag {tag} is never written"),
        }
    }

    /// The bytes `value` (the key's value as handed out) holds beside its record, whose
    /// value is `stored`: a heap value's allocations; a checked-out copy that has outgrown
    /// the record (it moves to the slab when put back) its own; nothing for one the record
    /// holds.
    fn value_bytes(&self, value: &Value, stored: kt::ValueRef<'_, Value>) -> usize {
        match stored {
            kt::ValueRef::Heap(v) => v.memory_bytes(),
            _ if !self.fits(value) => value.memory_bytes(),
            _ => 0,
        }
    }

    /// The value a record-held `v` stands for (None for a heap value).
    #[inline]
    fn rebuilt(&self, v: &kt::ValueRef<'_, Value>) -> Option<Value> {
        match *v {
            kt::ValueRef::Int(i) => Some(Value::Str(StringValue::from_int(i))),
            kt::ValueRef::Str(b, raw) => Some(Value::Str(StringValue::from_compact(b, raw))),
            kt::ValueRef::Packed(tag, b) => Some(self.unpacked(tag, b)),
            kt::ValueRef::Heap(_) => None,
        }
    }
}

/// The small sorted set the record in `slot` holds, in either of its forms.
#[inline]
fn held_zset(table: &KeyTable<Value>, slot: Slot) -> Option<RecordSet<'_>> {
    match table.entry(slot).value() {
        kt::ValueRef::Packed(tag::ZSET, b) => Some(RecordSet::plain(b)),
        kt::ValueRef::Packed(tag::ZSET_PREFIXED, b) => Some(RecordSet::prefixed(b)),
        _ => None,
    }
}

/// The record form of `value` without field shapes: an `int` or inline string, or a small
/// collection's packed form of up to [`STR_MAX`] bytes.
#[inline]
fn plain_record_value(value: &Value) -> Option<kt::Value<'_, Value>> {
    let (tag, bytes) = match value {
        Value::Str(s) => {
            return s.compact().map(|c| match c {
                Compact::Int(v) => kt::Value::Int(v),
                Compact::Bytes(b, raw) => kt::Value::Str(b, raw),
            })
        }
        Value::Hash(h) => (tag::HASH, h.packed()?),
        Value::Set(s) => match s.packed()? {
            (PackedSet::Listpack, b) => (tag::SET_LISTPACK, b),
            (PackedSet::Intset, b) => (tag::SET_INTSET, b),
        },
        Value::List(l) => (tag::LIST, l.packed()?),
        Value::ZSet(z) => (tag::ZSET, z.packed()?),
        Value::Stream(_) => return None,
    };
    (bytes.len() <= STR_MAX).then_some(kt::Value::Packed(tag, bytes))
}

/// [`plain_record_value`], except that a small sorted set the record holds is kept with
/// its members' shared prefix once (written into `buf`) when that is smaller.
#[inline]
fn unshaped_record_value<'a>(
    value: &'a Value,
    buf: &'a mut Vec<u8>,
) -> Option<kt::Value<'a, Value>> {
    let form = plain_record_value(value)?;
    match value {
        Value::ZSet(z) if z.prefixed_into(buf) => Some(kt::Value::Packed(tag::ZSET_PREFIXED, buf)),
        _ => Some(form),
    }
}

impl Db {
    /// Number of keys (including expired ones not yet removed).
    #[inline]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the database holds no key.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Number of keys with an expiry.
    #[inline]
    pub fn volatile_len(&self) -> usize {
        self.table.volatile_len()
    }

    /// The key table's bytes beside the values' own allocations, as MEMORY STATS's
    /// `overhead.hashtable.main` and `.expires`: the index, the records, the value slab and
    /// the hash field shapes; the volatile list; slots freed for the next keys are not
    /// counted (see [`Db::reusable_bytes`]).
    pub fn overhead(&self) -> (usize, usize) {
        let expires = self.table.volatile_len() * std::mem::size_of::<u32>();
        let held = self.table.memory_bytes() - self.table.reusable_bytes()
            + self.packer.shapes.memory_bytes();
        (held.saturating_sub(expires), expires)
    }

    /// Bytes the key table holds free for the next keys (removed keys' slots).
    pub fn reusable_bytes(&self) -> usize {
        self.table.reusable_bytes()
    }

    /// Bytes `key` costs (see [`Entry::memory_usage`]), expired or not.
    pub fn memory_usage(&self, key: &[u8]) -> Option<usize> {
        let slot = self.table.find(key)?;
        let stored = self.table.entry(slot).value();
        let value = match self.out {
            Some(out) if out == slot => self.packer.value_bytes(&self.scratch, stored),
            _ => self.packer.value_bytes(&placeholder(), stored),
        };
        Some(value + self.table.entry_bytes(slot))
    }

    /// The slot of `key`, expired or not.
    #[inline]
    pub(super) fn find(&self, key: &[u8]) -> Option<Slot> {
        self.table.find(key)
    }

    /// Whether `key` is present (expired or not).
    #[inline]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.table.find(key).is_some()
    }

    /// What a keyspace lookup needs of `key`, from one reading of its record: its slot,
    /// whether its time has come at `now_ms`, and its access field.
    #[inline]
    pub(super) fn probe(&self, key: &[u8], now_ms: u64) -> Option<(Slot, bool, u32)> {
        let slot = self.table.find(key)?;
        let e = self.table.entry(slot);
        let expired = e.expire_at().is_some_and(|at| at <= now_ms);
        Some((slot, expired, e.clock()))
    }

    /// Whether the key in `slot` has an expiry that has come at `now_ms`.
    #[inline]
    pub(super) fn expired(&self, slot: Slot, now_ms: u64) -> bool {
        self.table
            .entry(slot)
            .expire_at()
            .is_some_and(|at| at <= now_ms)
    }

    /// Sets the access field of the key in `slot` (its low 24 bits are kept).
    #[inline]
    pub(super) fn set_clock(&mut self, slot: Slot, clock: u32) {
        self.table.set_clock(slot, clock);
    }

    /// Copies the record-held value of `slot` into `scratch` (putting back the one checked
    /// out before); nothing for a heap value. True when `slot` is checked out.
    #[inline]
    fn check_out(&mut self, slot: Slot, write: bool) -> bool {
        if self.out == Some(slot) {
            self.dirty |= write;
            return true;
        }
        let stored = self.table.entry(slot).value();
        let Some(v) = self.packer.rebuilt(&stored) else {
            return false;
        };
        let shape = match stored {
            kt::ValueRef::Packed(tag::HASH_SHAPED, b) => Some(shape_id(b).0),
            _ => None,
        };
        self.settle();
        self.scratch = v;
        self.out = Some(slot);
        self.out_shape = shape;
        self.dirty = write;
        true
    }

    /// Puts a checked-out copy that was handed out for writing back into its record,
    /// unless it still equals it (a lookup for writing that wrote nothing). Its record form
    /// is written once: a hash checked out of a shaped record whose field list is still
    /// that shape's is re-encoded under it without a dictionary lookup.
    #[inline]
    fn settle(&mut self) {
        let Some(slot) = self.out.take() else {
            return;
        };
        if !std::mem::take(&mut self.dirty) {
            return;
        }
        let form = match (&self.scratch, self.out_shape) {
            (Value::Hash(h), Some(id)) => {
                let buf = &mut self.packer.buf;
                (h.reshaped(&self.packer.shapes, id, buf) && buf.len() <= STR_MAX)
                    .then_some(kt::Value::Packed(tag::HASH_SHAPED, &buf[..]))
            }
            _ => unshaped_record_value(&self.scratch, &mut self.packer.buf),
        };
        let stored = self.table.entry(slot).value();
        let unchanged = match (&form, stored) {
            (Some(kt::Value::Int(a)), kt::ValueRef::Int(b)) => *a == b,
            (Some(kt::Value::Str(a, ra)), kt::ValueRef::Str(b, rb)) => *a == b && *ra == rb,
            (Some(kt::Value::Packed(ta, a)), kt::ValueRef::Packed(tb, b)) => *ta == tb && *a == b,
            _ => false,
        };
        match form {
            _ if unchanged => {}
            // Still its shape, or no hash (whose field list may become a shape): the form
            // is final.
            Some(f) if self.out_shape.is_some() || !matches!(self.scratch, Value::Hash(_)) => {
                drop(self.table.set_value(slot, f))
            }
            _ => {
                let value = std::mem::replace(&mut self.scratch, placeholder());
                self.put(slot, value);
            }
        }
    }

    /// Puts the value of `slot` back into its record when it is checked out (a written
    /// copy is settled, a read one dropped), so the record is the truth.
    #[cfg(test)]
    pub(super) fn check_in(&mut self, slot: Slot) {
        if self.out == Some(slot) {
            self.settle();
        }
    }

    /// Replaces the value in `slot` (keeping its clock and expiry).
    fn put(&mut self, slot: Slot, value: Value) {
        let old = match self.packer.record_value(&value, true) {
            Some(r) => self.table.set_value(slot, r),
            None => self.table.set_value(slot, kt::Value::Heap(value)),
        };
        drop(old);
    }

    /// The key in `slot` for reading (from [`Db::find`], with no removal since).
    #[inline]
    pub(super) fn read(&mut self, slot: Slot) -> Entry<'_> {
        let copy = self.check_out(slot, false);
        let this = &*self;
        let value = if copy {
            &this.scratch
        } else {
            match this.table.entry(slot).value() {
                kt::ValueRef::Heap(v) => v,
                _ => unreachable!("a record-held value is checked out"),
            }
        };
        Entry {
            value,
            table: &this.table,
            packer: &this.packer,
            slot,
        }
    }

    /// Adds `by` to the `int` string the record in `slot` holds, in place: Some(the sum),
    /// Some(None) when it does not fit 64 bits (nothing changed); None when the record
    /// holds anything else or its value is checked out (the copy is the truth then).
    #[inline]
    pub(super) fn add_to_int(&mut self, slot: Slot, by: i64) -> Option<Option<i64>> {
        if self.out == Some(slot) {
            return None;
        }
        self.table.add_to_int(slot, by)
    }

    /// The small sorted set the record in `slot` holds, read where it lies: None when the
    /// record holds anything else, or its value is checked out (the copy is the truth then).
    #[inline]
    pub(super) fn record_zset(&self, slot: Slot) -> Option<RecordSet<'_>> {
        if self.out == Some(slot) {
            return None;
        }
        held_zset(&self.table, slot)
    }

    /// Inserts `member` with `score` into the small sorted set the record in `slot` holds
    /// (see [`Db::record_zset`]) as [`RecordSet::insert_into`] does, writing the record's
    /// new form; a set grown past what a record holds moves beside the table, still small.
    pub(super) fn insert_in_record_zset(
        &mut self,
        slot: Slot,
        member: &[u8],
        score: f64,
        cfg: &Config,
    ) -> RecordInsert {
        if self.out == Some(slot) {
            return RecordInsert::Declined;
        }
        let Some(set) = held_zset(&self.table, slot) else {
            return RecordInsert::Declined;
        };
        let done = set.insert_into(member, score, cfg, &mut self.packer.buf);
        let (RecordInsert::Added { prefixed } | RecordInsert::Updated { prefixed, .. }) = done
        else {
            return done;
        };
        let form = &self.packer.buf;
        if form.len() <= STR_MAX {
            let t = if prefixed {
                tag::ZSET_PREFIXED
            } else {
                tag::ZSET
            };
            drop(self.table.set_packed(slot, t, form));
        } else {
            let mut set = if prefixed {
                ZSet::from_prefixed(form)
            } else {
                ZSet::from_packed(form)
            };
            // No room kept for more: a small set's buffer grows by an eighth when it must.
            set.optimize(1.0);
            self.put(slot, Value::ZSet(SortedSet::from(set)));
        }
        done
    }

    /// The key in `slot` for writing (from [`Db::find`], with no removal since).
    #[inline]
    pub(super) fn write(&mut self, slot: Slot) -> EntryMut<'_> {
        if self.check_out(slot, true) {
            let expire_at = self.table.entry(slot).expire_at();
            return EntryMut {
                value: &mut self.scratch,
                expire_at,
            };
        }
        self.heap_for_write(slot)
    }

    /// The heap value of `slot` for writing, found with its expiry by one reading of the
    /// record.
    #[inline]
    fn heap_for_write(&mut self, slot: Slot) -> EntryMut<'_> {
        let (value, expire_at) = self.table.heap_mut_with_expiry(slot).expect("a heap value");
        EntryMut { value, expire_at }
    }

    /// What the record in `slot` holds, told from its header alone (the sorted-set paths'
    /// first step): a small sorted set (its value checked in first when checked out, so
    /// the record is the truth), a heap value, or another value the record holds.
    #[inline]
    fn zset_kind(&mut self, slot: Slot) -> Held {
        match self.checked_in_kind(slot) {
            kt::Kind::Heap => Held::Heap,
            kt::Kind::Packed(tag::ZSET | tag::ZSET_PREFIXED) => Held::ZSet,
            _ => Held::Other,
        }
    }

    /// The kind of value the record in `slot` holds, told from its header alone, its value
    /// checked in first when checked out (so the record is the truth).
    #[inline]
    fn checked_in_kind(&mut self, slot: Slot) -> kt::Kind {
        if self.out == Some(slot) {
            self.settle_cold();
        }
        self.table.kind(slot)
    }

    /// [`Db::settle`] off the hot paths (a read or write that finds its key checked out).
    #[cold]
    #[inline(never)]
    fn settle_cold(&mut self) {
        self.settle();
    }

    /// The key in `slot` for SADD (from [`Db::find`], with no removal since): a listpack
    /// set its record holds, to be added to there, or its entry (a checked-out copy's
    /// record is not the truth: the copy is written).
    #[inline]
    pub(super) fn set_for_write(&mut self, slot: Slot) -> SetMut<'_> {
        let held = match self.out {
            Some(out) if out == slot => None,
            _ => match self.table.entry(slot).value() {
                kt::ValueRef::Packed(tag::SET_LISTPACK, _) => Some(true),
                kt::ValueRef::Heap(_) => Some(false),
                _ => None,
            },
        };
        match held {
            Some(true) => SetMut::Record(RecordListpack::new(self, slot)),
            Some(false) => SetMut::Entry(self.heap_for_write(slot)),
            None => SetMut::Entry(self.write(slot)),
        }
    }

    /// Adds `member` to the listpack set the record in `slot` holds, writing the record's
    /// new entries (see [`add_to_listpack_entries`]; a set grown past what a record holds
    /// moves beside the table, still a listpack): Some(whether it was new); None, nothing
    /// done, when the record holds no listpack set, its value is checked out, or the set
    /// would convert.
    pub(super) fn add_to_record_set(
        &mut self,
        slot: Slot,
        member: &[u8],
        cfg: &SetConfig,
    ) -> Option<bool> {
        if self.out == Some(slot) {
            return None;
        }
        let kt::ValueRef::Packed(tag::SET_LISTPACK, entries) = self.table.entry(slot).value()
        else {
            return None;
        };
        match add_to_listpack_entries(entries, member, cfg, &mut self.packer.buf) {
            RecordAdd::Held => Some(false),
            RecordAdd::Declined => None,
            RecordAdd::Added => {
                self.store_packed(slot, tag::SET_LISTPACK);
                Some(true)
            }
        }
    }

    /// LPUSH / RPUSH of `items` at `end` of the list in `slot` (from [`Db::find`], with no
    /// removal since): a heap list is pushed to where it lies, a listpack list its record
    /// holds in place while it stays one and is not checked out (see
    /// [`push_to_listpack_entries`]; one grown past what a record holds moves beside the
    /// table), any other through a checked-out copy.
    /// The list's new length, or `Err` when the key holds another type.
    pub(super) fn push_to_list(
        &mut self,
        slot: Slot,
        end: End,
        items: &[&[u8]],
        cfg: &ListConfig,
    ) -> Result<usize, WrongType> {
        if self.out != Some(slot) {
            if let Some(value) = self.table.heap_mut(slot) {
                return push_onto(value, end, items, cfg);
            }
            if let Some(len) = self.push_to_record_list(slot, end, items, cfg) {
                return Ok(len);
            }
        }
        push_onto(self.write(slot).value, end, items, cfg)
    }

    /// Pushes `items` at `end` of the listpack list the record in `slot` holds (its value
    /// not checked out), writing the record's new entries: Some(the new length); None, nothing
    /// done, when the record holds no list or the list would convert to a quicklist.
    fn push_to_record_list(
        &mut self,
        slot: Slot,
        end: End,
        items: &[&[u8]],
        cfg: &ListConfig,
    ) -> Option<usize> {
        let kt::ValueRef::Packed(tag::LIST, entries) = self.table.entry(slot).value() else {
            return None;
        };
        let len = push_to_listpack_entries(entries, end, items, cfg, &mut self.packer.buf)?;
        self.store_packed(slot, tag::LIST);
        Some(len)
    }

    /// Makes the packed form of tag `t` that `packer.buf` holds the value of `slot`: written
    /// into its record as it is, or, when longer than a record holds, as the value it stands
    /// for beside the table.
    fn store_packed(&mut self, slot: Slot, t: u8) {
        let form = &self.packer.buf;
        if form.len() <= STR_MAX {
            drop(self.table.set_packed(slot, t, form));
        } else {
            let value = self.packer.unpacked(t, form);
            self.put(slot, value);
        }
    }

    /// The key in `slot` for a sorted-set write (from [`Db::find`], with no removal since):
    /// a small sorted set its record holds, to be written there, or its entry.
    #[inline]
    pub(super) fn zset_for_write(&mut self, slot: Slot) -> ZSetMut<'_> {
        match self.zset_kind(slot) {
            Held::ZSet => ZSetMut::Record(RecordZSet::new(self, slot)),
            Held::Heap => ZSetMut::Entry(self.heap_for_write(slot)),
            Held::Other => ZSetMut::Entry(self.write(slot)),
        }
    }

    /// The sorted set in `slot` for reading its scores (from [`Db::find`], with no removal
    /// since): a small one read where its record holds it. `Err` for another type.
    #[inline]
    pub(super) fn zset_for_scores(&mut self, slot: Slot) -> Result<ZSetRef<'_>, WrongType> {
        match self.zset_kind(slot) {
            Held::ZSet => Ok(ZSetRef::Record(
                held_zset(&self.table, slot).expect("a small sorted set"),
            )),
            Held::Heap => match self.table.entry(slot).value() {
                kt::ValueRef::Heap(v) => v.as_zset().map(ZSetRef::Set),
                _ => unreachable!("a heap value"),
            },
            Held::Other => Err(WrongType),
        }
    }

    /// A shared view of an entry of the table.
    #[inline]
    fn view<'a>(&'a self, record: kt::EntryRef<'a, Value>) -> DbEntry<'a> {
        let v = record.value();
        let value = match v {
            kt::ValueRef::Heap(v) => ValueCow::Borrowed(v),
            _ if self.is_checked_out(record.key()) => ValueCow::Borrowed(&self.scratch),
            _ => ValueCow::Owned(self.packer.rebuilt(&v).expect("record-held")),
        };
        DbEntry { value, record }
    }

    /// Whether `key` (a key of the table, by address) is the checked-out one.
    #[inline]
    fn is_checked_out(&self, key: &[u8]) -> bool {
        self.out
            .is_some_and(|slot| std::ptr::eq(self.table.entry(slot).key(), key))
    }

    /// The entry for `key`, expired or not.
    pub fn get(&self, key: &[u8]) -> Option<DbEntry<'_>> {
        self.table.get(key).map(|e| self.view(e))
    }

    /// Inserts `key` with no expiry and access field `clock`, replacing any previous value:
    /// None when the key is new, else the old value when it was kept beside the table (to
    /// be freed, lazily if large).
    pub fn insert(&mut self, key: &[u8], value: Value, clock: u32) -> Option<Option<Value>> {
        self.note_field_expiry(key, &value);
        let Some(slot) = self.table.find(key) else {
            self.insert_absent(key, value, clock);
            return None;
        };
        let copy = self.take_copy(slot);
        let old = match self.packer.record_value(&value, true) {
            Some(r) => self.table.replace(slot, r, clock),
            None => self.table.replace(slot, kt::Value::Heap(value), clock),
        };
        Some(old.or(copy))
    }

    /// The copy of `slot`'s value checked out, if it is, taken away unsettled: its key is
    /// being removed or replaced, and the copy (which may have grown past anything a
    /// record holds) is the value to free.
    fn take_copy(&mut self, slot: Slot) -> Option<Value> {
        if self.out != Some(slot) {
            return None;
        }
        self.out = None;
        self.dirty = false;
        Some(std::mem::replace(&mut self.scratch, placeholder()))
    }

    /// Moves the keys of up to `groups` groups of a key-table resize in progress (see
    /// `KeyTable::rehash_step`); true while more remain.
    pub fn rehash_step(&mut self, groups: usize) -> bool {
        if !self.table.is_rehashing() {
            return false;
        }
        // The move invalidates slots, the checked-out one's too.
        self.settle();
        self.table.rehash_step(groups)
    }

    /// Registers `value` for active field expiry when it is a hash with field times.
    fn note_field_expiry(&mut self, key: &[u8], value: &Value) {
        if let Value::Hash(h) = value {
            if let Some(at) = h.min_field_expiry() {
                self.field_expiry.register(key, at);
            }
        }
    }

    /// Makes room for `additional` more keys (a loader's size hint), so that adding them
    /// never grows the key table's index.
    pub fn reserve(&mut self, additional: usize) {
        // Growing the index moves every key, the checked-out one's slot too.
        self.settle();
        self.table.reserve(additional);
    }

    /// Inserts `key` with expiry `expire_at_ms` unless it is already present (one lookup:
    /// the loaders, for which a present key is a corrupt input). False when present.
    pub fn insert_new_key(
        &mut self,
        key: &[u8],
        value: Value,
        clock: u32,
        expire_at_ms: Option<u64>,
    ) -> bool {
        if self.table.find(key).is_some() {
            return false;
        }
        let slot = self.insert_absent(key, value, clock);
        if let Some(at) = expire_at_ms {
            self.table.set_expiry(slot, at);
        }
        true
    }

    /// Inserts `key`, which is not in the table, with no expiry; returns its slot.
    pub(super) fn insert_absent(&mut self, key: &[u8], value: Value, clock: u32) -> Slot {
        self.settle();
        self.note_field_expiry(key, &value);
        if let Some(index) = &mut self.slot_index {
            index.add(key_slot(key), key);
        }
        match self.packer.record_value(&value, true) {
            Some(r) => self.table.insert_new(key, r, clock),
            None => self.table.insert_new(key, kt::Value::Heap(value), clock),
        }
    }

    /// Removes `key`, returning its value and expiry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Removed> {
        self.settle();
        let slot = self.table.find(key)?;
        if let Some(index) = &mut self.slot_index {
            index.remove(key_slot(key), key);
        }
        let removed = self.table.remove_slot(slot);
        let value = match removed.value {
            kt::Owned::Int(v) => Value::Str(StringValue::from_int(v)),
            kt::Owned::Str(b, raw) => Value::Str(StringValue::from_compact(&b, raw)),
            kt::Owned::Packed(tag, b) => self.packer.unpacked(tag, &b),
            kt::Owned::Heap(v) => v,
        };
        Some(Removed {
            value,
            expire_at: removed.expire_at,
        })
    }

    /// Removes `key` without copying a record-held value out: None when absent, else the
    /// value to be freed when there is one beside the table (kept there, or checked out).
    pub fn discard(&mut self, key: &[u8]) -> Option<Option<Value>> {
        let slot = self.table.find(key)?;
        let copy = self.take_copy(slot);
        if copy.is_none() {
            self.settle();
        }
        if let Some(index) = &mut self.slot_index {
            index.remove(key_slot(key), key);
        }
        Some(self.table.discard_slot(slot).or(copy))
    }

    /// Sets or replaces the expiry of an existing key. Returns false when the key is absent.
    pub fn set_expiry(&mut self, key: &[u8], at_ms: u64) -> bool {
        let Some(slot) = self.table.find(key) else {
            return false;
        };
        self.table.set_expiry(slot, at_ms);
        true
    }

    /// Removes the expiry of `key`. Returns true when there was one.
    pub fn persist(&mut self, key: &[u8]) -> bool {
        match self.table.find(key) {
            Some(slot) => self.table.clear_expiry(slot),
            None => false,
        }
    }

    /// The key of the `n`-th (modulo the count) entry that has an expiry, for sampling.
    pub fn volatile_key(&self, n: usize) -> Option<&[u8]> {
        self.table.volatile_entry(n).map(|e| e.key())
    }

    /// The access field and expiry of `key`, read without rebuilding its value.
    pub fn access_and_expiry(&self, key: &[u8]) -> Option<(u32, Option<u64>)> {
        self.table.get(key).map(|e| (e.clock(), e.expire_at()))
    }

    /// Up to `count` keys from neighbouring slots of the key table, from a random one
    /// (`seed`), each with its access field and expiry: eviction's sample, as Redis's
    /// dictGetSomeKeys (no value is rebuilt).
    pub fn sample(&self, seed: u64, count: usize, mut visit: impl FnMut(&[u8], u32, Option<u64>)) {
        self.table
            .sample(seed, count, |e| visit(e.key(), e.clock(), e.expire_at()));
    }

    /// A uniformly drawn key (RANDOMKEY, eviction samples), from a random 64-bit number.
    pub fn random_key(&self, mut random: impl FnMut() -> u64) -> Option<&[u8]> {
        self.table.random_entry(random()).map(|e| e.key())
    }

    /// Visits about `count` entries from `cursor` (0 to start) and returns the cursor that
    /// resumes the scan (0 when it is complete).
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(DbEntry<'_>)) -> u64 {
        self.table
            .scan(cursor, count.max(1), |e| visit(self.view(e)))
    }

    /// Every entry, in index order.
    pub fn iter(&self) -> impl Iterator<Item = DbEntry<'_>> {
        self.table.iter().map(|e| self.view(e))
    }

    /// Empties the database, returning the old contents (to be freed off the event loop);
    /// a slot index stays on.
    pub fn take(&mut self) -> Db {
        let indexed = self.slot_index.is_some();
        let old = std::mem::take(self);
        if indexed {
            self.index_slots();
        }
        old
    }

    /// Keeps the keys of each hash slot from now on (cluster mode), indexing those present.
    pub fn index_slots(&mut self) {
        let mut index = Box::<SlotIndex>::default();
        for e in self.table.iter() {
            index.add(key_slot(e.key()), e.key());
        }
        self.slot_index = Some(index);
    }

    /// Whether the keys of each hash slot are kept.
    pub fn slots_indexed(&self) -> bool {
        self.slot_index.is_some()
    }

    /// Number of keys in hash `slot`, expired ones included (None without a slot index).
    pub fn count_in_slot(&self, slot: u16) -> Option<usize> {
        self.slot_index.as_ref().map(|i| i.count(slot))
    }

    /// Up to `count` keys of hash `slot` (empty without a slot index).
    pub fn keys_in_slot(&self, slot: u16, count: usize) -> Vec<&[u8]> {
        match &self.slot_index {
            Some(index) => index.keys(slot).take(count).collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i64) -> Value {
        Value::Str(StringValue::from_int(v))
    }

    fn text(v: &Value) -> Vec<u8> {
        v.as_string().unwrap().bytes().to_vec()
    }

    #[test]
    fn slot_index_follows_inserts_removals_and_flushes() {
        let mut db = Db::default();
        db.insert(b"{a}1", Value::empty_zset(), 0);
        db.index_slots();
        db.insert(b"{a}2", int(5), 0);
        assert!(
            matches!(db.insert(b"{a}2", int(6), 0), Some(None)),
            "a replaced key is no new key"
        );
        db.insert(b"b", Value::empty_zset(), 0);
        db.insert(b"{a}3", int(7), 0);
        let a = key_slot(b"a");
        assert_eq!(db.count_in_slot(a), Some(3));
        db.remove(b"{a}1");
        assert!(db.discard(b"{a}3").is_some());
        assert!(db.discard(b"{a}3").is_none());
        assert_eq!(db.keys_in_slot(a, 10), vec![&b"{a}2"[..]]);
        assert_eq!(db.count_in_slot(key_slot(b"b")), Some(1));
        let _ = db.take();
        assert!(db.slots_indexed());
        assert_eq!(db.count_in_slot(a), Some(0));
    }

    #[test]
    fn short_and_long_keys() {
        let mut db = Db::default();
        let long = vec![b'x'; 300];
        for key in [&b""[..], b"k", &[b'y'; 22], &[b'z'; 23], &long] {
            db.insert(key, Value::empty_zset(), 0);
            assert_eq!(db.get(key).unwrap().key(), key);
        }
    }

    #[test]
    fn strings_live_in_records_and_keep_their_encoding() {
        let mut db = Db::default();
        let long = vec![b'l'; 100];
        let values = [
            int(12345),
            int(i64::MIN),
            Value::Str(StringValue::from_text(b"hello")),
            Value::Str(StringValue::raw(b"raw bytes")),
            Value::Str(StringValue::from_text(&long)),
        ];
        for (i, v) in values.iter().enumerate() {
            assert!(db
                .insert(format!("k{i}").as_bytes(), v.clone(), 0)
                .is_none());
        }
        for (i, v) in values.iter().enumerate() {
            let key = format!("k{i}");
            let e = db.get(key.as_bytes()).unwrap();
            assert_eq!(text(&e.value), text(v));
            assert_eq!(e.value.encoding_name(), v.encoding_name());
            let slot = db.find(key.as_bytes()).unwrap();
            assert_eq!(text(db.read(slot).value), text(v));
        }
        // Only the long string is a heap value of the table.
        assert!(matches!(
            db.get(b"k4").unwrap().value,
            ValueCow::Borrowed(_)
        ));
        assert!(matches!(db.get(b"k0").unwrap().value, ValueCow::Owned(_)));
    }

    #[test]
    fn writes_to_record_held_strings_are_put_back() {
        let mut db = Db::default();
        db.insert(b"n", int(41), 0);
        db.insert(b"s", Value::Str(StringValue::from_text(b"ab")), 0);
        assert!(db.set_expiry(b"n", 5000));
        let slot = db.find(b"n").unwrap();
        *db.write(slot).value = int(42);
        // Readers see the copy before it is put back...
        assert_eq!(text(&db.get(b"n").unwrap().value), b"42");
        assert_eq!(db.iter().filter(|e| text(&e.value) == b"42").count(), 1);
        // ...and the record after: a write elsewhere settles it.
        let s = db.find(b"s").unwrap();
        let e = db.write(s);
        assert_eq!(e.expire_at(), None);
        e.value.as_string_mut().unwrap().append(&[b'c'; 40]);
        let n = db.find(b"n").unwrap();
        assert_eq!(db.read(n).expire_at(), Some(5000), "expiry kept");
        assert_eq!(text(db.read(n).value), b"42");
        // The appended string outgrew the record: it is a heap value once settled.
        db.insert(b"other", int(1), 0);
        let e = db.get(b"s").unwrap();
        assert!(matches!(e.value, ValueCow::Borrowed(_)));
        assert_eq!(text(&e.value).len(), 42);
        assert_eq!(e.value.encoding_name(), "raw");
        // A checked-out key that is deleted hands its copy over, to be freed.
        let n = db.find(b"n").unwrap();
        *db.write(n).value = int(7);
        let copy = db.discard(b"n").expect("present").expect("the copy");
        assert_eq!(text(&copy), b"7");
        assert!(db.get(b"n").is_none());
        db.insert(b"n2", int(9), 0);
        assert_eq!(text(&db.get(b"n2").unwrap().value), b"9");
    }

    #[test]
    fn small_hashes_live_in_records_until_they_outgrow_them() {
        let cfg = super::super::HashConfig::default();
        let mut db = Db::default();
        let fields = |v: &Value| -> Vec<(Vec<u8>, Vec<u8>)> {
            let h = v.as_hash().unwrap();
            h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
        };
        let mut h = Hash::new();
        h.set(b"name", b"ada", &cfg);
        db.insert(b"h", Value::Hash(h.clone()), 0);
        assert!(matches!(db.get(b"h").unwrap().value, ValueCow::Owned(_)));
        // Written in place through the copy, seen by readers, put back on settling.
        let slot = db.find(b"h").unwrap();
        let e = db.write(slot);
        e.value.as_hash_mut().unwrap().set(b"age", b"36", &cfg);
        h.set(b"age", b"36", &cfg);
        assert_eq!(
            fields(&db.get(b"h").unwrap().value),
            fields(&Value::Hash(h.clone()))
        );
        db.insert(b"x", int(1), 0);
        let slot = db.find(b"h").unwrap();
        assert_eq!(fields(db.read(slot).value), fields(&Value::Hash(h.clone())));
        assert_eq!(db.read(slot).value.encoding_name(), "listpack");
        // Past 255 bytes of listpack the hash is a heap value.
        let slot = db.find(b"h").unwrap();
        let e = db.write(slot);
        for i in 0..20u32 {
            let (f, v) = (format!("field{i}"), format!("value{i}"));
            e.value
                .as_hash_mut()
                .unwrap()
                .set(f.as_bytes(), v.as_bytes(), &cfg);
            h.set(f.as_bytes(), v.as_bytes(), &cfg);
        }
        db.insert(b"y", int(2), 0);
        let e = db.get(b"h").unwrap();
        assert!(matches!(e.value, ValueCow::Borrowed(_)));
        assert_eq!(fields(&e.value), fields(&Value::Hash(h.clone())));
        let removed = db.remove(b"h").unwrap();
        assert_eq!(fields(&removed.value), fields(&Value::Hash(h)));
    }

    #[test]
    fn small_sorted_sets_keep_a_shared_prefix_once_in_their_records() {
        let cfg = goblin_zset::Config::default();
        let members = |v: &Value| -> Vec<(Vec<u8>, f64)> {
            let z = v.as_zset().unwrap();
            z.iter().map(|(m, s)| (m.to_vec(), s)).collect()
        };
        let set = |prefix: &str| {
            let mut z = SortedSet::from(ZSet::new());
            for i in 0..10u32 {
                z.insert(format!("{prefix}{i:04}").as_bytes(), f64::from(i), &cfg);
            }
            Value::ZSet(z)
        };
        let (shared, apart) = (set("member:"), set(""));
        let mut db = Db::default();
        db.insert(b"z", shared.clone(), 0);
        db.insert(b"a", apart, 0);
        let usage = |db: &Db, k: &[u8]| db.memory_usage(k).unwrap();
        // Ten members' "member:" (70 bytes) is stored once (8 bytes with its length).
        assert!(usage(&db, b"z") < usage(&db, b"a") + 10);
        assert_eq!(members(&db.get(b"z").unwrap().value), members(&shared));
        // Writes that keep and that break the prefix, put back and read again.
        let mut want = members(&shared);
        for (member, score) in [(&b"member:0100"[..], 3.5), (b"other", 20.0)] {
            let slot = db.find(b"z").unwrap();
            let e = db.write(slot);
            e.value.as_zset_mut().unwrap().insert(member, score, &cfg);
            want.push((member.to_vec(), score));
            want.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            // A new key settles the copy into the record.
            db.insert(member, int(1), 0);
            let slot = db.find(b"z").unwrap();
            assert_eq!(members(db.read(slot).value), want);
            assert_eq!(db.read(slot).value.encoding_name(), "listpack");
        }
        // "other" shares nothing: the plain form again.
        assert!(usage(&db, b"z") > usage(&db, b"a") + 50);
    }

    #[test]
    fn hashes_sharing_a_field_list_keep_their_values_alone() {
        let cfg = super::super::HashConfig::default();
        let mut db = Db::default();
        let profile = |n: u32| {
            let mut h = Hash::new();
            for (f, v) in [
                (&b"name"[..], &b"Grace"[..]),
                (b"email", format!("grace{n}@example.com").as_bytes()),
                (b"score", n.to_string().as_bytes()),
            ] {
                h.set(f, v, &cfg);
            }
            h
        };
        let pairs = |v: &Value| -> Vec<(Vec<u8>, Vec<u8>)> {
            let h = v.as_hash().unwrap();
            h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
        };
        for n in 0..3 {
            db.insert(format!("u{n}").as_bytes(), Value::Hash(profile(n)), 0);
        }
        // The first sighting keeps the listpack; the second made the field list a shape.
        let usage = |db: &Db, k: &[u8]| db.memory_usage(k).unwrap();
        assert!(usage(&db, b"u1") + 15 < usage(&db, b"u0"));
        for n in 0..3 {
            let e = db.get(format!("u{n}").as_bytes()).unwrap();
            assert_eq!(pairs(&e.value), pairs(&Value::Hash(profile(n))));
            assert_eq!(e.value.encoding_name(), "listpack");
        }
        // A write that changes the field list puts it back in the listpack form.
        let slot = db.find(b"u2").unwrap();
        let mut h = profile(2);
        h.set(b"city", b"Oslo", &cfg);
        db.write(slot)
            .value
            .as_hash_mut()
            .unwrap()
            .set(b"city", b"Oslo", &cfg);
        db.insert(b"x", int(1), 0);
        assert_eq!(
            pairs(&db.get(b"u2").unwrap().value),
            pairs(&Value::Hash(h.clone()))
        );
        assert_eq!(
            pairs(&db.remove(b"u2").unwrap().value),
            pairs(&Value::Hash(h))
        );
        assert_eq!(
            pairs(&db.remove(b"u1").unwrap().value),
            pairs(&Value::Hash(profile(1)))
        );
        assert!(db.overhead().0 > db.table.memory_bytes() - db.table.reusable_bytes());
    }

    #[test]
    fn insert_remove_and_expiry_bookkeeping() {
        let mut db = Db::default();
        for i in 0..100u32 {
            assert!(db
                .insert(format!("k{i}").as_bytes(), Value::empty_zset(), 0)
                .is_none());
        }
        for i in (0..100u32).step_by(3) {
            assert!(db.set_expiry(format!("k{i}").as_bytes(), 1000 + i as u64));
        }
        assert_eq!(db.volatile_len(), 34);
        assert!(db.persist(b"k0"));
        assert!(!db.persist(b"k1"));
        for i in (0..100u32).step_by(2) {
            assert!(db.remove(format!("k{i}").as_bytes()).is_some());
        }
        assert_eq!(db.len(), 50);
        // Remaining volatile keys are k3, k9, k15, ...: odd multiples of 3.
        assert_eq!(db.volatile_len(), 17);
        for n in 0..db.volatile_len() {
            let key = db.volatile_key(n).unwrap().to_vec();
            assert!(db.get(&key).unwrap().expire_at().is_some());
        }
        assert!(db.insert(b"k3", Value::empty_zset(), 0).is_some());
        assert_eq!(
            db.get(b"k3").unwrap().expire_at(),
            None,
            "overwrite clears the expiry"
        );
        assert_eq!(db.volatile_len(), 16);
        let removed = db.remove(b"k9").unwrap();
        assert_eq!(removed.expire_at, Some(1009));
    }

    #[test]
    fn scan_returns_every_stable_key_despite_churn() {
        let mut db = Db::default();
        for i in 0..1000u32 {
            db.insert(format!("stable{i}").as_bytes(), int(i as i64), 0);
        }
        let mut seen = std::collections::HashMap::new();
        let mut cursor = 0;
        let mut round = 0u32;
        loop {
            cursor = db.scan(cursor, 10, |e| {
                *seen.entry(e.key().to_vec()).or_insert(0) += 1;
            });
            // Churn: add and remove other keys between calls.
            db.insert(format!("temp{round}").as_bytes(), Value::empty_zset(), 0);
            if round.is_multiple_of(2) {
                db.remove(format!("temp{}", round / 2).as_bytes());
            }
            round += 1;
            if cursor == 0 {
                break;
            }
        }
        for i in 0..1000u32 {
            assert_eq!(
                seen.get(format!("stable{i}").as_bytes()),
                Some(&1),
                "stable{i} once"
            );
        }
    }
}

/// The database against a model (a HashMap of rendered values), through every path that
/// checks a record-held value out and puts it back.
#[cfg(test)]
mod model_tests {
    use super::*;
    use crate::keyspace::HashConfig;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A value as the model sees it: its type, encoding and contents.
    type Shown = (&'static str, &'static str, Vec<Vec<u8>>);

    fn show(v: &Value) -> Shown {
        let contents = match v {
            Value::Str(s) => vec![s.bytes().to_vec()],
            Value::Hash(h) => h
                .iter()
                .flat_map(|(f, v)| [f.to_vec(), v.to_vec()])
                .collect(),
            other => vec![other.len().to_le_bytes().to_vec()],
        };
        (v.type_name(), v.encoding_name(), contents)
    }

    #[derive(Clone, Debug)]
    enum Make {
        Int(i64),
        Text(Vec<u8>),
        Hash(Vec<(u8, Vec<u8>)>),
        ZSet,
    }

    impl Make {
        fn value(&self) -> Value {
            let cfg = HashConfig::default();
            match self {
                Make::Int(v) => Value::Str(StringValue::from_int(*v)),
                Make::Text(b) => Value::Str(StringValue::from_text(b)),
                Make::Hash(pairs) => {
                    let mut h = Hash::new();
                    for (f, v) in pairs {
                        h.set(&[b'f', *f], v, &cfg);
                    }
                    Value::Hash(h)
                }
                Make::ZSet => Value::empty_zset(),
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8, Make),
        Assign(u8, Make),
        Append(u8, Vec<u8>),
        HSet(u8, u8, Vec<u8>),
        Read(u8),
        Remove(u8),
        Discard(u8),
        Expire(u8, u64),
        Persist(u8),
        Iter,
    }

    fn make() -> impl Strategy<Value = Make> {
        prop_oneof![
            any::<i64>().prop_map(Make::Int),
            prop::collection::vec(any::<u8>(), 0..60).prop_map(Make::Text),
            prop::collection::vec((0u8..40, prop::collection::vec(any::<u8>(), 0..30)), 0..12)
                .prop_map(Make::Hash),
            // Few field lists, so that they become shapes; integer values.
            prop::collection::vec(
                (
                    0u8..3,
                    (0i64..70_000).prop_map(|v| v.to_string().into_bytes())
                ),
                1..4
            )
            .prop_map(Make::Hash),
            Just(Make::ZSet),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        let k = 0u8..12;
        prop_oneof![
            3 => (k.clone(), make()).prop_map(|(k, m)| Op::Insert(k, m)),
            2 => (k.clone(), make()).prop_map(|(k, m)| Op::Assign(k, m)),
            2 => (k.clone(), prop::collection::vec(any::<u8>(), 0..20)).prop_map(|(k, b)| Op::Append(k, b)),
            2 => (k.clone(), 0u8..40, prop::collection::vec(any::<u8>(), 0..40))
                .prop_map(|(k, f, v)| Op::HSet(k, f, v)),
            3 => k.clone().prop_map(Op::Read),
            1 => k.clone().prop_map(Op::Remove),
            1 => k.clone().prop_map(Op::Discard),
            1 => (k.clone(), 1u64..1000).prop_map(|(k, at)| Op::Expire(k, at)),
            1 => k.prop_map(Op::Persist),
            1 => Just(Op::Iter),
        ]
    }

    type Model = HashMap<Vec<u8>, (Value, Option<u64>)>;

    fn same(db: &Db, m: &Model) {
        assert_eq!(db.len(), m.len());
        for e in db.iter() {
            let (v, at) = m.get(e.key()).expect("a key of the model");
            assert_eq!(show(&e.value), show(v), "key {:?}", e.key());
            assert_eq!(e.expire_at(), *at);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn checked_out_values_agree_with_a_model(ops in prop::collection::vec(op(), 1..120)) {
            let cfg = HashConfig::default();
            let mut db = Db::default();
            let mut m: Model = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, make) => {
                        db.insert(&[k], make.value(), 0);
                        m.insert(vec![k], (make.value(), None));
                    }
                    Op::Assign(k, make) => {
                        if let Some(slot) = db.find(&[k]) {
                            *db.write(slot).value = make.value();
                            m.get_mut(&vec![k]).unwrap().0 = make.value();
                        }
                    }
                    Op::Append(k, b) => {
                        if let Some(slot) = db.find(&[k]) {
                            if let Ok(s) = db.write(slot).value.as_string_mut() {
                                s.append(&b);
                                let (v, _) = m.get_mut(&vec![k]).unwrap();
                                v.as_string_mut().unwrap().append(&b);
                            }
                        }
                    }
                    Op::HSet(k, f, v) => {
                        if let Some(slot) = db.find(&[k]) {
                            if let Ok(h) = db.write(slot).value.as_hash_mut() {
                                h.set(&[b'f', f], &v, &cfg);
                                let (mv, _) = m.get_mut(&vec![k]).unwrap();
                                mv.as_hash_mut().unwrap().set(&[b'f', f], &v, &cfg);
                            }
                        }
                    }
                    Op::Read(k) => {
                        let got = db.find(&[k]).map(|slot| {
                            let e = db.read(slot);
                            (show(e.value), e.expire_at())
                        });
                        let want = m.get(&vec![k]).map(|(v, at)| (show(v), *at));
                        prop_assert_eq!(got, want);
                    }
                    Op::Remove(k) => {
                        let got = db.remove(&[k]).map(|r| (show(&r.value), r.expire_at));
                        let want = m.remove(&vec![k]).map(|(v, at)| (show(&v), at));
                        prop_assert_eq!(got, want);
                    }
                    Op::Discard(k) => {
                        prop_assert_eq!(db.discard(&[k]).is_some(), m.remove(&vec![k]).is_some());
                    }
                    Op::Expire(k, at) => {
                        let had = m.get_mut(&vec![k]).map(|e| e.1 = Some(at)).is_some();
                        prop_assert_eq!(db.set_expiry(&[k], at), had);
                    }
                    Op::Persist(k) => {
                        let had = m.get_mut(&vec![k]).and_then(|e| e.1.take()).is_some();
                        prop_assert_eq!(db.persist(&[k]), had);
                    }
                    Op::Iter => same(&db, &m),
                }
            }
            same(&db, &m);
            db.insert(b"settle", Value::empty_zset(), 0);
            m.insert(b"settle".to_vec(), (Value::empty_zset(), None));
            same(&db, &m);
        }
    }
}

#[cfg(test)]
mod list_record_tests {
    use super::*;
    use kt::ValueRef;
    use proptest::prelude::*;

    fn element() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            3 => (-200i64..70_000).prop_map(|v| v.to_string().into_bytes()),
            3 => (0u32..1000).prop_map(|i| format!("e:{i:014}").into_bytes()),
            1 => prop::collection::vec(any::<u8>(), 0..4),
            1 => prop::collection::vec(b'x'..=b'z', 60..130),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Pushes in place (or by the general path where the record declines or the list is
        /// checked out) leave the list the engine's pushes give, and the record a freshly
        /// stored key of that list has, byte for byte.
        #[test]
        fn record_pushes_agree_with_the_list(
            fill in prop_oneof![1i64..12, Just(-1i64), Just(-2i64)],
            pushes in prop::collection::vec(
                (any::<bool>(), any::<bool>(), prop::collection::vec(element(), 1..4)),
                1..30,
            ),
        ) {
            let cfg = ListConfig { max_listpack_size: fill, compress_depth: 0 };
            let mut db = Db::default();
            let mut want = List::new();
            db.insert(b"l", Value::List(want.clone()), 0);
            for (front, read_first, items) in pushes {
                let refs: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
                let end = if front { End::Front } else { End::Back };
                want.push(end, &refs, &cfg);
                let slot = db.find(b"l").unwrap();
                if read_first {
                    // A read checks a record-held list out: the push writes the copy.
                    db.read(slot);
                }
                let len = db.push_to_list(slot, end, &refs, &cfg).unwrap();
                prop_assert_eq!(len, want.len());
                let slot = db.find(b"l").unwrap();
                db.check_in(slot);
                let mut fresh = Db::default();
                fresh.insert(b"l", Value::List(want.clone()), 0);
                let fresh_slot = fresh.find(b"l").unwrap();
                let (got, stored) = (db.table.entry(slot), fresh.table.entry(fresh_slot));
                match (got.value(), stored.value()) {
                    (ValueRef::Packed(a, x), ValueRef::Packed(b, y)) => {
                        prop_assert_eq!((a, x), (b, y));
                        prop_assert_eq!(db.table.entry_bytes(slot), fresh.table.entry_bytes(fresh_slot));
                    }
                    (ValueRef::Heap(_), ValueRef::Heap(_)) => {}
                    _ => prop_assert!(false, "the record and a fresh key's hold different forms"),
                }
                prop_assert_eq!((got.key(), got.clock(), got.expire_at()), (stored.key(), stored.clock(), stored.expire_at()));
                let read = db.read(slot).value.as_list().unwrap();
                prop_assert_eq!(read.encoding(), want.encoding());
                prop_assert_eq!(read.to_vecs(), want.to_vecs());
            }
        }
    }
}
