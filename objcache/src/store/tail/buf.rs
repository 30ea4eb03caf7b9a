//! Page-aligned byte buffers, as O_DIRECT transfers require.
//!
//! A buffer of [`OWN_MAPPING`] bytes or more is an anonymous mapping of its own: the kernel
//! hands its pages over zeroed and populated in one call (no user-space memset and no fault
//! per page as it is first written; huge pages where it spans them, see
//! `store::blocks::map_anonymous`), and they go back to the system when the buffer is
//! dropped. Because such a buffer's pages are never reused by the allocator, a socket may
//! keep references to them beyond the buffer's life (see `front::http::splice`): the bytes
//! a reference sees stay the buffer's last ones.

use std::alloc::{alloc_zeroed, dealloc, Layout};

use crate::config::DIRECT_IO_ALIGN;
use crate::store::blocks::map_anonymous;

/// Buffers from this size up own their mapping: the size from which the HTTP front
/// splices rather than copies (`front::http::conn::SPLICE_FROM`).
pub const OWN_MAPPING: usize = 16 << 10;

/// A zeroed buffer whose address and length are multiples of 4 KiB.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
    mapped: bool,
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
        if len >= OWN_MAPPING {
            if let Some(ptr) = map_anonymous(len, true) {
                return AlignedBuf {
                    ptr,
                    len,
                    mapped: true,
                };
            }
        }
        let layout = Layout::from_size_align(len, align).expect("valid layout");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf {
            ptr,
            len,
            mapped: false,
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: buffers are at least one page long.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// True when the buffer is a mapping of its own, whose pages nothing else will reuse.
    pub fn owns_mapping(&self) -> bool {
        self.mapped
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
        if self.mapped {
            // SAFETY: mapped in new() with this length, and unmapped once, here.
            unsafe {
                libc::munmap(self.ptr.cast(), self.len);
            }
            return;
        }
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
        assert!(!b.owns_mapping());
        b[8191] = 1;
        assert_eq!(b.iter().map(|&x| x as u32).sum::<u32>(), 1);
        assert!(!b.is_empty());
    }

    #[test]
    fn large_buffers_are_zeroed_mappings_of_their_own() {
        let mut b = AlignedBuf::new(OWN_MAPPING + 1);
        assert_eq!(b.len(), OWN_MAPPING + 4096);
        assert!(b.owns_mapping());
        assert_eq!(b.as_mut_ptr() as usize % 4096, 0);
        assert!(b.iter().all(|&x| x == 0));
        b[OWN_MAPPING] = 9;
        assert_eq!(b[OWN_MAPPING], 9);
    }
}
