//! The member index of a large set: a Swiss table of `u32` arena ids.
//!
//! Slots come in groups of 16, each with a control byte: `EMPTY`, `DELETED`
//! (a tombstone) or the low 7 bits of the member's hash (the tag). A group
//! keeps its 16 control bytes next to its 16 ids (48 bytes with `u16` ids,
//! 80 with `u32`; see `id`), so a lookup
//! usually touches one pair of adjacent cache lines and then the arena. The
//! table stores no keys and no hashes; a tag match is confirmed by comparing
//! the member bytes in the arena, and resizing re-hashes them from there.
//!
//! The table holds a whole number of groups, any number, not a power of two:
//! the home group of hash `h` is `(h * groups) >> 64` (a multiply-shift, or
//! "fastrange", reduction), and probing walks the following groups in order,
//! wrapping at the end. Consequences:
//!
//! * Home groups are monotone in the hash, which makes ZSCAN cursors hash
//!   thresholds that survive any resize (see [`SwissIndex::scan`]).
//! * A rebuild places ids in hash order, so each id sits as close to home as
//!   linear probing allows and the farthest displacement stays small even
//!   when the table is packed full.
//! * The table records the farthest any id sits from its home group
//!   (`max_disp`), so a lookup stops at a group with an `EMPTY` slot or after
//!   `max_disp + 1` groups, whichever comes first. Packed to density 1.0 there
//!   is no `EMPTY` slot at all and every lookup of a missing member walks
//!   `max_disp + 1` groups (some hundreds at a million members); 0.97 keeps
//!   empties, so most misses stop within a few groups.
//!
//! Normal growth happens when an insert would fill past 7/8 of the slots and
//! grows the table by half; removals shrink it below a quarter full. Both are
//! incremental (see [`SwissIndex`]): the old table drains a group per operation.
//!
//! Every table mixes the caller's hash with a seed of its own, drawn at random when
//! the table is made ([`spread`]). Without it, ids inserted in the slot order of
//! another table with the same hash (a SCAN of one server replayed into another, an
//! RDB written in slot order and loaded back) arrive in ascending home order: while
//! the table grows towards their final count they all have homes in the first part
//! of it, linear probing piles them into one ever longer run, and every insert and
//! every lookup of a missing key walks that run. That made a million-key RDB written
//! by Goblin take two minutes to load. With a seed per table, one table's slot order
//! is a random order for every other. The seed is fixed for the table's life, so
//! scan cursors (thresholds of the mixed hash) survive every resize.

use crate::id::Id;

/// Slots per group.
pub(crate) const GROUP: usize = 16;
/// Control byte of a never-used slot: zero, so a table of fresh zeroed pages is empty
/// and needs no fill (see [`empty_groups`]).
const EMPTY: u8 = 0x00;
/// Control byte of a slot whose id was removed.
const DELETED: u8 = 0x01;
/// The bit every occupied slot's control byte has (beside its 7-bit tag).
const FULL: u8 = 0x80;
/// Normal growth keeps at most this many ids per 16-slot group (7/8).
const MAX_PER_GROUP: usize = 14;
/// Old groups each insert or removal moves while the table is being resized: at most 16
/// ids, and growth leaves room for seven ids per old group before the next one is due, so
/// the old table is always drained first.
const DRAIN_PER_OP: usize = 1;

/// Sixteen control bytes and the sixteen ids they describe.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Group<I> {
    ctrl: [u8; GROUP],
    ids: [I; GROUP],
}

impl<I: Id> Group<I> {
    /// Which control bytes equal `byte`, as a bit mask: one SSE2 compare on x86-64 (a
    /// loop over the 16 bytes took about 50 instructions a probe, a third of a lookup).
    #[inline]
    fn matching(&self, byte: u8) -> u16 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{
                _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
            };
            // SAFETY: SSE2 is part of the x86-64 baseline, and the unaligned load reads
            // exactly the group's 16 control bytes.
            unsafe {
                let ctrl = _mm_loadu_si128(self.ctrl.as_ptr().cast());
                _mm_movemask_epi8(_mm_cmpeq_epi8(ctrl, _mm_set1_epi8(byte as i8))) as u16
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut mask = 0u16;
            for (i, &c) in self.ctrl.iter().enumerate() {
                mask |= u16::from(c == byte) << i;
            }
            mask
        }
    }

    /// Which slots are occupied, as a bit mask: the `FULL` bits, gathered by one SSE2
    /// movemask on x86-64.
    #[inline]
    fn full_mask(&self) -> u16 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8};
            // SAFETY: as in `matching`.
            unsafe { _mm_movemask_epi8(_mm_loadu_si128(self.ctrl.as_ptr().cast())) as u16 }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut mask = 0u16;
            for (i, &c) in self.ctrl.iter().enumerate() {
                mask |= u16::from(is_full(c)) << i;
            }
            mask
        }
    }

    #[inline]
    fn has_empty(&self) -> bool {
        self.matching(EMPTY) != 0
    }

    /// The occupied slots' positions and ids.
    fn full(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        let mut m = self.full_mask();
        std::iter::from_fn(move || {
            let i = m.trailing_zeros() as usize;
            m &= m.checked_sub(1)?;
            Some((i, self.ids[i].get()))
        })
    }
}

/// `groups` empty groups, from zeroed memory: a large table is fresh pages from the
/// kernel, faulted in as inserts reach them, so starting a resize costs no fill of the
/// whole table (80 MB at ten million keys) in one go.
fn empty_groups<I: Id>(groups: usize) -> Vec<Group<I>> {
    let layout = std::alloc::Layout::array::<Group<I>>(groups).expect("table size");
    if layout.size() == 0 {
        return Vec::new();
    }
    // SAFETY: the layout is non-empty; all-zero bytes are an empty group (EMPTY is 0, and
    // an `Id` is an integer, for which zero is valid); the Vec takes the allocation with
    // the same layout it would have made, length and capacity `groups`.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<Group<I>>();
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Vec::from_raw_parts(ptr, groups, groups)
    }
}

/// Whether a control byte is an occupied slot's.
#[inline]
fn is_full(ctrl: u8) -> bool {
    ctrl & FULL != 0
}

/// The control byte stored for `hash`: its low 7 bits, marked occupied.
#[inline]
fn tag(hash: u64) -> u8 {
    FULL | (hash & 0x7f) as u8
}

/// The hash a table with `seed` places by: the caller's hash mixed with the seed
/// (a 64x64->128 multiply folded), so tables with different seeds order the same
/// hashes independently. Both ends of the result are mixed, as the home (top bits)
/// and the tag (low bits) need.
#[inline]
fn spread(seed: u32, hash: u64) -> u64 {
    let mask = u64::from(seed).wrapping_mul(0xa076_1d64_78bd_642f);
    let r = u128::from(hash ^ mask) * u128::from(0x9e37_79b9_7f4a_7c15u64);
    (r as u64) ^ ((r >> 64) as u64)
}

/// A seed for a new table: random, so no two tables (in this process or another)
/// share a slot order.
fn fresh_seed() -> u32 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0u64) as u32
}

/// Groups needed to hold `items` at a load of at most `density`.
pub(crate) fn groups_for(items: usize, density: f64) -> usize {
    ((items as f64 / (GROUP as f64 * density)).ceil() as usize).max(1)
}

/// The home group of (mixed) hash `hash` in a table of `groups` groups.
#[inline]
fn home(groups: usize, hash: u64) -> usize {
    ((u128::from(hash) * groups as u128) >> 64) as usize
}

/// The smallest hash whose home group is `group` (for `group < groups`).
fn group_floor(groups: usize, group: usize) -> u64 {
    ((group as u128) << 64).div_ceil(groups as u128) as u64
}

#[inline]
fn next_group(groups: usize, g: usize) -> usize {
    if g + 1 == groups {
        0
    } else {
        g + 1
    }
}

/// The slot in `table` of the id with mixed hash `hash` for which `eq` holds, walking
/// at most `max_disp + 1` groups from its home.
#[inline]
fn probe<I: Id>(
    table: &[Group<I>],
    max_disp: u32,
    hash: u64,
    eq: impl Fn(u32) -> bool,
) -> Option<(usize, u32)> {
    if table.is_empty() {
        return None;
    }
    let t = tag(hash);
    let mut g = home(table.len(), hash);
    for _ in 0..=max_disp as usize {
        let group = &table[g];
        // The ids usually sit on the cache line after the control bytes: load both
        // at once instead of one after the other.
        crate::arena::prefetch(group.ids.as_ptr());
        let mut m = group.matching(t);
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            let id = group.ids[i].get();
            if eq(id) {
                return Some((g * GROUP + i, id));
            }
            m &= m - 1;
        }
        if group.has_empty() {
            return None;
        }
        g = next_group(table.len(), g);
    }
    None
}

/// First free (empty or deleted) slot of `table` on the probe path of `hash`, with its
/// distance in groups from home.
fn free_slot<I: Id>(table: &[Group<I>], hash: u64) -> Option<(usize, usize)> {
    let mut g = home(table.len(), hash);
    for disp in 0..table.len() {
        let group = &table[g];
        let m = group.matching(EMPTY) | group.matching(DELETED);
        if m != 0 {
            return Some((g * GROUP + m.trailing_zeros() as usize, disp));
        }
        g = next_group(table.len(), g);
    }
    None
}

/// Empties slot `slot` of `table`; true when it became `EMPTY` (not a tombstone).
fn clear_slot<I: Id>(table: &mut [Group<I>], slot: usize) -> bool {
    let group = &mut table[slot / GROUP];
    // A group that still has an EMPTY slot never made a probe walk past it, so the freed
    // slot can become EMPTY too; otherwise it must stay a tombstone to keep later ids
    // reachable.
    let empty = group.has_empty();
    group.ctrl[slot % GROUP] = if empty { EMPTY } else { DELETED };
    empty
}

/// A table being drained into its successor during an incremental resize.
#[derive(Clone, Debug)]
struct Draining<I> {
    table: Vec<Group<I>>,
    /// Ids still in it.
    items: usize,
    max_disp: u32,
    /// Groups before this one have been moved (their slots are tombstones now, so probes
    /// for ids displaced past them still walk on).
    next: usize,
}

/// A Swiss table of arena ids; keys live elsewhere and are reached through
/// the closures the caller passes.
///
/// Resizing is incremental, as Redis rehashes its dicts: a resize allocates the new
/// table and keeps the old one as [`Draining`]; each insert and each removal then moves
/// the ids of the old table's next group (`DRAIN_PER_OP`), and a caller with time to spare
/// moves more ([`SwissIndex::drain`]). Inserts go to the new table; lookups try the
/// new table, then the old. A slot number names either table: slots past the new table's
/// are the old table's. Both tables mix hashes with the same seed, so a hash's home is
/// monotone in it in both, and a scan step takes the same hash range from each.
#[derive(Clone, Debug)]
pub(crate) struct SwissIndex<I> {
    table: Vec<Group<I>>,
    /// Ids held, in both tables (ids are `u32` handles, so a count fits 32 bits).
    items: u32,
    /// Empty slots the new table may still fill at 7/8 load, counting the ids still to
    /// come from the old table as filled.
    growth_left: u32,
    /// The farthest any id of the new table sits from its home group, in groups.
    max_disp: u32,
    /// Mixed into every hash (see [`spread`]); fixed for the table's life. The counts
    /// are 32-bit so the header stays 48 bytes.
    seed: u32,
    /// The previous table while a resize drains it.
    old: Option<Box<Draining<I>>>,
}

impl<I> Default for SwissIndex<I> {
    fn default() -> SwissIndex<I> {
        SwissIndex {
            table: Vec::new(),
            items: 0,
            growth_left: 0,
            max_disp: 0,
            seed: fresh_seed(),
            old: None,
        }
    }
}

impl<I: Id> SwissIndex<I> {
    /// An empty table sized for `items` ids at the normal load.
    pub(crate) fn with_capacity(items: usize) -> SwissIndex<I> {
        let mut t = SwissIndex::default();
        if items > 0 {
            t.resize(items.div_ceil(MAX_PER_GROUP), std::iter::empty(), |_| 0);
        }
        t
    }

    /// Number of ids held.
    pub(crate) fn len(&self) -> usize {
        self.items as usize
    }

    /// Number of 16-slot groups (of the new table, while a resize drains the old one).
    pub(crate) fn groups(&self) -> usize {
        self.table.len()
    }

    /// The table and slot within it that slot number `slot` names. A slot of the new
    /// table (every slot, but while a resize drains) takes one compare.
    #[inline]
    fn locate(&self, slot: usize) -> (&[Group<I>], usize) {
        let here = self.table.len() * GROUP;
        if slot < here {
            return (&self.table, slot);
        }
        match &self.old {
            Some(old) => (&old.table, slot - here),
            None => (&self.table, slot),
        }
    }

    #[inline]
    fn locate_mut(&mut self, slot: usize) -> (&mut [Group<I>], usize) {
        let here = self.table.len() * GROUP;
        match &mut self.old {
            Some(old) if slot >= here => (&mut old.table, slot - here),
            _ => (&mut self.table, slot),
        }
    }

    /// The id in slot `slot`.
    #[inline]
    pub(crate) fn id(&self, slot: usize) -> u32 {
        let (table, slot) = self.locate(slot);
        table[slot / GROUP].ids[slot % GROUP].get()
    }

    /// The id in slot `slot` when it is occupied.
    #[inline]
    fn occupied(&self, slot: usize) -> Option<u32> {
        let (table, slot) = self.locate(slot);
        let group = &table[slot / GROUP];
        is_full(group.ctrl[slot % GROUP]).then(|| group.ids[slot % GROUP].get())
    }

    /// The slot of a uniformly drawn id (the table is not empty): random slots of both
    /// tables until one is occupied (a uniformly chosen slot that holds an id is a
    /// uniformly chosen id). Tables are kept at least a quarter full, a third counting
    /// both while one drains, so a draw takes a few probes on average; `seed` starts the
    /// draw's own generator.
    pub(crate) fn random_slot(&self, seed: u64) -> usize {
        let old = self.old.as_ref().map_or(0, |o| o.table.len());
        let slots = ((self.groups() + old) * GROUP) as u64;
        let mut state = seed | 1;
        loop {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let slot = (state % slots) as usize;
            if self.occupied(slot).is_some() {
                return slot;
            }
        }
    }

    /// Calls `visit` with the slots of up to `count` ids from consecutive slots, starting at
    /// a uniformly drawn slot of either table and wrapping (Redis's dictGetSomeKeys, for
    /// eviction's samples): neighbouring slots share cache lines, so a sample of five
    /// costs one or two index misses where five separate draws cost five or more, each
    /// with its own misses on empty slots. Walks at most `count * 4` groups.
    pub(crate) fn sample(&self, seed: u64, count: usize, mut visit: impl FnMut(usize)) {
        let old = self.old.as_ref().map_or(&[][..], |o| &o.table[..]);
        let groups = self.groups() + old.len();
        if groups == 0 || count == 0 {
            return;
        }
        // Group numbers and slot numbers run on from the new table into the old one.
        let start = (spread(self.seed, seed) % (groups * GROUP) as u64) as usize;
        let (mut g, first) = (start / GROUP, start % GROUP);
        let mut found = 0;
        for step in 0..groups.min(count * 4) {
            let group = match g.checked_sub(self.groups()) {
                Some(o) => &old[o],
                None => &self.table[g],
            };
            let mut m = group.full_mask();
            if step == 0 {
                m &= u16::MAX << first;
            }
            while m != 0 {
                visit(g * GROUP + m.trailing_zeros() as usize);
                found += 1;
                if found == count {
                    return;
                }
                m &= m - 1;
            }
            g = next_group(groups, g);
        }
    }

    /// Maps every held id through `f` in place (the arena was rewritten; hashes and slots
    /// stay as they are).
    pub(crate) fn rewrite_ids(&mut self, mut f: impl FnMut(u32) -> u32) {
        let old = self
            .old
            .as_mut()
            .map(|o| &mut o.table[..])
            .unwrap_or(&mut []);
        for g in self.table.iter_mut().chain(old.iter_mut()) {
            for (c, id) in g.ctrl.iter().zip(g.ids.iter_mut()) {
                if is_full(*c) {
                    *id = I::new(f(id.get()));
                }
            }
        }
    }

    /// Replaces the id in an occupied slot (same member, moved in the arena).
    pub(crate) fn set_id(&mut self, slot: usize, id: u32) {
        let (table, slot) = self.locate_mut(slot);
        let group = &mut table[slot / GROUP];
        debug_assert!(is_full(group.ctrl[slot % GROUP]));
        group.ids[slot % GROUP] = I::new(id);
    }

    /// The slot of the id with hash `hash` for which `eq` holds.
    #[inline]
    pub(crate) fn find(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<usize> {
        self.find_entry(hash, eq).map(|(slot, _)| slot)
    }

    /// The slot and the id with hash `hash` for which `eq` holds: [`SwissIndex::find`]
    /// with the id the probe has in hand, not read again through the slot.
    #[inline]
    pub(crate) fn find_entry(&self, hash: u64, eq: impl Fn(u32) -> bool) -> Option<(usize, u32)> {
        let hash = spread(self.seed, hash);
        if let Some(found) = probe(&self.table, self.max_disp, hash, &eq) {
            return Some(found);
        }
        let old = self.old.as_ref()?;
        probe(&old.table, old.max_disp, hash, eq)
            .map(|(slot, id)| (self.table.len() * GROUP + slot, id))
    }

    /// Inserts `id` (which must not be present) under `hash` and returns its slot; `rehash`
    /// recomputes the hash of any held id when the table is resized.
    pub(crate) fn insert(&mut self, hash: u64, id: u32, rehash: impl Fn(u32) -> u64) -> usize {
        let hash = spread(self.seed, hash);
        self.drain(DRAIN_PER_OP, &rehash);
        let mut found = free_slot(&self.table, hash);
        let needs_room = match found {
            None => true,
            Some((slot, _)) => self.ctrl(slot) == EMPTY && self.growth_left == 0,
        };
        if needs_room {
            let want = self.len() + 1;
            let groups = self.groups();
            let groups = if want <= groups * MAX_PER_GROUP / 2 {
                // Mostly tombstones: rehash at the same size.
                groups
            } else {
                (want * 3 / 2).div_ceil(MAX_PER_GROUP).max(groups + 1)
            };
            self.start_resize(groups, &rehash);
            found = free_slot(&self.table, hash);
        }
        let (slot, disp) = found.expect("resized table has a free slot");
        if self.ctrl(slot) == EMPTY {
            self.growth_left = self.growth_left.saturating_sub(1);
        }
        self.put(slot, disp, hash, id);
        self.items += 1;
        slot
    }

    /// The control byte of slot `slot` of the new table.
    #[inline]
    fn ctrl(&self, slot: usize) -> u8 {
        self.table[slot / GROUP].ctrl[slot % GROUP]
    }

    /// Writes `id` into slot `slot` of the new table, `disp` groups from its home.
    fn put(&mut self, slot: usize, disp: usize, hash: u64, id: u32) {
        let group = &mut self.table[slot / GROUP];
        group.ctrl[slot % GROUP] = tag(hash);
        group.ids[slot % GROUP] = I::new(id);
        self.max_disp = self.max_disp.max(disp as u32);
    }

    /// Makes room for `items` ids in all at the normal load, so that inserting up to that
    /// many grows nothing (a loader told its key count up front).
    pub(crate) fn reserve(&mut self, items: usize, rehash: impl Fn(u32) -> u64) {
        let groups = items.div_ceil(MAX_PER_GROUP);
        if groups > self.groups() {
            self.rehash_to(groups, &rehash);
        }
    }

    /// Empties slot `slot`.
    pub(crate) fn remove_slot(&mut self, slot: usize) {
        let here = self.table.len() * GROUP;
        match &mut self.old {
            Some(old) if slot >= here => {
                clear_slot(&mut old.table, slot - here);
                old.items -= 1;
            }
            _ => {
                if clear_slot(&mut self.table, slot) {
                    self.growth_left += 1;
                }
            }
        }
        self.items -= 1;
    }

    /// After a removal: moves the next ids of a resize in progress, or shrinks the table
    /// when it is less than a quarter full.
    pub(crate) fn maybe_shrink(&mut self, rehash: impl Fn(u32) -> u64) {
        if self.old.is_some() {
            self.drain(DRAIN_PER_OP, &rehash);
        } else if self.groups() > 1 && self.len() * 4 < self.groups() * GROUP {
            let groups = (self.len() * 2).div_ceil(MAX_PER_GROUP).max(1);
            self.start_resize(groups, &rehash);
        }
    }

    /// Starts a resize to `groups` groups: the table becomes the old one, drained into a
    /// fresh one by later calls (a resize still in progress is finished first).
    fn start_resize(&mut self, groups: usize, rehash: &impl Fn(u32) -> u64) {
        self.drain(usize::MAX, rehash);
        let table = std::mem::replace(&mut self.table, empty_groups(groups));
        if self.items > 0 {
            self.old = Some(Box::new(Draining {
                table,
                items: self.len(),
                max_disp: self.max_disp,
                next: 0,
            }));
        }
        self.max_disp = 0;
        self.growth_left = (groups * MAX_PER_GROUP).saturating_sub(self.len()) as u32;
    }

    /// Moves the ids of up to `groups` more groups of the table a resize drains into the
    /// new one, in the old table's slot order; returns how many ids moved. The old table
    /// is freed once empty.
    pub(crate) fn drain(&mut self, groups: usize, rehash: &impl Fn(u32) -> u64) -> usize {
        let Some(mut old) = self.old.take() else {
            return 0;
        };
        let end = old.next.saturating_add(groups).min(old.table.len());
        let mut moved = 0;
        for g in old.next..end {
            for i in 0..GROUP {
                if !is_full(old.table[g].ctrl[i]) {
                    continue;
                }
                let id = old.table[g].ids[i].get();
                let h = spread(self.seed, rehash(id));
                let (slot, disp) = free_slot(&self.table, h).expect("table sized for its ids");
                self.put(slot, disp, h, id);
                old.table[g].ctrl[i] = DELETED;
                moved += 1;
            }
        }
        old.next = end;
        old.items -= moved;
        if old.items > 0 && old.next < old.table.len() {
            self.old = Some(old);
        }
        moved
    }

    /// Whether a resize is still draining an old table.
    pub(crate) fn is_resizing(&self) -> bool {
        self.old.is_some()
    }

    /// Rebuilds the table with `groups` groups from its own ids, all at once (growth for
    /// a loader's known count, packing).
    ///
    /// The ids are re-inserted straight from the old table, in its slot order, which is
    /// home order and so nearly hash order: they land about where [`SwissIndex::resize`]
    /// would put them, and nothing but the new table is allocated. A sorted copy of the
    /// ids (16 bytes each) would be freed right after the resize, and glibc, whose mmap
    /// threshold follows the largest chunk freed, would then serve the next tables from
    /// the heap and keep the holes they leave resident: about 15 bytes a key at a
    /// million keys, more than the index itself.
    pub(crate) fn rehash_to(&mut self, groups: usize, rehash: &impl Fn(u32) -> u64) {
        self.start_resize(groups, rehash);
        self.drain(usize::MAX, rehash);
    }

    /// Rebuilds the table with `groups` groups (at least enough for `ids`)
    /// holding exactly `ids`.
    ///
    /// Ids are placed in hash order, each at the first free slot at or after
    /// its home, which is where linear probing would put them with the least
    /// displacement. The walk starts (and wraps) at the group where the
    /// running surplus of ids over slots is lowest, so the ids that spill
    /// past the end of the table land just past its start; without that,
    /// a table packed full could push them most of the way around.
    pub(crate) fn resize(
        &mut self,
        groups: usize,
        ids: impl Iterator<Item = u32>,
        rehash: impl Fn(u32) -> u64,
    ) {
        let seed = self.seed;
        let mut keyed: Vec<(u64, u32)> = ids.map(|id| (spread(seed, rehash(id)), id)).collect();
        keyed.sort_unstable_by_key(|&(h, _)| h);
        self.table = empty_groups(groups);
        self.old = None;
        self.max_disp = 0;
        let slots = groups * GROUP;
        // Start at the group where the prefix surplus sum(ids - 16) is lowest.
        let mut start = 0;
        let (mut surplus, mut lowest) = (0i64, 0i64);
        let mut i = 0;
        for g in 0..groups {
            let from = i;
            while i < keyed.len() && home(groups, keyed[i].0) == g {
                i += 1;
            }
            surplus += (i - from) as i64 - GROUP as i64;
            if surplus < lowest {
                (lowest, start) = (surplus, g + 1);
            }
        }
        let split = keyed.partition_point(|&(h, _)| home(groups, h) < start);
        let mut next = start * GROUP;
        let (tail, head) = keyed.split_at(split);
        for &(h, id) in head.iter().chain(tail) {
            let home = home(groups, h);
            // Homes before `start` come after the wrap: unroll them.
            let unrolled = if home < start { home + groups } else { home };
            let at = next.max(unrolled * GROUP);
            if at < start * GROUP + slots {
                self.put(at % slots, at / GROUP - unrolled, h, id);
                next = at + 1;
            } else {
                let (slot, disp) = free_slot(&self.table, h).expect("table sized for its ids");
                self.put(slot, disp, h, id);
            }
        }
        self.items = keyed.len() as u32;
        self.growth_left = (groups * MAX_PER_GROUP).saturating_sub(keyed.len()) as u32;
    }

    /// One ZSCAN step: calls `emit` for every id whose mixed hash ([`spread`]) lies in
    /// `[cursor, next)` and returns `next`, or 0 after the last step.
    ///
    /// The hash range covers about `count` ids' worth of home groups of the new table.
    /// Because home groups are monotone in the hash, consecutive steps partition the hash
    /// space whatever happened to the table in between, so every id present for a whole
    /// scan is emitted exactly once. During a resize the same range is taken from both
    /// tables, and each id is in exactly one of them at any time.
    pub(crate) fn scan(
        &self,
        cursor: u64,
        count: usize,
        hash_of: impl Fn(u32) -> u64,
        mut emit: impl FnMut(u32),
    ) -> u64 {
        let groups = self.groups();
        if groups == 0 {
            return 0;
        }
        let first = home(groups, cursor);
        let last = (first + count.div_ceil(MAX_PER_GROUP).max(1)).min(groups);
        let next = (last < groups).then(|| group_floor(groups, last));
        let range = (cursor, next);
        self.scan_table(&self.table, self.max_disp, range, &hash_of, &mut emit);
        if let Some(old) = &self.old {
            self.scan_table(&old.table, old.max_disp, range, &hash_of, &mut emit);
        }
        next.unwrap_or(0)
    }

    /// Emits the ids of `table` whose mixed hash lies in `[from, to)` (`to` None: to the
    /// end). They sit in the groups from `from`'s home to `to`'s, or displaced past
    /// those: the walk goes on until a group with an `EMPTY` slot (no probe passes one)
    /// or `max_disp` groups.
    fn scan_table(
        &self,
        table: &[Group<I>],
        max_disp: u32,
        (from, to): (u64, Option<u64>),
        hash_of: &impl Fn(u32) -> u64,
        emit: &mut impl FnMut(u32),
    ) {
        let groups = table.len();
        let first = home(groups, from);
        let last = to.map_or(groups, |to| home(groups, to - 1) + 1);
        let span = (last - first + max_disp as usize).min(groups);
        let mut g = first;
        for step in 0..span {
            let group = &table[g];
            for (_, id) in group.full() {
                let h = spread(self.seed, hash_of(id));
                if h >= from && to.is_none_or(|to| h < to) {
                    emit(id);
                }
            }
            if first + step + 1 >= last && group.has_empty() {
                break;
            }
            g = next_group(groups, g);
        }
    }

    /// Every held id, in slot order.
    pub(crate) fn iter_ids(&self) -> impl Iterator<Item = u32> + '_ {
        let old = self.old.as_ref().map(|o| &o.table[..]).unwrap_or(&[]);
        self.table
            .iter()
            .chain(old)
            .flat_map(|g| g.full().map(|(_, id)| id))
    }

    /// The same table with `u32` ids (same slots, nothing re-hashed).
    pub(crate) fn widen(&self) -> SwissIndex<u32> {
        fn wide<I: Id>(table: &[Group<I>]) -> Vec<Group<u32>> {
            let mut out = Vec::with_capacity(table.len());
            out.extend(table.iter().map(|g| Group {
                ctrl: g.ctrl,
                ids: g.ids.map(Id::get),
            }));
            out
        }
        SwissIndex {
            table: wide(&self.table),
            items: self.items,
            growth_left: self.growth_left,
            max_disp: self.max_disp,
            seed: self.seed,
            old: self.old.as_ref().map(|o| {
                Box::new(Draining {
                    table: wide(&o.table),
                    items: o.items,
                    max_disp: o.max_disp,
                    next: o.next,
                })
            }),
        }
    }

    /// Heap bytes held (both tables during a resize).
    pub(crate) fn memory_bytes(&self) -> usize {
        let old = self.old.as_ref().map_or(0, |o| {
            o.table.capacity() * std::mem::size_of::<Group<I>>()
                + std::mem::size_of::<Draining<I>>()
        });
        self.table.capacity() * std::mem::size_of::<Group<I>>() + old
    }

    /// Checks the table's own invariants: counts, tags and displacement, in both tables
    /// during a resize.
    pub(crate) fn validate(&self, hash_of: impl Fn(u32) -> u64) {
        let mut full = self.validate_table(&self.table, self.max_disp, &hash_of);
        if let Some(old) = &self.old {
            let held = self.validate_table(&old.table, old.max_disp, &hash_of);
            assert_eq!(held, old.items, "old table's item count");
            assert!(
                old.table[..old.next]
                    .iter()
                    .all(|g| g.full().next().is_none()),
                "drained groups hold ids"
            );
            full += held;
        }
        assert_eq!(full, self.len(), "item count");
        let empty: usize = self
            .table
            .iter()
            .map(|g| g.matching(EMPTY).count_ones() as usize)
            .sum();
        assert!(
            empty >= self.growth_left as usize,
            "growth_left exceeds empty slots"
        );
    }

    /// Checks tags and displacement of one table; returns its number of ids.
    fn validate_table(
        &self,
        table: &[Group<I>],
        max_disp: u32,
        hash_of: &impl Fn(u32) -> u64,
    ) -> usize {
        let groups = table.len();
        let mut full = 0;
        for (g, group) in table.iter().enumerate() {
            for (i, id) in group.full() {
                full += 1;
                let slot = g * GROUP + i;
                let h = spread(self.seed, hash_of(id));
                assert_eq!(group.ctrl[i], tag(h), "tag of slot {slot}");
                let home = home(groups, h);
                let disp = (g + groups - home) % groups;
                assert!(disp <= max_disp as usize, "slot {slot} beyond max_disp");
                let mut p = home;
                while p != g {
                    assert!(
                        !table[p].has_empty(),
                        "EMPTY on the probe path of slot {slot}"
                    );
                    p = next_group(groups, p);
                }
            }
        }
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids are the keys; a cheap mix stands in for the member hash.
    fn h(id: u32) -> u64 {
        crate::hash::hash(&id.to_le_bytes())
    }

    fn find(t: &SwissIndex<u32>, id: u32) -> Option<usize> {
        t.find(h(id), |x| x == id)
    }

    #[test]
    fn insert_find_remove_grow_shrink() {
        let mut t = SwissIndex::<u32>::with_capacity(0);
        for id in 0..5000 {
            assert!(find(&t, id).is_none());
            t.insert(h(id), id, h);
        }
        t.validate(h);
        assert_eq!(t.len(), 5000);
        for id in 0..5000 {
            assert_eq!(t.id(find(&t, id).unwrap()), id);
        }
        for id in (0..5000).step_by(2) {
            let slot = find(&t, id).unwrap();
            t.remove_slot(slot);
        }
        t.validate(h);
        for id in 0..5000 {
            assert_eq!(find(&t, id).is_some(), id % 2 == 1);
        }
        for id in (1..5000).step_by(2).take(2000) {
            let slot = find(&t, id).unwrap();
            t.remove_slot(slot);
        }
        let before = t.groups();
        t.maybe_shrink(h);
        assert!(t.groups() < before);
        t.validate(h);
        assert_eq!(t.len(), 500);
    }

    #[test]
    fn tombstones_are_recycled_without_growth() {
        let mut t = SwissIndex::<u32>::with_capacity(100);
        let groups = t.groups();
        for round in 0..50u32 {
            for id in 0..50 {
                t.insert(h(round * 1000 + id), round * 1000 + id, h);
            }
            for id in 0..50 {
                let slot = find(&t, round * 1000 + id).unwrap();
                t.remove_slot(slot);
            }
        }
        t.validate(h);
        assert_eq!(t.groups(), groups);
    }

    #[test]
    fn packed_to_full_density_still_finds_and_misses() {
        let mut t = SwissIndex::<u32>::with_capacity(0);
        for id in 0..1600 {
            t.insert(h(id), id, h);
        }
        t.rehash_to(groups_for(1600, 1.0), &h);
        assert_eq!(t.groups(), 100);
        t.validate(h);
        for id in 0..1600 {
            assert!(find(&t, id).is_some());
        }
        for id in 1600..3200 {
            assert!(find(&t, id).is_none());
        }
        // The next insert needs room and grows the table.
        t.insert(h(5000), 5000, h);
        assert!(t.groups() > 100);
        t.validate(h);
    }

    #[test]
    fn scan_partitions_hash_space_across_resizes() {
        let mut t = SwissIndex::<u32>::with_capacity(0);
        for id in 0..3000 {
            t.insert(h(id), id, h);
        }
        let mut seen = vec![0u32; 3000];
        let mut cursor = 0;
        let mut steps = 0;
        loop {
            cursor = t.scan(cursor, 50, h, |id| seen[id as usize] += 1);
            steps += 1;
            match steps {
                5 => t.rehash_to(t.groups() * 3, &h),
                9 => t.rehash_to(groups_for(3000, 1.0), &h),
                _ => {}
            }
            if cursor == 0 {
                break;
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "every id exactly once");
    }

    #[test]
    fn rebuilt_tables_keep_displacement_small() {
        let n = 100_000u32;
        let mut t = SwissIndex::<u32>::with_capacity(0);
        t.resize(groups_for(n as usize, 0.97), 0..n, h);
        t.validate(h);
        // 8 or fewer for almost every seed; one in about twenty reaches 9.
        assert!(t.max_disp <= 12, "max_disp {} at 0.97", t.max_disp);
        t.resize(groups_for(n as usize, 1.0), 0..n, h);
        t.validate(h);
        assert!(t.table.iter().all(|g| !g.has_empty()), "packed full");
        assert!(t.max_disp <= 64, "max_disp {} at 1.0", t.max_disp);
        assert!(find(&t, n + 1).is_none());
    }

    /// Ids inserted one by one in another table's slot order (a SCAN replayed, an RDB
    /// written in slot order) spread over the growing table instead of piling into one
    /// probe run: the farthest displacement, at every step of the growth, stays as small
    /// as for random order.
    #[test]
    fn another_tables_slot_order_inserts_without_long_probes() {
        let n = 200_000u32;
        let mut source = SwissIndex::<u32>::with_capacity(0);
        for id in 0..n {
            source.insert(h(id), id, h);
        }
        let mut copy = SwissIndex::<u32>::with_capacity(0);
        let mut farthest = 0;
        for id in source.iter_ids() {
            copy.insert(h(id), id, h);
            farthest = farthest.max(copy.max_disp);
        }
        copy.validate(h);
        // Random order reaches 30-45 groups at this size (7/8 full before each growth);
        // without a seed of its own the copy reached 2,691.
        assert!(farthest <= 100, "max_disp reached {farthest} in slot order");
    }

    #[test]
    fn samples_come_from_both_tables_during_a_resize() {
        let mut t = SwissIndex::<u32>::with_capacity(0);
        let mut n = 0;
        while n < 5000 || !t.is_resizing() {
            t.insert(h(n), n, h);
            n += 1;
        }
        // Half the old table moved: ids in both.
        let half = t.old.as_ref().expect("resizing").table.len() / 2;
        t.drain(half, &h);
        let here = t.groups() * GROUP;
        let (mut new, mut old) = (std::collections::HashSet::new(), 0);
        for seed in 0..3000u64 {
            let mut got = 0;
            t.sample(seed, 5, |slot| {
                let id = t.id(slot);
                assert!(
                    id < n && find(&t, id) == Some(slot),
                    "slot {slot} holds a held id"
                );
                if slot >= here {
                    old += 1;
                } else {
                    new.insert(id);
                }
                got += 1;
            });
            // Fewer when the walk starts in the new table's still empty stretch.
            assert!(got <= 5);
        }
        assert!(
            old > 0 && new.len() > 100,
            "{old} from the old table, {} new",
            new.len()
        );
    }

    #[test]
    fn widening_keeps_every_slot() {
        let mut t = SwissIndex::<u16>::with_capacity(0);
        for id in 0..3000 {
            t.insert(h(id), id, h);
        }
        let wide = t.widen();
        wide.validate(h);
        assert_eq!(wide.len(), 3000);
        for id in 0..3000 {
            assert_eq!(wide.find(h(id), |x| x == id).map(|s| wide.id(s)), Some(id));
        }
        t.drain(usize::MAX, &h);
        let wide = t.widen();
        assert!(
            t.memory_bytes() * 5 == wide.memory_bytes() * 3,
            "48 vs 80 bytes a group"
        );
    }

    /// Counts the hashes a closure computes: each id a resize moves is hashed once.
    struct Counting(std::cell::Cell<usize>);

    impl Counting {
        fn hash(&self, id: u32) -> u64 {
            self.0.set(self.0.get() + 1);
            h(id)
        }

        fn take(&self) -> usize {
            self.0.replace(0)
        }
    }

    /// Growing to 300K ids and shrinking back, no insert or removal moves more than one
    /// old group's ids (16): resizes are spread over the operations that follow them.
    #[test]
    fn each_insert_and_removal_moves_a_bounded_number_of_ids() {
        let n = 300_000u32;
        let counter = Counting(std::cell::Cell::new(0));
        let mut t = SwissIndex::<u32>::with_capacity(0);
        let (mut most, mut total, mut resizes) = (0, 0, 0);
        for id in 0..n {
            let groups = t.groups();
            t.insert(h(id), id, |x| counter.hash(x));
            resizes += usize::from(t.groups() != groups);
            let moved = counter.take();
            most = most.max(moved);
            total += moved;
        }
        t.validate(h);
        assert!(resizes >= 20, "{resizes} resizes");
        assert!(most <= GROUP * DRAIN_PER_OP, "an insert moved {most} ids");
        // Each resize moves every id once: about n / (1 - 2/3) in all for growth by half.
        assert!(total < n as usize * 3, "{total} moves for {n} inserts");
        let mut most = 0;
        for id in 0..n - 10 {
            let slot = find(&t, id).unwrap();
            t.remove_slot(slot);
            t.maybe_shrink(|x| counter.hash(x));
            most = most.max(counter.take());
        }
        t.validate(h);
        assert!(t.groups() < 10, "shrunk to {} groups", t.groups());
        assert!(most <= GROUP * DRAIN_PER_OP, "a removal moved {most} ids");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u32),
        Remove(u32),
        Find(u32),
        Drain(u8),
        Scan(u8),
        Iterate,
    }

    fn op(ids: u32) -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            6 => (0..ids).prop_map(Op::Insert),
            3 => (0..ids).prop_map(Op::Remove),
            2 => (0..ids).prop_map(Op::Find),
            1 => (0..3u8).prop_map(Op::Drain),
            2 => (1..40u8).prop_map(Op::Scan),
            1 => Just(Op::Iterate),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// The index against a HashSet through growth and shrinking, with scans running
        /// across them: every id present for a whole scan is emitted exactly once.
        #[test]
        fn behaves_as_a_set_while_resizing(
            ops in proptest::collection::vec(op(3000), 1..4000),
        ) {
            use std::collections::{HashMap, HashSet};
            let mut t = SwissIndex::<u32>::with_capacity(0);
            let mut model = HashSet::new();
            // The scan under way: its cursor, the ids present since it started, and how
            // often each id was emitted.
            let mut cursor = 0u64;
            let mut stable: HashSet<u32> = HashSet::new();
            let mut seen: HashMap<u32, usize> = HashMap::new();
            let mut resizing_ops = 0;
            for op in &ops {
                match *op {
                    Op::Insert(id) => {
                        if model.insert(id) {
                            t.insert(h(id), id, h);
                        }
                    }
                    Op::Remove(id) => {
                        if model.remove(&id) {
                            let slot = find(&t, id).expect("held");
                            t.remove_slot(slot);
                            t.maybe_shrink(h);
                            stable.remove(&id);
                        }
                    }
                    Op::Find(id) => {
                        let slot = find(&t, id);
                        proptest::prop_assert_eq!(slot.map(|s| t.id(s)), model.get(&id).copied());
                    }
                    Op::Drain(groups) => {
                        t.drain(groups as usize, &h);
                    }
                    Op::Scan(count) => {
                        if cursor == 0 {
                            stable = model.clone();
                            seen.clear();
                        }
                        cursor = t.scan(cursor, count as usize, h, |id| {
                            *seen.entry(id).or_default() += 1;
                        });
                        if cursor == 0 {
                            for id in &stable {
                                proptest::prop_assert_eq!(seen.get(id), Some(&1), "id {}", id);
                            }
                            proptest::prop_assert!(seen.values().all(|&n| n == 1));
                        }
                    }
                    Op::Iterate => {
                        let ids: HashSet<u32> = t.iter_ids().collect();
                        proptest::prop_assert_eq!(&ids, &model);
                        t.validate(h);
                    }
                }
                resizing_ops += usize::from(t.is_resizing());
                proptest::prop_assert_eq!(t.len(), model.len());
            }
            t.validate(h);
            proptest::prop_assert!(ops.len() < 200 || resizing_ops > 0, "never resizing");
        }
    }
}
