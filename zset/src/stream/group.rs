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

/// How XCLAIM or XAUTOCLAIM claims (see [`Group::claim`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimHow {
    /// The command's time, Unix milliseconds.
    pub now: u64,
    /// Entries idle (since their last delivery) for less are left alone (0: none are).
    pub min_idle: i64,
    /// The delivery time a claimed entry gets.
    pub delivery_time: u64,
    /// The delivery count a claimed entry gets (None: one more, or unchanged with JUSTID).
    pub retry_count: Option<u64>,
    /// JUSTID: the count stays as it is unless `retry_count` sets it.
    pub justid: bool,
    /// FORCE: an entry of the stream not pending is made pending and claimed.
    pub force: bool,
}

/// What [`Group::claim`] did with one id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The entry is now the consumer's, with this record.
    Claimed(Nack),
    /// The entry is gone from the stream: its pending record (this one) was removed.
    Dropped(Nack),
    /// Nothing: not pending (without FORCE), not in the stream, or not idle long enough.
    Skipped,
}

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

    /// Consumer `name` tried to read or claim at `now`: created when absent (seen now,
    /// never active), its seen time set. Returns whether it was created.
    pub fn see_consumer(&mut self, name: &[u8], now: u64) -> bool {
        let created = self.create_consumer(name, now, NEVER);
        if let Some(c) = self.consumers.get_mut(name) {
            c.seen_time = now;
        }
        created
    }

    /// Delivers `id` for the first time to `consumer` (which exists) at `now`, as
    /// XREADGROUP `>` does: delivered once, taken from the consumer that had it pending
    /// (after XGROUP SETID moved the last id back), the consumer active now.
    pub fn deliver(&mut self, id: StreamId, now: u64, consumer: &[u8]) -> &Nack {
        self.set_pending(id, now, 1, consumer);
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.active_time = now;
        }
        &self.pending[&id]
    }

    /// Up to `count` (0: all) ids pending for `consumer` from `start` on, in id order (the
    /// history XREADGROUP serves); none for a missing consumer.
    pub fn history(&self, consumer: &[u8], start: StreamId, count: usize) -> Vec<StreamId> {
        let Some(c) = self.consumers.get(consumer) else {
            return Vec::new();
        };
        let limit = if count == 0 { usize::MAX } else { count };
        c.pending.range(start..).take(limit).copied().collect()
    }

    /// Delivers pending `id` again at `now` (history read of an entry that still exists):
    /// its time is now, its count one more.
    pub fn redeliver(&mut self, id: StreamId, now: u64) {
        if let Some(n) = self.pending.get_mut(&id) {
            n.delivery_time = now;
            n.delivery_count += 1;
        }
    }

    /// Claims `id` for `consumer` (which exists) as XCLAIM and XAUTOCLAIM do, `exists`
    /// telling whether the stream still holds the entry. See [`Claim`].
    pub fn claim(&mut self, id: StreamId, consumer: &[u8], exists: bool, how: &ClaimHow) -> Claim {
        if !exists {
            return match self.pending.remove(&id) {
                Some(old) => {
                    if let Some(c) = self.consumers.get_mut(&old.consumer) {
                        c.pending.remove(&id);
                    }
                    Claim::Dropped(old)
                }
                None => Claim::Skipped,
            };
        }
        let count = match self.pending.get(&id) {
            Some(n) => {
                let idle = (how.now as i64).wrapping_sub(n.delivery_time as i64);
                if how.min_idle != 0 && idle < how.min_idle {
                    return Claim::Skipped;
                }
                n.delivery_count
            }
            // FORCE makes it pending as a first delivery, then claims it.
            None if how.force => 1,
            None => return Claim::Skipped,
        };
        let count = match how.retry_count {
            Some(n) => n,
            None if how.justid => count,
            None => count + 1,
        };
        self.set_pending(id, how.delivery_time, count, consumer);
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.active_time = how.now;
        }
        Claim::Claimed(self.pending[&id].clone())
    }

    /// The pending entries from `start` on, in id order.
    pub fn pending_from(&self, start: StreamId) -> impl Iterator<Item = (&StreamId, &Nack)> {
        self.pending.range(start..)
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
    use proptest::prelude::*;

    /// The model: id -> (time, count, consumer); consumer -> (seen, active).
    #[derive(Default)]
    struct Model {
        pending: BTreeMap<u64, (u64, u64, u8)>,
        consumers: BTreeMap<u8, (u64, u64)>,
    }

    #[derive(Clone, Debug)]
    enum Op {
        See(u8, u64),
        Deliver(u64, u8, u64),
        Redeliver(u64, u64),
        Claim(u64, u8, bool, ClaimHow),
        Ack(u64),
        Delete(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        let how = (
            0u64..50,
            -2i64..20,
            0u64..50,
            proptest::option::of(0u64..5),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(now, min_idle, delivery_time, retry_count, justid, force)| ClaimHow {
                    now,
                    min_idle,
                    delivery_time,
                    retry_count,
                    justid,
                    force,
                },
            );
        prop_oneof![
            (0u8..4, 0u64..50).prop_map(|(c, t)| Op::See(c, t)),
            (0u64..12, 0u8..4, 0u64..50).prop_map(|(i, c, t)| Op::Deliver(i, c, t)),
            (0u64..12, 0u64..50).prop_map(|(i, t)| Op::Redeliver(i, t)),
            (0u64..12, 0u8..4, any::<bool>(), how).prop_map(|(i, c, e, h)| Op::Claim(i, c, e, h)),
            (0u64..12).prop_map(Op::Ack),
            (0u8..4).prop_map(Op::Delete),
        ]
    }

    fn apply(m: &mut Model, g: &mut Group, op: &Op) {
        let id = |i: u64| StreamId::new(i, 0);
        match *op {
            Op::See(c, t) => {
                let created = !m.consumers.contains_key(&c);
                m.consumers.entry(c).or_insert((t, NEVER)).0 = t;
                assert_eq!(g.see_consumer(&[c], t), created);
            }
            Op::Deliver(i, c, t) => {
                m.consumers.entry(c).or_insert((t, NEVER)).0 = t;
                g.see_consumer(&[c], t);
                m.pending.insert(i, (t, 1, c));
                m.consumers.get_mut(&c).unwrap().1 = t;
                g.deliver(id(i), t, &[c]);
            }
            Op::Redeliver(i, t) => {
                if let Some(p) = m.pending.get_mut(&i) {
                    *p = (t, p.1 + 1, p.2);
                }
                g.redeliver(id(i), t);
            }
            Op::Claim(i, c, exists, how) => {
                m.consumers.entry(c).or_insert((how.now, NEVER)).0 = how.now;
                g.see_consumer(&[c], how.now);
                let expected = match m.pending.get(&i).copied() {
                    Some(_) if !exists => {
                        m.pending.remove(&i);
                        Some(false)
                    }
                    None if !exists || !how.force => None,
                    Some((t, _, _))
                        if how.min_idle != 0 && (how.now as i64 - t as i64) < how.min_idle =>
                    {
                        None
                    }
                    found => {
                        let count = found.map_or(1, |p| p.1);
                        let count =
                            how.retry_count
                                .unwrap_or(if how.justid { count } else { count + 1 });
                        m.pending.insert(i, (how.delivery_time, count, c));
                        m.consumers.get_mut(&c).unwrap().1 = how.now;
                        Some(true)
                    }
                };
                let got = match g.claim(id(i), &[c], exists, &how) {
                    Claim::Claimed(_) => Some(true),
                    Claim::Dropped(_) => Some(false),
                    Claim::Skipped => None,
                };
                assert_eq!(got, expected);
            }
            Op::Ack(i) => assert_eq!(g.ack(id(i)), m.pending.remove(&i).is_some()),
            Op::Delete(c) => {
                let n = m.consumers.remove(&c).map(|_| {
                    let before = m.pending.len();
                    m.pending.retain(|_, p| p.2 != c);
                    before - m.pending.len()
                });
                assert_eq!(g.delete_consumer(&[c]), n);
            }
        }
    }

    proptest! {
        #[test]
        fn group_matches_model(ops in proptest::collection::vec(op(), 1..60)) {
            let mut m = Model::default();
            let mut g = Group::new(StreamId::MIN, None);
            for op in &ops {
                apply(&mut m, &mut g, op);
                g.check().unwrap();
                let pending: BTreeMap<u64, (u64, u64, u8)> = g
                    .pending()
                    .iter()
                    .map(|(id, n)| (id.ms, (n.delivery_time, n.delivery_count, n.consumer[0])))
                    .collect();
                prop_assert_eq!(&pending, &m.pending);
                let consumers: BTreeMap<u8, (u64, u64)> = g
                    .consumers()
                    .iter()
                    .map(|(name, c)| (name[0], (c.seen_time, c.active_time)))
                    .collect();
                prop_assert_eq!(&consumers, &m.consumers);
                for c in m.consumers.keys() {
                    let mine: Vec<u64> = m.pending.iter().filter(|p| p.1 .2 == *c).map(|p| *p.0).collect();
                    let hist: Vec<u64> = g.history(&[*c], StreamId::MIN, 0).iter().map(|i| i.ms).collect();
                    prop_assert_eq!(hist, mine);
                }
            }
        }
    }

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
