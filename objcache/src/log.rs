//! The store's log lines: a hook the host process sets once at start (goblin-server sends
//! them through its own log, with its format and `--logfile`); without one they go to
//! standard error prefixed `goblin-store:`, as the standalone binary prints them.

use std::sync::OnceLock;

/// How much a line matters (the host maps it onto its own levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// What the store is doing (engines, listeners).
    Notice,
    /// Something failed or fell back.
    Warning,
}

static HOOK: OnceLock<fn(Level, &str)> = OnceLock::new();

/// Sends the store's lines to `hook` from now on (the first call wins).
pub fn set_hook(hook: fn(Level, &str)) {
    let _ = HOOK.set(hook);
}

/// Writes one line through the hook, or to standard error when none is set.
pub fn log(level: Level, message: &str) {
    match HOOK.get() {
        Some(hook) => hook(level, message),
        None => eprintln!("goblin-store: {message}"),
    }
}

/// `store_log!(Warning, "format", args...)`: one line at that level.
#[macro_export]
macro_rules! store_log {
    ($level:ident, $($arg:tt)*) => {
        $crate::log::log($crate::log::Level::$level, &format!($($arg)*))
    };
}
