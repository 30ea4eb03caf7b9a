//! Allocation blocks: anonymous mappings of --block bytes, HugeTLB first, normal pages when
//! the kernel has no huge pages to give. Blocks are mapped on first use, so RSS follows the
//! data, and are never returned: the arena and the head slots recycle them.

use std::sync::atomic::{AtomicU8, Ordering};

/// How the process's blocks are backed, logged once at the first mapping.
static BACKING_LOGGED: AtomicU8 = AtomicU8::new(0);

/// One mapped block.
pub struct Block {
    ptr: *mut u8,
    len: usize,
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
                return Ok(Block { ptr, len });
            }
        }
        match mmap(len, base | libc::MAP_NORESERVE) {
            Some(ptr) => {
                log_backing(2, len);
                Ok(Block { ptr, len })
            }
            None => Err(std::io::Error::last_os_error()),
        }
    }

    /// The block's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is a live mapping owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
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
}
