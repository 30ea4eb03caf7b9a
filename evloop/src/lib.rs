//! goblin-evloop: what Goblin's network servers share (the RESP server, the store's
//! memcache and HTTP fronts).
//!
//! The modules, one line each:
//!
//! - [`event_loop`]: the mio event-loop skeleton ([`EventLoop`]) and the [`Handler`] trait
//!   a protocol implements on it.
//! - [`calendar`]: calendar dates from day counts and back (HTTP dates, log timestamps).
//! - [`listener`]: listening sockets with SO_REUSEPORT, IPV6_V6ONLY and a backlog; Unix ones.
//! - [`sockaddr`]: socket addresses in the kernel's form, for the calls std does not wrap.
//! - [`stream`]: an accepted socket, TCP or Unix-domain, and its peer.
//! - [`alloc`]: the allocator settings a process starts with.
//!
//! The path an event takes:
//!
//! ```text
//! mio poll -> token
//!   listener  -> accept until WouldBlock -> register -> Handler::accept -> slab of Conn
//!   conn key  -> Handler::ready -> Ctx::read_* (until drained) -> the protocol runs what
//!                arrived -> write_some (until the socket is full) -> Ctx::watch_writable
//!                / Ctx::close
//!   source(n) -> Handler::source (io_uring eventfds, outgoing sockets, ...)
//!   WAKE      -> Handler::woken (another thread's mio::Waker)
//! then Handler::after_events (timers) -> the next deadline, or busy polling after traffic
//! ```

#![warn(missing_docs)]

pub mod alloc;
pub mod calendar;
pub mod event_loop;
pub mod listener;
pub mod sockaddr;
pub mod stream;

pub use event_loop::{
    send_some, source, write_some, Conn, Ctx, EventLoop, Handler, Listen, Next, ReadOutcome, WAKE,
};
pub use stream::{Peer, Stream};
