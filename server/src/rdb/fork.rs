//! A background child by `fork()`, shared by BGSAVE and BGREWRITEAOF: the child runs its
//! job on its copy-on-write view of the memory and `_exit`s; it reports what it wrote (or
//! its error) and its copy-on-write bytes through a pipe; the parent reaps it with
//! `waitpid(WNOHANG)` from the cron and never waits.
//!
//! The child asks to be killed when the parent dies (PR_SET_PDEATHSIG), so a crashed
//! server leaves no writer behind that could rename a file under a restarted one. The only
//! pause the clients see is the fork itself (copying the page tables: about 10 ms per GB
//! of resident memory).

use super::write::SaveStats;
use std::time::Instant;

/// A running child.
#[derive(Debug)]
pub struct Child {
    /// Its process id.
    pub pid: libc::pid_t,
    /// When it was forked.
    pub started: Instant,
    /// Read end of the pipe on which the child reports.
    info_fd: libc::c_int,
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

/// What a child tells its parent through the pipe before it exits.
#[derive(Debug)]
pub enum ChildReport {
    /// Written: what, and the copy-on-write bytes.
    Saved(SaveStats, u64),
    /// The job failed, with the error.
    Failed(String),
}

/// Forks a child that runs `job` and exits 0 when it succeeds, 1 when it fails; `name` is
/// its process title (as Redis's: `redis-rdb-bgsave`, ...), and it takes the OOM score of
/// a child (oom-score-adj-values). Returns
/// the child and the time the fork took, or fork's error.
pub fn spawn(
    name: &str,
    job: impl FnOnce() -> std::io::Result<SaveStats>,
) -> std::io::Result<(Child, std::time::Duration)> {
    let parent = std::process::id() as libc::pid_t;
    let title = crate::service::process::title::for_child(name);
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
        child_main(parent, title.as_deref(), job, fds);
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
        },
        took,
    ))
}

fn child_main(
    parent: libc::pid_t,
    title: Option<&str>,
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
    // The child does not log: another thread may have held the log's lock at the fork.
    let (code, report) = match job() {
        Ok(stats) => (
            0,
            ChildReport::Saved(stats, super::file::private_dirty_bytes()).encode(),
        ),
        Err(e) => (1, ChildReport::Failed(e.to_string()).encode()),
    };
    if fds[1] >= 0 {
        // SAFETY: writing from a live buffer to our own pipe (a few bytes, never blocks).
        unsafe { libc::write(fds[1], report.as_ptr().cast(), report.len()) };
    }
    // SAFETY: ends the child without running the parent's destructors or atexit handlers.
    unsafe { libc::_exit(code) }
}

impl Child {
    /// The child's exit, if it ended (the child is then reaped).
    pub fn try_reap(&self) -> Option<Exit> {
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if r == 0 {
            return None;
        }
        let mut buf = [0u8; 1024];
        let got = if self.info_fd >= 0 {
            // SAFETY: reading into a live buffer of that size from our own non-blocking pipe.
            unsafe { libc::read(self.info_fd, buf.as_mut_ptr().cast(), buf.len()) }
        } else {
            -1
        };
        close_fd(self.info_fd);
        let report = ChildReport::decode(&buf[..got.max(0) as usize]);
        Some(if r != self.pid {
            Exit::WaitFailed
        } else if libc::WIFEXITED(status) {
            Exit::Code(libc::WEXITSTATUS(status), report)
        } else {
            Exit::Signal(libc::WTERMSIG(status))
        })
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
                let stats = SaveStats {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_reports_survive_the_pipe_encoding() {
        let stats = SaveStats {
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
