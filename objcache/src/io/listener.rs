//! Listening sockets: one SO_REUSEPORT listener per event loop, so the kernel spreads new
//! connections over the loops.

use goblin_evloop::listener::{bind, ListenOptions};
use std::io;
use std::net::SocketAddr;

/// Binds a non-blocking listener with SO_REUSEADDR and SO_REUSEPORT set.
pub fn reuseport_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let options = ListenOptions {
        reuse_port: true,
        v6_only: false,
        backlog: 1024,
    };
    bind(addr, options)
}
