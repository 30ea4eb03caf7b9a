//! Free-space map of a pool file in 4 KiB pages: best-fit allocation from coalesced free
//! runs, growing the file at its end when no run fits.
//!
//! Pinning. A front streaming a tail reads its extent one --io-chunk at a time, long after
//! the lookup that found it and without the shard lock, and only the first chunk holds the
//! header a read is checked against. So while a stream may still read, its extent is
//! pinned ([`Extents::pin`], under the shard lock, while the entry still owns it): freeing a
//! pinned extent (its object deleted, replaced or evicted) only marks it, and the pages
//! return to the free map when the last pin goes ([`Extents::unpin`]). A pinned extent is
//! therefore never allocated to another object while a stream reads it, and the chunks it
//! reads are the object's. Clearing (flush_all) keeps pinned extents allocated the same way.
//! Pins are held per streaming response and released when it is sent or its connection
//! closes, so a client that stops reading holds its extents until it goes.
//!
//! ```text
//! pins (store::pins): first page -> { count, released, pages }
//! free(p) with pins[p]: released = true (the pages stay used)
//! unpin(p): count -= 1; at 0, forget the pin, and free the pages if released
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::store::pins::Pins;

/// Extent allocator of one pool file.
#[derive(Default)]
pub struct Extents {
    by_start: BTreeMap<u32, u32>,
    by_size: BTreeSet<(u32, u32)>,
    end: u32,
    used: u64,
    /// Pinned extents: first page -> length in pages.
    pins: Pins<u32, u32>,
}

impl Extents {
    /// Allocates `pages` contiguous pages and returns the first one.
    pub fn alloc(&mut self, pages: u32) -> Option<u32> {
        self.used += u64::from(pages);
        if let Some(&(size, start)) = self.by_size.range((pages, 0)..).next() {
            self.by_size.remove(&(size, start));
            self.by_start.remove(&start);
            if size > pages {
                self.insert_free(start + pages, size - pages);
            }
            return Some(start);
        }
        let start = self.end;
        match self.end.checked_add(pages) {
            Some(end) => {
                self.end = end;
                Some(start)
            }
            None => {
                self.used -= u64::from(pages);
                None
            }
        }
    }

    /// Pins the allocated extent of `pages` pages at `start` against reuse.
    pub fn pin(&mut self, start: u32, pages: u32) {
        self.pins.pin(start, pages);
    }

    /// Drops one pin of the extent at `start`, freeing it if it was freed while pinned.
    pub fn unpin(&mut self, start: u32) {
        if let Some(pages) = self.pins.unpin(start) {
            self.free(start, pages);
        }
    }

    /// Returns `pages` pages starting at `start`, merging with free neighbours (later, if
    /// the extent is pinned).
    pub fn free(&mut self, mut start: u32, mut pages: u32) {
        if !self.pins.release(start) {
            return;
        }
        self.used -= u64::from(pages);
        if let Some((&s, &n)) = self.by_start.range(..start).next_back() {
            if s + n == start {
                self.remove_free(s, n);
                start = s;
                pages += n;
            }
        }
        if let Some(&n) = self.by_start.get(&(start + pages)) {
            self.remove_free(start + pages, n);
            pages += n;
        }
        if start + pages == self.end {
            self.end = start;
        } else {
            self.insert_free(start, pages);
        }
    }

    fn insert_free(&mut self, start: u32, pages: u32) {
        self.by_start.insert(start, pages);
        self.by_size.insert((pages, start));
    }

    fn remove_free(&mut self, start: u32, pages: u32) {
        self.by_start.remove(&start);
        self.by_size.remove(&(pages, start));
    }

    /// Pages in use.
    pub fn used_pages(&self) -> u64 {
        self.used
    }

    /// Forgets every allocation but the pinned extents, which are freed at their last unpin.
    pub fn clear(&mut self) {
        let mut pins = std::mem::take(&mut self.pins);
        *self = Extents::default();
        let mut pinned: Vec<(u32, u32)> = pins.iter().map(|(s, &pages)| (s, pages)).collect();
        pinned.sort_unstable();
        for (start, pages) in pinned {
            if start > self.end {
                self.insert_free(self.end, start - self.end);
            }
            self.end = start + pages;
            self.used += u64::from(pages);
        }
        pins.release_all();
        self.pins = pins;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_and_coalescing() {
        let mut e = Extents::default();
        let a = e.alloc(4).unwrap();
        let b = e.alloc(2).unwrap();
        let c = e.alloc(8).unwrap();
        let _d = e.alloc(1).unwrap();
        assert_eq!((a, b, c), (0, 4, 6));
        e.free(a, 4);
        e.free(c, 8);
        // Best fit: a 3-page request takes the 4-page hole, not the 8-page one.
        assert_eq!(e.alloc(3), Some(0));
        e.free(0, 3);
        e.free(b, 2);
        // 0..14 is now one run.
        assert_eq!(e.alloc(14), Some(0));
        assert_eq!(e.used_pages(), 15);
        e.clear();
        assert_eq!(e.alloc(1), Some(0));
    }

    #[test]
    fn pinned_extents_are_not_reused_until_unpinned() {
        let mut e = Extents::default();
        let a = e.alloc(4).unwrap();
        let b = e.alloc(4).unwrap();
        e.pin(a, 4);
        e.pin(a, 4);
        e.free(a, 4);
        assert_eq!(e.alloc(4), Some(8));
        assert_eq!(e.used_pages(), 12);
        e.unpin(a);
        assert_eq!(e.used_pages(), 12);
        e.unpin(a);
        assert_eq!(e.used_pages(), 8);
        assert_eq!(e.alloc(4), Some(a));
        // Clearing keeps a pinned extent allocated until its unpin.
        e.pin(b, 4);
        e.clear();
        assert_eq!(e.used_pages(), 4);
        assert_eq!(e.alloc(5), Some(8));
        assert_eq!(e.alloc(4), Some(0));
        e.unpin(b);
        assert_eq!(e.used_pages(), 9);
        assert_eq!(e.alloc(4), Some(4));
    }

    #[test]
    fn freeing_the_last_extent_shrinks_the_end() {
        let mut e = Extents::default();
        let a = e.alloc(3).unwrap();
        let b = e.alloc(3).unwrap();
        e.free(b, 3);
        e.free(a, 3);
        assert_eq!(e.alloc(10), Some(0));
    }
}
