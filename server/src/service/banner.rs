//! The start-up lines Redis logs, at the points Redis logs them: "... is starting", the
//! version line, "Configuration loaded" (or the warning of a server started without
//! arguments), then the logo with the mode, port and pid (or, without the logo, one
//! "Running mode=" line). Tools that start Redis (Redis's own test framework among them)
//! wait for " PID: <pid>" and then "Server initialized" in the log.

use crate::config::{Config, LogLevel};

/// Logs the lines Redis logs once its configuration is read and it has daemonized:
/// `with_arguments` is false when the server was started without any argument.
pub fn starting(with_arguments: bool, argv0: &str) {
    crate::notice!("oO0OoO0OoO0Oo Goblin is starting oO0OoO0OoO0Oo");
    crate::notice!(
        "Goblin version={} (Redis {} compatible), bits={}, pid={}, just started",
        env!("CARGO_PKG_VERSION"),
        crate::REDIS_VERSION,
        usize::BITS,
        std::process::id()
    );
    if with_arguments {
        crate::notice!("Configuration loaded");
    } else {
        crate::warning!("Warning: no config file specified, using the default config. In order to specify a config file use {argv0} /path/to/redis.conf");
    }
}

/// Logs the logo (with `always-show-logo yes`, or when the log is a terminal's standard
/// output), else the one line Redis logs in its place.
pub fn logo(config: &Config) {
    let mode = if config.cluster.enabled {
        "cluster"
    } else {
        "standalone"
    };
    // SAFETY: isatty only inspects the descriptor.
    let tty = unsafe { libc::isatty(1) } == 1;
    if config.always_show_logo || (config.logfile.is_empty() && tty) {
        crate::log::log_raw(LogLevel::Notice, &logo_text(mode, config.port));
    } else {
        crate::notice!("Running mode={mode}, port={}.", config.port);
    }
}

/// The logo: a goblin's head beside the version, mode, port and pid.
fn logo_text(mode: &str, port: u16) -> String {
    format!(
        concat!(
            "       .-\"\"\"-.                                                 \n",
            "      / _   _ \\         Goblin {} (Redis {} compatible) {} bit\n",
            "   <\\| (o) (o) |/>                                              \n",
            "      \\   ^   /         Running in {} mode\n",
            "       '.===.'          Port: {}\n",
            "         '-'            PID: {}\n",
            "                                                                \n\n"
        ),
        env!("CARGO_PKG_VERSION"),
        crate::REDIS_VERSION,
        usize::BITS,
        mode,
        port,
        std::process::id()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logo_names_port_and_pid_as_redis_does() {
        let text = logo_text("standalone", 6380);
        assert!(text.contains(" Port: 6380\n"));
        assert!(text.contains(&format!(" PID: {}\n", std::process::id())));
        assert!(text.contains("Running in standalone mode"));
    }
}
