//! The keyspace: the numbered databases and everything tied to their keys — expiry (lazy
//! on lookup, active in the cron), WATCH, the keys blocked clients wait on, lazy free, the
//! change counter and the access clock.
//!
//! - [`db`]: one database, the key table with expiry times and stable SCAN cursors.
//! - [`value`]: the value enum, one variant per data type.
//! - [`zset`]: the sorted-set value: the engine with Redis's -0 rule on writes.
//! - [`string`]: the string value: integers, inline short strings, encodings.
//! - [`set`]: the set value, on the set engine.
//! - [`hash`]: the hash value, on the hash engine.
//! - [`list`]: the list value, on the list engine.
//! - [`stream`]: the stream value, on the stream engine.
//! - `lazyfree`, `watch`, `blocking`, `expire`: lazy free, WATCH state, waited-on keys,
//!   active expiry; `field_expiry`: the hashes with field times and their active expiry.
//!
//! Every write goes through [`Keyspace::signal_modified`] (Redis's signalModifiedKey), which
//! marks WATCHing clients dirty, and adds the number of elements it changed to the change
//! counter with [`Keyspace::add_dirty`] (Redis's `server.dirty +=`: ZADD of 2000 new members
//! adds 2000, DEL one per key removed), and every write that can make a key
//! non-empty through [`Keyspace::signal_ready`], which queues the key for the clients
//! blocked on it. [`Keyspace::store`], [`Keyspace::delete`] and
//! [`Keyspace::lookup_write_or_create`] signal on their own; a command that changes a value
//! in place after [`Keyspace::lookup_write`] signals itself.

pub mod db;
pub mod evict;
pub mod hash;
pub mod lfu;
pub mod list;
pub mod set;
pub mod slots;
pub mod stream;
pub mod string;
pub mod value;
pub mod zset;

mod blocking;
mod expire;
mod field_expiry;
mod lazyfree;
mod replica_expires;
mod watch;

pub use db::{Db, DbEntry, Entry, EntryMut, ValueCow};
pub use expire::{ExpireEffort, KeyspaceStats};
pub use hash::{Hash, HashConfig, HashEncoding};
pub use list::{End, List, ListConfig, ListEncoding, ListPush};
pub use set::{Member, RecordListpack, Set, SetConfig, SetEncoding, SetMut};
pub use stream::{Stream, StreamConfig, StreamId};
pub use string::StringValue;
pub use value::{Value, WrongType};
pub use zset::{RecordZSet, SortedSet, ZSetMut, ZSetRef};

/// How a deleted key's value (or a flushed database) is freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Free {
    /// On the lazy-free thread when it is large, so the loop does not stall on it (UNLINK,
    /// FLUSHALL ASYNC, a lazyfree-lazy-* directive set).
    Lazily,
    /// At once, whatever its size: the memory figure drops before the next reading (DEL,
    /// FLUSHALL SYNC, an expired or evicted value while its lazyfree-lazy-* directive is no,
    /// as Redis frees them).
    Now,
}

impl Free {
    /// Lazily when `lazy`, else now.
    pub fn lazily_if(lazy: bool) -> Free {
        match lazy {
            true => Free::Lazily,
            false => Free::Now,
        }
    }
}

/// Why the server removed a key on its own: which lazyfree-lazy-* directive says whether
/// the removal propagates as DEL or UNLINK (Redis's propagateDeletion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Its time had come (lazyfree-lazy-expire).
    Expired,
    /// maxmemory evicted it (lazyfree-lazy-eviction).
    Evicted,
    /// A command deleted or replaced it as part of its work: RENAME's or a STORE's
    /// destination, GETDEL, RESTORE REPLACE, a value overwritten (lazyfree-lazy-server-del).
    Server,
}

/// Which of the server's own removals are lazy: their value goes to the lazy-free thread
/// and they propagate as UNLINK rather than DEL (lazyfree-lazy-expire,
/// lazyfree-lazy-eviction, lazyfree-lazy-server-del; Redis's dbGenericDelete and
/// propagateDeletion read the same flag).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LazyRemovals {
    /// lazyfree-lazy-expire.
    pub expired: bool,
    /// lazyfree-lazy-eviction.
    pub evicted: bool,
    /// lazyfree-lazy-server-del.
    pub server_del: bool,
}

impl LazyRemovals {
    /// Whether a removal for `cause` is lazy.
    pub fn of(self, cause: Cause) -> bool {
        match cause {
            Cause::Expired => self.expired,
            Cause::Evicted => self.evicted,
            Cause::Server => self.server_del,
        }
    }
}

/// A key the server removed on its own, waiting to be propagated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// Its database.
    pub db: usize,
    /// The key.
    pub key: Vec<u8>,
    /// Expiry or eviction.
    pub cause: Cause,
    /// The hash field that expired, when only a field was removed (replayed as HDEL).
    pub field: Option<Vec<u8>>,
}

use crate::clock::unix_ms;
use crate::pubsub::notify::{self, Notifier};
use crate::rng::Rng;
use blocking::BlockedKeys;
use lazyfree::{Garbage, LazyFree};
use watch::Watches;

/// What [`Keyspace::add_to_int`] did.
pub enum IntSum<'a> {
    /// The key holds this sum now (or was created holding the increment).
    Sum(i64),
    /// The sum does not fit 64 bits; nothing changed.
    Overflow,
    /// The key holds no `int` string in its record: its value, to handle in full.
    Other(EntryMut<'a>),
}

/// The databases and their key-level state.
pub struct Keyspace {
    dbs: Vec<Db>,
    watches: Watches,
    blocked: BlockedKeys,
    lazyfree: LazyFree,
    /// Which removals by expiry and eviction free their value lazily.
    lazy_removals: LazyRemovals,
    /// Elements changed since the last save (INFO rdb_changes_since_last_save).
    dirty: u64,
    /// Elements changed since start (never lowered by saves).
    changes: u64,
    /// Keys expiry and eviction removed, kept while someone propagates them.
    removed: Option<Vec<Removal>>,
    /// Start time, Unix milliseconds: the base of the access clock.
    started_ms: u64,
    rng: Rng,
    stats: KeyspaceStats,
    /// How accesses are recorded in the entries (LRU clock or LFU counter).
    access: lfu::AccessClock,
    /// Whether modified keys are collected (a client tracks keys).
    collect_modified: bool,
    /// Keys modified since [`Keyspace::take_modified`], while collecting.
    modified: Vec<Vec<u8>>,
    /// A FLUSHDB or FLUSHALL happened since [`Keyspace::take_modified`], while collecting.
    flushed: bool,
    /// Keyspace notifications: the classes on and the events fired, not yet published.
    pub notifier: Notifier,
    /// Active expiry runs in the cron (DEBUG SET-ACTIVE-EXPIRE turns it off).
    pub active_expire_enabled: bool,
    /// Lookups see keys whose time has come as alive (a replica applying its master's
    /// stream: the master's DEL removes them, as in Redis).
    expiry_paused: bool,
    /// Keys whose time has come look missing but are not removed (a write pause: the
    /// pause's end, or the new master after a failover, removes them).
    expiry_held: bool,
    /// Keys a writable replica's own clients gave an expiry, expired by its cron.
    replica_expires: replica_expires::ReplicaExpires,
}

impl Keyspace {
    /// `databases` empty databases.
    pub fn new(databases: usize) -> Keyspace {
        let now = unix_ms();
        Keyspace {
            dbs: (0..databases).map(|_| Db::default()).collect(),
            watches: Watches::default(),
            blocked: BlockedKeys::default(),
            lazyfree: LazyFree::start(),
            lazy_removals: LazyRemovals::default(),
            dirty: 0,
            changes: 0,
            removed: None,
            started_ms: now,
            rng: Rng::seeded(now ^ ((std::process::id() as u64) << 32)),
            stats: KeyspaceStats::default(),
            access: lfu::AccessClock::new(now),
            collect_modified: false,
            modified: Vec::new(),
            flushed: false,
            notifier: Notifier::default(),
            active_expire_enabled: true,
            expiry_paused: false,
            expiry_held: false,
            replica_expires: Default::default(),
        }
    }

    /// Number of databases.
    #[inline]
    pub fn db_count(&self) -> usize {
        self.dbs.len()
    }

    /// Database `index`, read-only (KEYS, SCAN, DBSIZE).
    #[inline]
    pub fn db(&self, index: usize) -> &Db {
        &self.dbs[index]
    }

    /// Every database, read-only (snapshots, INFO keyspace).
    pub fn databases(&self) -> &[Db] {
        &self.dbs
    }

    /// Keys in every database (a fork's current_save_keys_total).
    pub fn key_count(&self) -> u64 {
        self.dbs.iter().map(|db| db.len() as u64).sum()
    }

    /// A pseudo-random number (the server's [`Rng`]), for RANDOMKEY, ZRANDMEMBER and sampling.
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// A generator of its own for one command, seeded from the keyspace's (so the command
    /// can draw while it holds a value).
    pub fn command_rng(&mut self) -> Rng {
        Rng::seeded(self.random())
    }

    /// The access clock in seconds (OBJECT IDLETIME, access times of loaded keys).
    pub fn clock_secs(&self) -> u32 {
        self.clock_secs_at(unix_ms())
    }

    /// The access clock at Unix time `now_ms` (what a command already read), so a lookup
    /// does not read the clock again.
    #[inline]
    fn clock_secs_at(&self, now_ms: u64) -> u32 {
        (now_ms.saturating_sub(self.started_ms) / 1000) as u32
    }

    /// How accesses are recorded (maxmemory-policy, lfu-log-factor, lfu-decay-time).
    pub fn set_access_policy(&mut self, policy: lfu::AccessPolicy) {
        self.access.set_policy(policy);
    }

    /// Which removals by expiry and eviction free their value lazily (the lazyfree-lazy-*
    /// directives).
    pub fn set_lazy_removals(&mut self, lazy: LazyRemovals) {
        self.lazy_removals = lazy;
    }

    /// The access field a key loaded or created now starts with.
    pub fn initial_access(&self) -> u32 {
        let now_ms = unix_ms();
        self.access.initial(self.clock_secs_at(now_ms), now_ms)
    }

    /// The LFU counter of an entry's `accessed` field now, decayed (OBJECT FREQ).
    pub fn frequency(&self, accessed: u32) -> u32 {
        self.access.decayed(accessed, unix_ms())
    }

    /// While `paused`, lookups take keys whose time has come for alive (set around the
    /// commands of a replica's master, which sends the DELs that remove them).
    pub fn pause_expiry(&mut self, paused: bool) {
        self.expiry_paused = paused;
    }

    /// Whether expiry is paused (see [`Keyspace::pause_expiry`]).
    pub fn expiry_paused(&self) -> bool {
        self.expiry_paused
    }

    /// While `held`, lookups see keys whose time has come as missing but leave them (Redis's
    /// expireIfNeeded while the expire action is paused).
    pub fn hold_expiry(&mut self, held: bool) {
        self.expiry_held = held;
    }

    /// Whether keys and fields whose time has come are held rather than removed (see
    /// [`Keyspace::hold_expiry`]).
    pub fn expiry_held(&self) -> bool {
        self.expiry_held
    }

    /// Removes `key` if its time has come. Returns true when it was removed (or, while
    /// expiry is held, when it is due).
    pub fn expire_if_needed(&mut self, db: usize, key: &[u8], now_ms: u64) -> bool {
        if self.expiry_paused {
            return false;
        }
        match self.dbs[db].find(key) {
            Some(slot) if self.dbs[db].expired(slot, now_ms) => {
                if !self.expiry_held && !self.replica_holds_expired(false) {
                    self.delete_expired(db, key);
                }
                true
            }
            _ => false,
        }
    }

    /// The slot of the live entry for `key` (looked up for a write or not): one hash lookup,
    /// and the key is removed instead when its time has come (unless held).
    #[inline]
    fn live_entry(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        write: bool,
    ) -> Option<(db::Slot, u32)> {
        let (slot, expired, accessed) = self.dbs[db].probe(key, now_ms)?;
        if expired && !self.expiry_paused {
            if !self.expiry_held && !self.replica_holds_expired(write) {
                self.delete_expired(db, key);
            }
            return None;
        }
        Some((slot, accessed))
    }

    /// Looks a key up for reading: expires it if due, counts a hit or a miss and updates
    /// its access time (unless `touch` is false, as for CLIENT NO-TOUCH).
    /// A miss fires the "keymiss" event (class `m`).
    #[inline]
    pub fn lookup_read(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        touch: bool,
    ) -> Option<Entry<'_>> {
        let id = self.slot_for_read(db, key, now_ms, touch)?;
        Some(self.dbs[db].read(id))
    }

    /// The slot of the live entry for `key` looked up for reading, as
    /// [`Keyspace::lookup_read`] does (expiry, statistics, access time, "keymiss").
    #[inline(always)]
    fn slot_for_read(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        touch: bool,
    ) -> Option<db::Slot> {
        let clock = self.clock_secs_at(now_ms);
        match self.live_entry(db, key, now_ms, false) {
            Some((id, accessed)) => {
                self.stats.keyspace_hits += 1;
                if touch {
                    self.touch(db, id, accessed, clock, now_ms);
                }
                Some(id)
            }
            None => {
                self.stats.keyspace_misses += 1;
                self.notifier.fire(notify::KEY_MISS, "keymiss", db, key);
                None
            }
        }
    }

    /// Looks a key up for writing: expires it if due; no statistics. A caller that changes
    /// the value calls [`Keyspace::signal_modified`] (and [`Keyspace::delete`] when it
    /// left the value empty).
    #[inline]
    pub fn lookup_write(&mut self, db: usize, key: &[u8], now_ms: u64) -> Option<EntryMut<'_>> {
        let id = self.live_slot_for_write(db, key, now_ms)?;
        Some(self.dbs[db].write(id))
    }

    /// The slot of the live entry for `key` looked up for writing, as
    /// [`Keyspace::lookup_write`] does (expired first if due, access recorded).
    #[inline]
    fn live_slot_for_write(&mut self, db: usize, key: &[u8], now_ms: u64) -> Option<db::Slot> {
        let clock = self.clock_secs_at(now_ms);
        let (id, accessed) = self.live_entry(db, key, now_ms, true)?;
        self.touch(db, id, accessed, clock, now_ms);
        Some(id)
    }

    /// Whether `key` exists, looked up for writing as [`Keyspace::lookup_write`] does (expired
    /// first if due, access recorded) without handing out its value (SET NX/XX, DEL).
    #[inline]
    pub fn exists_for_write(&mut self, db: usize, key: &[u8], now_ms: u64) -> bool {
        self.live_slot_for_write(db, key, now_ms).is_some()
    }

    /// Records an access to the key in `slot` of `db`, whose access field is `accessed`
    /// (written only when it changes: an LRU field changes once a second).
    #[inline]
    fn touch(&mut self, db: usize, slot: db::Slot, accessed: u32, clock: u32, now_ms: u64) {
        let mut field = accessed;
        self.access.touch(&mut field, clock, now_ms);
        if field & db::CLOCK_MAX != accessed {
            self.dbs[db].set_clock(slot, field);
        }
    }

    /// Looks a key up for writing, creating it with `make()` when absent (expired keys
    /// count as absent). Returns the entry and whether it was created; a created key is
    /// signalled to watchers and blocked clients as [`Keyspace::store`] does.
    #[inline]
    pub fn lookup_write_or_create(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        make: impl FnOnce() -> Value,
    ) -> (EntryMut<'_>, bool) {
        let (id, created) = self.slot_for_write(db, key, now_ms, make);
        (self.dbs[db].write(id), created)
    }

    /// The slot of `key` looked up for writing (access recorded), or of the key created
    /// with `make()` when absent (signalled); true when created.
    #[inline]
    fn slot_for_write(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        make: impl FnOnce() -> Value,
    ) -> (db::Slot, bool) {
        if let Some(id) = self.live_slot_for_write(db, key, now_ms) {
            return (id, false);
        }
        let initial = self.access.initial(self.clock_secs_at(now_ms), now_ms);
        let id = self.dbs[db].insert_absent(key, make(), initial);
        self.notifier.fire(notify::NEW, "new", db, key);
        self.signal_modified(db, key);
        self.signal_ready(db, key);
        (id, true)
    }

    /// INCRBY's lookup: adds `by` to the `int` string `key` holds, inside its record (no
    /// copy of the value checked out and put back), or creates the key holding `by`; the
    /// change is signalled. A key holding anything else is handed out for writing, as
    /// [`Keyspace::lookup_write`] does, for the caller's general path.
    pub fn add_to_int(&mut self, db: usize, key: &[u8], now_ms: u64, by: i64) -> IntSum<'_> {
        let make = || Value::Str(StringValue::from_int(by));
        let (id, created) = self.slot_for_write(db, key, now_ms, make);
        if created {
            return IntSum::Sum(by);
        }
        match self.dbs[db].add_to_int(id, by) {
            Some(Some(sum)) => {
                self.signal_modified(db, key);
                IntSum::Sum(sum)
            }
            Some(None) => IntSum::Overflow,
            None => IntSum::Other(self.dbs[db].write(id)),
        }
    }

    /// Sets the access record of an existing key as RESTORE's FREQ and IDLETIME do (Redis's
    /// objectSetLRUOrLFU): under an LFU policy the counter `freq`, otherwise an access
    /// `idle_secs` seconds ago (before the clock's start it wraps, as OBJECT IDLETIME and
    /// eviction read it). The one the policy does not use is ignored.
    pub fn set_access(
        &mut self,
        db: usize,
        key: &[u8],
        freq: Option<u8>,
        idle_secs: Option<u64>,
        now_ms: u64,
    ) {
        let clock = self.clock_secs_at(now_ms);
        let lfu = self.access.policy().lfu;
        let Some(slot) = self.dbs[db].find(key) else {
            return;
        };
        let field = match (lfu, freq, idle_secs) {
            (true, Some(f), _) => lfu::AccessClock::counter_field(f, now_ms),
            // The field keeps 24 bits: the access time modulo 2^24, as `lfu::idle_secs`
            // reads it back.
            (false, _, Some(idle)) => clock.wrapping_sub(idle as u32) & db::CLOCK_MAX,
            _ => return,
        };
        self.dbs[db].set_clock(slot, field);
    }

    /// Looks a key up without touching its access time or the hit statistics (OBJECT,
    /// MEMORY USAGE); a key whose time has come is removed first.
    pub fn peek(&mut self, db: usize, key: &[u8], now_ms: u64) -> Option<Entry<'_>> {
        let (slot, _) = self.live_entry(db, key, now_ms, false)?;
        Some(self.dbs[db].read(slot))
    }

    /// Looks a key up as it is stored, even past its time (DEBUG OBJECT, as Redis's dbFind):
    /// nothing is expired, touched or counted.
    pub fn find(&mut self, db: usize, key: &[u8]) -> Option<Entry<'_>> {
        let (slot, _, _) = self.dbs[db].probe(key, 0)?;
        Some(self.dbs[db].read(slot))
    }

    /// Deletes a key whose time has come, counting it and logging it for propagation.
    fn delete_expired(&mut self, db: usize, key: &[u8]) {
        self.stats.expired_keys += 1;
        let deleting = (crate::latency::threshold() != 0).then(std::time::Instant::now);
        self.delete_by_server(db, key, Cause::Expired);
        if let Some(started) = deleting {
            crate::latency::sample("expire-del", started.elapsed());
        }
        self.notifier.fire(notify::EXPIRED, "expired", db, key);
    }

    /// Deletes a key the server removes on its own (expiry, eviction): logged for
    /// propagation (as the DEL or UNLINK that replays it) while [`Keyspace::log_removals`]
    /// is on. Its value is freed at once unless the lazyfree-lazy-* directive of its cause
    /// is on.
    pub fn delete_by_server(&mut self, db: usize, key: &[u8], cause: Cause) {
        if self.delete_freeing(db, key, self.free_for(cause)) {
            if let Some(log) = &mut self.removed {
                log.push(Removal {
                    db,
                    key: key.to_vec(),
                    cause,
                    field: None,
                });
            }
        }
    }

    /// Deletes a key a command found expired or gave a time in the past (EXPIRE, GETEX
    /// EXAT / PXAT), its value freed as lazyfree-lazy-expire says. Returns true when it
    /// existed; the command replays it by [`Keyspace::removal_is_lazy`]'s verb.
    pub fn delete_as_expired(&mut self, db: usize, key: &[u8]) -> bool {
        self.delete_freeing(db, key, self.free_for(Cause::Expired))
    }

    /// Whether a removal for `cause` frees its value lazily and replays as UNLINK rather
    /// than DEL.
    pub fn removal_is_lazy(&self, cause: Cause) -> bool {
        self.lazy_removals.of(cause)
    }

    /// How a removal for `cause` frees its value.
    fn free_for(&self, cause: Cause) -> Free {
        Free::lazily_if(self.removal_is_lazy(cause))
    }

    /// Starts or stops logging the keys expiry and eviction remove.
    pub fn log_removals(&mut self, on: bool) {
        self.removed = on.then(Vec::new);
    }

    /// Takes the keys expiry and eviction removed since the last call, in order.
    pub fn take_removed(&mut self) -> Vec<Removal> {
        self.removed
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Deletes a key as part of a command's work (its value freed as
    /// lazyfree-lazy-server-del says). Returns true when it existed.
    pub fn delete(&mut self, db: usize, key: &[u8]) -> bool {
        self.delete_freeing(db, key, self.free_for(Cause::Server))
    }

    /// Deletes a key, its value freed as `free` says (DEL and UNLINK). Returns true when it
    /// existed.
    pub fn delete_freeing(&mut self, db: usize, key: &[u8], free: Free) -> bool {
        match self.dbs[db].discard(key) {
            Some(heap) => {
                if let Some(value) = heap {
                    self.free_value(value, free);
                }
                self.signal_modified(db, key);
                // Clients that wait for the key's deletion too (XREADGROUP) run again.
                self.signal_ready(db, key);
                true
            }
            None => false,
        }
    }

    /// Frees a value a command replaced in its key (SPOP's old set once the members that
    /// stay moved to a new one), as lazyfree-lazy-server-del says.
    pub fn free_replaced(&self, value: Value) {
        self.free_value(value, self.free_for(Cause::Server));
    }

    /// Frees `value` now, or on the lazy-free thread when `free` is lazy and freeing it is
    /// worth it.
    fn free_value(&self, value: Value, free: Free) {
        match free {
            Free::Lazily => self.lazyfree.dispose(Garbage::Value(value)),
            Free::Now => drop(value),
        }
    }

    /// Stores `value` under `key` (dropping any expiry), signalling watchers and waiters.
    pub fn store(&mut self, db: usize, key: &[u8], value: Value) {
        let now_ms = unix_ms();
        let initial = self.access.initial(self.clock_secs_at(now_ms), now_ms);
        match self.dbs[db].insert(key, value, initial) {
            Some(Some(old)) => self.free_replaced(old),
            Some(None) => {}
            None => self.notifier.fire(notify::NEW, "new", db, key),
        }
        self.signal_modified(db, key);
        self.signal_ready(db, key);
    }

    /// Moves `src` of database `from` to `dst` of database `to` with its expiry (RENAME,
    /// MOVE). The caller checked that `src` exists; a value at `dst` is deleted first, so
    /// `dst` is a new key (as Redis's dbDelete then dbAdd).
    pub fn relocate(&mut self, from: usize, src: &[u8], to: usize, dst: &[u8]) {
        if (from, src) != (to, dst) {
            self.delete(to, dst);
        }
        let removed = self.dbs[from]
            .remove(src)
            .expect("caller checked the source exists");
        self.signal_modified(from, src);
        self.store(to, dst, removed.value);
        if let Some(at) = removed.expire_at {
            self.set_expiry(to, dst, at);
        }
    }

    /// Sets or replaces the expiry of an existing key; false when it is absent. Signals
    /// nothing: the caller signals when the change is a write of its own (EXPIRE).
    pub fn set_expiry(&mut self, db: usize, key: &[u8], at_ms: u64) -> bool {
        let set = self.dbs[db].set_expiry(key, at_ms);
        if set {
            self.remember_replica_expiry(db, key);
        }
        set
    }

    /// Removes the expiry of `key`; true when it had one. Signals nothing (see
    /// [`Keyspace::set_expiry`]).
    pub fn persist(&mut self, db: usize, key: &[u8]) -> bool {
        self.dbs[db].persist(key)
    }

    /// A key was changed: WATCHing clients will fail their EXEC. The command counts its
    /// changes itself ([`Keyspace::add_dirty`]).
    #[inline]
    pub fn signal_modified(&mut self, db: usize, key: &[u8]) {
        let keys = &self.dbs[db];
        self.watches.touch(db, key, || keys.contains(key));
        if self.collect_modified {
            self.modified.push(key.to_vec());
        }
    }

    /// Collect the keys signalled modified, and the flushes, for client-side caching
    /// (while any client tracks: [`Keyspace::take_modified`] hands them over).
    pub fn set_collect_modified(&mut self, on: bool) {
        self.collect_modified = on;
        if !on {
            self.modified.clear();
            self.flushed = false;
        }
    }

    /// The keys modified since the last call, and whether a FLUSHDB or FLUSHALL happened.
    pub fn take_modified(&mut self) -> (Vec<Vec<u8>>, bool) {
        (
            std::mem::take(&mut self.modified),
            std::mem::take(&mut self.flushed),
        )
    }

    /// A write changed `changes` elements (Redis's `server.dirty += changes`): they count
    /// toward the save points until a save covers them.
    #[inline]
    pub fn add_dirty(&mut self, changes: u64) {
        self.dirty += changes;
        self.changes += changes;
    }

    /// A key may have become non-empty: clients blocked on it get served after the command.
    #[inline]
    pub fn signal_ready(&mut self, db: usize, key: &[u8]) {
        self.blocked.mark_ready(db, key);
    }

    /// Marks every watcher of a key that exists in `db` dirty (flush, reload), except those
    /// that saw it expired.
    fn signal_flushed(&mut self, db: usize) {
        let keys = &self.dbs[db];
        self.watches.touch_db(db, |k| keys.contains(k), |_| None);
    }

    /// Database `db`'s keys are about to be replaced with database `with`'s (SWAPDB): the
    /// watchers of the keys that change are dirtied.
    fn signal_swapped(&mut self, db: usize, with: usize) {
        let now_ms = unix_ms();
        let (keys, new) = (&self.dbs[db], &self.dbs[with]);
        self.watches.touch_db(
            db,
            |k| keys.contains(k),
            |k| new.get(k).map(|e| e.is_expired(now_ms)),
        );
    }

    /// Empties database `db`, its contents freed as `free` says (FLUSHDB).
    pub fn flush_db(&mut self, db: usize, free: Free) {
        self.signal_flushed(db);
        self.flushed |= self.collect_modified;
        self.add_dirty(self.dbs[db].len() as u64);
        let old = self.dbs[db].take();
        if free == Free::Lazily {
            self.lazyfree.dispose(Garbage::Db(Box::new(old)));
        }
        for key in self.blocked.keys_of(db) {
            self.signal_ready(db, &key);
        }
    }

    /// Empties every database, their contents freed as `free` says (FLUSHALL).
    pub fn flush_all(&mut self, free: Free) {
        for db in 0..self.dbs.len() {
            self.flush_db(db, free);
        }
        self.forget_replica_expiries();
    }

    /// Swaps databases `a` and `b` (SWAPDB): watchers of keys on either side are dirtied,
    /// and the keys clients wait on are made ready (the waiters check what they find).
    pub fn swap_dbs(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        self.signal_swapped(a, b);
        self.signal_swapped(b, a);
        self.dbs.swap(a, b);
        self.forget_replica_expiries();
        for db in [a, b] {
            for key in self.blocked.keys_of(db) {
                self.signal_ready(db, &key);
            }
        }
    }

    /// Keeps the keys of each hash slot of database 0 (cluster mode).
    pub fn index_slots(&mut self) {
        self.dbs[0].index_slots();
    }

    /// Replaces every database with `dbs` (a loaded snapshot): watchers of existing keys
    /// are dirtied and the old contents are freed as `free` says.
    pub fn replace_all(&mut self, dbs: Vec<Db>, free: Free) {
        self.forget_replica_expiries();
        for db in 0..self.dbs.len() {
            self.signal_flushed(db);
        }
        let indexed = self.dbs[0].slots_indexed();
        let old = std::mem::replace(&mut self.dbs, dbs);
        if indexed && !self.dbs[0].slots_indexed() {
            self.dbs[0].index_slots();
        }
        if free == Free::Lazily {
            for db in old {
                self.lazyfree.dispose(Garbage::Db(Box::new(db)));
            }
        }
    }

    /// A random live key of `db` (RANDOMKEY): expired keys met on the way are removed; None
    /// when the database is empty or a hundred draws found only expired keys.
    pub fn random_key(&mut self, db: usize, now_ms: u64) -> Option<Vec<u8>> {
        for _ in 0..100 {
            let mut seed = self.random();
            let key = self.dbs[db].random_key(|| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                seed >> 11
            })?;
            let key = key.to_vec();
            if !self.expire_if_needed(db, &key, now_ms) {
                return Some(key);
            }
        }
        None
    }

    /// Records that `client_id` WATCHes `key` of `db`; returns whether the key was alive
    /// (present and not expired), which EXEC compares against later.
    pub fn watch(&mut self, db: usize, key: &[u8], client_id: u64, now_ms: u64) -> bool {
        let expired = self.dbs[db].get(key).map(|e| e.is_expired(now_ms));
        self.watches.add(db, key, client_id, expired == Some(true));
        expired == Some(false)
    }

    /// Forgets the WATCHes of a client (drained from `watched`).
    pub fn unwatch_all(&mut self, client_id: u64, watched: &mut Vec<(usize, Vec<u8>, bool)>) {
        self.watches.remove_client(client_id, watched);
    }

    /// Whether a key `client_id` WATCHes changed, or expired since it was watched alive.
    pub fn watched_keys_changed(
        &self,
        client_id: u64,
        watched: &[(usize, Vec<u8>, bool)],
        now_ms: u64,
    ) -> bool {
        self.watches.is_dirty(client_id)
            || watched.iter().any(|(db, key, was_alive)| {
                *was_alive && self.dbs[*db].get(key).is_some_and(|e| e.is_expired(now_ms))
            })
    }

    /// Queues `client_id` on `key` of `db` until the key becomes ready.
    pub fn block_on(&mut self, db: usize, key: &[u8], client_id: u64) {
        self.blocked.add(db, key, client_id);
    }

    /// Takes `client_id` off the queue of `key` of `db`.
    pub fn unblock_from(&mut self, db: usize, key: Vec<u8>, client_id: u64) {
        self.blocked.remove(db, key, client_id);
    }

    /// The clients waiting on `key` of `db`, in arrival order.
    pub fn waiters(&self, db: usize, key: &[u8]) -> Vec<u64> {
        self.blocked.waiters(db, key)
    }

    /// Takes the keys that became ready since the last call, in order.
    pub fn take_ready_keys(&mut self) -> Vec<(usize, Vec<u8>)> {
        self.blocked.take_ready()
    }

    /// Whether keys became ready for waiting clients.
    pub fn has_ready_keys(&self) -> bool {
        self.blocked.any_ready()
    }

    /// Number of keys clients wait on (INFO total_blocking_keys).
    pub fn blocking_key_count(&self) -> usize {
        self.blocked.key_count()
    }

    /// Changes since the last save (INFO rdb_changes_since_last_save, save points).
    pub fn dirty(&self) -> u64 {
        self.dirty
    }

    /// Changes since start, never lowered by saves: a command changed the dataset when it
    /// moved this.
    #[inline]
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// A save covered the first `changes` changes: they no longer count as dirty.
    pub fn saved(&mut self, changes: u64) {
        self.dirty = self.dirty.saturating_sub(changes);
    }

    /// Counters for INFO stats.
    pub fn stats(&self) -> &KeyspaceStats {
        &self.stats
    }

    /// Zeroes the counters (CONFIG RESETSTAT), lazyfreed_objects among them.
    pub fn reset_stats(&mut self) {
        self.stats = KeyspaceStats::default();
        self.lazyfree.reset_freed();
    }

    /// Objects queued for the lazy-free thread and not yet freed.
    pub fn lazyfree_pending(&self) -> usize {
        self.lazyfree.pending()
    }

    /// Objects the lazy-free thread freed so far.
    pub fn lazyfreed(&self) -> usize {
        self.lazyfree.freed()
    }

    /// Bytes the key tables hold beside the values (their part of INFO's
    /// used_memory_overhead), in constant time.
    pub fn tables_memory(&self) -> usize {
        self.dbs
            .iter()
            .map(|db| {
                let (main, expires) = db.overhead();
                main + expires
            })
            .sum()
    }

    /// Bytes the key tables hold free for the next keys, which the memory figure counts as
    /// free (an allocator's free chunks), in constant time.
    pub fn reusable_bytes(&self) -> usize {
        self.dbs.iter().map(Db::reusable_bytes).sum()
    }

    /// Every entry of every database, expired or not.
    pub fn entries(&self) -> impl Iterator<Item = DbEntry<'_>> {
        self.dbs.iter().flat_map(Db::iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_removes_a_key_whose_time_has_come() {
        let mut ks = Keyspace::new(2);
        ks.store(0, b"k", Value::empty_zset());
        ks.store(0, b"stays", Value::empty_zset());
        assert!(ks.set_expiry(0, b"k", 1_000));
        assert!(ks.lookup_read(0, b"k", 999, true).is_some());
        assert!(ks.lookup_read(0, b"k", 1_000, true).is_none());
        assert_eq!(
            ks.db(0).len(),
            1,
            "the expired key is gone, not just hidden"
        );
        assert_eq!(ks.stats().expired_keys, 1);
        assert_eq!(
            (ks.stats().keyspace_hits, ks.stats().keyspace_misses),
            (1, 1)
        );
        assert!(ks.lookup_write(0, b"stays", 1_000).is_some());
    }

    #[test]
    fn paused_expiry_keeps_a_key_whose_time_has_come() {
        let mut ks = Keyspace::new(1);
        ks.store(0, b"k", Value::empty_zset());
        assert!(ks.set_expiry(0, b"k", 1_000));
        ks.pause_expiry(true);
        assert!(ks.lookup_write(0, b"k", 2_000).is_some());
        assert!(!ks.expire_if_needed(0, b"k", 2_000));
        ks.pause_expiry(false);
        assert!(ks.lookup_read(0, b"k", 2_000, true).is_none());
        assert_eq!(ks.stats().expired_keys, 1);
    }

    #[test]
    fn writes_and_flushes_dirty_the_watchers() {
        let mut ks = Keyspace::new(2);
        ks.store(0, b"a", Value::empty_zset());
        let mut watched = vec![(0, b"a".to_vec(), ks.watch(0, b"a", 7, 0))];
        assert!(!ks.watched_keys_changed(7, &watched, 0));
        ks.signal_modified(0, b"other");
        assert!(!ks.watched_keys_changed(7, &watched, 0));
        ks.signal_modified(0, b"a");
        assert!(ks.watched_keys_changed(7, &watched, 0));
        ks.unwatch_all(7, &mut watched);
        assert!(watched.is_empty());
        assert!(!ks.watched_keys_changed(7, &watched, 0));

        watched.push((0, b"a".to_vec(), ks.watch(0, b"a", 8, 0)));
        ks.flush_db(1, Free::Lazily);
        assert!(!ks.watched_keys_changed(8, &watched, 0), "another database");
        ks.flush_db(0, Free::Lazily);
        assert!(ks.watched_keys_changed(8, &watched, 0));
        assert_eq!(ks.db(0).len(), 0);
    }

    #[test]
    fn a_key_expired_when_watched_changes_only_when_it_comes_back() {
        let mut ks = Keyspace::new(1);
        ks.store(0, b"a", Value::empty_zset());
        ks.set_expiry(0, b"a", 100);
        let watched = vec![(0, b"a".to_vec(), ks.watch(0, b"a", 1, 200))];
        ks.delete(0, b"a");
        assert!(
            !ks.watched_keys_changed(1, &watched, 200),
            "its deletion is no change"
        );
        ks.store(0, b"a", Value::empty_zset());
        assert!(ks.watched_keys_changed(1, &watched, 200));
    }

    #[test]
    fn swapdb_bringing_an_expired_key_or_none_is_no_change() {
        let mut ks = Keyspace::new(2);
        ks.store(1, b"a", Value::empty_zset());
        ks.set_expiry(1, b"a", 1);
        let watched = vec![(0, b"a".to_vec(), ks.watch(0, b"a", 1, 200))];
        ks.swap_dbs(0, 1);
        assert!(
            !ks.watched_keys_changed(1, &watched, 200),
            "missing, then expired"
        );
        ks.swap_dbs(0, 1);
        assert!(
            !ks.watched_keys_changed(1, &watched, 200),
            "expired, then missing"
        );
        ks.store(1, b"a", Value::empty_zset());
        ks.flush_db(0, Free::Lazily);
        assert!(
            !ks.watched_keys_changed(1, &watched, 200),
            "nothing to flush"
        );
        ks.swap_dbs(0, 1);
        assert!(ks.watched_keys_changed(1, &watched, 200), "a live key came");
    }

    #[test]
    fn a_watched_key_that_expires_breaks_the_watch() {
        let mut ks = Keyspace::new(1);
        ks.store(0, b"a", Value::empty_zset());
        ks.set_expiry(0, b"a", 100);
        let watched = vec![(0, b"a".to_vec(), ks.watch(0, b"a", 1, 50))];
        assert!(!ks.watched_keys_changed(1, &watched, 99));
        assert!(ks.watched_keys_changed(1, &watched, 100));
    }

    #[test]
    fn keys_with_waiters_become_ready_once() {
        let mut ks = Keyspace::new(2);
        ks.block_on(0, b"q", 1);
        ks.block_on(0, b"q", 2);
        ks.block_on(0, b"q", 1);
        assert_eq!(ks.waiters(0, b"q"), vec![1, 2]);
        ks.store(0, b"nobody-waits", Value::empty_zset());
        assert!(!ks.has_ready_keys());
        ks.store(0, b"q", Value::empty_zset());
        ks.signal_ready(0, b"q");
        assert_eq!(ks.take_ready_keys(), vec![(0, b"q".to_vec())]);
        assert!(!ks.has_ready_keys());
        ks.unblock_from(0, b"q".to_vec(), 1);
        assert_eq!(ks.waiters(0, b"q"), vec![2]);
        ks.unblock_from(0, b"q".to_vec(), 2);
        assert_eq!(ks.blocking_key_count(), 0);
    }

    #[test]
    fn swapping_makes_waited_keys_ready() {
        let mut ks = Keyspace::new(2);
        ks.store(1, b"q", Value::empty_zset());
        ks.block_on(0, b"q", 1);
        assert!(!ks.has_ready_keys());
        ks.swap_dbs(0, 1);
        assert_eq!(ks.take_ready_keys(), vec![(0, b"q".to_vec())]);
    }

    #[test]
    fn changes_are_counted_until_saved() {
        let mut ks = Keyspace::new(1);
        ks.store(0, b"a", Value::empty_zset());
        ks.store(0, b"b", Value::empty_zset());
        assert_eq!(ks.dirty(), 0, "commands count their changes");
        ks.add_dirty(2000);
        ks.delete(0, b"a");
        ks.add_dirty(1);
        assert_eq!(ks.dirty(), 2001);
        ks.saved(2000);
        assert_eq!(ks.dirty(), 1);
        ks.flush_all(Free::Lazily);
        assert_eq!(ks.dirty(), 2, "a flush counts each key it removed");
    }
}
