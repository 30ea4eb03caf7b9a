//! The diskless sync's writer, run in the forked child: the same bytes to every waiting
//! replica's socket (their preamble first, then the RDB, then the end mark). The sockets
//! are non-blocking (the loop's); the child waits on each with poll(2), up to repl-timeout.
//! A replica whose socket fails is dropped; the child fails only when none is left.

use crate::keyspace::Db;
use crate::rdb::write::{write_snapshot, AuxInfo, SaveStats};
use std::io::{self, Write};
use std::time::Duration;

/// One replica's socket and what it gets before the RDB.
#[derive(Debug)]
pub struct Target {
    fd: i32,
    preamble: Vec<u8>,
    alive: bool,
}

impl Target {
    /// The socket `fd`, to be sent `preamble` first.
    pub fn new(fd: i32, preamble: Vec<u8>) -> Target {
        Target {
            fd,
            preamble,
            alive: true,
        }
    }
}

/// Writes to every live target.
struct FanOut {
    targets: Vec<Target>,
    timeout_ms: i32,
}

/// Writes all of `bytes` to non-blocking `fd`, waiting for room up to `timeout_ms` at a time.
fn write_all_fd(fd: i32, mut bytes: &[u8], timeout_ms: i32) -> io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: writing from a live buffer of that length to a descriptor we hold.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: poll on one pollfd we own.
                let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
                if r == 0 {
                    return Err(io::ErrorKind::TimedOut.into());
                }
            }
            io::ErrorKind::Interrupted => {}
            _ if n == 0 => return Err(io::ErrorKind::WriteZero.into()),
            _ => return Err(err),
        }
    }
    Ok(())
}

impl Write for FanOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for t in self.targets.iter_mut().filter(|t| t.alive) {
            if write_all_fd(t.fd, buf, self.timeout_ms).is_err() {
                t.alive = false;
            }
        }
        if self.targets.iter().any(|t| t.alive) {
            Ok(buf.len())
        } else {
            Err(io::Error::other("no replica left"))
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sends each target its preamble, then the snapshot of `dbs`, then `mark`.
pub fn send(
    targets: Vec<Target>,
    mark: &[u8],
    dbs: &[Db],
    aux: &AuxInfo,
    timeout: Duration,
) -> io::Result<SaveStats> {
    let timeout_ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    let mut out = FanOut {
        targets,
        timeout_ms,
    };
    for t in &mut out.targets {
        if write_all_fd(t.fd, &t.preamble, timeout_ms).is_err() {
            t.alive = false;
        }
    }
    let (mut out, stats) = write_snapshot(out, dbs, aux)?;
    out.write_all(mark)?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;

    #[test]
    fn every_socket_gets_its_preamble_the_snapshot_and_the_mark() {
        let (mut a_in, a_out) = std::os::unix::net::UnixStream::pair().unwrap();
        let (mut b_in, b_out) = std::os::unix::net::UnixStream::pair().unwrap();
        a_out.set_nonblocking(true).unwrap();
        b_out.set_nonblocking(true).unwrap();
        let targets = vec![
            Target::new(
                a_out.as_raw_fd(),
                b"+FULLRESYNC x 0\r\n$EOF:MARK\r\n".to_vec(),
            ),
            Target::new(b_out.as_raw_fd(), b"$EOF:MARK\r\n".to_vec()),
        ];
        let aux = AuxInfo {
            redis_version: "7.2.4",
            ctime: 0,
            used_mem: 0,
            compress: false,
            aof_base: false,
            functions: Vec::new(),
            repl: None,
            key_delay_us: 0,
        };
        let dbs = vec![Db::default()];
        let reader = std::thread::spawn(move || {
            let mut a = Vec::new();
            let mut b = Vec::new();
            a_in.read_to_end(&mut a).unwrap();
            b_in.read_to_end(&mut b).unwrap();
            (a, b)
        });
        send(targets, b"MARK", &dbs, &aux, Duration::from_secs(5)).unwrap();
        drop(a_out);
        drop(b_out);
        let (a, b) = reader.join().unwrap();
        assert!(a.starts_with(b"+FULLRESYNC x 0\r\n$EOF:MARK\r\nREDIS0010"));
        assert!(b.starts_with(b"$EOF:MARK\r\nREDIS0010"));
        assert!(a.ends_with(b"MARK") && b.ends_with(b"MARK"));
        assert_eq!(&a[17..], &b[..]);
    }
}
