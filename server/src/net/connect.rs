//! Outgoing connections (a replica's to its master, the cluster bus's to other nodes), made
//! from `bind-source-addr` when it is set, as Redis's
//! anetTcpNonBlockBestEffortBindConnect: the socket is bound to the first address of
//! `source` that binds, and when none does (or the name does not resolve) the connection
//! is made from the system's choice of address instead.

use socket2::{Domain, Socket, Type};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

/// Starts a non-blocking connection to `addr`, from `source` unless it is empty.
pub fn connect_from(addr: SocketAddr, source: &str) -> io::Result<mio::net::TcpStream> {
    if !source.is_empty() {
        if let Ok(stream) = bound_connect(addr, source) {
            return Ok(stream);
        }
    }
    mio::net::TcpStream::connect(addr)
}

fn bound_connect(addr: SocketAddr, source: &str) -> io::Result<mio::net::TcpStream> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    let mut bound = Err(io::Error::from(io::ErrorKind::AddrNotAvailable));
    for local in (source, 0).to_socket_addrs()? {
        bound = socket.bind(&local.into());
        if bound.is_ok() {
            break;
        }
    }
    bound?;
    match socket.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(mio::net::TcpStream::from_std(socket.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connects_from_the_source_address_or_without_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let from = connect_from(addr, "127.0.0.2").unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip().to_string(), "127.0.0.2");
        drop(from);
        // An address this host does not have: the system's choice instead.
        let _ = connect_from(addr, "192.0.2.1").unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip().to_string(), "127.0.0.1");
    }
}
