//! The sorted-set value: the `goblin-zset` engine with Redis's write rules on top.
//!
//! The engine decides the encoding (its `zset-max-listpack-*` thresholds, conversion to the
//! large form, and the up-front conversion of Redis 7.2's zsetTypeMaybeConvert); this type
//! adds the one rule the engine leaves to Redis semantics: a listpack stores a score of -0
//! as the integer 0, so a member that lands in a small set loses the sign of a zero, while
//! one whose insertion converts the set (Redis converts before inserting) keeps it.
//!
//! Reads go straight to the engine through `Deref`; writes go through the methods here, so
//! a command can neither skip the rule nor test a threshold.

use super::db::{Db, EntryMut, Slot};
use super::{Keyspace, Value, WrongType};
use goblin_zset::{stored_bytes, Config, RecordInsert, RecordSet, ZSet};
use std::ops::{Deref, Range};

/// A sorted set as the keyspace stores it.
#[derive(Clone, Default)]
pub struct SortedSet(ZSet);

impl Deref for SortedSet {
    type Target = ZSet;

    #[inline]
    fn deref(&self) -> &ZSet {
        &self.0
    }
}

impl From<ZSet> for SortedSet {
    /// Wraps a set built by the engine directly (the RDB loader's, as it was written).
    fn from(set: ZSet) -> SortedSet {
        SortedSet(set)
    }
}

impl SortedSet {
    /// An empty set for ZADD of `pairs`: encoded, as Redis 7.2 creates it, from the count
    /// and the first member's length, and reserved for all of them.
    pub fn for_zadd(pairs: &[(f64, &[u8])], cfg: &Config) -> SortedSet {
        let bytes = pairs.iter().map(|&(s, m)| stored_bytes(m, s)).sum();
        let first = pairs.first().map_or(0, |(_, m)| m.len());
        SortedSet(ZSet::with_expected(pairs.len(), first, bytes, cfg))
    }

    /// The set of `members` (unique, any order), encoded as Redis encodes a STORE result of
    /// that size.
    pub fn from_members(members: &[(Vec<u8>, f64)], cfg: &Config) -> SortedSet {
        let longest = members.iter().map(|(m, _)| m.len()).max().unwrap_or(0);
        let bytes = members.iter().map(|(m, s)| stored_bytes(m, *s)).sum();
        let mut set = SortedSet(ZSet::with_expected(members.len(), longest, bytes, cfg));
        for (member, score) in members {
            set.insert(member, *score, cfg);
        }
        set
    }

    /// Inserts or updates a member; returns the previous score. A -0 that lands in the
    /// small form is stored as 0.
    #[inline]
    pub fn insert(&mut self, member: &[u8], score: f64, cfg: &Config) -> Option<f64> {
        let score = if is_negative_zero(score) && self.0.insert_stays_small(member, cfg) {
            0.0
        } else {
            score
        };
        self.0.insert(member, score, cfg)
    }

    /// Before a write of up to `incoming` members: converts a small set that cannot hold
    /// them (Redis's zsetTypeMaybeConvert).
    #[inline]
    pub fn maybe_convert(&mut self, incoming: usize, cfg: &Config) {
        self.0.maybe_convert(incoming, cfg);
    }

    /// Removes `member`, returning its score.
    #[inline]
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        self.0.remove(member)
    }

    /// Removes the members at ascending ranks `ranks` (clamped); returns how many.
    #[inline]
    pub fn remove_rank_range(&mut self, ranks: Range<usize>) -> usize {
        self.0.remove_rank_range(ranks)
    }

    /// Repacks for memory at load factor `density` (GOBLIN.OPTIMIZE).
    pub fn optimize(&mut self, density: f64) {
        self.0.optimize(density);
    }
}

/// A small sorted set written where its key's record holds it, with no copy checked out
/// and put back (see `Db::record_zset`).
pub struct RecordZSet<'a> {
    db: &'a mut Db,
    slot: Slot,
}

impl<'a> RecordZSet<'a> {
    /// The small sorted set the record in `slot` of `db` holds (see `Db::zset_for_write`).
    pub(super) fn new(db: &'a mut Db, slot: Slot) -> RecordZSet<'a> {
        RecordZSet { db, slot }
    }

    /// The score of `member`; None when the set is no longer in the record (a write moved
    /// it beside the table: [`RecordZSet::into_entry`] gives it).
    #[inline]
    pub fn score(&self, member: &[u8]) -> Option<Option<f64>> {
        Some(self.db.record_zset(self.slot)?.score(member))
    }

    /// Inserts or updates a member as [`SortedSet::insert`] does (a -0 is stored as 0: a
    /// write here leaves the set small), unless the record declines the write
    /// ([`RecordInsert::Declined`], nothing changed): then [`RecordZSet::into_entry`] gives
    /// the set for the general path.
    #[inline]
    pub fn insert(&mut self, member: &[u8], score: f64, cfg: &Config) -> RecordInsert {
        let score = if is_negative_zero(score) { 0.0 } else { score };
        self.db.insert_in_record_zset(self.slot, member, score, cfg)
    }

    /// Whether the set has no members (created for a write that added none; a set written
    /// past what a record holds, moved beside the table, has some).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.db
            .record_zset(self.slot)
            .is_some_and(|set| set.is_empty())
    }

    /// The key's entry for writing its value (checked out of the record).
    pub fn into_entry(self) -> EntryMut<'a> {
        self.db.write(self.slot)
    }
}

/// A key looked up for a sorted-set write: a small set its record holds, or its entry.
pub enum ZSetMut<'a> {
    /// A small sorted set in the key's record.
    Record(RecordZSet<'a>),
    /// The key's value (of any type).
    Entry(EntryMut<'a>),
}

/// A sorted set looked up for reading its scores: a small one read where its key's record
/// holds it, or the value.
pub enum ZSetRef<'a> {
    /// A small sorted set in the key's record.
    Record(RecordSet<'a>),
    /// The set as a value.
    Set(&'a SortedSet),
}

impl ZSetRef<'_> {
    /// The score of `member`.
    #[inline]
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            ZSetRef::Record(set) => set.score(member),
            ZSetRef::Set(set) => set.score(member),
        }
    }
}

impl Keyspace {
    /// [`Keyspace::lookup_write_or_create`] for a sorted-set write: a key holding a small
    /// sorted set in its record (found, or created empty) is handed out as that, to be
    /// written in place.
    #[inline]
    pub fn lookup_zset_for_write(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        make: impl FnOnce() -> Value,
    ) -> (ZSetMut<'_>, bool) {
        let (slot, created) = self.slot_for_write(db, key, now_ms, make);
        (self.dbs[db].zset_for_write(slot), created)
    }

    /// [`Keyspace::lookup_read`] of a sorted set whose scores are read: a small one its
    /// key's record holds is read there. `Err` when the key holds another type.
    #[inline]
    pub fn lookup_zset_scores(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        touch: bool,
    ) -> Result<Option<ZSetRef<'_>>, WrongType> {
        let Some(slot) = self.slot_for_read(db, key, now_ms, touch) else {
            return Ok(None);
        };
        self.dbs[db].zset_for_scores(slot).map(Some)
    }
}

/// Whether `score` is -0 (equal to 0 with the sign bit set).
#[inline]
fn is_negative_zero(score: f64) -> bool {
    score.to_bits() == (-0.0f64).to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::ValueCow;
    use goblin_zset::Encoding;

    fn sign_of(set: &SortedSet, member: &[u8]) -> bool {
        set.score(member).expect("member").is_sign_negative()
    }

    #[test]
    fn a_small_set_stores_negative_zero_as_zero() {
        let cfg = Config::default();
        let mut set = SortedSet::default();
        set.insert(b"a", -0.0, &cfg);
        assert!(!sign_of(&set, b"a"));
        set.insert(b"b", 1.0, &cfg);
        set.insert(b"b", -0.0, &cfg);
        assert!(!sign_of(&set, b"b"), "an update in a small set too");
    }

    #[test]
    fn negative_zero_survives_in_the_large_form_and_on_conversion() {
        let cfg = Config {
            max_listpack_entries: 2,
            max_listpack_value: 64,
        };
        let mut set = SortedSet::default();
        set.insert(b"a", 1.0, &cfg);
        set.insert(b"b", 2.0, &cfg);
        set.insert(b"c", -0.0, &cfg);
        assert_eq!(set.encoding(), Encoding::Skiplist);
        assert!(
            sign_of(&set, b"c"),
            "the insert that converts keeps the sign"
        );
        set.insert(b"d", -0.0, &cfg);
        assert!(sign_of(&set, b"d"));
    }

    #[test]
    fn constructors_choose_the_encoding_for_what_comes() {
        let cfg = Config {
            max_listpack_entries: 2,
            max_listpack_value: 4,
        };
        let long: &[u8] = b"longer";
        assert_eq!(
            SortedSet::for_zadd(&[(1.0, b"a"), (2.0, long)], &cfg).encoding(),
            Encoding::Listpack,
            "ZADD looks at the first member only"
        );
        assert_eq!(
            SortedSet::for_zadd(&[(1.0, long)], &cfg).encoding(),
            Encoding::Skiplist
        );
        let members = vec![(b"a".to_vec(), -0.0), (long.to_vec(), 1.0)];
        let stored = SortedSet::from_members(&members, &cfg);
        assert_eq!(stored.encoding(), Encoding::Skiplist, "STORE: the longest");
        assert!(sign_of(&stored, b"a"));
        let small = SortedSet::from_members(&members[..1], &cfg);
        assert_eq!(small.encoding(), Encoding::Listpack);
        assert!(!sign_of(&small, b"a"));
    }

    use proptest::prelude::*;

    /// A small set's members and scores (their bits: -0 is not 0) and its encoding.
    fn shown(set: &ZSet) -> (Vec<(Vec<u8>, u64)>, Encoding) {
        let members = set.iter().map(|(m, s)| (m.to_vec(), s.to_bits()));
        (members.collect(), set.encoding())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn record_writes_agree_with_the_set(
            writes in proptest::collection::vec(
                (
                    prop_oneof![
                        (0u32..30).prop_map(|i| format!("member:{i}").into_bytes()),
                        (0u32..30).prop_map(|i| format!("{i}").into_bytes()),
                    ],
                    prop_oneof![
                        (-3i32..1000).prop_map(f64::from),
                        Just(-0.0),
                        Just(0.25),
                    ],
                ),
                1..60,
            ),
            max in 4usize..40,
        ) {
            let cfg = Config { max_listpack_entries: max, max_listpack_value: 64 };
            let mut db = Db::default();
            let mut want = SortedSet::default();
            db.insert(b"z", Value::ZSet(want.clone()), 0);
            for (member, score) in writes {
                let slot = db.find(b"z").unwrap();
                let member: &[u8] = &member;
                let old = want.insert(member, score, &cfg);
                let got = match db.zset_for_write(slot) {
                    ZSetMut::Record(mut set) => match set.insert(member, score, &cfg) {
                    RecordInsert::Added { .. } => None,
                    RecordInsert::Updated { old, .. } | RecordInsert::Unchanged(old) => Some(old),
                        RecordInsert::Declined => {
                            let entry = set.into_entry();
                            entry.value.as_zset_mut().unwrap().insert(member, score, &cfg)
                        }
                    },
                    ZSetMut::Entry(entry) => {
                        entry.value.as_zset_mut().unwrap().insert(member, score, &cfg)
                    }
                };
                prop_assert_eq!(got.map(f64::to_bits), old.map(f64::to_bits));
                // A set a record holds is in the form a fresh key of it gets (a value
                // beside the table stays there when it shrinks).
                let slot = db.find(b"z").unwrap();
                db.check_in(slot);
                let mut fresh = Db::default();
                fresh.insert(b"z", Value::ZSet(want.clone()), 0);
                let held = |d: &Db| matches!(d.get(b"z").unwrap().value, ValueCow::Owned(_));
                if held(&db) && held(&fresh) {
                    prop_assert_eq!(db.memory_usage(b"z"), fresh.memory_usage(b"z"));
                }
                let read = db.read(slot).value.as_zset().unwrap();
                prop_assert_eq!(shown(read), shown(&want));
            }
        }
    }
}
