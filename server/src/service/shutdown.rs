//! The shutdown sequence, as Redis 7's prepareForShutdown / finishShutdown: SHUTDOWN and
//! SIGTERM / SIGINT give the replicas up to `shutdown-timeout` seconds to acknowledge
//! the whole stream (writes paused meanwhile) before the final save and the exit.
//!
//! A shutdown whose replicas lag is pending ([`Pending`]): the SHUTDOWN callers stay
//! blocked (they get no reply if the server exits), each loop iteration looks whether the
//! replicas caught up or the time is up ([`round`]), and SHUTDOWN ABORT or a failed save
//! cancels it (the callers get Redis's error, writes resume).

use crate::commands::pause::{self, Purpose};
use crate::server::Server;
use crate::{notice, warning};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Save even without save points (SHUTDOWN SAVE).
pub const SAVE: u32 = 1;
/// Do not save (SHUTDOWN NOSAVE).
pub const NOSAVE: u32 = 1 << 1;
/// Do not wait for the replicas (SHUTDOWN NOW).
pub const NOW: u32 = 1 << 2;
/// Exit even when the save fails (SHUTDOWN FORCE).
pub const FORCE: u32 = 1 << 3;

/// The names of shutdown-on-sigterm / shutdown-on-sigint's flags, in Redis's order.
const NAMES: [(&str, u32); 5] = [
    ("default", 0),
    ("save", SAVE),
    ("nosave", NOSAVE),
    ("now", NOW),
    ("force", FORCE),
];

/// The reply of a SHUTDOWN that did not happen (and of the callers of a cancelled one).
pub const FAILED: &str = "ERR Errors trying to SHUTDOWN. Check logs.";

/// Parses a shutdown-on-sigterm / shutdown-on-sigint value: flag names separated by single
/// spaces (ASCII case ignored), as Redis's multi-argument enum; the error as Redis words it.
pub fn parse_flags(text: &str) -> Result<u32, String> {
    let mut flags = 0;
    for word in text.split(' ') {
        let Some((_, bit)) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(word)) else {
            let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "argument(s) must be one of the following: {}",
                names.join(", ")
            ));
        };
        flags |= bit;
    }
    if flags & SAVE != 0 && flags & NOSAVE != 0 {
        return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into());
    }
    Ok(flags)
}

/// The value CONFIG GET shows for `flags`: their names in Redis's order, or "default".
pub fn flags_name(flags: u32) -> String {
    let names: Vec<&str> = NAMES
        .iter()
        .filter(|(_, bit)| *bit != 0 && flags & bit != 0)
        .map(|(n, _)| *n)
        .collect();
    if names.is_empty() {
        "default".into()
    } else {
        names.join(" ")
    }
}

/// A shutdown waiting for lagging replicas (Redis's shutdown_mstime and shutdown_flags).
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    flags: u32,
    /// When it goes on whether or not the replicas caught up, Unix milliseconds.
    deadline_ms: u64,
}

impl Pending {
    /// Milliseconds left before it goes on without the replicas (INFO's
    /// shutdown_in_milliseconds; negative once the time is up).
    pub fn remaining_ms(&self, now_ms: u64) -> i64 {
        self.deadline_ms as i64 - now_ms as i64
    }
}

/// What a request to shut down came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ready to exit: the loop stops at the end of this iteration.
    Exit,
    /// Waiting for the replicas (or a shutdown was already pending): the caller blocks.
    Waiting,
    /// The save failed: the server goes on ([`FAILED`] for the caller).
    Failed,
}

/// The last shutdown signal received and not yet logged (0: none).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);
/// A signal asked for a shutdown not yet done nor cancelled (Redis's shutdown_asap).
static ASAP: AtomicBool = AtomicBool::new(false);
/// The signal behind [`ASAP`] (Redis's last_sig_received).
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_shutdown_signal(sig: libc::c_int) {
    if sig == libc::SIGINT && ASAP.load(Ordering::Relaxed) {
        // As Redis: a second Ctrl+C means quit at once, without saving nor waiting.
        crate::log::log_from_handler("You insist... exiting now.");
        crate::rdb::file::remove_temp_from_handler();
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(1) };
    }
    LAST_SIGNAL.store(sig, Ordering::Relaxed);
    SIGNALLED.store(sig, Ordering::Relaxed);
    ASAP.store(true, Ordering::Relaxed);
}

/// Whether a shutdown signal came and its shutdown is still to do (a Lua debugging session
/// that waits for its client ends then, as Redis's read is interrupted by the signal).
pub fn signal_pending() -> bool {
    ASAP.load(Ordering::Relaxed)
}

/// SIGTERM and SIGINT ask for a shutdown, as shutdown-on-sigterm / shutdown-on-sigint say.
pub fn install_signal_handlers() {
    let handler = on_shutdown_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches atomics and calls _exit, both async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, handler);
        libc::signal(libc::SIGINT, handler);
    }
}

/// Starts a shutdown with `flags` (Redis's prepareForShutdown): at once when NOW is given,
/// `shutdown-timeout` is 0 or no replica lags; else writes are paused, the replicas asked
/// for an acknowledgement, and the shutdown is pending.
pub fn request(server: &mut Server, flags: u32) -> Outcome {
    if server.shutdown_pending.is_some() {
        return Outcome::Waiting;
    }
    warning!("User requested shutdown...");
    let timeout_ms = server.config.shutdown_timeout.saturating_mul(1000);
    if flags & NOW == 0 && timeout_ms != 0 && !replicas_caught_up(server) {
        server.shutdown_pending = Some(Pending {
            flags,
            deadline_ms: crate::clock::unix_ms().saturating_add(timeout_ms),
        });
        if !pause::paused(server, pause::REPLICA) {
            crate::replication::master::send_getack(server);
        }
        pause::pause(server, Purpose::Shutdown, i64::MAX as u64, pause::WRITE_SET);
        notice!("Waiting for replicas before shutting down.");
        return Outcome::Waiting;
    }
    match finish(server, flags) {
        Ok(()) => Outcome::Exit,
        Err(()) => Outcome::Failed,
    }
}

/// SHUTDOWN ABORT (Redis's abortShutdown): cancels a pending shutdown, or forgets a
/// signal's not yet started. False when there is neither.
pub fn abort(server: &mut Server) -> bool {
    if server.shutdown_pending.is_some() {
        cancel(server);
    } else if ASAP.swap(false, Ordering::Relaxed) {
        LAST_SIGNAL.store(0, Ordering::Relaxed);
    } else {
        return false;
    }
    notice!("Shutdown manually aborted.");
    true
}

/// Checked by the event loop each iteration: true when the server exits now (SHUTDOWN
/// done, a signal's shutdown done, or a pending one whose replicas caught up or whose
/// time is up, its save done).
pub fn round(server: &mut Server) -> bool {
    if server.shutdown {
        return true;
    }
    match SIGNALLED.swap(0, Ordering::Relaxed) {
        libc::SIGINT => warning!("Received SIGINT scheduling shutdown..."),
        libc::SIGTERM => warning!("Received SIGTERM scheduling shutdown..."),
        _ => {}
    }
    if server.pause_cron {
        // Redis's serverCron acts on signals and pending shutdowns.
        return false;
    }
    if let Some(pending) = server.shutdown_pending {
        let due = crate::clock::unix_ms() >= pending.deadline_ms || replicas_caught_up(server);
        return due && finish(server, pending.flags).is_ok();
    }
    if ASAP.load(Ordering::Relaxed) {
        let flags = match LAST_SIGNAL.load(Ordering::Relaxed) {
            libc::SIGINT => server.config.shutdown_on_sigint,
            _ => server.config.shutdown_on_sigterm,
        };
        return request(server, flags) == Outcome::Exit;
    }
    false
}

/// Whether every replica acknowledged the whole stream (Redis's isReadyToShutdown).
fn replicas_caught_up(server: &Server) -> bool {
    let offset = server.replication.offset();
    let replicas = &server.replication.master.replicas;
    replicas.iter().all(|r| r.ack_off == offset)
}

/// The final steps (Redis's finishShutdown): the lagging replicas logged, the save as
/// `flags` and the save points say. On a failed save (without FORCE) the shutdown is
/// cancelled and the server goes on.
fn finish(server: &mut Server, flags: u32) -> Result<(), ()> {
    log_lagging_replicas(server);
    crate::scripting::ldb::fork::kill_sessions(server);
    let save = match (flags & SAVE != 0, flags & NOSAVE != 0) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    };
    let force = flags & FORCE != 0;
    if !crate::aof::may_exit(server, force)
        || server.snapshots().prepare_shutdown(save, force).is_err()
    {
        warning!("Errors trying to shut down the server. Check the logs for more information.");
        cancel(server);
        return Err(());
    }
    server.shutdown = true;
    Ok(())
}

fn log_lagging_replicas(server: &Server) {
    let offset = server.replication.offset();
    let replicas = &server.replication.master.replicas;
    if replicas.is_empty() {
        return;
    }
    let mut lagging = 0;
    for r in replicas.iter().filter(|r| r.ack_off != offset) {
        lagging += 1;
        let lag = if r.state == crate::replication::master::State::Online {
            r.ack_time.elapsed().as_secs()
        } else {
            0
        };
        warning!(
            "Lagging replica {} reported offset {} behind master, lag={lag}, state={}.",
            r.name(),
            offset as i64 - r.ack_off as i64,
            r.state.name()
        );
    }
    notice!(
        "{} of {} replicas are in sync when shutting down.",
        replicas.len() - lagging,
        replicas.len()
    );
}

/// Whether `client` is a SHUTDOWN caller blocked until the shutdown ends.
pub fn waits_for_shutdown(client: &crate::clients::Client) -> bool {
    client.blocked.as_ref().is_some_and(|b| {
        b.keys.is_empty()
            && b.command
                .first()
                .is_some_and(|n| n.eq_ignore_ascii_case(b"shutdown"))
    })
}

/// Ends a pending shutdown without exiting (Redis's cancelShutdown): its callers get
/// [`FAILED`], writes resume.
fn cancel(server: &mut Server) {
    server.shutdown_pending = None;
    ASAP.store(false, Ordering::Relaxed);
    LAST_SIGNAL.store(0, Ordering::Relaxed);
    crate::commands::refuse_blocked(server, |_, client| {
        waits_for_shutdown(client).then(|| FAILED.to_string())
    });
    pause::unpause(server, Purpose::Shutdown);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_flags_parse_as_redis_multi_argument_enum() {
        assert_eq!(parse_flags("default"), Ok(0));
        assert_eq!(parse_flags("NOSAVE now"), Ok(NOSAVE | NOW));
        assert_eq!(parse_flags("default save"), Ok(SAVE));
        assert_eq!(parse_flags("save save"), Ok(SAVE));
        let bad = "argument(s) must be one of the following: default, save, nosave, now, force";
        for text in ["", " save", "save  now", "bogus"] {
            assert_eq!(parse_flags(text).unwrap_err(), bad, "{text:?}");
        }
        assert_eq!(
            parse_flags("save nosave").unwrap_err(),
            "shutdown options SAVE and NOSAVE can't be used simultaneously"
        );
    }

    #[test]
    fn signal_flags_are_shown_in_redis_order() {
        assert_eq!(flags_name(0), "default");
        assert_eq!(flags_name(FORCE | NOW | NOSAVE), "nosave now force");
        assert_eq!(flags_name(parse_flags("now save").unwrap()), "save now");
    }
}
