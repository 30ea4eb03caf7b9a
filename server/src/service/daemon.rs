//! `daemonize yes`: fork, a new session, standard streams on /dev/null, as Redis does. The
//! parent does not exit at once: it waits on a pipe until the daemon is ready (listening,
//! data loaded, pid file written), then exits 0, or 1 if the daemon ended first, so what
//! started it (a shell, an init script, systemd's Type=forking) learns whether it runs.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The daemon's end of the pipe its parent waits on.
pub struct Detached {
    to_parent: File,
}

impl Detached {
    /// Tells the waiting parent that start-up is complete; it exits 0.
    pub fn release(mut self) {
        let _ = self.to_parent.write_all(b"1");
    }
}

/// Detaches the process. Returns in the daemon only: the parent waits for
/// [`Detached::release`] and exits. Call it before any thread starts (fork copies only the
/// calling thread).
pub fn detach() -> std::io::Result<Detached> {
    let (mut from_child, to_parent) = pipe()?;
    // SAFETY: no other thread runs yet (see above), so the child's copy of the process is
    // consistent.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => {
            drop(from_child);
            // SAFETY: setsid has no memory-safety preconditions; the child of a fork is not a
            // group leader, so it succeeds.
            unsafe { libc::setsid() };
            stdio_to_dev_null()?;
            Ok(Detached { to_parent })
        }
        child => {
            drop(to_parent);
            let mut byte = [0u8; 1];
            if matches!(from_child.read(&mut byte), Ok(1)) {
                std::process::exit(0);
            }
            eprintln!(
                "goblin-server: the daemon (pid {child}) exited during start-up; its log says why"
            );
            std::process::exit(1);
        }
    }
}

/// A pipe whose ends are closed on exec.
fn pipe() -> std::io::Result<(File, File)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((File::from(read), File::from(write)))
}

/// Points standard input, output and error at /dev/null: a daemon logging to standard
/// output (`logfile ""`) logs nowhere, as Redis's does.
fn stdio_to_dev_null() -> std::io::Result<()> {
    let null = File::options().read(true).write(true).open("/dev/null")?;
    for fd in [libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: both descriptors are open; dup2 replaces `fd` atomically.
        if unsafe { libc::dup2(null.as_raw_fd(), fd) } == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
