//! One HTTP client connection: its input, the body of a request being skipped, and the
//! queue of responses in request order. A response part is ready bytes, RAM bytes lent by
//! the store (spliced, see [`super::splice`]), a byte range of an SSD tail (sent chunk by
//! chunk as its reads complete, see [`super::tail_stream`]), or a fill being streamed from
//! the origin (sent from the fill's value as it grows).

use std::collections::VecDeque;
use std::io;
use std::net::IpAddr;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use goblin_evloop::send_some;
use goblin_evloop::Stream;

use super::fill::{Fill, FillState, Phase};
use super::parse::ChunkedDecoder;
use super::respond::{self, Ask, Object, Send, Source};
use super::splice::SplicePipe;
use super::tail_stream::TailStream;
use crate::store::{clock, Loan};

/// A response streamed from a fill.
pub struct FillPart {
    /// The fill.
    pub fill: Arc<Fill>,
    /// What the request asked.
    pub ask: Ask,
    /// Miss for the request that started the fetch; hit for those that joined it (they
    /// caused no origin request, as with Varnish's and nginx's waiting requests).
    pub source: Source,
    /// The response head, once the fill's head arrived.
    pub head: Option<Vec<u8>>,
    /// Body bytes to send, as offsets in the fill's value.
    pub range: Range<usize>,
    /// Chunked streaming, for a body of unknown length.
    pub chunking: Option<Chunking>,
}

/// The state of a chunked response streamed from a fill of unknown length.
pub struct Chunking {
    /// Offset in the fill's value of the next body byte to frame.
    next: usize,
    /// A framed chunk (size line, data, CRLF) and how much of it was written.
    frame: Vec<u8>,
    at: usize,
    /// The last (empty) chunk is framed.
    last: bool,
}

impl Chunking {
    fn done(&self) -> bool {
        self.last && self.at == self.frame.len()
    }
}

/// Most body bytes framed in one chunk.
const CHUNK: usize = 256 << 10;

/// One part of the pending output.
pub enum Part {
    /// Ready bytes.
    Bytes(Vec<u8>),
    /// Body bytes in RAM (a head or a whole object), lent by the store.
    Lent(Loan),
    /// An SSD tail range.
    Tail(TailStream),
    /// A fill.
    Fill(FillPart),
}

/// The rest of a request body to read and drop.
pub enum Skip {
    /// Nothing to skip.
    None,
    /// This many bytes.
    Bytes(u64),
    /// A chunked body.
    Chunked(ChunkedDecoder),
}

/// A client connection's state beside its socket.
pub struct Conn {
    /// The client's address.
    pub peer: IpAddr,
    /// Received bytes not yet consumed.
    pub input: Vec<u8>,
    /// Responses in request order.
    pub parts: VecDeque<Part>,
    /// Bytes of the front part already written.
    written: usize,
    /// Close once the parts are written (and read no more requests).
    pub closing: bool,
    /// The client shut its side: close after answering what arrived.
    pub eof: bool,
    /// A request body being skipped.
    pub skip: Skip,
    /// A written buffer kept for the next response, so hits do not allocate.
    spare: Vec<u8>,
    /// The pipe tail bytes are spliced through, made at the first splice.
    pipe: Option<SplicePipe>,
    /// When the connection last had an event or a turn: an idle one's wait counts from here.
    pub active: Instant,
    /// When the first bytes of the request now arriving came (set by the event loop when
    /// bytes arrive on an empty input).
    pub request_start: Instant,
    /// A request was parsed on this connection: its idle waits are keep-alive waits.
    pub served: bool,
}

/// What a connection has waited for past its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Late {
    /// The rest of a request that began arriving (--http-header-timeout).
    Request,
    /// A first request, or a next one after a response (--http-header-timeout before the
    /// first request, --http-keepalive-timeout after one).
    Idle,
}

/// What writing achieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flush {
    /// Everything ready was written; more may come.
    Idle,
    /// The socket buffer is full.
    Blocked,
    /// The connection must close (socket error, a failed fill or tail mid-response, or
    /// all written on a closing connection).
    Close,
    /// The front part is a fill whose waiters are answered from the stored object (see
    /// [`super::fill::Fill::serves_stored`]): replace it, then flush again.
    Stored,
    /// A turn's worth of bytes went out: let the loop's other connections go first, then
    /// flush again.
    Yield,
}

/// Bytes one connection sends in a turn before the loop serves the others, as nginx's
/// sendfile_max_chunk: a large response does not hold up the first bytes of everyone
/// else's (over loopback a socket rarely fills, so without it a 16 MiB body went out in
/// one turn).
pub const TURN: u64 = 1 << 20;

impl Conn {
    /// A connection on an accepted socket.
    pub fn new(peer: IpAddr) -> Conn {
        Conn {
            peer,
            input: Vec::new(),
            parts: VecDeque::new(),
            written: 0,
            closing: false,
            eof: false,
            skip: Skip::None,
            spare: Vec::new(),
            pipe: None,
            active: Instant::now(),
            request_start: Instant::now(),
            served: false,
        }
    }

    /// Whether the connection has waited on its client too long at `now`: for the rest of
    /// a request for longer than `header` since its first bytes, or idle (nothing to send,
    /// nothing received) for longer than `idle` after a response (`header` before its
    /// first request). A connection with a response under way never is.
    pub fn late(&self, now: Instant, header: Duration, idle: Duration) -> Option<Late> {
        if !self.parts.is_empty() || self.closing {
            return None;
        }
        if !self.input.is_empty() || !matches!(self.skip, Skip::None) {
            return (now >= self.request_start + header).then_some(Late::Request);
        }
        let limit = if self.served { idle } else { header };
        (now >= self.active + limit).then_some(Late::Idle)
    }

    /// An empty buffer for a response, reusing a written one.
    pub fn buffer(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.spare)
    }

    /// Appends bytes to the output.
    pub fn push_bytes(&mut self, bytes: Vec<u8>) {
        if let Some(Part::Bytes(b)) = self.parts.back_mut() {
            if b.len() + bytes.len() <= 64 << 10 {
                b.extend_from_slice(&bytes);
                return;
            }
        }
        self.parts.push_back(Part::Bytes(bytes));
    }

    /// True when a response waits for a fill.
    pub fn waits_for_fill(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Fill(_)))
    }

    /// True when the part after the front one is spliced bytes that can go at once: the
    /// front part's bytes are then sent with MSG_MORE, so the kernel joins them into the
    /// same segments instead of pushing a short one (and waking the client) on its own.
    fn spliced_bytes_follow(&self) -> bool {
        match self.parts.get(1) {
            Some(Part::Lent(_)) => true,
            Some(Part::Tail(t)) => t.has_bytes_ready(),
            _ => false,
        }
    }

    /// Writes ready output to `stream` in order, until a part waits, the socket is full or
    /// `sent` reaches [`TURN`].
    pub fn flush(&mut self, stream: &mut Stream, sent: &mut u64) -> Flush {
        loop {
            if *sent >= TURN {
                return Flush::Yield;
            }
            if let Some(pipe) = self.pipe.as_mut().filter(|p| p.holds()) {
                match pipe.drain(stream.as_raw_fd(), false, sent) {
                    Ok(true) => {}
                    Ok(false) => return Flush::Blocked,
                    Err(_) => return Flush::Close,
                }
            }
            let more = self.spliced_bytes_follow();
            let Some(front) = self.parts.front_mut() else {
                return if self.closing {
                    Flush::Close
                } else {
                    Flush::Idle
                };
            };
            let step = match front {
                Part::Bytes(b) => write_from(stream, &b[self.written..], more, sent),
                Part::Lent(l) => {
                    let bytes = &l.bytes()[self.written..];
                    splice_from(&mut self.pipe, stream, bytes, more, sent)
                }
                Part::Tail(t) if self.written == t.len() => Ok(Some(0)),
                Part::Tail(t) => match t.ready(self.written) {
                    None => return Flush::Idle,
                    Some((bytes, own)) => send_from(&mut self.pipe, stream, bytes, own, sent),
                },
                Part::Fill(f) => {
                    match fill_step(stream, &mut self.pipe, f, &mut self.written, sent) {
                        FillStep::Wrote(r) => r,
                        FillStep::Finished => Ok(Some(0)),
                        FillStep::Waiting => return Flush::Idle,
                        FillStep::Broken => return Flush::Close,
                        FillStep::Stored => return Flush::Stored,
                    }
                }
            };
            match step {
                Ok(Some(n)) => {
                    self.written += n;
                    if self.front_done() {
                        self.written = 0;
                        if let Some(Part::Bytes(mut b)) = self.parts.pop_front() {
                            if b.capacity() <= 1 << 20 && b.capacity() > self.spare.capacity() {
                                b.clear();
                                self.spare = b;
                            }
                        }
                    }
                }
                Ok(None) => return Flush::Blocked,
                Err(_) => return Flush::Close,
            }
        }
    }

    fn front_done(&self) -> bool {
        match self.parts.front() {
            Some(Part::Bytes(b)) => self.written == b.len(),
            Some(Part::Lent(l)) => self.written == l.bytes().len(),
            Some(Part::Tail(t)) => self.written == t.len(),
            Some(Part::Fill(f)) => f.head.as_ref().is_some_and(|h| match &f.chunking {
                Some(c) => c.done(),
                None => self.written == h.len() + f.range.len(),
            }),
            None => false,
        }
    }
}

/// One send of `bytes` (see [`send_some`]), counted in `sent`; `more`: more bytes follow
/// at once (MSG_MORE).
fn write_from(
    stream: &mut Stream,
    bytes: &[u8],
    more: bool,
    sent: &mut u64,
) -> io::Result<Option<usize>> {
    let r = send_some(stream, bytes, more);
    if let Ok(Some(n)) = r {
        *sent += n as u64;
    }
    r
}

/// Sends of this many bytes or more from a buffer that allows it are spliced (see
/// [`super::splice`]); shorter ones cost less copied than the two calls a splice makes.
pub const SPLICE_FROM: usize = 16 << 10;

/// Splices `bytes` through the connection's pipe (made now if it has none yet), or writes
/// them when the pipe cannot be made; `more`: spliced bytes follow at once.
fn splice_from(
    pipe: &mut Option<SplicePipe>,
    stream: &mut Stream,
    bytes: &[u8],
    more: bool,
    sent: &mut u64,
) -> io::Result<Option<usize>> {
    if pipe.is_none() {
        *pipe = SplicePipe::new().ok();
    }
    match pipe.as_mut() {
        Some(p) => p.send(stream.as_raw_fd(), bytes, more, sent),
        None => write_from(stream, bytes, more, sent),
    }
}

/// One send of `bytes`, no more following at once: spliced when their pages are their
/// `own` and there are [`SPLICE_FROM`] of them, written otherwise.
fn send_from(
    pipe: &mut Option<SplicePipe>,
    stream: &mut Stream,
    bytes: &[u8],
    own: bool,
    sent: &mut u64,
) -> io::Result<Option<usize>> {
    if own && bytes.len() >= SPLICE_FROM {
        splice_from(pipe, stream, bytes, false, sent)
    } else {
        write_from(stream, bytes, false, sent)
    }
}

enum FillStep {
    Wrote(io::Result<Option<usize>>),
    Finished,
    Waiting,
    Broken,
    Stored,
}

/// One write of a fill part: its head once the fill has one (for a body of unknown length,
/// once the body is complete), then body bytes as they arrive. `written` counts the head
/// and the body bytes sent. Body bytes in a tail extent with pages of its own are spliced,
/// as a hit's are.
fn fill_step(
    stream: &mut Stream,
    pipe: &mut Option<SplicePipe>,
    f: &mut FillPart,
    written: &mut usize,
    sent: &mut u64,
) -> FillStep {
    let st = f.fill.lock();
    if f.head.is_none() && f.fill.serves_stored(&st) {
        return FillStep::Stored;
    }
    if f.head.is_none() {
        // A body of unknown length streams chunked to HTTP/1.1 clients; an HTTP/1.0
        // client gets it with a length once complete.
        let ready = match st.phase {
            Phase::Waiting => false,
            Phase::Streaming => st.body_len.is_some() || f.ask.minor >= 1,
            Phase::Done | Phase::Failed => true,
        };
        if !ready {
            return FillStep::Waiting;
        }
        let mut head = Vec::with_capacity(512);
        let now = clock::unix_now();
        match (st.phase, st.meta) {
            // Failed before this client got a byte (before the origin's head, or in a
            // body it was not yet sent any of): an error status it can act on, rather
            // than a truncated body or a close without a word.
            (Phase::Failed, _) => {
                respond::error(&mut head, &f.ask, st.error_status, now);
                f.range = 0..0;
            }
            (_, Some(meta)) => {
                let obj = Object {
                    status: meta.status,
                    headers: meta.headers(st.head()),
                    body_len: st.body_len,
                    age: u64::from(meta.age) + (now - meta.stored_at).max(0) as u64,
                    source: f.source,
                };
                let start = meta.body_start();
                match respond::object_head(&mut head, &f.ask, &obj, now).1 {
                    Send::Bytes(r) => f.range = start + r.start as usize..start + r.end as usize,
                    Send::Chunked => {
                        f.range = start..start;
                        f.chunking = Some(Chunking {
                            next: start,
                            frame: Vec::new(),
                            at: 0,
                            last: false,
                        });
                    }
                }
            }
            (_, None) => return FillStep::Broken,
        }
        f.head = Some(head);
    }
    let head = f.head.as_ref().expect("set above");
    if *written < head.len() {
        return FillStep::Wrote(write_from(stream, &head[*written..], false, sent));
    }
    if let Some(c) = f.chunking.as_mut() {
        return chunk_step(stream, c, &st, sent);
    }
    let at = f.range.start + (*written - head.len());
    if at == f.range.end {
        return FillStep::Finished;
    }
    let have = st.len().min(f.range.end);
    if at < have {
        let own = st.spliceable_from(at);
        return FillStep::Wrote(send_from(pipe, stream, st.slice(at, have), own, sent));
    }
    if st.phase == Phase::Failed || st.phase == Phase::Done {
        // The body ended (or broke) before the declared length.
        return FillStep::Broken;
    }
    FillStep::Waiting
}

/// One write of a chunked fill response: the rest of the framed chunk, else a new chunk of
/// what arrived, else the last chunk once the fill is done.
fn chunk_step(stream: &mut Stream, c: &mut Chunking, st: &FillState, sent: &mut u64) -> FillStep {
    if c.at == c.frame.len() {
        if c.last {
            return FillStep::Finished;
        }
        let avail = st.slice(c.next, st.len());
        c.frame.clear();
        c.at = 0;
        if !avail.is_empty() {
            let take = avail.len().min(CHUNK);
            c.frame
                .extend_from_slice(format!("{take:x}\r\n").as_bytes());
            c.frame.extend_from_slice(&avail[..take]);
            c.frame.extend_from_slice(b"\r\n");
            c.next += take;
        } else if st.phase == Phase::Done {
            c.frame.extend_from_slice(b"0\r\n\r\n");
            c.last = true;
        } else if st.phase == Phase::Failed {
            // No last chunk: the client sees the body end early.
            return FillStep::Broken;
        } else {
            return FillStep::Waiting;
        }
    }
    match write_from(stream, &c.frame[c.at..], false, sent) {
        Ok(Some(n)) => {
            c.at += n;
            // Progress is tracked here, not in the connection's written count.
            FillStep::Wrote(Ok(Some(0)))
        }
        other => FillStep::Wrote(other),
    }
}
