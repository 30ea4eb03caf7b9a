//! Free-space map of a pool file in 4 KiB pages: best-fit allocation from coalesced free
//! runs, growing the file at its end when no run fits.

use std::collections::{BTreeMap, BTreeSet};

/// Extent allocator of one pool file.
#[derive(Default)]
pub struct Extents {
    by_start: BTreeMap<u32, u32>,
    by_size: BTreeSet<(u32, u32)>,
    end: u32,
    used: u64,
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

    /// Returns `pages` pages starting at `start`, merging with free neighbours.
    pub fn free(&mut self, mut start: u32, mut pages: u32) {
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

    /// Forgets every allocation.
    pub fn clear(&mut self) {
        *self = Extents::default();
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
    fn freeing_the_last_extent_shrinks_the_end() {
        let mut e = Extents::default();
        let a = e.alloc(3).unwrap();
        let b = e.alloc(3).unwrap();
        e.free(b, 3);
        e.free(a, 3);
        assert_eq!(e.alloc(10), Some(0));
    }
}
