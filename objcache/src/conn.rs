//! One memcache connection: its input buffer, what it waits for next (a line, a data block,
//! bytes to swallow), and its ordered output. Requests are processed as long as input is
//! complete; replies accumulate in one buffer, so a batch of RAM-resident replies (and any
//! single one up to 16 KiB) leaves in one send.

use std::io::{self, Read, Write};

use mio::net::TcpStream;

use crate::memcache::exec::{self, Flow};
use crate::memcache::meta::{self, SetPlan, SetStep};
use crate::memcache::parse::{self, item_total, Line, Request};
use crate::memcache::{Output, Segment};
use crate::stats;
use crate::store::{Mode, Store};

/// Stop reading requests while this many reply bytes wait to be sent.
const OUTPUT_HIGH_WATER: usize = 4 << 20;

/// What the connection expects next from the client.
enum Wait {
    /// A request line.
    Line,
    /// The data block of a classic storage command.
    Store {
        mode: Mode,
        key: Vec<u8>,
        flags: u32,
        exptime: i32,
        cas: u64,
        noreply: bool,
        len: usize,
    },
    /// The data block of an ms.
    MetaSet(SetPlan),
    /// Bytes to drop (the data of a refused storage command).
    Swallow(usize),
}

/// A client connection.
pub struct Conn {
    /// The socket.
    pub stream: TcpStream,
    input: Vec<u8>,
    wait: Wait,
    /// Replies not yet sent.
    pub out: Output,
    written: usize,
    /// Close once the output is flushed.
    pub closing: bool,
}

impl Conn {
    /// A connection on an accepted socket.
    pub fn new(stream: TcpStream) -> Conn {
        Conn {
            stream,
            input: Vec::with_capacity(16 << 10),
            wait: Wait::Line,
            out: Output::default(),
            written: 0,
            closing: false,
        }
    }

    /// Reads what the socket has; returns false on EOF or error.
    pub fn fill(&mut self, store: &Store) -> bool {
        let mut chunk = [0u8; 64 << 10];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    stats::add(&store.stats.bytes_read, n as u64);
                    self.input.extend_from_slice(&chunk[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }

    /// Runs every complete request in the input.
    pub fn process(&mut self, store: &Store) {
        let mut pos = 0;
        while !self.closing && self.out.ready_len() < OUTPUT_HIGH_WATER {
            let avail = &self.input[pos..];
            match std::mem::replace(&mut self.wait, Wait::Line) {
                Wait::Swallow(n) => {
                    let take = n.min(avail.len());
                    pos += take;
                    if take < n {
                        self.wait = Wait::Swallow(n - take);
                        break;
                    }
                }
                Wait::Store {
                    mode,
                    key,
                    flags,
                    exptime,
                    cas,
                    noreply,
                    len,
                } => {
                    if avail.len() < len + 2 {
                        self.wait = Wait::Store {
                            mode,
                            key,
                            flags,
                            exptime,
                            cas,
                            noreply,
                            len,
                        };
                        break;
                    }
                    let block = &avail[..len + 2];
                    exec::finish_store(
                        store,
                        mode,
                        &key,
                        flags,
                        exptime,
                        cas,
                        noreply,
                        block,
                        &mut self.out,
                    );
                    pos += len + 2;
                }
                Wait::MetaSet(plan) => {
                    if avail.len() < plan.len + 2 {
                        self.wait = Wait::MetaSet(plan);
                        break;
                    }
                    meta::finish_set(store, &plan, &avail[..plan.len + 2], &mut self.out);
                    pos += plan.len + 2;
                }
                Wait::Line => match parse::next_line(avail) {
                    Line::Incomplete => break,
                    Line::Junk => {
                        self.closing = true;
                        break;
                    }
                    Line::Complete(line, used) => {
                        pos += used;
                        self.wait = request(store, line, &mut self.out, &mut self.closing);
                    }
                },
            }
        }
        self.input.drain(..pos);
    }

    /// Sends ready output up to the first reply still waiting for a tail. Returns false
    /// when the socket failed.
    pub fn flush(&mut self, store: &Store) -> bool {
        while let Some(Segment::Bytes(b)) = self.out.segs.front() {
            if self.written == b.len() {
                self.out.segs.pop_front();
                self.written = 0;
                continue;
            }
            match self.stream.write(&b[self.written..]) {
                Ok(n) => {
                    stats::add(&store.stats.bytes_written, n as u64);
                    self.written += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// True when nothing is left to send.
    pub fn drained(&self) -> bool {
        self.out.segs.is_empty()
    }

    /// Bytes of input not processed yet.
    pub fn input_len(&self) -> usize {
        self.input.len()
    }
}

/// Runs one request line and says what to expect next.
fn request(store: &Store, line: &[u8], out: &mut Output, closing: &mut bool) -> Wait {
    match parse::parse_line(line) {
        Request::Store {
            mode,
            key,
            flags,
            exptime,
            len,
            cas,
            noreply,
        } => {
            if item_total(key.len(), flags, len) > store.config().max_item_size {
                exec::too_large(store, mode, key, noreply, out);
                return Wait::Swallow(len + 2);
            }
            Wait::Store {
                mode,
                key: key.to_vec(),
                flags,
                exptime,
                cas,
                noreply,
                len,
            }
        }
        Request::Meta {
            cmd: b's',
            args,
            ntokens,
        } => match meta::plan_set(store, &args, ntokens) {
            SetStep::Data(plan) => Wait::MetaSet(plan),
            SetStep::Fail(reply, swallow) => {
                out.line(reply);
                if swallow > 0 {
                    Wait::Swallow(swallow)
                } else {
                    Wait::Line
                }
            }
        },
        Request::Meta { cmd, args, ntokens } => {
            meta::run(store, cmd, &args, ntokens, out);
            Wait::Line
        }
        req => {
            if exec::run(store, req, out) == Flow::Close {
                *closing = true;
            }
            Wait::Line
        }
    }
}
