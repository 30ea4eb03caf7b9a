//! Keys are indexed by their SHA-256 digest: the index never stores a key, and the 32 bytes
//! also pick the shard, the hash-table bucket and the check word kept beside stored bytes.

use sha2::{Digest as _, Sha256};

/// SHA-256 of a key.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Digest(pub [u8; 32]);

impl Digest {
    /// Hashes a key (sha2 uses the CPU's SHA extensions when present).
    pub fn of(key: &[u8]) -> Digest {
        Digest::of_parts(&[key])
    }

    /// Hashes a key given in pieces, as if they were one buffer (no copy into one).
    pub fn of_parts(parts: &[&[u8]]) -> Digest {
        let mut h = Sha256::new();
        for p in parts {
            h.update(p);
        }
        Digest(h.finalize().into())
    }

    fn word(&self, i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.0[i * 8..i * 8 + 8]);
        u64::from_le_bytes(w)
    }

    /// Hash for the index's hash table.
    pub fn table_hash(&self) -> u64 {
        self.word(0)
    }

    /// Check word stored beside the bytes of an object, compared on every read.
    pub fn check(&self) -> u64 {
        self.word(1)
    }

    /// Shard number among `shards` (independent of the table hash bits).
    pub fn shard(&self, shards: usize) -> usize {
        (self.word(3) % shards as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector_and_words() {
        let d = Digest::of(b"abc");
        assert_eq!(d.0[0], 0xba);
        assert_eq!(d.0[31], 0xad);
        assert_ne!(d.table_hash(), d.check());
        assert!(d.shard(8) < 8);
        assert_eq!(Digest::of(b"abc"), d);
        assert_ne!(Digest::of(b"abd"), d);
        assert_eq!(Digest::of_parts(&[b"a", b"", b"bc"]), d);
    }
}
