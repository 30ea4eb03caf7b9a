//! syslog-enabled / syslog-ident / syslog-facility: each log line also goes to the local
//! syslog socket (/dev/log) as a datagram in the format glibc's syslog(3) sends
//! (`<priority>Mmm dd hh:mm:ss ident[pid]: message`), with Redis's level mapping (debug,
//! verbose as info, notice, warning). A missing socket loses the line, as syslog(3) does.

use crate::config::LogLevel;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;

/// The facilities syslog-facility takes, as Redis names them.
pub const FACILITIES: [&str; 9] = [
    "user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
];

/// Where the lines go.
#[derive(Debug)]
pub struct Syslog {
    socket: UnixDatagram,
    path: PathBuf,
    ident: String,
    facility: u32,
}

/// The facility's code (already shifted, as LOG_USER or LOG_LOCAL0..7).
fn facility_code(name: &str) -> u32 {
    match FACILITIES.iter().position(|f| *f == name) {
        Some(0) | None => 1 << 3,
        Some(n) => (15 + n as u32) << 3,
    }
}

/// syslog(3)'s severity of a log level.
fn severity(level: LogLevel) -> u32 {
    match level {
        LogLevel::Debug => 7,
        LogLevel::Verbose => 6,
        LogLevel::Notice => 5,
        _ => 4,
    }
}

impl Syslog {
    /// Lines to the socket at `path` (the system's is /dev/log) as `ident`, in `facility`.
    pub fn open(path: impl Into<PathBuf>, ident: &str, facility: &str) -> std::io::Result<Self> {
        Ok(Syslog {
            socket: UnixDatagram::unbound()?,
            path: path.into(),
            ident: ident.to_owned(),
            facility: facility_code(facility),
        })
    }

    /// Sends one line; `stamp` is the time as syslog writes it ("Dec  6 09:02:49").
    pub fn send(&self, level: LogLevel, stamp: &str, message: &str) {
        let line = format!(
            "<{}>{stamp} {}[{}]: {message}",
            self.facility | severity(level),
            self.ident,
            std::process::id()
        );
        let _ = self.socket.send_to(line.as_bytes(), &self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_in_syslogs_format() {
        let dir = std::env::temp_dir().join(format!("goblin-syslog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log");
        let receiver = UnixDatagram::bind(&path).unwrap();
        let s = Syslog::open(&path, "goblin", "local0").unwrap();
        s.send(LogLevel::Notice, "Dec  6 09:02:49", "hello");
        let mut buf = [0u8; 256];
        let n = receiver.recv(&mut buf).unwrap();
        let expect = format!("<133>Dec  6 09:02:49 goblin[{}]: hello", std::process::id());
        assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), expect);
        Syslog::open(&path, "r", "user")
            .unwrap()
            .send(LogLevel::Warning, "x", "w");
        let n = receiver.recv(&mut buf).unwrap();
        assert!(buf[..n].starts_with(b"<12>"));
        assert_eq!(facility_code("local7"), 23 << 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
