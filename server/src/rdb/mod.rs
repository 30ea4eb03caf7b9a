//! Persistence: RDB snapshots that Redis and Valkey read, and Redis / Valkey snapshots that
//! Goblin reads.
//!
//! - [`format`]: opcodes, types and encodings of the RDB format.
//! - [`crc64`], [`lzf`]: the checksum that ends a file, and LZF decompression.
//! - [`packed`]: ziplist and listpack blobs (small sorted sets of older and newer Redis).
//! - [`write`]: the writer (RDB 10, sorted sets as ZSET_2).
//! - [`read`]: the streaming loader, all sorted-set encodings, checksum, offsets in errors.
//! - [`file`]: crash-safe writes (temp file, fsync, rename, fsync of the directory).
//! - this file: SAVE, BGSAVE, LASTSAVE, save points, shutdown saves, DEBUG RELOAD, INFO.
//!
//! # BGSAVE
//!
//! As Redis: `fork()`, and the child writes the snapshot of its copy-on-write view of the
//! keyspace, then `_exit`s; the event loop never waits. The cron reaps the child with
//! `waitpid(WNOHANG)` and updates the state below. The child asks to be killed when the
//! parent dies (PR_SET_PDEATHSIG), so a crashed server leaves no writer behind that could
//! rename a file under a restarted one. The only pause the clients see is the fork itself
//! (copying the page tables: about 10 ms per GB of resident memory).

pub mod crc64;
pub mod file;
pub mod format;
pub mod lzf;
pub mod packed;
pub mod read;
pub mod write;

use crate::clock::unix_ms;
use crate::commands::Ctx;
use crate::keyspace::{Db, Value};
use crate::server::Server;
use crate::{notice, warning};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Instant;

/// Every key of a keyspace as (database, key, expiry, members with their scores' bits),
/// sorted: what a snapshot must carry, for comparing keyspaces across a save and a load.
pub type Contents = Vec<(usize, Vec<u8>, Option<u64>, Vec<(Vec<u8>, u64)>)>;

/// The [`Contents`] of `dbs`, checking each set's internal invariants on the way.
pub fn contents(dbs: &[Db]) -> Contents {
    let mut out = Vec::new();
    for (i, db) in dbs.iter().enumerate() {
        for e in db.iter() {
            let Value::ZSet(z) = &e.value;
            z.validate();
            let members = z.iter().map(|(m, s)| (m.to_vec(), s.to_bits())).collect();
            out.push((i, e.key().to_vec(), e.expire_at(), members));
        }
    }
    out.sort();
    out
}

/// Seconds to wait after a failed BGSAVE before a save point tries again (as Redis).
const BGSAVE_RETRY_DELAY: u64 = 5;

/// A running BGSAVE child.
#[derive(Debug)]
pub struct Child {
    /// Its process id.
    pub pid: libc::pid_t,
    /// When it was forked.
    pub started: Instant,
    /// Read end of a pipe on which the child reports its copy-on-write bytes.
    info_fd: libc::c_int,
}

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

fn aux_info(server: &Server) -> (u64, u64) {
    (unix_ms() / 1000, server.keyspace.used_memory() as u64)
}

fn load_options(server: &Server) -> read::LoadOptions {
    read::LoadOptions {
        databases: server.config.databases,
        zset: server.config.zset,
        skip_unsupported: server.config.rdb_skip_unsupported_types,
        now_ms: unix_ms(),
        clock_secs: server.keyspace.clock_secs(),
        size: None,
    }
}

/// SAVE's work: a foreground save. Logs and returns the error on failure.
pub fn save(server: &mut Server) -> std::io::Result<write::SaveStats> {
    let (ctime, used_mem) = aux_info(server);
    let aux = write::AuxInfo {
        redis_version: crate::commands::REDIS_VERSION,
        ctime,
        used_mem,
    };
    server.rdb.saves += 1;
    match file::save(
        &server.config.dir,
        &server.config.dbfilename,
        server.keyspace.databases(),
        &aux,
        unix_ms(),
    ) {
        Ok(stats) => {
            notice!("DB saved on disk");
            let changes = server.keyspace.dirty();
            server.keyspace.saved(changes);
            server.rdb.last_save = unix_ms() / 1000;
            server.rdb.last_bgsave_ok = true;
            Ok(stats)
        }
        Err(e) => {
            warning!("Write error saving DB on disk: {e}");
            Err(e)
        }
    }
}

/// Starts a background save. `Err` carries the reply text.
pub fn bgsave(server: &mut Server) -> Result<(), &'static str> {
    if server.rdb.child.is_some() {
        return Err("ERR Background save already in progress");
    }
    server.rdb.saves += 1;
    server.rdb.dirty_before_bgsave = server.keyspace.dirty();
    server.rdb.last_bgsave_try = unix_ms() / 1000;
    let (ctime, used_mem) = aux_info(server);
    let parent = std::process::id() as libc::pid_t;
    let mut fds = [-1 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array we pass.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        fds = [-1, -1];
    }
    let forking = Instant::now();
    // SAFETY: fork() has no preconditions; the child below only reads memory it owns
    // (its copy of the keyspace), allocates (glibc makes malloc fork-safe), does file I/O
    // and leaves with _exit, never returning into the event loop.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        child_main(server, parent, ctime, used_mem, fds);
    }
    close_fd(fds[1]);
    if pid < 0 {
        close_fd(fds[0]);
        let e = std::io::Error::last_os_error();
        server.rdb.last_bgsave_ok = false;
        warning!("Can't save in background: fork: {e}");
        return Err("ERR");
    }
    server.rdb.latest_fork_usec = forking.elapsed().as_micros() as u64;
    server.rdb.total_forks += 1;
    server.rdb.child = Some(Child {
        pid,
        started: Instant::now(),
        info_fd: fds[0],
    });
    notice!("Background saving started by pid {pid}");
    Ok(())
}

fn close_fd(fd: libc::c_int) {
    if fd >= 0 {
        // SAFETY: closing a descriptor this module opened and owns.
        unsafe { libc::close(fd) };
    }
}

fn child_main(
    server: &Server,
    parent: libc::pid_t,
    ctime: u64,
    used_mem: u64,
    fds: [libc::c_int; 2],
) -> ! {
    close_fd(fds[0]);
    // SAFETY: plain system calls on this process's own state.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
    let aux = write::AuxInfo {
        redis_version: crate::commands::REDIS_VERSION,
        ctime,
        used_mem,
    };
    // The child does not log: another thread may have held the log's lock at the fork.
    // It reports to the parent through the pipe instead (see `ChildReport`).
    let (code, report) = match file::save(
        &server.config.dir,
        &server.config.dbfilename,
        server.keyspace.databases(),
        &aux,
        unix_ms(),
    ) {
        Ok(stats) => {
            let cow = file::private_dirty_bytes();
            (0, ChildReport::Saved(stats, cow).encode())
        }
        Err(e) => (1, ChildReport::Failed(e.to_string()).encode()),
    };
    if fds[1] >= 0 {
        // SAFETY: writing from a live buffer to our own pipe (a few bytes, never blocks).
        unsafe { libc::write(fds[1], report.as_ptr().cast(), report.len()) };
    }
    // SAFETY: ends the child without running the parent's destructors or atexit handlers.
    unsafe { libc::_exit(code) }
}

/// What a BGSAVE child tells its parent through the pipe before it exits.
enum ChildReport {
    /// Saved: what was written, and the copy-on-write bytes.
    Saved(write::SaveStats, u64),
    /// The save failed, with the error.
    Failed(String),
}

impl ChildReport {
    fn encode(&self) -> Vec<u8> {
        match self {
            ChildReport::Saved(stats, cow) => [b'S']
                .into_iter()
                .chain(
                    [stats.keys, stats.bytes, *cow]
                        .iter()
                        .flat_map(|v| v.to_le_bytes()),
                )
                .collect(),
            ChildReport::Failed(e) => [b'F'].into_iter().chain(e.bytes().take(1000)).collect(),
        }
    }

    fn decode(bytes: &[u8]) -> Option<ChildReport> {
        let word = |i: usize| {
            Some(u64::from_le_bytes(
                bytes.get(1 + 8 * i..9 + 8 * i)?.try_into().ok()?,
            ))
        };
        match bytes.first()? {
            b'S' => {
                let stats = write::SaveStats {
                    keys: word(0)?,
                    members: 0,
                    bytes: word(1)?,
                };
                Some(ChildReport::Saved(stats, word(2)?))
            }
            b'F' => Some(ChildReport::Failed(
                String::from_utf8_lossy(&bytes[1..]).into_owned(),
            )),
            _ => None,
        }
    }
}

/// Collects a finished BGSAVE child, if any.
fn reap(server: &mut Server) {
    let Some(child) = &server.rdb.child else {
        return;
    };
    let mut status = 0;
    // SAFETY: waitpid on our own child with a valid status pointer.
    let r = unsafe { libc::waitpid(child.pid, &mut status, libc::WNOHANG) };
    if r == 0 {
        return;
    }
    let child = server.rdb.child.take().expect("checked");
    server.rdb.last_bgsave_secs = child.started.elapsed().as_secs() as i64;
    let mut buf = [0u8; 1024];
    let got = if child.info_fd >= 0 {
        // SAFETY: reading into a live buffer of that size from our own non-blocking pipe.
        unsafe { libc::read(child.info_fd, buf.as_mut_ptr().cast(), buf.len()) }
    } else {
        -1
    };
    close_fd(child.info_fd);
    match ChildReport::decode(&buf[..got.max(0) as usize]) {
        Some(ChildReport::Saved(stats, cow)) => {
            notice!(
                "DB saved on disk ({} keys, {} bytes)",
                stats.keys,
                stats.bytes
            );
            notice!("Fork CoW for RDB: current {} MB", cow >> 20);
            server.rdb.last_cow_bytes = cow;
        }
        Some(ChildReport::Failed(e)) => warning!("Write error saving DB on disk: {e}"),
        None => {}
    }
    if r == child.pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        notice!("Background saving terminated with success");
        server.keyspace.saved(server.rdb.dirty_before_bgsave);
        server.rdb.last_save = unix_ms() / 1000;
        server.rdb.last_bgsave_ok = true;
    } else if r == child.pid && libc::WIFEXITED(status) {
        warning!("Background saving error");
        server.rdb.last_bgsave_ok = false;
    } else {
        if r == child.pid {
            warning!(
                "Background saving terminated by signal {}",
                libc::WTERMSIG(status)
            );
        } else {
            warning!("waitpid() on the background saving child failed");
        }
        let _ = std::fs::remove_file(file::temp_path(&server.config.dir, child.pid as u32));
        server.rdb.last_bgsave_ok = false;
    }
}

/// Kills a running BGSAVE child and removes its temp file (SHUTDOWN, DEBUG RELOAD).
pub fn kill_child(server: &mut Server) {
    let Some(child) = server.rdb.child.take() else {
        return;
    };
    notice!("Killing running RDB child: {}", child.pid);
    // SAFETY: signalling and waiting for our own child.
    unsafe {
        libc::kill(child.pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(child.pid, &mut status, 0);
    }
    close_fd(child.info_fd);
    let _ = std::fs::remove_file(file::temp_path(&server.config.dir, child.pid as u32));
}

/// Cron work: reap the child, then start a BGSAVE when one was scheduled or a save point
/// is reached (at least `changes` changes and `seconds` since the last save).
pub fn cron(server: &mut Server) {
    reap(server);
    if server.rdb.child.is_some() {
        return;
    }
    let now = unix_ms() / 1000;
    let may_retry = server.rdb.last_bgsave_ok
        || now.saturating_sub(server.rdb.last_bgsave_try) > BGSAVE_RETRY_DELAY;
    if !may_retry {
        return;
    }
    if server.rdb.scheduled {
        if bgsave(server).is_ok() {
            server.rdb.scheduled = false;
        }
        return;
    }
    let since = now.saturating_sub(server.rdb.last_save);
    let due = server
        .config
        .save
        .iter()
        .find(|&&(secs, changes)| server.keyspace.dirty() >= changes && since > secs)
        .copied();
    if let Some((secs, changes)) = due {
        notice!("{changes} changes in {secs} seconds. Saving...");
        let _ = bgsave(server);
    }
}

/// Readies the server to exit: kills a BGSAVE child, then saves when `save` says so
/// (`None`: when save points are configured, as Redis). `Err` when that save failed.
pub fn prepare_shutdown(server: &mut Server, save: Option<bool>) -> std::io::Result<()> {
    if server.rdb.child.is_some() {
        warning!("There is a child saving an .rdb. Killing it!");
        kill_child(server);
    }
    if save.unwrap_or(!server.config.save.is_empty()) {
        notice!("Saving the final RDB snapshot before exiting.");
        if let Err(e) = self::save(server) {
            warning!("Error trying to save the DB, can't exit.");
            return Err(e);
        }
    }
    Ok(())
}

static SIGNALLED: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_shutdown_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::Relaxed);
}

/// SIGTERM and SIGINT ask for a shutdown (with a save when save points are set), as Redis.
pub fn install_signal_handlers() {
    let handler = on_shutdown_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGINT, handler);
    }
}

/// Checked by the event loop: true when a signal asked for shutdown and the server may
/// exit now.
pub fn signalled_shutdown(server: &mut Server) -> bool {
    let sig = SIGNALLED.swap(0, Ordering::Relaxed);
    if sig == 0 {
        return false;
    }
    let name = if sig == libc::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
    warning!("Received {name} scheduling shutdown...");
    if prepare_shutdown(server, None).is_err() {
        warning!("{name} received but errors trying to shut down the server, check the logs for more information");
        return false;
    }
    true
}

/// Loads the snapshot at start-up, if there is one. A bad file is an error: the server
/// must not start (and must not overwrite it later).
pub fn load_at_startup(server: &mut Server) -> anyhow::Result<()> {
    for name in file::remove_stale_temp_files(&server.config.dir) {
        notice!("Removed {name}, left by a save that did not finish");
    }
    let path = server.config.dir.join(&server.config.dbfilename);
    let started = Instant::now();
    match file::load(&path, &load_options(server)) {
        Ok(None) => Ok(()),
        Ok(Some((dbs, report))) => {
            log_report(&report);
            server.rdb.last_load_keys = report.keys;
            server.rdb.last_load_expired = report.expired_skipped;
            server.keyspace.replace_all(dbs);
            notice!(
                "DB loaded from disk: {:.3} seconds",
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Err(e) => {
            warning!(
                "Fatal error loading the DB {}: {e}. Exiting.",
                path.display()
            );
            anyhow::bail!("can't load {}: {e}", path.display())
        }
    }
}

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
    notice!(
        "Done loading RDB, keys loaded: {}, keys expired: {}.",
        report.keys,
        report.expired_skipped
    );
    if report.empty_skipped > 0 {
        notice!("Empty keys skipped: {}", report.empty_skipped);
    }
    for (name, count) in &report.unsupported_skipped {
        warning!("Skipped {count} keys of type {name} (rdb-skip-unsupported-types yes)");
    }
    if report.functions_skipped > 0 {
        warning!(
            "Skipped {} function libraries: Goblin has no functions",
            report.functions_skipped
        );
    }
    if report.module_aux_skipped > 0 {
        warning!("Skipped {} module AUX blocks", report.module_aux_skipped);
    }
}

/// SAVE
pub fn cmd_save(ctx: &mut Ctx, _args: &[&[u8]]) {
    if ctx.server.rdb.child.is_some() {
        return ctx.error("ERR Background save already in progress");
    }
    match save(ctx.server) {
        Ok(_) => ctx.out.ok(),
        Err(_) => ctx.error("ERR"),
    }
}

/// BGSAVE [SCHEDULE]
pub fn cmd_bgsave(ctx: &mut Ctx, args: &[&[u8]]) {
    let schedule = match args {
        [_] => false,
        [_, opt] if opt.eq_ignore_ascii_case(b"schedule") => true,
        _ => return ctx.syntax_error(),
    };
    if ctx.server.rdb.child.is_some() {
        if schedule {
            ctx.server.rdb.scheduled = true;
            return ctx.out.simple("Background saving scheduled");
        }
        return ctx.error("ERR Background save already in progress");
    }
    match bgsave(ctx.server) {
        Ok(()) => ctx.out.simple("Background saving started"),
        Err(e) => ctx.error(e),
    }
}

/// DEBUG RELOAD [NOSAVE]: save (unless NOSAVE), then load the file in place of the data.
/// Unlike Redis, a file that fails to load leaves the data as it was.
pub fn debug_reload(ctx: &mut Ctx, options: &[&[u8]]) {
    let mut nosave = false;
    for opt in options {
        if opt.eq_ignore_ascii_case(b"nosave") {
            nosave = true;
        } else {
            return ctx.error("ERR DEBUG RELOAD only supports the NOSAVE option in Goblin");
        }
    }
    if ctx.server.rdb.child.is_some() {
        kill_child(ctx.server);
    }
    if !nosave && save(ctx.server).is_err() {
        return ctx.error("ERR Error trying to save the RDB dump, check server logs.");
    }
    let path = ctx.server.config.dir.join(&ctx.server.config.dbfilename);
    let (dbs, report) = match file::load(&path, &load_options(ctx.server)) {
        Ok(Some(loaded)) => loaded,
        Ok(None) => {
            let n = ctx.server.config.databases;
            let empty = (0..n).map(|_| Db::default()).collect();
            (empty, read::LoadReport::empty())
        }
        Err(e) => {
            warning!("DEBUG RELOAD: can't load {}: {e}", path.display());
            return ctx.error("ERR Error trying to load the RDB dump, check server logs.");
        }
    };
    log_report(&report);
    ctx.server.keyspace.replace_all(dbs);
    ctx.server.rdb.last_load_keys = report.keys;
    ctx.server.rdb.last_load_expired = report.expired_skipped;
    notice!("DB reloaded by DEBUG RELOAD");
    ctx.out.ok();
}

/// The `# Persistence` section of INFO.
pub fn info_persistence(server: &Server, w: &mut String) {
    let st = &server.rdb;
    let current = st
        .child
        .as_ref()
        .map_or(-1, |c| c.started.elapsed().as_secs() as i64);
    let _ = write!(
        w,
        "# Persistence\r\nloading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\ncurrent_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\ncurrent_save_keys_total:0\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{current}\r\nrdb_saves:{}\r\nrdb_last_cow_size:{}\r\nrdb_last_load_keys_expired:{}\r\nrdb_last_load_keys_loaded:{}\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\naof_last_rewrite_time_sec:-1\r\naof_current_rewrite_time_sec:-1\r\naof_last_bgrewrite_status:ok\r\naof_rewrites:0\r\naof_rewrites_consecutive_failures:0\r\naof_last_write_status:ok\r\naof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n",
        server.keyspace.dirty(),
        st.child.is_some() as u8,
        st.last_save,
        if st.last_bgsave_ok { "ok" } else { "err" },
        st.last_bgsave_secs,
        st.saves,
        st.last_cow_bytes,
        st.last_load_expired,
        st.last_load_keys,
    );
}

impl read::LoadReport {
    /// The report of loading nothing (no file).
    pub fn empty() -> read::LoadReport {
        read::LoadReport {
            version: format::WRITE_VERSION,
            valkey: false,
            keys: 0,
            expired_skipped: 0,
            empty_skipped: 0,
            unsupported_skipped: Vec::new(),
            functions_skipped: 0,
            module_aux_skipped: 0,
            aux: Vec::new(),
            checksum: read::Checksum::Absent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_reports_survive_the_pipe_encoding() {
        let stats = write::SaveStats {
            keys: 3,
            members: 0,
            bytes: 1 << 40,
        };
        match ChildReport::decode(&ChildReport::Saved(stats, 77).encode()) {
            Some(ChildReport::Saved(s, cow)) => {
                assert_eq!((s.keys, s.bytes, cow), (3, 1 << 40, 77))
            }
            _ => panic!("not decoded"),
        }
        match ChildReport::decode(&ChildReport::Failed("disk full".into()).encode()) {
            Some(ChildReport::Failed(e)) => assert_eq!(e, "disk full"),
            _ => panic!("not decoded"),
        }
        assert!(ChildReport::decode(b"").is_none());
        assert!(ChildReport::decode(b"S\x01").is_none(), "short report");
    }
}
