//! The element hash: MurmurHash64A (Austin Appleby's 64-bit MurmurHash2) read little
//! endian on every machine, as Redis runs it, and the register/value pair it gives.

use super::{P, Q, REGISTERS};

/// Redis's seed for HyperLogLog hashes.
const SEED: u64 = 0xadc8_3b19;
const M: u64 = 0xc6a4_a793_5bd1_e995;
const R: u32 = 47;

/// MurmurHash64A of `data` with `seed`.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut blocks = data.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register `element` falls in and the value it offers: the low 14 bits of the hash,
/// and 1 + the number of zeros below the lowest set bit of the other 50 (51 when all are
/// zero).
#[inline]
pub fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, SEED);
    let index = (hash as usize) & (REGISTERS - 1);
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_bytes_and_blocks_hash_differently() {
        // Every tail length goes through its own path; no two agree.
        let data = b"0123456789abcdef";
        let hashes: Vec<u64> = (0..=data.len())
            .map(|n| murmur64a(&data[..n], SEED))
            .collect();
        for (i, a) in hashes.iter().enumerate() {
            assert!(hashes[i + 1..].iter().all(|b| b != a));
        }
    }

    #[test]
    fn values_run_from_1_to_51() {
        for n in 0..10_000u32 {
            let (index, value) = pattern(&n.to_le_bytes());
            assert!(index < REGISTERS);
            assert!((1..=51).contains(&value));
        }
    }
}
