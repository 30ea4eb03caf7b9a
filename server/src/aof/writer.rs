//! Writing the incremental file: the buffer the propagation stream fills during an
//! event-loop iteration, one write(2) of it before that iteration's replies go out, and the
//! fsync policy (Redis's flushAppendOnlyFile).
//!
//! ```text
//! commands --stream--> buf --write--> incr file --fsync--> disk
//!                                      always:   fdatasync here, before the replies
//!                                      everysec: queued to the fsync thread once a
//!                                                second; a write waits (up to 2 s)
//!                                                while an fsync of this same file
//!                                                still runs (write(2) would block on
//!                                                it), never for another file's
//!                                      no:       the kernel's choice
//! ```

use super::config::Fsync;
use super::fsync::FsyncThread;
use crate::{notice, warning};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Seconds between two logs of the same write error (AOF_WRITE_LOG_ERROR_RATE).
const WRITE_ERROR_LOG_RATE: u64 = 30;

/// The open incremental file and its accounting.
pub struct Writer {
    file: Arc<File>,
    /// Background fsyncs of this file queued or running.
    fsyncs_in_flight: Arc<AtomicUsize>,
    /// Bytes waiting for the write (INFO aof_buffer_length).
    pub buf: Vec<u8>,
    /// Bytes of the base and incremental files (aof_current_size).
    pub current_size: u64,
    /// Bytes of this incremental file.
    pub incr_size: u64,
    /// `current_size` at the last fsync.
    pub fsync_offset: u64,
    /// Unix seconds of the last fsync (or of its queuing).
    pub last_fsync: u64,
    /// Unix seconds since when a write waits for a background fsync (0: none).
    postponed_since: u64,
    /// Writes that did not wait any longer for a slow fsync (aof_delayed_fsync).
    pub delayed_fsync: u64,
    /// Whether the last write succeeded.
    pub write_ok: bool,
    /// The error of the last failed write.
    pub write_error: Option<String>,
    last_error_log: u64,
}

/// What the loop must know about the fsync policy when it flushes.
pub struct Policy {
    /// appendfsync.
    pub fsync: Fsync,
    /// no-appendfsync-on-rewrite and a child running.
    pub skip_fsync: bool,
    /// A child (BGSAVE, BGREWRITEAOF) runs (for the latency monitor's events).
    pub child_active: bool,
    /// Unix seconds now.
    pub now: u64,
    /// Microseconds to sleep before writing a buffer that is not empty (DEBUG
    /// AOF-FLUSH-SLEEP, to test what waits on the write).
    pub sleep_us: u64,
    /// The replication offset of the buffer's end: an fsync after this write makes the
    /// stream durable up to it (WAITAOF).
    pub reploff: u64,
}

impl Writer {
    /// Writes to `file`, `incr_size` bytes long, in an AOF of `current_size` bytes.
    pub fn new(file: File, incr_size: u64, current_size: u64, now: u64) -> Writer {
        Writer {
            file: Arc::new(file),
            fsyncs_in_flight: Arc::new(AtomicUsize::new(0)),
            buf: Vec::new(),
            current_size,
            incr_size,
            fsync_offset: current_size,
            last_fsync: now,
            postponed_since: 0,
            delayed_fsync: 0,
            write_ok: true,
            write_error: None,
            last_error_log: 0,
        }
    }

    /// Whether the buffer's write waits for a background fsync of the file (everysec, at
    /// most 2 s): the replies that depend on it wait too, so that nothing is acknowledged
    /// before it is in the kernel (where a kill -9 of the process cannot lose it).
    pub fn postponed(&self) -> bool {
        self.postponed_since != 0 && !self.buf.is_empty()
    }

    /// A handle on the file, for the close thread.
    pub fn file(&self) -> Arc<File> {
        self.file.clone()
    }

    /// Whether a background fsync of this file is queued or runs (Redis's
    /// aofFsyncInProgress, for the file it concerns: an fsync of a file a rewrite replaced
    /// does not hold the writes to the new one back).
    fn fsync_in_progress(&self) -> bool {
        self.fsyncs_in_flight.load(Ordering::Acquire) > 0
    }

    /// Writes the buffer and fsyncs as `policy` says; `force` writes even while a
    /// background fsync runs (Redis's flushAppendOnlyFile). Exits the process when a write
    /// or fsync fails under `appendfsync always`, as Redis: the replies depending on it
    /// must never go out.
    pub fn flush(&mut self, force: bool, policy: &Policy, bio: &FsyncThread) {
        let everysec = policy.fsync == Fsync::Everysec;
        let mut sync_in_progress = false;
        if self.buf.is_empty() {
            // The last writes still need their fsync: a second later under everysec, at
            // once under always (appendfsync changed from everysec to always since).
            let due = self.fsync_offset != self.current_size
                && match policy.fsync {
                    Fsync::Everysec => policy.now > self.last_fsync,
                    Fsync::Always => true,
                    Fsync::No => false,
                };
            if !due {
                return;
            }
            sync_in_progress = everysec && self.fsync_in_progress();
            if sync_in_progress {
                return;
            }
        } else {
            if everysec {
                sync_in_progress = self.fsync_in_progress();
            }
            if everysec && !force && sync_in_progress {
                if self.postponed_since == 0 {
                    self.postponed_since = policy.now;
                    return;
                } else if policy.now - self.postponed_since < 2 {
                    return;
                }
                self.delayed_fsync += 1;
                notice!("Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer without waiting for fsync to complete, this may slow down Redis.");
            }
            if policy.sleep_us > 0 {
                std::thread::sleep(std::time::Duration::from_micros(policy.sleep_us));
            }
            let started = std::time::Instant::now();
            let written = self.write(policy);
            // As Redis: the write's latency under what it may have waited on, and in all.
            let took = started.elapsed();
            crate::latency::sample(
                if sync_in_progress {
                    "aof-write-pending-fsync"
                } else if policy.child_active {
                    "aof-write-active-child"
                } else {
                    "aof-write-alone"
                },
                took,
            );
            crate::latency::sample("aof-write", took);
            if !written {
                return;
            }
        }
        if policy.skip_fsync {
            return;
        }
        match policy.fsync {
            Fsync::Always => {
                let started = std::time::Instant::now();
                let synced = self.file.sync_data();
                crate::latency::sample("aof-fsync-always", started.elapsed());
                if let Err(e) = synced {
                    warning!("Can't persist AOF for fsync error when the AOF fsync policy is 'always': {e}. Exiting...");
                    std::process::exit(1);
                }
                self.fsync_offset = self.current_size;
                self.last_fsync = policy.now;
                bio.fsynced.mark(policy.reploff).record();
            }
            Fsync::Everysec if policy.now > self.last_fsync => {
                if !sync_in_progress {
                    bio.fsync(self.file(), self.fsyncs_in_flight.clone(), policy.reploff);
                    self.fsync_offset = self.current_size;
                }
                self.last_fsync = policy.now;
            }
            _ => {}
        }
    }

    /// One write of the buffer; false when it failed (the buffer is kept for the next try).
    fn write(&mut self, policy: &Policy) -> bool {
        self.postponed_since = 0;
        let mut written = 0;
        let result = loop {
            match (&*self.file).write(&self.buf[written..]) {
                Ok(0) => break Err(None),
                Ok(n) => {
                    written += n;
                    if written == self.buf.len() {
                        break Ok(());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(Some(e)),
            }
        };
        match result {
            Ok(()) => {
                if !self.write_ok {
                    warning!("AOF write error looks solved, Redis can write again.");
                    self.write_ok = true;
                    self.write_error = None;
                }
                self.current_size += written as u64;
                self.incr_size += written as u64;
                self.buf.clear();
                if self.buf.capacity() > 4000 {
                    self.buf = Vec::new();
                }
                true
            }
            Err(e) => {
                self.failed_write(written, e, policy);
                false
            }
        }
    }

    /// Redis's handling of a failed or short write: log (rate-limited), undo a partial
    /// write, exit under `always`, else stop accepting writes until a write succeeds.
    fn failed_write(&mut self, written: usize, e: Option<std::io::Error>, policy: &Policy) {
        let can_log = policy.now.saturating_sub(self.last_error_log) > WRITE_ERROR_LOG_RATE;
        if can_log {
            self.last_error_log = policy.now;
        }
        let mut kept = written;
        let reason = match (&e, written) {
            (Some(e), 0) => {
                if can_log {
                    warning!("Error writing to the AOF file: {e}");
                }
                e.to_string()
            }
            _ => {
                if can_log {
                    warning!(
                        "Short write while writing to the AOF file: (nwritten={written}, expected={})",
                        self.buf.len()
                    );
                }
                match self.file.set_len(self.incr_size) {
                    Ok(()) => kept = 0,
                    Err(t) if can_log => warning!("Could not remove short write from the append-only file.  Redis may refuse to load the AOF the next time it starts.  ftruncate: {t}"),
                    Err(_) => {}
                }
                "No space left on device".into()
            }
        };
        if policy.fsync == Fsync::Always {
            warning!("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...");
            std::process::exit(1);
        }
        self.write_ok = false;
        self.write_error = Some(
            reason
                .split(" (os error")
                .next()
                .unwrap_or(&reason)
                .to_owned(),
        );
        if kept > 0 {
            self.current_size += kept as u64;
            self.incr_size += kept as u64;
            self.buf.drain(..kept);
        }
    }

    /// Writes everything now and fsyncs it (appendonly turned off, shutdown, the switch to a
    /// new incremental file).
    pub fn flush_and_sync(&mut self, policy: &Policy, bio: &FsyncThread) {
        self.flush(true, policy, bio);
        match self.file.sync_data() {
            Ok(()) => {
                self.fsync_offset = self.current_size;
                self.last_fsync = policy.now;
                bio.fsynced.mark(policy.reploff).record();
            }
            Err(e) => warning!("Fail to fsync the AOF file: {e}"),
        }
    }

    /// Reads back `len` bytes at `offset` (tests).
    #[cfg(test)]
    fn read_at(&self, offset: u64, len: usize) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let mut out = vec![0; len];
        self.file.read_exact_at(&mut out, offset).unwrap();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_writes_the_buffer_once_and_counts_it() {
        let dir = std::env::temp_dir().join(format!("goblin-aof-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.aof");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let bio = FsyncThread::start();
        let mut w = Writer::new(file, 0, 100, 1);
        w.buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        let policy = Policy {
            fsync: Fsync::Always,
            skip_fsync: false,
            child_active: false,
            now: 2,
            sleep_us: 0,
            reploff: 14,
        };
        w.flush(false, &policy, &bio);
        assert!(w.buf.is_empty());
        assert_eq!(
            (w.current_size, w.incr_size, w.fsync_offset),
            (114, 14, 114)
        );
        assert_eq!(bio.fsynced.get(), 14, "always: durable up to the write");
        assert_eq!(w.read_at(0, 14), b"*1\r\n$4\r\nPING\r\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn always_fsyncs_what_everysec_left_unsynced_and_records_its_offset() {
        let dir = std::env::temp_dir().join(format!("goblin-aof-always-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = std::fs::File::create(dir.join("a.aof")).unwrap();
        let bio = FsyncThread::start();
        let policy = |fsync, reploff| Policy {
            fsync,
            skip_fsync: false,
            child_active: false,
            now: 1,
            sleep_us: 0,
            reploff,
        };
        let mut w = Writer::new(file, 0, 0, 1);
        w.buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        // Within the second of the last fsync: everysec writes, no fsync yet.
        w.flush(false, &policy(Fsync::Everysec, 14), &bio);
        assert_eq!((w.current_size, w.fsync_offset, bio.pending()), (14, 0, 0));
        assert_eq!(bio.fsynced.get(), 0);
        // appendfsync no never fsyncs; always fsyncs it at once, buffer empty or not.
        w.flush(false, &policy(Fsync::No, 14), &bio);
        assert_eq!(bio.fsynced.get(), 0);
        w.flush(false, &policy(Fsync::Always, 14), &bio);
        assert_eq!((w.fsync_offset, bio.fsynced.get()), (14, 14));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn everysec_postpones_a_write_only_behind_an_fsync_of_its_own_file() {
        let dir = std::env::temp_dir().join(format!("goblin-aof-postpone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let open = |name: &str| {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(dir.join(name))
                .unwrap()
        };
        let bio = FsyncThread::start();
        let policy = |now| Policy {
            fsync: Fsync::Everysec,
            skip_fsync: false,
            child_active: false,
            now,
            sleep_us: 0,
            reploff: 0,
        };
        let mut old = Writer::new(open("old.aof"), 0, 0, 1);
        let mut new = Writer::new(open("new.aof"), 0, 0, 1);
        // An fsync of the old file in flight does not hold the new file's write back.
        old.fsyncs_in_flight.fetch_add(1, Ordering::AcqRel);
        new.buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        new.flush(false, &policy(1), &bio);
        assert!(new.buf.is_empty() && !new.postponed());
        // One of its own file does, for up to 2 seconds.
        old.buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        old.flush(false, &policy(1), &bio);
        assert!(old.postponed());
        old.flush(false, &policy(2), &bio);
        assert!(old.postponed());
        old.flush(false, &policy(3), &bio);
        assert!(!old.postponed() && old.buf.is_empty());
        assert_eq!((old.delayed_fsync, old.incr_size), (1, 14));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
