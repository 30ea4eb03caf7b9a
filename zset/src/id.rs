//! Id widths. An id is an arena byte offset; a set whose arena starts every
//! entry below 64 KiB (up to a few thousand short members) stores its ids as
//! `u16` in both indexes, halving their cost, and widens them to `u32` once
//! a new entry would start past that. Widening keeps every offset, so it
//! copies the indexes without re-hashing or re-sorting anything.

use std::fmt::Debug;

/// A stored arena offset.
///
/// # Safety
///
/// All-zero bytes must be a valid value (the Swiss index allocates its tables zeroed);
/// it is implemented for `u16` and `u32` only.
pub(crate) unsafe trait Id:
    Copy + Eq + Default + Debug + Send + Sync + 'static
{
    /// Largest arena offset this width holds.
    const MAX_OFFSET: usize;

    /// The id for `offset`, which must be at most `MAX_OFFSET`.
    fn new(offset: u32) -> Self;

    /// The arena offset.
    fn get(self) -> u32;

    /// The index of `id` in `ids` (the first, if it repeats), comparing a vector of ids at
    /// a time: one contiguous read, with AVX2 when the CPU has it (checked at run time).
    fn position(ids: &[Self], id: Self) -> Option<usize>;
}

/// Ids compared at a time by [`Id::position`]'s portable scan.
const SCAN: usize = 32;

/// [`Id::position`] for the baseline instruction set: each fixed-size chunk compiles to
/// vector compares ORed together and one test; only the chunk that holds the id is
/// looked into.
fn position_portable<I: Id>(ids: &[I], id: I) -> Option<usize> {
    let mut chunks = ids.chunks_exact(SCAN);
    let mut base = 0;
    for chunk in &mut chunks {
        let chunk: &[I; SCAN] = chunk.try_into().expect("chunks of SCAN");
        if chunk.iter().fold(false, |hit, &x| hit | (x == id)) {
            break;
        }
        base += SCAN;
    }
    Some(base + ids[base..].iter().position(|&x| x == id)?)
}

/// AVX2 scans: 32 ids (128 bytes of `u32`, or 64 of `u16`) compared per step by four or
/// two 256-bit compares ORed into one test; the step that hits turns its compare masks
/// into a bit mask whose lowest set bit is the answer, so no id is compared twice.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Whether the CPU has AVX2 (the standard library caches the answer).
    #[inline]
    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2")
    }

    /// [`super::Id::position`] of a `u32` id.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn position_u32(ids: &[u32], id: u32) -> Option<usize> {
        let needle = _mm256_set1_epi32(id as i32);
        let mut chunks = ids.chunks_exact(32);
        let mut base = 0;
        for chunk in &mut chunks {
            let p = chunk.as_ptr().cast::<__m256i>();
            // SAFETY: the chunk holds 32 u32s, four unaligned 256-bit loads.
            let (a, b, c, d) = unsafe {
                (
                    _mm256_cmpeq_epi32(_mm256_loadu_si256(p), needle),
                    _mm256_cmpeq_epi32(_mm256_loadu_si256(p.add(1)), needle),
                    _mm256_cmpeq_epi32(_mm256_loadu_si256(p.add(2)), needle),
                    _mm256_cmpeq_epi32(_mm256_loadu_si256(p.add(3)), needle),
                )
            };
            let any = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
            if _mm256_testz_si256(any, any) == 0 {
                let lanes = |v| _mm256_movemask_ps(_mm256_castsi256_ps(v)) as u32;
                let hits = lanes(a) | lanes(b) << 8 | lanes(c) << 16 | lanes(d) << 24;
                return Some(base + hits.trailing_zeros() as usize);
            }
            base += 32;
        }
        Some(base + chunks.remainder().iter().position(|&x| x == id)?)
    }

    /// [`super::Id::position`] of a `u16` id.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn position_u16(ids: &[u16], id: u16) -> Option<usize> {
        let needle = _mm256_set1_epi16(id as i16);
        let mut chunks = ids.chunks_exact(32);
        let mut base = 0;
        for chunk in &mut chunks {
            let p = chunk.as_ptr().cast::<__m256i>();
            // SAFETY: the chunk holds 32 u16s, two unaligned 256-bit loads.
            let (a, b) = unsafe {
                (
                    _mm256_cmpeq_epi16(_mm256_loadu_si256(p), needle),
                    _mm256_cmpeq_epi16(_mm256_loadu_si256(p.add(1)), needle),
                )
            };
            let any = _mm256_or_si256(a, b);
            if _mm256_testz_si256(any, any) == 0 {
                // Two mask bits per id.
                let bytes = |v| u64::from(_mm256_movemask_epi8(v) as u32);
                let hits = bytes(a) | bytes(b) << 32;
                return Some(base + hits.trailing_zeros() as usize / 2);
            }
            base += 32;
        }
        Some(base + chunks.remainder().iter().position(|&x| x == id)?)
    }
}

// SAFETY: zero is a valid u16.
unsafe impl Id for u16 {
    const MAX_OFFSET: usize = u16::MAX as usize;

    #[inline]
    fn new(offset: u32) -> u16 {
        debug_assert!(
            offset as usize <= Self::MAX_OFFSET,
            "id {offset} exceeds u16"
        );
        offset as u16
    }

    #[inline]
    fn get(self) -> u32 {
        u32::from(self)
    }

    #[inline]
    fn position(ids: &[u16], id: u16) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if avx2::available() {
            // SAFETY: the CPU has AVX2, just checked.
            return unsafe { avx2::position_u16(ids, id) };
        }
        position_portable(ids, id)
    }
}

// SAFETY: zero is a valid u32.
unsafe impl Id for u32 {
    const MAX_OFFSET: usize = u32::MAX as usize;

    #[inline]
    fn new(offset: u32) -> u32 {
        offset
    }

    #[inline]
    fn get(self) -> u32 {
        self
    }

    #[inline]
    fn position(ids: &[u32], id: u32) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if avx2::available() {
            // SAFETY: the CPU has AVX2, just checked.
            return unsafe { avx2::position_u32(ids, id) };
        }
        position_portable(ids, id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way of finding an id agrees with a plain scan, at every length around the
    /// chunk sizes, for the first, a middle and the last copy of repeated ids.
    fn check<I: Id>() {
        let make = |x: u32| I::new(x);
        for len in [0, 1, 5, 31, 32, 33, 63, 64, 65, 100, 511, 512] {
            let ids: Vec<I> = (0..len as u32).map(|i| make(i * 7 % 300)).collect();
            for probe in 0..310 {
                let id = make(probe);
                let want = ids.iter().position(|&x| x == id);
                assert_eq!(I::position(&ids, id), want, "len {len} id {probe}");
                assert_eq!(position_portable(&ids, id), want, "portable");
            }
        }
    }

    #[test]
    fn position_matches_a_scan() {
        check::<u16>();
        check::<u32>();
    }
}
