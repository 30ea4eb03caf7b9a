//! Persistence: RDB snapshots that Redis and Valkey read, and Redis / Valkey snapshots that
//! Goblin reads.
//!
//! - [`format`]: opcodes, types and encodings of the RDB format.
//! - [`crc64`], [`lzf`]: the checksum that ends a file, and LZF decompression.
//! - [`dump`]: DUMP / RESTORE payloads (one value, its RDB version and a CRC64).
//! - [`packed`]: ziplist and listpack blobs (small sorted sets of older and newer Redis).
//! - [`write`]: the writer (RDB 10: sorted sets as ZSET_2, strings as STRING, sets as
//!   SET_INTSET or SET).
//! - [`read`]: the streaming loader, all sorted-set encodings, checksum, offsets in errors.
//! - [`file`]: crash-safe writes (temp file, fsync, rename, fsync of the directory).
//! - [`loading`]: the start-up load on a thread while the loop answers `-LOADING`.
//! - this file: [`Snapshots`], the save and load work on a keyspace: SAVE and BGSAVE (by
//!   fork), save points, shutdown saves, DEBUG RELOAD, loading at start-up. The command
//!   handlers and the INFO section live with the other command handlers.
//!
//! - [`fork`]: the background child (BGSAVE here, BGREWRITEAOF in [`crate::aof`]).
//!
//! # BGSAVE
//!
//! As Redis: `fork()`, and the child writes the snapshot of its copy-on-write view of the
//! keyspace, then `_exit`s; the event loop never waits. The cron reaps the child with
//! `waitpid(WNOHANG)` and updates the state below (see [`fork`]).

pub mod crc64;
pub mod dump;
pub mod file;
pub mod fork;
pub mod format;
pub mod loading;
pub mod read;
mod read_stream;
pub mod write;

/// LZF and the packed blobs live in the engine crate (compressed list nodes use them).
pub use goblin_zset::{lzf, packed};

use crate::clock::unix_ms;
use crate::config::Config;
use crate::keyspace::stream::item_bytes;
use crate::keyspace::Free;
use crate::keyspace::Keyspace;
use crate::keyspace::{Db, StreamId, Value};
use crate::{notice, warning};

/// DEBUG SET-SKIP-CHECKSUM-VALIDATION: snapshot loads and RESTORE payloads are not
/// checked against their CRC64 (process-wide, as Redis's).
static SKIP_CHECKSUM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets whether checksums are skipped (DEBUG SET-SKIP-CHECKSUM-VALIDATION).
pub fn set_skip_checksum(skip: bool) {
    SKIP_CHECKSUM.store(skip, std::sync::atomic::Ordering::Relaxed);
}

/// Whether checksums are skipped.
pub fn skip_checksum() -> bool {
    SKIP_CHECKSUM.load(std::sync::atomic::Ordering::Relaxed)
}

/// Blobs checked in depth since start or CONFIG RESETSTAT (INFO's
/// dump_payload_sanitizations; snapshot loads run on a thread, hence process-wide).
static SANITIZATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Counts `n` blobs checked in depth.
pub fn count_sanitizations(n: u64) {
    SANITIZATIONS.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
}

/// Blobs checked in depth (INFO dump_payload_sanitizations).
pub fn sanitizations() -> u64 {
    SANITIZATIONS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Zeroes [`sanitizations`] (CONFIG RESETSTAT).
pub fn reset_sanitizations() {
    SANITIZATIONS.store(0, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a payload is checked in depth under sanitize-dump-payload `mode` (no, yes or
/// clients), as Redis decides: `yes` always; `clients` only for a RESTORE (not a snapshot
/// load, `restore_by` None) sent by a client that is not this server's master and whose
/// user lacks skip-sanitize-payload (`restore_by`: is master, user skips).
pub fn deep_sanitize(mode: &str, restore_by: Option<(bool, bool)>) -> bool {
    match mode {
        "yes" => true,
        "clients" => restore_by.is_some_and(|(master, skip_user)| !master && !skip_user),
        _ => false,
    }
}

/// One key's value as a snapshot carries it: a sorted set's members with their scores'
/// bits, a string's bytes, a set's members (sorted), a hash's pairs (sorted), a list's
/// elements or a stream's entries, counters and groups.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Content {
    /// A sorted set's members in order, with their scores' bits.
    ZSet(Vec<(Vec<u8>, u64)>),
    /// A string's bytes.
    Str(Vec<u8>),
    /// A set's members, sorted.
    Set(Vec<Vec<u8>>),
    /// A hash's field/value pairs, sorted by field.
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    /// A list's elements in order.
    List(Vec<Vec<u8>>),
    /// A stream's entries in order, then its counters and groups as text.
    Stream(Vec<StreamEntry>, String),
}

/// A stream entry as a snapshot carries it: the id (ms, seq) and the field-value pairs.
pub type StreamEntry = ((u64, u64), Vec<(Vec<u8>, Vec<u8>)>);

/// Every key of a keyspace as (database, key, expiry, value), sorted: what a snapshot must
/// carry, for comparing keyspaces across a save and a load.
pub type Contents = Vec<(usize, Vec<u8>, Option<u64>, Content)>;

/// The [`Contents`] of `dbs`, checking each set's internal invariants on the way.
pub fn contents(dbs: &[Db]) -> Contents {
    let mut out = Vec::new();
    for (i, db) in dbs.iter().enumerate() {
        for e in db.iter() {
            let content = match &*e.value {
                Value::ZSet(z) => {
                    z.validate();
                    Content::ZSet(z.iter().map(|(m, s)| (m.to_vec(), s.to_bits())).collect())
                }
                Value::Str(s) => Content::Str(s.bytes().to_vec()),
                Value::Set(s) => {
                    s.validate();
                    let mut members: Vec<_> = s.iter().map(|m| m.to_vec()).collect();
                    members.sort();
                    Content::Set(members)
                }
                Value::Hash(h) => {
                    h.validate();
                    let mut pairs: Vec<_> =
                        h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
                    pairs.sort();
                    Content::Hash(pairs)
                }
                Value::List(l) => {
                    l.validate();
                    Content::List(l.to_vecs())
                }
                Value::Stream(s) => {
                    s.validate();
                    let entries = s
                        .range(StreamId::MIN, StreamId::MAX, false)
                        .map(|e| {
                            let pairs = e.pairs().map(|(f, v)| (item_bytes(f), item_bytes(v)));
                            ((e.id().ms, e.id().seq), pairs.collect())
                        })
                        .collect();
                    Content::Stream(entries, format!("{:?} {:?}", s.meta(), s.groups()))
                }
            };
            out.push((i, e.key().to_vec(), e.expire_at(), content));
        }
    }
    out.sort();
    out
}

/// The options a load under `config` takes (its databases and encoding thresholds), keys
/// starting with the access field `clock_secs`.
pub fn load_options(config: &Config, clock_secs: u32) -> read::LoadOptions {
    read::LoadOptions {
        databases: config.databases,
        zset: config.zset,
        set: config.set,
        hash: config.hash,
        list: config.list,
        skip_unsupported: config.rdb_skip_unsupported_types,
        now_ms: unix_ms(),
        clock_secs,
        size: None,
        key_delay_us: config.key_load_delay,
        deep_sanitize: deep_sanitize(&config.sanitize_dump_payload, None),
        verify_checksum: config.rdbchecksum,
        keep_expired_names: false,
        progress: None,
    }
}

/// Seconds to wait after a failed BGSAVE before a save point tries again (as Redis).
const BGSAVE_RETRY_DELAY: u64 = 5;

pub use fork::Child;

/// Snapshot state of the server (Redis's lastsave, lastbgsave_status, child_pid, ...).
#[derive(Debug)]
pub struct SaveState {
    /// Unix seconds of the last successful save (the start time until one happens).
    pub last_save: u64,
    /// Whether the last background save succeeded.
    pub last_bgsave_ok: bool,
    /// Unix seconds of the last BGSAVE attempt.
    pub last_bgsave_try: u64,
    /// Duration of the last BGSAVE in seconds, -1 before any.
    pub last_bgsave_secs: i64,
    /// The running BGSAVE child.
    pub child: Option<Child>,
    /// `Keyspace::dirty` when the running BGSAVE forked.
    pub dirty_before_bgsave: u64,
    /// BGSAVE SCHEDULE asked for a save once the running one ends.
    pub scheduled: bool,
    /// Saves started (INFO rdb_saves).
    pub saves: u64,
    /// Time the last fork took, microseconds.
    pub latest_fork_usec: u64,
    /// Forks done.
    pub total_forks: u64,
    /// Copy-on-write bytes the last successful BGSAVE child reported (rdb_last_cow_size).
    pub last_cow_bytes: u64,
    /// Keys loaded by the last load.
    pub last_load_keys: u64,
    /// Keys dropped as expired by the last load.
    pub last_load_expired: u64,
}

impl SaveState {
    /// The state of a server that has not saved yet.
    pub fn new() -> SaveState {
        SaveState {
            last_save: unix_ms() / 1000,
            last_bgsave_ok: true,
            last_bgsave_try: 0,
            last_bgsave_secs: -1,
            child: None,
            dirty_before_bgsave: 0,
            scheduled: false,
            saves: 0,
            latest_fork_usec: 0,
            total_forks: 0,
            last_cow_bytes: 0,
            last_load_keys: 0,
            last_load_expired: 0,
        }
    }
}

impl Default for SaveState {
    fn default() -> Self {
        SaveState::new()
    }
}

/// The snapshot machinery at work: its state, the configuration (directory, file name,
/// save points, load options) and the keyspace it saves and loads.
pub struct Snapshots<'a> {
    /// Save state.
    pub state: &'a mut SaveState,
    /// Configuration.
    pub config: &'a Config,
    /// The keyspace.
    pub keyspace: &'a mut Keyspace,
    /// A start-up load is running: nothing may be saved over the file it reads.
    pub loading: bool,
    /// Another child (an AOF rewrite) runs: no BGSAVE starts meanwhile.
    pub other_child: bool,
    /// The function libraries, saved with the keys and replaced by a load.
    pub functions: &'a mut crate::scripting::functions::Functions,
    /// The replication state a save writes (None: not in a replication chain).
    pub repl: Option<write::ReplAux>,
    /// This server replicates a master: a load keeps the keys whose time passed, as Redis's
    /// replicas do (the master's DELs remove them).
    pub replica: bool,
}

/// Why BGSAVE did not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BgsaveError {
    /// A BGSAVE child is already running.
    InProgress,
    /// fork() failed (logged).
    Fork,
}

/// DEBUG RELOAD's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReloadOptions {
    /// Save first (no NOSAVE).
    pub save: bool,
    /// Empty the data before the load (no NOFLUSH).
    pub flush: bool,
    /// A key both hold is the file's (MERGE).
    pub merge: bool,
}

/// Why DEBUG RELOAD failed (logged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReloadError {
    /// The save before the load failed.
    Save,
    /// The file did not load; the data is as it was.
    Load,
}

impl Snapshots<'_> {
    /// The AUX facts of a save starting now.
    pub fn aux_info(&self) -> write::AuxInfo<'static> {
        write::AuxInfo {
            redis_version: crate::REDIS_VERSION,
            ctime: unix_ms() / 1000,
            used_mem: crate::memory::allocator::allocated(),
            compress: self.config.rdbcompression,
            checksum: self.config.rdbchecksum,
            incremental_fsync: self
                .config
                .rdb_save_incremental_fsync
                .then_some(file::AUTOSYNC_BYTES),
            aof_base: false,
            functions: self.functions.codes(),
            repl: self.repl.clone(),
            key_delay_us: self.config.rdb_key_save_delay,
        }
    }

    /// Installs the function libraries a load read in place of the current ones; Redis's
    /// error text when one does not load (the load then fails).
    pub fn install_functions(&mut self, codes: &[Vec<u8>]) -> Result<(), String> {
        let timeout = crate::scripting::functions::FILE_LOAD_TIMEOUT;
        let libraries = self.functions.create_all(codes, timeout)?;
        self.functions.libraries = libraries;
        Ok(())
    }

    /// Writes the snapshot file (crash-safe: temp file, fsync, rename).
    fn write_file(&self, aux: &write::AuxInfo) -> std::io::Result<write::SaveStats> {
        file::save(
            &self.config.dir,
            &self.config.dbfilename,
            self.keyspace.databases(),
            aux,
        )
    }

    /// The options a load of this server's data takes (its thresholds, its clock; on a
    /// replica no key is dropped as expired).
    pub fn load_options(&self) -> read::LoadOptions {
        let mut opts = load_options(self.config, self.keyspace.initial_access());
        if self.replica {
            opts.now_ms = 0;
        }
        opts
    }

    /// A foreground save (SAVE, SHUTDOWN, FLUSHALL). Logs and returns the error on failure.
    pub fn save(&mut self) -> std::io::Result<write::SaveStats> {
        let aux = self.aux_info();
        self.state.saves += 1;
        match self.write_file(&aux) {
            Ok(stats) => {
                notice!("DB saved on disk");
                let changes = self.keyspace.dirty();
                self.keyspace.saved(changes);
                self.state.last_save = unix_ms() / 1000;
                self.state.last_bgsave_ok = true;
                Ok(stats)
            }
            Err(e) => {
                warning!("Write error saving DB on disk: {e}");
                Err(e)
            }
        }
    }

    /// Starts a background save.
    pub fn bgsave(&mut self) -> Result<(), BgsaveError> {
        let aux = self.aux_info();
        if self.state.child.is_some() {
            return Err(BgsaveError::InProgress);
        }
        self.state.saves += 1;
        self.state.dirty_before_bgsave = self.keyspace.dirty();
        self.state.last_bgsave_try = unix_ms() / 1000;
        let this = &*self;
        match fork::spawn(fork::Purpose::Bgsave, self.keyspace.key_count(), || {
            this.write_file(&aux)
        }) {
            Ok((child, took)) => {
                self.state.latest_fork_usec = took.as_micros() as u64;
                self.state.total_forks += 1;
                notice!("Background saving started by pid {}", child.pid);
                self.state.child = Some(child);
                Ok(())
            }
            Err(e) => {
                self.state.last_bgsave_ok = false;
                warning!("Can't save in background: fork: {e}");
                Err(BgsaveError::Fork)
            }
        }
    }

    /// Collects a finished BGSAVE child, if any.
    fn reap(&mut self) {
        let Some(exit) = self.state.child.as_mut().and_then(Child::try_reap) else {
            return;
        };
        let child = self.state.child.take().expect("checked");
        self.state.last_bgsave_secs = child.started.elapsed().as_secs() as i64;
        match exit {
            fork::Exit::Code(code, report) => {
                match report {
                    Some(fork::ChildReport::Saved(stats, _)) => {
                        notice!(
                            "DB saved on disk ({} keys, {} bytes)",
                            stats.keys,
                            stats.bytes
                        );
                        self.state.last_cow_bytes = child.log_cow("RDB");
                    }
                    Some(fork::ChildReport::Failed(e)) => {
                        warning!("Write error saving DB on disk: {e}")
                    }
                    None => {}
                }
                if code == 0 {
                    notice!("Background saving terminated with success");
                    self.keyspace.saved(self.state.dirty_before_bgsave);
                    self.state.last_save = unix_ms() / 1000;
                    self.state.last_bgsave_ok = true;
                } else {
                    warning!("Background saving error");
                    self.state.last_bgsave_ok = false;
                }
            }
            other => {
                match other {
                    fork::Exit::Signal(sig) => {
                        warning!("Background saving terminated by signal {sig}")
                    }
                    _ => warning!("waitpid() on the background saving child failed"),
                }
                let _ = std::fs::remove_file(file::temp_path(&self.config.dir, child.pid as u32));
                self.state.last_bgsave_ok = false;
            }
        }
    }

    /// Kills a running BGSAVE child and removes its temp file (SHUTDOWN, DEBUG RELOAD).
    pub fn kill_child(&mut self) {
        let Some(child) = self.state.child.take() else {
            return;
        };
        notice!("Killing running RDB child: {}", child.pid);
        let pid = child.pid as u32;
        child.kill();
        let _ = std::fs::remove_file(file::temp_path(&self.config.dir, pid));
    }

    /// Cron work: reap the child, then start a BGSAVE when one was scheduled or a save point
    /// is reached (at least `changes` changes and `seconds` since the last save).
    pub fn cron(&mut self) {
        self.reap();
        if self.state.child.is_some() || self.other_child {
            return;
        }
        let now = unix_ms() / 1000;
        let may_retry = self.state.last_bgsave_ok
            || now.saturating_sub(self.state.last_bgsave_try) > BGSAVE_RETRY_DELAY;
        if !may_retry {
            return;
        }
        if self.state.scheduled {
            if self.bgsave().is_ok() {
                self.state.scheduled = false;
            }
            return;
        }
        let since = now.saturating_sub(self.state.last_save);
        let due = self
            .config
            .save
            .iter()
            .find(|&&(secs, changes)| self.keyspace.dirty() >= changes && since > secs)
            .copied();
        if let Some((secs, changes)) = due {
            notice!("{changes} changes in {secs} seconds. Saving...");
            let _ = self.bgsave();
        }
    }

    /// Readies the server to exit: kills a BGSAVE child, then saves when `save` says so
    /// (`None`: when save points are configured, as Redis). `Err` when that save failed,
    /// unless `force` (the failure is then only logged).
    pub fn prepare_shutdown(&mut self, save: Option<bool>, force: bool) -> std::io::Result<()> {
        crate::service::notify::Supervisor::current().stopping();
        // As Redis: no save while loading, which would overwrite the file with a part of it.
        let save = if self.loading { Some(false) } else { save };
        if self.state.child.is_some() {
            warning!("There is a child saving an .rdb. Killing it!");
            self.kill_child();
        }
        if save.unwrap_or(!self.config.save.is_empty()) {
            notice!("Saving the final RDB snapshot before exiting.");
            if let Err(e) = self.save() {
                if force {
                    warning!("Error trying to save the DB. Exit anyway.");
                } else {
                    warning!("Error trying to save the DB, can't exit.");
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// DEBUG RELOAD: saves (unless NOSAVE), then loads the file in place of the data, or
    /// into it with NOFLUSH (a key both hold is then the file's with MERGE, else fatal, as
    /// in Redis). Unlike Redis, a file that fails to load leaves the data as it was; a
    /// missing file is an error after the flush, as in Redis.
    pub fn reload(&mut self, options: ReloadOptions) -> Result<(), ReloadError> {
        if self.state.child.is_some() {
            self.kill_child();
        }
        if options.save && self.save().is_err() {
            return Err(ReloadError::Save);
        }
        let path = self.config.dir.join(&self.config.dbfilename);
        let (dbs, report) = match file::load(&path, &self.load_options()) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => {
                // As Redis: the data is flushed before the load finds no file.
                if options.flush {
                    let n = self.config.databases;
                    let empty = (0..n).map(|_| Db::default()).collect();
                    self.keyspace.replace_all(empty, Free::Now);
                }
                warning!("DEBUG RELOAD: no {} to load", path.display());
                return Err(ReloadError::Load);
            }
            Err(e) => {
                warning!("DEBUG RELOAD: can't load {}: {e}", path.display());
                return Err(ReloadError::Load);
            }
        };
        log_report(&report);
        let installed = if options.flush {
            self.install_functions(&report.functions)
        } else {
            self.add_functions(&report.functions, options.merge)
        };
        if let Err(e) = installed {
            warning!("DEBUG RELOAD: failed loading a function library: {e}");
            return Err(ReloadError::Load);
        }
        if options.flush {
            self.keyspace.replace_all(dbs, Free::Now);
        } else {
            self.merge(dbs, options.merge);
        }
        self.state.last_load_keys = report.keys;
        self.state.last_load_expired = report.expired_skipped;
        notice!("DB reloaded by DEBUG RELOAD");
        Ok(())
    }

    /// Adds the loaded databases' keys to the data; a key the data holds already is
    /// replaced when `replace`, else the server stops as Redis's does on a duplicate key.
    fn merge(&mut self, dbs: Vec<Db>, replace: bool) {
        for (index, db) in dbs.iter().enumerate().take(self.keyspace.db_count()) {
            for entry in db.iter() {
                let key = entry.key();
                if self.keyspace.db(index).contains(key) && !replace {
                    warning!(
                        "RDB has duplicated key '{}' in DB {index}",
                        String::from_utf8_lossy(key)
                    );
                    crate::service::crash::panic("Duplicated key found in RDB file");
                }
                self.keyspace.store(index, key, Value::clone(&entry.value));
                if let Some(at) = entry.expire_at() {
                    self.keyspace.set_expiry(index, key, at);
                }
            }
        }
    }

    /// Adds loaded function libraries to the current ones (`replace`: a library of the
    /// same name is the file's; else that is an error, and the libraries stay as they were).
    fn add_functions(&mut self, codes: &[Vec<u8>], replace: bool) -> Result<(), String> {
        let timeout = crate::scripting::functions::FILE_LOAD_TIMEOUT;
        let before = self.functions.codes();
        let mut libraries = std::mem::take(&mut self.functions.libraries);
        for code in codes {
            if let Err(e) = self
                .functions
                .create(&mut libraries, code, replace, Some(timeout))
            {
                self.functions.libraries = self.functions.create_all(&before, timeout)?;
                return Err(e);
            }
        }
        self.functions.libraries = libraries;
        Ok(())
    }

    /// Starts loading the snapshot at start-up on a thread, if there is one (see
    /// [`loading`]); the event loop answers `-LOADING` meanwhile.
    pub fn start_loading(&mut self) -> Option<loading::Loading> {
        for name in file::remove_stale_temp_files(&self.config.dir) {
            notice!("Removed {name}, left by a save that did not finish");
        }
        let path = self.config.dir.join(&self.config.dbfilename);
        let mut opts = self.load_options();
        // A master propagates the deletion of the keys dropped as expired (restore).
        opts.keep_expired_names = !self.replica;
        loading::Loading::start(path, opts)
    }

    /// Installs what the start-up load read, and returns the replication state the file
    /// carried with the keys dropped as expired (database, name). A bad file is an error:
    /// the server must exit (and must not overwrite it later).
    pub fn finish_loading(&mut self, load: loading::Loading) -> anyhow::Result<StartupLoad> {
        let path = load.path.clone();
        let started = load.started;
        match load.finish() {
            Ok(None) => Ok((None, Vec::new())),
            Ok(Some((dbs, report))) => {
                log_report(&report);
                if let Err(e) = self.install_functions(&report.functions) {
                    warning!("Failed loading library: {e}. Exiting.");
                    anyhow::bail!(
                        "can't load the function libraries of {}: {e}",
                        path.display()
                    );
                }
                self.state.last_load_keys = report.keys;
                self.state.last_load_expired = report.expired_skipped;
                self.keyspace.replace_all(dbs, Free::Now);
                notice!(
                    "DB loaded from disk: {:.3} seconds",
                    started.elapsed().as_secs_f64()
                );
                Ok((write::ReplAux::from_aux(&report.aux), report.expired_names))
            }
            Err(e) => {
                warning!("{}", e.internal_error_line());
                warning!(
                    "Fatal error loading the DB {}: {e}. Exiting.",
                    path.display()
                );
                warning!("Terminating server after rdb file reading failure.");
                anyhow::bail!("can't load {}: {e}", path.display())
            }
        }
    }
}

/// What the start-up load hands to replication: the replication state the file carried and
/// the keys dropped as expired, by database.
pub type StartupLoad = (Option<write::ReplAux>, Vec<(usize, Vec<u8>)>);

fn log_report(report: &read::LoadReport) {
    for (name, value) in &report.aux {
        match name.as_str() {
            "redis-ver" => notice!("Loading RDB produced by version {value}"),
            "valkey-ver" => notice!("Loading RDB produced by valkey version {value}"),
            "ctime" => {
                let age = (unix_ms() / 1000).saturating_sub(value.parse().unwrap_or(0));
                notice!("RDB age {age} seconds");
            }
            _ => {}
        }
    }
    if report.checksum == read::Checksum::Disabled {
        notice!("RDB file was saved with checksum disabled: no check performed.");
    }
    for name in &report.empty_names {
        notice!(
            "rdbLoadObject skipping empty key: {}",
            String::from_utf8_lossy(name)
        );
    }
    // Redis's line names empty keys only when it skipped some.
    let empty = match report.empty_skipped {
        0 => String::new(),
        n => format!(", empty keys skipped: {n}"),
    };
    notice!(
        "Done loading RDB, keys loaded: {}, keys expired: {}{empty}.",
        report.keys,
        report.expired_skipped,
    );
    for (name, count) in &report.unsupported_skipped {
        warning!("Skipped {count} keys of type {name} (rdb-skip-unsupported-types yes)");
    }
    if report.module_aux_skipped > 0 {
        warning!("Skipped {} module AUX blocks", report.module_aux_skipped);
    }
}

impl read::LoadReport {
    /// The report of loading nothing (no file).
    pub fn empty() -> read::LoadReport {
        read::LoadReport {
            version: format::WRITE_VERSION,
            valkey: false,
            keys: 0,
            expired_skipped: 0,
            expired_names: Vec::new(),
            empty_skipped: 0,
            empty_names: Vec::new(),
            unsupported_skipped: Vec::new(),
            functions: Vec::new(),
            module_aux_skipped: 0,
            aux: Vec::new(),
            checksum: read::Checksum::Absent,
        }
    }
}
