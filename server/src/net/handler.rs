//! [`RespLoop`]: the RESP protocol as a [`Handler`] on the shared event loop. A readiness
//! event services its connection (flush, read, run, flush, limits), then the connections
//! that the connection's commands woke; after each round of events the blocking timeouts
//! and the cron run.

use super::conn::{Conn, READ_CHUNK};
use super::limits::{input_over_limit, output_over_limit, PAUSE_OUTPUT};
use super::requests::run_requests;
use crate::clients::Lease;
use crate::clock::unix_ms;
use crate::commands::{self, WhileBlocked};
use crate::keyspace::ExpireEffort;
use crate::server::Server;
use crate::{notice, warning};
use goblin_evloop::{Ctx, Handler, Next};
use goblin_evloop::{Peer, Stream};
use std::io::Write;
use std::time::{Duration, Instant};

/// How often the loop looks whether the start-up load is done.
const LOADING_POLL: Duration = Duration::from_millis(5);

/// The loop's view of the server.
pub struct RespLoop<'s> {
    server: &'s mut Server,
    /// Connections whose replies wait for this iteration's AOF write (and fsync).
    held: Vec<usize>,
    /// Connections left with input in their sockets after one read (edge-triggered: no
    /// event comes for it), serviced again after this round of events.
    unread: Vec<usize>,
    /// Connections with input while a snapshot load holds the clients back, serviced
    /// when it lets them go ([`RespLoop::load_holds_clients`]).
    waiting_load: Vec<usize>,
    /// The running load's [`load_rounds`] when its clients were last served.
    load_rounds: u64,
    next_cron: Instant,
    /// Called once the server serves commands (the start-up load done).
    ready: Option<&'s mut dyn FnMut()>,
}

impl<'s> RespLoop<'s> {
    /// The handler for `server`'s connections; the cron runs at the first round, `ready`
    /// once the start-up load (if any) is done.
    pub fn new(server: &'s mut Server, ready: &'s mut dyn FnMut()) -> Self {
        RespLoop {
            server,
            held: Vec::new(),
            unread: Vec::new(),
            waiting_load: Vec::new(),
            load_rounds: 0,
            next_cron: Instant::now(),
            ready: Some(ready),
        }
    }
}

impl Handler for RespLoop<'_> {
    type Conn = Conn;

    fn accept(&mut self, key: usize, stream: &mut Stream, peer: Peer) -> Option<Conn> {
        admit(self.server, key, stream, peer)
    }

    fn accept_failed(&mut self, error: std::io::Error) {
        accept_failed(error);
    }

    fn ready(&mut self, cx: &mut Ctx<'_, Conn>, key: usize) {
        self.service(cx, key);
        self.serve_woken(cx);
    }

    fn source(&mut self, cx: &mut Ctx<'_, Conn>, n: usize) {
        if n == crate::replication::LINK_SOURCE {
            crate::replication::replica::drive(self.server);
        } else if n == crate::replication::PIPE_SOURCE {
            crate::replication::rdb_pipe::relay(self.server, cx.registry());
        } else {
            crate::cluster::bus::ready(self.server, cx.registry(), n);
        }
        self.serve_woken(cx);
    }

    fn polled(&mut self) {
        let stats = &mut self.server.stats;
        stats.eventloop.round_started(stats.commands_processed);
    }

    fn after_events(&mut self, cx: &mut Ctx<'_, Conn>) -> Next {
        self.service_unread(cx);
        // What follows is the round's periodic work (Redis's beforeSleep and serverCron),
        // but for the AOF writes, counted apart.
        let started = Instant::now();
        let aof_before = self.server.stats.eventloop.aof_ns;
        let next = self.after_round(cx);
        let stats = &mut self.server.stats;
        let aof = Duration::from_nanos(stats.eventloop.aof_ns.saturating_sub(aof_before));
        stats.eventloop.cron(started.elapsed().saturating_sub(aof));
        stats.eventloop.round_ended(stats.commands_processed);
        next
    }
}

impl RespLoop<'_> {
    /// [`Handler::after_events`] after the connections left with input were serviced:
    /// writes, timeouts, the cron, replication; when to wake next.
    fn after_round(&mut self, cx: &mut Ctx<'_, Conn>) -> Next {
        self.release_held(cx);
        if commands::pause::release(self.server) {
            self.serve_woken(cx);
        }
        super::evict::between_events(self.server);
        crate::memory::eviction_round(self.server);
        self.serve_woken(cx);
        if self.server.loading.is_some() {
            self.poll_loading();
        }
        self.serve_waiting_load(cx);
        if self.server.aof.loading.is_some() {
            // No connection runs a command now: a long script in the AOF serves them all.
            let mut clients = OtherConnections {
                cx,
                running: usize::MAX,
            };
            crate::aof::poll_loading(self.server, Some(&mut clients));
        }
        if !self.server.is_loading() {
            if let Some(ready) = self.ready.take() {
                ready();
            }
        }
        if self.server.clients.blocked() > 0 {
            commands::expire_blocked(self.server, unix_ms());
            self.serve_woken(cx);
        }
        commands::tracking_round(self.server);
        if let Some(plan) = self.server.relisten.take() {
            if let Err(e) = cx.relisten(plan) {
                warning!("Could not switch the listening sockets: {e}");
            }
            self.server.listening = cx.listening();
        }
        if self.server.cluster.is_some() && crate::cluster::bus::cron(self.server, cx.registry()) {
            commands::redirect_blocked_clients(self.server);
            self.serve_woken(cx);
        }
        if Instant::now() >= self.next_cron {
            self.cron(cx);
            let period = Duration::from_millis(1000 / self.server.hz() as u64);
            self.next_cron = Instant::now() + period;
        }
        self.release_held(cx);
        self.replication_round(cx);
        let server = &mut *self.server;
        if crate::service::shutdown::round(server) {
            crate::aof::shutdown(server);
            notice!("Goblin is now ready to exit, bye bye...");
            return Next::Stop;
        }
        let mut deadline = self.next_cron;
        if server.cluster.is_some() {
            let tick = Duration::from_millis(crate::cluster::bus::CRON_MS);
            deadline = deadline.min(Instant::now() + tick);
        }
        if server.loading.is_some() {
            deadline = deadline.min(Instant::now() + LOADING_POLL);
        }
        if server.aof.loading.is_some() {
            // The AOF replay goes on as soon as the events are served.
            deadline = Instant::now();
        }
        if let Some(end) = server.pauses.next_end() {
            let wait = Duration::from_millis(end.saturating_sub(unix_ms()));
            deadline = deadline.min(Instant::now() + wait);
        }
        if crate::replication::busy(server) {
            deadline = deadline.min(Instant::now() + Duration::from_millis(1));
        }
        if server.memory.eviction_running {
            deadline = Instant::now();
        }
        if !self.unread.is_empty() {
            // Input waits in sockets: poll for the other connections' events, no more.
            deadline = Instant::now();
        }
        if !self.held.is_empty() {
            // Replies waiting for a postponed AOF write.
            deadline = deadline.min(Instant::now() + Duration::from_millis(1));
        }
        if server.clients.blocked() > 0 {
            if let Some(ms) = commands::next_deadline(server) {
                let wait = Duration::from_millis(ms.saturating_sub(unix_ms()));
                deadline = deadline.min(Instant::now() + wait);
            }
        }
        Next::Wait(Some(deadline))
    }
}

impl RespLoop<'_> {
    /// Reads, runs and writes for connection `key` (its client leased from the registry
    /// meanwhile), then puts it back or closes it.
    fn service(&mut self, cx: &mut Ctx<'_, Conn>, key: usize) {
        if self.load_holds_clients() {
            self.waiting_load.push(key);
        } else {
            self.service_now(cx, key);
        }
    }

    /// [`RespLoop::service`] whatever a load holds.
    fn service_now(&mut self, cx: &mut Ctx<'_, Conn>, key: usize) {
        let served = service(self.server, cx, key, true);
        if served.held {
            self.held.push(key);
        }
        if served.unread {
            self.unread.push(key);
        }
    }

    /// Whether a snapshot load (at start-up or from a master) keeps the clients waiting
    /// now. Redis loads on its event loop and serves the other events only each time
    /// another loading-process-events-interval-bytes were read, so a client of a small
    /// load waits for its end where a client of a big one gets -LOADING between steps;
    /// Goblin's load runs on a thread and its clients are served at the same steps (and
    /// after the load, once the loop has taken its result).
    fn load_holds_clients(&self) -> bool {
        let interval = self.server.config.loading_events_interval;
        self.server
            .loading
            .as_ref()
            .is_some_and(|l| load_rounds(l, interval) == self.load_rounds)
    }

    /// Services the connections a load held back once it lets them go: at its end, or
    /// when it has read the next loading-process-events-interval-bytes.
    fn serve_waiting_load(&mut self, cx: &mut Ctx<'_, Conn>) {
        let interval = self.server.config.loading_events_interval;
        let rounds = self
            .server
            .loading
            .as_ref()
            .map(|l| load_rounds(l, interval));
        let lets_go = rounds != Some(self.load_rounds);
        self.load_rounds = rounds.unwrap_or(0);
        if !lets_go || self.waiting_load.is_empty() {
            return;
        }
        let keys = std::mem::take(&mut self.waiting_load);
        self.service_each(cx, keys, Self::service_now);
    }

    /// Services once more each connection that had input left after its last read, so a
    /// client pipelining without pause gets a read per round as every other does.
    fn service_unread(&mut self, cx: &mut Ctx<'_, Conn>) {
        let keys = std::mem::take(&mut self.unread);
        self.service_each(cx, keys, Self::service);
    }

    /// Services each of `keys` once (in order, duplicates dropped) with `serve`, then the
    /// connections their commands woke.
    fn service_each(
        &mut self,
        cx: &mut Ctx<'_, Conn>,
        mut keys: Vec<usize>,
        serve: fn(&mut Self, &mut Ctx<'_, Conn>, usize),
    ) {
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            serve(self, cx, key);
        }
        self.serve_woken(cx);
    }

    /// Writes (and fsyncs, under `appendfsync always`) what this iteration's commands
    /// propagated, then sends the replies that waited for it: one write and one fsync for
    /// every write of the iteration (Redis does it in beforeSleep).
    fn release_held(&mut self, cx: &mut Ctx<'_, Conn>) {
        let started = Instant::now();
        crate::aof::flush(self.server, false);
        self.server.stats.eventloop.aof(started.elapsed());
        if self.server.aof.write_postponed() {
            // everysec with a background fsync of the file running: the replies wait for
            // the write (retried every millisecond, done within 2 s), never sent before it.
            return;
        }
        for key in std::mem::take(&mut self.held) {
            let server = &mut *self.server;
            let Some(lease) = server.clients.lease(key) else {
                continue;
            };
            let Some(c) = cx.conn(key) else {
                server.clients.restore(lease, false);
                continue;
            };
            let open = flush_counted(&mut c.state, &mut c.stream, server, &lease);
            finish(server, cx, key, lease, open);
        }
    }

    /// Replication's share of the iteration (the stream was fed by `release_held`): full
    /// syncs, file transfers, the link to the master, WAIT; then the replicas it wrote to.
    fn replication_round(&mut self, cx: &mut Ctx<'_, Conn>) {
        crate::replication::tick(self.server, cx.registry());
        self.serve_woken(cx);
        if !self.held.is_empty() {
            self.release_held(cx);
        }
    }

    /// Services the connections that the last commands woke (served blocked clients,
    /// timed-out waits, CLIENT KILL and CLIENT UNBLOCK targets, idle clients, subscribers
    /// with published messages).
    fn serve_woken(&mut self, cx: &mut Ctx<'_, Conn>) {
        loop {
            commands::serve_ready_keys(self.server);
            let woken = self.server.clients.take_woken();
            if woken.is_empty() {
                return;
            }
            for key in woken {
                self.service(cx, key);
            }
        }
    }
}

/// A new connection from `peer` under `key`: refused (with Redis's last word) past
/// maxclients or by protected-mode (TCP clients only: the Unix socket is local), else
/// (tcp-keepalive set on a TCP one) its client joins the registry.
fn admit(server: &mut Server, key: usize, stream: &mut Stream, peer: Peer) -> Option<Conn> {
    server.stats.connections_received += 1;
    if server.clients.len() >= server.config.maxclients {
        let _ = stream.write_all(b"-ERR max number of clients reached\r\n");
        server.stats.rejected_connections += 1;
        return None;
    }
    let fd = {
        use std::os::fd::AsRawFd;
        stream.as_raw_fd()
    };
    let (addr, laddr) = match peer {
        Peer::Tcp(peer) => {
            if crate::service::protected::deny(server, stream, peer) {
                return None;
            }
            if server.config.tcp_keepalive > 0 {
                if let Err(e) = crate::net::keepalive::enable(fd, server.config.tcp_keepalive) {
                    warning!("Error configuring client keepalive: {e}");
                }
            }
            let laddr = stream.local_addr().unwrap_or(peer);
            (peer.into(), laddr.into())
        }
        Peer::Unix(_) => {
            let path = crate::clients::ClientAddr::Unix(server.config.unixsocket.as_str().into());
            (path.clone(), path)
        }
    };
    let authenticated = crate::commands::starts_authenticated(server);
    let id = server.clients.admit(key, fd, addr, laddr, authenticated);
    Some(Conn::new(id))
}

/// Logs an accept failure (the loop accepts again at the listener's next event).
fn accept_failed(error: std::io::Error) {
    warning!("Accepting client connection: {error}");
}

/// The other connections, serviced while a script is busy (Redis's
/// processEventsWhileBlocked): each one is read and its requests answered (BUSY, but for
/// the commands allowed then, such as SCRIPT KILL). The connection running the script is
/// not among them: its state is out of the loop's slab while it runs, and its client
/// leased. New connections are accepted first, so they are answered too (an operator's
/// SCRIPT KILL from a new connection, as Redis answers it).
struct OtherConnections<'c, 'x> {
    cx: &'c mut Ctx<'x, Conn>,
    running: usize,
}

impl WhileBlocked for OtherConnections<'_, '_> {
    fn process_events(&mut self, server: &mut Server) {
        let interest = <RespLoop as Handler>::INTEREST;
        if let Err(e) = self.cx.accept_pending(interest, |key, stream, peer| {
            admit(server, key, stream, peer)
        }) {
            accept_failed(e);
        }
        let keys: Vec<usize> = self
            .cx
            .conns()
            .map(|(key, _)| key)
            .filter(|&key| key != self.running)
            .collect();
        for key in keys {
            service(server, self.cx, key, false);
        }
    }
}

/// What servicing a connection left to do.
#[derive(Clone, Copy, Default)]
struct Serviced {
    /// The replies wait for this iteration's AOF write (`appendfsync always`): the caller
    /// sends them after it ([`RespLoop::release_held`]).
    held: bool,
    /// The socket still holds input: the caller services the connection again later.
    unread: bool,
}

/// [`RespLoop::service`] for `server`; `may_block` is false for the connections serviced
/// while another one's script is busy (their commands cannot run long then).
///
/// One read per servicing, as Redis reads once per readable event: a client that keeps
/// its socket full is read again after the other connections' events, never in a loop
/// that starves them.
fn service(server: &mut Server, cx: &mut Ctx<'_, Conn>, key: usize, may_block: bool) -> Serviced {
    let Some(mut lease) = server.clients.lease(key) else {
        return Serviced::default();
    };
    let Some(c) = cx.conn(key) else {
        server.clients.restore(lease, false);
        return Serviced::default();
    };
    let conn = &mut c.state;
    if !lease.out.is_empty() {
        // Replies written for the client while it was not being serviced.
        conn.wbuf.extend_from_slice(&lease.out);
        super::conn::release_output(&mut lease.out);
        lease.client.reply_buffer.note(conn.pending_output());
    }
    if std::mem::take(&mut lease.doomed) {
        // CLIENT KILL, a deleted ACL user: a replica gets no more of the stream.
        crate::replication::master::stop_stream(server, lease.client.id);
        conn.closing = true;
    }
    let mut served = Serviced {
        held: holds(server, may_block),
        unread: false,
    };
    // Output written for it passed its hard limit, or it was evicted: closed without
    // writing more.
    let mut open = !lease.overflowed
        && !lease.client.evicted
        && (served.held || flush_counted(conn, &mut c.stream, server, &lease));
    loop {
        let conn = &cx.conn(key).expect("open").state;
        if !open || conn.closing || conn.pending_output() >= PAUSE_OUTPUT {
            break;
        }
        open = read_and_run(server, cx, key, &mut lease, may_block, &mut served);
        // One read per servicing, but for a connection serviced while a script is busy:
        // no later round comes back to it, so it reads until its socket is empty.
        if may_block || !served.unread {
            break;
        }
    }
    finish(server, cx, key, lease, open);
    served.unread &= open;
    served
}

/// How many times `load` has read another `interval` bytes: Redis serves its clients each
/// time this grows.
fn load_rounds(load: &crate::rdb::loading::Loading, interval: u64) -> u64 {
    load.loaded_bytes() / interval.max(1)
}

/// Whether replies wait for the AOF: only where the caller can send them after it, not for
/// the connections serviced while a script is busy.
fn holds(server: &Server, may_block: bool) -> bool {
    may_block && server.aof.holds_replies(server.propagation.pending())
}

/// One read of connection `key`, its complete requests run and the replies written;
/// whether the connection stays open.
fn read_and_run(
    server: &mut Server,
    cx: &mut Ctx<'_, Conn>,
    key: usize,
    lease: &mut Lease,
    may_block: bool,
    served: &mut Serviced,
) -> bool {
    reserve_for_big_arg(&mut cx.conn(key).expect("open").state);
    let read = cx.read_in_place(key, READ_CHUNK, 4 * READ_CHUNK, |c| (&mut c.rbuf, c.rpos));
    server.stats.reads_processed += 1;
    server.stats.net_input_bytes += read.got as u64;
    if read.got == 0 && read.eof {
        return false;
    }
    let conn = &mut cx.conn(key).expect("open").state;
    conn.note_query_peak();
    if input_over_limit(&server.config, conn, &lease.client) {
        return false;
    }
    if may_block {
        // The connection's state leaves the slab while its commands run, so that a busy
        // script can service the other connections through `cx`.
        let mut state = std::mem::replace(conn, Conn::new(lease.client.id));
        let mut others = OtherConnections { cx, running: key };
        run_requests(server, &mut state, &mut lease.client, Some(&mut others));
        cx.conn(key).expect("open").state = state;
    } else {
        run_requests(server, conn, &mut lease.client, None);
    }
    if lease.client.evicted {
        return false;
    }
    // Replies past the output limits close the connection before any is written, as Redis
    // checks them as replies are added.
    let conn = &mut cx.conn(key).expect("open").state;
    // Room for a big argument as soon as its header is parsed, as Redis makes it.
    reserve_for_big_arg(conn);
    conn.note_query_peak();
    if output_over_limit(server, conn, &lease.client) {
        return false;
    }
    let c = cx.conn(key).expect("open");
    let conn = &mut c.state;
    // What the commands replied, before the write: Redis's reply buffer peak.
    lease.client.reply_buffer.note(conn.pending_output());
    served.held = holds(server, may_block);
    let open = served.held || flush_counted(conn, &mut c.stream, server, lease);
    if read.eof {
        return open && conn.pending_output() > 0;
    }
    // The socket empty, reading again now would only return WouldBlock; else the rest
    // waits for the next round.
    served.unread = read.got > 0 && !read.drained;
    open
}

/// Sizes the read buffer for a long argument being received: its end and one read chunk
/// more, so reads do not double the buffer past it (what a client's query buffer costs
/// stays near what it holds, as with Redis's buffer sized for a big argument).
fn reserve_for_big_arg(conn: &mut Conn) {
    if let Some(end) = conn.parser.big_arg_end(&conn.rbuf) {
        let want = end + READ_CHUNK;
        if conn.rbuf.capacity() < want {
            conn.rbuf.reserve_exact(want - conn.rbuf.len());
        }
    }
}

/// After servicing: the output limits, the writability interest, and either the client
/// back into the registry or the connection closed.
fn finish(server: &mut Server, cx: &mut Ctx<'_, Conn>, key: usize, mut lease: Lease, open: bool) {
    let conn = &mut cx.conn(key).expect("open").state;
    let over_limit = open && output_over_limit(server, conn, &lease.client);
    let done = conn.closing && conn.pending_output() == 0;
    let replica = lease.client.repl_role == crate::clients::ReplRole::Replica;
    let want_write = conn.pending_output() > 0
        || (replica && crate::replication::replica_out::pending(server, lease.client.id));
    lease.buffers = conn.buffers();
    if !open || over_limit || done || cx.watch_writable(key, want_write).is_err() {
        if replica {
            // A diskless sync's child holds the socket too: shut it down for both, so the
            // replica sees its link end now (as Redis's, whose parent relays the payload).
            // SAFETY: the fd is this open connection's; shutdown changes no memory.
            unsafe { libc::shutdown(lease.client.fd, libc::SHUT_RDWR) };
        }
        cx.close(key);
        let mut client = server.clients.remove(lease);
        commands::client_gone(server, &mut client);
        return;
    }
    server.clients.restore(lease, false);
}

/// Checks the output limits of every connection with replies waiting (each one is checked
/// when serviced, but one that neither reads nor sends is not serviced): a limit lowered by
/// CONFIG SET closes a client already over it, as Redis's clientsCron does.
fn close_over_output_limit(server: &mut Server, cx: &mut Ctx<'_, Conn>) {
    let holding = crate::replication::replica_out::holding(server);
    let waiting: Vec<usize> = cx
        .conns()
        .filter(|(_, c)| c.state.pending_output() > 0 || holding.contains(&c.state.id))
        .map(|(key, _)| key)
        .collect();
    for key in waiting {
        if let Some(lease) = server.clients.lease(key) {
            finish(server, cx, key, lease, true);
        }
    }
}

/// Trims the read buffers that waste room (see [`Conn::resize_input`]); the clients whose
/// buffer changed get its new size for CLIENT LIST and the memory figures.
fn resize_query_buffers(server: &mut Server, cx: &mut Ctx<'_, Conn>) {
    let keys: Vec<usize> = cx.conns().map(|(key, _)| key).collect();
    for key in keys {
        let Some(mut lease) = server.clients.lease(key) else {
            continue;
        };
        let idle = lease.client.last_interaction.elapsed().as_secs();
        let conn = &mut cx.conn(key).expect("listed").state;
        if conn.resize_input(idle) {
            lease.buffers = conn.buffers();
        }
        server.clients.restore(lease, false);
    }
}

/// Writes what the socket takes of a connection's output, and of a replica's stream after
/// it; what goes to a replica counts as replication traffic (total_net_repl_output_bytes),
/// as in Redis.
#[inline]
fn flush_counted(conn: &mut Conn, stream: &mut Stream, server: &mut Server, lease: &Lease) -> bool {
    let before = server.stats.net_output_bytes;
    let mut open = conn.flush(stream, &mut server.stats);
    let client = &lease.client;
    if client.repl_role == crate::clients::ReplRole::Replica {
        // The stream follows the replica's own output (the snapshot's last chunks may still
        // wait in the lease), from the shared buffer.
        if open && conn.pending_output() == 0 && lease.out.is_empty() {
            open = crate::replication::replica_out::write(server, client.id, stream);
        }
        server.stats.output_was_replication(before);
    }
    open
}

impl RespLoop<'_> {
    /// Installs the start-up load once its thread is done; a file that did not load ends
    /// the server, as Redis exits on a bad RDB.
    fn poll_loading(&mut self) {
        let server = &mut *self.server;
        if !server.loading.as_ref().is_some_and(|l| l.is_done()) {
            return;
        }
        let from_master = crate::replication::replica::loading_sync(server);
        let load = server.loading.take().expect("checked");
        if from_master {
            crate::replication::replica::finish_load(server, load);
        } else {
            match server.snapshots().finish_loading(load) {
                Ok((repl, expired)) => crate::replication::persist::restore(server, repl, expired),
                Err(_) => std::process::exit(1),
            }
        }
    }

    /// Periodic work: statistics, active expiry and rehashing, blocking timeouts, snapshots,
    /// idle clients (no expiry or snapshot while the start-up load runs).
    fn cron(&mut self, cx: &mut Ctx<'_, Conn>) {
        let server = &mut *self.server;
        let now = unix_ms();
        if server.pause_cron {
            // Blocking timeouts are not the cron's in Redis (beforeSleep handles them).
            commands::expire_blocked(server, now);
            return self.serve_woken(cx);
        }
        server.stats.sample_ops(now);
        if !server.is_loading() {
            // A replica's keys expire by its master's DELs, as in Redis; only those its
            // own clients gave a time to live are its cron's.
            if server.replication.is_replica() {
                server.keyspace.expire_replica_keys();
            } else {
                let cycle = Instant::now();
                let effort = ExpireEffort::of(server.config.active_expire_effort);
                let budget = effort.slow_cycle_budget(server.hz());
                server.keyspace.active_expire(effort, budget);
                crate::latency::sample("expire-cycle", cycle.elapsed());
            }
            if server.config.activerehashing {
                server.keyspace.rehash_step(Duration::from_millis(1));
            }
            server.propagate_removals();
            commands::publish_notifications(server, None);
            server.snapshots().cron();
            crate::memory::cron(server);
            crate::aof::cron(server);
        }
        if let Some(child) = server.child_mut() {
            child.receive_info();
        }
        crate::replication::cron(server, cx.registry());
        crate::scripting::ldb::fork::reap(server);
        let (shrinks, expands) = server.clients.resize_reply_buffers(now);
        server.stats.reply_buffer_shrinks += shrinks;
        server.stats.reply_buffer_expands += expands;
        commands::expire_blocked(server, now);
        close_over_output_limit(server, cx);
        resize_query_buffers(server, cx);
        server.migrate.close_idle();
        let idle_limit = server.config.timeout;
        if idle_limit > 0 {
            // Blocked and subscribed clients are exempt, as in Redis.
            server.clients.kill(|c| {
                c.blocked.is_none()
                    && c.postponed.is_none()
                    && !c.subscriptions.active()
                    && c.last_interaction.elapsed().as_secs() > idle_limit
            });
        }
        self.serve_woken(cx);
    }
}
