//! Tail buffers carved from shared regions, instead of a mapping each.
//!
//! Most tails are under 2 MiB (the benchmark corpus's median object is 64 KiB), too small
//! for a mapping of their own to hold a transparent huge page. So buffers from 16 KiB to
//! 2 MiB are cut, one after another, from a [`REGION`] (`blocks::map_anonymous`): with
//! --huge-pages it is mapped 2 MiB aligned with `MADV_HUGEPAGE`, and the first buffer to
//! touch an aligned 2 MiB faults all of it in at once. Without, carving saves a mapping per
//! tail and changes nothing measurable on the miss path (objcache/BENCHMARKS.md, Session 5).
//!
//! ```text
//! region: REGION bytes                          cursor.next
//! | buf A | buf B | dropped | buf D | buf E |     v  not handed out yet    |
//!   each range a multiple of 4 KiB, handed out once, never again
//! ```
//!
//! A range is never handed out twice. A dropped buffer gives its pages back at once
//! (`blocks::drop_range`, which splits a huge page it lies in so that the range is freed
//! now, not when memory runs short), and whoever still holds a reference to the old pages (a
//! pipe or socket they were spliced into) keeps them unchanged: the property
//! `front::http::splice` relies on. The region is unmapped when its last buffer goes. When
//! the next buffer does not fit in what is left, the rest is given back and a fresh region
//! is mapped.
//!
//! Only tails likely to be kept are carved (`AlignedBuf::carved`: the HTTP fill's extents
//! while the hot-tail cache has room). With huge pages, carving every buffer took an
//! equal-memory run's cgroup from 1.30 to its 1.50 GiB limit with the same resident bytes,
//! and cost two fifths of its warm throughput (objcache/BENCHMARKS.md). The likely reason:
//! a buffer that passes through (an SSD read, a fill the full cache will not keep) is
//! spliced and dropped while a socket still holds some of its pages, the kernel cannot
//! split a huge page so held, and all 2 MiB of it stay charged until memory runs short.

use std::sync::{Arc, Mutex};

use crate::store::blocks::{drop_range, map_anonymous, populate_pages, HUGE_PAGE};

/// Bytes of one region: large enough that the part left over when it is abandoned (under
/// the largest carved buffer, 2 MiB) is a small share.
pub const REGION: usize = 32 << 20;

/// The largest buffer carved; larger ones get a mapping of their own.
pub const MAX_CARVED: usize = HUGE_PAGE;

/// One mapping of [`REGION`] bytes that buffers are carved from, unmapped when the cursor
/// and the last of its buffers let go of it.
struct Region {
    ptr: *mut u8,
}

impl Region {
    fn give_back(&self, offset: usize, len: usize) {
        // SAFETY: offset..offset+len lies in the mapping, and the caller owns that range.
        unsafe { drop_range(self.ptr.add(offset), len) };
    }
}

// SAFETY: a Region owns its mapping; carved ranges are disjoint and each owned by one
// `Carved`, so sharing the region between threads shares no bytes.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: mapped in `carve` with REGION bytes and unmapped once, here, when the last
        // `Carved` and the cursor have let go of it.
        unsafe {
            libc::munmap(self.ptr.cast(), REGION);
        }
    }
}

/// The region buffers are being cut from, and the offset of the next one.
struct Cursor {
    region: Arc<Region>,
    next: usize,
}

/// Hands out ranges of regions, one after another.
struct Carver {
    cursor: Mutex<Option<Cursor>>,
}

/// The process's carver: every carved tail buffer comes from it.
static CARVER: Carver = Carver {
    cursor: Mutex::new(None),
};

/// A zeroed, populated range of a region, owned alone.
pub struct Carved {
    region: Arc<Region>,
    offset: usize,
    len: usize,
}

impl Carved {
    /// The range's first byte.
    pub fn ptr(&self) -> *mut u8 {
        // SAFETY: offset..offset+len lies inside the region's mapping.
        unsafe { self.region.ptr.add(self.offset) }
    }
}

impl Drop for Carved {
    fn drop(&mut self) {
        self.region.give_back(self.offset, self.len);
    }
}

/// A zeroed range of `len` bytes (a multiple of 4 KiB, at most [`MAX_CARVED`]), its pages
/// faulted in. `None` when the kernel refuses a new region.
pub fn carve(len: usize) -> Option<Carved> {
    CARVER.carve(len)
}

impl Carver {
    fn carve(&self, len: usize) -> Option<Carved> {
        debug_assert!(len.is_multiple_of(4096) && len > 0 && len <= MAX_CARVED);
        let (region, offset) = {
            let mut cursor = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
            if cursor.as_ref().is_none_or(|c| c.next + len > REGION) {
                if let Some(old) = cursor.take() {
                    // The rest was never handed out.
                    old.region.give_back(old.next, REGION - old.next);
                }
                let ptr = map_anonymous(REGION, false)?;
                *cursor = Some(Cursor {
                    region: Arc::new(Region { ptr }),
                    next: 0,
                });
            }
            let c = cursor.as_mut().expect("a region was just set");
            let offset = c.next;
            c.next += len;
            (Arc::clone(&c.region), offset)
        };
        let carved = Carved {
            region,
            offset,
            len,
        };
        // SAFETY: the range was just handed out, to this buffer alone.
        unsafe { populate_pages(carved.ptr(), len) };
        Some(carved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carver() -> Carver {
        Carver {
            cursor: Mutex::new(None),
        }
    }

    #[test]
    fn ranges_are_disjoint_zeroed_and_outlive_their_neighbours() {
        let carver = carver();
        let mut bufs: Vec<Carved> = (1..=40).map(|i| carver.carve(i * 4096).unwrap()).collect();
        for (i, b) in bufs.iter().enumerate() {
            assert_eq!(b.ptr() as usize % 4096, 0);
            // SAFETY: the range is the buffer's alone and alive.
            let bytes = unsafe { std::slice::from_raw_parts_mut(b.ptr(), b.len) };
            assert!(bytes.iter().all(|&x| x == 0));
            bytes.fill(i as u8 + 1);
        }
        // Every other buffer goes; the rest keep their bytes.
        let kept: Vec<Carved> = bufs.drain(..).step_by(2).collect();
        for (i, b) in kept.iter().enumerate() {
            // SAFETY: as above.
            let bytes = unsafe { std::slice::from_raw_parts(b.ptr(), b.len) };
            assert!(bytes.iter().all(|&x| x == (2 * i) as u8 + 1));
        }
    }

    #[test]
    fn a_region_is_left_when_the_next_buffer_does_not_fit_and_unmapped_when_empty() {
        let carver = carver();
        let per_region = REGION / MAX_CARVED;
        let mut bufs: Vec<Carved> = (0..per_region + 1)
            .map(|_| carver.carve(MAX_CARVED).unwrap())
            .collect();
        let first = Arc::downgrade(&bufs[0].region);
        assert!(bufs[..per_region]
            .iter()
            .all(|b| Arc::ptr_eq(&b.region, &bufs[0].region)));
        assert!(!Arc::ptr_eq(&bufs[per_region].region, &bufs[0].region));
        bufs.truncate(per_region - 1);
        assert!(first.upgrade().is_some());
        bufs.clear();
        assert!(first.upgrade().is_none());
    }
}
