//! The background fsync thread of `appendfsync everysec` (Redis's BIO_AOF_FSYNC job): the
//! current incremental file only (a replaced one goes to [`super::close`]).

use super::fsynced::{FsyncedOffset, Mark};
use crate::warning;
use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

/// A job for the thread: fsync the file, record the mark, then lower the file's own count
/// of fsyncs in flight.
struct Job(Arc<File>, Arc<AtomicUsize>, Mark);

/// The thread and what the loop reads of it.
pub struct FsyncThread {
    jobs: Sender<Job>,
    pending: Arc<AtomicUsize>,
    ok: Arc<AtomicBool>,
    /// The replication offset the fsyncs made durable (the everysec thread's, the close
    /// thread's and the loop's own under `always`).
    pub fsynced: FsyncedOffset,
}

impl FsyncThread {
    /// Starts the thread.
    pub fn start() -> FsyncThread {
        let (jobs, rx) = channel::<Job>();
        let pending = Arc::new(AtomicUsize::new(0));
        let ok = Arc::new(AtomicBool::new(true));
        let (p, o) = (pending.clone(), ok.clone());
        std::thread::Builder::new()
            .name("aof-fsync".into())
            .spawn(move || {
                use crate::service::process::affinity;
                affinity::enter(affinity::Role::Bio);
                for Job(file, in_flight, mark) in rx {
                    match file.sync_data() {
                        Ok(()) => {
                            o.store(true, Ordering::Relaxed);
                            mark.record();
                        }
                        Err(e) => {
                            warning!("Fail to fsync the AOF file: {e}");
                            o.store(false, Ordering::Relaxed);
                        }
                    }
                    drop(file);
                    in_flight.fetch_sub(1, Ordering::Release);
                    p.fetch_sub(1, Ordering::Release);
                }
            })
            .expect("starting the AOF fsync thread");
        FsyncThread {
            jobs,
            pending,
            ok,
            fsynced: FsyncedOffset::default(),
        }
    }

    /// Queues an fsync of `file`, written up to replication offset `reploff`, counted in
    /// `in_flight` (the file's own count, which the thread lowers when done) as well as in
    /// [`FsyncThread::pending`].
    pub fn fsync(&self, file: Arc<File>, in_flight: Arc<AtomicUsize>, reploff: u64) {
        self.pending.fetch_add(1, Ordering::Acquire);
        in_flight.fetch_add(1, Ordering::Acquire);
        let mark = self.fsynced.mark(reploff);
        if let Err(e) = self.jobs.send(Job(file, in_flight, mark)) {
            e.0 .1.fetch_sub(1, Ordering::Release);
            self.pending.fetch_sub(1, Ordering::Release);
        }
    }

    /// Jobs queued or running (INFO aof_pending_bio_fsync).
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }

    /// Whether the last background fsync succeeded (Redis's aof_bio_fsync_status).
    pub fn last_ok(&self) -> bool {
        self.ok.load(Ordering::Relaxed)
    }

    /// Forgets a failed fsync (the AOF was turned on again).
    pub fn clear_error(&self) {
        self.ok.store(true, Ordering::Relaxed);
    }
}
