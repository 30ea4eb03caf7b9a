//! The digest index of one shard: a hash table of 4-byte entry ids over a slab of entries.
//!
//! An [`Entry`] is 72 bytes: the 32-byte SHA-256 digest, the 8-byte CAS value, six 4-byte
//! fields (value length, client flags, expiry, last access, location, tail page), one byte
//! of state bits and one of key length, 66 bytes padded to 8 (`repr(C)`, native byte order):
//!
//! ```text
//! offset  bytes  field
//!      0     32  digest    SHA-256 of the key
//!     32      8  cas       CAS unique value
//!     40      4  size      value length in bytes
//!     44      4  flags     client flags
//!     48      4  exptime   expiry on the store clock, 0 = never
//!     52      4  atime     last access on the store clock
//!     56      4  loc       arena location (16-byte units) or RAM head slot
//!     60      4  tail      first 4 KiB page of the SSD tail extent (split objects)
//!     64      1  bits      BIT_* state bits
//!     65      1  key_len   key length, saturated at 255
//!     66      6  padding to the 8-byte alignment of `cas`
//! ```
//! The key length is recorded when
//! a storage command links the entry, so `stats items` and `stats slabs` can class objects as
//! memcached would. The hash table adds about 6 bytes per object (a 4-byte id and a control
//! byte at 7/8 load), and the eviction policy 12 bytes of links.
//!
//! The key itself (for `lru_crawler metadump` and `stats cachedump`) is kept beside the
//! entries, by entry id: a 16-byte slot per id (`Option<Box<[u8]>>`, null for an entry
//! linked without a key, as HTTP objects are) and the key's own heap allocation.

use hashbrown::HashTable;
use slab::Slab;

use crate::store::digest::Digest;

/// The item was read since it was stored (memcached's ITEM_FETCHED, mg `h`).
pub const BIT_FETCHED: u8 = 1;
/// A recache token was handed out (mg `W` was sent; later readers see `Z`).
pub const BIT_TOKEN_SENT: u8 = 2;
/// The item was invalidated by md `I` and is served as stale (mg `X`).
pub const BIT_STALE: u8 = 4;
/// The key was given base64-encoded (memcached's ITEM_KEY_BINARY: mg `k` and `me` show it
/// encoded).
pub const BIT_KEY_BINARY: u8 = 8;

/// Metadata of one stored object (laid out as the module documentation draws it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Entry {
    /// SHA-256 of the key.
    pub digest: Digest,
    /// CAS unique value.
    pub cas: u64,
    /// Value length in bytes.
    pub size: u32,
    /// Opaque client flags.
    pub flags: u32,
    /// Expiry on the store clock, 0 for never.
    pub exptime: u32,
    /// Last access on the store clock.
    pub atime: u32,
    /// Arena location (in 16-byte units) for whole objects, head slot for split ones.
    pub loc: u32,
    /// First 4 KiB page of the tail extent for split objects.
    pub tail: u32,
    /// `BIT_*` state bits.
    pub bits: u8,
    /// Key length in bytes, saturated at 255 (memcache keys are at most 250 bytes); 0 when
    /// the storing front gave none (HTTP objects).
    pub key_len: u8,
}

/// Digest to entry map of one shard.
#[derive(Default)]
pub struct Index {
    table: HashTable<u32>,
    entries: Slab<Entry>,
    /// The key of each entry, by id (`None` for an entry linked without one).
    keys: Vec<Option<Box<[u8]>>>,
}

impl Index {
    /// Id of the entry for `digest`, if present.
    pub fn find(&self, digest: &Digest) -> Option<u32> {
        let entries = &self.entries;
        self.table
            .find(digest.table_hash(), |&id| {
                entries[id as usize].digest == *digest
            })
            .copied()
    }

    /// The entry with id `id`.
    pub fn get(&self, id: u32) -> &Entry {
        &self.entries[id as usize]
    }

    /// The entry with id `id`, mutably.
    pub fn get_mut(&mut self, id: u32) -> &mut Entry {
        &mut self.entries[id as usize]
    }

    /// Adds an entry whose digest is not present yet, with its key (empty for none), and
    /// returns its id.
    pub fn insert(&mut self, entry: Entry, key: &[u8]) -> u32 {
        let hash = entry.digest.table_hash();
        let id = self.entries.insert(entry) as u32;
        let slot = id as usize;
        if self.keys.len() <= slot {
            self.keys.resize_with(slot + 1, || None);
        }
        self.keys[slot] = (!key.is_empty()).then(|| key.into());
        let entries = &self.entries;
        self.table
            .insert_unique(hash, id, |&i| entries[i as usize].digest.table_hash());
        id
    }

    /// Every entry with its key (empty for none), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&Entry, &[u8])> + '_ {
        self.entries
            .iter()
            .map(|(id, e)| (e, self.keys[id].as_deref().unwrap_or_default()))
    }

    /// The id of every entry, in no particular order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().map(|(id, _)| id as u32)
    }

    /// Removes the entry `id` and returns it.
    pub fn remove(&mut self, id: u32) -> Entry {
        let digest = self.entries[id as usize].digest;
        if let Ok(slot) = self.table.find_entry(digest.table_hash(), |&i| i == id) {
            slot.remove();
        }
        self.keys[id as usize] = None;
        self.entries.remove(id as usize)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.table.clear();
        self.entries.clear();
        self.keys.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_layout_is_the_documented_one() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<Entry>(), 72);
        let offsets = [
            offset_of!(Entry, digest),
            offset_of!(Entry, cas),
            offset_of!(Entry, size),
            offset_of!(Entry, flags),
            offset_of!(Entry, exptime),
            offset_of!(Entry, atime),
            offset_of!(Entry, loc),
            offset_of!(Entry, tail),
            offset_of!(Entry, bits),
            offset_of!(Entry, key_len),
        ];
        assert_eq!(offsets, [0, 32, 40, 44, 48, 52, 56, 60, 64, 65]);
    }

    #[test]
    fn entry_is_72_bytes() {
        assert_eq!(std::mem::size_of::<Entry>(), 72);
    }

    #[test]
    fn insert_find_remove() {
        let mut ix = Index::default();
        let mut ids = Vec::new();
        for i in 0..1000u32 {
            let digest = Digest::of(&i.to_le_bytes());
            let key = if i % 4 == 1 {
                format!("k{i:03}")
            } else {
                String::new()
            };
            let entry = Entry {
                digest,
                size: i,
                key_len: key.len() as u8,
                ..Entry::default()
            };
            ids.push(ix.insert(entry, key.as_bytes()));
        }
        assert_eq!(ix.len(), 1000);
        for i in 0..1000u32 {
            let id = ix.find(&Digest::of(&i.to_le_bytes())).unwrap();
            assert_eq!(ix.get(id).size, i);
        }
        for (i, id) in ids.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
            assert_eq!(ix.remove(*id).size, i as u32);
        }
        for i in 0..1000u32 {
            assert_eq!(ix.find(&Digest::of(&i.to_le_bytes())).is_some(), i % 2 == 1);
        }
        // Every fourth entry has a key; the ones still present keep theirs.
        let keyed: Vec<_> = ix.iter().filter(|(_, k)| !k.is_empty()).collect();
        assert_eq!(keyed.len(), 250);
        for (e, k) in keyed {
            assert_eq!(k, format!("k{:03}", e.size).as_bytes());
        }
        assert_eq!(ix.iter().count(), 500);
        // A reused id does not inherit the removed entry's key.
        ix.remove(ids[1]);
        let id = ix.insert(Entry::default(), b"");
        assert_eq!(id, ids[1]);
        assert!(ix.iter().all(|(e, k)| e.size != 0 || k.is_empty()));
        ix.clear();
        assert_eq!(ix.len(), 0);
    }
}
