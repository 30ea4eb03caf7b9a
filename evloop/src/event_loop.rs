//! The event-loop skeleton: one mio poll, its listeners, a slab of connections, a waker and
//! optional busy polling, driving a [`Handler`] that gives the connections their protocol.
//!
//! The loop owns the mechanics every protocol repeats: accepting until `WouldBlock`
//! (TCP_NODELAY set, each socket registered under its slab key), dispatching readiness by
//! token, reading until the socket is drained ([`Ctx::read_via_scratch`],
//! [`Ctx::read_in_place`]), writing until the socket is full ([`write_some`]), asking for
//! writability only while output is stuck ([`Ctx::watch_writable`]), closing, the
//! [`mio::Waker`] (an eventfd) through which other threads wake the loop, and after traffic
//! polling without sleeping for a while (`busy_poll`). The handler owns the protocol:
//! what a connection's state is, when requests run, what is written and when a connection
//! closes.
//!
//! Tokens:
//!
//! ```text
//! 0 .. SOURCE_BASE              connections: the token is the connection's slab key
//! SOURCE_BASE + n               the handler's own sources (see `source`): Handler::source(n)
//! LISTENER_BASE + i (i < 64)    the i-th TCP listener
//! UNIX_BASE + i (i < 64)        the i-th Unix-domain listener
//! usize::MAX                    WAKE, the waker: Handler::woken
//! ```
//!
//! Everything is generic over the handler: no allocation and no dynamic dispatch per event.

use std::io::{self, Read};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::stream::{Peer, Stream};
use mio::net::{TcpListener, UnixListener};
use mio::{Events, Interest, Poll, Registry, Token};
use slab::Slab;

/// The token of the loop's waker: create it with `mio::Waker::new(poll.registry(), WAKE)`
/// before [`EventLoop::new`]; its wakes reach [`Handler::woken`].
pub const WAKE: Token = Token(usize::MAX);
/// Tokens from here on (below the listeners) are the handler's own sources.
const SOURCE_BASE: usize = 1 << 48;
/// Tokens from here on are TCP listeners.
const LISTENER_BASE: usize = usize::MAX - 129;
/// Tokens from here on are Unix-domain listeners.
const UNIX_BASE: usize = LISTENER_BASE + 64;

/// The token under which a handler registers its own source number `n` (an io_uring eventfd,
/// an outgoing socket, ...); its readiness reaches [`Handler::source`] as `n`.
pub fn source(n: usize) -> Token {
    Token(SOURCE_BASE + n)
}

/// One connection: its socket and the handler's state for it.
pub struct Conn<C> {
    /// The socket.
    pub stream: Stream,
    /// The handler's state.
    pub state: C,
    /// The socket is registered for writability too.
    writable: bool,
    /// A readiness event said the peer closed its side (EPOLLRDHUP or EPOLLHUP): a short
    /// read no longer means the socket is drained, as the end of stream that came with
    /// the last bytes raises no further event.
    peer_closed: bool,
}

/// One listener of a new set ([`Ctx::relisten`]).
#[derive(Debug)]
pub enum Listen {
    /// The current listener at this index, kept open.
    Keep(usize),
    /// A new listener.
    New(TcpListener),
}

/// What the loop does after a round of events ([`Handler::after_events`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Poll again, waking at this deadline at the latest (`None`: only for events).
    Wait(Option<Instant>),
    /// Return from [`EventLoop::run`].
    Stop,
}

/// What one read of a connection saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Bytes read.
    pub got: usize,
    /// The peer closed its side, or the socket failed.
    pub eof: bool,
    /// The socket was empty when the read stopped (the last read returned less than asked,
    /// or `WouldBlock`): reading again before the next readiness event would find nothing.
    pub drained: bool,
}

/// The loop as a handler sees it: the connections, the registry and the read buffer shared
/// by the connections.
pub struct Ctx<'a, C> {
    conns: &'a mut Slab<Conn<C>>,
    registry: &'a Registry,
    scratch: &'a mut Vec<u8>,
    listeners: &'a mut Vec<TcpListener>,
    unix: &'a [UnixListener],
}

/// A protocol on the loop. Every method runs on the loop's thread; `cx` gives access to the
/// connections. The contract:
///
/// - [`accept`](Handler::accept) is called for each accepted socket, already registered
///   with [`INTEREST`](Handler::INTEREST) under `key`; returning `None` refuses it (the loop
///   deregisters and drops the socket; the handler may write a last word to it first).
/// - [`ready`](Handler::ready) is called for every readiness event of a connection (mio is
///   edge-triggered: the handler must read until drained, or keep the connection on a list
///   of its own to come back to, and write until the socket is full or nothing is pending).
///   The handler reads with [`Ctx::read_via_scratch`] or [`Ctx::read_in_place`], writes with
///   [`write_some`] on [`Conn::stream`], asks for writability with [`Ctx::watch_writable`]
///   while output waits, and closes with [`Ctx::close`], which hands the state back for the
///   handler's own bookkeeping. A key may be reused once its connection is closed.
/// - [`source`](Handler::source) gets the readiness of what the handler registered under
///   [`source`]`(n)`, [`woken`](Handler::woken) the wakes of the [`WAKE`] waker.
/// - [`after_events`](Handler::after_events) runs after each round of events (and after a
///   timeout, and once right at the start): timers, deferred work; it returns the next
///   deadline or [`Next::Stop`].
pub trait Handler {
    /// The state of one connection.
    type Conn;
    /// The interest a connection is registered with at accept (`READABLE`, or
    /// `READABLE | WRITABLE` for a handler that never changes it).
    const INTEREST: Interest = Interest::READABLE;
    /// Bytes of the read buffer the loop shares among connections (0 when the handler only
    /// reads in place).
    const SCRATCH: usize = 0;

    /// A new connection from `peer` under `key`; `None` refuses it.
    fn accept(&mut self, key: usize, stream: &mut Stream, peer: Peer) -> Option<Self::Conn>;

    /// Accepting failed with something other than `WouldBlock` (out of descriptors, ...);
    /// the loop stops accepting until the listener's next event.
    fn accept_failed(&mut self, error: io::Error);

    /// A readiness event on connection `key`.
    fn ready(&mut self, cx: &mut Ctx<'_, Self::Conn>, key: usize);

    /// A readiness event on the handler's source `n`.
    fn source(&mut self, cx: &mut Ctx<'_, Self::Conn>, n: usize) {
        let _ = (cx, n);
    }

    /// Poll returned: a round of events starts (called once per round, before its events;
    /// Redis's afterSleep).
    fn polled(&mut self) {}

    /// The waker was woken.
    fn woken(&mut self, cx: &mut Ctx<'_, Self::Conn>) {
        let _ = cx;
    }

    /// Runs after every round of events; returns when to wake at the latest, or to stop.
    fn after_events(&mut self, cx: &mut Ctx<'_, Self::Conn>) -> Next {
        let _ = cx;
        Next::Wait(None)
    }
}

/// Registers listeners under their tokens from `base` (at most 64).
fn register_listeners<L: mio::event::Source>(
    registry: &Registry,
    listeners: &mut [L],
    base: usize,
) -> io::Result<()> {
    assert!(listeners.len() <= 64, "at most 64 listeners");
    for (i, l) in listeners.iter_mut().enumerate() {
        registry.register(l, Token(base + i), Interest::READABLE)?;
    }
    Ok(())
}

/// A poll, its listeners, the connections and the handler.
pub struct EventLoop<H: Handler> {
    poll: Poll,
    listeners: Vec<TcpListener>,
    unix: Vec<UnixListener>,
    conns: Slab<Conn<H::Conn>>,
    scratch: Vec<u8>,
    busy_poll: Duration,
    /// The protocol.
    pub handler: H,
}

impl<H: Handler> EventLoop<H> {
    /// A loop on `poll` (where the handler may have registered its sources and the waker)
    /// accepting on `listeners` (at most 64). With a non-zero `busy_poll` it keeps polling
    /// without sleeping for that long after the last event.
    pub fn new(
        poll: Poll,
        mut listeners: Vec<TcpListener>,
        handler: H,
        busy_poll: Duration,
    ) -> io::Result<EventLoop<H>> {
        register_listeners(poll.registry(), &mut listeners, LISTENER_BASE)?;
        Ok(EventLoop {
            poll,
            listeners,
            unix: Vec::new(),
            conns: Slab::new(),
            scratch: vec![0; H::SCRATCH],
            busy_poll,
            handler,
        })
    }

    /// Accepts on Unix-domain `listeners` (at most 64) too; their clients reach
    /// [`Handler::accept`] with [`Peer::Unix`] and the listener's index here.
    pub fn with_unix(mut self, mut listeners: Vec<UnixListener>) -> io::Result<EventLoop<H>> {
        register_listeners(self.poll.registry(), &mut listeners, UNIX_BASE)?;
        self.unix = listeners;
        Ok(self)
    }

    /// Runs until the handler says [`Next::Stop`] or polling fails.
    pub fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        // The first poll does not wait: `after_events` runs once at the start, so a
        // handler's timers start with the loop rather than with the first event.
        let mut deadline = Some(Instant::now());
        let mut last_event = Instant::now();
        loop {
            let mut timeout =
                deadline.map(|d: Instant| d.saturating_duration_since(Instant::now()));
            if last_event.elapsed() < self.busy_poll {
                // Traffic was seen recently: poll instead of sleeping.
                timeout = Some(Duration::ZERO);
            }
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            self.handler.polled();
            if !events.is_empty() {
                last_event = Instant::now();
            }
            for ev in &events {
                self.dispatch(ev.token(), ev.is_read_closed());
            }
            let mut cx = Ctx {
                conns: &mut self.conns,
                registry: self.poll.registry(),
                scratch: &mut self.scratch,
                listeners: &mut self.listeners,
                unix: &self.unix,
            };
            match self.handler.after_events(&mut cx) {
                Next::Wait(d) => deadline = d,
                Next::Stop => return Ok(()),
            }
        }
    }

    fn dispatch(&mut self, token: Token, read_closed: bool) {
        let Token(t) = token;
        if t >= LISTENER_BASE && token != WAKE {
            self.accept(t);
            return;
        }
        let mut cx = Ctx {
            conns: &mut self.conns,
            registry: self.poll.registry(),
            scratch: &mut self.scratch,
            listeners: &mut self.listeners,
            unix: &self.unix,
        };
        match t {
            _ if token == WAKE => self.handler.woken(&mut cx),
            t if t >= SOURCE_BASE => self.handler.source(&mut cx, t - SOURCE_BASE),
            key => {
                if read_closed {
                    if let Some(conn) = cx.conns.get_mut(key) {
                        conn.peer_closed = true;
                    }
                }
                self.handler.ready(&mut cx, key)
            }
        }
    }

    /// Accepts on the listener of `token` (at or past [`LISTENER_BASE`]).
    fn accept(&mut self, token: usize) {
        let handler = &mut self.handler;
        let accepted = accept_on(
            &self.listeners,
            &self.unix,
            token,
            &mut self.conns,
            self.poll.registry(),
            H::INTEREST,
            &mut |key, stream, peer| handler.accept(key, stream, peer),
        );
        if let Err(e) = accepted {
            self.handler.accept_failed(e);
        }
    }
}

/// What admits an accepted socket: its state, or `None` to refuse it.
type Admit<'a, C> = dyn FnMut(usize, &mut Stream, Peer) -> Option<C> + 'a;

/// [`accept_all`] on the TCP or Unix listener that `token` names.
fn accept_on<C>(
    tcp: &[TcpListener],
    unix: &[UnixListener],
    token: usize,
    conns: &mut Slab<Conn<C>>,
    registry: &Registry,
    interest: Interest,
    admit: &mut Admit<'_, C>,
) -> io::Result<()> {
    if token >= UNIX_BASE {
        let i = token - UNIX_BASE;
        let next = || {
            unix[i]
                .accept()
                .map(|(s, _)| (Stream::Unix(s), Peer::Unix(i)))
        };
        accept_all(next, conns, registry, interest, admit)
    } else {
        let listener = &tcp[token - LISTENER_BASE];
        let next = || {
            let (s, peer) = listener.accept()?;
            let _ = s.set_nodelay(true);
            Ok((Stream::Tcp(s), Peer::Tcp(peer)))
        };
        accept_all(next, conns, registry, interest, admit)
    }
}

/// Accepts with `next` until `WouldBlock`: each socket (TCP ones with TCP_NODELAY set) is
/// registered with `interest` under its slab key, then `admit` gives its state or refuses
/// it (as [`Handler::accept`]). An error is an accept failure other than `WouldBlock`.
fn accept_all<C>(
    mut next: impl FnMut() -> io::Result<(Stream, Peer)>,
    conns: &mut Slab<Conn<C>>,
    registry: &Registry,
    interest: Interest,
    admit: &mut Admit<'_, C>,
) -> io::Result<()> {
    loop {
        let (mut stream, peer) = match next() {
            Ok(pair) => pair,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let entry = conns.vacant_entry();
        let key = entry.key();
        if registry
            .register(&mut stream, Token(key), interest)
            .is_err()
        {
            continue;
        }
        match admit(key, &mut stream, peer) {
            Some(state) => {
                entry.insert(Conn {
                    stream,
                    state,
                    writable: interest.is_writable(),
                    peer_closed: false,
                });
            }
            None => {
                let _ = registry.deregister(&mut stream);
            }
        }
    }
}

impl<C> Ctx<'_, C> {
    /// Connection `key`, if open.
    pub fn conn(&mut self, key: usize) -> Option<&mut Conn<C>> {
        self.conns.get_mut(key)
    }

    /// Every open connection with its key.
    pub fn conns(&mut self) -> impl Iterator<Item = (usize, &mut Conn<C>)> {
        self.conns.iter_mut()
    }

    /// Accepts the connections waiting on every listener now, for a handler that serves
    /// its connections from inside a long call (a busy script) rather than from the loop:
    /// as the loop accepts, registered with `interest`, `admit` taking the place of
    /// [`Handler::accept`]. An error is an accept failure other than `WouldBlock`.
    pub fn accept_pending(
        &mut self,
        interest: Interest,
        mut admit: impl FnMut(usize, &mut Stream, Peer) -> Option<C>,
    ) -> io::Result<()> {
        let tokens = (LISTENER_BASE..LISTENER_BASE + self.listeners.len())
            .chain(UNIX_BASE..UNIX_BASE + self.unix.len());
        for token in tokens {
            let (conns, registry) = (&mut *self.conns, self.registry);
            accept_on(
                self.listeners,
                self.unix,
                token,
                conns,
                registry,
                interest,
                &mut admit,
            )?;
        }
        Ok(())
    }

    /// The registry, for the handler's own sources.
    pub fn registry(&self) -> &Registry {
        self.registry
    }

    /// The addresses the loop listens on, in order.
    pub fn listening(&self) -> Vec<SocketAddr> {
        self.listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// Listens as `plan` says from now on (CONFIG SET port or bind): each entry keeps one
    /// of the current listeners (by its index in [`Ctx::listening`]) or adds a new one;
    /// the current ones not kept are closed. Open connections stay.
    pub fn relisten(&mut self, plan: Vec<Listen>) -> io::Result<()> {
        let mut current: Vec<Option<TcpListener>> = std::mem::take(self.listeners)
            .into_iter()
            .map(Some)
            .collect();
        for old in current.iter_mut().flatten() {
            self.registry.deregister(old)?;
        }
        let mut listeners: Vec<TcpListener> = plan
            .into_iter()
            .filter_map(|entry| match entry {
                Listen::Keep(i) => current.get_mut(i).and_then(Option::take),
                Listen::New(l) => Some(l),
            })
            .collect();
        register_listeners(self.registry, &mut listeners, LISTENER_BASE)?;
        *self.listeners = listeners;
        Ok(())
    }

    /// The read buffer shared by the loop's connections ([`Handler::SCRATCH`] bytes), for
    /// the handler's own reads.
    pub fn scratch(&mut self) -> &mut [u8] {
        self.scratch
    }

    /// Closes connection `key` (deregisters and drops its socket) and returns its state;
    /// `None` when it was not open.
    pub fn close(&mut self, key: usize) -> Option<C> {
        if !self.conns.contains(key) {
            return None;
        }
        let mut conn = self.conns.remove(key);
        let _ = self.registry.deregister(&mut conn.stream);
        Some(conn.state)
    }

    /// Registers connection `key` for writability too (`want`), or for readability only.
    /// Changes the registration only when it differs; an error means the connection
    /// should be closed.
    pub fn watch_writable(&mut self, key: usize, want: bool) -> io::Result<()> {
        let Some(conn) = self.conns.get_mut(key) else {
            return Ok(());
        };
        if conn.writable == want {
            return Ok(());
        }
        let interest = if want {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        self.registry
            .reregister(&mut conn.stream, Token(key), interest)?;
        conn.writable = want;
        Ok(())
    }

    /// Reads connection `key` until the socket is drained, through the shared read buffer:
    /// each read's bytes go to `take` (which appends them to the connection's input). A
    /// read that fills less than the buffer ends it (the socket is empty then; new bytes
    /// raise a new event), which saves the read that would only return `WouldBlock`; once
    /// the peer closed its side, reads go on until they see the end of stream.
    pub fn read_via_scratch(
        &mut self,
        key: usize,
        mut take: impl FnMut(&mut C, &[u8]),
    ) -> ReadOutcome {
        let mut out = ReadOutcome::default();
        let Some(conn) = self.conns.get_mut(key) else {
            out.eof = true;
            return out;
        };
        loop {
            match conn.stream.read(self.scratch) {
                Ok(0) => {
                    out.eof = true;
                    out.drained = true;
                    return out;
                }
                Ok(n) => {
                    out.got += n;
                    take(&mut conn.state, &self.scratch[..n]);
                    if n < self.scratch.len() && !conn.peer_closed {
                        out.drained = true;
                        return out;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    out.drained = true;
                    return out;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    out.eof = true;
                    out.drained = true;
                    return out;
                }
            }
        }
    }

    /// Reads connection `key` straight into the spare capacity of its input buffer
    /// (`input` picks it from the state), reserving `chunk` bytes before each read (no copy,
    /// no zeroing). Stops when the socket is drained or when `input` holds `enough` bytes
    /// more than `consumed(state)` (requests not yet run), so that they run before more
    /// is read; a read that starts below `enough` takes no more than reaches it (or
    /// `chunk`, if more).
    pub fn read_in_place(
        &mut self,
        key: usize,
        chunk: usize,
        enough: usize,
        mut input: impl FnMut(&mut C) -> (&mut Vec<u8>, usize),
    ) -> ReadOutcome {
        let mut out = ReadOutcome::default();
        let Some(conn) = self.conns.get_mut(key) else {
            out.eof = true;
            return out;
        };
        let fd = conn.stream.as_raw_fd();
        loop {
            let (buf, consumed) = input(&mut conn.state);
            buf.reserve(chunk);
            // A buffer grown by earlier reads may have room for far more than `enough`:
            // a read that starts below it takes no more than reaches it, so one read cannot
            // take a whole socket receive buffer (megabytes on loopback) past the limit.
            // Past it (a request longer than `enough` still arriving), reads take all the
            // room there is, as many bytes per call as the buffer holds.
            let pending = buf.len() - consumed;
            let room = if pending < enough {
                (enough - pending).max(chunk)
            } else {
                usize::MAX
            };
            let spare = buf.spare_capacity_mut();
            let want = spare.len().min(room);
            // SAFETY: `spare` is writable memory owned by `buf` of `want` bytes; read(2)
            // initializes the first `n` of them, and only those become part of the vector.
            let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), want) };
            if n > 0 {
                let n = n as usize;
                // SAFETY: the kernel wrote `n <= want` bytes past the old length.
                unsafe { buf.set_len(buf.len() + n) };
                out.got += n;
                let short = n < want && !conn.peer_closed;
                if short || buf.len() - consumed >= enough {
                    out.drained = short;
                    return out;
                }
            } else if n == 0 {
                out.eof = true;
                out.drained = true;
                return out;
            } else {
                match io::Error::last_os_error().kind() {
                    io::ErrorKind::WouldBlock => {
                        out.drained = true;
                        return out;
                    }
                    io::ErrorKind::Interrupted => {}
                    _ => {
                        out.eof = true;
                        out.drained = true;
                        return out;
                    }
                }
            }
        }
    }
}

/// One write of `bytes` (retried on `EINTR`): `Ok(Some(n))` wrote `n` bytes (0 for empty
/// `bytes`), `Ok(None)` the socket buffer is full; an error (a write of 0 bytes counts as
/// one) means the connection is broken.
pub fn write_some(stream: &mut impl AsRawFd, bytes: &[u8]) -> io::Result<Option<usize>> {
    send_some(stream, bytes, false)
}

/// As [`write_some`]; `more` sends with MSG_MORE (more bytes follow at once, so the kernel
/// may hold these for a fuller segment).
pub fn send_some(stream: &mut impl AsRawFd, bytes: &[u8], more: bool) -> io::Result<Option<usize>> {
    if bytes.is_empty() {
        return Ok(Some(0));
    }
    let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
    loop {
        // SAFETY: send from a readable buffer of bytes.len() bytes on an open socket.
        let n = unsafe {
            libc::send(
                stream.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                flags,
            )
        };
        if n > 0 {
            return Ok(Some(n as usize));
        }
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => return Ok(None),
            io::ErrorKind::Interrupted => {}
            _ => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    /// Stop reading while this many echoed bytes wait to be written.
    const PAUSE: usize = 256 << 10;

    #[derive(Default)]
    struct Echo {
        input: Vec<u8>,
        sent: usize,
        eof: bool,
    }

    /// A trivial protocol: every byte read is written back.
    struct EchoHandler {
        stop: Arc<AtomicBool>,
        open: Arc<AtomicUsize>,
        most_pending: Arc<AtomicUsize>,
        refuse: bool,
    }

    impl EchoHandler {
        fn pump(&mut self, cx: &mut Ctx<'_, Echo>, key: usize) {
            loop {
                let Some(conn) = cx.conn(key) else { return };
                let e = &mut conn.state;
                let mut drained = true;
                if !e.eof && e.input.len() - e.sent < PAUSE {
                    let read = cx
                        .read_in_place(key, 16 << 10, PAUSE, |e: &mut Echo| (&mut e.input, e.sent));
                    drained = read.drained;
                    cx.conn(key).expect("open").state.eof |= read.eof;
                }
                let conn = cx.conn(key).expect("open");
                let e = &mut conn.state;
                self.most_pending
                    .fetch_max(e.input.len() - e.sent, Ordering::Relaxed);
                let mut full = false;
                while e.sent < e.input.len() {
                    match write_some(&mut conn.stream, &e.input[e.sent..]) {
                        Ok(Some(n)) => e.sent += n,
                        Ok(None) => {
                            full = true;
                            break;
                        }
                        Err(_) => {
                            self.close(cx, key);
                            return;
                        }
                    }
                }
                if e.sent == e.input.len() {
                    e.input.clear();
                    e.sent = 0;
                    if e.eof {
                        self.close(cx, key);
                        return;
                    }
                }
                if cx.watch_writable(key, full).is_err() {
                    self.close(cx, key);
                    return;
                }
                // The socket is full (a writable event goes on) or empty (a readable one).
                if full || drained {
                    return;
                }
            }
        }

        fn close(&mut self, cx: &mut Ctx<'_, Echo>, key: usize) {
            if cx.close(key).is_some() {
                self.open.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    impl Handler for EchoHandler {
        type Conn = Echo;

        fn accept(&mut self, _: usize, stream: &mut Stream, peer: Peer) -> Option<Echo> {
            // The peer says which kind of listener took it.
            assert_eq!(matches!(peer, Peer::Unix(0)), stream.tcp().is_none());
            if self.refuse {
                let _ = stream.write_all(b"busy\n");
                return None;
            }
            self.open.fetch_add(1, Ordering::Relaxed);
            Some(Echo::default())
        }

        fn accept_failed(&mut self, error: io::Error) {
            panic!("accept failed: {error}");
        }

        fn ready(&mut self, cx: &mut Ctx<'_, Echo>, key: usize) {
            self.pump(cx, key);
        }

        fn after_events(&mut self, _: &mut Ctx<'_, Echo>) -> Next {
            if self.stop.load(Ordering::Relaxed) {
                Next::Stop
            } else {
                Next::Wait(None)
            }
        }
    }

    struct Running {
        addr: SocketAddr,
        unix: std::path::PathBuf,
        stop: Arc<AtomicBool>,
        waker: Arc<mio::Waker>,
        open: Arc<AtomicUsize>,
        most_pending: Arc<AtomicUsize>,
        thread: Mutex<Option<std::thread::JoinHandle<io::Result<()>>>>,
    }

    impl Running {
        fn start(refuse: bool, busy_poll: Duration) -> Running {
            let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let addr = listener.local_addr().unwrap();
            let poll = Poll::new().unwrap();
            let waker = Arc::new(mio::Waker::new(poll.registry(), WAKE).unwrap());
            let stop = Arc::new(AtomicBool::new(false));
            let open = Arc::new(AtomicUsize::new(0));
            let most_pending = Arc::new(AtomicUsize::new(0));
            let handler = EchoHandler {
                stop: Arc::clone(&stop),
                open: Arc::clone(&open),
                most_pending: Arc::clone(&most_pending),
                refuse,
            };
            let unix = std::env::temp_dir().join(format!(
                "evloop-{}-{}.sock",
                std::process::id(),
                addr.port()
            ));
            let unix_listener = crate::listener::bind_unix(&unix, 0, 16).unwrap();
            let mut lp = EventLoop::new(poll, vec![listener], handler, busy_poll)
                .unwrap()
                .with_unix(vec![UnixListener::from_std(unix_listener)])
                .unwrap();
            let thread = std::thread::spawn(move || lp.run());
            Running {
                addr,
                unix,
                stop,
                waker,
                open,
                most_pending,
                thread: Mutex::new(Some(thread)),
            }
        }

        fn wait_open(&self, n: usize) {
            for _ in 0..500 {
                if self.open.load(Ordering::Relaxed) == n {
                    return;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            panic!(
                "{n} connections expected, {} open",
                self.open.load(Ordering::Relaxed)
            );
        }

        fn stop(&self) {
            self.stop.store(true, Ordering::Relaxed);
            self.waker.wake().unwrap();
            let t = self.thread.lock().unwrap().take().unwrap();
            t.join().unwrap().unwrap();
            let _ = std::fs::remove_file(&self.unix);
        }
    }

    fn client(addr: SocketAddr) -> std::net::TcpStream {
        let c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c
    }

    #[test]
    fn accepts_echoes_and_closes() {
        let lp = Running::start(false, Duration::ZERO);
        let mut a = client(lp.addr);
        let mut b = client(lp.addr);
        lp.wait_open(2);
        for (c, msg) in [
            (&mut a, &b"hello"[..]),
            (&mut b, &b"pipelined\r\nrequests"[..]),
        ] {
            c.write_all(msg).unwrap();
            let mut got = vec![0; msg.len()];
            c.read_exact(&mut got).unwrap();
            assert_eq!(got, msg);
        }
        // The peer closing its side closes the connection.
        a.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        a.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
        lp.wait_open(1);
        drop(b);
        lp.wait_open(0);
        lp.stop();
    }

    #[test]
    fn unix_clients_are_served_beside_tcp_ones() {
        let lp = Running::start(false, Duration::ZERO);
        let mut tcp = client(lp.addr);
        let mut unix = std::os::unix::net::UnixStream::connect(&lp.unix).unwrap();
        unix.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        lp.wait_open(2);
        unix.write_all(b"over unix").unwrap();
        let mut got = [0u8; 9];
        unix.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"over unix");
        tcp.write_all(b"tcp").unwrap();
        tcp.read_exact(&mut got[..3]).unwrap();
        drop(unix);
        lp.wait_open(1);
        lp.stop();
    }

    #[test]
    fn bytes_and_end_of_stream_in_one_event_close_the_connection() {
        let lp = Running::start(false, Duration::ZERO);
        // The request and the end of stream arrive together: the short read that takes
        // the bytes must not be taken for a drained socket, or the end is never seen.
        let clients: Vec<_> = (0..200)
            .map(|_| {
                let mut c = client(lp.addr);
                c.write_all(b"last words").unwrap();
                c.shutdown(std::net::Shutdown::Write).unwrap();
                c
            })
            .collect();
        for mut c in clients {
            let mut got = Vec::new();
            c.read_to_end(&mut got).unwrap();
            assert_eq!(got, b"last words");
        }
        lp.wait_open(0);
        lp.stop();
    }

    #[test]
    fn refused_connection_is_dropped() {
        let lp = Running::start(true, Duration::ZERO);
        let mut c = client(lp.addr);
        let mut got = Vec::new();
        c.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"busy\n");
        assert_eq!(lp.open.load(Ordering::Relaxed), 0);
        lp.stop();
    }

    #[test]
    fn a_client_that_does_not_read_pauses_reading() {
        let lp = Running::start(false, Duration::from_micros(50));
        let c = client(lp.addr);
        let total = 32 << 20;
        let mut writer = c.try_clone().unwrap();
        let sender = std::thread::spawn(move || {
            let block = vec![7u8; 64 << 10];
            for _ in 0..total / block.len() {
                writer.write_all(&block).unwrap();
            }
        });
        // Nothing is read for a while: the socket buffers fill and the server stops
        // reading once PAUSE bytes wait, instead of buffering everything.
        std::thread::sleep(Duration::from_millis(300));
        let mut reader = c;
        let mut got = 0;
        let mut buf = vec![0u8; 256 << 10];
        while got < total {
            let n = reader.read(&mut buf).unwrap();
            assert!(n > 0);
            assert!(buf[..n].iter().all(|&b| b == 7));
            got += n;
        }
        sender.join().unwrap();
        assert_eq!(got, total);
        let most = lp.most_pending.load(Ordering::Relaxed);
        assert!(most < total / 4, "{most} bytes were pending at once");
        lp.stop();
    }
}
