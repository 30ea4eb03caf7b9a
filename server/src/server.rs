//! Server state shared by all commands: configuration, the databases, statistics, the
//! connections, WATCH and blocking bookkeeping.
//!
//! Every write goes through [`Server::signal_modified`] (Redis's signalModifiedKey), which
//! marks WATCHing clients dirty, and every write that can make a key non-empty through
//! [`Server::signal_ready`], which queues blocked clients to be served after the command.

use crate::config::Config;
use crate::db::{Db, Entry, Value};
use crate::net::Conn;
use crate::stats::Stats;
use hashbrown::{HashMap, HashSet};
use slab::Slab;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Values with more elements than this are freed on the lazy-free thread.
const LAZYFREE_THRESHOLD: usize = 64;

/// Something big to drop off the event loop.
pub enum Garbage {
    /// One value.
    Value(Value),
    /// A whole database (FLUSHDB / FLUSHALL ASYNC).
    Db(Db),
}

/// Drops large values on a background thread, as Redis's lazyfree does.
pub struct LazyFree {
    sender: mpsc::Sender<Garbage>,
    /// Objects queued and not yet freed (INFO lazyfree_pending_objects).
    pub pending: Arc<AtomicUsize>,
    /// Objects freed so far (INFO lazyfreed_objects).
    pub freed: Arc<AtomicUsize>,
}

impl LazyFree {
    fn start() -> LazyFree {
        let (sender, receiver) = mpsc::channel::<Garbage>();
        let pending = Arc::new(AtomicUsize::new(0));
        let freed = Arc::new(AtomicUsize::new(0));
        let (p, f) = (pending.clone(), freed.clone());
        std::thread::Builder::new()
            .name("lazyfree".into())
            .spawn(move || {
                for garbage in receiver {
                    drop(garbage);
                    p.fetch_sub(1, Ordering::Relaxed);
                    f.fetch_add(1, Ordering::Relaxed);
                }
            })
            .expect("spawn the lazy-free thread");
        LazyFree {
            sender,
            pending,
            freed,
        }
    }

    /// Frees `garbage` here when small, on the background thread otherwise.
    pub fn dispose(&self, garbage: Garbage) {
        let big = match &garbage {
            Garbage::Value(v) => v.len() > LAZYFREE_THRESHOLD,
            Garbage::Db(db) => !db.is_empty(),
        };
        if big {
            self.pending.fetch_add(1, Ordering::Relaxed);
            if let Err(mpsc::SendError(g)) = self.sender.send(garbage) {
                self.pending.fetch_sub(1, Ordering::Relaxed);
                drop(g);
            }
        }
    }
}

/// The whole server.
pub struct Server {
    /// Runtime configuration.
    pub config: Config,
    /// The numbered databases.
    pub dbs: Vec<Db>,
    /// Counters for INFO.
    pub stats: Stats,
    /// Connections by token; the one running a command is taken out while it runs.
    pub conns: Slab<Option<Conn>>,
    /// Next CLIENT ID.
    pub next_client_id: u64,
    /// WATCHed keys: (db, key) -> client ids.
    pub watchers: HashMap<(usize, Vec<u8>), Vec<u64>>,
    /// Clients whose WATCHed keys changed.
    pub dirty_clients: HashSet<u64>,
    /// Blocked clients by key, in arrival order.
    pub blocked_on: HashMap<(usize, Vec<u8>), VecDeque<u64>>,
    /// Keys that became non-empty while clients wait on them.
    pub ready_keys: Vec<(usize, Vec<u8>)>,
    /// Connections to service after the current command (woken, timed out or killed).
    pub wake: Vec<usize>,
    /// Client id -> connection token.
    pub tokens: HashMap<u64, usize>,
    /// Number of blocked clients (INFO blocked_clients).
    pub blocked_clients: usize,
    /// The object cache, when enabled (INFO objcache).
    pub store: Option<goblin_objcache::StoreHandle>,
    /// SLOWLOG entries.
    pub slowlog: crate::commands::SlowLog,
    /// Lazy-free thread.
    pub lazyfree: LazyFree,
    /// Start time.
    pub started: Instant,
    /// Start time, Unix milliseconds (the base of the access-time clock).
    started_ms: u64,
    /// Random run id (INFO run_id).
    pub run_id: String,
    /// Keys changed since the last save (INFO rdb_changes_since_last_save).
    pub dirty: u64,
    /// Snapshot state: last save, BGSAVE child, save statistics.
    pub rdb: crate::rdb::SaveState,
    /// A SHUTDOWN was requested.
    pub shutdown: bool,
    rng_state: u64,
}

/// Current Unix time in milliseconds.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Server {
    /// A server with empty databases.
    pub fn new(config: Config) -> Server {
        let dbs = (0..config.databases).map(|_| Db::default()).collect();
        let seed = unix_ms() ^ ((std::process::id() as u64) << 32) | 1;
        let mut server = Server {
            config,
            dbs,
            stats: Stats::default(),
            conns: Slab::new(),
            next_client_id: 1,
            watchers: HashMap::new(),
            dirty_clients: HashSet::new(),
            blocked_on: HashMap::new(),
            ready_keys: Vec::new(),
            wake: Vec::new(),
            tokens: HashMap::new(),
            blocked_clients: 0,
            store: None,
            slowlog: Default::default(),
            lazyfree: LazyFree::start(),
            started: Instant::now(),
            started_ms: unix_ms(),
            run_id: String::new(),
            dirty: 0,
            rdb: crate::rdb::SaveState::new(),
            shutdown: false,
            rng_state: seed,
        };
        server.run_id = (0..40)
            .map(|_| char::from_digit((server.random() % 16) as u32, 16).expect("hex digit"))
            .collect();
        server
    }

    /// A pseudo-random number (xorshift64*), for RANDOMKEY, ZRANDMEMBER and sampling.
    pub fn random(&mut self) -> u64 {
        let mut x = self.rng_state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng_state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Server clock in seconds, for access times.
    pub fn clock_secs(&self) -> u32 {
        self.clock_secs_at(unix_ms())
    }

    /// The server clock at Unix time `now_ms` (what a command already read), so a lookup
    /// does not read the clock again.
    fn clock_secs_at(&self, now_ms: u64) -> u32 {
        (now_ms.saturating_sub(self.started_ms) / 1000) as u32
    }

    /// Removes `key` if its time has come. Returns true when it was removed.
    pub fn expire_if_needed(&mut self, db: usize, key: &[u8], now_ms: u64) -> bool {
        match self.dbs[db].get(key).and_then(Entry::expire_at) {
            Some(at) if at <= now_ms => {
                self.stats.expired_keys += 1;
                self.delete(db, key);
                true
            }
            _ => false,
        }
    }

    /// The live entry for `key`: one hash lookup, and the key is removed instead when its
    /// time has come.
    fn live_entry(&mut self, db: usize, key: &[u8], now_ms: u64) -> Option<u32> {
        let id = self.dbs[db].find_id(key)?;
        match self.dbs[db].entry(id).expire_at() {
            Some(at) if at <= now_ms => {
                self.stats.expired_keys += 1;
                self.delete(db, key);
                None
            }
            _ => Some(id),
        }
    }

    /// Looks a key up for reading: expires it if due, counts a hit or a miss and updates
    /// its access time (unless `touch` is false, as for CLIENT NO-TOUCH).
    pub fn lookup_read(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        touch: bool,
    ) -> Option<&mut Entry> {
        let clock = self.clock_secs_at(now_ms);
        match self.live_entry(db, key, now_ms) {
            Some(id) => {
                self.stats.keyspace_hits += 1;
                let e = self.dbs[db].entry_mut(id);
                if touch {
                    e.accessed = clock;
                }
                Some(e)
            }
            None => {
                self.stats.keyspace_misses += 1;
                None
            }
        }
    }

    /// Looks a key up for writing: expires it if due; no statistics.
    pub fn lookup_write(&mut self, db: usize, key: &[u8], now_ms: u64) -> Option<&mut Entry> {
        let clock = self.clock_secs_at(now_ms);
        let id = self.live_entry(db, key, now_ms)?;
        let e = self.dbs[db].entry_mut(id);
        e.accessed = clock;
        Some(e)
    }

    /// Looks a key up for writing, creating it with `make()` when absent (expired keys
    /// count as absent). Returns the entry and whether it was created; a created key is
    /// signalled to watchers and blocked clients as [`Server::store_value`] does.
    pub fn lookup_write_or_create(
        &mut self,
        db: usize,
        key: &[u8],
        now_ms: u64,
        make: impl FnOnce() -> Value,
    ) -> (&mut Entry, bool) {
        let clock = self.clock_secs_at(now_ms);
        let (id, created) = match self.live_entry(db, key, now_ms) {
            Some(id) => (id, false),
            None => {
                self.dbs[db].insert(key, make(), clock);
                self.signal_modified(db, key);
                self.signal_ready(db, key);
                (self.dbs[db].find_id(key).expect("just inserted"), true)
            }
        };
        let e = self.dbs[db].entry_mut(id);
        e.accessed = clock;
        (e, created)
    }

    /// Deletes a key (freeing a large value off the loop). Returns true when it existed.
    pub fn delete(&mut self, db: usize, key: &[u8]) -> bool {
        match self.dbs[db].remove(key) {
            Some(entry) => {
                self.lazyfree.dispose(Garbage::Value(entry.value));
                self.signal_modified(db, key);
                true
            }
            None => false,
        }
    }

    /// Stores `value` under `key` (dropping any expiry), signalling watchers and waiters.
    pub fn store_value(&mut self, db: usize, key: &[u8], value: Value) {
        let clock = self.clock_secs();
        if let Some(old) = self.dbs[db].insert(key, value, clock) {
            self.lazyfree.dispose(Garbage::Value(old));
        }
        self.signal_modified(db, key);
        self.signal_ready(db, key);
    }

    /// A key was changed: WATCHing clients will fail their EXEC.
    pub fn signal_modified(&mut self, db: usize, key: &[u8]) {
        self.dirty += 1;
        if self.watchers.is_empty() {
            return;
        }
        if let Some(ids) = self.watchers.get(&(db, key.to_vec())) {
            self.dirty_clients.extend(ids.iter().copied());
        }
    }

    /// A key may have become non-empty: clients blocked on it get served after the command.
    pub fn signal_ready(&mut self, db: usize, key: &[u8]) {
        if self.blocked_on.is_empty() {
            return;
        }
        if self.blocked_on.contains_key(&(db, key.to_vec()))
            && !self.ready_keys.iter().any(|(d, k)| *d == db && k == key)
        {
            self.ready_keys.push((db, key.to_vec()));
        }
    }

    /// Marks every watcher of a key that exists in `db` dirty (FLUSHDB, SWAPDB).
    pub fn signal_flushed(&mut self, db: usize) {
        let dirty: Vec<u64> = self
            .watchers
            .iter()
            .filter(|((d, k), _)| *d == db && self.dbs[db].get(k).is_some())
            .flat_map(|(_, ids)| ids.iter().copied())
            .collect();
        self.dirty_clients.extend(dirty);
    }

    /// Empties database `db`, freeing its contents off the loop.
    pub fn flush_db(&mut self, db: usize) {
        self.signal_flushed(db);
        self.dirty += self.dbs[db].len() as u64;
        let old = self.dbs[db].take();
        self.lazyfree.dispose(Garbage::Db(old));
    }

    /// Forgets the WATCHes of a client.
    pub fn unwatch_all(&mut self, client_id: u64, watched: &mut Vec<(usize, Vec<u8>, bool)>) {
        for (db, key, _) in watched.drain(..) {
            if let hashbrown::hash_map::Entry::Occupied(mut o) = self.watchers.entry((db, key)) {
                o.get_mut().retain(|&id| id != client_id);
                if o.get().is_empty() {
                    o.remove();
                }
            }
        }
        self.dirty_clients.remove(&client_id);
    }

    /// Active expiry: samples keys with an expiry in every database and removes those due,
    /// repeating while more than a quarter of a sample was due, within a time budget.
    pub fn active_expire(&mut self, budget: std::time::Duration) {
        let start = Instant::now();
        let now = unix_ms();
        for db in 0..self.dbs.len() {
            loop {
                let volatile = self.dbs[db].volatile_len();
                if volatile == 0 {
                    break;
                }
                let sample = volatile.min(20);
                let mut due = Vec::new();
                for _ in 0..sample {
                    let n = self.random() as usize;
                    let d = &self.dbs[db];
                    if let Some(key) = d.volatile_key(n) {
                        if d.get(key)
                            .and_then(Entry::expire_at)
                            .is_some_and(|at| at <= now)
                        {
                            due.push(key.to_vec());
                        }
                    }
                }
                let expired = due.len();
                for key in due {
                    self.expire_if_needed(db, &key, now);
                }
                if expired * 4 <= sample {
                    break;
                }
                if start.elapsed() > budget {
                    self.stats.expire_time_cap_reached += 1;
                    break;
                }
            }
        }
        self.stats.expire_cycle_micros += start.elapsed().as_micros() as u64;
    }

    /// Bytes held by the values alone (INFO used_memory_dataset).
    pub fn dataset_memory(&self) -> usize {
        self.dbs
            .iter()
            .flat_map(Db::iter)
            .map(|e| e.value.memory_bytes())
            .sum()
    }

    /// Bytes held by all values (engine-tracked) plus key bytes.
    pub fn used_memory(&self) -> usize {
        self.dbs
            .iter()
            .flat_map(Db::iter)
            .map(|e| e.value.memory_bytes() + e.key().len() + std::mem::size_of::<Entry>() + 5)
            .sum()
    }
}
