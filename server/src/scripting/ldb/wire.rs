//! The debugging client's connection while a session runs: the debugger reads and writes
//! its socket itself, blocking (the server, or the forked child, does nothing else
//! meanwhile), as Redis's LDB does; and the parser of the commands it reads (Redis's
//! ldbReplParseCommand, a forgiving reader of multi-bulk requests only).

use crate::numbers::atoi;
use std::time::{Duration, Instant};

/// How long one write may wait for the socket (Redis's connSendTimeout of 5 s).
const SEND_TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes asked of the socket per read.
pub const READ_SIZE: usize = 1024;
/// How often a read waiting for the client looks whether a shutdown signal came.
const SIGNAL_POLL_MS: i32 = 100;

/// The socket of the debugging client (not owned: the connection keeps it).
#[derive(Clone, Copy, Debug)]
pub struct Wire {
    fd: i32,
}

impl Wire {
    /// The connection with this descriptor.
    pub fn new(fd: i32) -> Wire {
        Wire { fd }
    }

    /// Writes all of `bytes`, waiting at most [`SEND_TIMEOUT`] for each write; a broken or
    /// stuck connection loses the rest (the next read then sees it gone, as with Redis).
    pub fn send(&self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            // SAFETY: writing from a live slice to a descriptor this process holds open.
            let n = unsafe { libc::write(self.fd, bytes.as_ptr().cast(), bytes.len()) };
            if n > 0 {
                bytes = &bytes[n as usize..];
                continue;
            }
            let err = std::io::Error::last_os_error();
            match err.kind() {
                std::io::ErrorKind::Interrupted => continue,
                std::io::ErrorKind::WouldBlock
                    if self.wait(libc::POLLOUT, SEND_TIMEOUT.as_millis() as i32) => {}
                _ => return,
            }
        }
    }

    /// Reads what the client sent (at most [`READ_SIZE`] bytes), waiting as long as it
    /// takes; `None` when the connection closed or broke, or a shutdown signal came (Redis's
    /// blocking read is interrupted by it).
    pub fn read(&self) -> Option<Vec<u8>> {
        let mut buf = [0u8; READ_SIZE];
        loop {
            // SAFETY: reading into a live buffer of READ_SIZE bytes.
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                return Some(buf[..n as usize].to_vec());
            }
            if n == 0 {
                return None;
            }
            match std::io::Error::last_os_error().kind() {
                std::io::ErrorKind::Interrupted => {}
                std::io::ErrorKind::WouldBlock => {
                    if crate::service::shutdown::signal_pending() {
                        return None;
                    }
                    self.wait(libc::POLLIN, SIGNAL_POLL_MS);
                }
                _ => return None,
            }
        }
    }

    /// Waits up to `ms` for the socket to be ready for `events`; false on a timeout.
    fn wait(&self, events: libc::c_short, ms: i32) -> bool {
        let deadline = Instant::now() + Duration::from_millis(ms.max(0) as u64);
        loop {
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events,
                revents: 0,
            };
            let left = deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as i32;
            // SAFETY: poll on one live pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, left) };
            if r > 0 {
                return true;
            }
            if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return false;
            }
        }
    }
}

/// Why no command could be parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Parse {
    /// More bytes are needed.
    Incomplete,
    /// The bytes are not a request the debugger reads.
    ProtocolError,
}

/// One command from the start of `buf`: `*<n>\r\n` then `n` bulk strings (`n` and each
/// length 1 to 1024). As Redis's parser: the header is looked for as C string functions
/// look (a NUL byte ends the search), bytes after the command are not looked at, and
/// numbers are read as atoi reads them.
pub fn parse(buf: &[u8]) -> Result<Vec<Vec<u8>>, Parse> {
    if buf.is_empty() {
        return Err(Parse::Incomplete);
    }
    let c_str = |from: usize| {
        let rest = &buf[from.min(buf.len())..];
        &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())]
    };
    let crlf = |from: usize| {
        c_str(from)
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|i| from + i)
    };
    let star = c_str(0)
        .iter()
        .position(|&b| b == b'*')
        .ok_or(Parse::ProtocolError)?;
    let end = crlf(star).ok_or(Parse::Incomplete)?;
    let argc = atoi(&buf[star + 1..end]);
    if !(1..=1024).contains(&argc) {
        return Err(Parse::ProtocolError);
    }
    let mut p = end + 2;
    let mut argv = Vec::with_capacity(argc as usize);
    while argv.len() < argc as usize {
        match buf.get(p) {
            None | Some(0) => return Err(Parse::Incomplete),
            Some(b'$') => {}
            Some(_) => return Err(Parse::ProtocolError),
        }
        let end = crlf(p).ok_or(Parse::Incomplete)?;
        let len = atoi(&buf[p + 1..end]);
        if !(1..=1024).contains(&len) {
            return Err(Parse::ProtocolError);
        }
        let start = end + 2;
        let stop = start + len as usize;
        if stop + 2 > buf.len() {
            return Err(Parse::Incomplete);
        }
        argv.push(buf[start..stop].to_vec());
        if &buf[stop..stop + 2] != b"\r\n" {
            return Err(Parse::ProtocolError);
        }
        p = stop + 2;
    }
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    #[test]
    fn requests_parse_as_redis_parses_them() {
        assert_eq!(parse(b"*1\r\n$1\r\ns\r\n"), Ok(args(&["s"])));
        assert_eq!(
            parse(b"junk*2\r\n$1\r\np\r\n$3\r\nabc\r\n*1\r\n"),
            Ok(args(&["p", "abc"]))
        );
        assert_eq!(
            parse(b"*1\r\n$11\r\nhello\0world\r\n"),
            Ok(vec![b"hello\0world".to_vec()])
        );
        for partial in [
            &b""[..],
            b"*1",
            b"*1\r\n",
            b"*1\r\n$1",
            b"*1\r\n$1\r\ns",
            b"*2\r\n$1\r\ns\r\n",
        ] {
            assert_eq!(parse(partial), Err(Parse::Incomplete), "{partial:?}");
        }
        for bad in [
            &b"s\r\n"[..],
            b"*0\r\n",
            b"*1025\r\n",
            b"*1\r\n+s\r\n",
            b"*1\r\n$0\r\n\r\n",
            b"*1\r\n$1\r\nsx\r\n",
            b"\0*1\r\n$1\r\ns\r\n",
        ] {
            assert_eq!(parse(bad), Err(Parse::ProtocolError), "{bad:?}");
        }
    }
}
