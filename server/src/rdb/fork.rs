//! A background child by `fork()`, shared by BGSAVE and BGREWRITEAOF: the child runs its
//! job on its copy-on-write view of the memory and `_exit`s; it reports what it wrote (or
//! its error) and its copy-on-write bytes through a pipe; the parent reaps it with
//! `waitpid(WNOHANG)` from the cron and never waits.
//!
//! While it runs, the child's writer calls [`key_written`] after each key: every 1,024 keys,
//! and at most once a second, the child sends its progress on the same pipe (keys written,
//! copy-on-write bytes, when those were measured), as Redis's CHILD_INFO_TYPE_CURRENT_INFO;
//! the parent reads it from the cron ([`Child::receive_info`]) for INFO's current_cow_*,
//! current_fork_perc and current_save_keys_* fields.
//!
//! A record on the pipe is a tag byte, a 4-byte little-endian length and that many bytes:
//!
//! ```text
//!   'P' len=24  keys u64 | cow bytes u64 | cow measured at, monotonic ms u64
//!   'S' len=24  keys u64 | bytes written u64 | cow bytes u64      (the last record)
//!   'F' len<=1000  the error's text                               (the last record)
//! ```
//!
//! The child asks to be killed when the parent dies (PR_SET_PDEATHSIG), so a crashed
//! server leaves no writer behind that could rename a file under a restarted one. The only
//! pause the clients see is the fork itself (copying the page tables: about 10 ms per GB
//! of resident memory).

use super::write::SaveStats;
use crate::service::process::affinity;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::Instant;

/// In a child, the write end of its report pipe (-1 in the server process itself, where
/// [`key_written`] does nothing).
static CHILD_INFO_FD: AtomicI32 = AtomicI32::new(-1);

/// A running child.
#[derive(Debug)]
pub struct Child {
    /// Its process id.
    pub pid: libc::pid_t,
    /// When it was forked.
    pub started: Instant,
    /// Read end of the pipe on which the child reports.
    info_fd: libc::c_int,
    /// What came through the pipe and is not yet a whole record.
    received: Vec<u8>,
    /// Keys in the databases at the fork (INFO current_save_keys_total).
    pub keys_total: u64,
    /// The child's last progress report.
    pub progress: Progress,
    /// Its last record, once it came.
    report: Option<ChildReport>,
}

/// A child's progress, as it last reported it (Redis's stat_current_* fields).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Keys written so far.
    pub keys: u64,
    /// Copy-on-write bytes at its last measure.
    pub cow: u64,
    /// The highest of those measures, the child's last one included (Redis's
    /// stat_current_cow_peak, which becomes rdb_last_cow_size / aof_last_cow_size).
    pub cow_peak: u64,
    /// When the copy-on-write bytes were measured, in monotonic milliseconds (0: never).
    pub cow_measured_ms: u64,
}

/// How a child ended.
#[derive(Debug)]
pub enum Exit {
    /// It exited with this code, having reported this (if anything).
    Code(i32, Option<ChildReport>),
    /// A signal killed it.
    Signal(i32),
    /// waitpid failed.
    WaitFailed,
}

/// What a child tells its parent through the pipe.
#[derive(Debug)]
enum Record {
    /// Keys written so far, copy-on-write bytes and when they were measured.
    Progress(u64, u64, u64),
    /// The last record, before it exits.
    Final(ChildReport),
}

/// What a child tells its parent through the pipe before it exits.
#[derive(Debug)]
pub enum ChildReport {
    /// Written: what, and the copy-on-write bytes.
    Saved(SaveStats, u64),
    /// The job failed, with the error.
    Failed(String),
}

/// What a forked child is for: its process title and the CPUs it may run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// BGSAVE and the saves of the save points.
    Bgsave,
    /// A snapshot streamed to replicas (a diskless full sync).
    ToReplicas,
    /// BGREWRITEAOF.
    AofRewrite,
}

impl Purpose {
    /// The child's process title, as Redis names it.
    fn title(self) -> &'static str {
        match self {
            Purpose::Bgsave => "redis-rdb-bgsave",
            Purpose::ToReplicas => "redis-rdb-to-slaves",
            Purpose::AofRewrite => "redis-aof-rewrite",
        }
    }

    /// Which `*_cpulist` the child takes (Redis's: bgsave_cpulist for both snapshots).
    fn cpus(self) -> affinity::Role {
        match self {
            Purpose::Bgsave | Purpose::ToReplicas => affinity::Role::Bgsave,
            Purpose::AofRewrite => affinity::Role::AofRewrite,
        }
    }
}

/// Forks a child that runs `job` and exits 0 when it succeeds, 1 when it fails; it takes
/// the title and CPUs of its `purpose` and the OOM score of a child
/// (oom-score-adj-values); `keys_total` is the keys it is to write. Returns the child and
/// the time the fork took, or fork's error.
pub fn spawn(
    purpose: Purpose,
    keys_total: u64,
    job: impl FnOnce() -> std::io::Result<SaveStats>,
) -> std::io::Result<(Child, std::time::Duration)> {
    let parent = std::process::id() as libc::pid_t;
    let title = crate::service::process::title::for_child(purpose.title());
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
        child_main(parent, title.as_deref(), purpose.cpus(), job, fds);
    }
    close_fd(fds[1]);
    if pid < 0 {
        close_fd(fds[0]);
        return Err(std::io::Error::last_os_error());
    }
    let took = forking.elapsed();
    crate::latency::sample("fork", took);
    Ok((
        Child {
            pid,
            started: Instant::now(),
            info_fd: fds[0],
            received: Vec::new(),
            keys_total,
            progress: Progress::default(),
            report: None,
        },
        took,
    ))
}

fn child_main(
    parent: libc::pid_t,
    title: Option<&str>,
    cpus: affinity::Role,
    job: impl FnOnce() -> std::io::Result<SaveStats>,
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
    crate::service::process::enter_child(title);
    affinity::enter(cpus);
    CHILD_INFO_FD.store(fds[1], Ordering::Relaxed);
    // The child does not log: another thread may have held the log's lock at the fork.
    let (code, report) = match job() {
        Ok(stats) => (
            0,
            ChildReport::Saved(stats, super::file::private_dirty_bytes()),
        ),
        Err(e) => (1, ChildReport::Failed(e.to_string())),
    };
    send(&Record::Final(report));
    // SAFETY: ends the child without running the parent's destructors or atexit handlers.
    unsafe { libc::_exit(code) }
}

/// Writes `record` on the child's pipe (nothing in the server process). A full pipe (a
/// parent that has not read for half an hour) loses the record.
fn send(record: &Record) {
    let fd = CHILD_INFO_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let bytes = record.encode();
        // SAFETY: writing from a live buffer to our own non-blocking pipe.
        unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    }
}

/// A child's writer calls this after each key, with the keys written so far: on the first
/// key and every 1,024 after it, when a second has passed since the last report, the child
/// sends its progress (Redis's rdbSaveDb / rewriteAppendOnlyFileRio). Measuring the
/// copy-on-write bytes reads /proc, so it is done again only after a hundred times what
/// the last measure took (Redis's CHILD_COW_DUTY_CYCLE).
pub fn key_written(keys: u64) {
    const DUTY_CYCLE: u64 = 100;
    static LAST_REPORT_MS: AtomicU64 = AtomicU64::new(0);
    static COW: AtomicU64 = AtomicU64::new(0);
    static COW_MEASURED_MS: AtomicU64 = AtomicU64::new(0);
    static COW_COST_MS: AtomicU64 = AtomicU64::new(0);
    if keys & 1023 != 1 || CHILD_INFO_FD.load(Ordering::Relaxed) < 0 {
        return;
    }
    let now = crate::clock::monotonic_ms();
    let last = LAST_REPORT_MS.load(Ordering::Relaxed);
    if last != 0 && now - last < 1000 {
        return;
    }
    LAST_REPORT_MS.store(now, Ordering::Relaxed);
    let measured = COW_MEASURED_MS.load(Ordering::Relaxed);
    if measured == 0 || now - measured > COW_COST_MS.load(Ordering::Relaxed) * DUTY_CYCLE {
        COW.store(super::file::private_dirty_bytes(), Ordering::Relaxed);
        let done = crate::clock::monotonic_ms();
        COW_MEASURED_MS.store(done, Ordering::Relaxed);
        COW_COST_MS.store(done - now, Ordering::Relaxed);
    }
    send(&Record::Progress(
        keys,
        COW.load(Ordering::Relaxed),
        COW_MEASURED_MS.load(Ordering::Relaxed),
    ));
}

impl Child {
    /// The child's exit, if it ended (the child is then reaped).
    pub fn try_reap(&mut self) -> Option<Exit> {
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if r == 0 {
            return None;
        }
        self.receive_info();
        close_fd(self.info_fd);
        self.info_fd = -1;
        let report = self.report.take();
        Some(if r != self.pid {
            Exit::WaitFailed
        } else if libc::WIFEXITED(status) {
            Exit::Code(libc::WEXITSTATUS(status), report)
        } else {
            Exit::Signal(libc::WTERMSIG(status))
        })
    }

    /// Reads what the child sent since the last call: its progress goes to
    /// [`Child::progress`], its last record is kept for [`Child::try_reap`].
    pub fn receive_info(&mut self) {
        let mut buf = [0u8; 4096];
        while self.info_fd >= 0 {
            // SAFETY: reading into a live buffer of that size from our own non-blocking pipe.
            let got = unsafe { libc::read(self.info_fd, buf.as_mut_ptr().cast(), buf.len()) };
            if got <= 0 {
                break;
            }
            self.received.extend_from_slice(&buf[..got as usize]);
        }
        let mut used = 0;
        while let Some((record, len)) = Record::decode(&self.received[used..]) {
            used += len;
            match record {
                Record::Progress(keys, cow, cow_measured_ms) => {
                    self.progress = Progress {
                        keys,
                        cow,
                        cow_peak: self.progress.cow_peak.max(cow),
                        cow_measured_ms,
                    }
                }
                Record::Final(report) => {
                    if let ChildReport::Saved(_, cow) = report {
                        self.progress.cow = cow;
                        self.progress.cow_peak = self.progress.cow_peak.max(cow);
                    }
                    self.report = Some(report);
                }
            }
        }
        self.received.drain(..used);
    }

    /// Logs the finished child's copy-on-write (Redis's "Fork CoW for ..." line) and returns
    /// its peak, the last_cow_size INFO shows.
    pub fn log_cow(&self, job: &str) -> u64 {
        let p = self.progress;
        crate::notice!(
            "Fork CoW for {job}: current {} MB, peak {} MB",
            p.cow >> 20,
            p.cow_peak >> 20
        );
        p.cow_peak
    }

    /// Seconds since the child last measured its copy-on-write bytes (INFO
    /// current_cow_size_age; 0 before it did).
    pub fn cow_age_secs(&self) -> u64 {
        match self.progress.cow_measured_ms {
            0 => 0,
            at => crate::clock::monotonic_ms().saturating_sub(at) / 1000,
        }
    }

    /// Kills the child and waits for it.
    pub fn kill(self) {
        // SAFETY: signalling and waiting for our own child.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(self.pid, &mut status, 0);
        }
        close_fd(self.info_fd);
    }
}

fn close_fd(fd: libc::c_int) {
    if fd >= 0 {
        // SAFETY: closing a descriptor this module opened and owns.
        unsafe { libc::close(fd) };
    }
}

impl Record {
    fn encode(&self) -> Vec<u8> {
        let (tag, body): (u8, Vec<u8>) = match self {
            Record::Progress(keys, cow, at) => (b'P', words(&[*keys, *cow, *at])),
            Record::Final(ChildReport::Saved(stats, cow)) => {
                (b'S', words(&[stats.keys, stats.bytes, *cow]))
            }
            Record::Final(ChildReport::Failed(e)) => (b'F', e.bytes().take(1000).collect()),
        };
        let mut out = vec![tag];
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// The record at the start of `bytes` and its length, when it is whole (an unknown tag
    /// or a malformed body reads as nothing more to come).
    fn decode(bytes: &[u8]) -> Option<(Record, usize)> {
        let len = u32::from_le_bytes(bytes.get(1..5)?.try_into().ok()?) as usize;
        let body = bytes.get(5..5 + len)?;
        let word = |i: usize| {
            Some(u64::from_le_bytes(
                body.get(8 * i..8 * i + 8)?.try_into().ok()?,
            ))
        };
        let record = match bytes[0] {
            b'P' => Record::Progress(word(0)?, word(1)?, word(2)?),
            b'S' => {
                let stats = SaveStats {
                    keys: word(0)?,
                    members: 0,
                    bytes: word(1)?,
                };
                Record::Final(ChildReport::Saved(stats, word(2)?))
            }
            b'F' => Record::Final(ChildReport::Failed(
                String::from_utf8_lossy(body).into_owned(),
            )),
            _ => return None,
        };
        Some((record, 5 + len))
    }
}

fn words(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_the_pipe_encoding() {
        let stats = SaveStats {
            keys: 3,
            members: 0,
            bytes: 1 << 40,
        };
        let mut wire = Record::Progress(1025, 8192, 77).encode();
        wire.extend(Record::Final(ChildReport::Saved(stats, 77)).encode());
        let (first, len) = Record::decode(&wire).expect("whole");
        assert!(matches!(first, Record::Progress(1025, 8192, 77)));
        match Record::decode(&wire[len..]) {
            Some((Record::Final(ChildReport::Saved(s, cow)), _)) => {
                assert_eq!((s.keys, s.bytes, cow), (3, 1 << 40, 77))
            }
            _ => panic!("not decoded"),
        }
        let failed = Record::Final(ChildReport::Failed("disk full".into())).encode();
        match Record::decode(&failed) {
            Some((Record::Final(ChildReport::Failed(e)), n)) => {
                assert_eq!((e.as_str(), n), ("disk full", failed.len()))
            }
            _ => panic!("not decoded"),
        }
        assert!(Record::decode(b"").is_none());
        assert!(
            Record::decode(&wire[..len - 1]).is_none(),
            "a record cut short waits"
        );
    }

    #[test]
    fn the_parent_keeps_the_last_progress_and_the_peak() {
        let mut fds = [-1 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into the array we pass.
        assert_eq!(
            unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK) },
            0
        );
        let mut child = Child {
            pid: 0,
            started: Instant::now(),
            info_fd: fds[0],
            received: Vec::new(),
            keys_total: 5000,
            progress: Progress::default(),
            report: None,
        };
        let mut wire = Record::Progress(1, 9000, 5).encode();
        wire.extend(Record::Progress(1025, 4096, 6).encode());
        let cut = wire.len() - 3;
        for part in [&wire[..cut], &wire[cut..]] {
            // SAFETY: writing from a live buffer to the pipe made above.
            unsafe { libc::write(fds[1], part.as_ptr().cast(), part.len()) };
            child.receive_info();
        }
        assert!(child.report.is_none());
        let want = Progress {
            keys: 1025,
            cow: 4096,
            cow_peak: 9000,
            cow_measured_ms: 6,
        };
        assert_eq!(child.progress, want);
        close_fd(fds[0]);
        close_fd(fds[1]);
    }
}
