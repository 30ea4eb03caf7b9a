//! The memcache event loops: each is a [`goblin_evloop::EventLoop`] on its own SO_REUSEPORT
//! listener (and on the Unix-domain socket they all share, with --memcache-socket), with its connections and a tail reader; [`MemcacheLoop`] is the handler that
//! reads requests, runs sessions, submits tail reads and writes replies. A connection stays
//! on the loop that accepted it; the kernel spreads new connections over the listeners.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use goblin_evloop::{source, Ctx, EventLoop, Handler};
use goblin_evloop::{Peer, Stream};
use mio::net::{TcpListener, UnixListener};
use mio::{Interest, Poll};

use super::conn::Conn;
use super::{Segment, TailFetch};
use crate::io::listener::refuse;
use crate::io::tail_reader::{self, ReadDone, TailEngine, TailReader};
use crate::store::stats;
use crate::store::Store;

/// The handler's source number of the tail reader.
const TAIL: usize = 0;
/// Bytes of the read buffer the loop's connections share (allocated once, not per read).
const READ_BUFFER: usize = 64 << 10;

/// The reply of a tail fetch whose tail is at hand: prefix, tail, CRLF.
fn reply_with_tail(f: &mut TailFetch, tail: &[u8]) -> Vec<u8> {
    let mut b = std::mem::take(&mut f.prefix);
    b.reserve(tail.len() + 2);
    b.extend_from_slice(tail);
    b.extend_from_slice(b"\r\n");
    b
}

/// What one memcache event loop accepts on: its own SO_REUSEPORT TCP listener and (every
/// loop sharing it) the Unix-domain listener of --memcache-socket.
pub struct Listeners {
    /// The loop's TCP listener, when the front has a port.
    pub tcp: Option<std::net::TcpListener>,
    /// A handle on the front's Unix-domain listener, when it has one.
    pub unix: Option<std::os::unix::net::UnixListener>,
}

/// Starts one event loop on its own thread.
pub fn spawn(id: usize, store: Arc<Store>, on: Listeners, engine: TailEngine) -> io::Result<()> {
    std::thread::Builder::new()
        .name(format!("goblin-store-{id}"))
        .spawn(move || {
            if let Err(e) = run(store, on, engine) {
                crate::store_log!(Warning, "event loop {id} stopped: {e}");
            }
        })?;
    Ok(())
}

fn run(store: Arc<Store>, on: Listeners, engine: TailEngine) -> io::Result<()> {
    let poll = Poll::new()?;
    let reader = tail_reader::open(&poll, source(TAIL), engine)?;
    let busy_poll = store.config().busy_poll;
    let handler = MemcacheLoop {
        store,
        reader,
        seq: 0,
        done: Vec::new(),
    };
    let tcp = on.tcp.into_iter().map(TcpListener::from_std).collect();
    let unix = on.unix.into_iter().map(UnixListener::from_std).collect();
    EventLoop::new(poll, tcp, handler, busy_poll)?
        .with_unix(unix)?
        .run()
}

/// The memcache protocol on one event loop.
struct MemcacheLoop {
    store: Arc<Store>,
    reader: Option<TailReader>,
    /// Sequence number of the last tail read submitted.
    seq: u32,
    /// Finished tail reads being applied (kept to reuse its allocation).
    done: Vec<ReadDone>,
}

impl Handler for MemcacheLoop {
    type Conn = Conn;
    const INTEREST: Interest = Interest::READABLE.add(Interest::WRITABLE);
    const SCRATCH: usize = READ_BUFFER;

    fn accept(&mut self, _key: usize, stream: &mut Stream, _peer: Peer) -> Option<Conn> {
        let st = &self.store.stats;
        let open = st.curr_connections.fetch_add(1, Ordering::Relaxed);
        if open >= self.store.config().max_connections {
            // As memcached past -c (with its default maxconns_fast).
            st.curr_connections.fetch_sub(1, Ordering::Relaxed);
            stats::incr(&st.rejected_connections);
            refuse(stream, b"ERROR Too many open connections\r\n");
            return None;
        }
        stats::incr(&st.total_connections);
        st.peak_connections.fetch_max(open + 1, Ordering::Relaxed);
        Some(Conn::default())
    }

    fn accept_failed(&mut self, error: io::Error) {
        // Out of descriptors and the like: keep serving existing connections.
        crate::store_log!(Warning, "accept failed: {error}");
    }

    fn ready(&mut self, cx: &mut Ctx<'_, Conn>, key: usize) {
        let read = cx.read_via_scratch(key, |c, bytes| c.session.feed(bytes));
        stats::add(&self.store.stats.bytes_read, read.got as u64);
        if read.eof {
            self.close(cx, key);
            return;
        }
        self.pump(cx, key);
    }

    fn source(&mut self, cx: &mut Ctx<'_, Conn>, n: usize) {
        debug_assert_eq!(n, TAIL);
        let mut done = std::mem::take(&mut self.done);
        if let Some(r) = self.reader.as_mut() {
            r.drain(&mut done);
        }
        for d in done.drain(..) {
            self.complete(cx, d);
        }
        self.done = done;
    }
}

impl MemcacheLoop {
    /// Processes input, submits tail reads and sends output until no progress is made.
    fn pump(&mut self, cx: &mut Ctx<'_, Conn>, key: usize) {
        loop {
            let Some(conn) = cx.conn(key) else {
                return;
            };
            let before = conn.state.session.input_len();
            conn.state.session.process(&self.store);
            self.submit_tails(cx, key);
            let Some(conn) = cx.conn(key) else {
                return;
            };
            let c = &mut conn.state;
            let was_blocked = c.blocked;
            if !c.flush(&mut conn.stream, &self.store) || (c.session.closing && c.drained()) {
                self.close(cx, key);
                return;
            }
            let (blocked, progressed) = (c.blocked, c.session.input_len() < before);
            let stop =
                !progressed || c.session.input_len() == 0 || c.session.closing || !c.drained();
            // Ask for writability only while a reply is stuck in a full socket buffer.
            if blocked != was_blocked && cx.watch_writable(key, blocked).is_err() {
                self.close(cx, key);
                return;
            }
            if stop {
                return;
            }
        }
    }

    fn submit_tails(&mut self, cx: &mut Ctx<'_, Conn>, key: usize) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        let Some(conn) = cx.conn(key) else {
            return;
        };
        let chunk = self.store.config().io_chunk as usize;
        for seg in conn.state.session.out.segs.iter_mut() {
            // Only new fetches: one already submitted waits for its read.
            let Segment::Tail(f) = seg else { continue };
            if f.token.is_some() {
                continue;
            }
            let kept = self.store.tails.get(&f.tail.digest, f.tail.cas);
            match kept.as_deref().and_then(|k| f.tail.verify(k)) {
                Some(tail) => *seg = Segment::Bytes(reply_with_tail(f, tail)),
                None => f.token = Some(reader.read_tail(key, &mut self.seq, &f.tail, chunk)),
            }
        }
    }

    fn complete(&mut self, cx: &mut Ctx<'_, Conn>, done: ReadDone) {
        let key = tail_reader::conn_of(done.token);
        let stats = &self.store.stats;
        let Some(conn) = cx.conn(key) else {
            return;
        };
        let slot = conn
            .state
            .session
            .out
            .segs
            .iter_mut()
            .find(|s| matches!(s, Segment::Tail(f) if f.token == Some(done.token)));
        let Some(seg) = slot else { return };
        let Segment::Tail(f) = seg else { return };
        let mut drop_object = false;
        let bytes = match done.result {
            Ok(buf) => {
                stats::add(&stats.ssd_bytes_read, buf.len() as u64);
                let buf = Arc::new(buf);
                match f.tail.verify(&buf) {
                    Some(tail) => {
                        let b = reply_with_tail(f, tail);
                        let t = f.tail;
                        self.store
                            .tails
                            .offer(&t.digest, t.cas, Arc::clone(&buf), false);
                        b
                    }
                    None => {
                        stats::incr(&stats.ssd_check_failures);
                        drop_object = true;
                        std::mem::take(&mut f.on_fail)
                    }
                }
            }
            Err(e) => {
                crate::store_log!(Warning, "tail read failed, object dropped: {e}");
                stats::incr(&stats.ssd_io_errors);
                drop_object = true;
                std::mem::take(&mut f.on_fail)
            }
        };
        let tail = f.tail;
        *seg = Segment::Bytes(bytes);
        if drop_object {
            // Only the version that was read (same CAS value) is dropped.
            self.store.delete(&tail.digest, tail.cas);
        }
        self.pump(cx, key);
    }

    fn close(&mut self, cx: &mut Ctx<'_, Conn>, key: usize) {
        if cx.close(key).is_some() {
            self.store
                .stats
                .curr_connections
                .fetch_sub(1, Ordering::Relaxed);
        }
    }
}
