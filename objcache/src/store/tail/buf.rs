//! Page-aligned byte buffers, as O_DIRECT transfers require.
//!
//! A buffer of [`OWN_PAGES`] bytes or more has pages no other allocation will ever reuse:
//! an anonymous mapping of its own (`store::blocks::map_anonymous`), or, for a tail to be
//! kept of up to 2 MiB ([`AlignedBuf::carved`]), a range carved from a shared
//! region (`tail::carve`). Either way the kernel hands its pages over zeroed and populated
//! in one call (no user-space memset and no fault per page as it is first written), and they
//! go back to the system when the buffer is dropped. Because they are never reused, a socket
//! may keep references to them beyond the buffer's life (see `front::http::splice`): the
//! bytes a reference sees stay the buffer's last ones. Smaller buffers come from the heap.

use std::alloc::{alloc_zeroed, dealloc, Layout};

use super::carve::{carve, Carved, MAX_CARVED};
use crate::config::DIRECT_IO_ALIGN;
use crate::store::blocks::map_anonymous;

/// Buffers from this size up have pages of their own: the size from which the HTTP front
/// splices rather than copies (`front::http::conn::SPLICE_FROM`).
pub const OWN_PAGES: usize = 16 << 10;

/// Where a buffer's bytes live.
enum Backing {
    /// The heap's: freed pages may hold the next allocation.
    Heap,
    /// A range of a shared region, given back on drop.
    Carved(Carved),
    /// A mapping of its own, unmapped on drop.
    Mapped,
}

/// A zeroed buffer whose address and length are multiples of 4 KiB.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
    backing: Backing,
}

// SAFETY: the buffer owns its allocation; moving it to another thread moves ownership.
unsafe impl Send for AlignedBuf {}

// SAFETY: shared references only read the bytes (writing needs `&mut self`).
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes rounded up to 4 KiB (at least 4 KiB).
    pub fn new(len: usize) -> AlignedBuf {
        let len = Self::rounded(len);
        if len >= OWN_PAGES {
            if let Some(ptr) = map_anonymous(len, true) {
                return AlignedBuf {
                    ptr,
                    len,
                    backing: Backing::Mapped,
                };
            }
        }
        Self::heap(len)
    }

    /// A buffer as [`AlignedBuf::new`] makes, but carved from a shared region when
    /// it is from 16 KiB to 2 MiB: for a tail that is likely to be kept a while, which is
    /// when carving pays (see `tail::carve`).
    pub fn carved(len: usize) -> AlignedBuf {
        let len = Self::rounded(len);
        let carved = (OWN_PAGES..=MAX_CARVED).contains(&len).then(|| carve(len));
        match carved.flatten() {
            Some(carved) => AlignedBuf {
                ptr: carved.ptr(),
                len,
                backing: Backing::Carved(carved),
            },
            None => Self::new(len),
        }
    }

    fn rounded(len: usize) -> usize {
        len.max(1).next_multiple_of(DIRECT_IO_ALIGN as usize)
    }

    fn heap(len: usize) -> AlignedBuf {
        let layout = Self::heap_layout(len);
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf {
            ptr,
            len,
            backing: Backing::Heap,
        }
    }

    fn heap_layout(len: usize) -> Layout {
        Layout::from_size_align(len, DIRECT_IO_ALIGN as usize).expect("valid layout")
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: buffers are at least one page long.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// True when the buffer's pages are its own: nothing else will reuse them.
    pub fn owns_pages(&self) -> bool {
        !matches!(self.backing, Backing::Heap)
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
        match self.backing {
            // SAFETY: allocated in new() with this exact layout.
            Backing::Heap => unsafe {
                dealloc(self.ptr, Self::heap_layout(self.len));
            },
            // The range goes back when the `Carved` is dropped, after this.
            Backing::Carved(ref range) => debug_assert_eq!(range.ptr(), self.ptr),
            // SAFETY: mapped in new() with this length, and unmapped once, here.
            Backing::Mapped => unsafe {
                libc::munmap(self.ptr.cast(), self.len);
            },
        }
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
        assert!(!b.owns_pages());
        b[8191] = 1;
        assert_eq!(b.iter().map(|&x| x as u32).sum::<u32>(), 1);
        assert!(!b.is_empty());
    }

    #[test]
    fn large_buffers_are_zeroed_and_own_their_pages() {
        let sizes = [OWN_PAGES + 1, MAX_CARVED, MAX_CARVED + 1];
        let makers = [AlignedBuf::new, AlignedBuf::carved];
        for (len, make) in sizes.into_iter().flat_map(|l| makers.map(|m| (l, m))) {
            let mut b = make(len);
            assert_eq!(b.len(), len.next_multiple_of(4096));
            assert!(b.owns_pages());
            assert_eq!(b.as_mut_ptr() as usize % 4096, 0);
            assert!(b.iter().all(|&x| x == 0));
            b[len - 1] = 9;
            assert_eq!(b[len - 1], 9);
        }
    }
}
