//! The event loop: one mio poll, a slab of connections, reads parsed into commands and
//! replies gathered into one write per readiness event.
//!
//! Each connection owns a read buffer (the parser refers to byte ranges in it) and a write
//! buffer. All complete requests in the read buffer run in order before the replies are
//! written, so a pipeline of N commands costs one read and one write. A reply larger than
//! the socket buffer stays in the write buffer and drains on writable events; while more
//! than [`PAUSE_OUTPUT`] bytes wait, the connection's further requests are not read, so a
//! client that never reads cannot make the server grow without bound.

use crate::client::Client;
use crate::clock::unix_ms;
use crate::commands;
use crate::resp::parse::{Limits, Parsed, RequestParser};
use crate::server::Server;
use crate::{notice, warning};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use std::io::{ErrorKind, Write};
use std::time::{Duration, Instant};

/// Bytes read per read call.
const READ_CHUNK: usize = 16 * 1024;
/// Pending reply bytes past which a connection's requests wait until the client reads.
const PAUSE_OUTPUT: usize = 64 * 1024 * 1024;
/// Requests with at most this many arguments pass them in a stack array.
const STACK_ARGS: usize = 16;
/// Tokens at and above this are listeners.
const LISTENER_BASE: usize = usize::MAX - 64;

/// One client connection.
pub struct Conn {
    stream: TcpStream,
    rbuf: Vec<u8>,
    /// Start of the first request not yet run.
    rpos: usize,
    parser: RequestParser,
    wbuf: Vec<u8>,
    wpos: usize,
    /// Client state.
    pub client: Client,
    writable_interest: bool,
    /// Close once the write buffer is flushed (protocol error, QUIT, CLIENT KILL).
    pub closing: bool,
    /// Since when the output has been over the soft limit.
    soft_limit_since: Option<Instant>,
}

impl Conn {
    /// Bytes of replies not yet written.
    pub fn pending_output(&self) -> usize {
        self.wbuf.len() - self.wpos
    }

    /// Bytes of requests received and not yet run.
    pub fn pending_input(&self) -> usize {
        self.rbuf.len() - self.rpos
    }

    /// Allocated size of the read buffer.
    pub fn input_capacity(&self) -> usize {
        self.rbuf.capacity()
    }

    /// The client and its write buffer, for replies produced outside the connection's own
    /// requests (a blocked client being served).
    pub fn parts(&mut self) -> (&mut Client, &mut Vec<u8>) {
        (&mut self.client, &mut self.wbuf)
    }
}

/// Binds the listeners.
pub fn bind(addresses: &[String], port: u16) -> anyhow::Result<Vec<TcpListener>> {
    let mut listeners = Vec::new();
    for address in addresses {
        let ip: std::net::IpAddr = address
            .trim_start_matches('-')
            .parse()
            .map_err(|_| anyhow::anyhow!("invalid bind address '{address}'"))?;
        let addr = std::net::SocketAddr::new(ip, port);
        listeners.push(TcpListener::bind(addr).map_err(|e| {
            anyhow::anyhow!("Could not create server TCP listening socket {addr}: {e}")
        })?);
    }
    Ok(listeners)
}

/// Runs the loop until SHUTDOWN.
pub fn run(server: &mut Server, mut listeners: Vec<TcpListener>) -> anyhow::Result<()> {
    let mut poll = Poll::new()?;
    for (i, l) in listeners.iter_mut().enumerate() {
        poll.registry()
            .register(l, Token(LISTENER_BASE + i), Interest::READABLE)?;
    }
    let mut events = Events::with_capacity(1024);
    let mut next_cron = Instant::now();
    let busy_poll = Duration::from_micros(server.config.busy_poll_us);
    let mut last_event = Instant::now();
    loop {
        let now = Instant::now();
        let mut timeout = next_cron.saturating_duration_since(now);
        if now.duration_since(last_event) < busy_poll {
            // --busy-poll-us: traffic was seen recently, so poll instead of sleeping.
            timeout = Duration::ZERO;
        }
        if server.blocked_clients > 0 {
            if let Some(deadline) = commands::next_deadline(server) {
                timeout = timeout.min(Duration::from_millis(deadline.saturating_sub(unix_ms())));
            }
        }
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() != ErrorKind::Interrupted {
                return Err(e.into());
            }
        }
        if !events.is_empty() {
            last_event = Instant::now();
        }
        for event in events.iter() {
            let token = event.token().0;
            if token >= LISTENER_BASE {
                accept_all(server, &poll, &listeners[token - LISTENER_BASE]);
            } else {
                service(server, &poll, token);
            }
        }
        if server.blocked_clients > 0 {
            commands::expire_blocked(server, unix_ms());
            serve_woken(server, &poll);
        }
        if Instant::now() >= next_cron {
            cron(server, &poll);
            next_cron =
                Instant::now() + Duration::from_millis(1000 / server.config.hz.max(1) as u64);
        }
        if server.shutdown || server.snapshots().signalled_shutdown() {
            notice!("Goblin is now ready to exit, bye bye...");
            return Ok(());
        }
    }
}

fn accept_all(server: &mut Server, poll: &Poll, listener: &TcpListener) {
    loop {
        let (mut stream, addr) = match listener.accept() {
            Ok(pair) => pair,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                warning!("Accepting client connection: {e}");
                return;
            }
        };
        server.stats.connections_received += 1;
        if server.conns.len() >= server.config.maxclients {
            let _ = stream.write_all(b"-ERR max number of clients reached\r\n");
            server.stats.rejected_connections += 1;
            continue;
        }
        if crate::service::protected::deny(server, &mut stream, addr) {
            continue;
        }
        let _ = stream.set_nodelay(true);
        let fd = {
            use std::os::fd::AsRawFd;
            stream.as_raw_fd()
        };
        let laddr = stream.local_addr().unwrap_or(addr);
        let id = server.next_client_id;
        server.next_client_id += 1;
        let authenticated = server.config.requirepass.is_none();
        let entry = server.conns.vacant_entry();
        let token = entry.key();
        if poll
            .registry()
            .register(&mut stream, Token(token), Interest::READABLE)
            .is_err()
        {
            continue;
        }
        entry.insert(Some(Conn {
            stream,
            rbuf: Vec::new(),
            rpos: 0,
            parser: RequestParser::default(),
            wbuf: Vec::new(),
            wpos: 0,
            client: Client::new(id, fd, addr, laddr, authenticated),
            writable_interest: false,
            closing: false,
            soft_limit_since: None,
        }));
        server.tokens.insert(id, token);
    }
}

/// Reads, runs and writes for one connection, then serves clients its commands woke.
pub fn service(server: &mut Server, poll: &Poll, token: usize) {
    let Some(mut conn) = server.conns.get_mut(token).and_then(Option::take) else {
        return;
    };
    let mut open = flush(server, &mut conn);
    while open && !conn.closing && conn.pending_output() < PAUSE_OUTPUT {
        let ReadOutcome { got, eof, drained } = read_available(server, &mut conn);
        if got == 0 && eof {
            open = false;
            break;
        }
        if conn.pending_input() as u64 > server.config.client_query_buffer_limit {
            warning!(
                "Closing client that reached max query buffer length: id={} addr={} (qbuf={})",
                conn.client.id,
                conn.client.addr,
                conn.pending_input()
            );
            open = false;
            break;
        }
        run_requests(server, &mut conn);
        open = flush(server, &mut conn);
        if got == 0 || eof {
            open &= !eof || conn.pending_output() > 0;
            break;
        }
        if drained {
            // The socket is empty: reading again now would only return WouldBlock.
            break;
        }
    }
    finish(server, poll, token, conn, open);
    serve_woken(server, poll);
}

/// Puts a connection back after work, or closes it.
fn finish(server: &mut Server, poll: &Poll, token: usize, mut conn: Conn, open: bool) {
    let over_limit = output_over_limit(server, &mut conn);
    if !open || over_limit || (conn.closing && conn.pending_output() == 0) {
        close(server, poll, token, conn);
        return;
    }
    let want_write = conn.pending_output() > 0;
    if want_write != conn.writable_interest {
        let interest = if want_write {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        if poll
            .registry()
            .reregister(&mut conn.stream, Token(token), interest)
            .is_err()
        {
            close(server, poll, token, conn);
            return;
        }
        conn.writable_interest = want_write;
    }
    server.conns[token] = Some(conn);
}

fn output_over_limit(server: &Server, conn: &mut Conn) -> bool {
    let limit = server.config.output_limit;
    let pending = conn.pending_output() as u64;
    if limit.hard > 0 && pending > limit.hard {
        warning!(
            "Client id={} addr={} closed for overcoming of output buffer limits.",
            conn.client.id,
            conn.client.addr
        );
        return true;
    }
    if limit.soft > 0 && pending > limit.soft {
        let since = *conn.soft_limit_since.get_or_insert_with(Instant::now);
        if since.elapsed().as_secs() >= limit.soft_seconds {
            warning!(
                "Client id={} addr={} closed for overcoming of output buffer limits.",
                conn.client.id,
                conn.client.addr
            );
            return true;
        }
    } else {
        conn.soft_limit_since = None;
    }
    false
}

fn close(server: &mut Server, poll: &Poll, token: usize, mut conn: Conn) {
    let _ = poll.registry().deregister(&mut conn.stream);
    commands::client_gone(server, &mut conn.client);
    server.tokens.remove(&conn.client.id);
    server.conns.remove(token);
}

/// What one [`read_available`] call saw.
struct ReadOutcome {
    /// Bytes read.
    got: usize,
    /// The peer closed (or the socket failed).
    eof: bool,
    /// The last read returned less than asked: the socket was empty at that moment, so a
    /// further read would only return WouldBlock (new bytes raise a new readiness event).
    drained: bool,
}

/// Reads what the socket has, straight into the read buffer's spare capacity (no zeroing
/// of a chunk per read).
fn read_available(server: &mut Server, conn: &mut Conn) -> ReadOutcome {
    use std::os::fd::AsRawFd;
    let fd = conn.stream.as_raw_fd();
    let mut total = 0;
    server.stats.reads_processed += 1;
    loop {
        conn.rbuf.reserve(READ_CHUNK);
        let spare = conn.rbuf.spare_capacity_mut();
        let want = spare.len();
        // SAFETY: `spare` is writable memory owned by `rbuf` of `want` bytes; read(2)
        // initializes the first `n` of them, and only those become part of the vector.
        let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), want) };
        if n > 0 {
            let n = n as usize;
            // SAFETY: the kernel wrote `n <= want` bytes past the old length.
            unsafe { conn.rbuf.set_len(conn.rbuf.len() + n) };
            total += n;
            server.stats.net_input_bytes += n as u64;
            if n < want || conn.pending_input() >= 4 * READ_CHUNK {
                return ReadOutcome {
                    got: total,
                    eof: false,
                    drained: n < want,
                };
            }
        } else if n == 0 {
            return ReadOutcome {
                got: total,
                eof: true,
                drained: true,
            };
        } else {
            let e = std::io::Error::last_os_error();
            match e.kind() {
                ErrorKind::WouldBlock => {
                    return ReadOutcome {
                        got: total,
                        eof: false,
                        drained: true,
                    }
                }
                ErrorKind::Interrupted => continue,
                _ => {
                    return ReadOutcome {
                        got: total,
                        eof: true,
                        drained: true,
                    }
                }
            }
        }
    }
}

/// Runs every complete request in the read buffer.
fn run_requests(server: &mut Server, conn: &mut Conn) {
    if conn.pending_input() > 0 {
        // Once per read, as Redis updates lastinteraction per read, not per command.
        conn.client.last_interaction = Instant::now();
    }
    loop {
        if conn.client.blocked.is_some() || conn.closing || conn.pending_output() >= PAUSE_OUTPUT {
            break;
        }
        let limits = Limits {
            max_bulk: server.config.proto_max_bulk_len,
            authenticated: conn.client.authenticated,
        };
        match conn.parser.parse(&conn.rbuf, conn.rpos, limits) {
            Ok(Parsed::Incomplete) => break,
            Ok(Parsed::Request { end }) => {
                conn.rpos = end;
                let Conn {
                    rbuf,
                    parser,
                    wbuf,
                    client,
                    ..
                } = conn;
                // Most requests have a few arguments: those borrow a stack array.
                let mut inline_store: [&[u8]; STACK_ARGS] = [&[]; STACK_ARGS];
                let heap_store: Vec<&[u8]>;
                let args: &[&[u8]] = match parser.inline_args() {
                    Some(inline) => {
                        heap_store = inline.iter().map(Vec::as_slice).collect();
                        &heap_store
                    }
                    None if parser.args().len() <= STACK_ARGS => {
                        let ranges = parser.args();
                        for (dst, r) in inline_store.iter_mut().zip(ranges) {
                            *dst = &rbuf[r.clone()];
                        }
                        &inline_store[..ranges.len()]
                    }
                    None => {
                        heap_store = parser.args().iter().map(|r| &rbuf[r.clone()]).collect();
                        &heap_store
                    }
                };
                commands::execute(server, client, wbuf, args);
                if client.close_after_reply {
                    conn.closing = true;
                }
            }
            Err(e) => {
                crate::log::log(
                    crate::config::LogLevel::Verbose,
                    &format!(
                        "Protocol error ({}) from client: id={} addr={}",
                        e.0, conn.client.id, conn.client.addr
                    ),
                );
                conn.wbuf.extend_from_slice(b"-ERR ");
                conn.wbuf.extend_from_slice(e.0.as_bytes());
                conn.wbuf.extend_from_slice(b"\r\n");
                server.stats.count_error("ERR");
                conn.closing = true;
                break;
            }
        }
    }
    // Drop consumed bytes; the parser's ranges for an unfinished request are shifted with them.
    if conn.rpos > 0 && (conn.rpos == conn.rbuf.len() || conn.rpos >= conn.rbuf.len() / 2) {
        let n = conn.rpos;
        conn.rbuf.drain(..n);
        conn.parser.shift(n);
        conn.rpos = 0;
        if conn.rbuf.is_empty() && conn.rbuf.capacity() > 4 * READ_CHUNK {
            conn.rbuf = Vec::new();
        }
    }
}

/// Writes what can be written. Returns false when the connection broke.
fn flush(server: &mut Server, conn: &mut Conn) -> bool {
    if conn.wpos < conn.wbuf.len() {
        server.stats.writes_processed += 1;
    }
    while conn.wpos < conn.wbuf.len() {
        match conn.stream.write(&conn.wbuf[conn.wpos..]) {
            Ok(0) => return false,
            Ok(n) => {
                conn.wpos += n;
                server.stats.net_output_bytes += n as u64;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
    if conn.wpos == conn.wbuf.len() {
        conn.wbuf.clear();
        conn.wpos = 0;
        if conn.wbuf.capacity() > 1024 * 1024 {
            conn.wbuf = Vec::new();
        }
    } else if conn.wpos > 1024 * 1024 && conn.wpos * 2 > conn.wbuf.len() {
        conn.wbuf.drain(..conn.wpos);
        conn.wpos = 0;
    }
    true
}

/// Services the connections that the last command woke (served blocked clients, timed-out
/// waits, CLIENT KILL and CLIENT UNBLOCK targets).
fn serve_woken(server: &mut Server, poll: &Poll) {
    loop {
        commands::serve_ready_keys(server);
        if server.wake.is_empty() {
            return;
        }
        for token in std::mem::take(&mut server.wake) {
            service(server, poll, token);
        }
    }
}

/// Periodic work: active expiry, blocking timeouts, idle clients, statistics.
fn cron(server: &mut Server, poll: &Poll) {
    let now = unix_ms();
    server.stats.sample_ops(now);
    server.keyspace.active_expire(Duration::from_millis(
        25 * 10 / server.config.hz.max(1) as u64,
    ));
    commands::expire_blocked(server, now);
    server.snapshots().cron();
    let idle_limit = server.config.timeout;
    if idle_limit > 0 {
        for (token, conn) in server.conns.iter_mut() {
            if let Some(c) = conn {
                if c.client.blocked.is_none()
                    && c.client.last_interaction.elapsed().as_secs() > idle_limit
                {
                    c.closing = true;
                    server.wake.push(token);
                }
            }
        }
    }
    serve_woken(server, poll);
}
