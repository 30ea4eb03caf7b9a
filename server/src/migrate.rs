//! MIGRATE's connections to other servers (Redis's migrate_cached_sockets): blocking TCP
//! connections with a deadline on every operation, kept per "host:port" for reuse and
//! closed after [`IDLE_SECS`] unused, at most [`MAX_SOCKETS`] at once (a random one is
//! dropped for a new one), with the database last selected on each.
//!
//! MIGRATE blocks the server while it talks to the target, as Redis's does: the
//! operations here wait, bounded by the command's timeout.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Seconds a cached connection may stay unused (MIGRATE_SOCKET_CACHE_TTL).
pub const IDLE_SECS: u64 = 10;
/// Most connections kept (MIGRATE_SOCKET_CACHE_ITEMS).
pub const MAX_SOCKETS: usize = 64;
/// Longest reply line read; the rest of a longer line is dropped (Redis reads 1024 bytes).
const MAX_LINE: usize = 1024;

/// One cached connection.
#[derive(Debug)]
pub struct Target {
    stream: TcpStream,
    /// The database last SELECTed on it (None: SELECT before the next RESTORE).
    pub last_db: Option<i64>,
    last_use: Instant,
    /// Bytes read past the last line.
    pending: Vec<u8>,
}

/// Why no connection was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectError {
    /// The host did not resolve (Redis: "IOERR error or timeout connecting to the client").
    Resolve,
    /// No address accepted the connection in time. Redis's blocking connect does not look
    /// at the outcome, so its MIGRATE then fails writing: the caller reports it so.
    Connect,
}

/// An I/O failure, and whether it was the deadline passing (no retry then).
#[derive(Debug)]
pub struct IoFailure {
    /// The deadline passed.
    pub timed_out: bool,
}

impl From<io::Error> for IoFailure {
    fn from(e: io::Error) -> IoFailure {
        IoFailure {
            timed_out: matches!(
                e.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ),
        }
    }
}

impl Target {
    /// Connects to `host`:`port` within `timeout` (each resolved address in turn).
    fn connect(host: &str, port: u16, timeout: Duration) -> Result<Target, ConnectError> {
        let addrs: Vec<_> = (host, port)
            .to_socket_addrs()
            .map_err(|_| ConnectError::Resolve)?
            .collect();
        if addrs.is_empty() {
            return Err(ConnectError::Resolve);
        }
        for addr in addrs {
            if let Ok(stream) = TcpStream::connect_timeout(&addr, timeout) {
                let _ = stream.set_nodelay(true);
                return Ok(Target {
                    stream,
                    last_db: None,
                    last_use: Instant::now(),
                    pending: Vec::new(),
                });
            }
        }
        Err(ConnectError::Connect)
    }

    /// Writes all of `data`, in 64 KB chunks each within `timeout` (connSyncWrite).
    pub fn write_all(&mut self, data: &[u8], timeout: Duration) -> Result<(), IoFailure> {
        self.stream.set_write_timeout(Some(timeout))?;
        for chunk in data.chunks(64 * 1024) {
            let deadline = Instant::now() + timeout;
            let mut rest = chunk;
            while !rest.is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(IoFailure { timed_out: true });
                }
                self.stream.set_write_timeout(Some(left))?;
                match self.stream.write(rest) {
                    Ok(0) => return Err(IoFailure { timed_out: false }),
                    Ok(n) => rest = &rest[n..],
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    /// Reads one reply line within `timeout`, without its CRLF (connSyncReadLine); at most
    /// [`MAX_LINE`] bytes of it are kept.
    pub fn read_line(&mut self, timeout: Duration) -> Result<Vec<u8>, IoFailure> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=end).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                line.truncate(MAX_LINE);
                return Ok(line);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(IoFailure { timed_out: true });
            }
            self.stream.set_read_timeout(Some(left))?;
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => return Err(IoFailure { timed_out: false }),
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The port Redis connects to for the argument `arg`: C's atoi of it (leading blanks, a
/// sign, the digits up to anything else; nothing is 0), then the service lookup, which
/// refuses a negative number and takes a larger one modulo 2^16.
fn port_of(arg: &[u8]) -> Option<u16> {
    let text = arg.trim_ascii_start();
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    let value = digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0i64, |v, &d| {
            (v * 10 + i64::from(d - b'0')).min(i64::from(i32::MAX))
        });
    if negative && value > 0 {
        return None;
    }
    Some(value as u16)
}

/// The cached connections, by "host:port".
#[derive(Debug, Default)]
pub struct Sockets {
    cached: HashMap<Vec<u8>, Target>,
    /// Picks the entry dropped when the cache is full.
    evictions: usize,
}

impl Sockets {
    fn name(host: &[u8], port: &[u8]) -> Vec<u8> {
        [host, b":", port].concat()
    }

    /// The cached connection to `host`:`port`, or a new one made within `timeout`
    /// (migrateGetSocket); nothing is cached on failure.
    pub fn get(
        &mut self,
        host: &[u8],
        port: &[u8],
        timeout: Duration,
    ) -> Result<&mut Target, ConnectError> {
        let name = Sockets::name(host, port);
        if !self.cached.contains_key(&name) {
            if self.cached.len() >= MAX_SOCKETS {
                // Full: drop one (Redis drops a random one).
                self.evictions = self.evictions.wrapping_add(1);
                let victim = self.evictions % self.cached.len();
                let key = self.cached.keys().nth(victim).cloned().expect("non-empty");
                self.cached.remove(&key);
            }
            let host = std::str::from_utf8(host).map_err(|_| ConnectError::Resolve)?;
            let port = port_of(port).ok_or(ConnectError::Resolve)?;
            let target = Target::connect(host, port, timeout)?;
            self.cached.insert(name.clone(), target);
        }
        let target = self.cached.get_mut(&name).expect("just ensured");
        target.last_use = Instant::now();
        Ok(target)
    }

    /// Closes the connection to `host`:`port`, if cached (migrateCloseSocket).
    pub fn close(&mut self, host: &[u8], port: &[u8]) {
        self.cached.remove(&Sockets::name(host, port));
    }

    /// Closes the connections unused for more than [`IDLE_SECS`] (the cron's
    /// migrateCloseTimedoutSockets).
    pub fn close_idle(&mut self) {
        self.cached
            .retain(|_, t| t.last_use.elapsed() <= Duration::from_secs(IDLE_SECS));
    }

    /// Connections cached.
    pub fn len(&self) -> usize {
        self.cached.len()
    }

    /// Whether none is cached.
    pub fn is_empty(&self) -> bool {
        self.cached.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn lines_are_read_across_reads_and_cut_at_crlf() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let mut sockets = Sockets::default();
        let t = sockets
            .get(b"127.0.0.1", port.as_bytes(), Duration::from_secs(2))
            .unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        peer.write_all(b"+OK\r\n-ERR bad\r").unwrap();
        assert_eq!(t.read_line(Duration::from_secs(2)).unwrap(), b"+OK");
        peer.write_all(b"\n").unwrap();
        assert_eq!(t.read_line(Duration::from_secs(2)).unwrap(), b"-ERR bad");
        let e = t.read_line(Duration::from_millis(50)).unwrap_err();
        assert!(e.timed_out);
        t.write_all(b"PING\r\n", Duration::from_secs(1)).unwrap();
        let mut got = [0u8; 6];
        peer.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"PING\r\n");
        drop(peer);
        let t = sockets
            .get(b"127.0.0.1", port.as_bytes(), Duration::from_secs(2))
            .unwrap();
        assert!(!t.read_line(Duration::from_secs(2)).unwrap_err().timed_out);
        assert_eq!(sockets.len(), 1, "the same connection is reused");
        sockets.close(b"127.0.0.1", port.as_bytes());
        assert!(sockets.is_empty());
    }

    #[test]
    fn ports_are_read_as_atoi_then_getaddrinfo() {
        assert_eq!(port_of(b"6379"), Some(6379));
        assert_eq!(port_of(b" +6379abc"), Some(6379));
        assert_eq!(port_of(b""), Some(0));
        assert_eq!(port_of(b"x"), Some(0));
        assert_eq!(port_of(b"70000"), Some(4464));
        assert_eq!(port_of(b"-1"), None);
        assert_eq!(port_of(b"-0"), Some(0));
    }

    #[test]
    fn refused_and_bad_ports_give_none() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        drop(listener);
        let mut sockets = Sockets::default();
        let get = |s: &mut Sockets, host: &[u8], port: &[u8]| {
            s.get(host, port, Duration::from_secs(1))
                .map(|_| ())
                .unwrap_err()
        };
        assert_eq!(
            get(&mut sockets, b"127.0.0.1", port.as_bytes()),
            ConnectError::Connect
        );
        assert_eq!(
            get(&mut sockets, b"127.0.0.1", b"nope"),
            ConnectError::Connect
        );
        assert_eq!(
            get(&mut sockets, b"host.invalid", b"6379"),
            ConnectError::Resolve
        );
        assert!(sockets.is_empty());
    }
}
