//! The set value: the `goblin-zset` set engine, which owns Redis 7.2's encoding rules
//! (`set-max-intset-entries`, `set-max-listpack-*`, the conversions of t_set.c) and the
//! memory figure. Commands reach the thresholds only through [`SetConfig`], so none can
//! test one itself.

pub use goblin_zset::set::{Member, Set, SetConfig, SetEncoding};

use super::db::{Db, EntryMut, Slot};
use super::{Keyspace, Value};

/// A listpack set added to where its key's record holds it, with no copy checked out and
/// put back (see `Db::set_for_write`).
pub struct RecordListpack<'a> {
    db: &'a mut Db,
    slot: Slot,
}

impl<'a> RecordListpack<'a> {
    /// The listpack set the record in `slot` of `db` holds.
    pub(super) fn new(db: &'a mut Db, slot: Slot) -> RecordListpack<'a> {
        RecordListpack { db, slot }
    }

    /// Adds `member` as [`Set::add`] does: Some(whether it was new); None, nothing done,
    /// when the set would convert or is no longer in the record (then
    /// [`RecordListpack::into_entry`] gives it).
    #[inline]
    pub fn add(&mut self, member: &[u8], cfg: &SetConfig) -> Option<bool> {
        self.db.add_to_record_set(self.slot, member, cfg)
    }

    /// The key's entry for writing its value (checked out of the record).
    pub fn into_entry(self) -> EntryMut<'a> {
        self.db.write(self.slot)
    }
}

/// A key looked up for SADD: a listpack set its record holds, or its entry.
pub enum SetMut<'a> {
    /// A listpack set in the key's record.
    Record(RecordListpack<'a>),
    /// The key's value (of any type).
    Entry(EntryMut<'a>),
}

impl Keyspace {
    /// [`Keyspace::lookup_write_or_create`] for SADD: a key holding a listpack set in its
    /// record (found, or created) is handed out as that, to be added to in place.
    #[inline]
    pub fn lookup_set_for_write(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        make: impl FnOnce() -> Value,
    ) -> (SetMut<'_>, bool) {
        let (slot, created) = self.slot_for_write(db, key, now_ms, make);
        (self.dbs[db].set_for_write(slot), created)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn record_adds_agree_with_the_set(
            adds in proptest::collection::vec(
                prop_oneof![
                    (0u32..40).prop_map(|i| format!("member:{i}").into_bytes()),
                    (0u32..40).prop_map(|i| format!("{i}").into_bytes()),
                ],
                1..60,
            ),
            max in 2usize..40,
        ) {
            let cfg = SetConfig { max_intset_entries: 512, max_listpack_entries: max, max_listpack_value: 64 };
            let mut db = Db::default();
            let mut want = Set::create(b"x", 1, &cfg);
            want.remove(b"x");
            db.insert(b"s", Value::Set(want.clone()), 0);
            for member in adds {
                let slot = db.find(b"s").unwrap();
                let added = want.add(&member, &cfg);
                let got = match db.set_for_write(slot) {
                    SetMut::Record(mut set) => match set.add(&member, &cfg) {
                        Some(new) => new,
                        None => set.into_entry().value.as_set_mut().unwrap().add(&member, &cfg),
                    },
                    SetMut::Entry(entry) => entry.value.as_set_mut().unwrap().add(&member, &cfg),
                };
                prop_assert_eq!(got, added);
                let slot = db.find(b"s").unwrap();
                let read = db.read(slot).value.as_set().unwrap();
                // A listpack keeps insertion order; hashtables their own.
                let listpack = want.encoding() == SetEncoding::Listpack;
                let members = |s: &Set| {
                    let mut m = s.iter().map(|m| m.to_vec()).collect::<Vec<_>>();
                    if !listpack {
                        m.sort();
                    }
                    m
                };
                prop_assert_eq!(members(read), members(&want));
                prop_assert_eq!(read.encoding(), want.encoding());
            }
        }
    }
}
