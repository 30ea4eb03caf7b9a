//! Snapshot files on disk: the crash-safe write and the background child.
//!
//! A save writes `temp-<pid>.rdb` in the snapshot directory, fsyncs it, renames it over the
//! snapshot and fsyncs the directory. A kill at any moment leaves either the old complete
//! snapshot or the new complete one under the snapshot name; at worst a stray temp file.

use super::read::{self, LoadError, LoadOptions, LoadReport};
use super::write::{write_snapshot, AuxInfo, SaveStats};
use crate::db::Db;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// The temp file a process with `pid` writes.
pub fn temp_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("temp-{pid}.rdb"))
}

/// Writes a snapshot of `dbs` to `dir/filename`, crash-safely.
pub fn save(
    dir: &Path,
    filename: &str,
    dbs: &[Db],
    aux: &AuxInfo,
    now_ms: u64,
) -> io::Result<SaveStats> {
    let tmp = temp_path(dir, std::process::id());
    let result = (|| {
        let file = File::create(&tmp)?;
        let (file, stats) = write_snapshot(file, dbs, aux, now_ms)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, dir.join(filename))?;
        File::open(dir)?.sync_all()?;
        Ok(stats)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
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
