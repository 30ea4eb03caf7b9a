//! Forked debugging sessions (SCRIPT DEBUG YES): as Redis's, the server forks and the child
//! runs the session and the script on its copy of the dataset, answers the client and
//! exits, so whatever the script wrote is gone with it; the parent closes its side of the
//! connection and goes on serving. The parent keeps the children's ids, reaps them from
//! the cron and kills those still running when it shuts down.
//!
//! The child never returns to the event loop: what the script's commands propagate or
//! send to other clients stays in its memory and dies with it. It asks to be killed if
//! the parent dies (PR_SET_PDEATHSIG), ignores SIGTERM and SIGINT as Redis's does, and
//! does not log (another thread may have held the log's lock at the fork).

use crate::server::Server;

/// Which side of the fork this is.
#[derive(Debug, PartialEq, Eq)]
pub enum Side {
    /// The server: the session is the child's.
    Parent,
    /// The child: it runs the session and exits.
    Child,
}

/// Forks for a debugging session; the parent remembers the child.
pub fn fork(server: &mut Server) -> std::io::Result<Side> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork() has no preconditions; the child goes on with the script on its own
    // copy of the memory and leaves with _exit (see the module comment).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: plain system calls on this process's own state.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
        }
        crate::service::process::enter_child(None);
        return Ok(Side::Child);
    }
    crate::notice!("Redis forked for debugging eval");
    server.scripting.forked_sessions.push(pid);
    Ok(Side::Parent)
}

/// In the child, once the session is over: ends the process.
pub fn exit_child() -> ! {
    // SAFETY: ends the child without running the parent's destructors or atexit handlers.
    unsafe { libc::_exit(0) }
}

/// Reaps the children whose sessions ended (from the cron).
pub fn reap(server: &mut Server) {
    server.scripting.forked_sessions.retain(|&pid| {
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        r == 0
    });
}

/// Kills the sessions still running (at shutdown, as Redis's ldbKillForkedSessions).
pub fn kill_sessions(server: &mut Server) {
    for pid in std::mem::take(&mut server.scripting.forked_sessions) {
        crate::notice!("Killing debugging session {pid}");
        // SAFETY: signalling and waiting for our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
        }
    }
}
