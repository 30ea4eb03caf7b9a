//! Loading the snapshot at start-up on a thread while the event loop runs, as Redis keeps
//! its port open during a load: commands without the `loading` flag get `-LOADING` (at the
//! steps Redis serves its clients, see `net::handler`), INFO shows the progress (the
//! loading_* fields), and the loop installs the databases when the thread is done.

use super::file;
use super::read::{LoadError, LoadOptions, LoadReport};
use crate::keyspace::Db;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// What the loading thread returns.
pub type Loaded = Result<Option<(Vec<Db>, LoadReport)>, LoadError>;

/// A load in progress.
#[derive(Debug)]
pub struct Loading {
    /// The file being loaded.
    pub path: PathBuf,
    /// When it started.
    pub started: Instant,
    /// When it started, Unix seconds (INFO loading_start_time).
    pub started_unix: u64,
    /// The file's size (INFO loading_total_bytes).
    pub total_bytes: u64,
    /// Read from the master's socket as it arrives ([`Loading::stream`]), not from `path`.
    pub socket: bool,
    loaded: Arc<AtomicU64>,
    thread: JoinHandle<Loaded>,
}

impl Loading {
    /// Starts loading `path` on a thread, or None when there is no such file.
    pub fn start(path: PathBuf, opts: LoadOptions) -> Option<Loading> {
        let total_bytes = std::fs::metadata(&path).ok()?.len();
        let (loaded, opts) = reporting(opts);
        let thread_path = path.clone();
        let thread = std::thread::Builder::new()
            .name("rdb-load".into())
            .spawn(move || file::load(&thread_path, &opts))
            .expect("spawn the loading thread");
        Some(Loading {
            path,
            started: Instant::now(),
            started_unix: crate::clock::unix_ms() / 1000,
            total_bytes,
            socket: false,
            loaded,
            thread,
        })
    }

    /// Starts loading a snapshot read from `reader` (a replica's payload as it arrives from
    /// the master) on a thread; `total_bytes` is its size when known (else 0).
    pub fn stream<R: Read + Send + 'static>(
        reader: R,
        total_bytes: u64,
        opts: LoadOptions,
    ) -> Loading {
        let (loaded, opts) = reporting(opts);
        let thread = std::thread::Builder::new()
            .name("rdb-load".into())
            .spawn(move || super::read::load(reader, &opts).map(Some))
            .expect("spawn the loading thread");
        Loading {
            path: PathBuf::new(),
            started: Instant::now(),
            started_unix: crate::clock::unix_ms() / 1000,
            total_bytes,
            socket: true,
            loaded,
            thread,
        }
    }

    /// Bytes parsed so far (INFO loading_loaded_bytes).
    pub fn loaded_bytes(&self) -> u64 {
        self.loaded.load(Ordering::Relaxed)
    }

    /// Whether the thread is done (its result can be taken without waiting).
    pub fn is_done(&self) -> bool {
        self.thread.is_finished()
    }

    /// Waits for the thread and returns what it loaded.
    pub fn finish(self) -> Loaded {
        self.thread.join().unwrap_or_else(|_| {
            Err(LoadError {
                kind: super::read::ErrorKind::Io,
                offset: 0,
                message: "the loading thread panicked".into(),
            })
        })
    }

    /// The loading_* fields of INFO persistence.
    pub fn info_fields(&self, w: &mut String) {
        write_info_fields(
            w,
            self.started,
            self.started_unix,
            self.total_bytes,
            self.loaded_bytes(),
        );
    }
}

/// `opts` with a progress counter, and that counter.
fn reporting(opts: LoadOptions) -> (Arc<AtomicU64>, LoadOptions) {
    let loaded = Arc::new(AtomicU64::new(0));
    let progress = Some(loaded.clone());
    (loaded, LoadOptions { progress, ..opts })
}

/// The loading_* fields of INFO persistence for a load (this snapshot's, or the AOF's)
/// started at `started` (`started_unix` in Unix seconds) that read `loaded` of `total_bytes`.
pub fn write_info_fields(
    w: &mut String,
    started: Instant,
    started_unix: u64,
    total_bytes: u64,
    loaded: u64,
) {
    use std::fmt::Write;
    let perc = if total_bytes > 0 {
        loaded as f64 * 100.0 / total_bytes as f64
    } else {
        0.0
    };
    let elapsed = started.elapsed().as_secs_f64();
    let eta = if loaded > 0 {
        (elapsed * (total_bytes.saturating_sub(loaded)) as f64 / loaded as f64) as u64
    } else {
        1
    };
    let _ = write!(
        w,
        "loading_start_time:{started_unix}\r\nloading_total_bytes:{total_bytes}\r\nloading_rdb_used_mem:0\r\nloading_loaded_bytes:{loaded}\r\nloading_loaded_perc:{perc:.2}\r\nloading_eta_seconds:{eta}\r\n"
    );
}
