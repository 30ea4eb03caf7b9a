//! The packed arena: whole objects shorter than --ram-head, bump-allocated at 16-byte
//! alignment inside --block sized blocks, so a 1 KiB object costs 1 KiB plus a 16-byte header.
//!
//! Every object is preceded by a header: the owning entry id, the value length and the key's
//! check word (a word of its digest, compared on every read). Freeing marks the header dead
//! and lowers the block's live count.
//!
//! ```text
//! one object at a 16-byte aligned offset of a block, integers little-endian
//! offset  bytes  field
//!      0      4  owning entry id in the shard's index; u32::MAX once freed (dead),
//!                u32::MAX - 1 while placed and not yet linked
//!      4      4  value length in bytes (u32)
//!      8      8  check word: Digest::check() of the key
//!     16    len  the value
//! 16+len    pad  up to the next multiple of 16 (footprint(len) bytes in all)
//! ``` When no block
//! has room, [`Arena::compact`] picks the block with the most reclaimable space and slides its
//! live objects down to the start, in place, telling the caller each object's new location;
//! the freed end of that block becomes the new bump region. Locations are 32-bit counts of
//! 16-byte units from the start of the shard's arena.
//!
//! Lending, as for head slots (see `heads`): a front may splice an object's bytes, so the
//! kernel may hold its pages after the object is freed. An object is lent under the shard
//! lock ([`Arena::lend`]) and its block stays pinned until given back: a pinned block is
//! never compacted, and one cleared while pinned is frozen (nothing is placed in it) until
//! its last give-back. A block once lent is never rewritten in place: compacting it copies
//! its live objects out, drops its pages and writes them back on fresh ones, and clearing it
//! drops its pages. (Its pins are a count in each block's slot, not a `pins` table: a block
//! is pinned per lent object, never released one object at a time, and frozen means more
//! than released: its bump offset is full until the last give-back resets it.)
//!
//! ```text
//! per block: pins (count), lent (since its pages were last dropped), frozen
//! compact(b): skips pinned and frozen blocks; lent b: copy out, drop pages, write back
//! clear():    pinned blocks frozen (used = full, so nothing is placed); lent ones dropped
//! give_back:  pins -= 1; at 0 a frozen block's pages are dropped and it is empty again
//! ```

use crate::store::blocks::Block;

/// Bytes of the per-object header.
pub const HEADER: usize = 16;
const DEAD: u32 = u32::MAX;
/// Owner id of an object placed and not yet linked.
pub const UNOWNED: u32 = u32::MAX - 1;

/// The bytes an object of `len` bytes occupies, header included.
pub fn footprint(len: usize) -> usize {
    HEADER + len.div_ceil(16) * 16
}

struct Slot {
    block: Block,
    /// Bump offset: bytes in use from the start.
    used: usize,
    /// Bytes of live objects (headers included).
    live: usize,
    /// Lent objects not given back yet.
    pins: u32,
    /// Some object's bytes were lent since the block's pages were last dropped.
    lent: bool,
    /// Cleared while pinned: empty, but nothing is placed until the last give-back.
    frozen: bool,
}

impl Slot {
    fn new(block: Block) -> Slot {
        Slot {
            block,
            used: 0,
            live: 0,
            pins: 0,
            lent: false,
            frozen: false,
        }
    }

    /// Empties the block; pages that were lent are dropped first.
    fn reset(&mut self) {
        if self.lent {
            let len = self.block.bytes().len();
            self.block.drop_pages(0..len);
            self.lent = false;
        }
        self.used = 0;
        self.live = 0;
    }
}

/// The packed arena of one shard.
pub struct Arena {
    block_size: usize,
    max_blocks: usize,
    blocks: Vec<Slot>,
    current: usize,
    live: usize,
}

impl Arena {
    /// An arena of at most `max_blocks` blocks of `block_size` bytes, none mapped yet.
    pub fn new(block_size: usize, max_blocks: usize) -> Arena {
        Arena {
            block_size,
            max_blocks,
            blocks: Vec::new(),
            current: 0,
            live: 0,
        }
    }

    /// Capacity in bytes.
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.block_size * self.max_blocks
    }

    /// Bytes of live objects, headers included.
    pub fn live_bytes(&self) -> usize {
        self.live
    }

    /// Bytes of mapped blocks.
    pub fn mapped_bytes(&self) -> usize {
        self.blocks.len() * self.block_size
    }

    /// True when a value of `len` bytes fits in one block at all.
    pub fn fits(&self, len: usize) -> bool {
        footprint(len) <= self.block_size
    }

    /// Stores `data` for entry `id` and returns its location, or `None` when no block has
    /// room (compact or evict, then retry).
    pub fn alloc(&mut self, id: u32, check: u64, data: &[u8]) -> Option<u32> {
        let need = footprint(data.len());
        if !self.fits(data.len()) {
            return None;
        }
        let fits = |s: &Slot| s.used + need <= self.block_size;
        let current_ok = self.current < self.max_blocks;
        if !current_ok || self.blocks.get(self.current).is_none_or(|s| !fits(s)) {
            if self.blocks.len() >= self.max_blocks {
                return None;
            }
            self.blocks
                .push(Slot::new(Block::map(self.block_size).ok()?));
            self.current = self.blocks.len() - 1;
        }
        let slot = &mut self.blocks[self.current];
        let off = slot.used;
        let bytes = slot.block.bytes_mut();
        bytes[off..off + 4].copy_from_slice(&id.to_le_bytes());
        bytes[off + 4..off + 8].copy_from_slice(&(data.len() as u32).to_le_bytes());
        bytes[off + 8..off + 16].copy_from_slice(&check.to_le_bytes());
        bytes[off + HEADER..off + HEADER + data.len()].copy_from_slice(data);
        slot.used += need;
        slot.live += need;
        self.live += need;
        Some(((self.current * self.block_size + off) / 16) as u32)
    }

    fn split(&self, loc: u32) -> (usize, usize) {
        let at = loc as usize * 16;
        (at / self.block_size, at % self.block_size)
    }

    /// Records `id` as the owner of the object at `loc` (objects are placed before their
    /// entry exists, since placing may evict).
    pub fn set_owner(&mut self, loc: u32, id: u32) {
        let (b, off) = self.split(loc);
        self.blocks[b].block.bytes_mut()[off..off + 4].copy_from_slice(&id.to_le_bytes());
    }

    /// The value stored at `loc`, if its header still carries `check` and `len`.
    pub fn get(&self, loc: u32, len: usize, check: u64) -> Option<&[u8]> {
        let (b, off) = self.split(loc);
        let bytes = self.blocks.get(b)?.block.bytes();
        let h = &bytes[off..off + HEADER];
        let ok = u32::from_le_bytes(h[4..8].try_into().ok()?) as usize == len
            && u64::from_le_bytes(h[8..16].try_into().ok()?) == check;
        ok.then(|| &bytes[off + HEADER..off + HEADER + len])
    }

    /// The value stored at `loc`, mutably (same length; used by in-place incr/decr).
    pub fn get_mut(&mut self, loc: u32, len: usize) -> &mut [u8] {
        let (b, off) = self.split(loc);
        &mut self.blocks[b].block.bytes_mut()[off + HEADER..off + HEADER + len]
    }

    /// Lends the value at `loc` (see the module comment): pins its block until
    /// [`Arena::give_back`] and returns the address of its first byte.
    pub fn lend(&mut self, loc: u32) -> *const u8 {
        let (b, off) = self.split(loc);
        let slot = &mut self.blocks[b];
        slot.pins += 1;
        slot.lent = true;
        slot.block.bytes()[off + HEADER..].as_ptr()
    }

    /// Drops the pin of a value lent at `loc`.
    pub fn give_back(&mut self, loc: u32) {
        let (b, _) = self.split(loc);
        let slot = &mut self.blocks[b];
        slot.pins -= 1;
        if slot.pins == 0 && slot.frozen {
            slot.frozen = false;
            slot.reset();
        }
        if slot.pins == 0 && b >= self.max_blocks {
            self.release_excess();
        }
    }

    /// Releases the object at `loc`.
    pub fn free(&mut self, loc: u32) {
        let (b, off) = self.split(loc);
        let slot = &mut self.blocks[b];
        let bytes = slot.block.bytes_mut();
        let len = u32::from_le_bytes(bytes[off + 4..off + 8].try_into().expect("4 bytes"));
        bytes[off..off + 4].copy_from_slice(&DEAD.to_le_bytes());
        let size = footprint(len as usize);
        slot.live -= size;
        self.live -= size;
    }

    /// Compacts the block with the most reclaimable space if that frees at least `need`
    /// bytes (and at least `min_gain`), calling `moved(id, new_loc)` for every object that
    /// moves. Returns false when no block qualifies: evict first.
    pub fn compact(
        &mut self,
        need: usize,
        min_gain: usize,
        mut moved: impl FnMut(u32, u32),
    ) -> bool {
        let need = footprint(need);
        let cur_free = self
            .blocks
            .get(self.current)
            .filter(|_| self.current < self.max_blocks)
            .map_or(0, |s| self.block_size - s.used);
        let best = (0..self.blocks.len().min(self.max_blocks))
            .filter(|&i| self.blocks[i].pins == 0 && !self.blocks[i].frozen)
            .map(|i| (self.block_size - self.blocks[i].live, i))
            .filter(|&(gain, _)| gain >= need.max(min_gain) && gain > cur_free)
            .max();
        let Some((_, b)) = best else { return false };
        let block_size = self.block_size;
        let slot = &mut self.blocks[b];
        // A lent block's old pages may still be referenced: write on fresh ones.
        let old = slot.lent.then(|| slot.block.bytes()[..slot.used].to_vec());
        if old.is_some() {
            slot.block.drop_pages(0..block_size);
            slot.lent = false;
        }
        let bytes = slot.block.bytes_mut();
        let (mut read, mut write) = (0usize, 0usize);
        while read < slot.used {
            let (id, size) = {
                let src: &[u8] = old.as_deref().unwrap_or(bytes);
                let id = u32::from_le_bytes(src[read..read + 4].try_into().expect("4 bytes"));
                let len = u32::from_le_bytes(src[read + 4..read + 8].try_into().expect("4 bytes"));
                (id, footprint(len as usize))
            };
            if id != DEAD {
                match &old {
                    Some(old) => {
                        bytes[write..write + size].copy_from_slice(&old[read..read + size])
                    }
                    None if write != read => bytes.copy_within(read..read + size, write),
                    None => {}
                }
                if write != read {
                    moved(id, ((b * block_size + write) / 16) as u32);
                }
                write += size;
            }
            read += size;
        }
        debug_assert_eq!(write, slot.live);
        slot.used = write;
        self.current = b;
        true
    }

    /// Sets the number of blocks the arena may hold (memcached's `cache_memlimit`). Blocks
    /// past a lowered cap take no new objects; [`Arena::evacuate`] and
    /// [`Arena::release_excess`] empty and unmap them.
    pub fn set_max_blocks(&mut self, max_blocks: usize) {
        self.max_blocks = max_blocks;
    }

    /// True while the live objects would not fit in the capped blocks with an eighth of
    /// them to spare for packing: evict before evacuating.
    pub fn over_limit(&self) -> bool {
        let capacity = self.max_blocks * self.block_size;
        self.blocks.len() > self.max_blocks && self.live + capacity / 8 > capacity
    }

    /// Moves the linked objects of the blocks past the cap into the blocks below it
    /// (compacting those as needed), calling `moved(id, new_loc)` for each. Returns the
    /// owners of the objects that found no room: the caller evicts them. Objects placed
    /// and not yet linked stay where they are.
    pub fn evacuate(&mut self, mut moved: impl FnMut(u32, u32)) -> Vec<u32> {
        let mut stuck = Vec::new();
        for b in self.max_blocks..self.blocks.len() {
            let mut off = 0;
            while off < self.blocks[b].used {
                let bytes = self.blocks[b].block.bytes();
                let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
                let (id, len) = (word(off), word(off + 4) as usize);
                let check = u64::from_le_bytes(bytes[off + 8..off + 16].try_into().expect("8"));
                let loc = ((b * self.block_size + off) / 16) as u32;
                off += footprint(len);
                if id == DEAD || id == UNOWNED {
                    continue;
                }
                let data = bytes[off - footprint(len) + HEADER..][..len].to_vec();
                let placed = loop {
                    if let Some(new) = self.alloc(id, check, &data) {
                        break Some(new);
                    }
                    if !self.compact(len, 1, &mut moved) {
                        break None;
                    }
                };
                match placed {
                    Some(new) => {
                        self.free(loc);
                        moved(id, new);
                    }
                    None => stuck.push(id),
                }
            }
        }
        stuck
    }

    /// Unmaps the blocks past the cap from the last one down, while they hold nothing and
    /// are not pinned (a pinned one is retried at its last give-back).
    pub fn release_excess(&mut self) {
        while self.blocks.len() > self.max_blocks
            && self
                .blocks
                .last()
                .is_some_and(|s| s.pins == 0 && s.live == 0)
        {
            self.blocks.pop();
        }
        if self.current >= self.blocks.len() {
            self.current = 0;
        }
    }

    /// Forgets every object; blocks stay mapped for reuse (a pinned one once given back).
    pub fn clear(&mut self) {
        let block_size = self.block_size;
        for s in &mut self.blocks {
            if s.pins > 0 {
                s.frozen = true;
                s.used = block_size;
                s.live = 0;
            } else {
                s.reset();
            }
        }
        self.current = 0;
        self.live = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const BLOCK: usize = 64 << 10;

    #[test]
    fn footprint_is_16_aligned_plus_header() {
        assert_eq!(footprint(0), 16);
        assert_eq!(footprint(1), 32);
        assert_eq!(footprint(1024), 1040);
    }

    #[test]
    fn alloc_get_and_check() {
        let mut a = Arena::new(BLOCK, 2);
        let loc = a.alloc(1, 99, b"hello").unwrap();
        assert_eq!(a.get(loc, 5, 99), Some(&b"hello"[..]));
        assert_eq!(a.get(loc, 5, 98), None);
        assert_eq!(a.get(loc, 4, 99), None);
        a.get_mut(loc, 5)[0] = b'j';
        assert_eq!(a.get(loc, 5, 99), Some(&b"jello"[..]));
        a.free(loc);
        assert_eq!(a.live_bytes(), 0);
    }

    #[test]
    fn full_arena_refuses_then_compaction_reclaims() {
        let mut a = Arena::new(BLOCK, 2);
        let mut locs = HashMap::new();
        let data = vec![7u8; 1000];
        let mut id = 0u32;
        while let Some(loc) = a.alloc(id, u64::from(id), &data) {
            locs.insert(id, loc);
            id += 1;
        }
        assert_eq!(id as usize, 2 * (BLOCK / footprint(1000)));
        assert!(!a.compact(1000, 0, |_, _| {}));
        // Free every other object, then compaction must make room and move survivors.
        for i in (0..id).step_by(2) {
            a.free(locs.remove(&i).unwrap());
        }
        let mut moves = 0;
        assert!(a.compact(1000, 4096, |i, new| {
            locs.insert(i, new);
            moves += 1;
        }));
        assert!(moves > 0);
        for (&i, &loc) in &locs {
            assert_eq!(a.get(loc, 1000, u64::from(i)), Some(&data[..]));
        }
        let extra = a.alloc(10_000, 5, &data).unwrap();
        assert_eq!(a.get(extra, 1000, 5), Some(&data[..]));
        a.clear();
        assert_eq!(a.live_bytes(), 0);
        assert!(a.alloc(1, 1, &data).is_some());
    }

    /// Spliced into a pipe by reference, as the HTTP front sends lent bytes; read back later.
    fn splice_to_pipe(ptr: *const u8, len: usize) -> std::fs::File {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into fds; vmsplice reads len bytes at ptr.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let iov = libc::iovec {
                iov_base: ptr as *mut libc::c_void,
                iov_len: len,
            };
            assert_eq!(libc::vmsplice(fds[1], &iov, 1, 0), len as isize);
            libc::close(fds[1]);
            std::fs::File::from_raw_fd(fds[0])
        }
    }

    fn drain(mut pipe: std::fs::File) -> Vec<u8> {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut pipe, &mut out).unwrap();
        out
    }

    #[test]
    fn lent_bytes_survive_compaction_and_the_block_is_not_compacted_while_pinned() {
        let mut a = Arena::new(BLOCK, 1);
        let first = vec![1u8; 20_000];
        let l1 = a.alloc(1, 1, &first).unwrap();
        a.alloc(2, 2, &vec![2u8; 20_000]).unwrap();
        let ptr = a.lend(l1);
        let pipe = splice_to_pipe(ptr, first.len());
        a.free(l1);
        assert!(
            !a.compact(20_000, 0, |_, _| {}),
            "a pinned block is not compacted"
        );
        a.give_back(l1);
        let mut moved = HashMap::new();
        assert!(a.compact(20_000, 0, |id, new| {
            moved.insert(id, new);
        }));
        let l2 = moved[&2];
        assert_eq!(a.get(l2, 20_000, 2), Some(&vec![2u8; 20_000][..]));
        // The survivor now sits where the lent bytes were; the pipe still has those.
        let l3 = a.alloc(3, 3, &vec![3u8; 20_000]).unwrap();
        assert_eq!(a.get(l3, 20_000, 3), Some(&vec![3u8; 20_000][..]));
        assert_eq!(drain(pipe), first);
    }

    #[test]
    fn a_block_cleared_while_pinned_stays_frozen_until_given_back() {
        let mut a = Arena::new(BLOCK, 1);
        let data = vec![5u8; 30_000];
        let l = a.alloc(1, 1, &data).unwrap();
        let ptr = a.lend(l);
        let pipe = splice_to_pipe(ptr, data.len());
        a.clear();
        assert!(
            a.alloc(2, 2, &data).is_none(),
            "nothing is placed in a frozen block"
        );
        assert!(!a.compact(30_000, 0, |_, _| {}));
        // SAFETY: the block is pinned: the lent bytes are mapped and unchanged.
        assert_eq!(unsafe { *ptr.add(100) }, 5);
        a.give_back(l);
        let l2 = a.alloc(2, 2, &vec![6u8; 30_000]).unwrap();
        assert_eq!(a.get(l2, 30_000, 2), Some(&vec![6u8; 30_000][..]));
        assert_eq!(drain(pipe), data);
    }
}
