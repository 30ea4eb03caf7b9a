//! The network layer: the RESP connections on the shared event loop
//! ([`goblin_evloop::EventLoop`]), their buffers and limits.
//!
//! - [`listen`]: binding the listeners.
//! - [`unix`]: the Unix-domain listener and its socket file.
//! - [`connect`]: outgoing connections from `bind-source-addr`.
//! - [`handler`]: [`RespLoop`](handler::RespLoop), the [`goblin_evloop::Handler`]: accept,
//!   service a connection, serve woken connections, blocking timeouts, cron.
//! - [`conn`]: a connection's read and write buffers (the loop owns the socket).
//! - [`requests`]: running the complete requests of a read buffer through `commands`.
//! - [`limits`]: the query buffer limit, the output buffer limits, the pause on reading.
//!
//! Each connection owns a read buffer (the parser refers to byte ranges in it) and a write
//! buffer. All complete requests in the read buffer run in order before the replies are
//! written, so a pipeline of N commands costs one read and one write. A reply larger than
//! the socket buffer stays in the write buffer and drains on writable events; while more
//! than [`PAUSE_OUTPUT`](limits::PAUSE_OUTPUT) bytes wait, the connection's further
//! requests are not read, so a client that never reads cannot make the server grow without
//! bound.
//!
//! # Who owns what
//!
//! The loop owns the sockets and the slab of [`Conn`](conn::Conn)s (buffers only); the
//! client state lives in the registry, `Server::clients` ([`crate::clients`]), under the
//! same key. Servicing a connection leases its client out of the registry, so a command
//! runs with `&mut Server` and `&mut Client` while every other client stays visible in the
//! registry: CLIENT LIST reads them (with the buffer sizes recorded at their last
//! servicing), CLIENT KILL dooms them, serving a blocked client or CLIENT UNBLOCK leases
//! one, writes its reply into the lease's output and wakes it. After each servicing the
//! handler restores the client with its buffer sizes, then services the woken connections,
//! moving the output written for them into their write buffers. Commands never see a
//! connection; the dependency runs net -> commands -> clients.

pub mod conn;
pub mod connect;
pub mod evict;
pub mod handler;
pub mod keepalive;
pub mod limits;
pub mod listen;
pub mod requests;
pub mod unix;

pub use listen::bind;

use crate::server::Server;
use goblin_evloop::EventLoop;
use mio::net::{TcpListener, UnixListener};
use std::time::Duration;

/// Runs the loop on the TCP `listeners` and the Unix one (if any) until SHUTDOWN (or a
/// signal asking for it); `ready` runs once the server serves commands (after the
/// start-up load, if any).
pub fn run(
    server: &mut Server,
    listeners: Vec<TcpListener>,
    unix: Option<UnixListener>,
    ready: &mut dyn FnMut(),
) -> anyhow::Result<()> {
    let busy_poll = Duration::from_micros(server.config.busy_poll_us);
    server.listening = listeners
        .iter()
        .filter_map(|l| l.local_addr().ok())
        .collect();
    let handler = handler::RespLoop::new(server, ready);
    EventLoop::new(mio::Poll::new()?, listeners, handler, busy_poll)?
        .with_unix(unix.into_iter().collect())?
        .run()?;
    Ok(())
}
