//! One shard of the store: its digest index, packed arena, head slots, tail extents and the
//! two SIEVE queues (whole objects, split objects). Everything here runs under the shard's
//! mutex; the store layer above decides what to do, this layer keeps the pieces consistent:
//! an entry is linked into exactly one queue and owns exactly its arena bytes, or its head
//! slot and tail extent, until [`Shard::unlink`] returns them.

use std::sync::Arc;

use crate::config::StoreConfig;
use crate::store::arena::{Arena, UNOWNED};
use crate::store::classes;
use crate::store::clock;
use crate::store::digest::Digest;
use crate::store::eviction::Sieve;
use crate::store::heads::Heads;
use crate::store::index::{Entry, Index, BIT_FETCHED};
use crate::store::stats::{self, Stats};
use crate::store::tags::TagIndex;
use crate::store::tail::extents::Extents;
use crate::store::tail::{extent_pages, PoolFile};

/// A reserved head slot and tail extent for a split object that is being written.
#[derive(Clone, Copy, Debug)]
pub struct Reservation {
    /// Head slot.
    pub slot: u32,
    /// First page of the tail extent.
    pub page: u32,
    /// Pages of the tail extent.
    pub pages: u32,
}

/// Where lent bytes live: a head slot, or an arena location.
#[derive(Clone, Copy, Debug)]
pub enum Lent {
    /// Head slot.
    Head(u32),
    /// Arena location.
    Arena(u32),
}

/// State of one shard.
pub struct Shard {
    index: Index,
    arena: Arena,
    small: Sieve,
    heads: Option<Heads>,
    big: Sieve,
    extents: Extents,
    /// The tags of the shard's entries, forgotten as entries are unlinked.
    pub tags: TagIndex,
    /// The shard's pool file, when objects may be split.
    pub pool: Option<Arc<PoolFile>>,
    ram_head: usize,
    min_gain: usize,
}

impl Shard {
    /// An empty shard with its share of the configured memory; `heads_in_use` counts the
    /// head bytes in use across shards.
    pub fn new(
        cfg: &StoreConfig,
        pool: Option<Arc<PoolFile>>,
        heads_in_use: &Arc<std::sync::atomic::AtomicU64>,
    ) -> Shard {
        let (blocks, slots) = share(cfg, cfg.small_memory, cfg.memory);
        let heads = pool.as_ref().map(|_| {
            Heads::new(
                cfg.ram_head as usize,
                cfg.block as usize,
                slots,
                Arc::clone(heads_in_use),
            )
        });
        Shard {
            index: Index::default(),
            arena: Arena::new(cfg.block as usize, blocks),
            small: Sieve::default(),
            heads,
            big: Sieve::default(),
            extents: Extents::default(),
            tags: TagIndex::default(),
            pool,
            ram_head: cfg.ram_head as usize,
            min_gain: (cfg.block as usize / 32).max(4096),
        }
    }

    /// Sets the shard's share of the store's memory limit: `blocks` arena blocks and
    /// `slots` head slots (from [`share`]). Growing raises the caps. Shrinking evicts in
    /// SIEVE order until the objects fit, moves those past the caps below them (evicting
    /// what finds no room) and unmaps the blocks emptied.
    pub fn set_limits(&mut self, blocks: usize, slots: usize, now: u32, stats: &Stats) {
        self.arena.set_max_blocks(blocks);
        while self.arena.over_limit() && self.evict_one(false, now, stats) {}
        let index = &mut self.index;
        for id in self.arena.evacuate(|id, loc| index.get_mut(id).loc = loc) {
            self.evict(id, now, stats);
        }
        self.arena.release_excess();
        let Some(heads) = self.heads.as_mut() else {
            return;
        };
        heads.set_max_slots(slots);
        while self.heads.as_ref().is_some_and(|h| h.used() > slots)
            && self.evict_one(true, now, stats)
        {}
        let ram_head = self.ram_head;
        let past = self.heads.as_ref().map(Heads::excess).unwrap_or_default();
        let movers: Vec<u32> = self
            .index
            .ids()
            .filter(|&id| {
                let e = self.index.get(id);
                e.size as usize >= ram_head && past.contains(&(e.loc as usize))
            })
            .collect();
        for id in movers {
            let heads = self.heads.as_mut().expect("checked above");
            let old = self.index.get(id).loc;
            match heads.alloc() {
                Some(new) => {
                    let bytes = heads.slot(old).to_vec();
                    heads.slot_mut(new).copy_from_slice(&bytes);
                    heads.free(old);
                    self.index.get_mut(id).loc = new;
                }
                None => self.evict(id, now, stats),
            }
        }
        if let Some(h) = self.heads.as_mut() {
            h.release_excess();
        }
    }

    /// True when a value of `size` bytes is kept as head plus tail.
    pub fn is_split(&self, size: usize) -> bool {
        self.heads.is_some() && size >= self.ram_head
    }

    /// Head length kept in RAM for split objects.
    pub fn ram_head(&self) -> usize {
        self.ram_head
    }

    /// Id of the live entry for `digest`. Expired entries are removed on the way.
    pub fn find_live(&mut self, digest: &Digest, now: u32, stats: &Stats) -> Option<u32> {
        let id = self.index.find(digest)?;
        self.still_live(id, now, stats).then_some(id)
    }

    /// [`Shard::find_live`] for a read: an expired entry found is also counted as
    /// memcached's `get_expired`.
    pub fn find_live_read(&mut self, digest: &Digest, now: u32, stats: &Stats) -> Option<u32> {
        let id = self.index.find(digest)?;
        let live = self.still_live(id, now, stats);
        if !live {
            stats::incr(&stats.get_expired);
        }
        live.then_some(id)
    }

    /// False (and the entry removed, counted as reclaimed) when entry `id` has expired.
    fn still_live(&mut self, id: u32, now: u32, stats: &Stats) -> bool {
        let e = self.index.get(id);
        if !clock::is_expired(e.exptime, now) {
            return true;
        }
        count_reclaimed(e, stats);
        self.unlink(id);
        false
    }

    /// The entry `id`.
    pub fn entry(&self, id: u32) -> &Entry {
        self.index.get(id)
    }

    /// The entry `id`, mutably (callers change only expiry, flags bits, CAS and atime).
    pub fn entry_mut(&mut self, id: u32) -> &mut Entry {
        self.index.get_mut(id)
    }

    /// Records a hit for the eviction policy.
    pub fn touch(&mut self, id: u32) {
        if self.is_split(self.index.get(id).size as usize) {
            self.big.touch(id);
        } else {
            self.small.touch(id);
        }
    }

    /// Bytes of a whole object, checked against its header.
    pub fn whole(&self, e: &Entry) -> Option<&[u8]> {
        self.arena.get(e.loc, e.size as usize, e.digest.check())
    }

    /// Bytes of a whole object, mutably (for in-place incr and decr).
    pub fn whole_mut(&mut self, e: &Entry) -> &mut [u8] {
        self.arena.get_mut(e.loc, e.size as usize)
    }

    /// RAM head of a split object.
    pub fn head(&self, e: &Entry) -> &[u8] {
        let heads = self
            .heads
            .as_ref()
            .expect("split objects exist only with heads");
        &heads.slot(e.loc)[..self.ram_head]
    }

    /// Pins the tail extent at `page` of the live split object `digest` with CAS value
    /// `cas` (see `tail::extents`); false when that version no longer owns it.
    pub fn pin_tail(&mut self, digest: &Digest, cas: u64, page: u32) -> bool {
        let Some(id) = self.index.find(digest) else {
            return false;
        };
        let e = *self.index.get(id);
        if e.cas != cas || e.tail != page || !self.is_split(e.size as usize) {
            return false;
        }
        self.extents
            .pin(page, extent_pages(e.size as usize - self.ram_head));
        true
    }

    /// Lends the RAM bytes of the live object `digest` with CAS value `cas` (its head slot,
    /// or its value in the arena; see `heads` and `arena`): where they are and the address
    /// of their first byte, or `None` when that version is gone.
    pub fn lend(&mut self, digest: &Digest, cas: u64) -> Option<(Lent, *const u8)> {
        let id = self.index.find(digest)?;
        let e = *self.index.get(id);
        if e.cas != cas {
            return None;
        }
        if self.is_split(e.size as usize) {
            let heads = self.heads.as_mut()?;
            Some((Lent::Head(e.loc), heads.lend(e.loc)))
        } else {
            Some((Lent::Arena(e.loc), self.arena.lend(e.loc)))
        }
    }

    /// Gives back what [`Shard::lend`] lent.
    pub fn give_back(&mut self, lent: Lent) {
        match lent {
            Lent::Head(slot) => {
                if let Some(h) = self.heads.as_mut() {
                    h.give_back(slot);
                }
            }
            Lent::Arena(loc) => self.arena.give_back(loc),
        }
    }

    /// Drops a pin taken with [`Shard::pin_tail`].
    pub fn unpin_tail(&mut self, page: u32) {
        self.extents.unpin(page);
    }

    /// Removes entry `id` and releases everything it owns.
    pub fn unlink(&mut self, id: u32) {
        self.tags.forget(id);
        let e = self.index.remove(id);
        if self.is_split(e.size as usize) {
            self.big.remove(id);
            if let Some(h) = self.heads.as_mut() {
                h.free(e.loc);
            }
            self.extents
                .free(e.tail, extent_pages(e.size as usize - self.ram_head));
        } else {
            self.small.remove(id);
            self.arena.free(e.loc);
        }
    }

    fn evict_one(&mut self, split: bool, now: u32, stats: &Stats) -> bool {
        let victim = if split {
            self.big.evict()
        } else {
            self.small.evict()
        };
        let Some(id) = victim else { return false };
        self.evict(id, now, stats);
        true
    }

    /// Removes entry `id` to make room, counted as an eviction (or a reclaim when it has
    /// expired), store-wide and in its slab class.
    fn evict(&mut self, id: u32, now: u32, stats: &Stats) {
        let e = self.index.get(id);
        if clock::is_expired(e.exptime, now) {
            count_reclaimed(e, stats);
        } else {
            let class = stats.classes.of(classes::entry_class(e));
            stats::incr(&stats.evictions);
            stats::incr(&class.evicted);
            if e.exptime != 0 {
                stats::incr(&class.evicted_nonzero);
            }
            if e.bits & BIT_FETCHED == 0 {
                stats::incr(&stats.evicted_unfetched);
                stats::incr(&class.evicted_unfetched);
            }
            let idle = now.saturating_sub(e.atime);
            class
                .evicted_time
                .store(idle, std::sync::atomic::Ordering::Relaxed);
        }
        self.unlink(id);
    }

    /// Copies a whole object into the arena, compacting and evicting as needed. Returns its
    /// location, to be passed to [`Shard::link`] in the entry.
    pub fn place_whole(
        &mut self,
        data: &[u8],
        digest: &Digest,
        now: u32,
        stats: &Stats,
    ) -> Option<u32> {
        if !self.arena.fits(data.len()) {
            // Evicting could never make room for it.
            return None;
        }
        loop {
            if let Some(loc) = self.arena.alloc(UNOWNED, digest.check(), data) {
                return Some(loc);
            }
            let index = &mut self.index;
            if self.arena.compact(data.len(), self.min_gain, |id, new| {
                index.get_mut(id).loc = new
            }) {
                stats::incr(&stats.arena_compactions);
                continue;
            }
            if !self.evict_one(false, now, stats) {
                return None;
            }
        }
    }

    /// Reserves a head slot and a tail extent for a split object of `size` bytes, evicting
    /// split objects while the head slots are full.
    pub fn reserve_split(&mut self, size: usize, now: u32, stats: &Stats) -> Option<Reservation> {
        let slot = loop {
            if let Some(s) = self.heads.as_mut()?.alloc() {
                break s;
            }
            if !self.evict_one(true, now, stats) {
                return None;
            }
        };
        let pages = extent_pages(size - self.ram_head);
        match self.extents.alloc(pages) {
            Some(page) => Some(Reservation { slot, page, pages }),
            None => {
                self.heads.as_mut()?.free(slot);
                None
            }
        }
    }

    /// Writes the head of a reserved split object.
    pub fn fill_head(&mut self, r: &Reservation, head: &[u8]) {
        if let Some(h) = self.heads.as_mut() {
            h.slot_mut(r.slot)[..head.len()].copy_from_slice(head);
        }
    }

    /// Gives back a reservation that will not be linked.
    pub fn release(&mut self, r: &Reservation) {
        if let Some(h) = self.heads.as_mut() {
            h.free(r.slot);
        }
        self.extents.free(r.page, r.pages);
    }

    /// Links a new entry whose bytes were placed (`loc` from [`Shard::place_whole`], or the
    /// reservation's slot and page for split objects). Returns its id.
    pub fn link(&mut self, entry: Entry, key: &[u8]) -> u32 {
        let split = self.is_split(entry.size as usize);
        let loc = entry.loc;
        let id = self.index.insert(entry, key);
        if split {
            self.big.insert(id);
        } else {
            self.arena.set_owner(loc, id);
            self.small.insert(id);
        }
        id
    }

    /// Calls `f` with every unexpired entry.
    pub fn for_each_live(&self, now: u32, f: &mut impl FnMut(&Entry, &[u8])) {
        for (e, key) in self.index.iter() {
            if !clock::is_expired(e.exptime, now) {
                f(e, key);
            }
        }
    }

    /// Number of items.
    pub fn items(&self) -> usize {
        self.index.len()
    }

    /// (arena live bytes, arena mapped bytes, head bytes in use, tail bytes in use).
    pub fn usage(&self) -> (usize, usize, usize, u64) {
        let heads = self.heads.as_ref().map_or(0, Heads::used_bytes);
        (
            self.arena.live_bytes(),
            self.arena.mapped_bytes(),
            heads,
            self.extents.used_pages() * 4096,
        )
    }

    /// Arena capacity in bytes.
    #[cfg(test)]
    pub fn arena_capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Bytes of mapped head-slot blocks.
    #[cfg(test)]
    pub fn heads_mapped(&self) -> usize {
        self.heads.as_ref().map_or(0, Heads::mapped_bytes)
    }

    /// Drops every item.
    pub fn clear(&mut self) {
        self.index.clear();
        self.tags.clear();
        self.arena.clear();
        self.small.clear();
        self.big.clear();
        if let Some(h) = self.heads.as_mut() {
            h.clear();
        }
        self.extents.clear();
    }
}

/// A shard's share of `small_memory` bytes of arena and `memory` bytes of head slots: its
/// arena blocks and head slots, at least one of each (the configuration gives every shard
/// at least two blocks at start; `cache_memlimit` may leave one).
pub fn share(cfg: &StoreConfig, small_memory: u64, memory: u64) -> (usize, usize) {
    let shards = cfg.shards as u64;
    let blocks = (small_memory / cfg.block / shards).max(1) as usize;
    let slots = (memory / shards / cfg.ram_head).max(1) as usize;
    (blocks, slots)
}

/// Counts the removal of expired entry `e`, store-wide and in its slab class.
fn count_reclaimed(e: &Entry, stats: &Stats) {
    let class = stats.classes.of(classes::entry_class(e));
    stats::incr(&stats.reclaimed);
    stats::incr(&class.reclaimed);
    if e.bits & BIT_FETCHED == 0 {
        stats::incr(&stats.expired_unfetched);
        stats::incr(&class.expired_unfetched);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StoreArgs;

    fn small_shard() -> Shard {
        let args = StoreArgs {
            small_memory: Some(256 << 10),
            block: Some(64 << 10),
            max_item_size: Some(16 << 10),
            cores: Some(1),
            ..StoreArgs::default()
        };
        let mut cfg = args.resolve().unwrap();
        cfg.shards = 1;
        Shard::new(&cfg, None, &Arc::default())
    }

    fn put(s: &mut Shard, key: u32, len: usize, stats: &Stats) -> u32 {
        let digest = Digest::of(&key.to_le_bytes());
        let data = vec![key as u8; len];
        let loc = s.place_whole(&data, &digest, 100, stats).unwrap();
        s.link(
            Entry {
                digest,
                size: len as u32,
                loc,
                ..Entry::default()
            },
            b"",
        )
    }

    #[test]
    fn fills_evicts_and_stays_consistent() {
        let stats = Stats::default();
        let mut s = small_shard();
        for k in 0..2000u32 {
            let len = 100 + (k as usize * 37) % 3000;
            put(&mut s, k, len, &stats);
            if k % 3 == 0 {
                // Delete some to leave holes for compaction.
                let id = s
                    .find_live(&Digest::of(&k.to_le_bytes()), 100, &stats)
                    .unwrap();
                s.unlink(id);
            }
        }
        assert!(stats.evictions.load(std::sync::atomic::Ordering::Relaxed) > 0);
        // Every surviving item reads back its own bytes.
        let mut found = 0;
        for k in 0..2000u32 {
            if let Some(id) = s.find_live(&Digest::of(&k.to_le_bytes()), 100, &stats) {
                let e = *s.entry(id);
                let bytes = s.whole(&e).unwrap();
                assert!(bytes.iter().all(|&b| b == k as u8));
                assert_eq!(bytes.len(), 100 + (k as usize * 37) % 3000);
                found += 1;
            }
        }
        assert_eq!(found, s.items());
        assert!(s.usage().0 <= s.arena_capacity());
    }

    #[test]
    fn expired_entries_are_reclaimed_on_lookup() {
        let stats = Stats::default();
        let mut s = small_shard();
        let id = put(&mut s, 1, 10, &stats);
        s.entry_mut(id).exptime = 50;
        assert!(s
            .find_live(&Digest::of(&1u32.to_le_bytes()), 100, &stats)
            .is_none());
        assert_eq!(s.items(), 0);
        s.clear();
    }
}
