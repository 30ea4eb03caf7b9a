//! Snapshot files on disk: the crash-safe write and the background child.
//!
//! A save writes `temp-<pid>.rdb` in the snapshot directory, fsyncs it, renames it over the
//! snapshot and fsyncs the directory. A kill at any moment leaves either the old complete
//! snapshot or the new complete one under the snapshot name; at worst a stray temp file.

use super::read::{self, LoadError, LoadOptions, LoadReport};
use super::write::{write_snapshot, AuxInfo, SaveStats};
use crate::keyspace::Db;
use std::ffi::{CStr, CString};
use std::fs::{self, File};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The temp file a process with `pid` writes.
pub fn temp_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("temp-{pid}.rdb"))
}

/// The temp file of the foreground save running now, as a C string for
/// [`remove_temp_from_handler`]; null when no save runs. Each distinct path is leaked once
/// (kept while the directory does not change), so the handler never reads freed memory.
static SAVING: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
/// The last path [`SAVING`] pointed to, reused while the directory stays the same.
static LAST_TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Marks `tmp` as the file a save is writing now (or none).
fn set_saving(tmp: Option<&Path>) {
    let Some(tmp) = tmp else {
        SAVING.store(std::ptr::null_mut(), Ordering::SeqCst);
        return;
    };
    let Ok(c) = CString::new(tmp.as_os_str().as_bytes()) else {
        return;
    };
    let last = LAST_TEMP.load(Ordering::SeqCst);
    // SAFETY: LAST_TEMP only ever holds null or a leaked, never freed CString.
    let same = !last.is_null() && unsafe { CStr::from_ptr(last) } == c.as_c_str();
    let ptr = if same {
        last
    } else {
        let leaked = c.into_raw();
        LAST_TEMP.store(leaked, Ordering::SeqCst);
        leaked
    };
    SAVING.store(ptr, Ordering::SeqCst);
}

/// From a signal handler about to exit (a second Ctrl+C): removes the temp file of the
/// save running, as Redis's rdbRemoveTempFile. Async-signal-safe (one unlink).
pub fn remove_temp_from_handler() {
    let ptr = SAVING.load(Ordering::SeqCst);
    if !ptr.is_null() {
        // SAFETY: ptr is a leaked, never freed, NUL-terminated string; unlink is
        // async-signal-safe.
        unsafe { libc::unlink(ptr) };
    }
}

/// Writes a snapshot of `dbs` to `dir/filename`, crash-safely.
pub fn save(dir: &Path, filename: &str, dbs: &[Db], aux: &AuxInfo) -> io::Result<SaveStats> {
    let tmp = temp_path(dir, std::process::id());
    set_saving(Some(&tmp));
    let result = (|| {
        let file = File::create(&tmp)?;
        let (file, stats) = write_snapshot(file, dbs, aux)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, dir.join(filename))?;
        File::open(dir)?.sync_all()?;
        Ok(stats)
    })();
    set_saving(None);
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
    load_with(path, opts, |f| f)
}

/// Loads `path` through the reader `wrap` makes of the file (to count its progress).
pub fn load_with<R: std::io::Read>(
    path: &Path,
    opts: &LoadOptions,
    wrap: impl FnOnce(File) -> R,
) -> Result<Option<(Vec<Db>, LoadReport)>, LoadError> {
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
    read::load(wrap(file), &opts).map(Some)
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
