//! The HTTP front's event loops: --cores loops, each with its own SO_REUSEPORT listener,
//! client connections, origin connections, tail reader and a waker through which other
//! loops announce progress of fills its clients read.

use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use goblin_evloop::{source, Ctx, EventLoop, Handler, Next};
use goblin_evloop::{Peer, Stream};
use mio::net::TcpListener;
use mio::{Interest, Poll, Waker};
use slab::Slab;

use super::conn::{Conn, Flush, Late, Part};
use super::fill::{Fill, Fills, Phase};
use super::object::META_LEN;
use super::origin::{Fetch, Limits, PlainConn, Progress};
use super::origin_ring::{Op, OriginRing, RingConn};
use super::respond;
use super::serve::{self, Shared};
use super::stats::HttpStats;
use super::tail_stream::Completed;
use crate::config::StoreConfig;
use crate::io::listener::{refuse, reuseport_listener};
use crate::io::tail_reader::{self, ReadDone, TailEngine, TailReader};
use crate::store::Store;
use crate::store::{clock, stats};

/// The handler's source numbers: the tail reader, the origin ring, then one per plain
/// origin connection (`FIRST_ORIGIN + key`).
const TAIL: usize = 0;
const ORIGIN_RING: usize = 1;
const FIRST_ORIGIN: usize = 2;
/// Bytes of the read buffer the loop's client and origin connections share.
const READ_BUFFER: usize = 256 << 10;
/// How often paused origin connections look at the admission backlog again.
const PAUSE_RECHECK: std::time::Duration = std::time::Duration::from_millis(10);
/// How often the loop looks for clients past their header or keep-alive timeout (the
/// timeouts are whole seconds, so they run at most this much late).
const CLIENT_SWEEP: Duration = Duration::from_millis(250);

/// Starts the HTTP loops; returns their counters.
pub fn start(
    store: &Arc<Store>,
    cfg: &StoreConfig,
    engine: TailEngine,
) -> anyhow::Result<Arc<HttpStats>> {
    let http = cfg.http.clone().expect("start is called with --mirror");
    let stats = Arc::new(HttpStats::default());
    let addr = SocketAddr::new(cfg.listen_address, http.port);
    let mut loops = Vec::with_capacity(cfg.cores);
    for _ in 0..cfg.cores {
        let listener = reuseport_listener(addr)
            .map_err(|e| anyhow::anyhow!("binding HTTP port {addr}: {e}"))?;
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), goblin_evloop::WAKE)?);
        loops.push((listener, poll, waker));
    }
    let max_headers = if cfg.ssd_dir.is_some() {
        cfg.ram_head as usize
    } else {
        64 << 10
    };
    let wakers: Vec<Arc<Waker>> = loops.iter().map(|(_, _, w)| Arc::clone(w)).collect();
    let shared = Arc::new(Shared {
        store: Arc::clone(store),
        fills: Fills::new(Arc::clone(store), Arc::clone(&stats), wakers.clone())?,
        stats: Arc::clone(&stats),
        wakers,
        limits: Limits {
            default_ttl: http.default_ttl,
            grace: http.grace,
            max_headers: max_headers.max(META_LEN),
            timeout: http.origin_timeout,
            split_at: cfg.ssd_dir.is_some().then_some(cfg.ram_head as usize),
            max_item: cfg.max_item_size,
        },
        cfg: http,
    });
    for (id, (listener, poll, _)) in loops.into_iter().enumerate() {
        let sh = Arc::clone(&shared);
        std::thread::Builder::new()
            .name(format!("goblin-http-{id}"))
            .spawn(move || {
                if let Err(e) = run(id, sh, poll, listener, engine) {
                    crate::store_log!(Warning, "HTTP loop {id} stopped: {e}");
                }
            })?;
    }
    crate::store_log!(
        Notice,
        "HTTP mirror of {} on {addr}, {} loops",
        shared.cfg.origin_host,
        cfg.cores
    );
    if cfg.ssd_dir.is_none() {
        crate::store_log!(
            Notice,
            "HTTP objects up to {} bytes with their headers are cached (without --ssd-dir each \
             lives whole in the RAM arena: a --block less its header); larger ones are served \
             uncached and counted as too_large",
            store.max_whole_len()
        );
    }
    Ok(stats)
}

/// An origin connection on either transport.
enum Origin {
    Plain(PlainConn),
    Ring(RingConn),
}

impl Origin {
    fn fetch(&mut self) -> &mut Fetch {
        match self {
            Origin::Plain(c) => &mut c.fetch,
            Origin::Ring(c) => &mut c.fetch,
        }
    }

    fn deadline(&self) -> Option<Instant> {
        match self {
            Origin::Plain(c) => c.fetch.deadline,
            Origin::Ring(c) => c.fetch.deadline,
        }
    }
}

/// The loop as the HTTP front's handler sees it.
type Cx<'a> = Ctx<'a, Conn>;

/// The HTTP front on one event loop: the handler of its client connections, and the owner
/// of its origin connections, origin ring and tail reader.
struct Front {
    id: usize,
    sh: Arc<Shared>,
    origins: Slab<Origin>,
    ring: Option<OriginRing>,
    idle: Vec<usize>,
    /// Origin connections not read while the admission backlog is over its limit.
    paused: Vec<usize>,
    reader: Option<TailReader>,
    seq: u32,
    /// Finished tail reads being applied (kept to reuse its allocation).
    done: Vec<ReadDone>,
    started: Vec<Arc<Fill>>,
    fill_conns: HashSet<usize>,
    /// Connections that used up their turn with output left, to flush again after the
    /// others' events.
    yielded: Vec<usize>,
    /// Client connections open on this loop.
    clients: usize,
    /// When clients are next checked against their timeouts.
    next_sweep: Instant,
}

fn run(
    id: usize,
    sh: Arc<Shared>,
    poll: Poll,
    listener: std::net::TcpListener,
    engine: TailEngine,
) -> io::Result<()> {
    let reader = tail_reader::open(&poll, source(TAIL), engine)?;
    let ring = match sh.cfg.uring {
        true => {
            let r = OriginRing::new(1024)?;
            poll.registry().register(
                &mut mio::unix::SourceFd(&r.eventfd()),
                source(ORIGIN_RING),
                Interest::READABLE,
            )?;
            Some(r)
        }
        false => None,
    };
    let f = Front {
        ring,
        id,
        sh,
        origins: Slab::new(),
        idle: Vec::new(),
        paused: Vec::new(),
        reader,
        seq: 0,
        done: Vec::new(),
        started: Vec::new(),
        fill_conns: HashSet::new(),
        yielded: Vec::new(),
        clients: 0,
        next_sweep: Instant::now(),
    };
    let listeners = vec![TcpListener::from_std(listener)];
    EventLoop::new(poll, listeners, f, Duration::ZERO)?.run()
}

impl Handler for Front {
    type Conn = Conn;
    const INTEREST: Interest = Interest::READABLE.add(Interest::WRITABLE);
    const SCRATCH: usize = READ_BUFFER;

    fn accept(&mut self, _key: usize, stream: &mut Stream, peer: Peer) -> Option<Conn> {
        // The HTTP front listens on TCP only.
        let ip = peer.ip()?;
        let open = self
            .sh
            .stats
            .curr_connections
            .fetch_add(1, Ordering::Relaxed);
        if open >= self.sh.cfg.max_connections {
            self.sh
                .stats
                .curr_connections
                .fetch_sub(1, Ordering::Relaxed);
            stats::incr(&self.sh.stats.rejected_connections);
            let mut busy = Vec::with_capacity(256);
            respond::closing_error(&mut busy, 503, clock::unix_now());
            refuse(stream, &busy);
            return None;
        }
        self.clients += 1;
        Some(Conn::new(ip))
    }

    fn accept_failed(&mut self, error: io::Error) {
        crate::store_log!(Warning, "HTTP accept failed: {error}");
    }

    fn ready(&mut self, cx: &mut Cx<'_>, key: usize) {
        let read = cx.read_via_scratch(key, |c, bytes| {
            if c.input.is_empty() {
                // The first bytes of a request: its head must be complete in time.
                c.request_start = Instant::now();
            }
            c.input.extend_from_slice(bytes)
        });
        let Some(conn) = cx.conn(key) else {
            return;
        };
        if read.eof {
            // The client is done sending: answer what it sent, then close.
            conn.state.eof = true;
        }
        self.pump(cx, key);
    }

    fn source(&mut self, cx: &mut Cx<'_>, n: usize) {
        match n {
            TAIL => {
                let mut done = std::mem::take(&mut self.done);
                if let Some(r) = self.reader.as_mut() {
                    r.drain(&mut done);
                }
                for d in done.drain(..) {
                    self.tail_done(cx, d);
                }
                self.done = done;
            }
            ORIGIN_RING => self.ring_event(cx),
            n => self.origin_event(cx, n - FIRST_ORIGIN),
        }
    }

    fn woken(&mut self, cx: &mut Cx<'_>) {
        self.resume_origins(cx);
        self.pump_fill_conns(cx);
    }

    fn after_events(&mut self, cx: &mut Cx<'_>) -> Next {
        self.resume_origins(cx);
        self.expire_origins(cx);
        for key in std::mem::take(&mut self.yielded) {
            self.pump(cx, key);
        }
        let sweep = self.expire_clients(cx);
        let mut deadline = [self.next_deadline(), sweep].into_iter().flatten().min();
        if !self.yielded.is_empty() {
            // Poll without waiting, then give them their next turn.
            deadline = Some(Instant::now());
        }
        if !self.paused.is_empty() {
            // A backlog that drained between the check and the pause sends no wake.
            let recheck = Instant::now() + PAUSE_RECHECK;
            deadline = Some(deadline.map_or(recheck, |d| d.min(recheck)));
        }
        Next::Wait(deadline)
    }
}

impl Front {
    fn loop_bit(&self) -> u64 {
        1 << (self.id % 64)
    }

    /// Runs requests, starts fetches, submits tail reads and writes, until nothing moves.
    fn pump(&mut self, cx: &mut Cx<'_>, key: usize) {
        let bit = self.loop_bit();
        if let Some(conn) = cx.conn(key) {
            conn.state.active = Instant::now();
        }
        loop {
            let Some(conn) = cx.conn(key).map(|c| &mut c.state) else {
                return;
            };
            let before = (conn.input.len(), conn.parts.len());
            serve::process(conn, &self.sh, bit, &mut self.started);
            conn.closing |= conn.eof;
            let progressed = (conn.input.len(), conn.parts.len()) != before;
            self.start_fills(cx);
            self.submit_tails(cx, key);
            let Some(conn) = cx.conn(key) else {
                return;
            };
            let mut sent = 0;
            let flushed = conn.state.flush(&mut conn.stream, &mut sent);
            stats::add(&self.sh.stats.bytes_sent, sent);
            match flushed {
                Flush::Close => {
                    self.close(cx, key);
                    return;
                }
                Flush::Blocked => break,
                Flush::Yield => {
                    if !self.yielded.contains(&key) {
                        self.yielded.push(key);
                    }
                    break;
                }
                Flush::Stored => serve::serve_stored(&mut conn.state, &self.sh),
                // A chunk sent in full makes room for the next read.
                Flush::Idle if !progressed && sent == 0 && !self.submit_tails(cx, key) => break,
                Flush::Idle => {}
            }
        }
        if cx.conn(key).is_some_and(|c| c.state.waits_for_fill()) {
            self.fill_conns.insert(key);
        }
    }

    fn pump_fill_conns(&mut self, cx: &mut Cx<'_>) {
        let keys: Vec<usize> = self.fill_conns.drain().collect();
        for key in keys {
            self.pump(cx, key);
        }
    }

    /// Requests the next chunks of the connection's first tail stream (one streams at a
    /// time, so a connection holds at most its read-ahead); true when it requested any.
    fn submit_tails(&mut self, cx: &mut Cx<'_>, key: usize) -> bool {
        let (Some(reader), Some(conn)) = (self.reader.as_mut(), cx.conn(key)) else {
            return false;
        };
        let chunk = self.sh.store.config().io_chunk as usize;
        let first = conn.state.parts.iter_mut().find_map(|p| match p {
            Part::Tail(t) => Some(t),
            _ => None,
        });
        let Some(t) = first else {
            return false;
        };
        let (tail, before) = (t.tail, self.seq);
        let seq = &mut self.seq;
        t.request(|range| reader.read_range(key, seq, &tail, range, chunk));
        self.seq != before
    }

    fn tail_done(&mut self, cx: &mut Cx<'_>, done: ReadDone) {
        let key = tail_reader::conn_of(done.token);
        let st = &self.sh.store.stats;
        let Some(conn) = cx.conn(key) else {
            return;
        };
        let Some(t) = conn.state.parts.iter_mut().find_map(|p| match p {
            Part::Tail(t) if t.owns(done.token) => Some(t),
            _ => None,
        }) else {
            return;
        };
        let ok = match done.result {
            Ok(buf) => {
                stats::add(&st.ssd_bytes_read, buf.len() as u64);
                match t.complete(done.token, buf) {
                    Completed::Read(whole) => {
                        if let Some(whole) = whole {
                            let tails = &self.sh.store.tails;
                            tails.offer(&t.tail.digest, t.tail.cas, Arc::new(whole), t.hot);
                        }
                        true
                    }
                    Completed::BadHeader => {
                        stats::incr(&st.ssd_check_failures);
                        false
                    }
                }
            }
            Err(e) => {
                crate::store_log!(Warning, "tail read failed, object dropped: {e}");
                stats::incr(&st.ssd_io_errors);
                false
            }
        };
        if !ok {
            // The head is already on its way: the client sees a short body and a close.
            let tail = t.tail;
            self.sh.store.delete(&tail.digest, tail.cas);
            self.close(cx, key);
            return;
        }
        self.pump(cx, key);
    }

    /// Starts the fetches queued by request handling.
    fn start_fills(&mut self, cx: &mut Cx<'_>) {
        while let Some(fill) = self.started.pop() {
            self.fetch(cx, fill, false);
        }
    }

    fn fetch(&mut self, cx: &mut Cx<'_>, fill: Arc<Fill>, fresh: bool) {
        let mut request = Vec::with_capacity(fill.path.len() + fill.forward.len() + 96);
        request.extend_from_slice(b"GET ");
        request.extend_from_slice(&fill.path);
        request.extend_from_slice(b" HTTP/1.1\r\nHost: ");
        request.extend_from_slice(self.sh.cfg.origin_host.as_bytes());
        request.extend_from_slice(b"\r\n");
        request.extend_from_slice(&fill.forward);
        if let Some(r) = &fill.revalidate {
            r.conditional_headers(&mut request);
        }
        request.extend_from_slice(b"\r\n");
        let key = match self.idle.pop().filter(|_| !fresh) {
            Some(key) => key,
            None => match self.connect(cx) {
                Ok(key) => key,
                Err(_) => {
                    self.fail_fill(cx, &fill, 502);
                    return;
                }
            },
        };
        let timeout = self.sh.limits.timeout;
        match &mut self.origins[key] {
            Origin::Plain(c) => {
                let reused = c.connected();
                c.fetch.begin(fill, request, timeout, reused);
                self.origin_event(cx, key);
            }
            Origin::Ring(c) => {
                let reused = c.connected;
                c.fetch.begin(fill, request, timeout, reused);
                self.ring
                    .as_mut()
                    .expect("ring connections exist only with a ring")
                    .start(key, c);
            }
        }
    }

    /// Opens a new origin connection on the configured transport.
    fn connect(&mut self, cx: &mut Cx<'_>) -> io::Result<usize> {
        let addr = self.sh.cfg.origin;
        let entry = self.origins.vacant_entry();
        let key = entry.key();
        if self.ring.is_some() {
            entry.insert(Origin::Ring(RingConn::new(addr)?));
            return Ok(key);
        }
        let mut c = PlainConn::connect(addr)?;
        cx.registry().register(
            &mut c.stream,
            source(FIRST_ORIGIN + key),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        entry.insert(Origin::Plain(c));
        Ok(key)
    }

    /// Applies the origin ring's completions.
    fn ring_event(&mut self, cx: &mut Cx<'_>) {
        let Some(ring) = self.ring.as_mut() else {
            return;
        };
        for (key, op, res) in ring.completions() {
            let Some(Origin::Ring(c)) = self.origins.get_mut(key) else {
                continue;
            };
            if c.doomed {
                self.origins.remove(key);
                continue;
            }
            let ring = self.ring.as_mut().expect("checked above");
            let progress = ring.advance(key, op, res, c, &self.sh.limits);
            if op == Op::Recv && progress == Progress::Pending {
                if self.sh.fills.backlogged() {
                    self.paused.push(key);
                } else {
                    ring.recv(key, c);
                }
            }
            self.settle(cx, key, progress);
        }
    }

    /// Reads on from the origin connections paused by the admission backlog, once it
    /// drained.
    fn resume_origins(&mut self, cx: &mut Cx<'_>) {
        if self.paused.is_empty() || self.sh.fills.backlogged() {
            return;
        }
        for key in std::mem::take(&mut self.paused) {
            match self.origins.get_mut(key) {
                Some(Origin::Ring(c)) if !c.doomed && c.fetch.fill().is_some() => {
                    c.fetch.deadline = Some(Instant::now() + self.sh.limits.timeout);
                    if let Some(ring) = self.ring.as_mut() {
                        ring.recv(key, c);
                    }
                }
                Some(Origin::Plain(c)) if c.fetch.fill().is_some() => {
                    c.fetch.deadline = Some(Instant::now() + self.sh.limits.timeout);
                    self.origin_event(cx, key);
                }
                _ => {}
            }
        }
    }

    /// A readiness event on a plain origin connection.
    fn origin_event(&mut self, cx: &mut Cx<'_>, key: usize) {
        let Some(Origin::Plain(oc)) = self.origins.get_mut(key) else {
            return;
        };
        if oc.fetch.fill().is_none() {
            if !oc.idle_alive(cx.scratch()) {
                self.idle.retain(|&k| k != key);
                self.drop_origin(cx, key);
            }
            return;
        }
        if self.sh.fills.backlogged() {
            // Read on when the admission backlog drains (edge-triggered: resume drives it).
            if !self.paused.contains(&key) {
                self.paused.push(key);
            }
            return;
        }
        let progress = oc.drive(cx.scratch(), &self.sh.limits);
        self.settle(cx, key, progress);
    }

    /// Acts on what an origin connection's fetch did.
    fn settle(&mut self, cx: &mut Cx<'_>, key: usize, progress: Progress) {
        let fill = match progress {
            Progress::Pending => self.origins[key].fetch().fill().cloned(),
            Progress::Done { keep_alive } => {
                let fill = self.origins[key].fetch().take_fill();
                if keep_alive {
                    self.idle.push(key);
                } else {
                    self.drop_origin(cx, key);
                }
                if let Some(f) = &fill {
                    self.sh.fills.finish(f);
                }
                fill
            }
            Progress::Failed { before_head, retry } => {
                let fill = self.origins[key].fetch().take_fill();
                self.drop_origin(cx, key);
                let Some(fill) = fill else { return };
                if retry {
                    self.fetch(cx, fill, true);
                    return;
                }
                if before_head {
                    self.fail_fill(cx, &fill, 502);
                } else {
                    self.abort_fill(&fill, 502);
                }
                Some(fill)
            }
        };
        if let Some(f) = fill {
            self.announce(cx, &f);
        }
    }

    /// A fetch failed before a response head: its waiters get `status`.
    fn fail_fill(&mut self, cx: &mut Cx<'_>, fill: &Arc<Fill>, status: u16) {
        {
            let mut st = fill.lock();
            st.phase = Phase::Failed;
            st.error_status = status;
        }
        self.sh.stats.origin_errors.fetch_add(1, Ordering::Relaxed);
        self.sh.fills.finish(fill);
        self.announce(cx, fill);
    }

    /// A fetch failed in its body: its readers that were sent the head are cut off, the
    /// others get `status`; nothing is stored.
    fn abort_fill(&mut self, fill: &Arc<Fill>, status: u16) {
        {
            let mut st = fill.lock();
            st.phase = Phase::Failed;
            st.error_status = status;
        }
        self.sh.stats.fills_aborted.fetch_add(1, Ordering::Relaxed);
        self.sh.fills.finish(fill);
    }

    /// Lets the readers of `fill` on this loop and on the others see its progress.
    fn announce(&mut self, cx: &mut Cx<'_>, fill: &Arc<Fill>) {
        let loops = fill.lock().loops;
        for (i, w) in self.sh.wakers.iter().enumerate() {
            if i != self.id && loops & (1 << (i % 64)) != 0 {
                let _ = w.wake();
            }
        }
        if loops & self.loop_bit() != 0 {
            self.pump_fill_conns(cx);
        }
    }

    fn drop_origin(&mut self, cx: &mut Cx<'_>, key: usize) {
        match self.origins.get_mut(key) {
            Some(Origin::Ring(c)) if c.busy => {
                // The kernel still owns its buffer: free it when the operation completes.
                c.shutdown();
                c.doomed = true;
            }
            Some(Origin::Plain(c)) => {
                let _ = cx.registry().deregister(&mut c.stream);
                self.origins.remove(key);
            }
            Some(Origin::Ring(_)) => {
                self.origins.remove(key);
            }
            None => {}
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.origins.iter().filter_map(|(_, o)| o.deadline()).min()
    }

    /// Fails the fetches whose origin went quiet past --origin-timeout (504 before a head).
    fn expire_origins(&mut self, cx: &mut Cx<'_>) {
        let now = Instant::now();
        let late: Vec<usize> = self
            .origins
            .iter()
            .filter(|(k, o)| o.deadline().is_some_and(|d| d <= now) && !self.paused.contains(k))
            .map(|(k, _)| k)
            .collect();
        for key in late {
            let Some(fill) = self.origins[key].fetch().take_fill() else {
                continue;
            };
            self.drop_origin(cx, key);
            let before_head = fill.lock().phase == Phase::Waiting;
            if before_head {
                self.fail_fill(cx, &fill, 504);
            } else {
                self.abort_fill(&fill, 504);
                self.announce(cx, &fill);
            }
        }
    }

    /// Closes the clients past their timeouts (see [`Conn::late`]): idle ones silently, as
    /// nginx does; one in the middle of a request head with a 408. Returns when to look
    /// again, while the loop has clients.
    fn expire_clients(&mut self, cx: &mut Cx<'_>) -> Option<Instant> {
        if self.clients == 0 {
            return None;
        }
        let now = Instant::now();
        if now < self.next_sweep {
            return Some(self.next_sweep);
        }
        self.next_sweep = now + CLIENT_SWEEP;
        let (header, idle) = (self.sh.cfg.header_timeout, self.sh.cfg.keepalive_timeout);
        let late: Vec<(usize, Late)> = cx
            .conns()
            .filter_map(|(key, c)| c.state.late(now, header, idle).map(|l| (key, l)))
            .collect();
        for (key, late) in late {
            match (late, cx.conn(key)) {
                (Late::Request, Some(conn)) => {
                    stats::incr(&self.sh.stats.header_timeouts);
                    let c = &mut conn.state;
                    let mut out = c.buffer();
                    respond::closing_error(&mut out, 408, clock::unix_now());
                    c.input.clear();
                    c.push_bytes(out);
                    c.closing = true;
                    self.pump(cx, key);
                }
                (Late::Idle, Some(conn)) => {
                    let counter = match conn.state.served {
                        true => &self.sh.stats.idle_timeouts,
                        false => &self.sh.stats.header_timeouts,
                    };
                    stats::incr(counter);
                    self.close(cx, key);
                }
                (_, None) => {}
            }
        }
        Some(self.next_sweep)
    }

    fn close(&mut self, cx: &mut Cx<'_>, key: usize) {
        if cx.close(key).is_some() {
            self.clients -= 1;
            self.fill_conns.remove(&key);
            self.sh
                .stats
                .curr_connections
                .fetch_sub(1, Ordering::Relaxed);
        }
    }
}
