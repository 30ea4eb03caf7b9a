//! Persistent HTTP/1.1 connections to the origin, driven by the front's event loop: one
//! fetch at a time per connection, kept open for the next when the origin allows.

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use super::fill::{Fill, Phase};
use super::parse::{self, ChunkedDecoder, Framing, MAX_HEAD};

/// What a readiness event did to a fetch.
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
    /// Most bytes a stored meta and header block may take.
    pub max_headers: usize,
    /// Deadline extension on progress.
    pub timeout: Duration,
}

enum State {
    Idle,
    Sending,
    Head,
    Body(Framing),
}

/// One origin connection.
pub struct OriginConn {
    /// The socket.
    pub stream: TcpStream,
    fill: Option<Arc<Fill>>,
    request: Vec<u8>,
    written: usize,
    rbuf: Vec<u8>,
    state: State,
    decoder: ChunkedDecoder,
    connected: bool,
    reused: bool,
    got_bytes: bool,
    keep_alive: bool,
    /// When the fetch times out, while one runs.
    pub deadline: Option<Instant>,
}

impl OriginConn {
    /// Starts a non-blocking connect.
    pub fn connect(addr: SocketAddr) -> io::Result<OriginConn> {
        let stream = TcpStream::connect(addr)?;
        let _ = stream.set_nodelay(true);
        Ok(OriginConn {
            stream,
            fill: None,
            request: Vec::new(),
            written: 0,
            rbuf: Vec::new(),
            state: State::Idle,
            decoder: ChunkedDecoder::new(),
            connected: false,
            reused: false,
            got_bytes: false,
            keep_alive: false,
            deadline: None,
        })
    }

    /// Starts fetching `fill` with the request bytes `request`.
    pub fn begin(&mut self, fill: Arc<Fill>, request: Vec<u8>, timeout: Duration) {
        self.reused = self.connected;
        self.fill = Some(fill);
        self.request = request;
        self.written = 0;
        self.rbuf.clear();
        self.state = State::Sending;
        self.decoder = ChunkedDecoder::new();
        self.got_bytes = false;
        self.deadline = Some(Instant::now() + timeout);
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

    fn fail(&self) -> Progress {
        Progress::Failed {
            before_head: matches!(self.state, State::Sending | State::Head),
            retry: self.reused && !self.got_bytes,
        }
    }

    /// Drives the fetch after a readiness event.
    pub fn drive(&mut self, scratch: &mut [u8], limits: &Limits) -> Progress {
        if self.fill.is_none() {
            return Progress::Pending;
        }
        if !self.connected {
            if let Ok(Some(_)) | Err(_) = self.stream.take_error() {
                return self.fail();
            }
            match self.stream.peer_addr() {
                Ok(_) => self.connected = true,
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return Progress::Pending,
                Err(_) => return self.fail(),
            }
        }
        if let State::Sending = self.state {
            while self.written < self.request.len() {
                match self.stream.write(&self.request[self.written..]) {
                    Ok(n) => self.written += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Progress::Pending,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return self.fail(),
                }
            }
            self.state = State::Head;
        }
        loop {
            let n = match self.stream.read(scratch) {
                Ok(0) => {
                    if let State::Body(Framing::UntilClose) = self.state {
                        self.keep_alive = false;
                        return self.complete();
                    }
                    return self.fail();
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Progress::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.fail(),
            };
            self.got_bytes = true;
            self.deadline = Some(Instant::now() + limits.timeout);
            match self.take(&scratch[..n], limits) {
                Progress::Pending => {}
                done => return done,
            }
        }
    }

    /// Consumes bytes from the origin.
    fn take(&mut self, mut bytes: &[u8], limits: &Limits) -> Progress {
        if let State::Head = self.state {
            self.rbuf.extend_from_slice(bytes);
            let head = loop {
                match parse::parse_response(&self.rbuf, false) {
                    Ok(Some(h)) if (100..200).contains(&h.status) => {
                        self.rbuf.drain(..h.head_len);
                    }
                    Ok(Some(h)) => break h,
                    Ok(None) if self.rbuf.len() <= MAX_HEAD => return Progress::Pending,
                    Ok(None) | Err(_) => return self.fail(),
                }
            };
            let fill = self.fill.as_ref().expect("a fetch has a fill");
            fill.lock()
                .begin(&head, &self.rbuf, limits.default_ttl, limits.max_headers);
            self.keep_alive = head.keep_alive;
            self.state = State::Body(head.body);
            let rest = std::mem::take(&mut self.rbuf);
            let p = self.body(&rest[head.head_len..]);
            self.rbuf = rest;
            self.rbuf.clear();
            return p;
        }
        if let State::Body(_) = self.state {
            return self.body(std::mem::take(&mut bytes));
        }
        Progress::Pending
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
                let have = st.body().len() as u64;
                let take = (n - have).min(bytes.len() as u64) as usize;
                st.append(&bytes[..take]);
                if take < bytes.len() {
                    // Bytes past the declared length: the connection cannot be trusted.
                    self.keep_alive = false;
                }
                have + take as u64 == n
            }
            Framing::Chunked => match self.decoder.decode(bytes, &mut st.value) {
                Ok((_, done)) => done,
                Err(_) => {
                    drop(st);
                    return self.fail();
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
            let mut st = fill.lock();
            st.body_len = Some(st.body().len() as u64);
            st.phase = Phase::Done;
        }
        Progress::Done {
            keep_alive: self.keep_alive,
        }
    }
}
