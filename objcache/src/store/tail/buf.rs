//! Page-aligned byte buffers, as O_DIRECT transfers require.

use std::alloc::{alloc_zeroed, dealloc, Layout};

use crate::config::DIRECT_IO_ALIGN;

/// A zeroed buffer whose address and length are multiples of 4 KiB.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer owns its allocation; moving it to another thread moves ownership.
unsafe impl Send for AlignedBuf {}

// SAFETY: shared references only read the bytes (writing needs `&mut self`).
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes rounded up to 4 KiB (at least 4 KiB).
    pub fn new(len: usize) -> AlignedBuf {
        let align = DIRECT_IO_ALIGN as usize;
        let len = len.max(1).div_ceil(align) * align;
        let layout = Layout::from_size_align(len, align).expect("valid layout");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: buffers are at least one page long.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Raw pointer for io_uring submissions.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is owned by self and initialised (zeroed at allocation).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and self is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout =
            Layout::from_size_align(self.len, DIRECT_IO_ALIGN as usize).expect("valid layout");
        // SAFETY: allocated in new() with this exact layout.
        unsafe { dealloc(self.ptr, layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_rounded() {
        let mut b = AlignedBuf::new(5000);
        assert_eq!(b.len(), 8192);
        assert_eq!(b.as_mut_ptr() as usize % 4096, 0);
        b[8191] = 1;
        assert_eq!(b.iter().map(|&x| x as u32).sum::<u32>(), 1);
        assert!(!b.is_empty());
    }
}
