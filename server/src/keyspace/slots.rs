//! The keys of each hash slot, kept in cluster mode only (database 0): CLUSTER
//! COUNTKEYSINSLOT answers from a slot's length and GETKEYSINSLOT from its entries, without
//! walking the database. An entry is a key's slab slot number in [`super::db::Db`]; a slot
//! holds few keys (N / 16384), so removal searches its list.

use crate::cluster::slot::SLOTS;

/// Entry numbers by hash slot.
pub struct SlotIndex {
    slots: Vec<Vec<u32>>,
}

impl Default for SlotIndex {
    fn default() -> Self {
        SlotIndex {
            slots: vec![Vec::new(); SLOTS],
        }
    }
}

impl SlotIndex {
    /// Records entry `id` in `slot`.
    #[inline]
    pub fn add(&mut self, slot: u16, id: u32) {
        self.slots[slot as usize].push(id);
    }

    /// Forgets entry `id` of `slot`.
    #[inline]
    pub fn remove(&mut self, slot: u16, id: u32) {
        let list = &mut self.slots[slot as usize];
        if let Some(pos) = list.iter().position(|&x| x == id) {
            list.swap_remove(pos);
            if list.is_empty() {
                *list = Vec::new();
            }
        }
    }

    /// Keys in `slot`.
    pub fn count(&self, slot: u16) -> usize {
        self.slots[slot as usize].len()
    }

    /// The entry numbers of `slot`.
    pub fn ids(&self, slot: u16) -> &[u32] {
        &self.slots[slot as usize]
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
        assert_eq!(index.ids(5), &[2]);
        assert_eq!(index.count(7), 1);
        assert_eq!(index.count(0), 0);
    }
}
