//! A connection's socket, TCP or Unix-domain, and the address of its peer: what the loop
//! hands a [`Handler`](crate::Handler) for each accepted connection.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};

use mio::event::Source;
use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};

/// An accepted socket: TCP (from a [`TcpListener`](mio::net::TcpListener)) or Unix-domain
/// (from a [`UnixListener`](mio::net::UnixListener)).
#[derive(Debug)]
pub enum Stream {
    /// A TCP connection.
    Tcp(TcpStream),
    /// A Unix-domain stream connection.
    Unix(UnixStream),
}

/// Who connected: a TCP peer's address, or a client of the `i`-th Unix listener (Unix
/// peers are unnamed, so the listener is what identifies them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A TCP peer.
    Tcp(SocketAddr),
    /// A client of the Unix listener at this index (in the order the loop was given them).
    Unix(usize),
}

impl Stream {
    /// The TCP socket, for the options only TCP has; `None` for a Unix connection.
    pub fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Stream::Tcp(s) => Some(s),
            Stream::Unix(_) => None,
        }
    }

    /// Shuts down the reading, writing or both halves of the connection.
    pub fn shutdown(&self, how: std::net::Shutdown) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        }
    }

    /// The local address of a TCP connection; `None` for a Unix one.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.tcp().and_then(|s| s.local_addr().ok())
    }
}

impl Peer {
    /// A TCP peer's IP address; `None` for a Unix client.
    pub fn ip(&self) -> Option<std::net::IpAddr> {
        match self {
            Peer::Tcp(a) => Some(a.ip()),
            Peer::Unix(_) => None,
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Source for Stream {
    fn register(&mut self, r: &Registry, token: Token, interest: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, token, interest),
            Stream::Unix(s) => s.register(r, token, interest),
        }
    }

    fn reregister(&mut self, r: &Registry, token: Token, interest: Interest) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, token, interest),
            Stream::Unix(s) => s.reregister(r, token, interest),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
        }
    }
}
