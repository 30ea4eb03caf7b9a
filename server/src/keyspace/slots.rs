//! The keys of each hash slot, kept in cluster mode only (database 0): CLUSTER
//! COUNTKEYSINSLOT answers from a slot's count and GETKEYSINSLOT from its keys, without
//! walking the database.
//!
//! The key table moves its records (a key has no stable number to list), so a slot keeps
//! copies of its keys' bytes, packed one after another in one buffer:
//!
//! ```text
//! slots: [Keys; 16384]     Keys = count u32 + bytes Vec<u8>   (32 B a slot, 512 KiB)
//! bytes: [len varint][key bytes][len varint][key bytes]...    (key length + 1 B a key
//!                                                               for keys under 128 B)
//! ```
//!
//! Adding appends; removal searches the slot's buffer, which holds few keys (N / 16384,
//! unless hash tags gather them).

use crate::cluster::slot::SLOTS;

/// The keys of one hash slot.
#[derive(Clone, Default)]
struct Keys {
    count: u32,
    bytes: Vec<u8>,
}

/// Keys by hash slot.
pub struct SlotIndex {
    slots: Vec<Keys>,
}

impl Default for SlotIndex {
    fn default() -> Self {
        SlotIndex {
            slots: vec![Keys::default(); SLOTS],
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

/// The keys packed in `bytes`, each with its start offset and the end of its item.
fn items(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8], usize)> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let start = pos;
        let (len, took) = get_len(&bytes[pos..]);
        let key = &bytes[pos + took..pos + took + len];
        pos += took + len;
        Some((start, key, pos))
    })
}

impl SlotIndex {
    /// Records `key` in `slot` (the caller adds each key once).
    #[inline]
    pub fn add(&mut self, slot: u16, key: &[u8]) {
        let keys = &mut self.slots[slot as usize];
        put_len(&mut keys.bytes, key.len());
        keys.bytes.extend_from_slice(key);
        keys.count += 1;
    }

    /// Forgets `key` of `slot`.
    pub fn remove(&mut self, slot: u16, key: &[u8]) {
        let keys = &mut self.slots[slot as usize];
        let Some((start, end)) = items(&keys.bytes)
            .find(|(_, k, _)| *k == key)
            .map(|(start, _, end)| (start, end))
        else {
            return;
        };
        keys.bytes.drain(start..end);
        keys.count -= 1;
        if keys.bytes.is_empty() {
            keys.bytes = Vec::new();
        } else if keys.bytes.len() < keys.bytes.capacity() / 4 {
            keys.bytes.shrink_to_fit();
        }
    }

    /// Keys in `slot`.
    #[inline]
    pub fn count(&self, slot: u16) -> usize {
        self.slots[slot as usize].count as usize
    }

    /// The keys of `slot`, oldest first.
    pub fn keys(&self, slot: u16) -> impl Iterator<Item = &[u8]> {
        items(&self.slots[slot as usize].bytes).map(|(_, k, _)| k)
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
}
