//! Consumer groups: the last delivered id, the read counter, the pending entries list
//! (PEL: delivered, not yet acknowledged) and the consumers, each with its own PEL.
//!
//! The group's PEL owns each pending entry's delivery record and names its consumer; a
//! consumer's PEL is the set of ids it owns, so every id in a consumer's set is in the
//! group's PEL with that consumer's name, and the other way round.

use std::collections::{BTreeMap, BTreeSet};

use super::info::btree_bytes;
use super::StreamId;

/// A delivered, unacknowledged entry (Redis's streamNACK).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nack {
    /// When it was last delivered, Unix milliseconds.
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
    /// The consumer it was last delivered to.
    pub consumer: Box<[u8]>,
}

/// The active time of a consumer that never read or claimed (Redis's -1, as its 8 bytes).
pub const NEVER: u64 = u64::MAX;

/// A consumer of a group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumer {
    /// Last time it tried to read or claim, Unix milliseconds.
    pub seen_time: u64,
    /// Last time it read or claimed something, Unix milliseconds ([`NEVER`]: never).
    pub active_time: u64,
    /// The ids pending for it.
    pub pending: BTreeSet<StreamId>,
}

/// A consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The last id delivered to the group.
    pub last_id: StreamId,
    /// Entries the group read, counted from the stream's first ever entry; None when it
    /// cannot be known (Redis's SCG_INVALID_ENTRIES_READ).
    pub entries_read: Option<u64>,
    pending: BTreeMap<StreamId, Nack>,
    consumers: BTreeMap<Box<[u8]>, Consumer>,
}

impl Group {
    /// A group with no consumers and nothing pending.
    pub fn new(last_id: StreamId, entries_read: Option<u64>) -> Group {
        Group {
            last_id,
            entries_read,
            pending: BTreeMap::new(),
            consumers: BTreeMap::new(),
        }
    }

    /// The group's PEL, in id order.
    pub fn pending(&self) -> &BTreeMap<StreamId, Nack> {
        &self.pending
    }

    /// The consumers, in name order.
    pub fn consumers(&self) -> &BTreeMap<Box<[u8]>, Consumer> {
        &self.consumers
    }

    /// The consumer `name`.
    pub fn consumer(&self, name: &[u8]) -> Option<&Consumer> {
        self.consumers.get(name)
    }

    /// Adds consumer `name` seen and active at the given times; false when it exists.
    pub fn create_consumer(&mut self, name: &[u8], seen_time: u64, active_time: u64) -> bool {
        if self.consumers.contains_key(name) {
            return false;
        }
        let consumer = Consumer {
            seen_time,
            active_time,
            pending: BTreeSet::new(),
        };
        self.consumers.insert(name.into(), consumer);
        true
    }

    /// Removes consumer `name` and its pending entries; returns how many were pending, None
    /// when there is no such consumer.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let consumer = self.consumers.remove(name)?;
        for id in &consumer.pending {
            self.pending.remove(id);
        }
        Some(consumer.pending.len())
    }

    /// Records `id` as delivered to `consumer` (which must exist) with `nack`'s time and
    /// count, taking it from the consumer that had it, if another.
    pub fn set_pending(
        &mut self,
        id: StreamId,
        delivery_time: u64,
        delivery_count: u64,
        consumer: &[u8],
    ) {
        let nack = Nack {
            delivery_time,
            delivery_count,
            consumer: consumer.into(),
        };
        if let Some(old) = self.pending.insert(id, nack) {
            if let Some(c) = self.consumers.get_mut(&old.consumer) {
                c.pending.remove(&id);
            }
        }
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.pending.insert(id);
        }
    }

    /// Acknowledges `id`: removes it from the PEL; false when it was not pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(nack) = self.pending.remove(&id) else {
            return false;
        };
        if let Some(c) = self.consumers.get_mut(&nack.consumer) {
            c.pending.remove(&id);
        }
        true
    }

    /// Sets every consumer's active time to its seen time, as a load of a format without
    /// active times (RDB types 15 and 19) does.
    pub fn use_seen_as_active(&mut self) {
        for c in self.consumers.values_mut() {
            c.active_time = c.seen_time;
        }
    }

    /// Heap bytes held: the PEL and consumer maps, names, and each consumer's PEL.
    pub fn memory_bytes(&self) -> usize {
        let names: usize = self.pending.values().map(|n| n.consumer.len()).sum();
        let consumers: usize = self
            .consumers
            .iter()
            .map(|(name, c)| name.len() + btree_bytes::<StreamId, ()>(c.pending.len()))
            .sum();
        btree_bytes::<StreamId, Nack>(self.pending.len())
            + names
            + btree_bytes::<Box<[u8]>, Consumer>(self.consumers.len())
            + consumers
    }

    /// Checks that the group's PEL and the consumers' sets agree (every pending entry owned
    /// by exactly the consumer it names).
    pub fn check(&self) -> Result<(), String> {
        let owned: usize = self.consumers.values().map(|c| c.pending.len()).sum();
        if owned != self.pending.len() {
            return Err("consumer group PEL entries without a consumer".into());
        }
        for (name, c) in &self.consumers {
            for id in &c.pending {
                match self.pending.get(id) {
                    Some(n) if n.consumer == *name => {}
                    _ => return Err(format!("consumer PEL entry {id} not in the group PEL")),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_entries_move_between_consumers_and_go_with_them() {
        let mut g = Group::new(StreamId::new(5, 0), Some(3));
        assert!(g.create_consumer(b"a", 1, 0));
        assert!(!g.create_consumer(b"a", 2, 0));
        assert!(g.create_consumer(b"b", 1, 0));
        g.set_pending(StreamId::new(1, 0), 10, 1, b"a");
        g.set_pending(StreamId::new(2, 0), 10, 1, b"a");
        g.set_pending(StreamId::new(2, 0), 20, 2, b"b");
        g.check().unwrap();
        assert_eq!(g.consumer(b"a").unwrap().pending.len(), 1);
        assert_eq!(&*g.pending()[&StreamId::new(2, 0)].consumer, b"b");
        assert!(g.ack(StreamId::new(1, 0)));
        assert!(!g.ack(StreamId::new(1, 0)));
        assert_eq!(g.delete_consumer(b"b"), Some(1));
        assert_eq!(g.delete_consumer(b"b"), None);
        assert!(g.pending().is_empty());
        g.check().unwrap();
    }
}
