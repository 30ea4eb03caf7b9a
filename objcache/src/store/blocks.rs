//! Allocation blocks: anonymous mappings of --block bytes, HugeTLB first, normal pages when
//! the kernel has no huge pages to give. Blocks are mapped on first use, so RSS follows the
//! data, and are never returned: the arena and the head slots recycle them.
//!
//! With --huge-pages ([`ask_for_huge_pages`]), normal-page mappings (blocks, and the large
//! buffers of `tail::buf` and `tail::carve`, through [`map_anonymous`]) ask for transparent
//! huge pages: where a mapping spans an aligned 2 MiB range, its first touch faults in 2 MiB
//! at once instead of 512 pages one by one. Whether that pays depends on who backs the
//! memory (objcache/BENCHMARKS.md, "A lever measured" and Session 5): for memory the host of
//! this project's VMs still backs it cut the first touch from 0.7-1.2 to 0.12 s per GiB; for
//! memory fresh to the host it cost a fifth less on one day and twice as much on another,
//! when the miss path ran a fifth faster without it. Hence off by default. Dropping a few
//! pages of a huge range ([`Block::drop_pages`]) splits it back into normal pages; the kernel
//! keeps the dropped bytes for whoever still holds them.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// How the process's blocks are backed, logged once at the first mapping.
static BACKING_LOGGED: AtomicU8 = AtomicU8::new(0);

/// Set by --huge-pages: [`map_anonymous`] asks for transparent huge pages.
static TRANSPARENT_HUGE: AtomicBool = AtomicBool::new(false);

/// Set once any block is of HugeTLB pages.
static HUGE_MAPPED: AtomicBool = AtomicBool::new(false);

/// Makes every later [`map_anonymous`] ask for transparent huge pages, or not (--huge-pages).
pub fn ask_for_huge_pages(on: bool) {
    TRANSPARENT_HUGE.store(on, Ordering::Relaxed);
}

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
        match map_anonymous(len, false) {
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

    /// Gives the pages of `range` (page-aligned offsets) back to the kernel, as
    /// [`drop_range`] does.
    pub fn drop_pages(&mut self, range: std::ops::Range<usize>) {
        debug_assert!(!self.huge && range.start.is_multiple_of(4096) && range.end <= self.len);
        // SAFETY: the range lies inside the mapping owned exclusively by self (`&mut`).
        unsafe { drop_range(self.ptr.add(range.start), range.end - range.start) }
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

/// Transparent huge page size on x86-64 and most aarch64 kernels.
pub const HUGE_PAGE: usize = 2 << 20;

/// Maps `len` bytes of private anonymous memory in normal pages, with transparent huge
/// pages where [`ask_for_huge_pages`] asked for them; with `populate`, every page is faulted
/// in (zeroed) before this returns. `None` when the kernel refuses the mapping.
pub fn map_anonymous(len: usize, populate: bool) -> Option<*mut u8> {
    map_normal_pages(len, populate, TRANSPARENT_HUGE.load(Ordering::Relaxed))
}

/// [`map_anonymous`] with the huge-page choice given: with `huge`, a mapping of 2 MiB or
/// more is placed so that its whole 2 MiB ranges are aligned, and marked MADV_HUGEPAGE.
fn map_normal_pages(len: usize, populate: bool, huge: bool) -> Option<*mut u8> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    if len < HUGE_PAGE || !huge {
        let flags = if populate {
            flags | libc::MAP_POPULATE
        } else {
            flags
        };
        return mmap(len, flags);
    }
    // Over-map by one huge page and trim both ends, so the mapping starts 2 MiB aligned.
    let raw = mmap(len + HUGE_PAGE, flags)? as usize;
    let start = raw.next_multiple_of(HUGE_PAGE);
    // SAFETY: both trimmed pieces lie inside the mapping just made, which nothing else
    // references yet; the kept range start..start+len stays mapped.
    unsafe {
        if start > raw {
            libc::munmap(raw as *mut libc::c_void, start - raw);
        }
        libc::munmap((start + len) as *mut libc::c_void, raw + HUGE_PAGE - start);
        // Advice only: a kernel without THP maps normal pages, as without it.
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    if populate {
        // SAFETY: start..start+len is the mapping just made.
        unsafe { populate_pages(start as *mut u8, len) };
    }
    Some(start as *mut u8)
}

/// Faults in (zeroed) every page of `ptr..ptr+len` in one call, instead of one fault per
/// page at first touch. A kernel older than 5.14 refuses MADV_POPULATE_WRITE: the pages
/// then fault in at first touch, as without it.
///
/// # Safety
/// `ptr..ptr+len` must lie in a private anonymous mapping of the caller's, page-aligned.
pub unsafe fn populate_pages(ptr: *mut u8, len: usize) {
    // SAFETY: the caller vouches for the range; populating only faults pages in.
    unsafe {
        libc::madvise(ptr.cast(), len, libc::MADV_POPULATE_WRITE);
    }
}

/// Gives the pages of `ptr..ptr+len` back to the kernel: the next touch maps fresh zeroed
/// pages, while whoever still holds a reference to the old ones (a pipe or socket they
/// were spliced into) keeps them unchanged.
///
/// Unmapping part of a transparent huge page does not free that part: the kernel queues
/// the page to be split when memory runs short, and until then all 2 MiB stay charged to
/// the process and its cgroup. `MADV_COLD` over the range first splits the page at once,
/// and the `MADV_DONTNEED` after it frees the range now: dropping half of each of 256 huge
/// pages freed nothing without it and all of the half with it, on this project's VMs.
/// Without --huge-pages it still pays, for reasons not looked into (it also marks the
/// pages for early reclaim, among them any a socket still holds): in equal-memory A/Bs,
/// warm 14.0 against 12.4 Gbit/s by median of four starts each (objcache/BENCHMARKS.md,
/// Session 5).
///
/// # Safety
/// `ptr..ptr+len` must lie in a private anonymous mapping of the caller's, page-aligned,
/// and no reference into it may be used to read the old bytes afterwards.
pub unsafe fn drop_range(ptr: *mut u8, len: usize) {
    // SAFETY: the caller vouches for the range; MADV_COLD only splits and ages its pages,
    // MADV_DONTNEED on a private anonymous mapping only replaces them.
    unsafe {
        libc::madvise(ptr.cast(), len, libc::MADV_COLD);
        libc::madvise(ptr.cast(), len, libc::MADV_DONTNEED);
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

    #[test]
    fn huge_page_mappings_are_aligned_zeroed_and_drop_single_pages() {
        let len = 2 * HUGE_PAGE + (12 << 10);
        let p = map_normal_pages(len, true, true).unwrap();
        assert_eq!(p as usize % HUGE_PAGE, 0);
        // SAFETY: p..p+len was just mapped and is owned by this test.
        let bytes = unsafe { std::slice::from_raw_parts_mut(p, len) };
        assert!(bytes.iter().all(|&x| x == 0));
        bytes.fill(9);
        // SAFETY: a page-aligned range of the mapping, not read through a reference after.
        unsafe { drop_range(p.add(HUGE_PAGE + 4096), 4096) };
        // SAFETY: the mapping is still whole; the dropped page reads as fresh zeroes.
        let bytes = unsafe { std::slice::from_raw_parts(p, len) };
        assert!(bytes[HUGE_PAGE + 4096..HUGE_PAGE + 8192]
            .iter()
            .all(|&x| x == 0));
        assert_eq!(bytes[HUGE_PAGE + 4095], 9);
        assert_eq!(bytes[HUGE_PAGE + 8192], 9);
        // SAFETY: as above; unmapped once.
        unsafe { libc::munmap(p.cast(), len) };
    }
}
