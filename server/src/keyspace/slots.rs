//! The keys of each hash slot, kept in cluster mode only (database 0): CLUSTER
//! COUNTKEYSINSLOT answers from a slot's length and GETKEYSINSLOT from its entries, without
//! walking the database. An entry is a key's slab slot number in [`super::db::Db`], in a
//! set per slot: adding and removing stay O(1) however many keys a hash tag puts in one
//! slot (about 5 bytes a key; Redis 7.0 keeps 16 in its per-slot lists).

use crate::cluster::slot::SLOTS;
use hashbrown::HashSet;

/// Entry numbers by hash slot.
pub struct SlotIndex {
    slots: Vec<HashSet<u32>>,
}

impl Default for SlotIndex {
    fn default() -> Self {
        SlotIndex {
            slots: (0..SLOTS).map(|_| HashSet::new()).collect(),
        }
    }
}

impl SlotIndex {
    /// Records entry `id` in `slot`.
    #[inline]
    pub fn add(&mut self, slot: u16, id: u32) {
        self.slots[slot as usize].insert(id);
    }

    /// Forgets entry `id` of `slot`.
    #[inline]
    pub fn remove(&mut self, slot: u16, id: u32) {
        let set = &mut self.slots[slot as usize];
        set.remove(&id);
        if set.is_empty() && set.capacity() > 0 {
            *set = HashSet::new();
        }
    }

    /// Keys in `slot`.
    pub fn count(&self, slot: u16) -> usize {
        self.slots[slot as usize].len()
    }

    /// The entry numbers of `slot`, in no particular order.
    pub fn ids(&self, slot: u16) -> impl Iterator<Item = u32> + '_ {
        self.slots[slot as usize].iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_remove_count() {
        let mut index = SlotIndex::default();
        index.add(5, 1);
        index.add(5, 2);
        index.add(7, 3);
        assert_eq!(index.count(5), 2);
        index.remove(5, 1);
        index.remove(5, 9);
        assert_eq!(index.ids(5).collect::<Vec<_>>(), vec![2]);
        assert_eq!(index.count(7), 1);
        assert_eq!(index.count(0), 0);
    }
}
