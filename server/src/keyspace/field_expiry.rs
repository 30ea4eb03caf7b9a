//! The hashes of a database that have field expiry times (Redis's `db->hexpires`), each
//! under a time no later than its earliest field's, for active field expiry.
//!
//! The index is allowed to run early: a hash whose fields were persisted, deleted or given
//! later times keeps its older entry until active expiry visits it, finds nothing due and
//! files it again under its true earliest time (or drops it). So a write only registers a
//! hash when it may have made a time earlier ([`FieldExpiry::register`]), and deleting,
//! renaming or overwriting a key needs no hook: the visit finds the key gone or no longer
//! a hash with times. A key that takes a hash with times under a new name (RENAME, MOVE,
//! COPY, RESTORE, a load) is registered when it is stored (see `Db::insert`).

use super::{Cause, Keyspace, Removal};
use crate::pubsub::notify;
use std::collections::{BTreeSet, HashMap};

/// Most hashes one active expiry round visits in a database.
const HASHES_PER_ROUND: usize = 20;

/// Hashes with field expiry times, ordered by when they must be visited.
#[derive(Default)]
pub struct FieldExpiry {
    by_time: BTreeSet<(u64, Box<[u8]>)>,
    by_key: HashMap<Box<[u8]>, u64>,
}

impl FieldExpiry {
    /// Makes sure the hash at `key` is visited no later than `at` (Unix ms).
    pub fn register(&mut self, key: &[u8], at: u64) {
        match self.by_key.get_mut(key) {
            Some(old) if *old <= at => {}
            Some(old) => {
                self.by_time.remove(&(*old, Box::from(key)));
                *old = at;
                self.by_time.insert((at, key.into()));
            }
            None => {
                self.by_key.insert(key.into(), at);
                self.by_time.insert((at, key.into()));
            }
        }
    }

    /// Takes up to `max` keys whose visit time is at or before `now`, earliest first.
    fn take_due(&mut self, now: u64, max: usize) -> Vec<Box<[u8]>> {
        let mut due = Vec::new();
        while due.len() < max {
            match self.by_time.first() {
                Some((at, _)) if *at <= now => {
                    let (_, key) = self.by_time.pop_first().expect("first exists");
                    self.by_key.remove(&key);
                    due.push(key);
                }
                _ => break,
            }
        }
        due
    }
}

impl Keyspace {
    /// Makes sure active expiry visits the hash at `key` by `at` (a write gave one of its
    /// fields that time).
    pub fn register_field_expiry(&mut self, db: usize, key: &[u8], at: u64) {
        self.dbs[db].field_expiry.register(key, at);
    }

    /// Logs that `field` of the hash at `key` expired and was removed, for propagation as
    /// HDEL (Redis's propagateHashFieldDeletion).
    pub fn field_expired(&mut self, db: usize, key: &[u8], field: Vec<u8>) {
        if let Some(log) = &mut self.removed {
            log.push(Removal {
                db,
                key: key.to_vec(),
                cause: Cause::Expired,
                field: Some(field),
            });
        }
    }

    /// Removes the removed fields' hash when they left it empty and fires the events of a
    /// field expiry: "hexpired", then "del" when the hash went with its last field.
    pub fn after_fields_expired(&mut self, db: usize, key: &[u8], emptied: bool) {
        self.notifier.fire(notify::HASH, "hexpired", db, key);
        if emptied {
            self.delete(db, key);
            self.notifier.fire(notify::GENERIC, "del", db, key);
        } else {
            self.signal_modified(db, key);
        }
    }

    /// Active field expiry in `db` (Redis's hashTypeDbActiveExpire): removes the due
    /// fields of the hashes whose time has come, at most `quota` fields, and files each
    /// hash again under its next field time. Returns the fields removed.
    pub(super) fn expire_fields_actively(&mut self, db: usize, now: u64, quota: usize) -> usize {
        let mut removed = 0;
        for _ in 0..HASHES_PER_ROUND {
            if removed >= quota {
                break;
            }
            let Some(key) = self.dbs[db].field_expiry.take_due(now, 1).pop() else {
                break;
            };
            let key: &[u8] = &key;
            let Some(slot) = self.dbs[db].find(key) else {
                continue;
            };
            if self.dbs[db].expired(slot, now) {
                continue; // the key's own expiry removes it
            }
            let entry = self.dbs[db].write(slot);
            let Ok(hash) = entry.value.as_hash_mut() else {
                continue;
            };
            let fields = hash.take_expired(now, quota - removed);
            let (emptied, next) = (hash.is_empty(), hash.min_field_expiry());
            if let Some(at) = next {
                self.dbs[db].field_expiry.register(key, at);
            }
            if fields.is_empty() {
                continue;
            }
            removed += fields.len();
            for field in fields {
                self.field_expired(db, key, field);
            }
            self.after_fields_expired(db, key, emptied);
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_earliest_time_per_key_and_hands_out_due_keys_in_order() {
        let mut f = FieldExpiry::default();
        f.register(b"a", 50);
        f.register(b"b", 20);
        f.register(b"a", 10);
        f.register(b"a", 30);
        assert!(f.take_due(5, 10).is_empty());
        assert_eq!(f.take_due(100, 1), [Box::from(&b"a"[..])]);
        assert_eq!(f.take_due(100, 10), [Box::from(&b"b"[..])]);
        assert!(f.by_key.is_empty());
    }
}
