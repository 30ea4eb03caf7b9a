//! Listening sockets: one SO_REUSEPORT listener per event loop, so the kernel spreads new
//! connections over the loops.

use goblin_evloop::listener::{bind, ListenOptions};
use std::io::{self, Read};
use std::net::SocketAddr;

use goblin_evloop::Stream;

/// Binds a non-blocking listener with SO_REUSEADDR and SO_REUSEPORT set.
pub fn reuseport_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let options = ListenOptions {
        reuse_port: true,
        v6_only: false,
        backlog: 1024,
    };
    bind(addr, options)
}

/// Answers an accepted connection the front will not serve (over its connection cap) with
/// `reply`, then shuts its sending side; the caller drops it. The bytes the client already
/// sent are read first, so that closing does not reset the connection (which could discard
/// the reply before the client reads it).
pub fn refuse(stream: &mut Stream, reply: &[u8]) {
    let mut sink = [0u8; 4096];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
    let _ = goblin_evloop::write_some(stream, reply);
    let _ = stream.shutdown(std::net::Shutdown::Write);
}
