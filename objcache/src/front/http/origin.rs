//! Persistent HTTP/1.1 connections to the origin: one fetch at a time per connection, kept
//! open for the next when the origin allows. [`Fetch`] is the protocol (request out,
//! response head and body in, Content-Length, chunked or close-delimited); [`PlainConn`]
//! drives it with non-blocking reads and writes on the front's mio loop, and
//! [`super::ring::RingConn`] with io_uring submissions.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use super::fill::Fill;
use super::parse::{self, ChunkedDecoder, Framing, MAX_HEAD};

/// What an I/O completion did to a fetch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Still going.
    Pending,
    /// The response is complete; the connection may carry another request.
    Done {
        /// The origin keeps the connection open.
        keep_alive: bool,
    },
    /// The fetch failed.
    Failed {
        /// The failure came before a response head.
        before_head: bool,
        /// A reused connection failed before any response byte: the origin closed it while
        /// idle, and the request may be sent again on a new connection.
        retry: bool,
    },
}

/// The origin's fill parameters.
pub struct Limits {
    /// Time to live when the origin gives none.
    pub default_ttl: u64,
    /// Stale windows when the origin gives none (--grace).
    pub grace: u64,
    /// Most bytes a stored meta and header block may take.
    pub max_headers: usize,
    /// Deadline extension on progress.
    pub timeout: Duration,
    /// With --ssd-dir, --ram-head: a value of this many bytes or more is split, and its
    /// tail is filled straight into its extent (see [`super::fill`]).
    pub split_at: Option<usize>,
    /// --max-item-size: a larger value is not laid out as a split one.
    pub max_item: u64,
}

enum State {
    Idle,
    Sending,
    Head,
    Body(Framing),
}

/// The protocol side of one origin connection.
pub struct Fetch {
    fill: Option<Arc<Fill>>,
    request: Vec<u8>,
    written: usize,
    rbuf: Vec<u8>,
    state: State,
    decoder: ChunkedDecoder,
    reused: bool,
    got_bytes: bool,
    keep_alive: bool,
    /// When the fetch times out, while one runs.
    pub deadline: Option<Instant>,
}

impl Default for Fetch {
    fn default() -> Fetch {
        Fetch {
            fill: None,
            request: Vec::new(),
            written: 0,
            rbuf: Vec::new(),
            state: State::Idle,
            decoder: ChunkedDecoder::new(),
            reused: false,
            got_bytes: false,
            keep_alive: false,
            deadline: None,
        }
    }
}

impl Fetch {
    /// Starts fetching `fill` with the request bytes `request`; `reused` when the
    /// connection carried an earlier fetch.
    pub fn begin(&mut self, fill: Arc<Fill>, request: Vec<u8>, timeout: Duration, reused: bool) {
        *self = Fetch {
            fill: Some(fill),
            request,
            state: State::Sending,
            reused,
            rbuf: std::mem::take(&mut self.rbuf),
            deadline: Some(Instant::now() + timeout),
            ..Fetch::default()
        };
        self.rbuf.clear();
    }

    /// The fill being fetched.
    pub fn fill(&self) -> Option<&Arc<Fill>> {
        self.fill.as_ref()
    }

    /// Ends the fetch and returns its fill.
    pub fn take_fill(&mut self) -> Option<Arc<Fill>> {
        self.state = State::Idle;
        self.deadline = None;
        self.fill.take()
    }

    /// Request bytes not yet written.
    pub fn unsent(&self) -> &[u8] {
        match self.state {
            State::Sending => &self.request[self.written..],
            _ => &[],
        }
    }

    /// `n` more request bytes were written.
    pub fn sent(&mut self, n: usize) {
        self.written += n;
        if self.written >= self.request.len() {
            self.state = State::Head;
        }
    }

    /// The progress of a failure now.
    pub fn failed(&self) -> Progress {
        Progress::Failed {
            before_head: matches!(self.state, State::Sending | State::Head),
            retry: self.reused && !self.got_bytes,
        }
    }

    /// The origin closed the connection.
    pub fn closed(&mut self) -> Progress {
        if let State::Body(Framing::UntilClose) = self.state {
            self.keep_alive = false;
            return self.complete();
        }
        self.failed()
    }

    /// Consumes bytes from the origin.
    pub fn received(&mut self, bytes: &[u8], limits: &Limits) -> Progress {
        self.got_bytes = true;
        self.deadline = Some(Instant::now() + limits.timeout);
        if let State::Head = self.state {
            self.rbuf.extend_from_slice(bytes);
            let head = loop {
                match parse::parse_response(&self.rbuf, false) {
                    Ok(Some(h)) if (100..200).contains(&h.status) => {
                        self.rbuf.drain(..h.head_len);
                    }
                    Ok(Some(h)) => break h,
                    Ok(None) if self.rbuf.len() <= MAX_HEAD => return Progress::Pending,
                    Ok(None) | Err(_) => return self.failed(),
                }
            };
            let fill = self.fill.as_ref().expect("a fetch has a fill");
            if fill.fails_over(head.status) {
                // The stale object keeps serving; the connection is not read further.
                self.keep_alive = false;
                return self.failed();
            }
            fill.begin(&head, &self.rbuf, limits);
            self.keep_alive = head.keep_alive;
            self.state = State::Body(head.body);
            let rest = std::mem::take(&mut self.rbuf);
            let p = self.body(&rest[head.head_len..]);
            self.rbuf = rest;
            self.rbuf.clear();
            return p;
        }
        self.body(bytes)
    }

    fn body(&mut self, bytes: &[u8]) -> Progress {
        let State::Body(framing) = self.state else {
            return Progress::Pending;
        };
        let fill = self.fill.as_ref().expect("a fetch has a fill");
        let mut st = fill.lock();
        let finished = match framing {
            Framing::None => true,
            Framing::Length(n) => {
                let have = st.body_received() as u64;
                let take = (n - have).min(bytes.len() as u64) as usize;
                st.append(&bytes[..take]);
                if take < bytes.len() {
                    // Bytes past the declared length: the connection cannot be trusted.
                    self.keep_alive = false;
                }
                have + take as u64 == n
            }
            Framing::Chunked => match self.decoder.decode(bytes, st.growing()) {
                Ok((_, done)) => done,
                Err(_) => {
                    drop(st);
                    return self.failed();
                }
            },
            Framing::UntilClose => {
                st.append(bytes);
                false
            }
        };
        drop(st);
        if finished {
            self.complete()
        } else {
            Progress::Pending
        }
    }

    fn complete(&mut self) -> Progress {
        if let Some(fill) = &self.fill {
            fill.lock().finish();
        }
        Progress::Done {
            keep_alive: self.keep_alive,
        }
    }
}

/// An origin connection driven by readiness events on the front's mio loop.
pub struct PlainConn {
    /// The socket.
    pub stream: TcpStream,
    connected: bool,
    /// The fetch it carries.
    pub fetch: Fetch,
}

impl PlainConn {
    /// Starts a non-blocking connect.
    pub fn connect(addr: SocketAddr) -> io::Result<PlainConn> {
        let stream = TcpStream::connect(addr)?;
        let _ = stream.set_nodelay(true);
        Ok(PlainConn {
            stream,
            connected: false,
            fetch: Fetch::default(),
        })
    }

    /// True once the connection carried a request.
    pub fn connected(&self) -> bool {
        self.connected
    }

    /// An idle connection saw an event: false when the origin closed it (or sent bytes
    /// nobody asked for), so it must be dropped.
    pub fn idle_alive(&mut self, scratch: &mut [u8]) -> bool {
        loop {
            match self.stream.read(scratch) {
                Ok(_) => return false,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// Drives the fetch after a readiness event.
    pub fn drive(&mut self, scratch: &mut [u8], limits: &Limits) -> Progress {
        let f = &mut self.fetch;
        if f.fill.is_none() {
            return Progress::Pending;
        }
        if !self.connected {
            if let Ok(Some(_)) | Err(_) = self.stream.take_error() {
                return f.failed();
            }
            match self.stream.peer_addr() {
                Ok(_) => self.connected = true,
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Progress::Pending,
                Err(_) => return f.failed(),
            }
        }
        while !f.unsent().is_empty() {
            match self.stream.write(f.unsent()) {
                Ok(n) => f.sent(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Progress::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return f.failed(),
            }
        }
        loop {
            let n = match self.stream.read(scratch) {
                Ok(0) => return f.closed(),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Progress::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return f.failed(),
            };
            match f.received(&scratch[..n], limits) {
                Progress::Pending => {}
                done => return done,
            }
        }
    }
}
