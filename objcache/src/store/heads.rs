//! Fixed-size RAM head slots for objects at least --ram-head long: slot `n` lives in block
//! `n / slots_per_block`, blocks are mapped on first use, and freed slots are reused first.
//!
//! Lending: a front may hand a slot's bytes to a socket by reference (`vmsplice`), so the
//! kernel holds its pages for as long as the bytes sit in a pipe or socket queue, which may
//! be after the object is gone. Such a slot is lent ([`Heads::lend`], under the shard lock,
//! while its entry owns it) and stays pinned until given back ([`Heads::give_back`]), so
//! it cannot be reused in between; freeing a pinned slot only marks it. And a slot once lent
//! is never written in place again: before it is reused its pages are dropped
//! ([`Block::drop_pages`]), so the kernel's references keep the old bytes and the new head
//! lands on fresh pages. Only page-aligned slots in blocks of normal pages can be lent
//! (`Store::lends`).
//!
//! ```text
//! pins (store::pins): slot -> { count, released }
//! free(s) with pins[s]: released = true (the slot stays in use)
//! give_back(s): count -= 1; at 0, forget the pin, and free the slot if released
//! alloc() of a slot marked lent: drop its pages first
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::store::blocks::Block;
use crate::store::pins::Pins;

/// The head slots of one shard.
pub struct Heads {
    head: usize,
    per_block: usize,
    max_slots: usize,
    block_size: usize,
    blocks: Vec<Block>,
    next: usize,
    free: Vec<u32>,
    in_use: Arc<AtomicU64>,
    /// Slots whose pages were lent since they were last written (one bit each).
    lent: Vec<u64>,
    pins: Pins<u32>,
}

impl Heads {
    /// At most `max_slots` slots of `head` bytes carved from `block_size` blocks; `in_use`
    /// counts the bytes of slots in use (shared by the shards, read by the hot-tail cache).
    pub fn new(head: usize, block_size: usize, max_slots: usize, in_use: Arc<AtomicU64>) -> Heads {
        Heads {
            head,
            per_block: block_size / head,
            max_slots,
            block_size,
            blocks: Vec::new(),
            next: 0,
            free: Vec::new(),
            in_use,
            lent: Vec::new(),
            pins: Pins::default(),
        }
    }

    /// Lends `slot` (in use by a live entry): pins it until [`Heads::give_back`], and marks
    /// its pages as referenced from outside. Returns the slot's bytes' address; they stay
    /// mapped and unchanged while pinned.
    pub fn lend(&mut self, slot: u32) -> *const u8 {
        let word = slot as usize / 64;
        if self.lent.len() <= word {
            self.lent.resize(word + 1, 0);
        }
        self.lent[word] |= 1 << (slot % 64);
        self.pins.pin(slot, ());
        self.slot(slot).as_ptr()
    }

    /// Drops one pin of a lent slot, freeing it if it was freed while pinned.
    pub fn give_back(&mut self, slot: u32) {
        if self.pins.unpin(slot).is_some() {
            self.release(slot);
            if slot as usize >= self.max_slots {
                self.release_excess();
            }
        }
    }

    /// Sets the number of slots (memcached's `cache_memlimit`). Slots past a lowered cap
    /// take no new heads; the caller moves or evicts the heads there, then
    /// [`Heads::release_excess`] unmaps their blocks.
    pub fn set_max_slots(&mut self, max_slots: usize) {
        self.max_slots = max_slots;
    }

    /// Slots past the cap, up to the highest ever used.
    pub fn excess(&self) -> std::ops::Range<usize> {
        self.max_slots..self.next.max(self.max_slots)
    }

    /// Forgets the free slots past the cap above the highest one still in use (lent, or
    /// reserved for an object being written) and unmaps the blocks only they occupied.
    pub fn release_excess(&mut self) {
        if self.next <= self.max_slots {
            return;
        }
        let mut free_past = vec![false; self.next - self.max_slots];
        for &s in &self.free {
            if let Some(f) = (s as usize).checked_sub(self.max_slots) {
                free_past[f] = true;
            }
        }
        let keep = self.max_slots + free_past.iter().rposition(|f| !f).map_or(0, |i| i + 1);
        self.next = keep;
        self.free.retain(|&s| (s as usize) < keep);
        self.blocks.truncate(keep.div_ceil(self.per_block));
    }

    /// Makes `slot` safe to write: if it was lent, its pages are replaced by fresh ones.
    fn reclaim(&mut self, slot: u32) -> u32 {
        let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        if self.lent.get(word).is_some_and(|w| w & bit != 0) {
            self.lent[word] &= !bit;
            let s = slot as usize;
            let off = (s % self.per_block) * self.head;
            self.blocks[s / self.per_block].drop_pages(off..off + self.head);
        }
        slot
    }

    /// Takes a free slot, or `None` when all are in use (evict, then retry).
    pub fn alloc(&mut self) -> Option<u32> {
        // Free slots past a lowered cap stay listed (they count as not in use) until
        // `release_excess` drops them; the last free slot is under the cap but then.
        let max = self.max_slots;
        if let Some(i) = self.free.iter().rposition(|&s| (s as usize) < max) {
            let s = self.free.swap_remove(i);
            self.in_use.fetch_add(self.head as u64, Ordering::Relaxed);
            return Some(self.reclaim(s));
        }
        if self.next >= self.max_slots {
            return None;
        }
        if self.next / self.per_block >= self.blocks.len() {
            self.blocks.push(Block::map(self.block_size).ok()?);
        }
        self.next += 1;
        self.in_use.fetch_add(self.head as u64, Ordering::Relaxed);
        Some(self.reclaim((self.next - 1) as u32))
    }

    /// Returns a slot (at its last give-back if it is lent).
    pub fn free(&mut self, slot: u32) {
        if self.pins.release(slot) {
            self.release(slot);
        }
    }

    fn release(&mut self, slot: u32) {
        self.in_use.fetch_sub(self.head as u64, Ordering::Relaxed);
        self.free.push(slot);
    }

    /// The bytes of a slot.
    pub fn slot(&self, slot: u32) -> &[u8] {
        let s = slot as usize;
        let off = (s % self.per_block) * self.head;
        &self.blocks[s / self.per_block].bytes()[off..off + self.head]
    }

    /// The bytes of a slot, mutably.
    pub fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let s = slot as usize;
        let off = (s % self.per_block) * self.head;
        &mut self.blocks[s / self.per_block].bytes_mut()[off..off + self.head]
    }

    /// Slots in use.
    pub fn used(&self) -> usize {
        self.next - self.free.len()
    }

    /// Bytes of mapped blocks.
    #[cfg(test)]
    pub fn mapped_bytes(&self) -> usize {
        self.blocks.len() * self.block_size
    }

    /// Bytes of slots in use.
    pub fn used_bytes(&self) -> usize {
        self.used() * self.head
    }

    /// Frees every slot; lent ones return at their last give-back.
    pub fn clear(&mut self) {
        let pinned = self.pins.len();
        self.in_use.fetch_sub(
            (self.used() - pinned) as u64 * self.head as u64,
            Ordering::Relaxed,
        );
        self.pins.release_all();
        let pins = &self.pins;
        self.free = (0..self.next as u32)
            .rev()
            .filter(|&s| !pins.is_pinned(s))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_distinct_and_recycled() {
        let in_use = Arc::new(AtomicU64::new(0));
        let mut h = Heads::new(16 << 10, 64 << 10, 6, Arc::clone(&in_use));
        let slots: Vec<u32> = (0..6).map(|_| h.alloc().unwrap()).collect();
        assert!(h.alloc().is_none());
        for &s in &slots {
            h.slot_mut(s).fill(s as u8);
        }
        for &s in &slots {
            assert!(h.slot(s).iter().all(|&b| b == s as u8));
        }
        h.free(slots[3]);
        assert_eq!(h.used(), 5);
        assert_eq!(h.alloc(), Some(slots[3]));
        assert_eq!(h.used_bytes(), 6 * (16 << 10));
        assert_eq!(in_use.load(Ordering::Relaxed), 6 * (16 << 10));
        h.clear();
        assert_eq!(h.used(), 0);
        assert_eq!(in_use.load(Ordering::Relaxed), 0);
        assert_eq!(h.alloc(), Some(0), "lowest slots first after a clear");
    }

    #[test]
    fn lent_slots_are_not_reused_until_given_back_and_then_get_fresh_pages() {
        let in_use = Arc::new(AtomicU64::new(0));
        let mut h = Heads::new(16 << 10, 64 << 10, 4, Arc::clone(&in_use));
        let a = h.alloc().unwrap();
        h.slot_mut(a).fill(7);
        let p = h.lend(a);
        h.lend(a);
        h.free(a);
        assert_eq!(h.used(), 1, "a freed lent slot stays in use");
        let others: Vec<u32> = (0..3).map(|_| h.alloc().unwrap()).collect();
        assert!(!others.contains(&a));
        assert!(h.alloc().is_none());
        // SAFETY: the slot is pinned, so its bytes are mapped and unchanged.
        assert_eq!(unsafe { *p.add(100) }, 7);
        h.give_back(a);
        assert!(h.alloc().is_none(), "one pin left");
        h.give_back(a);
        assert_eq!(h.alloc(), Some(a));
        assert!(h.slot(a).iter().all(|&b| b == 0), "reused on fresh pages");
        assert_eq!(in_use.load(Ordering::Relaxed), 4 * (16 << 10));
    }

    #[test]
    fn clear_keeps_lent_slots_until_given_back() {
        let in_use = Arc::new(AtomicU64::new(0));
        let mut h = Heads::new(16 << 10, 64 << 10, 2, Arc::clone(&in_use));
        let a = h.alloc().unwrap();
        let b = h.alloc().unwrap();
        h.lend(b);
        h.clear();
        assert_eq!(h.used(), 1);
        assert_eq!(in_use.load(Ordering::Relaxed), 16 << 10);
        assert_eq!(h.alloc(), Some(a));
        assert!(h.alloc().is_none());
        h.give_back(b);
        assert_eq!(h.alloc(), Some(b));
        assert_eq!(in_use.load(Ordering::Relaxed), 2 * (16 << 10));
    }
}
