//! The keys of each hash slot, kept in cluster mode only (database 0): CLUSTER
//! COUNTKEYSINSLOT answers from a slot's count and GETKEYSINSLOT from its keys, without
//! walking the database.
//!
//! The key table moves its records (a key has no stable number to list), so a slot keeps
//! copies of its keys' bytes, packed one after another in one buffer, and a hash table of
//! the items' offsets to find a key in O(1):
//!
//! ```text
//! slots: [Keys; 16384]
//! bytes: [len << 1 | live, varint][key bytes][...]...   (key length + 1 B a key for keys
//!                                                       under 64 B)
//! find:  {offset of each live item}, hashed by its key   (8 B a key, plus the table's slack)
//! ```
//!
//! Adding appends an item; removal finds it through the table and clears its live bit, and
//! once removed items take more than half the buffer, the live ones are packed again (each
//! removal pays for the copy of at most one live item, so removal is O(1) amortised, as
//! Redis's per-slot linked lists). Listing starts past the removed items at the front, so
//! moving a slot's keys away oldest first (reshard) is linear.

use crate::cluster::slot::SLOTS;
use hashbrown::{DefaultHashBuilder, HashTable};
use std::hash::BuildHasher;

/// The keys of one hash slot.
#[derive(Default)]
struct Keys {
    /// Live keys.
    count: u32,
    /// Bytes of the removed items still in `bytes`.
    dead: usize,
    /// The items, live and removed, oldest first.
    bytes: Vec<u8>,
    /// Where the first item not known to be removed starts: every item before it is
    /// removed. A slot moved away by MIGRATE loses its oldest keys first (GETKEYSINSLOT
    /// lists them so), and each GETKEYSINSLOT would otherwise walk the ever longer run of
    /// removed items before them: quadratic in the slot's keys.
    first: usize,
    /// The offset of each live item in `bytes`, hashed by its key.
    find: HashTable<usize>,
}

/// Keys by hash slot.
pub struct SlotIndex {
    slots: Vec<Keys>,
    hasher: DefaultHashBuilder,
}

impl Default for SlotIndex {
    fn default() -> Self {
        SlotIndex {
            slots: (0..SLOTS).map(|_| Keys::default()).collect(),
            hasher: DefaultHashBuilder::default(),
        }
    }
}

/// Appends `n` as an LEB128 varint.
#[inline]
fn put_len(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The varint at the start of `bytes` and the bytes it took.
#[inline]
fn get_len(bytes: &[u8]) -> (usize, usize) {
    let mut n = 0usize;
    let mut shift = 0;
    for (i, &b) in bytes.iter().enumerate() {
        n |= usize::from(b & 0x7f) << shift;
        if b < 0x80 {
            return (n, i + 1);
        }
        shift += 7;
    }
    unreachable!("the buffer holds whole varints")
}

/// The item starting at `start`: its key, whether it is live, and where it ends.
#[inline]
fn item(bytes: &[u8], start: usize) -> (&[u8], bool, usize) {
    let (head, took) = get_len(&bytes[start..]);
    let from = start + took;
    let end = from + (head >> 1);
    (&bytes[from..end], head & 1 == 1, end)
}

impl Keys {
    /// Appends `key` (hashed to `hash`) as a live item.
    fn push(&mut self, hash: u64, key: &[u8], hasher: &DefaultHashBuilder) {
        let start = self.bytes.len();
        put_len(&mut self.bytes, key.len() << 1 | 1);
        self.bytes.extend_from_slice(key);
        let bytes = &self.bytes;
        self.find
            .insert_unique(hash, start, |&s| hasher.hash_one(item(bytes, s).0));
        self.count += 1;
    }

    /// Packs the live items again, without the removed ones.
    fn compact(&mut self, hasher: &DefaultHashBuilder) {
        let old = std::mem::take(self);
        self.bytes.reserve_exact(old.bytes.len() - old.dead);
        self.find.reserve(old.count as usize, |_| 0);
        let mut pos = 0;
        while pos < old.bytes.len() {
            let (key, live, end) = item(&old.bytes, pos);
            if live {
                self.push(hasher.hash_one(key), key, hasher);
            }
            pos = end;
        }
    }
}

impl SlotIndex {
    /// Records `key` in `slot` (the caller adds each key once).
    #[inline]
    pub fn add(&mut self, slot: u16, key: &[u8]) {
        let hash = self.hasher.hash_one(key);
        self.slots[slot as usize].push(hash, key, &self.hasher);
    }

    /// Forgets `key` of `slot`.
    pub fn remove(&mut self, slot: u16, key: &[u8]) {
        let hash = self.hasher.hash_one(key);
        let keys = &mut self.slots[slot as usize];
        let bytes = &keys.bytes;
        let Ok(found) = keys.find.find_entry(hash, |&s| item(bytes, s).0 == key) else {
            return;
        };
        let (start, _) = found.remove();
        let (_, _, end) = item(&keys.bytes, start);
        // The live bit is the varint's lowest bit, in its first byte.
        keys.bytes[start] &= !1;
        keys.count -= 1;
        keys.dead += end - start;
        if start == keys.first {
            keys.first = end;
            while keys.first < keys.bytes.len() {
                let (_, live, end) = item(&keys.bytes, keys.first);
                if live {
                    break;
                }
                keys.first = end;
            }
        }
        if keys.count == 0 {
            *keys = Keys::default();
        } else if keys.dead * 2 > keys.bytes.len() {
            keys.compact(&self.hasher);
        }
    }

    /// Keys in `slot`.
    #[inline]
    pub fn count(&self, slot: u16) -> usize {
        self.slots[slot as usize].count as usize
    }

    /// The keys of `slot`, oldest first.
    pub fn keys(&self, slot: u16) -> impl Iterator<Item = &[u8]> {
        let Keys { bytes, first, .. } = &self.slots[slot as usize];
        let mut pos = *first;
        std::iter::from_fn(move || {
            while pos < bytes.len() {
                let (key, live, end) = item(bytes, pos);
                pos = end;
                if live {
                    return Some(key);
                }
            }
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_remove_count() {
        let mut index = SlotIndex::default();
        index.add(5, b"a");
        index.add(5, b"bb");
        index.add(7, b"c");
        assert_eq!(index.count(5), 2);
        index.remove(5, b"a");
        index.remove(5, b"zz");
        assert_eq!(index.keys(5).collect::<Vec<_>>(), vec![&b"bb"[..]]);
        assert_eq!(index.count(5), 1);
        assert_eq!(index.count(7), 1);
        assert_eq!(index.count(0), 0);
        index.remove(7, b"c");
        assert_eq!(index.keys(7).count(), 0);
    }

    #[test]
    fn long_and_empty_keys() {
        let mut index = SlotIndex::default();
        let long = vec![b'x'; 300];
        let longer = vec![b'y'; 20_000];
        index.add(1, &long);
        index.add(1, b"");
        index.add(1, &longer);
        index.add(1, b"k");
        assert_eq!(
            index.keys(1).collect::<Vec<_>>(),
            vec![&long[..], b"", &longer[..], b"k"]
        );
        index.remove(1, &longer);
        index.remove(1, b"");
        assert_eq!(index.keys(1).collect::<Vec<_>>(), vec![&long[..], b"k"]);
        assert_eq!(index.count(1), 2);
    }

    #[test]
    fn many_keys_removed_in_any_order() {
        let mut index = SlotIndex::default();
        let keys: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("{{t}}:{i}").into_bytes())
            .collect();
        for k in &keys {
            index.add(9, k);
        }
        // Every third key, then the rest from the end: compactions happen on the way.
        for k in keys.iter().step_by(3) {
            index.remove(9, k);
        }
        let left: Vec<&[u8]> = keys
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(_, k)| k.as_slice())
            .collect();
        assert_eq!(index.keys(9).collect::<Vec<_>>(), left);
        assert_eq!(index.count(9), left.len());
        for k in left.iter().rev() {
            index.remove(9, k);
            index.remove(9, k);
        }
        assert_eq!(index.count(9), 0);
        assert_eq!(index.keys(9).count(), 0);
        assert!(index.slots[9].bytes.is_empty());
    }

    proptest::proptest! {
        #[test]
        fn follows_a_set_of_keys(ops in proptest::collection::vec(
            (proptest::bool::ANY, proptest::collection::vec(0u8..4, 0..200)), 0..60)) {
            let mut index = SlotIndex::default();
            let mut model: Vec<Vec<u8>> = Vec::new();
            for (add, key) in ops {
                let present = model.contains(&key);
                if add && !present {
                    index.add(3, &key);
                    model.push(key);
                } else if !add {
                    index.remove(3, &key);
                    model.retain(|k| *k != key);
                }
            }
            let mut got: Vec<Vec<u8>> = index.keys(3).map(<[u8]>::to_vec).collect();
            got.sort();
            model.sort();
            proptest::prop_assert_eq!(index.count(3), model.len());
            proptest::prop_assert_eq!(got, model);
        }
    }

    #[test]
    fn listing_skips_the_removed_oldest_keys_without_walking_them() {
        let mut index = SlotIndex::default();
        let keys: Vec<Vec<u8>> = (0..1000)
            .map(|i| format!("key:{i:06}").into_bytes())
            .collect();
        for k in &keys {
            index.add(9, k);
        }
        // Oldest first, as a reshard's MIGRATEs remove them (no compaction before half).
        for k in &keys[..400] {
            index.remove(9, k);
            let slot = &index.slots[9];
            let (key, live, _) = item(&slot.bytes, slot.first);
            assert!(live, "listing starts at a live item");
            assert_eq!(index.keys(9).next(), Some(key));
        }
        assert_eq!(index.keys(9).next(), Some(&keys[400][..]));
        // A removal in the middle leaves the start where it is.
        index.remove(9, &keys[500]);
        assert_eq!(index.keys(9).count(), 599);
        assert_eq!(index.keys(9).next(), Some(&keys[400][..]));
    }
}
