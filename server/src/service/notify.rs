//! `supervised`: telling the service manager that the server is ready, as Redis does.
//! systemd gets `STATUS=` lines and `READY=1` on `$NOTIFY_SOCKET` (through the sd-notify
//! crate); under upstart the process stops itself (SIGSTOP) once detected, the readiness
//! signal of upstart's `expect stop`. `auto` picks upstart when `$UPSTART_JOB` is set, else
//! systemd when `$NOTIFY_SOCKET` is.

use sd_notify::NotifyState;
use std::sync::atomic::{AtomicU8, Ordering};

/// The process's supervisor once detected (a [`Supervisor`] as u8): INFO's
/// `process_supervised` and the STOPPING=1 of a shutdown read it.
static DETECTED: AtomicU8 = AtomicU8::new(Supervisor::None as u8);

/// The service manager the server reports to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Supervisor {
    /// None (`supervised no`, or the one asked for is not there).
    None,
    /// Upstart.
    Upstart,
    /// systemd.
    Systemd,
}

impl Supervisor {
    /// The supervisor for `supervised MODE`, set up as Redis's redisIsSupervised does:
    /// systemd is told the server is loading, upstart's stop happens now.
    pub fn detect(mode: &str) -> Supervisor {
        let mode = match mode {
            "auto" if std::env::var_os("UPSTART_JOB").is_some() => {
                crate::log::log(
                    crate::config::LogLevel::Verbose,
                    "Upstart supervision detected.",
                );
                "upstart"
            }
            "auto" if std::env::var_os("NOTIFY_SOCKET").is_some() => {
                crate::log::log(
                    crate::config::LogLevel::Verbose,
                    "Systemd supervision detected.",
                );
                "systemd"
            }
            other => other,
        };
        let found = match mode {
            "upstart" => Self::upstart(),
            "systemd" => Self::systemd(),
            _ => Supervisor::None,
        };
        DETECTED.store(found as u8, Ordering::Relaxed);
        found
    }

    /// The supervisor [`Supervisor::detect`] found for this process.
    pub fn current() -> Supervisor {
        match DETECTED.load(Ordering::Relaxed) {
            x if x == Supervisor::Upstart as u8 => Supervisor::Upstart,
            x if x == Supervisor::Systemd as u8 => Supervisor::Systemd,
            _ => Supervisor::None,
        }
    }

    fn upstart() -> Supervisor {
        if std::env::var_os("UPSTART_JOB").is_none() {
            crate::warning!("upstart supervision requested, but UPSTART_JOB not found!");
            return Supervisor::None;
        }
        crate::notice!("supervised by upstart, will stop to signal readiness.");
        // SAFETY: raising a signal has no memory-safety preconditions.
        unsafe { libc::raise(libc::SIGSTOP) };
        std::env::remove_var("UPSTART_JOB");
        Supervisor::Upstart
    }

    fn systemd() -> Supervisor {
        if !tell_systemd(&[NotifyState::Status("Goblin is loading...")]) {
            return Supervisor::None;
        }
        crate::notice!(
            "Supervised by systemd. Please make sure you set appropriate values for \
             TimeoutStartSec and TimeoutStopSec in your service unit."
        );
        Supervisor::Systemd
    }

    /// The `supervised` value this supervisor stands for.
    pub fn name(self) -> &'static str {
        match self {
            Supervisor::None => "no",
            Supervisor::Upstart => "upstart",
            Supervisor::Systemd => "systemd",
        }
    }

    /// Start-up is complete.
    pub fn ready(self) {
        if self == Supervisor::Systemd {
            tell_systemd(&[
                NotifyState::Status("Ready to accept connections"),
                NotifyState::Ready,
            ]);
        }
    }

    /// The server begins to shut down (before its final save, as Redis's
    /// prepareForShutdown tells systemd).
    pub fn stopping(self) {
        if self == Supervisor::Systemd {
            tell_systemd(&[NotifyState::Stopping]);
        }
    }
}

/// Sends one notification; false (with Redis's warning) when there is no socket or the
/// send fails.
fn tell_systemd(states: &[NotifyState]) -> bool {
    if std::env::var_os("NOTIFY_SOCKET").is_none() {
        crate::warning!("systemd supervision error: NOTIFY_SOCKET not found!");
        return false;
    }
    match sd_notify::notify(states) {
        Ok(()) => true,
        Err(e) => {
            crate::warning!("systemd supervision error: sd_notify: {e}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixDatagram;

    fn received(socket: &UnixDatagram) -> String {
        let mut buf = [0u8; 512];
        let n = socket.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    // The only test that touches NOTIFY_SOCKET or UPSTART_JOB.
    #[test]
    fn systemd_is_told_loading_ready_and_stopping() {
        let path = std::env::temp_dir().join(format!("goblin-notify-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let socket = UnixDatagram::bind(&path).unwrap();
        std::env::remove_var("UPSTART_JOB");
        std::env::remove_var("NOTIFY_SOCKET");
        assert_eq!(Supervisor::detect("auto"), Supervisor::None);
        assert_eq!(Supervisor::detect("systemd"), Supervisor::None);
        std::env::set_var("NOTIFY_SOCKET", &path);
        assert_eq!(Supervisor::detect("no"), Supervisor::None);
        let supervisor = Supervisor::detect("auto");
        assert_eq!(supervisor, Supervisor::Systemd);
        assert_eq!(received(&socket), "STATUS=Goblin is loading...\n");
        supervisor.ready();
        assert_eq!(
            received(&socket),
            "STATUS=Ready to accept connections\nREADY=1\n"
        );
        supervisor.stopping();
        assert_eq!(received(&socket), "STOPPING=1\n");
        std::env::remove_var("NOTIFY_SOCKET");
        let _ = std::fs::remove_file(&path);
    }
}
