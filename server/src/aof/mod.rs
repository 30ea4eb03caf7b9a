//! The append-only file, as Redis 7 writes it: a directory holding a manifest, one base
//! file and incremental files (the layout is drawn in [`manifest`]).
//!
//! - [`config`]: the directives (appendonly, appendfsync, ...).
//! - [`manifest`]: the manifest's format and the files' names.
//! - [`writer`]: the incremental file's buffer, write and fsync policy.
//! - [`fsync`]: the background fsync thread (everysec).
//! - [`fsynced`]: the replication offset the fsyncs made durable (WAITAOF, FACK).
//! - [`close`]: the background thread closing replaced and removed files.
//! - [`base`]: writing a base file (RDB or commands).
//! - [`stream`]: reading a commands file.
//! - [`load`]: loading the directory at start-up (and upgrading an old single file).
//! - [`rewrite`]: BGREWRITEAOF by fork, the manifest switch, automatic rewrites.
//! - this file: [`Aof`], the state; opening at start-up; CONFIG SET appendonly; the write
//!   before each iteration's replies; INFO persistence's aof_* fields.
//!
//! # Writes
//!
//! Commands add what replays them to the propagation stream ([`crate::propagate`]). Once
//! per event-loop iteration, before any reply of that iteration is sent, the stream goes
//! into the writer's buffer and the buffer is written (and under `appendfsync always`
//! fsynced): every write of one iteration shares one write and one fsync (group commit),
//! and a client never sees a reply that depends on a write not yet in the file.

pub mod base;
pub mod close;
pub mod config;
pub mod fsync;
pub mod fsynced;
pub mod load;
pub mod manifest;
pub mod rewrite;
pub mod stream;
pub mod writer;

use crate::clock::unix_ms;
use crate::commands::WhileBlocked;
use crate::keyspace::Free;
use crate::server::Server;
use crate::{notice, warning};
use manifest::Manifest;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether the AOF is on (Redis's aof_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Off.
    Off,
    /// On: writes go to the last incremental file.
    On,
    /// Turned on at run time: waiting for the first rewrite (its base) to finish, while
    /// the writes go to a temporary incremental file.
    WaitRewrite,
}

/// The AOF's state.
pub struct Aof {
    /// On, off, or waiting for the first base.
    pub state: State,
    /// The files.
    pub manifest: Manifest,
    /// The incremental file taking the writes.
    pub writer: Option<writer::Writer>,
    /// The everysec fsync thread.
    pub bio: fsync::FsyncThread,
    /// The thread closing replaced and removed files.
    pub closer: close::CloseThread,
    /// The rewrite child and its bookkeeping.
    pub rewrite: rewrite::RewriteState,
    /// The start-up load, while the event loop replays it.
    pub loading: Option<Box<load::AofLoad>>,
    /// How far the load running is (at start-up or for DEBUG LOADAOF); None when none runs.
    pub progress: Option<load::Progress>,
    /// Unix seconds of the last `#TS:` annotation.
    cur_timestamp: u64,
    /// Microseconds to sleep before each write of the buffer (DEBUG AOF-FLUSH-SLEEP).
    pub flush_sleep_us: u64,
    /// The replication offset known to be fsynced (Redis's fsynced_reploff): -1 while the
    /// AOF is off, 0 while its first rewrite runs, then what the fsyncs recorded
    /// ([`fsync::FsyncThread::fsynced`]), copied once per iteration.
    pub fsynced_reploff: i64,
}

impl Aof {
    /// An AOF that is off.
    pub fn new() -> Aof {
        Aof {
            state: State::Off,
            manifest: Manifest::default(),
            writer: None,
            bio: fsync::FsyncThread::start(),
            closer: close::CloseThread::start(),
            rewrite: rewrite::RewriteState::default(),
            loading: None,
            progress: None,
            cur_timestamp: 0,
            flush_sleep_us: 0,
            fsynced_reploff: -1,
        }
    }

    /// Whether a rewrite child runs.
    pub fn rewriting(&self) -> bool {
        self.rewrite.child.is_some()
    }

    /// Bytes allocated for the buffer of writes not yet written (INFO mem_aof_buffer).
    pub fn buffer_memory(&self) -> usize {
        self.writer.as_ref().map_or(0, |w| w.buf.capacity())
    }

    /// Whether writes are refused for a failed write or fsync, with the error (inlined:
    /// every command asks, and without an AOF the answer is one look).
    #[inline]
    pub fn write_error(&self) -> Option<String> {
        let w = self.writer.as_ref()?;
        if !w.write_ok {
            return Some(w.write_error.clone().unwrap_or_default());
        }
        (!self.bio.last_ok()).then(|| "Input/output error".to_string())
    }

    /// Whether the buffer's write is postponed behind a background fsync (everysec): the
    /// replies held for it wait for a later iteration.
    pub fn write_postponed(&self) -> bool {
        self.writer.as_ref().is_some_and(writer::Writer::postponed)
    }

    /// Whether the replies of this iteration must wait for the write of its commands.
    #[inline]
    pub fn holds_replies(&self, pending_stream: usize) -> bool {
        self.state != State::Off
            && (pending_stream > 0 || self.writer.as_ref().is_some_and(|w| !w.buf.is_empty()))
    }
}

impl Default for Aof {
    fn default() -> Self {
        Aof::new()
    }
}

/// The directory of the files.
pub fn dir_path(server: &Server) -> PathBuf {
    server.config.dir.join(&server.config.aof.dirname)
}

/// The writer's fsync policy now.
fn policy(server: &Server) -> writer::Policy {
    writer::Policy {
        fsync: server.config.aof.fsync,
        skip_fsync: server.config.aof.no_fsync_on_rewrite
            && (server.aof.rewriting() || server.rdb.child.is_some()),
        child_active: server.aof.rewriting() || server.rdb.child.is_some(),
        now: unix_ms() / 1000,
        sleep_us: server.aof.flush_sleep_us,
        reploff: server.replication.offset(),
    }
}

/// Moves the propagation stream into the writer's buffer (with a `#TS:` annotation when
/// the second changed and aof-timestamp-enabled is on), then writes it: called once per
/// event-loop iteration before its replies go out, and by the cron.
pub fn flush(server: &mut Server, force: bool) {
    server.drain_propagation();
    if server.aof.state == State::Off {
        return;
    }
    let policy = policy(server);
    let aof = &mut server.aof;
    let recording = aof.state == State::On || aof.rewriting();
    if let Some(w) = aof.writer.as_mut().filter(|_| recording) {
        w.flush(force, &policy, &aof.bio);
    }
    refresh_fsynced(server);
}

/// Copies the offset the fsyncs recorded into `fsynced_reploff` (not while the first
/// rewrite runs: its base is not on disk yet); a change may end WAITAOFs.
fn refresh_fsynced(server: &mut Server) {
    let aof = &mut server.aof;
    if aof.state != State::On || aof.fsynced_reploff == -1 {
        return;
    }
    let fsynced = aof.bio.fsynced.get() as i64;
    if fsynced != aof.fsynced_reploff {
        aof.fsynced_reploff = fsynced;
        server.replication.master.acks_changed = true;
    }
}

/// Appends a part of the propagation stream to the writer's buffer (with a `#TS:`
/// annotation when the second changed and aof-timestamp-enabled is on); [`flush`] writes it.
pub fn append(server: &mut Server, stream: &[u8]) {
    if server.aof.state == State::Off || stream.is_empty() {
        return;
    }
    let now = unix_ms() / 1000;
    let timestamps = server.config.aof.timestamp_enabled;
    let aof = &mut server.aof;
    // During the first rewrite the writes are kept only once the child runs: the ones
    // before are in its base.
    let recording = aof.state == State::On || aof.rewriting();
    let Some(w) = aof.writer.as_mut().filter(|_| recording) else {
        return;
    };
    if timestamps && aof.cur_timestamp < now {
        aof.cur_timestamp = now;
        w.buf.extend_from_slice(format!("#TS:{now}\r\n").as_bytes());
    }
    w.buf.extend_from_slice(stream);
}

/// Opens `name` in the directory for appending.
fn open_append(dir: &Path, name: &str) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(name))
}

/// Creates the directory unless it exists, logging Redis's line when it cannot.
fn create_dir(dir: &Path) -> bool {
    match std::fs::create_dir_all(dir) {
        Ok(()) => true,
        Err(e) => {
            warning!(
                "Can't open or create append-only dir {}: {e}",
                dir.file_name().unwrap_or_default().to_string_lossy()
            );
            false
        }
    }
}

/// Size of a file of the directory, 0 when unknown.
fn file_size(dir: &Path, name: &str) -> u64 {
    std::fs::metadata(dir.join(name)).map_or(0, |m| m.len())
}

/// After the start-up load with appendonly yes (Redis's aofOpenIfNeededOnServerStart):
/// a base is written when there is none and no incremental file, the last incremental
/// file is opened (or created) and the manifest persisted. An error is fatal.
pub fn open_at_start(server: &mut Server) -> anyhow::Result<()> {
    let dir = dir_path(server);
    if !create_dir(&dir) {
        anyhow::bail!("can't create {}", dir.display());
    }
    let filename = server.config.aof.filename.clone();
    let mut manifest = server.aof.manifest.clone();
    let incrs = manifest.incrs.len();
    if manifest.base.is_none() && incrs == 0 {
        let name = manifest.new_base(&filename, server.config.aof.use_rdb_preamble);
        let o = rewrite::base_options(server);
        if let Err(e) = base::write_base(
            &server.config.dir,
            &dir.join(&name),
            server.keyspace.databases(),
            &o,
        ) {
            warning!("Write error writing append only file on disk: {e}");
            anyhow::bail!("can't write the AOF base {name}");
        }
        notice!("Creating AOF base file {name} on server start");
    }
    let name = match manifest.incrs.last() {
        Some(f) => f.name.clone(),
        None => manifest.new_incr(&filename),
    };
    let file = open_append(&dir, &name).map_err(|e| {
        warning!("Can't open the append-only file {name}: {e}");
        anyhow::anyhow!("can't open {name}")
    })?;
    rewrite::persist_manifest(&dir, &filename, &manifest)?;
    let incr_size = file_size(&dir, &name);
    let total: u64 = manifest.files().map(|f| file_size(&dir, &f.name)).sum();
    let base_size = manifest
        .base
        .as_ref()
        .map_or(0, |b| file_size(&dir, &b.name));
    server.aof.manifest = manifest;
    server.aof.writer = Some(writer::Writer::new(
        file,
        incr_size,
        total,
        unix_ms() / 1000,
    ));
    server.aof.rewrite.base_size = base_size;
    server.aof.state = State::On;
    server.aof.fsynced_reploff = 0;
    enable_propagation(server, true);
    if incrs > 0 {
        notice!("Opening AOF incr file {name} on server start");
    } else {
        notice!("Creating AOF incr file {name} on server start");
    }
    Ok(())
}

/// Starts or stops the propagation the AOF consumes (it stays on while replicas need it).
/// Starting, what was propagated before goes to the replicas only (a new file starts from a
/// base that holds it), and the file's first command is preceded by a SELECT.
fn enable_propagation(server: &mut Server, on: bool) {
    if on {
        server.drain_propagation();
        server.propagation.reselect();
    }
    crate::replication::update_propagation(server);
}

/// CONFIG SET appendonly: turns the AOF on (the first base by a rewrite, Redis's
/// startAppendOnly) or off (stopAppendOnly). `in_exec` when run inside a transaction.
/// False when it could not be turned on.
pub fn set_enabled(server: &mut Server, on: bool, in_exec: bool) -> bool {
    match (on, server.aof.state) {
        (true, State::Off) => start(server, in_exec),
        (false, State::On | State::WaitRewrite) => {
            stop(server);
            true
        }
        _ => true,
    }
}

fn start(server: &mut Server, in_exec: bool) -> bool {
    server.aof.state = State::WaitRewrite;
    enable_propagation(server, true);
    if server.snapshot_child() {
        server.aof.rewrite.scheduled = true;
        warning!("AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.");
    } else if in_exec {
        server.aof.rewrite.scheduled = true;
        warning!("AOF was enabled during a transaction. An AOF background was scheduled to start when possible.");
    } else if !rewrite::start(server) {
        server.aof.state = State::Off;
        enable_propagation(server, false);
        warning!("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
        return false;
    }
    if !server.aof.bio.last_ok() {
        warning!("AOF reopen, just ignore the AOF fsync error in bio job");
        server.aof.bio.clear_error();
    }
    if let Some(w) = server.aof.writer.as_mut().filter(|w| !w.write_ok) {
        warning!("AOF reopen, just ignore the last error.");
        w.write_ok = true;
        w.write_error = None;
    }
    true
}

fn stop(server: &mut Server) {
    flush(server, true);
    let policy = policy(server);
    if let Some(mut w) = server.aof.writer.take() {
        w.flush_and_sync(&policy, &server.aof.bio);
    }
    server.aof.state = State::Off;
    server.aof.rewrite.scheduled = false;
    server.aof.fsynced_reploff = -1;
    server.aof.bio.fsynced.reset(0);
    // A WAITAOF waiting for the local fsync ends with an error.
    server.replication.master.acks_changed = true;
    rewrite::kill_child(server);
    enable_propagation(server, false);
}

/// After a full sync from a master (Redis's restartAOFAfterSYNC): the files hold another
/// history than the data just loaded, so the AOF starts again from a rewrite of it, and
/// its fsynced offset from the new history's once that rewrite is done. Exits when it
/// cannot be turned on again, as Redis does after ten tries a second apart.
pub fn restart_after_sync(server: &mut Server) {
    if server.aof.state == State::Off {
        return;
    }
    stop(server);
    for _ in 0..10 {
        if start(server, false) {
            return;
        }
        warning!("Failed enabling the AOF after successful master synchronization! Trying it again in one second.");
        std::thread::sleep(Duration::from_secs(1));
    }
    warning!("FATAL: this replica instance finished the synchronization with its master, but the AOF can't be turned on. Exiting now.");
    std::process::exit(1);
}

/// Whether a shutdown may go on (Redis's finishShutdown): not while the rewrite that
/// writes the first AOF runs, as exiting would lose the data, unless `force`.
pub fn may_exit(server: &Server, force: bool) -> bool {
    if !(server.aof.rewriting() && server.aof.state == State::WaitRewrite) {
        return true;
    }
    if force {
        warning!("Writing initial AOF. Exit anyway.");
    } else {
        warning!("Writing initial AOF, can't exit.");
    }
    force
}

/// At shutdown: the rewrite child killed, everything written and fsynced.
pub fn shutdown(server: &mut Server) {
    if server.aof.rewriting() {
        warning!("There is a child rewriting the AOF. Killing it!");
        rewrite::kill_child(server);
    }
    if server.aof.state != State::Off {
        flush(server, true);
        notice!("Calling fsync() on the AOF file.");
        let policy = policy(server);
        if let Some(w) = server.aof.writer.as_mut() {
            w.flush_and_sync(&policy, &server.aof.bio);
        }
    }
}

/// How long an AOF load replays before the clients are served again.
const LOAD_SLICE: Duration = Duration::from_millis(10);

/// Replays a slice of the start-up load; at its end the files are opened for appending.
/// Exits the process when the AOF cannot load, as Redis does. `while_blocked` serves the
/// clients if a script in the AOF runs long.
pub fn poll_loading(server: &mut Server, while_blocked: Option<&mut dyn WhileBlocked>) {
    let Some(mut load) = server.aof.loading.take() else {
        return;
    };
    let Some(outcome) = load::step(server, &mut load, LOAD_SLICE, while_blocked) else {
        server.aof.loading = Some(load);
        return;
    };
    if load::finish(server, *load, outcome)
        .and_then(|()| open_at_start(server))
        .is_err()
    {
        std::process::exit(1);
    }
}

/// The history files deleted (unless aof-disable-auto-gc keeps them): after DEBUG
/// LOADAOF, and when aof-disable-auto-gc is turned off.
pub fn collect_history(server: &mut Server) {
    let filename = server.config.aof.filename.clone();
    rewrite::delete_history(server, &dir_path(server), &filename);
}

/// DEBUG LOADAOF (Redis's order): the buffer written, the data and functions emptied, the
/// files named by the manifest on disk replayed (nothing replayed is propagated; the
/// other clients, served by `while_blocked` between slices and during a long script, get
/// -LOADING meanwhile), the history files deleted, and the changes not counted as dirty.
/// False when the files did not load (logged; Redis exits on a manifest that does not
/// parse, Goblin replies the error).
pub fn reload(server: &mut Server, mut while_blocked: Option<&mut dyn WhileBlocked>) -> bool {
    if server.aof.state != State::Off {
        flush(server, true);
    }
    let propagating = server.propagation.suspend();
    let empty = (0..server.config.databases).map(|_| Default::default());
    server.keyspace.replace_all(empty.collect(), Free::Now);
    server.scripting.functions.flush();
    let loaded = match load::begin(server) {
        // An AOF of empty files loads; one without files is an error, as in Redis.
        Ok(None) => server.aof.manifest.files().next().is_some(),
        Ok(Some(mut load)) => loop {
            let events = crate::commands::lend(&mut while_blocked);
            if let Some(outcome) = load::step(server, &mut load, LOAD_SLICE, events) {
                break load::finish(server, load, outcome).is_ok();
            }
            if let Some(events) = while_blocked.as_deref_mut() {
                events.process_events(server);
            }
        },
        Err(_) => false,
    };
    server.propagation.resume(propagating);
    collect_history(server);
    let dirty = server.keyspace.dirty();
    server.keyspace.saved(dirty);
    if loaded {
        notice!("Append Only File loaded by DEBUG LOADAOF");
    }
    loaded
}

/// Periodic work: a postponed or failed write retried, the rewrite child reaped, a
/// scheduled or automatic rewrite started.
pub fn cron(server: &mut Server) {
    if server.aof.state != State::Off {
        flush(server, false);
    }
    rewrite::cron(server);
}

/// The aof_* fields of INFO persistence.
pub fn info_fields(server: &Server, w: &mut String) {
    use std::fmt::Write as _;
    let aof = &server.aof;
    let r = &aof.rewrite;
    let current = r
        .child
        .as_ref()
        .map_or(-1, |c| c.started.elapsed().as_secs() as i64);
    let ok = |b: bool| if b { "ok" } else { "err" };
    let write_ok = aof.writer.as_ref().is_none_or(|w| w.write_ok) && aof.bio.last_ok();
    let _ = write!(
        w,
        "aof_enabled:{}\r\naof_rewrite_in_progress:{}\r\naof_rewrite_scheduled:{}\r\naof_last_rewrite_time_sec:{}\r\naof_current_rewrite_time_sec:{current}\r\naof_last_bgrewrite_status:{}\r\naof_rewrites:{}\r\naof_rewrites_consecutive_failures:{}\r\naof_last_write_status:{}\r\naof_last_cow_size:{}\r\nmodule_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n",
        (aof.state != State::Off) as u8,
        aof.rewriting() as u8,
        r.scheduled as u8,
        r.last_secs,
        ok(r.last_ok),
        r.rewrites,
        r.consecutive_failures,
        ok(write_ok),
        r.last_cow,
    );
    if aof.state != State::Off {
        let (size, buffered, delayed) = aof.writer.as_ref().map_or((0, 0, 0), |w| {
            (w.current_size, w.buf.len(), w.delayed_fsync)
        });
        let _ = write!(
            w,
            "aof_current_size:{size}\r\naof_base_size:{}\r\naof_pending_rewrite:{}\r\naof_buffer_length:{buffered}\r\naof_pending_bio_fsync:{}\r\naof_delayed_fsync:{delayed}\r\n",
            r.base_size,
            r.scheduled as u8,
            aof.bio.pending(),
        );
    }
}
