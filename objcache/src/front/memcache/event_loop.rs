//! Store event loops: each owns a SO_REUSEPORT listener, a mio poll, its connections and a
//! tail reader. A connection stays on the loop that accepted it; the kernel spreads new
//! connections over the listeners.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use super::conn::Conn;
use super::{Segment, TailFetch};
use crate::io::tail_reader::{self, ReadDone, TailEngine, TailReader};
use crate::store::stats;
use crate::store::Store;

const LISTENER: Token = Token(0);
const TAIL: Token = Token(1);
const FIRST_CONN: usize = 2;

/// The reply of a tail fetch whose tail is at hand: prefix, tail, CRLF.
fn reply_with_tail(f: &mut TailFetch, tail: &[u8]) -> Vec<u8> {
    let mut b = std::mem::take(&mut f.prefix);
    b.reserve(tail.len() + 2);
    b.extend_from_slice(tail);
    b.extend_from_slice(b"\r\n");
    b
}

/// Starts one event loop on its own thread.
pub fn spawn(
    id: usize,
    store: Arc<Store>,
    listener: std::net::TcpListener,
    engine: TailEngine,
) -> io::Result<()> {
    std::thread::Builder::new()
        .name(format!("goblin-store-{id}"))
        .spawn(move || {
            if let Err(e) = run(&store, listener, engine) {
                eprintln!("goblin-store: event loop {id} stopped: {e}");
            }
        })?;
    Ok(())
}

struct Loop<'a> {
    store: &'a Store,
    poll: Poll,
    conns: Slab<Conn>,
    reader: Option<TailReader>,
    seq: u32,
    /// Read buffer shared by the loop's connections (allocated once, not per read).
    scratch: Vec<u8>,
}

fn run(store: &Store, listener: std::net::TcpListener, engine: TailEngine) -> io::Result<()> {
    let poll = Poll::new()?;
    let mut listener = TcpListener::from_std(listener);
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let reader = tail_reader::open(&poll, TAIL, engine)?;
    let mut lp = Loop {
        store,
        poll,
        conns: Slab::new(),
        reader,
        seq: 0,
        scratch: vec![0; 64 << 10],
    };
    let mut events = Events::with_capacity(1024);
    let mut done = Vec::new();
    let busy_poll = store.config().busy_poll;
    let mut last_event = Instant::now();
    loop {
        // --store-busy-poll-us: traffic was seen recently, so poll instead of sleeping.
        let timeout = (last_event.elapsed() < busy_poll).then_some(Duration::ZERO);
        if let Err(e) = lp.poll.poll(&mut events, timeout) {
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if !events.is_empty() {
            last_event = Instant::now();
        }
        for ev in &events {
            match ev.token() {
                LISTENER => lp.accept(&listener)?,
                TAIL => {
                    if let Some(r) = lp.reader.as_mut() {
                        r.drain(&mut done);
                    }
                    for d in done.drain(..) {
                        lp.complete(d);
                    }
                }
                Token(t) => lp.serve(t - FIRST_CONN),
            }
        }
    }
}

impl Loop<'_> {
    fn accept(&mut self, listener: &TcpListener) -> io::Result<()> {
        loop {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    let entry = self.conns.vacant_entry();
                    let token = Token(entry.key() + FIRST_CONN);
                    self.poll.registry().register(
                        &mut stream,
                        token,
                        Interest::READABLE | Interest::WRITABLE,
                    )?;
                    entry.insert(Conn::new(stream));
                    stats::incr(&self.store.stats.curr_connections);
                    stats::incr(&self.store.stats.total_connections);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // Out of descriptors and the like: keep serving existing connections.
                    eprintln!("goblin-store: accept failed: {e}");
                    return Ok(());
                }
            }
        }
    }

    fn serve(&mut self, key: usize) {
        let store = self.store;
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        if !conn.fill(store, &mut self.scratch) {
            self.close(key);
            return;
        }
        self.pump(key);
    }

    /// Processes input, submits tail reads and sends output until no progress is made.
    fn pump(&mut self, key: usize) {
        let store = self.store;
        loop {
            let Some(conn) = self.conns.get_mut(key) else {
                return;
            };
            let before = conn.session.input_len();
            conn.session.process(store);
            self.submit_tails(key);
            let conn = &mut self.conns[key];
            let was_blocked = conn.blocked;
            if !conn.flush(store) || (conn.session.closing && conn.drained()) {
                self.close(key);
                return;
            }
            // Ask for writability only while a reply is stuck in a full socket buffer.
            if conn.blocked != was_blocked {
                let interest = if conn.blocked {
                    Interest::READABLE | Interest::WRITABLE
                } else {
                    Interest::READABLE
                };
                let token = Token(key + FIRST_CONN);
                if self
                    .poll
                    .registry()
                    .reregister(&mut conn.stream, token, interest)
                    .is_err()
                {
                    self.close(key);
                    return;
                }
            }
            let progressed = conn.session.input_len() < before;
            let s = &conn.session;
            if !progressed || s.input_len() == 0 || s.closing || !conn.drained() {
                return;
            }
        }
    }

    fn submit_tails(&mut self, key: usize) {
        let Some(reader) = self.reader.as_mut() else {
            return;
        };
        let chunk = self.store.config().io_chunk as usize;
        for seg in self.conns[key].session.out.segs.iter_mut() {
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

    fn complete(&mut self, done: ReadDone) {
        let key = tail_reader::conn_of(done.token);
        let stats = &self.store.stats;
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        let slot = conn
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
                eprintln!("goblin-store: tail read failed, object dropped: {e}");
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
        self.pump(key);
    }

    fn close(&mut self, key: usize) {
        if self.conns.contains(key) {
            let mut conn = self.conns.remove(key);
            let _ = self.poll.registry().deregister(&mut conn.stream);
            self.store
                .stats
                .curr_connections
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}
