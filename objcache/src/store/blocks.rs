//! Allocation blocks: anonymous mappings of --block bytes, HugeTLB first, normal pages when
//! the kernel has no huge pages to give. Blocks are mapped on first use, so RSS follows the
//! data, and are never returned: the arena and the head slots recycle them.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// How the process's blocks are backed, logged once at the first mapping.
static BACKING_LOGGED: AtomicU8 = AtomicU8::new(0);

/// Set once any block is of HugeTLB pages.
static HUGE_MAPPED: AtomicBool = AtomicBool::new(false);

/// True when some block is of HugeTLB pages: their pages cannot be dropped a few at a
/// time, so no block's bytes may be lent (see `heads`).
pub fn huge_mapped() -> bool {
    HUGE_MAPPED.load(Ordering::Relaxed)
}

/// One mapped block.
pub struct Block {
    ptr: *mut u8,
    len: usize,
    huge: bool,
}

// SAFETY: a Block owns its mapping exclusively; it is moved between threads only inside a
// shard that is itself behind a mutex.
unsafe impl Send for Block {}

impl Block {
    /// Maps `len` bytes, trying MAP_HUGETLB first when `len` is a multiple of 2 MiB.
    pub fn map(len: usize) -> std::io::Result<Block> {
        let base = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // No MAP_NORESERVE with HugeTLB: the reservation must fail now rather than SIGBUS
        // on first touch when the pool has no pages.
        if len.is_multiple_of(2 << 20) {
            if let Some(ptr) = mmap(len, base | libc::MAP_HUGETLB) {
                log_backing(1, len);
                HUGE_MAPPED.store(true, Ordering::Relaxed);
                return Ok(Block {
                    ptr,
                    len,
                    huge: true,
                });
            }
        }
        match mmap(len, base | libc::MAP_NORESERVE) {
            Some(ptr) => {
                log_backing(2, len);
                Ok(Block {
                    ptr,
                    len,
                    huge: false,
                })
            }
            None => Err(std::io::Error::last_os_error()),
        }
    }

    /// The block's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is a live mapping owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Gives the pages of `range` (page-aligned offsets) back to the kernel: the next touch
    /// maps fresh zeroed pages, while whoever still holds a reference to the old ones (a
    /// pipe or socket they were spliced into) keeps them unchanged.
    pub fn drop_pages(&mut self, range: std::ops::Range<usize>) {
        debug_assert!(!self.huge && range.start.is_multiple_of(4096) && range.end <= self.len);
        // SAFETY: the range lies inside the mapping owned by self; MADV_DONTNEED on a
        // private anonymous mapping only replaces its pages.
        unsafe {
            libc::madvise(
                self.ptr.add(range.start).cast(),
                range.end - range.start,
                libc::MADV_DONTNEED,
            );
        }
    }

    /// The block's bytes, mutably.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: ptr..ptr+len is a live mapping owned exclusively by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: the mapping was created by mmap with this length and is unmapped once.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

fn mmap(len: usize, flags: i32) -> Option<*mut u8> {
    // SAFETY: an anonymous mapping with no address hint has no preconditions.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p.cast())
}

fn log_backing(kind: u8, len: usize) {
    if BACKING_LOGGED.swap(kind, Ordering::Relaxed) != kind {
        let what = if kind == 1 {
            "HugeTLB pages"
        } else {
            "normal pages (no HugeTLB pages available)"
        };
        crate::store_log!(Notice, "{} KiB blocks are backed by {what}", len >> 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_write_read() {
        let mut b = Block::map(2 << 20).unwrap();
        b.bytes_mut()[12345] = 7;
        assert_eq!(b.bytes()[12345], 7);
        assert_eq!(b.bytes().len(), 2 << 20);
    }

    #[test]
    fn dropped_pages_read_zero_and_others_keep_their_bytes() {
        let mut b = Block::map(1 << 20).unwrap();
        b.bytes_mut().fill(9);
        b.drop_pages(64 << 10..128 << 10);
        assert!(b.bytes()[64 << 10..128 << 10].iter().all(|&x| x == 0));
        assert_eq!(b.bytes()[(64 << 10) - 1], 9);
        assert_eq!(b.bytes()[128 << 10], 9);
    }
}
