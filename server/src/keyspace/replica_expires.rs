//! Expiry on a replica, as Redis's: its master's DELs remove the master's keys, so a
//! replica's own clients see a key whose time has come as missing but leave it (Redis's
//! expireIfNeeded on a replica), except a write on a writable replica, which removes it.
//! Keys given a time to live by those clients on a writable replica (Redis's
//! slaveKeysWithExpire) get no DEL from any master, so the replica's cron expires them
//! itself ([`Keyspace::expire_replica_keys`]).
//!
//! Each key name maps to a bitmap of the databases (0 to 63, as Redis) where it got its
//! expiry; the names are kept apart from the databases, so a key deleted or persisted
//! meanwhile is simply forgotten when the cron next looks at it.

use super::Keyspace;
use crate::clock::unix_ms;
use hashbrown::DefaultHashBuilder;
use indexmap::IndexMap;
use std::time::Instant;

/// Databases past this one are not tracked (a 64-bit map per key, as Redis).
const MAX_DB: usize = 63;
/// A cron round stops after this many keys that still have time to live.
const MAX_NOT_DUE: usize = 3;
/// A cron round checks its time every this many keys...
const TIME_CHECK_EVERY: usize = 64;
/// ... and stops once it has run this long.
const ROUND_MS: u128 = 1;

/// The tracked names and who runs the command now.
#[derive(Debug, Default)]
pub struct ReplicaExpires {
    /// Key name to the bitmap of the databases where it got an expiry (hashed as the
    /// key table's slot index hashes names, not with SipHash).
    keys: IndexMap<Vec<u8>, u64, DefaultHashBuilder>,
    /// The command running is a replica's own client's (not its master's): Some(whether
    /// the replica is writable); None on a master, for the master's client, and outside
    /// commands.
    running: Option<bool>,
}

impl ReplicaExpires {
    fn remember(&mut self, db: usize, key: &[u8]) {
        if self.running != Some(true) || db > MAX_DB {
            return;
        }
        // Looked up by the borrowed name first: a name already tracked costs no copy.
        match self.keys.get_mut(key) {
            Some(dbs) => *dbs |= 1 << db,
            None => {
                self.keys.insert(key.to_vec(), 1 << db);
            }
        }
    }
}

impl Keyspace {
    /// Who runs the commands from now on (see [`ReplicaExpires`]'s `running`): set by the
    /// dispatcher around each command; returns the setting it replaces.
    pub fn set_replica_client(&mut self, running: Option<bool>) -> Option<bool> {
        std::mem::replace(&mut self.replica_expires.running, running)
    }

    /// Whether a lookup (`write` or not) leaves a key whose time has come in place: a
    /// replica's own client's, except a write on a writable replica.
    pub(super) fn replica_holds_expired(&self, write: bool) -> bool {
        self.replica_expires
            .running
            .is_some_and(|writable| !(write && writable))
    }

    /// Records that `key` of `db` got an expiry, when tracking (see
    /// [`Keyspace::track_replica_expiries`]).
    pub(super) fn remember_replica_expiry(&mut self, db: usize, key: &[u8]) {
        self.replica_expires.remember(db, key);
    }

    /// The number of key names tracked (INFO's slave_expires_tracked_keys).
    pub fn replica_expires_tracked(&self) -> usize {
        self.replica_expires.keys.len()
    }

    /// Forgets every tracked name (Redis's flushSlaveKeysWithExpireList: FLUSHALL, SWAPDB,
    /// a full sync; the master may then send keys of the same names).
    pub fn forget_replica_expiries(&mut self) {
        self.replica_expires.keys = IndexMap::default();
    }

    /// A replica's cron (Redis's expireSlaveKeys): looks at tracked names picked at random,
    /// removes those whose time has come in each database of their map, forgets a name
    /// once no database holds it with an expiry; stops after a few names with time left or
    /// a millisecond.
    pub fn expire_replica_keys(&mut self) {
        if self.replica_expires.keys.is_empty() || !self.active_expire_enabled || self.expiry_held {
            return;
        }
        let started = Instant::now();
        let now = unix_ms();
        let mut not_due = 0;
        let mut looked = 0;
        while !self.replica_expires.keys.is_empty() {
            let index = self.random() as usize % self.replica_expires.keys.len();
            let (key, dbs) = self
                .replica_expires
                .keys
                .swap_remove_index(index)
                .expect("index within the map");
            let mut still = 0u64;
            for db in (0..self.dbs.len().min(MAX_DB + 1)).filter(|db| dbs & (1 << db) != 0) {
                let volatile = self.dbs[db]
                    .get(&key)
                    .is_some_and(|e| e.expire_at().is_some());
                if !volatile {
                    continue;
                }
                if !self.expire_if_needed(db, &key, now) {
                    not_due += 1;
                    still |= 1 << db;
                }
            }
            if still != 0 {
                self.replica_expires.keys.insert(key, still);
            }
            looked += 1;
            if not_due > MAX_NOT_DUE
                || (looked % TIME_CHECK_EVERY == 0 && started.elapsed().as_millis() > ROUND_MS)
            {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::value::Value;

    fn keyspace_with(keys: &[(&str, u64)]) -> Keyspace {
        let mut ks = Keyspace::new(2);
        ks.set_replica_client(Some(true));
        for (key, at) in keys {
            ks.store(1, key.as_bytes(), Value::empty_zset());
            ks.set_expiry(1, key.as_bytes(), *at);
        }
        ks.set_replica_client(None);
        ks
    }

    #[test]
    fn due_keys_are_removed_and_forgotten() {
        let later = unix_ms() + 60_000;
        let mut ks = keyspace_with(&[("gone", 1), ("kept", later)]);
        assert_eq!(ks.replica_expires_tracked(), 2);
        // A round picks names at random and stops after a few with time left (as Redis's
        // expireSlaveKeys), so one round may miss "gone": a few rounds cannot.
        for _ in 0..64 {
            ks.expire_replica_keys();
        }
        assert!(!ks.db(1).contains(b"gone"));
        assert!(ks.db(1).contains(b"kept"));
        assert_eq!(ks.replica_expires_tracked(), 1);
    }

    #[test]
    fn only_a_writable_replicas_own_expiries_are_remembered() {
        let mut ks = Keyspace::new(1);
        ks.store(0, b"k", Value::empty_zset());
        for running in [None, Some(false)] {
            ks.set_replica_client(running);
            ks.set_expiry(0, b"k", 1);
            assert_eq!(ks.replica_expires_tracked(), 0);
        }
    }

    #[test]
    fn a_replicas_own_reads_leave_expired_keys_and_writable_writes_remove_them() {
        let mut ks = Keyspace::new(1);
        for key in [&b"a"[..], b"b", b"c"] {
            ks.store(0, key, Value::empty_zset());
            ks.set_expiry(0, key, 1);
        }
        ks.set_replica_client(Some(false));
        assert!(ks.lookup_read(0, b"a", 2, true).is_none());
        assert!(ks.lookup_write(0, b"a", 2).is_none());
        assert!(ks.expire_if_needed(0, b"a", 2));
        assert!(ks.db(0).contains(b"a"));
        ks.set_replica_client(Some(true));
        assert!(ks.lookup_read(0, b"b", 2, true).is_none());
        assert!(ks.db(0).contains(b"b"));
        assert!(ks.lookup_write(0, b"b", 2).is_none());
        assert!(!ks.db(0).contains(b"b"));
        // Outside a replica's client's command (the master's, the cron), as a master.
        ks.set_replica_client(None);
        assert!(ks.lookup_read(0, b"c", 2, true).is_none());
        assert!(!ks.db(0).contains(b"c"));
    }

    #[test]
    fn persisted_or_deleted_keys_are_forgotten() {
        let later = unix_ms() + 60_000;
        let mut ks = keyspace_with(&[("persisted", later), ("deleted", later)]);
        ks.persist(1, b"persisted");
        ks.delete(1, b"deleted");
        ks.expire_replica_keys();
        assert_eq!(ks.replica_expires_tracked(), 0);
    }

    #[test]
    fn a_flush_forgets_everything() {
        let mut ks = keyspace_with(&[("k", 1)]);
        ks.forget_replica_expiries();
        ks.expire_replica_keys();
        assert!(ks.db(1).contains(b"k"));
    }
}
