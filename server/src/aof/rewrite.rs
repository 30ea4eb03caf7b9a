//! BGREWRITEAOF (Redis's rewriteAppendOnlyFileBackground and backgroundRewriteDoneHandler):
//! a forked child writes the new base of its copy-on-write view of the dataset while a
//! new incremental file takes the writes; when the child succeeded the temp base is
//! renamed into the directory, the files it covers become history in a new manifest
//! (written to a temp file and renamed: the switch is atomic), and the history files are
//! deleted.
//!
//! ```text
//! before:  base 1 + incr 1 (writes)
//! fork:    base 1 + incr 1 + incr 2 (writes)      child: temp-rewriteaof-bg-<pid>.aof
//! done:    base 2 + incr 2 (writes)               manifest switched; base 1, incr 1 deleted
//! ```

use super::{base, dir_path, flush, manifest::Manifest, State};
use crate::clock::unix_ms;
use crate::rdb::fork::{self, Child, ChildReport, Exit};
use crate::rdb::write::AuxInfo;
use crate::server::Server;
use crate::{notice, warning};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Consecutive failures after which automatic rewrites are delayed.
const LIMIT_THRESHOLD: u64 = 3;
/// The longest delay, minutes.
const LIMIT_MAX_MINUTES: u64 = 60;

/// Rewrite bookkeeping (Redis's aof_rewrite_* and stat_aof_* fields).
#[derive(Debug)]
pub struct RewriteState {
    /// The running child.
    pub child: Option<Child>,
    /// A rewrite waits for another child (or the end of a transaction).
    pub scheduled: bool,
    /// Seconds the last rewrite took (-1 before any).
    pub last_secs: i64,
    /// Whether the last rewrite succeeded.
    pub last_ok: bool,
    /// Rewrites started.
    pub rewrites: u64,
    /// Failures since the last success.
    pub consecutive_failures: u64,
    /// Copy-on-write bytes of the last rewrite child.
    pub last_cow: u64,
    /// Size of the AOF after the last rewrite (the base of the growth percentage).
    pub base_size: u64,
    /// Minutes the next automatic retry waits after repeated failures (0: none).
    next_delay_minutes: u64,
    /// Unix seconds before which no automatic rewrite starts (0: none).
    next_time: u64,
}

impl Default for RewriteState {
    fn default() -> Self {
        RewriteState {
            child: None,
            scheduled: false,
            last_secs: -1,
            last_ok: true,
            rewrites: 0,
            consecutive_failures: 0,
            last_cow: 0,
            base_size: 0,
            next_delay_minutes: 0,
            next_time: 0,
        }
    }
}

impl RewriteState {
    /// Whether repeated failures hold automatic rewrites back (Redis's aofRewriteLimited).
    fn limited(&mut self, now: u64) -> bool {
        if self.consecutive_failures < LIMIT_THRESHOLD {
            self.next_delay_minutes = 0;
            self.next_time = 0;
            return false;
        }
        if self.next_time != 0 {
            if now < self.next_time {
                return true;
            }
            self.next_time = 0;
            return false;
        }
        self.next_delay_minutes = (self.next_delay_minutes * 2).clamp(1, LIMIT_MAX_MINUTES);
        self.next_time = now + self.next_delay_minutes * 60;
        warning!(
            "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {} minutes",
            self.next_delay_minutes
        );
        true
    }
}

/// The base options under the server's configuration now.
pub fn base_options(server: &mut Server) -> base::BaseOptions<'static> {
    let now_ms = unix_ms();
    base::BaseOptions {
        rdb: server.config.aof.use_rdb_preamble,
        aux: AuxInfo {
            aof_base: true,
            repl: None,
            incremental_fsync: (server.config.aof.rewrite_incremental_fsync)
                .then_some(crate::rdb::file::AUTOSYNC_BYTES),
            ..server.snapshots().aux_info()
        },
        now_ms,
        timestamp: server.config.aof.timestamp_enabled,
    }
}

/// The temp base a child with `pid` writes, in `dir`.
fn temp_base(dir: &Path, pid: libc::pid_t) -> std::path::PathBuf {
    dir.join(format!("temp-rewriteaof-bg-{pid}.aof"))
}

/// Writes `manifest` crash-safely (Redis's writeAofManifestFile): temp file, fsync,
/// rename, fsync of the directory.
pub fn persist_manifest(dir: &Path, filename: &str, manifest: &Manifest) -> anyhow::Result<()> {
    let name = super::manifest::manifest_name(filename);
    let tmp_name = super::manifest::temp_manifest_name(filename);
    let tmp = dir.join(&tmp_name);
    let mut file = File::create(&tmp).map_err(|e| {
        warning!("Can't open the AOF manifest file {tmp_name}: {e}");
        anyhow::anyhow!("can't open {tmp_name}")
    })?;
    file.write_all(manifest.format().as_bytes()).map_err(|e| {
        warning!("Error trying to write the temporary AOF manifest file {tmp_name}: {e}");
        anyhow::anyhow!("can't write {tmp_name}")
    })?;
    file.sync_all().map_err(|e| {
        warning!("Fail to fsync the temp AOF file {tmp_name}: {e}.");
        anyhow::anyhow!("can't fsync {tmp_name}")
    })?;
    fs::rename(&tmp, dir.join(&name)).map_err(|e| {
        warning!(
            "Error trying to rename the temporary AOF manifest file {tmp_name} into {name}: {e}"
        );
        anyhow::anyhow!("can't rename {tmp_name}")
    })?;
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| {
        warning!(
            "Fail to fsync AOF directory {}: {e}.",
            dir.join(&name).display()
        );
        anyhow::anyhow!("can't fsync {}", dir.display())
    })
}

/// The file that takes the writes from now on (Redis's openNewIncrAofForAppend): a new
/// incremental file in a new manifest, or while the first rewrite runs the temp one. The
/// old file is fsynced and closed by the close thread: the writes to the new one never
/// wait for that fsync.
fn open_new_incr(server: &mut Server) -> Result<(), ()> {
    if server.aof.state == State::Off {
        return Ok(());
    }
    let dir = dir_path(server);
    let filename = server.config.aof.filename.clone();
    let mut manifest = None;
    let name = if server.aof.state == State::WaitRewrite {
        super::manifest::temp_incr_name(&filename)
    } else {
        let mut m = server.aof.manifest.clone();
        let name = m.new_incr(&filename);
        manifest = Some(m);
        name
    };
    let opened = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(dir.join(&name));
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            warning!("Can't open the append-only file {name}: {e}");
            return Err(());
        }
    };
    if let Some(m) = &manifest {
        persist_manifest(&dir, &filename, m).map_err(|_| ())?;
    }
    notice!("Creating AOF incr file {name} on background rewrite");
    let now = unix_ms() / 1000;
    let current = match server.aof.writer.take() {
        Some(old) => {
            let mark = server.aof.bio.fsynced.mark(server.replication.offset());
            server.aof.closer.fsync_and_close(old.file(), mark);
            old.current_size
        }
        None => 0,
    };
    server.aof.writer = Some(super::writer::Writer::new(file, 0, current, now));
    if let Some(m) = manifest {
        server.aof.manifest = m;
    }
    Ok(())
}

/// Starts a rewrite child; false when another child runs or something failed (logged).
pub fn start(server: &mut Server) -> bool {
    if server.aof.rewriting() || server.snapshot_child() {
        return false;
    }
    let dir = dir_path(server);
    if !super::create_dir(&dir) {
        server.aof.rewrite.last_ok = false;
        return false;
    }
    server.propagation.reselect();
    flush(server, true);
    if open_new_incr(server).is_err() {
        server.aof.rewrite.last_ok = false;
        return false;
    }
    if server.aof.state == State::WaitRewrite {
        // The first base holds the stream up to here: once it is done, fsynced_reploff
        // takes this offset (or a later one the fsyncs of the temp incr file recorded).
        server.aof.bio.fsynced.reset(server.replication.offset());
        server.aof.fsynced_reploff = 0;
    }
    server.aof.rewrite.rewrites += 1;
    let o = base_options(server);
    let workdir = server.config.dir.clone();
    let dbs = server.keyspace.databases();
    let keys_total = server.keyspace.key_count();
    let job = || {
        let pid = std::process::id() as libc::pid_t;
        base::write_base(&workdir, &temp_base(&workdir, pid), dbs, &o)
    };
    match fork::spawn(fork::Purpose::AofRewrite, keys_total, job) {
        Ok((child, took)) => {
            server.rdb.latest_fork_usec = took.as_micros() as u64;
            server.rdb.total_forks += 1;
            notice!(
                "Background append only file rewriting started by pid {}",
                child.pid
            );
            server.aof.rewrite.child = Some(child);
            server.aof.rewrite.scheduled = false;
            true
        }
        Err(e) => {
            server.aof.rewrite.last_ok = false;
            warning!("Can't rewrite append only file in background: fork: {e}");
            false
        }
    }
}

/// Kills a running rewrite child and removes its temp files.
pub fn kill_child(server: &mut Server) {
    let Some(child) = server.aof.rewrite.child.take() else {
        return;
    };
    notice!("Killing running AOF rewrite child: {}", child.pid);
    let pid = child.pid;
    child.kill();
    remove_temp_files(server, pid);
}

/// Removes a child's temp files, their blocks freed by the close thread.
fn remove_temp_files(server: &Server, pid: libc::pid_t) {
    let dir = &server.config.dir;
    let closer = &server.aof.closer;
    let _ = closer.unlink(&temp_base(dir, pid));
    let _ = closer.unlink(&dir.join(format!("temp-rewriteaof-{pid}.aof")));
}

/// Reaps a finished child, then starts a scheduled or an automatic rewrite when due.
pub fn cron(server: &mut Server) {
    reap(server);
    let now = unix_ms() / 1000;
    if server.aof.rewriting() || server.snapshot_child() {
        return;
    }
    if server.aof.rewrite.scheduled {
        if !server.aof.rewrite.limited(now) {
            start(server);
        }
        return;
    }
    let perc = server.config.aof.auto_rewrite_percentage;
    let size = server.aof.writer.as_ref().map_or(0, |w| w.current_size);
    if server.aof.state != State::On || perc == 0 || size <= server.config.aof.auto_rewrite_min_size
    {
        return;
    }
    let base = server.aof.rewrite.base_size.max(1);
    let growth = (size * 100 / base) as i64 - 100;
    if growth >= perc as i64 && !server.aof.rewrite.limited(now) {
        notice!("Starting automatic rewriting of AOF on {growth}% growth");
        start(server);
    }
}

fn reap(server: &mut Server) {
    let Some(exit) = server.aof.rewrite.child.as_mut().and_then(Child::try_reap) else {
        return;
    };
    let child = server.aof.rewrite.child.take().expect("checked");
    match exit {
        Exit::Code(0, report) => {
            notice!("Background AOF rewrite terminated with success");
            if let Some(ChildReport::Saved(..)) = report {
                server.aof.rewrite.last_cow = child.log_cow("AOF rewrite");
            }
            if finish(server, child.pid).is_err() {
                server.aof.rewrite.last_ok = false;
                server.aof.rewrite.consecutive_failures += 1;
            }
        }
        Exit::Code(_, report) => {
            if let Some(ChildReport::Failed(e)) = report {
                warning!("Write error writing append only file on disk: {e}");
            }
            server.aof.rewrite.last_ok = false;
            server.aof.rewrite.consecutive_failures += 1;
            warning!("Background AOF rewrite terminated with error");
        }
        Exit::Signal(sig) => {
            server.aof.rewrite.last_ok = false;
            server.aof.rewrite.consecutive_failures += 1;
            warning!("Background AOF rewrite terminated by signal {sig}");
        }
        Exit::WaitFailed => {
            server.aof.rewrite.last_ok = false;
            server.aof.rewrite.consecutive_failures += 1;
            warning!("Background AOF rewrite terminated with error");
        }
    }
    remove_temp_files(server, child.pid);
    if server.aof.state == State::WaitRewrite {
        server.aof.writer = None;
        let name = super::manifest::temp_incr_name(&server.config.aof.filename);
        notice!("Removing the temp incr aof file {name} in the background");
        let _ = server.aof.closer.unlink(&dir_path(server).join(name));
        server.aof.rewrite.scheduled = true;
    }
    server.aof.rewrite.last_secs = child.started.elapsed().as_secs() as i64;
}

/// The child succeeded: the new base and manifest take over (Redis's
/// backgroundRewriteDoneHandler). Err when the switch failed (logged).
fn finish(server: &mut Server, pid: libc::pid_t) -> Result<(), ()> {
    let dir = dir_path(server);
    let filename = server.config.aof.filename.clone();
    let tmp = temp_base(&server.config.dir, pid);
    let tmp_name = tmp
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let mut m = server.aof.manifest.clone();
    let base_name = m.new_base(&filename, server.config.aof.use_rdb_preamble);
    let base_path = dir.join(&base_name);
    let renaming = std::time::Instant::now();
    let renamed = fs::rename(&tmp, &base_path);
    crate::latency::sample("aof-rename", renaming.elapsed());
    if let Err(e) = renamed {
        warning!(
            "Error trying to rename the temporary AOF base file {tmp_name} into {}: {e}",
            base_path.display()
        );
        return Err(());
    }
    notice!("Successfully renamed the temporary AOF base file {tmp_name} into {base_name}");
    let mut new_incr = None;
    if server.aof.state == State::WaitRewrite {
        let temp_incr = super::manifest::temp_incr_name(&filename);
        let incr = m.new_incr(&filename);
        let renaming = std::time::Instant::now();
        let renamed = fs::rename(dir.join(&temp_incr), dir.join(&incr));
        crate::latency::sample("aof-rename", renaming.elapsed());
        if let Err(e) = renamed {
            warning!(
                "Error trying to rename the temporary AOF incr file {} into {}: {e}",
                dir.join(&temp_incr).display(),
                dir.join(&incr).display()
            );
            let _ = fs::remove_file(&base_path);
            return Err(());
        }
        notice!("Successfully renamed the temporary AOF incr file {temp_incr} into {incr}");
        new_incr = Some(incr);
    }
    m.rewritten_incrs_to_history(server.aof.writer.is_some());
    if persist_manifest(&dir, &filename, &m).is_err() {
        let _ = fs::remove_file(&base_path);
        if let Some(incr) = &new_incr {
            let _ = fs::remove_file(dir.join(incr));
        }
        return Err(());
    }
    server.aof.manifest = m;
    if let Some(w) = server.aof.writer.as_mut() {
        server.propagation.reselect();
        let base_size = fs::metadata(&base_path).map_or(0, |md| md.len());
        // What the incremental file holds past its last fsync still needs one (under
        // everysec a second later, under always at the next flush): the sizes change
        // with the new base, the unsynced tail does not.
        let unsynced = w.current_size.saturating_sub(w.fsync_offset);
        w.current_size = base_size + w.incr_size;
        w.fsync_offset = w.current_size.saturating_sub(unsynced);
        server.aof.rewrite.base_size = w.current_size;
    }
    delete_history(server, &dir, &filename);
    server.aof.rewrite.last_ok = true;
    server.aof.rewrite.consecutive_failures = 0;
    notice!("Background AOF rewrite finished successfully");
    if server.aof.state == State::WaitRewrite {
        server.aof.state = State::On;
        server.aof.fsynced_reploff = server.aof.bio.fsynced.get() as i64;
        server.replication.master.acks_changed = true;
    }
    Ok(())
}

/// Deletes the history files and writes the manifest without them (Redis's
/// aofDelHistoryFiles), unless aof-disable-auto-gc keeps them.
pub(super) fn delete_history(server: &mut Server, dir: &Path, filename: &str) {
    if server.config.aof.disable_auto_gc || server.aof.manifest.history.is_empty() {
        return;
    }
    for f in std::mem::take(&mut server.aof.manifest.history) {
        notice!("Removing the history file {} in the background", f.name);
        let _ = server.aof.closer.unlink(&dir.join(&f.name));
    }
    let _ = persist_manifest(dir, filename, &server.aof.manifest);
}

/// BGREWRITEAOF's reply: Ok(status) or Err(error), as Redis's bgrewriteaofCommand.
pub fn bgrewriteaof(server: &mut Server, in_exec: bool) -> Result<&'static str, &'static str> {
    if server.aof.rewriting() {
        Err("ERR Background append only file rewriting already in progress")
    } else if server.snapshot_child() || in_exec {
        server.aof.rewrite.scheduled = true;
        server.aof.rewrite.consecutive_failures = 0;
        Ok("Background append only file rewriting scheduled")
    } else if start(server) {
        Ok("Background append only file rewriting started")
    } else {
        Err("ERR Can't execute an AOF background rewriting. Please check the server logs for more information.")
    }
}
