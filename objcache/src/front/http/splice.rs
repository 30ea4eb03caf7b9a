//! Sends without a user-space copy: a tail buffer's pages are `vmsplice`d into a pipe of the
//! connection's own, by reference, and `splice`d from there into the socket, as nginx's
//! `sendfile` hands the socket page-cache pages. A `write` copies every byte into the
//! socket's buffers first; over loopback the client then copies it out again, so a warm
//! replay copied each body byte twice where nginx copies it once.
//!
//! Safe only for bytes that never change while a reference to their pages lives, which may
//! be after the buffer is dropped (in the pipe, then in the socket's queue until the peer
//! reads it): bytes of buffers whose pages are their own ([`AlignedBuf::owns_pages`]) that
//! are no longer written. The tails of the hot-tail cache and completed tail reads are such
//! buffers, and so are the bytes a fill has received into its extent (it writes only after
//! them; a pipe reads only the bytes it was given, not the rest of their page). Their pages
//! go back to the system only when the last reference goes, and no allocation reuses them
//! before that.
//!
//! Bytes taken into the pipe count as written: the connection drains the pipe before it
//! writes anything else ([`SplicePipe::drain`]), so the order of the output is kept.
//!
//! [`AlignedBuf::owns_pages`]: crate::store::AlignedBuf::owns_pages

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The pipe capacity asked for (the kernel's default limit for an unprivileged process).
const PIPE_BYTES: i32 = 1 << 20;

/// A connection's pipe, and the bytes in it not yet moved to the socket.
pub struct SplicePipe {
    read: OwnedFd,
    write: OwnedFd,
    held: usize,
    capacity: usize,
}

impl SplicePipe {
    /// A non-blocking pipe, enlarged to 1 MiB where the kernel allows.
    pub fn new() -> io::Result<SplicePipe> {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded: both descriptors are open and owned by nobody else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: F_SETPIPE_SZ / F_GETPIPE_SZ on an open pipe; a refusal leaves the default.
        let capacity = unsafe {
            libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES);
            libc::fcntl(write.as_raw_fd(), libc::F_GETPIPE_SZ)
        };
        Ok(SplicePipe {
            read,
            write,
            held: 0,
            capacity: capacity.max(4096) as usize,
        })
    }

    /// True when bytes wait in the pipe.
    pub fn holds(&self) -> bool {
        self.held > 0
    }

    /// Moves what the pipe holds to `socket`; adds the bytes moved to `sent`. Ok(true)
    /// when the pipe is empty, Ok(false) when the socket is full. With `more`, the socket
    /// is told more bytes follow at once (SPLICE_F_MORE, as MSG_MORE).
    pub fn drain(&mut self, socket: RawFd, more: bool, sent: &mut u64) -> io::Result<bool> {
        let flags = match more {
            true => libc::SPLICE_F_MORE,
            false => 0,
        };
        while self.held > 0 {
            // SAFETY: splice between two open descriptors, no offsets.
            let n = unsafe {
                libc::splice(
                    self.read.as_raw_fd(),
                    std::ptr::null_mut(),
                    socket,
                    std::ptr::null_mut(),
                    self.held,
                    libc::SPLICE_F_NONBLOCK | libc::SPLICE_F_MOVE | flags,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => return Ok(false),
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(e),
                }
            }
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            self.held -= n as usize;
            *sent += n as u64;
        }
        Ok(true)
    }

    /// Takes up to the pipe's free room of `bytes` into the pipe by reference and moves
    /// what it can on to `socket` (`more` as in [`SplicePipe::drain`]). Returns the bytes
    /// taken (they count as written), or `None` when the pipe was full. `bytes` must stay
    /// unchanged for as long as any page of them lives (see the module comment).
    pub fn send(
        &mut self,
        socket: RawFd,
        bytes: &[u8],
        more: bool,
        sent: &mut u64,
    ) -> io::Result<Option<usize>> {
        let room = self.capacity - self.held;
        if bytes.is_empty() {
            return Ok(Some(0));
        }
        if room == 0 {
            return Ok(None);
        }
        let iov = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len().min(room),
        };
        let n = loop {
            // SAFETY: iov describes readable memory of the caller's; without SPLICE_F_GIFT
            // the kernel only takes references to its pages.
            let n =
                unsafe { libc::vmsplice(self.write.as_raw_fd(), &iov, 1, libc::SPLICE_F_NONBLOCK) };
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(None),
                io::ErrorKind::Interrupted => {}
                _ => return Err(e),
            }
        };
        self.held += n;
        self.drain(socket, more && n == bytes.len(), sent)?;
        Ok(Some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    use crate::store::AlignedBuf;

    #[test]
    fn spliced_bytes_arrive_in_order_after_the_buffer_is_gone() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            let mut client = client;
            client.read_to_end(&mut all).unwrap();
            all
        });
        let mut pipe = SplicePipe::new().unwrap();
        let mut want = Vec::new();
        let mut sent = 0;
        for round in 0..8u8 {
            let mut buf = AlignedBuf::new(300_000);
            for (i, b) in buf.iter_mut().enumerate() {
                *b = (i as u8).wrapping_mul(31).wrapping_add(round);
            }
            want.extend_from_slice(&buf);
            let mut at = 0;
            while at < buf.len() {
                while !pipe.drain(server.as_raw_fd(), false, &mut sent).unwrap() {
                    std::thread::yield_now();
                }
                if let Some(n) = pipe
                    .send(server.as_raw_fd(), &buf[at..], round % 2 == 0, &mut sent)
                    .unwrap()
                {
                    at += n;
                }
            }
            // The buffer goes while its last pages may still be in the pipe or the socket.
            drop(buf);
        }
        while !pipe.drain(server.as_raw_fd(), false, &mut sent).unwrap() {
            std::thread::yield_now();
        }
        assert!(!pipe.holds());
        assert_eq!(sent, want.len() as u64);
        drop(server);
        assert!(reader.join().unwrap() == want);
    }
}
