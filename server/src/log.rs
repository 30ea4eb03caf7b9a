//! Log lines in Redis's format: `pid:M 02 Dec 2026 17:00:00.123 * message`.

use crate::config::LogLevel;
use std::io::Write;
use std::sync::Mutex;

static LOG: Mutex<Option<Logger>> = Mutex::new(None);

struct Logger {
    level: LogLevel,
    file: Option<std::fs::File>,
}

/// Sets the verbosity and destination (empty path: standard output).
pub fn init(level: LogLevel, path: &str) -> std::io::Result<()> {
    let file = if path.is_empty() {
        None
    } else {
        Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        )
    };
    *LOG.lock().unwrap_or_else(|e| e.into_inner()) = Some(Logger { level, file });
    Ok(())
}

/// Changes the verbosity (CONFIG SET loglevel).
pub fn set_level(level: LogLevel) {
    if let Some(l) = LOG.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        l.level = level;
    }
}

/// The role letter of the log lines: M for a master, S for a replica (as Redis's).
static ROLE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(b'M');

/// Sets the role letter of the log lines.
pub fn set_role(role: char) {
    ROLE.store(role as u8, std::sync::atomic::Ordering::Relaxed);
}

/// Writes one line at `level`.
pub fn log(level: LogLevel, message: &str) {
    let mut guard = LOG.lock().unwrap_or_else(|e| e.into_inner());
    let Some(logger) = guard.as_mut() else { return };
    if level < logger.level || logger.level == LogLevel::Nothing {
        return;
    }
    let mark = match level {
        LogLevel::Debug => '.',
        LogLevel::Verbose => '-',
        LogLevel::Notice => '*',
        _ => '#',
    };
    let line = format!(
        "{}:{} {} {} {}\n",
        std::process::id(),
        ROLE.load(std::sync::atomic::Ordering::Relaxed) as char,
        timestamp(),
        mark,
        message
    );
    let _ = match logger.file.as_mut() {
        Some(f) => f.write_all(line.as_bytes()),
        None => std::io::stdout().write_all(line.as_bytes()),
    };
}

/// "02 Dec 2026 17:00:00.123" in UTC.
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = goblin_evloop::calendar::civil_from_days(days);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{:02} {} {} {:02}:{:02}:{:02}.{:03}",
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Logs at notice level with format arguments.
#[macro_export]
macro_rules! notice {
    ($($t:tt)*) => { $crate::log::log($crate::config::LogLevel::Notice, &format!($($t)*)) };
}

/// Logs at warning level with format arguments.
#[macro_export]
macro_rules! warning {
    ($($t:tt)*) => { $crate::log::log($crate::config::LogLevel::Warning, &format!($($t)*)) };
}
