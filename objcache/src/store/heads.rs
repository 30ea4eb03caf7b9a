//! Fixed-size RAM head slots for objects at least --ram-head long: slot `n` lives in block
//! `n / slots_per_block`, blocks are mapped on first use, and freed slots are reused first.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::store::blocks::Block;

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
        }
    }

    /// Takes a free slot, or `None` when all are in use (evict, then retry).
    pub fn alloc(&mut self) -> Option<u32> {
        if let Some(s) = self.free.pop() {
            self.in_use.fetch_add(self.head as u64, Ordering::Relaxed);
            return Some(s);
        }
        if self.next >= self.max_slots {
            return None;
        }
        if self.next / self.per_block >= self.blocks.len() {
            self.blocks.push(Block::map(self.block_size).ok()?);
        }
        self.next += 1;
        self.in_use.fetch_add(self.head as u64, Ordering::Relaxed);
        Some((self.next - 1) as u32)
    }

    /// Returns a slot.
    pub fn free(&mut self, slot: u32) {
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

    /// Bytes of slots in use.
    pub fn used_bytes(&self) -> usize {
        self.used() * self.head
    }

    /// Frees every slot.
    pub fn clear(&mut self) {
        self.in_use
            .fetch_sub(self.used_bytes() as u64, Ordering::Relaxed);
        self.next = 0;
        self.free.clear();
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
    }
}
