//! Record storage: size-class slabs of fixed-size slots, addressed by a 4-byte handle.
//!
//! ```text
//! handle (u32) = slot << 6 | class
//!   class 0..=62  slots of 8 + 4 * class bytes (8, 12, 16, ... 256)
//!   class 63      records over 256 bytes, one exact-size allocation each
//!
//! a class: pages of 1024 slot numbers, each page one Vec<u8> (the last one grows by
//!   doubling up to 1023 slots; untouched capacity costs address space, not RSS)
//!   slot s -> page s >> 10, byte (s & 1023) * size; slot 1023 of a page is never used
//!   free slots: an intrusive stack, the next free slot + 1 in a freed slot's first 4 bytes
//! ```
//!
//! Why 1023: a page of 1024 slots is a whole number of 4 KiB pages (1024 x a multiple of
//! 4), and one over glibc's mmap threshold is mapped with its 16-byte chunk header in
//! front, so its last 16 bytes spilled into one more page, written and resident: 4 KiB
//! a page of records, about 4 bytes a key in every class of records over 64 bytes (100K
//! lists of 10: 19.8 -> 19.4 RSS bytes an element). 1023 slots and the header fit the
//! whole pages exactly.
//!
//! A record takes the smallest class that holds it: at most 3 bytes of padding. 26 bits of
//! slot number give a class 2^26 slots (67M); an allocation in a full class takes the next
//! larger one (records say their own length, so a roomier slot is harmless).

/// Classes of paged slots.
const PAGED: usize = 63;
/// The class of individually allocated records.
const BOXED: u32 = 63;
/// Smallest slot.
const MIN_SLOT: usize = 8;
/// Largest paged slot.
pub(super) const MAX_SLOT: usize = MIN_SLOT + 4 * (PAGED - 1);
/// Slot numbers per page, as a shift.
const PAGE_SHIFT: u32 = 10;
const PAGE_SLOTS: usize = 1 << PAGE_SHIFT;
/// Slots a page holds: the last slot number of each page is skipped (see the module
/// comment).
const PAGE_USED: usize = PAGE_SLOTS - 1;
/// Slots a class may hold (26 bits of handle).
const CLASS_SLOTS: u32 = 1 << 26;

/// The class whose slots fit `len` bytes, or [`BOXED`].
#[inline]
fn class_for(len: usize) -> u32 {
    if len <= MAX_SLOT {
        (len.max(MIN_SLOT) - MIN_SLOT).div_ceil(4) as u32
    } else {
        BOXED
    }
}

#[inline]
fn slot_size(class: u32) -> usize {
    MIN_SLOT + 4 * class as usize
}

/// One size class.
#[derive(Default)]
struct Class {
    pages: Vec<Vec<u8>>,
    /// The next slot number never handed out (slots below it are live, free, or a
    /// page's skipped last one).
    slots: u32,
    /// First free slot + 1, or 0.
    free: u32,
}

/// All the records of a table.
pub(super) struct Store {
    classes: Vec<Class>,
    boxed: Vec<Box<[u8]>>,
    boxed_free: Vec<u32>,
    /// Bytes of the live boxed records (kept as they come and go, so the memory figure
    /// needs no walk over them).
    boxed_bytes: usize,
    /// Bytes of the paged slots on the free stacks: held, and taken again by the next
    /// records of their classes before any page grows.
    free_bytes: usize,
}

impl Default for Store {
    fn default() -> Store {
        Store {
            classes: (0..PAGED).map(|_| Class::default()).collect(),
            boxed: Vec::new(),
            boxed_free: Vec::new(),
            boxed_bytes: 0,
            free_bytes: 0,
        }
    }
}

impl Store {
    /// The bytes of the slot `handle` names (the record, then any padding).
    #[inline]
    pub(super) fn get(&self, handle: u32) -> &[u8] {
        let class = handle & 63;
        let slot = (handle >> 6) as usize;
        if class == BOXED {
            return &self.boxed[slot];
        }
        let size = slot_size(class);
        let page = &self.classes[class as usize].pages[slot >> PAGE_SHIFT];
        let at = (slot & (PAGE_SLOTS - 1)) * size;
        &page[at..at + size]
    }

    /// The bytes of the slot `handle` names, for writing.
    #[inline]
    pub(super) fn get_mut(&mut self, handle: u32) -> &mut [u8] {
        let class = handle & 63;
        let slot = (handle >> 6) as usize;
        if class == BOXED {
            return &mut self.boxed[slot];
        }
        let size = slot_size(class);
        let page = &mut self.classes[class as usize].pages[slot >> PAGE_SHIFT];
        let at = (slot & (PAGE_SLOTS - 1)) * size;
        &mut page[at..at + size]
    }

    /// Whether a record of `len` bytes belongs in the slot of `handle` (its own class; a
    /// record in a roomier class is moved back when it can be).
    #[inline]
    pub(super) fn fits(&self, handle: u32, len: usize) -> bool {
        let class = handle & 63;
        if class == BOXED {
            self.boxed[(handle >> 6) as usize].len() == len
        } else {
            class == class_for(len)
        }
    }

    /// Stores `record` in a new slot and returns its handle.
    pub(super) fn alloc(&mut self, record: &[u8]) -> u32 {
        let mut class = class_for(record.len());
        while class != BOXED {
            if let Some(handle) = self.alloc_in(class) {
                self.get_mut(handle)[..record.len()].copy_from_slice(record);
                return handle;
            }
            class += 1;
        }
        self.boxed_bytes += record.len();
        let slot = match self.boxed_free.pop() {
            Some(slot) => {
                self.boxed[slot as usize] = record.into();
                slot
            }
            None => {
                self.boxed.push(record.into());
                (self.boxed.len() - 1) as u32
            }
        };
        assert!(slot < CLASS_SLOTS, "key table full");
        slot << 6 | BOXED
    }

    /// A free slot of `class`, or None when the class is full.
    fn alloc_in(&mut self, class: u32) -> Option<u32> {
        let size = slot_size(class);
        let c = &mut self.classes[class as usize];
        if c.free != 0 {
            let slot = c.free - 1;
            let page = &c.pages[(slot >> PAGE_SHIFT) as usize];
            let at = (slot as usize & (PAGE_SLOTS - 1)) * size;
            c.free = u32::from_le_bytes(page[at..at + 4].try_into().expect("4 bytes"));
            self.free_bytes -= size;
            return Some(slot << 6 | class);
        }
        let mut slot = c.slots;
        if slot as usize & (PAGE_SLOTS - 1) == PAGE_USED {
            slot += 1;
        }
        if slot >= CLASS_SLOTS {
            return None;
        }
        c.slots = slot + 1;
        if slot as usize & (PAGE_SLOTS - 1) == 0 {
            c.pages.push(Vec::with_capacity(size * 4));
        }
        let page = c.pages.last_mut().expect("a page");
        if page.len() == page.capacity() {
            // Grow the last page by doubling, to exactly one page's bytes at most.
            let want = (page.capacity() * 2).min(size * PAGE_USED);
            page.reserve_exact(want - page.len());
        }
        page.resize(page.len() + size, 0);
        Some(slot << 6 | class)
    }

    /// Frees the slot of `handle` (its record is gone).
    pub(super) fn free(&mut self, handle: u32) {
        let class = handle & 63;
        let slot = handle >> 6;
        if class == BOXED {
            let record = std::mem::take(&mut self.boxed[slot as usize]);
            self.boxed_bytes -= record.len();
            self.boxed_free.push(slot);
            return;
        }
        let next = self.classes[class as usize].free;
        self.get_mut(handle)[..4].copy_from_slice(&next.to_le_bytes());
        self.classes[class as usize].free = slot + 1;
        self.free_bytes += slot_size(class);
    }

    /// Bytes of the freed slots waiting for records (part of [`Store::memory_bytes`]).
    pub(super) fn free_bytes(&self) -> usize {
        self.free_bytes
    }

    /// Bytes of the slot `handle` names.
    pub(super) fn slot_bytes(&self, handle: u32) -> usize {
        self.get(handle).len()
    }

    /// Heap bytes held: pages (their capacity), boxed records and their table. Walks
    /// the pages (1,023 records each), never the records.
    pub(super) fn memory_bytes(&self) -> usize {
        let pages: usize = self
            .classes
            .iter()
            .map(|c| {
                c.pages.capacity() * std::mem::size_of::<Vec<u8>>()
                    + c.pages.iter().map(Vec::capacity).sum::<usize>()
            })
            .sum();
        pages
            + self.boxed_bytes
            + self.boxed.capacity() * std::mem::size_of::<Box<[u8]>>()
            + self.boxed_free.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_cover_every_length_with_at_most_3_bytes_of_padding() {
        for len in 0..=MAX_SLOT {
            let class = class_for(len);
            assert!(class < BOXED);
            let size = slot_size(class);
            assert!(size >= len && size - len.max(MIN_SLOT) <= 3, "len {len}");
        }
        assert_eq!(class_for(MAX_SLOT + 1), BOXED);
    }

    #[test]
    fn a_page_holds_1023_slots_and_its_mapping_ends_on_a_page_boundary() {
        let mut store = Store::default();
        let record = [7u8; 200];
        let handles: Vec<u32> = (0..3000).map(|_| store.alloc(&record)).collect();
        let class = class_for(record.len());
        let size = slot_size(class);
        let pages = &store.classes[class as usize].pages;
        assert_eq!(pages.len(), 3);
        for page in pages {
            assert!(page.capacity() <= PAGE_USED * size);
            // glibc's 16-byte header and the page's bytes fit 4 KiB pages exactly.
            assert!(page.capacity() + 16 <= (PAGE_SLOTS * size).next_multiple_of(4096));
        }
        for h in &handles {
            assert_ne!((h >> 6) as usize & (PAGE_SLOTS - 1), PAGE_USED);
            assert_eq!(&store.get(*h)[..record.len()], &record[..]);
        }
    }

    #[test]
    fn slots_are_reused_and_records_kept() {
        let mut store = Store::default();
        let records: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| vec![i as u8; (i % 300) as usize + 1])
            .collect();
        let mut handles: Vec<u32> = records.iter().map(|r| store.alloc(r)).collect();
        for (h, r) in handles.iter().zip(&records) {
            assert_eq!(&store.get(*h)[..r.len()], &r[..]);
        }
        let before = store.memory_bytes();
        let paged_freed: usize = handles
            .iter()
            .step_by(2)
            .filter(|h| *h & 63 != BOXED)
            .map(|h| store.slot_bytes(*h))
            .sum();
        for h in handles.iter().step_by(2) {
            store.free(*h);
        }
        assert_eq!(
            store.free_bytes(),
            paged_freed,
            "freed paged slots are free bytes"
        );
        for (i, r) in records.iter().enumerate().step_by(2) {
            handles[i] = store.alloc(r);
        }
        assert_eq!(store.free_bytes(), 0, "and taken again");
        assert_eq!(
            store.memory_bytes(),
            before + store.boxed_free.capacity() * 4,
            "freed slots were reused"
        );
        for (h, r) in handles.iter().zip(&records) {
            assert_eq!(&store.get(*h)[..r.len()], &r[..]);
        }
    }
}
