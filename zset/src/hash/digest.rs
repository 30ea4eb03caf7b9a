//! The member hash: a wyhash-style multiply-fold over 8-byte words.
//!
//! The seed is fixed, so a member's hash is the same everywhere; each Swiss table
//! mixes it with a seed of its own (`swiss::spread`). The top bits choose the home group (through a
//! multiply-shift reduction) and the low 7 bits are the control-byte tag, so
//! both ends of the result must be well mixed; the final fold does that.

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;
const P3: u64 = 0x5899_65cc_7537_4cc3;

/// Multiplies into 128 bits and folds the halves together.
#[inline]
fn mum(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// Hashes a member's bytes.
#[inline]
pub(crate) fn hash(bytes: &[u8]) -> u64 {
    let mut h = P0 ^ (bytes.len() as u64).wrapping_mul(P1);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        h = mum(u64::from_le_bytes(w) ^ P1, h ^ P2);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = mum(u64::from_le_bytes(w) ^ P3, h ^ P2);
    }
    mum(h ^ P0, P3)
}

#[cfg(test)]
mod tests {
    use super::hash;
    use std::collections::HashSet;

    #[test]
    fn distinct_for_similar_inputs() {
        let mut seen = HashSet::new();
        for i in 0..100_000u32 {
            assert!(seen.insert(hash(i.to_string().as_bytes())));
        }
        assert_ne!(hash(b""), hash(b"\0"));
        assert_ne!(hash(b"\0"), hash(b"\0\0"));
    }

    #[test]
    fn low_and_high_bits_are_spread() {
        let mut tags = [0u32; 128];
        let mut tops = [0u32; 16];
        for i in 0..128_000u32 {
            let h = hash(format!("m:{i:012x}").as_bytes());
            tags[(h & 0x7f) as usize] += 1;
            tops[(h >> 60) as usize] += 1;
        }
        assert!(tags.iter().all(|&c| (800..1200).contains(&c)), "{tags:?}");
        assert!(
            tops.iter().all(|&c| (7_000..9_000).contains(&c)),
            "{tops:?}"
        );
    }
}
