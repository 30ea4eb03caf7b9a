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
}
