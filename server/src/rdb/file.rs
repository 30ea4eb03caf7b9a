//! Snapshot files on disk: the crash-safe write and the background child.
//!
//! A save writes `temp-<pid>.rdb` in the snapshot directory, fsyncs it, renames it over the
//! snapshot and fsyncs the directory. A kill at any moment leaves either the old complete
//! snapshot or the new complete one under the snapshot name; at worst a stray temp file.

use super::read::{self, LoadError, LoadOptions, LoadReport};
use super::write::{write_snapshot, AuxInfo, SaveStats};
use crate::keyspace::Db;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

/// The temp file a process with `pid` writes.
pub fn temp_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("temp-{pid}.rdb"))
}

/// The directory of the foreground save running now, as an open descriptor for
/// [`remove_temp_from_handler`] (as the log keeps its file's for its handler); -1 when no
/// save runs.
static SAVING_DIR: AtomicI32 = AtomicI32::new(-1);

/// From a signal handler about to exit (a second Ctrl+C): removes the temp file of the
/// save running (`temp-<pid>.rdb` in its directory), as Redis's rdbRemoveTempFile.
/// Async-signal-safe: no allocation, one unlinkat.
pub fn remove_temp_from_handler() {
    let dir = SAVING_DIR.load(Ordering::SeqCst);
    if dir < 0 {
        return;
    }
    // SAFETY: getpid is async-signal-safe.
    let pid = unsafe { libc::getpid() };
    let mut name = [0u8; 32];
    let mut len = 0;
    for part in [
        &b"temp-"[..],
        itoa::Buffer::new().format(pid).as_bytes(),
        b".rdb",
    ] {
        name[len..len + part.len()].copy_from_slice(part);
        len += part.len();
    }
    // SAFETY: `name` is NUL-terminated (at most 20 bytes written); unlinkat is
    // async-signal-safe and an fd no longer open only makes it fail.
    unsafe { libc::unlinkat(dir, name.as_ptr().cast(), 0) };
}

/// Bytes written between two syncs of a file written with incremental fsync (Redis's
/// REDIS_AUTOSYNC_BYTES).
pub const AUTOSYNC_BYTES: u64 = 4 << 20;

/// A file that, when `every` is set (rdb-save-incremental-fsync,
/// aof-rewrite-incremental-fsync), flushes its data to the disk each time that many more
/// bytes were written, so a large save does not leave gigabytes for the final fsync to
/// push out at once (Redis's rioSetAutoSync).
pub struct AutoSync {
    file: File,
    every: Option<u64>,
    unsynced: u64,
    syncs: u64,
}

impl AutoSync {
    /// `file`, synced every `every` bytes when given.
    pub fn new(file: File, every: Option<u64>) -> AutoSync {
        AutoSync {
            file,
            every,
            unsynced: 0,
            syncs: 0,
        }
    }

    /// The file, for its last fsync.
    pub fn into_file(self) -> File {
        self.file
    }
}

impl io::Write for AutoSync {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.unsynced += n as u64;
        if self.every.is_some_and(|every| self.unsynced >= every) {
            self.file.sync_data()?;
            self.unsynced = 0;
            self.syncs += 1;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Writes a snapshot of `dbs` to `dir/filename`, crash-safely.
pub fn save(dir: &Path, filename: &str, dbs: &[Db], aux: &AuxInfo) -> io::Result<SaveStats> {
    let tmp = temp_path(dir, std::process::id());
    let directory = File::open(dir)?;
    SAVING_DIR.store(directory.as_raw_fd(), Ordering::SeqCst);
    let result = (|| {
        let file = AutoSync::new(File::create(&tmp)?, aux.incremental_fsync);
        let (file, stats) = write_snapshot(file, dbs, aux)?;
        let file = file.into_file();
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, dir.join(filename))?;
        directory.sync_all()?;
        Ok(stats)
    })();
    SAVING_DIR.store(-1, Ordering::SeqCst);
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes the `temp-<pid>.rdb` files in `dir` left by processes that no longer exist (a
/// server killed while saving). Files of live processes (another server sharing the
/// directory, a running child) are kept. Returns the names removed.
pub fn remove_stale_temp_files(dir: &Path) -> Vec<String> {
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("temp-")
            .and_then(|rest| rest.strip_suffix(".rdb"))
            .and_then(|digits| digits.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid <= 0 || pid as u32 == std::process::id() {
            continue;
        }
        // SAFETY: kill with signal 0 only checks whether the process exists.
        let missing = unsafe { libc::kill(pid, 0) } == -1
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        // A killed child not yet reaped is a zombie: it will write nothing more either.
        let zombie = fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| Some(stat.rsplit_once(')')?.1.trim_start().starts_with('Z')))
            .unwrap_or(false);
        let gone = missing || zombie;
        if gone && fs::remove_file(entry.path()).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// Loads `path`; `Ok(None)` when there is no such file.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Option<(Vec<Db>, LoadReport)>, LoadError> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(LoadError {
                kind: read::ErrorKind::Io,
                offset: 0,
                message: format!("can't open {}: {e}", path.display()),
            })
        }
    };
    let size = file.metadata().ok().map(|m| m.len());
    let opts = LoadOptions {
        size,
        ..opts.clone()
    };
    read::load(file, &opts).map(Some)
}

/// Resident memory this process wrote to since the fork (copy-on-write cost of a child),
/// from /proc/self/smaps_rollup; 0 when unknown.
pub fn private_dirty_bytes() -> u64 {
    let Ok(text) = fs::read_to_string("/proc/self/smaps_rollup") else {
        return 0;
    };
    text.lines()
        .filter(|l| l.starts_with("Private_Dirty:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum::<u64>()
        * 1024
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_is_synced_each_time_the_bytes_written_reach_the_step() {
        let dir = std::env::temp_dir().join(format!("autosync-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for (every, syncs) in [(Some(1000), 10), (Some(4096), 2), (None, 0)] {
            let mut file = AutoSync::new(File::create(dir.join("f")).unwrap(), every);
            for _ in 0..100 {
                file.write_all(&[7u8; 100]).unwrap();
            }
            assert_eq!(file.syncs, syncs, "{every:?}");
            assert_eq!(file.into_file().metadata().unwrap().len(), 10_000);
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
