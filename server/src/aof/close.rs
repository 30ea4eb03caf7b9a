//! The background closing thread (Redis's BIO_CLOSE_FILE jobs, bioCreateCloseJob and
//! bg_unlink): the incremental file a rewrite replaced is fsynced and closed there, and a
//! removed file (history, a temp base) is closed there, where the kernel frees its blocks,
//! so that neither stalls the event loop.
//!
//! It is a thread of its own, apart from the everysec fsync thread: under `everysec` a
//! write waits while an fsync of the *current* file runs (Redis's aofFsyncInProgress,
//! which in 7.0 counts BIO_AOF_FSYNC jobs alone), never for the slow fsync of a replaced
//! file, whose writes were all made before the switch.

use super::fsynced::Mark;
use crate::warning;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

/// A job: the file, closed when its last handle goes, fsynced first when asked (with the
/// mark to record once the fsync succeeded).
struct Job {
    file: Arc<File>,
    fsync: Option<Mark>,
}

/// The thread and its count of jobs.
pub struct CloseThread {
    jobs: Sender<Job>,
    pending: Arc<AtomicUsize>,
}

impl CloseThread {
    /// Starts the thread.
    pub fn start() -> CloseThread {
        let (jobs, rx) = channel::<Job>();
        let pending = Arc::new(AtomicUsize::new(0));
        let p = pending.clone();
        std::thread::Builder::new()
            .name("aof-close".into())
            .spawn(move || {
                use crate::service::process::affinity;
                affinity::enter(affinity::Role::Bio);
                for Job { file, fsync } in rx {
                    if let Some(mark) = fsync {
                        match file.sync_data() {
                            Ok(()) => mark.record(),
                            Err(e) => warning!("Fail to fsync the AOF file: {e}"),
                        }
                    }
                    drop(file);
                    p.fetch_sub(1, Ordering::Release);
                }
            })
            .expect("starting the AOF close thread");
        CloseThread { jobs, pending }
    }

    fn queue(&self, file: Arc<File>, fsync: Option<Mark>) {
        self.pending.fetch_add(1, Ordering::Acquire);
        if self.jobs.send(Job { file, fsync }).is_err() {
            self.pending.fetch_sub(1, Ordering::Release);
        }
    }

    /// Fsyncs `file` and closes it (when this was its last handle) on the thread (Redis's
    /// aof_background_fsync_and_close); `mark` is recorded once the fsync succeeded.
    pub fn fsync_and_close(&self, file: Arc<File>, mark: Mark) {
        self.queue(file, Some(mark));
    }

    /// Removes `path`: the name goes now, the blocks when the thread closes the file
    /// (Redis's bg_unlink). A file that does not exist is no error.
    pub fn unlink(&self, path: &Path) -> std::io::Result<()> {
        let file = match File::open(path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            // Unreadable: removed without the deferred close.
            Err(_) => None,
        };
        std::fs::remove_file(path)?;
        if let Some(f) = file {
            self.queue(Arc::new(f), None);
        }
        Ok(())
    }

    /// Jobs queued or running.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn settle(t: &CloseThread) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while t.pending() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(t.pending(), 0);
    }

    #[test]
    fn unlink_removes_the_name_at_once_and_closes_later() {
        let dir = std::env::temp_dir().join(format!("goblin-aof-close-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.aof");
        std::fs::write(&path, vec![7u8; 1 << 16]).unwrap();
        let t = CloseThread::start();
        t.unlink(&path).unwrap();
        assert!(!path.exists());
        t.unlink(&dir.join("never-there")).unwrap();
        let kept = dir.join("kept.aof");
        let f = Arc::new(File::create(&kept).unwrap());
        let fsynced = super::super::fsynced::FsyncedOffset::default();
        t.fsync_and_close(f.clone(), fsynced.mark(42));
        drop(f);
        settle(&t);
        assert!(kept.exists());
        assert_eq!(fsynced.get(), 42, "the fsync's mark recorded");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
