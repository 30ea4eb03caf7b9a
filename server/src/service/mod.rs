//! Service-manager conventions, as redis-server follows them: `daemonize`, `pidfile`,
//! `supervised` (systemd and upstart readiness), `protected-mode`, the `--version` line
//! and the start-up summary of ignored directives.
//!
//! - [`banner`]: the start-up lines and logo Redis logs.
//! - [`cmdline`]: the command line's options as configuration lines, as Redis reads them.
//! - [`crash`]: the bug report of a fatal signal or a server panic.
//! - [`daemon`]: fork and detach, the parent waiting until the server is ready.
//! - [`directives`]: the directives Redis knows, the summary of ignored ones, Redis's
//!   fatal error for the others.
//! - [`locale`]: the collation locale of SORT ALPHA and Lua (locale-collate).
//! - [`pidfile`]: the pid file, removed at a clean shutdown.
//! - [`process`]: the out-of-memory score and the process title.
//! - [`notify`]: telling systemd or upstart that the server is ready.
//! - [`protected`]: refusing non-loopback clients of a server without a password.
//! - [`shutdown`]: SHUTDOWN and SIGTERM / SIGINT waiting for lagging replicas, then exit.
//! - [`syscheck`]: the start-up warnings of overcommit and Transparent Huge Pages.

pub mod banner;
pub mod cmdline;
pub mod crash;
pub mod daemon;
pub mod directives;
pub mod locale;
pub mod notify;
pub mod pidfile;
pub mod process;
pub mod protected;
pub mod shutdown;
pub mod syscheck;

pub use directives::ignored_summary;

use crate::config::Config;

/// Where Redis writes its pid when daemonized without a `pidfile` (CONFIG_DEFAULT_PID_FILE).
pub const DEFAULT_PIDFILE: &str = "/var/run/redis.pid";

/// The service state a running server keeps: its supervisor, the parent waiting for a
/// daemon's start-up, and its pid file. Dropping it (at a clean shutdown) removes the pid
/// file; systemd hears STOPPING=1 when the shutdown begins (see `rdb::prepare_shutdown`).
pub struct Service {
    supervisor: notify::Supervisor,
    daemon: Option<daemon::Detached>,
    _pidfile: Option<pidfile::PidFile>,
}

impl Service {
    /// Does what Redis does between loading its configuration and serving: detects the
    /// supervisor (`supervised`), detaches when `daemonize yes` and not supervised, and
    /// writes the pid file when daemonized or `pidfile` is set (a daemon without one writes
    /// [`DEFAULT_PIDFILE`]). `config` then shows the supervisor found and the pid file used,
    /// as CONFIG GET does in Redis.
    pub fn start(config: &mut Config) -> std::io::Result<Service> {
        let supervisor = notify::Supervisor::detect(&config.supervised);
        if supervisor != notify::Supervisor::None {
            config.supervised = supervisor.name().into();
        }
        let background = config.daemonize && supervisor == notify::Supervisor::None;
        let daemon = if background {
            Some(daemon::detach()?)
        } else {
            None
        };
        if background && config.pidfile.is_empty() {
            config.pidfile = DEFAULT_PIDFILE.into();
        }
        let pidfile =
            (!config.pidfile.is_empty()).then(|| pidfile::PidFile::create(&config.pidfile));
        Ok(Service {
            supervisor,
            daemon,
            _pidfile: pidfile,
        })
    }

    /// Start-up is complete: systemd gets READY=1 and a daemon's parent exits 0.
    pub fn ready(&mut self) {
        self.supervisor.ready();
        if let Some(daemon) = self.daemon.take() {
            daemon.release();
        }
    }
}

/// True when the command line asks for the version as redis-server takes it: `-v` or
/// `--version` as the first argument.
pub fn asks_version(mut args: impl Iterator<Item = String>) -> bool {
    matches!(args.nth(1).as_deref(), Some("-v" | "--version"))
}

/// The line `goblin-server --version` prints, in redis-server's shape: the Redis version
/// Goblin answers as, no git commit (`00000000:0`, as a Redis built outside git says), the
/// system allocator, and build id 0, the values INFO server gives.
pub fn version_line() -> String {
    format!(
        "Redis server v={} sha=00000000:0 malloc=libc bits={} build=0",
        crate::REDIS_VERSION,
        usize::BITS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_request_only_as_first_argument() {
        let argv = |a: &[&str]| {
            a.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .into_iter()
        };
        assert!(asks_version(argv(&["goblin-server", "-v"])));
        assert!(asks_version(argv(&["goblin-server", "--version", "x"])));
        assert!(!asks_version(argv(&["goblin-server", "--port", "1", "-v"])));
        assert!(!asks_version(argv(&["goblin-server"])));
    }

    #[test]
    fn version_line_has_redis_shape() {
        let line = version_line();
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(&fields[..2], ["Redis", "server"]);
        assert_eq!(fields.len(), 7, "{line}");
        for (field, key) in fields[2..]
            .iter()
            .zip(["v", "sha", "malloc", "bits", "build"])
        {
            assert!(field.starts_with(&format!("{key}=")), "{line}");
        }
    }
}
