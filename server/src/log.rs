//! Log lines in Redis's format: `pid:M 02 Dec 2026 17:00:00.123 * message`.

use crate::config::LogLevel;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

static LOG: Mutex<Option<Logger>> = Mutex::new(None);

struct Logger {
    level: LogLevel,
    /// The log file's name ("": standard output).
    path: String,
    /// The file open under that name, with its (device, inode).
    file: Option<(std::fs::File, (u64, u64))>,
    /// syslog-enabled: each line goes to syslog too.
    syslog: Option<crate::syslog::Syslog>,
}

impl Logger {
    /// The file to write to: the one open while `path` still names it, else `path` opened
    /// anew (so a log renamed by logrotate is followed by a new file of the old name, as
    /// Redis's open-per-line does, for the price of a stat). None: standard output, or the
    /// file cannot be opened.
    fn file(&mut self) -> Option<&mut std::fs::File> {
        if self.path.is_empty() {
            return None;
        }
        let current = std::fs::metadata(&self.path).ok().map(|m| identity(&m));
        if current.is_none() || current != self.file.as_ref().map(|f| f.1) {
            if let Ok(opened) = open_log(&self.path) {
                // The signal handler's descriptor moves before the old one is closed.
                HANDLER_FD.store(
                    std::os::fd::AsRawFd::as_raw_fd(&opened.0),
                    Ordering::Relaxed,
                );
                self.file = Some(opened);
            }
        }
        self.file.as_mut().map(|f| &mut f.0)
    }
}

/// A file's (device, inode).
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

/// Opens (creating) the log file for appending.
fn open_log(path: &str) -> std::io::Result<(std::fs::File, (u64, u64))> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let id = identity(&file.metadata()?);
    Ok((file, id))
}

/// Sets the verbosity and destination (empty path: standard output).
pub fn init(level: LogLevel, path: &str) -> std::io::Result<()> {
    let file = if path.is_empty() {
        None
    } else {
        Some(open_log(path)?)
    };
    let fd = file
        .as_ref()
        .map_or(1, |f| std::os::fd::AsRawFd::as_raw_fd(&f.0));
    HANDLER_FD.store(fd, Ordering::Relaxed);
    SILENT.store(level == LogLevel::Nothing, Ordering::Relaxed);
    let path = path.to_owned();
    *LOG.lock().unwrap_or_else(|e| e.into_inner()) = Some(Logger {
        level,
        path,
        file,
        syslog: None,
    });
    Ok(())
}

/// Sends every line to the system's syslog too (syslog-enabled), as `ident` in `facility`.
pub fn enable_syslog(ident: &str, facility: &str) -> std::io::Result<()> {
    let syslog = crate::syslog::Syslog::open("/dev/log", ident, facility)?;
    if let Some(l) = LOG.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        l.syslog = Some(syslog);
    }
    Ok(())
}

/// Where [`log_from_handler`] writes: the log file's descriptor, or standard output.
static HANDLER_FD: AtomicI32 = AtomicI32::new(1);
/// loglevel is `nothing`: a signal handler's line is not written either.
static SILENT: AtomicBool = AtomicBool::new(false);

/// Writes a warning from a signal handler as Redis's serverLogFromHandler does
/// (`pid:signal-handler (unix seconds) message`): no lock and no allocation, only
/// async-signal-safe calls. A message longer than 200 bytes is cut.
pub fn log_from_handler(message: &str) {
    log_from_handler_parts(&[message.as_bytes()]);
}

/// [`log_from_handler`] of the message the parts make, one after the other.
pub fn log_from_handler_parts(parts: &[&[u8]]) {
    if SILENT.load(Ordering::Relaxed) {
        return;
    }
    let mut line = [0u8; 256];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(line.len() - len);
        line[len..len + n].copy_from_slice(&bytes[..n]);
        len += n;
    };
    // SAFETY: getpid and time are async-signal-safe; time takes a null pointer.
    let (pid, secs) = unsafe { (libc::getpid(), libc::time(std::ptr::null_mut())) };
    put(itoa::Buffer::new().format(pid).as_bytes());
    put(b":signal-handler (");
    put(itoa::Buffer::new().format(secs).as_bytes());
    put(b") ");
    let mut room = 200;
    for part in parts {
        let n = part.len().min(room);
        put(&part[..n]);
        room -= n;
    }
    put(b"\n");
    // SAFETY: write is async-signal-safe; the buffer holds `len` bytes.
    unsafe { libc::write(handler_fd(), line.as_ptr().cast(), len) };
}

/// The descriptor the log writes to (for a signal handler's own writes).
pub fn handler_fd() -> i32 {
    HANDLER_FD.load(Ordering::Relaxed)
}

/// Whether [`init`] has run (lines then go to the log, not to standard error).
pub fn initialized() -> bool {
    LOG.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Changes the verbosity (CONFIG SET loglevel).
pub fn set_level(level: LogLevel) {
    SILENT.store(level == LogLevel::Nothing, Ordering::Relaxed);
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

/// Writes `text` as it is, without the line prefix, at `level` (Redis's LL_RAW).
pub fn log_raw(level: LogLevel, text: &str) {
    write_at(level, text, || text.to_owned());
}

/// Writes one line at `level`.
pub fn log(level: LogLevel, message: &str) {
    write_at(level, message, || {
        let mark = match level {
            LogLevel::Debug => '.',
            LogLevel::Verbose => '-',
            LogLevel::Notice => '*',
            _ => '#',
        };
        format!(
            "{}:{} {} {} {}\n",
            std::process::id(),
            ROLE.load(std::sync::atomic::Ordering::Relaxed) as char,
            timestamp(),
            mark,
            message
        )
    });
}

/// Writes what `text` makes when `level` is logged (and `message` to syslog when enabled).
fn write_at(level: LogLevel, message: &str, text: impl FnOnce() -> String) {
    let mut guard = LOG.lock().unwrap_or_else(|e| e.into_inner());
    let Some(logger) = guard.as_mut() else { return };
    if level < logger.level || logger.level == LogLevel::Nothing {
        return;
    }
    if let Some(s) = &logger.syslog {
        s.send(level, &syslog_stamp(), message);
    }
    let line = text();
    let _ = match logger.file() {
        Some(f) => f.write_all(line.as_bytes()),
        None => std::io::stdout().write_all(line.as_bytes()),
    };
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Now in UTC as (duration since the epoch, year, month, day, seconds into the day).
fn now_utc() -> (std::time::Duration, i64, u32, u32, i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = goblin_evloop::calendar::civil_from_days(days);
    (now, y, m, d, rem)
}

/// "Dec  6 09:02:49" in UTC, as syslog(3) stamps its lines.
fn syslog_stamp() -> String {
    let (_, _, m, d, rem) = now_utc();
    format!("{} {d:>2} {}", MONTHS[(m - 1) as usize], clock(rem))
}

/// Seconds into the day as "hh:mm:ss".
fn clock(rem: i64) -> String {
    format!("{:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// "02 Dec 2026 17:00:00.123" in UTC.
fn timestamp() -> String {
    let (now, y, m, d, rem) = now_utc();
    format!(
        "{d:02} {} {y} {}.{:03}",
        MONTHS[(m - 1) as usize],
        clock(rem),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_log_is_followed_by_a_new_file_of_its_name() {
        let dir = std::env::temp_dir().join(format!("goblin-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.log");
        let (file, id) = open_log(path.to_str().unwrap()).unwrap();
        let mut logger = Logger {
            level: LogLevel::Notice,
            path: path.to_str().unwrap().into(),
            file: Some((file, id)),
            syslog: None,
        };
        logger.file().unwrap().write_all(b"one\n").unwrap();
        std::fs::rename(&path, dir.join("g.log.1")).unwrap();
        logger.file().unwrap().write_all(b"two\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("g.log.1")).unwrap(),
            "one\n"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
