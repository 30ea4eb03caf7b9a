//! A compact key table: a database's keys with their values, access clocks and expiry
//! times, about 35 to 50 bytes a key where a slab of fixed entries behind a hash index
//! takes 82.
//!
//! # Layout and bytes per key
//!
//! ```text
//! index: SwissIndex<u32> (the sets' Swiss table)      16-slot groups: [16 ctrl][16 x u32]
//!   slot = 1 control byte (7 hash bits) + a 4-byte record handle
//!   home group = (hash * groups) >> 64; grows by half past 7/8 full, shrinks under 1/4
//!   incrementally: the old table drains a group per insert or removal (and in the cron)
//!                                                     5 / load = 5.7 .. 8.6 B/key
//!        |
//!        v  handle = slot << 6 | size class
//! store: size-class slabs (see `store`)               slot = record rounded up to 4 B
//!   class c: pages of 1024 slots of 8 + 4c bytes (8 .. 256); records over 256 B are
//!   allocated one by one
//!
//! record (see `record`): [hdr 1][clock 3][expiry 0|12][klen 1|5][key][value]
//!   value: integer in 1, 2, 4 or 8 bytes | string: len 1 + bytes (<= 255) |
//!          packed: len 1 + bytes of the caller's format (<= 255; its 3-bit tag in hdr) |
//!          heap: u32 index into `values`
//!   expiry block (volatile keys only): expire_at u64 + position in `volatile` u32
//!
//! values: Vec<Option<T>> + free list      one slot per key with a heap value (a
//!                                         collection, a long string): size_of Option<T>
//! volatile: Vec<u32>                      handles of the keys with an expiry: 4 B each
//!
//! 16-byte key ("key:" + 12 digits), no expiry, index at its average load (~0.73, 6.9 B):
//!   counter < 2^31    record 1+3+1+16+4     = 25 -> slot 28    => ~35 B/key
//!   16-byte string    record 1+3+1+16+1+16  = 38 -> slot 40    => ~47 B/key
//!   heap value        record 1+3+1+16+4     = 25 -> slot 28    => ~35 B/key + Option<T>
//!   with an expiry: +12 B of record and +4 B of `volatile`
//! ```
//!
//! Design decisions:
//!
//! 1. Records move, positions in the index do not depend on them. A value that changes
//!    size (INCR past a width, SET of a longer string, a new expiry) re-encodes its record
//!    into the right size class and updates the handle in its index slot, so no slot is
//!    padded for a value it might hold one day.
//! 2. SCAN walks hash thresholds, not storage: home groups are monotone in the hash (the
//!    index's multiply-shift reduction), so consecutive steps partition the hash space
//!    whatever resizes and record moves happened between them, and a key present for the
//!    whole scan is returned exactly once (`SwissIndex::scan`).
//! 3. Expiry lives in the record, and only volatile records carry it (12 bytes), as Redis
//!    keeps a separate `expires` dict; the `volatile` list of handles is what active expiry
//!    and the volatile eviction policies sample, and each volatile record knows its
//!    position there so removal is O(1).
//! 4. The access clock is 24 bits, Redis's `lru` field: seconds of an LRU clock (wrapping
//!    after 194 days, as Redis's does) or an LFU counter with its decrement time.
//! 5. Strings and integers sit in the record (no allocation up to 255 bytes), and so can
//!    up to 255 bytes of the caller's own format (`Value::Packed`: Goblin keeps a small
//!    hash's listpack there); other values are the caller's `T` in a slab, reached by a
//!    4-byte index, so `&mut T` needs no unsafe code and `T` never moves when records do.
//!
//! Limits: 2^26 records per size class before a class spills into the next larger one,
//! so about 4 billion keys in all; the index mixes the key hash with a random seed of its
//! own, so keys arriving in another table's slot order (an RDB Goblin wrote, a SCAN
//! replayed) insert in linear time.

mod record;
mod store;
#[cfg(test)]
mod tests;

use crate::hash::hash;
use crate::swiss::SwissIndex;
use record::{Record, Stored};
use store::Store;

pub use record::{CLOCK_MAX, PACKED_TAGS, STR_MAX};

/// A key's position in the index: valid until the next insert or removal (which may
/// resize the index); value and expiry changes keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(usize);

/// A value to store.
#[derive(Debug)]
pub enum Value<'a, T> {
    /// An integer, stored in the narrowest of 1, 2, 4 or 8 bytes.
    Int(i64),
    /// Bytes (at most [`STR_MAX`]) with a flag of the caller's (Goblin's "raw" encoding).
    Str(&'a [u8], bool),
    /// Anything else, kept in the table's value slab.
    Heap(T),
    /// Bytes (at most [`STR_MAX`]) of the caller's own format, kept in the record, with the
    /// caller's tag (below [`PACKED_TAGS`]) saying which format (Goblin: a small hash's,
    /// set's, list's or sorted set's packed form).
    Packed(u8, &'a [u8]),
}

/// The kind of a stored value, told from its record's header alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer.
    Int,
    /// Bytes with the caller's flag.
    Str,
    /// A heap value.
    Heap,
    /// Bytes of the caller's own format, with its tag.
    Packed(u8),
}

/// A stored value, borrowed.
#[derive(Debug, PartialEq)]
pub enum ValueRef<'a, T> {
    /// An integer.
    Int(i64),
    /// Bytes and the caller's flag.
    Str(&'a [u8], bool),
    /// A heap value.
    Heap(&'a T),
    /// The caller's tag and bytes of its own format.
    Packed(u8, &'a [u8]),
}

/// A value taken out of the table.
#[derive(Debug, PartialEq)]
pub enum Owned<T> {
    /// An integer.
    Int(i64),
    /// Bytes and the caller's flag.
    Str(Vec<u8>, bool),
    /// A heap value.
    Heap(T),
    /// The caller's tag and bytes of its own format.
    Packed(u8, Vec<u8>),
}

/// A removed key's value and expiry.
#[derive(Debug, PartialEq)]
pub struct Removed<T> {
    /// The value.
    pub value: Owned<T>,
    /// The expire time (Unix ms), if the key had one.
    pub expire_at: Option<u64>,
}

/// A key's entry, borrowed.
pub struct EntryRef<'a, T> {
    record: Record<'a>,
    values: &'a [Option<T>],
}

impl<T> Clone for EntryRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for EntryRef<'_, T> {}

impl<'a, T> EntryRef<'a, T> {
    /// The key bytes.
    #[inline]
    pub fn key(&self) -> &'a [u8] {
        self.record.key()
    }

    /// The value.
    #[inline]
    pub fn value(&self) -> ValueRef<'a, T> {
        match self.record.value() {
            Stored::Int(v) => ValueRef::Int(v),
            Stored::Str(b, flag) => ValueRef::Str(b, flag),
            Stored::Packed(t, b) => ValueRef::Packed(t, b),
            Stored::Heap(i) => ValueRef::Heap(self.values[i as usize].as_ref().expect("live")),
        }
    }

    /// The 24-bit access clock.
    #[inline]
    pub fn clock(&self) -> u32 {
        self.record.clock()
    }

    /// The expire time in Unix milliseconds, if any.
    #[inline]
    pub fn expire_at(&self) -> Option<u64> {
        self.record.expiry().map(|(at, _)| at)
    }
}

/// The key table (see the module documentation). `T` is the type of heap values.
pub struct KeyTable<T> {
    index: SwissIndex<u32>,
    store: Store,
    values: Vec<Option<T>>,
    values_free: Vec<u32>,
    volatile: Vec<u32>,
    /// A record being built (reused, so rewriting a record allocates nothing).
    scratch: Vec<u8>,
}

impl<T> Default for KeyTable<T> {
    fn default() -> KeyTable<T> {
        KeyTable {
            index: SwissIndex::default(),
            store: Store::default(),
            values: Vec::new(),
            values_free: Vec::new(),
            volatile: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

/// The hash of the key of the record `handle` names.
#[inline]
fn key_hash(store: &Store, handle: u32) -> u64 {
    hash(Record(store.get(handle)).key())
}

impl<T> KeyTable<T> {
    /// Number of keys.
    #[inline]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the table holds no key.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of keys with an expiry.
    #[inline]
    pub fn volatile_len(&self) -> usize {
        self.volatile.len()
    }

    #[inline]
    fn handle(&self, slot: Slot) -> u32 {
        self.index.id(slot.0)
    }

    #[inline]
    fn record(&self, handle: u32) -> Record<'_> {
        Record(self.store.get(handle))
    }

    #[inline]
    fn entry_of(&self, handle: u32) -> EntryRef<'_, T> {
        EntryRef {
            record: self.record(handle),
            values: &self.values,
        }
    }

    /// The slot of `key`.
    #[inline]
    pub fn find(&self, key: &[u8]) -> Option<Slot> {
        let store = &self.store;
        self.index
            .find(hash(key), |h| Record(store.get(h)).key() == key)
            .map(Slot)
    }

    /// The entry in `slot`.
    #[inline]
    pub fn entry(&self, slot: Slot) -> EntryRef<'_, T> {
        self.entry_of(self.handle(slot))
    }

    /// The entry of `key`.
    #[inline]
    pub fn get(&self, key: &[u8]) -> Option<EntryRef<'_, T>> {
        self.find(key).map(|slot| self.entry(slot))
    }

    /// The kind of value in `slot`, read from the record's header alone.
    #[inline]
    pub fn kind(&self, slot: Slot) -> Kind {
        self.record(self.handle(slot)).kind()
    }

    /// The heap value in `slot`, for writing, and the key's expire time, from one reading
    /// of its record (None for a value the record holds).
    #[inline]
    pub fn heap_mut_with_expiry(&mut self, slot: Slot) -> Option<(&mut T, Option<u64>)> {
        let record = self.record(self.handle(slot));
        let Stored::Heap(i) = record.value() else {
            return None;
        };
        let expire_at = record.expiry().map(|(at, _)| at);
        Some((self.values[i as usize].as_mut()?, expire_at))
    }

    /// The heap value in `slot`, for writing, read from the record's header and slab index
    /// alone (None for a value the record holds).
    #[inline]
    pub fn heap_mut(&mut self, slot: Slot) -> Option<&mut T> {
        let i = self.record(self.handle(slot)).heap_index()?;
        self.values[i as usize].as_mut()
    }

    /// Sets the access clock of `slot` (its low 24 bits).
    #[inline]
    pub fn set_clock(&mut self, slot: Slot, clock: u32) {
        let handle = self.handle(slot);
        record::set_clock(self.store.get_mut(handle), clock);
    }

    /// Stores a heap value in the slab, returning its index.
    fn push_heap(&mut self, value: T) -> u32 {
        match self.values_free.pop() {
            Some(i) => {
                self.values[i as usize] = Some(value);
                i
            }
            None => {
                self.values.push(Some(value));
                (self.values.len() - 1) as u32
            }
        }
    }

    /// Takes the heap value at `i` out of the slab.
    fn take_heap(&mut self, i: u32) -> T {
        self.values_free.push(i);
        self.values[i as usize].take().expect("live heap value")
    }

    /// Makes room for `additional` more keys, so that inserting them never grows the index
    /// (an RDB's RESIZEDB hint; the caller bounds it by what its input can hold).
    pub fn reserve(&mut self, additional: usize) {
        let store = &self.store;
        self.index
            .reserve(self.len() + additional, |h| key_hash(store, h));
    }

    /// Moves the keys of up to `groups` more groups (16 slots each) of an index resize in
    /// progress into the new index (Redis's incremental rehash step, for a cron with time
    /// to spare; inserts and removals each move one group); true while more remain.
    pub fn rehash_step(&mut self, groups: usize) -> bool {
        let store = &self.store;
        self.index.drain(groups, &|h| key_hash(store, h));
        self.index.is_resizing()
    }

    /// Whether an index resize is in progress (see [`KeyTable::rehash_step`]).
    pub fn is_rehashing(&self) -> bool {
        self.index.is_resizing()
    }

    /// Inserts `key`, which must be absent, with no expiry; returns its slot.
    pub fn insert_new(&mut self, key: &[u8], value: Value<'_, T>, clock: u32) -> Slot {
        debug_assert!(self.find(key).is_none(), "insert_new of a present key");
        let heap;
        let stored = match value {
            Value::Int(v) => Stored::Int(v),
            Value::Str(b, flag) => Stored::Str(check_str(b), flag),
            Value::Packed(t, b) => Stored::Packed(check_tag(t), check_str(b)),
            Value::Heap(t) => {
                heap = self.push_heap(t);
                Stored::Heap(heap)
            }
        };
        self.scratch.clear();
        record::encode(&mut self.scratch, key, &stored, clock, None);
        let handle = self.store.alloc(&self.scratch);
        let store = &self.store;
        Slot(self.index.insert(hash(key), handle, |h| key_hash(store, h)))
    }

    /// Inserts or replaces `key` with no expiry and access clock `clock`; returns the old
    /// heap value when there was one (to be freed by the caller, lazily if large).
    pub fn insert(&mut self, key: &[u8], value: Value<'_, T>, clock: u32) -> Option<T> {
        let Some(slot) = self.find(key) else {
            self.insert_new(key, value, clock);
            return None;
        };
        self.replace(slot, value, clock)
    }

    /// Replaces the key in `slot` with `value`, no expiry and access clock `clock` (one
    /// rewrite of its record); returns the old heap value when there was one.
    pub fn replace(&mut self, slot: Slot, value: Value<'_, T>, clock: u32) -> Option<T> {
        self.assign(slot, value, Some(None), Some(clock))
    }

    /// Adds `by` to the `int` value in `slot` (INCRBY), rewritten where it lies when the
    /// sum keeps its width: Some(the sum), Some(None) when it does not fit 64 bits (nothing
    /// changed), None when the value is no `int`. The record is read once.
    pub fn add_to_int(&mut self, slot: Slot, by: i64) -> Option<Option<i64>> {
        let handle = self.handle(slot);
        let Stored::Int(v) = self.record(handle).value() else {
            return None;
        };
        let Some(sum) = v.checked_add(by) else {
            return Some(None);
        };
        if !record::overwrite_value(self.store.get_mut(handle), &Stored::Int(sum)) {
            self.assign(slot, Value::Int(sum), None, None);
        }
        Some(Some(sum))
    }

    /// Replaces the value in `slot`, keeping its clock and expiry; returns the old heap
    /// value when there was one.
    pub fn set_value(&mut self, slot: Slot, value: Value<'_, T>) -> Option<T> {
        self.assign(slot, value, None, None)
    }

    /// [`KeyTable::set_value`] of `Value::Packed(tag, bytes)`: over a value the record
    /// holds, its header and key are kept as they are (copied when the record moves to
    /// another size class) and the bytes written after them, with no re-encoding.
    pub fn set_packed(&mut self, slot: Slot, tag: u8, bytes: &[u8]) -> Option<T> {
        let handle = self.handle(slot);
        let old = Record(self.store.get(handle));
        if old.holds_heap() {
            return self.set_value(slot, Value::Packed(tag, bytes));
        }
        let (tag, bytes) = (check_tag(tag), check_str(bytes));
        let at = old.value_at();
        let len = at + 1 + bytes.len();
        if self.store.fits(handle, len) {
            record::put_packed(self.store.get_mut(handle), at, tag, bytes);
            return None;
        }
        let volatile = old.expiry().map(|(_, pos)| pos);
        self.scratch.clear();
        self.scratch.extend_from_slice(&old.0[..at]);
        self.scratch.resize(len, 0);
        record::put_packed(&mut self.scratch, at, tag, bytes);
        self.store.free(handle);
        let new = self.store.alloc(&self.scratch);
        self.index.set_id(slot.0, new);
        if let Some(pos) = volatile {
            self.volatile[pos as usize] = new;
        }
        None
    }

    /// Replaces the value in `slot`, and its expiry (`Some(expire_at)`) and clock when
    /// given; returns the old heap value when there was one.
    fn assign(
        &mut self,
        slot: Slot,
        value: Value<'_, T>,
        expiry: Option<Option<u64>>,
        clock: Option<u32>,
    ) -> Option<T> {
        let handle = self.handle(slot);
        let record = self.record(handle);
        let expiry_kept = match expiry {
            None => true,
            Some(None) => !record.is_volatile(),
            Some(Some(_)) => false,
        };
        if expiry_kept && !matches!(record.value(), Stored::Heap(_)) {
            let stored = match &value {
                Value::Int(v) => Some(Stored::Int(*v)),
                Value::Str(b, flag) => Some(Stored::Str(check_str(b), *flag)),
                Value::Packed(t, b) => Some(Stored::Packed(check_tag(*t), check_str(b))),
                Value::Heap(_) => None,
            };
            let bytes = self.store.get_mut(handle);
            if stored.is_some_and(|s| record::overwrite_value(bytes, &s)) {
                if let Some(clock) = clock {
                    record::set_clock(bytes, clock);
                }
                return None;
            }
        }
        let old = self.record(handle).value();
        let (old_heap, stored) = match (old, value) {
            // A heap value replacing one: the record keeps its value field.
            (Stored::Heap(i), Value::Heap(t)) => {
                let old = self.values[i as usize].replace(t);
                if let Some(clock) = clock {
                    self.set_clock(slot, clock);
                }
                match expiry {
                    Some(Some(at)) => self.set_expiry(slot, at),
                    Some(None) => {
                        self.clear_expiry(slot);
                    }
                    None => {}
                }
                return old;
            }
            (Stored::Heap(i), Value::Int(v)) => (Some(self.take_heap(i)), Stored::Int(v)),
            (Stored::Heap(i), Value::Str(b, flag)) => {
                (Some(self.take_heap(i)), Stored::Str(check_str(b), flag))
            }
            (Stored::Heap(i), Value::Packed(t, b)) => (
                Some(self.take_heap(i)),
                Stored::Packed(check_tag(t), check_str(b)),
            ),
            (_, Value::Heap(t)) => (None, Stored::Heap(self.push_heap(t))),
            (_, Value::Int(v)) => (None, Stored::Int(v)),
            (_, Value::Str(b, flag)) => (None, Stored::Str(check_str(b), flag)),
            (_, Value::Packed(t, b)) => (None, Stored::Packed(check_tag(t), check_str(b))),
        };
        let expire_at = expiry.unwrap_or_else(|| self.record(handle).expiry().map(|(at, _)| at));
        self.rewrite(slot, Some(stored), expire_at, clock);
        old_heap
    }

    /// Sets or replaces the expiry of `slot`.
    pub fn set_expiry(&mut self, slot: Slot, at_ms: u64) {
        let handle = self.handle(slot);
        if self.record(handle).is_volatile() {
            record::set_expire_at(self.store.get_mut(handle), at_ms);
        } else {
            self.rewrite(slot, None, Some(at_ms), None);
        }
    }

    /// Removes the expiry of `slot`; true when there was one.
    pub fn clear_expiry(&mut self, slot: Slot) -> bool {
        if !self.record(self.handle(slot)).is_volatile() {
            return false;
        }
        self.rewrite(slot, None, None, None);
        true
    }

    /// Re-encodes the record in `slot` with `value` (None: the one it has), `expire_at` and
    /// `clock` (None: the one it has), in place when its size class is unchanged, else
    /// moved to a slot of the right class.
    fn rewrite(
        &mut self,
        slot: Slot,
        value: Option<Stored<'_>>,
        expire_at: Option<u64>,
        clock: Option<u32>,
    ) {
        let handle = self.handle(slot);
        let old = Record(self.store.get(handle));
        let pos = match (old.expiry(), expire_at) {
            (Some((_, pos)), Some(_)) => Some(pos),
            (None, Some(_)) => Some(self.volatile.len() as u32),
            (Some((_, pos)), None) => {
                self.unlist_volatile(pos);
                None
            }
            (None, None) => None,
        };
        let old = Record(self.store.get(handle));
        self.scratch.clear();
        record::encode(
            &mut self.scratch,
            old.key(),
            &value.unwrap_or(old.value()),
            clock.unwrap_or(old.clock()),
            expire_at.zip(pos),
        );
        let len = self.scratch.len();
        let new = if self.store.fits(handle, len) {
            self.store.get_mut(handle)[..len].copy_from_slice(&self.scratch);
            handle
        } else {
            self.store.free(handle);
            let new = self.store.alloc(&self.scratch);
            self.index.set_id(slot.0, new);
            new
        };
        match pos {
            Some(p) if p as usize == self.volatile.len() => self.volatile.push(new),
            Some(p) => self.volatile[p as usize] = new,
            None => {}
        }
    }

    /// Takes the handle at `pos` out of the volatile list; the last one moves there and its
    /// record learns its new position.
    fn unlist_volatile(&mut self, pos: u32) {
        self.volatile.swap_remove(pos as usize);
        if let Some(&moved) = self.volatile.get(pos as usize) {
            record::set_volatile_pos(self.store.get_mut(moved), pos);
        }
    }

    /// Removes `key`, returning its value and expiry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Removed<T>> {
        self.find(key).map(|slot| self.remove_slot(slot))
    }

    /// Removes the key in `slot`, returning its value and expiry.
    pub fn remove_slot(&mut self, slot: Slot) -> Removed<T> {
        let value = match self.record(self.handle(slot)).value() {
            Stored::Int(v) => Owned::Int(v),
            Stored::Str(b, flag) => Owned::Str(b.to_vec(), flag),
            Stored::Packed(t, b) => Owned::Packed(t, b.to_vec()),
            Stored::Heap(i) => Owned::Heap(self.take_heap(i)),
        };
        let expire_at = self.unlink(slot);
        Removed { value, expire_at }
    }

    /// Removes the key in `slot` without copying an integer or string out; returns its
    /// heap value, if it had one (all a delete needs).
    pub fn discard_slot(&mut self, slot: Slot) -> Option<T> {
        let heap = match self.record(self.handle(slot)).value() {
            Stored::Heap(i) => Some(self.take_heap(i)),
            _ => None,
        };
        self.unlink(slot);
        heap
    }

    /// Takes the record in `slot` out of the index, the volatile list and the store (its
    /// heap value was taken); returns its expire time.
    fn unlink(&mut self, slot: Slot) -> Option<u64> {
        let handle = self.handle(slot);
        let expiry = self.record(handle).expiry();
        if let Some((_, pos)) = expiry {
            self.unlist_volatile(pos);
        }
        self.index.remove_slot(slot.0);
        self.store.free(handle);
        let store = &self.store;
        self.index.maybe_shrink(|h| key_hash(store, h));
        expiry.map(|(at, _)| at)
    }

    /// The `n`-th (modulo the count) key with an expiry, for sampling.
    pub fn volatile_entry(&self, n: usize) -> Option<EntryRef<'_, T>> {
        if self.volatile.is_empty() {
            return None;
        }
        Some(self.entry_of(self.volatile[n % self.volatile.len()]))
    }

    /// A uniformly drawn key (RANDOMKEY, eviction samples); `seed` is any random number.
    pub fn random_entry(&self, seed: u64) -> Option<EntryRef<'_, T>> {
        if self.is_empty() {
            return None;
        }
        Some(self.entry(Slot(self.index.random_slot(seed))))
    }

    /// Up to `count` entries from neighbouring slots of the index, from a random one
    /// (eviction's samples, as Redis's dictGetSomeKeys); `seed` is any random number. A
    /// table that is not empty gives at least one.
    pub fn sample(&self, seed: u64, count: usize, mut visit: impl FnMut(EntryRef<'_, T>)) {
        let mut found = false;
        self.index.sample(seed, count, |slot| {
            found = true;
            visit(self.entry(Slot(slot)));
        });
        if !found && count > 0 {
            if let Some(e) = self.random_entry(seed) {
                visit(e);
            }
        }
    }

    /// One SCAN step from `cursor` (0 to start), visiting about `count` keys; returns the
    /// cursor of the next step, 0 when the scan is complete. A key present for the whole
    /// scan is visited exactly once, whatever is inserted, removed or resized meanwhile.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(EntryRef<'_, T>)) -> u64 {
        let store = &self.store;
        self.index.scan(
            cursor,
            count,
            |h| key_hash(store, h),
            |h| visit(self.entry_of(h)),
        )
    }

    /// Every entry, in index order.
    pub fn iter(&self) -> impl Iterator<Item = EntryRef<'_, T>> + '_ {
        self.index.iter_ids().map(|h| self.entry_of(h))
    }

    /// Heap bytes the table holds beside its heap values' own allocations.
    pub fn memory_bytes(&self) -> usize {
        self.index.memory_bytes()
            + self.store.memory_bytes()
            + self.values.capacity() * std::mem::size_of::<Option<T>>()
            + (self.values_free.capacity() + self.volatile.capacity()) * 4
            + self.scratch.capacity()
    }

    /// Bytes of [`KeyTable::memory_bytes`] that removed keys left and the next keys take
    /// again (freed record slots and value slots), as an allocator's free chunks: a memory
    /// limit counts them as free, so a key's removal lowers the figure by what it took.
    pub fn reusable_bytes(&self) -> usize {
        self.store.free_bytes() + self.values_free.len() * std::mem::size_of::<Option<T>>()
    }

    /// Bytes the key in `slot` takes in the table (MEMORY USAGE, beside its heap value's
    /// own allocations): its record's slot, its index slot, and its heap slot and
    /// volatile-list entry when it has them.
    pub fn entry_bytes(&self, slot: Slot) -> usize {
        let handle = self.handle(slot);
        let r = self.record(handle);
        self.store.slot_bytes(handle)
            + 5
            + if r.is_volatile() { 4 } else { 0 }
            + match r.value() {
                Stored::Heap(_) => std::mem::size_of::<Option<T>>(),
                _ => 0,
            }
    }
}

/// A string for a record: at most [`STR_MAX`] bytes (the caller keeps longer ones as heap
/// values).
#[inline]
fn check_tag(tag: u8) -> u8 {
    assert!(tag < PACKED_TAGS, "packed tags are below {PACKED_TAGS}");
    tag
}

fn check_str(b: &[u8]) -> &[u8] {
    assert!(
        b.len() <= STR_MAX,
        "inline strings are at most {STR_MAX} bytes"
    );
    b
}
