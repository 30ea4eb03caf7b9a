//! Consumer groups: the last delivered id, the read counter, the pending entries list
//! (PEL: delivered, not yet acknowledged) and the consumers, each with its own PEL.
//!
//! # Layout of the pending entries
//!
//! ```text
//! pending: BTreeMap<StreamId, Pending>   the group's PEL: 16 B id -> 24 B record (delivery
//!                                        time 8, delivery count 8, consumer slot 4 + 4
//!                                        padding), ~64 B of tree per entry at 7 a leaf
//! slots: Vec<Option<Consumer>>           the consumers, by slot (a record names its
//!                                        consumer by slot, not by a copy of its name);
//!                                        freed slots listed in `free` for reuse
//! by_name: BTreeMap<Box<[u8]>, u32>      name -> slot, in name order
//! Consumer::ids: BTreeSet<StreamId>      the ids delivered to the consumer, in id order,
//!                                        stale ones included (below), ~23 B per id
//! ```
//!
//! A consumer's set is lazy: acknowledging an id, or moving it to another consumer, takes it
//! out of the group's map and lowers its consumer's count (`owned`) but leaves it in the
//! consumer's set, so XACK walks one tree of the two. An id of a consumer's set is the
//! consumer's while the group's map names the consumer's slot for it; readers of the set
//! (XREADGROUP's history, XPENDING of a consumer, XINFO FULL, RDB and AOF writers) skip the
//! others. An id leaving from the front of the set goes at once, with the stale ids behind
//! it, so acknowledgements in id order (the common case) leave no stale id, and a read from
//! the set's start never walks past stale ones. When a consumer's stale ids outnumber both
//! its own and [`COMPACT_SLACK`], the set drops them in one id-order pass; each stale id was
//! left by one acknowledgement or move since the last pass, so the pass costs at most two
//! lookups per such operation.

use std::collections::{BTreeMap, BTreeSet};

use super::info::btree_bytes;
use super::StreamId;

/// Stale ids a consumer's set may hold beyond as many as it owns before it is compacted
/// (a few under test, so that the proptests compact often).
const COMPACT_SLACK: usize = if cfg!(test) { 2 } else { 64 };

/// A delivered, unacknowledged entry with its consumer's name, as handed out of a group
/// (Redis's streamNACK).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nack {
    /// When it was last delivered, Unix milliseconds.
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
    /// The consumer it was last delivered to.
    pub consumer: Box<[u8]>,
}

/// A pending entry as read in place: its record and its consumer's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NackRef<'a> {
    /// When it was last delivered, Unix milliseconds.
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
    /// The consumer it was last delivered to.
    pub consumer: &'a [u8],
}

impl NackRef<'_> {
    /// The same record, owning a copy of the consumer's name.
    pub fn to_nack(&self) -> Nack {
        Nack {
            delivery_time: self.delivery_time,
            delivery_count: self.delivery_count,
            consumer: self.consumer.into(),
        }
    }
}

/// A pending entry's record in the group's map: its consumer is a slot of the group.
#[derive(Clone, Copy, Debug)]
struct Pending {
    delivery_time: u64,
    delivery_count: u64,
    owner: u32,
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
#[derive(Clone, Debug)]
pub struct Consumer {
    /// Last time it tried to read or claim, Unix milliseconds.
    pub seen_time: u64,
    /// Last time it read or claimed something, Unix milliseconds ([`NEVER`]: never).
    pub active_time: u64,
    name: Box<[u8]>,
    slot: u32,
    /// How many ids are pending for it.
    owned: usize,
    /// Its ids and stale ones (see the module's comment).
    ids: BTreeSet<StreamId>,
}

impl Consumer {
    /// Its name.
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// How many entries are pending for it.
    pub fn pending_len(&self) -> usize {
        self.owned
    }

    /// Whether its set holds more stale ids than live ones (and than the slack): then it
    /// is compacted.
    fn too_stale(&self) -> bool {
        self.ids.len() - self.owned > self.owned.max(COMPACT_SLACK)
    }
}

/// A consumer group.
#[derive(Clone, Debug)]
pub struct Group {
    /// The last id delivered to the group.
    pub last_id: StreamId,
    /// Entries the group read, counted from the stream's first ever entry; None when it
    /// cannot be known (Redis's SCG_INVALID_ENTRIES_READ).
    pub entries_read: Option<u64>,
    pending: BTreeMap<StreamId, Pending>,
    slots: Vec<Option<Consumer>>,
    free: Vec<u32>,
    by_name: BTreeMap<Box<[u8]>, u32>,
}

impl Group {
    /// A group with no consumers and nothing pending.
    pub fn new(last_id: StreamId, entries_read: Option<u64>) -> Group {
        Group {
            last_id,
            entries_read,
            pending: BTreeMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            by_name: BTreeMap::new(),
        }
    }

    /// The consumer in `slot` (which a record or the name map names, so it is taken).
    fn slot(&self, slot: u32) -> &Consumer {
        self.slots[slot as usize].as_ref().expect("a taken slot")
    }

    /// The consumer in `slot`, for writing.
    fn slot_mut(&mut self, slot: u32) -> &mut Consumer {
        self.slots[slot as usize].as_mut().expect("a taken slot")
    }

    /// A record as handed out, with its consumer's name.
    fn view(&self, p: &Pending) -> NackRef<'_> {
        NackRef {
            delivery_time: p.delivery_time,
            delivery_count: p.delivery_count,
            consumer: &self.slot(p.owner).name,
        }
    }

    /// How many entries are pending.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// The smallest and largest pending ids; None when nothing is pending.
    pub fn pending_bounds(&self) -> Option<(StreamId, StreamId)> {
        let first = self.pending.first_key_value()?.0;
        let last = self.pending.last_key_value()?.0;
        Some((*first, *last))
    }

    /// The record of pending entry `id`.
    pub fn nack(&self, id: StreamId) -> Option<NackRef<'_>> {
        self.pending.get(&id).map(|p| self.view(p))
    }

    /// The pending entries from `start` on, in id order.
    pub fn pending_from(&self, start: StreamId) -> impl Iterator<Item = (StreamId, NackRef<'_>)> {
        self.pending
            .range(start..)
            .map(|(id, p)| (*id, self.view(p)))
    }

    /// The entries pending for consumer `c` (one of this group's) from `start` on, in id
    /// order.
    pub fn consumer_pending<'a>(
        &'a self,
        c: &'a Consumer,
        start: StreamId,
    ) -> impl Iterator<Item = (StreamId, NackRef<'a>)> {
        c.ids
            .range(start..)
            .filter_map(move |id| match self.pending.get(id) {
                Some(p) if p.owner == c.slot => Some((*id, self.view(p))),
                _ => None,
            })
    }

    /// How many consumers the group has.
    pub fn consumers_len(&self) -> usize {
        self.by_name.len()
    }

    /// The consumers, in name order.
    pub fn consumers(&self) -> impl Iterator<Item = &Consumer> {
        self.by_name.values().map(|&slot| self.slot(slot))
    }

    /// The consumer `name`.
    pub fn consumer(&self, name: &[u8]) -> Option<&Consumer> {
        self.by_name.get(name).map(|&slot| self.slot(slot))
    }

    /// Adds consumer `name` seen and active at the given times; false when it exists.
    pub fn create_consumer(&mut self, name: &[u8], seen_time: u64, active_time: u64) -> bool {
        if self.by_name.contains_key(name) {
            return false;
        }
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                u32::try_from(self.slots.len() - 1).expect("under 2^32 consumers")
            }
        };
        self.slots[slot as usize] = Some(Consumer {
            seen_time,
            active_time,
            name: name.into(),
            slot,
            owned: 0,
            ids: BTreeSet::new(),
        });
        self.by_name.insert(name.into(), slot);
        true
    }

    /// Removes consumer `name` and its pending entries; returns how many were pending, None
    /// when there is no such consumer.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let slot = self.by_name.remove(name)?;
        let consumer = self.slots[slot as usize].take().expect("a taken slot");
        self.free.push(slot);
        for id in &consumer.ids {
            if self.pending.get(id).is_some_and(|p| p.owner == slot) {
                self.pending.remove(id);
            }
        }
        Some(consumer.owned)
    }

    /// Records `id` as delivered to `consumer` (which must exist; nothing happens
    /// otherwise) with the given time and count, taking it from the consumer that had it,
    /// if another.
    pub fn set_pending(
        &mut self,
        id: StreamId,
        delivery_time: u64,
        delivery_count: u64,
        consumer: &[u8],
    ) {
        if let Some(&owner) = self.by_name.get(consumer) {
            self.put(id, delivery_time, delivery_count, owner);
        }
    }

    /// Records `id` as delivered to the consumer in slot `owner`.
    fn put(&mut self, id: StreamId, delivery_time: u64, delivery_count: u64, owner: u32) {
        let record = Pending {
            delivery_time,
            delivery_count,
            owner,
        };
        match self.pending.insert(id, record) {
            Some(old) if old.owner == owner => {}
            old => {
                if let Some(old) = old {
                    self.disown(old.owner, id);
                }
                let c = self.slot_mut(owner);
                c.owned += 1;
                c.ids.insert(id);
            }
        }
    }

    /// Pending `id` of the consumer in `slot` went (acknowledged, moved or dropped): lowers
    /// its count. The id stays in the consumer's set, stale, unless it is the set's first:
    /// then it goes with the stale ids after it, so ids acknowledged in order leave none
    /// and a read of the consumer's list from its start never walks past stale ones. The
    /// set is compacted when the stale ids are too many.
    fn disown(&mut self, slot: u32, id: StreamId) {
        let Group { pending, slots, .. } = self;
        let c = slots[slot as usize].as_mut().expect("a taken slot");
        c.owned -= 1;
        let live = |id: &StreamId| pending.get(id).is_some_and(|p| p.owner == slot);
        if c.ids.first() == Some(&id) {
            c.ids.pop_first();
            while c.ids.first().is_some_and(|first| !live(first)) {
                c.ids.pop_first();
            }
        }
        if c.too_stale() {
            c.ids.retain(live);
        }
    }

    /// Consumer `name` tried to read or claim at `now`: created when absent (seen now,
    /// never active), its seen time set. Returns whether it was created.
    pub fn see_consumer(&mut self, name: &[u8], now: u64) -> bool {
        let created = self.create_consumer(name, now, NEVER);
        let slot = self.by_name[name];
        self.slot_mut(slot).seen_time = now;
        created
    }

    /// Delivers `id` for the first time to `consumer` (which exists) at `now`, as
    /// XREADGROUP `>` does: delivered once, taken from the consumer that had it pending
    /// (after XGROUP SETID moved the last id back), the consumer active now.
    pub fn deliver(&mut self, id: StreamId, now: u64, consumer: &[u8]) {
        let Some(&owner) = self.by_name.get(consumer) else {
            return;
        };
        self.put(id, now, 1, owner);
        self.slot_mut(owner).active_time = now;
    }

    /// Up to `count` (0: all) ids pending for `consumer` from `start` on, in id order (the
    /// history XREADGROUP serves); none for a missing consumer.
    pub fn history(&self, consumer: &[u8], start: StreamId, count: usize) -> Vec<StreamId> {
        let Some(c) = self.consumer(consumer) else {
            return Vec::new();
        };
        let limit = if count == 0 { usize::MAX } else { count };
        self.consumer_pending(c, start)
            .take(limit)
            .map(|(id, _)| id)
            .collect()
    }

    /// Delivers pending `id` again at `now` (history read of an entry that still exists):
    /// its time is now, its count one more.
    pub fn redeliver(&mut self, id: StreamId, now: u64) {
        if let Some(p) = self.pending.get_mut(&id) {
            p.delivery_time = now;
            p.delivery_count += 1;
        }
    }

    /// Removes pending `id`, returning its record with its consumer's name.
    fn remove(&mut self, id: StreamId) -> Option<Nack> {
        let p = self.pending.remove(&id)?;
        let nack = Nack {
            delivery_time: p.delivery_time,
            delivery_count: p.delivery_count,
            consumer: self.slot(p.owner).name.clone(),
        };
        self.disown(p.owner, id);
        Some(nack)
    }

    /// Claims `id` for `consumer` (which exists) as XCLAIM and XAUTOCLAIM do, `exists`
    /// telling whether the stream still holds the entry. See [`Claim`].
    pub fn claim(&mut self, id: StreamId, consumer: &[u8], exists: bool, how: &ClaimHow) -> Claim {
        if !exists {
            return self.remove(id).map_or(Claim::Skipped, Claim::Dropped);
        }
        let Some(&owner) = self.by_name.get(consumer) else {
            return Claim::Skipped;
        };
        let count = match self.pending.get(&id) {
            Some(p) => {
                let idle = (how.now as i64).wrapping_sub(p.delivery_time as i64);
                if how.min_idle != 0 && idle < how.min_idle {
                    return Claim::Skipped;
                }
                p.delivery_count
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
        self.put(id, how.delivery_time, count, owner);
        let c = self.slot_mut(owner);
        c.active_time = how.now;
        Claim::Claimed(Nack {
            delivery_time: how.delivery_time,
            delivery_count: count,
            consumer: c.name.clone(),
        })
    }

    /// Acknowledges `id`: removes it from the PEL; false when it was not pending. Only the
    /// group's map is searched: the id goes stale in its consumer's set.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(p) = self.pending.remove(&id) else {
            return false;
        };
        self.disown(p.owner, id);
        true
    }

    /// Sets every consumer's active time to its seen time, as a load of a format without
    /// active times (RDB types 15 and 19) does.
    pub fn use_seen_as_active(&mut self) {
        for c in self.slots.iter_mut().flatten() {
            c.active_time = c.seen_time;
        }
    }

    /// Heap bytes held: the PEL map, the consumer table and name map, names, and each
    /// consumer's set.
    pub fn memory_bytes(&self) -> usize {
        let consumers: usize = self
            .consumers()
            .map(|c| 2 * c.name.len() + btree_bytes::<StreamId, ()>(c.ids.len()))
            .sum();
        btree_bytes::<StreamId, Pending>(self.pending.len())
            + self.slots.capacity() * std::mem::size_of::<Option<Consumer>>()
            + self.free.capacity() * std::mem::size_of::<u32>()
            + btree_bytes::<Box<[u8]>, u32>(self.by_name.len())
            + consumers
    }

    /// Checks that the group's PEL and the consumers agree: every record names a consumer
    /// whose set holds its id, each consumer's count is the number of records naming it,
    /// the name map and the slots match, and no set is past its compaction bound.
    pub fn check(&self) -> Result<(), String> {
        let mut owned = vec![0usize; self.slots.len()];
        for (id, p) in &self.pending {
            match self.slots.get(p.owner as usize) {
                Some(Some(c)) if c.ids.contains(id) => owned[p.owner as usize] += 1,
                _ => return Err(format!("PEL entry {id} not in its consumer's set")),
            }
        }
        let taken = self.slots.iter().flatten().count();
        if taken != self.by_name.len() || taken + self.free.len() != self.slots.len() {
            return Err("consumer slots and names disagree".into());
        }
        for (name, &slot) in &self.by_name {
            let c = self.slot(slot);
            if c.name != *name || c.slot != slot {
                return Err("consumer slots and names disagree".into());
            }
            if c.owned != owned[slot as usize] {
                return Err(format!("consumer {:?} counts {} pending", name, c.owned));
            }
            if c.too_stale() {
                return Err("consumer set not compacted".into());
            }
        }
        Ok(())
    }
}

/// Groups are equal when they hold the same counters, pending records and consumers, however
/// their slots are numbered and whatever stale ids their consumers' sets hold.
impl PartialEq for Group {
    fn eq(&self, other: &Group) -> bool {
        let consumers = |g: &Group| -> Vec<(Vec<u8>, u64, u64)> {
            g.consumers()
                .map(|c| (c.name.to_vec(), c.seen_time, c.active_time))
                .collect()
        };
        self.last_id == other.last_id
            && self.entries_read == other.entries_read
            && self
                .pending_from(StreamId::MIN)
                .eq(other.pending_from(StreamId::MIN))
            && consumers(self) == consumers(other)
    }
}

impl Eq for Group {}

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
                    .pending_from(StreamId::MIN)
                    .map(|(id, n)| (id.ms, (n.delivery_time, n.delivery_count, n.consumer[0])))
                    .collect();
                prop_assert_eq!(g.pending_len(), m.pending.len());
                prop_assert_eq!(&pending, &m.pending);
                let consumers: BTreeMap<u8, (u64, u64)> = g
                    .consumers()
                    .map(|c| (c.name()[0], (c.seen_time, c.active_time)))
                    .collect();
                prop_assert_eq!(g.consumers_len(), m.consumers.len());
                prop_assert_eq!(&consumers, &m.consumers);
                for c in m.consumers.keys() {
                    let mine: Vec<u64> = m.pending.iter().filter(|p| p.1 .2 == *c).map(|p| *p.0).collect();
                    let hist: Vec<u64> = g.history(&[*c], StreamId::MIN, 0).iter().map(|i| i.ms).collect();
                    prop_assert_eq!(&hist, &mine);
                    let consumer = g.consumer(&[*c]).unwrap();
                    prop_assert_eq!(consumer.pending_len(), mine.len());
                    let from_5: Vec<u64> = g
                        .consumer_pending(consumer, StreamId::new(5, 0))
                        .map(|(id, n)| {
                            assert_eq!(n.consumer, &[*c]);
                            id.ms
                        })
                        .collect();
                    prop_assert_eq!(from_5, mine.iter().copied().filter(|&i| i >= 5).collect::<Vec<u64>>());
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
        assert_eq!(g.consumer(b"a").unwrap().pending_len(), 1);
        assert_eq!(g.nack(StreamId::new(2, 0)).unwrap().consumer, b"b");
        assert!(g.ack(StreamId::new(1, 0)));
        assert!(!g.ack(StreamId::new(1, 0)));
        assert_eq!(g.delete_consumer(b"b"), Some(1));
        assert_eq!(g.delete_consumer(b"b"), None);
        assert_eq!(g.pending_len(), 0);
        g.check().unwrap();
    }

    #[test]
    fn ids_leaving_from_the_front_leave_no_stale_ids_before_the_live_ones() {
        let mut g = Group::new(StreamId::MIN, None);
        g.create_consumer(b"c", 1, 1);
        for ms in 1..=200 {
            g.set_pending(StreamId::new(ms, 0), 5, 1, b"c");
        }
        // Out of order: 3 goes stale behind the live 1 and 2; acking 1 and 2 then takes it.
        assert!(g.ack(StreamId::new(3, 0)));
        for ms in [1, 2] {
            assert!(g.ack(StreamId::new(ms, 0)));
        }
        for ms in 4..=150 {
            assert!(g.ack(StreamId::new(ms, 0)));
        }
        let c = g.consumer(b"c").unwrap();
        assert_eq!((c.pending_len(), c.ids.len()), (50, 50));
        assert_eq!(c.ids.first(), Some(&StreamId::new(151, 0)));
        g.check().unwrap();
    }

    #[test]
    fn groups_compare_by_content_not_by_slots_or_stale_ids() {
        let mut a = Group::new(StreamId::MIN, None);
        a.create_consumer(b"x", 1, 1);
        a.create_consumer(b"y", 1, 1);
        a.set_pending(StreamId::new(1, 0), 5, 1, b"y");
        a.set_pending(StreamId::new(2, 0), 5, 1, b"y");
        assert!(a.ack(StreamId::new(2, 0)));
        let mut b = Group::new(StreamId::MIN, None);
        b.create_consumer(b"y", 1, 1);
        b.create_consumer(b"x", 1, 1);
        b.set_pending(StreamId::new(1, 0), 5, 1, b"y");
        assert_eq!(a, b);
        b.redeliver(StreamId::new(1, 0), 6);
        assert_ne!(a, b);
    }

    #[test]
    fn the_layout_comment_sizes_hold() {
        assert_eq!(std::mem::size_of::<StreamId>(), 16);
        assert_eq!(std::mem::size_of::<Pending>(), 24);
    }

    #[test]
    fn acknowledged_ids_leave_the_consumer_set_by_compaction() {
        let mut g = Group::new(StreamId::MIN, None);
        g.create_consumer(b"a", 0, 0);
        for i in 0..100 {
            g.deliver(StreamId::new(i, 0), 5, b"a");
        }
        for i in 0..90 {
            assert!(g.ack(StreamId::new(i, 0)));
            g.check().unwrap();
        }
        let a = g.consumer(b"a").unwrap();
        assert_eq!(a.pending_len(), 10);
        assert!(a.ids.len() <= 10 + 10.max(COMPACT_SLACK));
        assert_eq!(
            g.history(b"a", StreamId::MIN, 3),
            [90, 91, 92].map(|i| StreamId::new(i, 0))
        );
        // An acknowledged id delivered again is the consumer's once more.
        g.deliver(StreamId::new(89, 0), 6, b"a");
        assert_eq!(g.history(b"a", StreamId::MIN, 1), [StreamId::new(89, 0)]);
        g.check().unwrap();
    }
}
