//! One database: the key table with expiry times, built for stable SCAN cursors.
//!
//! Layout:
//!
//! ```text
//!  index: HashTable<u32>  -- 4 bytes + 1 control byte a slot, hashes the key bytes in `slots`
//!            |
//!            v
//!  slots: Slab<Entry>     -- entries never move; a deleted entry's slot is reused later
//!  volatile: Vec<u32>     -- slot numbers of the entries that have an expiry (random sampling
//!                            for active expiry); each such entry remembers its position here
//! ```
//!
//! SCAN walks slot numbers in order. Because entries never move, a key present for the
//! whole scan is returned exactly once, whatever grows or shrinks meanwhile; a key added
//! during the scan may or may not be returned, as Redis promises.

use super::slots::SlotIndex;
use super::value::Value;
use crate::cluster::slot::key_slot;
use hashbrown::{DefaultHashBuilder, HashTable};
use slab::Slab;
use std::hash::BuildHasher;

/// Key bytes, kept inside the entry when short: most keys ("user:1234", "k:42") fit in 22
/// bytes, which saves a heap allocation (32 bytes with the allocator's header) per key.
///
/// ```text
/// Inline: [len: 1][bytes: 22]   (24 bytes with the tag)
/// Heap:   [Box<[u8]>: 16]       (plus the allocation)
/// ```
#[derive(Clone)]
enum KeyBytes {
    Inline { len: u8, bytes: [u8; INLINE_KEY] },
    Heap(Box<[u8]>),
}

/// Longest key stored inline.
const INLINE_KEY: usize = 22;

impl KeyBytes {
    fn new(key: &[u8]) -> KeyBytes {
        if key.len() <= INLINE_KEY {
            let mut bytes = [0u8; INLINE_KEY];
            bytes[..key.len()].copy_from_slice(key);
            KeyBytes::Inline {
                len: key.len() as u8,
                bytes,
            }
        } else {
            KeyBytes::Heap(key.into())
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            KeyBytes::Inline { len, bytes } => &bytes[..*len as usize],
            KeyBytes::Heap(b) => b,
        }
    }
}

/// Marker for "no expiry".
const NO_EXPIRY: u64 = 0;

/// A key with its value and metadata.
pub struct Entry {
    key: KeyBytes,
    /// The value.
    pub value: Value,
    /// Absolute expiry in Unix milliseconds, or 0.
    expire_at: u64,
    /// Position in `Db::volatile` when `expire_at` is set.
    volatile_pos: u32,
    /// Last access, in seconds of the keyspace's access clock (OBJECT IDLETIME).
    pub(super) accessed: u32,
}

impl Entry {
    /// The key bytes.
    #[inline]
    pub fn key(&self) -> &[u8] {
        self.key.as_bytes()
    }

    /// The expiry time in Unix milliseconds, if any.
    #[inline]
    pub fn expire_at(&self) -> Option<u64> {
        (self.expire_at != NO_EXPIRY).then_some(self.expire_at)
    }

    /// Whether the key's time has come at Unix time `now_ms` (it is dead, though not yet
    /// removed).
    #[inline]
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at().is_some_and(|at| at <= now_ms)
    }

    /// Last access, in seconds of the keyspace's access clock.
    pub fn accessed(&self) -> u32 {
        self.accessed
    }

    /// Bytes the key costs: its value, its key bytes and the entry itself (MEMORY USAGE).
    pub fn memory_usage(&self) -> usize {
        self.value.memory_bytes() + self.key().len() + std::mem::size_of::<Entry>()
    }
}

/// Bytes of the index a key takes: its u32 slot number and its control byte.
const INDEX_SLOT_BYTES: usize = 5;

/// One numbered database.
#[derive(Default)]
pub struct Db {
    slots: Slab<Entry>,
    index: HashTable<u32>,
    volatile: Vec<u32>,
    hasher: DefaultHashBuilder,
    /// The keys of each hash slot (cluster mode, database 0), else None.
    slot_index: Option<Box<SlotIndex>>,
}

impl Db {
    /// Number of keys (including expired ones not yet removed).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the database holds no key.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Number of keys with an expiry.
    pub fn volatile_len(&self) -> usize {
        self.volatile.len()
    }

    /// The key table's bytes beside the values, as MEMORY STATS's
    /// `overhead.hashtable.main` and `.expires`: an entry, its key bytes and an index slot
    /// for each key; a volatile position for each expiring key.
    pub fn overhead(&self) -> (usize, usize) {
        let main = self
            .iter()
            .map(|e| e.memory_usage() - e.value.memory_bytes() + INDEX_SLOT_BYTES)
            .sum();
        (main, self.volatile.len() * std::mem::size_of::<u32>())
    }

    #[inline]
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The slot of `key`'s entry, expired or not (see [`Db::entry`]).
    #[inline]
    pub(super) fn find(&self, key: &[u8]) -> Option<u32> {
        let slots = &self.slots;
        self.index
            .find(self.hash(key), |&id| {
                slots[id as usize].key.as_bytes() == key
            })
            .copied()
    }

    /// The entry in slot `id` (from [`Db::find`], with no removal since).
    #[inline]
    pub(super) fn entry(&self, id: u32) -> &Entry {
        &self.slots[id as usize]
    }

    /// The entry in slot `id`, mutable.
    #[inline]
    pub(super) fn entry_mut(&mut self, id: u32) -> &mut Entry {
        &mut self.slots[id as usize]
    }

    /// The entry for `key`, expired or not.
    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.find(key).map(|id| &self.slots[id as usize])
    }

    /// Inserts `key` with no expiry, replacing (and returning) any previous value.
    pub fn insert(&mut self, key: &[u8], value: Value, now_secs: u32) -> Option<Value> {
        if let Some(id) = self.find(key) {
            self.clear_expiry(id);
            let entry = &mut self.slots[id as usize];
            entry.accessed = now_secs;
            return Some(std::mem::replace(&mut entry.value, value));
        }
        self.insert_absent(key, value, now_secs);
        None
    }

    /// Inserts `key`, which is not in the table, with no expiry; returns its slot.
    pub(super) fn insert_absent(&mut self, key: &[u8], value: Value, now_secs: u32) -> u32 {
        let entry = Entry {
            key: KeyBytes::new(key),
            value,
            expire_at: NO_EXPIRY,
            volatile_pos: 0,
            accessed: now_secs,
        };
        let id = self.slots.insert(entry) as u32;
        let hash = self.hash(key);
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index.insert_unique(hash, id, |&other| {
            hasher.hash_one(slots[other as usize].key.as_bytes())
        });
        if let Some(index) = &mut self.slot_index {
            index.add(key_slot(key), id);
        }
        id
    }

    /// Removes `key`, returning its entry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let hash = self.hash(key);
        let slots = &self.slots;
        let id = match self
            .index
            .find_entry(hash, |&id| slots[id as usize].key.as_bytes() == key)
        {
            Ok(found) => found.remove().0,
            Err(_) => return None,
        };
        self.clear_expiry(id);
        if let Some(index) = &mut self.slot_index {
            index.remove(key_slot(key), id);
        }
        Some(self.slots.remove(id as usize))
    }

    /// Sets or replaces the expiry of an existing key. Returns false when the key is absent.
    pub fn set_expiry(&mut self, key: &[u8], at_ms: u64) -> bool {
        let Some(id) = self.find(key) else {
            return false;
        };
        let entry = &mut self.slots[id as usize];
        if entry.expire_at == NO_EXPIRY {
            entry.volatile_pos = self.volatile.len() as u32;
            self.volatile.push(id);
        }
        entry.expire_at = at_ms.max(1);
        true
    }

    /// Removes the expiry of `key`. Returns true when there was one.
    pub fn persist(&mut self, key: &[u8]) -> bool {
        match self.find(key) {
            Some(id) if self.slots[id as usize].expire_at != NO_EXPIRY => {
                self.clear_expiry(id);
                true
            }
            _ => false,
        }
    }

    fn clear_expiry(&mut self, id: u32) {
        let entry = &mut self.slots[id as usize];
        if entry.expire_at == NO_EXPIRY {
            return;
        }
        entry.expire_at = NO_EXPIRY;
        let pos = entry.volatile_pos as usize;
        self.volatile.swap_remove(pos);
        if let Some(&moved) = self.volatile.get(pos) {
            self.slots[moved as usize].volatile_pos = pos as u32;
        }
    }

    /// The key of the `n`-th (modulo the count) entry that has an expiry, for sampling.
    pub fn volatile_key(&self, n: usize) -> Option<&[u8]> {
        if self.volatile.is_empty() {
            return None;
        }
        let id = self.volatile[n % self.volatile.len()];
        Some(self.slots[id as usize].key.as_bytes())
    }

    /// A random key (for RANDOMKEY), from a random 64-bit number.
    pub fn random_key(&self, mut random: impl FnMut() -> u64) -> Option<&[u8]> {
        if self.slots.is_empty() {
            return None;
        }
        // Slots are dense unless many keys were deleted: probe a few random slots, then
        // fall back to a walk from a random slot.
        let span = self.slots.capacity().max(1);
        for _ in 0..16 {
            if let Some(e) = self.slots.get((random() % span as u64) as usize) {
                return Some(e.key.as_bytes());
            }
        }
        let skip = (random() % self.slots.len() as u64) as usize;
        self.slots.iter().nth(skip).map(|(_, e)| e.key.as_bytes())
    }

    /// Visits entries from slot `cursor` on, at least `count` slots, and returns the cursor
    /// that resumes the scan (0 when it is complete).
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&Entry)) -> u64 {
        let end = self.slots.capacity();
        let mut slot = cursor as usize;
        let mut seen = 0;
        while slot < end && seen < count.max(1) {
            if let Some(e) = self.slots.get(slot) {
                visit(e);
                seen += 1;
            }
            slot += 1;
        }
        if slot >= end {
            0
        } else {
            slot as u64
        }
    }

    /// Every entry, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.slots.iter().map(|(_, e)| e)
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
        for (id, entry) in self.slots.iter() {
            index.add(key_slot(entry.key()), id as u32);
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
            Some(index) => index
                .ids(slot)
                .take(count)
                .map(|id| self.slots[id as usize].key())
                .collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_index_follows_inserts_removals_and_flushes() {
        let mut db = Db::default();
        db.insert(b"{a}1", Value::empty_zset(), 0);
        db.index_slots();
        db.insert(b"{a}2", Value::empty_zset(), 0);
        db.insert(b"b", Value::empty_zset(), 0);
        let a = key_slot(b"a");
        assert_eq!(db.count_in_slot(a), Some(2));
        db.remove(b"{a}1");
        assert_eq!(db.keys_in_slot(a, 10), vec![&b"{a}2"[..]]);
        assert_eq!(db.count_in_slot(key_slot(b"b")), Some(1));
        let _ = db.take();
        assert!(db.slots_indexed());
        assert_eq!(db.count_in_slot(a), Some(0));
    }

    #[test]
    fn short_and_long_keys() {
        let mut db = Db::default();
        let long = vec![b'x'; 100];
        for key in [
            &b""[..],
            b"k",
            &[b'y'; INLINE_KEY],
            &[b'z'; INLINE_KEY + 1],
            &long,
        ] {
            db.insert(key, Value::empty_zset(), 0);
            assert_eq!(db.get(key).unwrap().key(), key);
        }
        assert_eq!(std::mem::size_of::<KeyBytes>(), 24);
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
    }

    #[test]
    fn scan_returns_every_stable_key_despite_churn() {
        let mut db = Db::default();
        for i in 0..1000u32 {
            db.insert(format!("stable{i}").as_bytes(), Value::empty_zset(), 0);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut round = 0u32;
        loop {
            cursor = db.scan(cursor, 10, |e| {
                seen.insert(e.key().to_vec());
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
            assert!(
                seen.contains(format!("stable{i}").as_bytes()),
                "stable{i} missing"
            );
        }
    }
}
