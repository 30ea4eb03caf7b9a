//! One memcache connection: a socket and its protocol [`Session`]. Replies accumulate in
//! one buffer while a batch of requests runs, so a batch of RAM-resident replies (and any
//! single one up to 16 KiB) leaves in one send.

use std::io::{self, Read, Write};

use mio::net::TcpStream;

use crate::front::memcache::session::Session;
use crate::front::memcache::Segment;
use crate::store::stats;
use crate::store::Store;

/// A client connection.
pub struct Conn {
    /// The socket.
    pub stream: TcpStream,
    /// Protocol state and pending replies.
    pub session: Session,
    written: usize,
    /// The last flush stopped on a full socket buffer.
    pub blocked: bool,
}

impl Conn {
    /// A connection on an accepted socket.
    pub fn new(stream: TcpStream) -> Conn {
        Conn {
            stream,
            session: Session::default(),
            written: 0,
            blocked: false,
        }
    }

    /// Reads what the socket has; returns false on EOF or error. A short read means the
    /// socket buffer is empty (a later arrival raises a new edge), which saves the extra
    /// read that would only return EAGAIN.
    pub fn fill(&mut self, store: &Store, chunk: &mut [u8]) -> bool {
        loop {
            match self.stream.read(chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    stats::add(&store.stats.bytes_read, n as u64);
                    self.session.feed(&chunk[..n]);
                    if n < chunk.len() {
                        return true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }

    /// Sends ready output up to the first reply still waiting for a tail. Returns false
    /// when the socket failed. Sets `blocked` when the socket buffer is full. The last
    /// buffer is kept, cleared, for the next replies.
    pub fn flush(&mut self, store: &Store) -> bool {
        self.blocked = false;
        let out = &mut self.session.out;
        while let Some(Segment::Bytes(b)) = out.segs.front() {
            if self.written == b.len() {
                self.written = 0;
                if let Some(Segment::Bytes(done)) = out.segs.pop_front() {
                    out.recycle(done);
                }
                continue;
            }
            match self.stream.write(&b[self.written..]) {
                Ok(n) => {
                    stats::add(&store.stats.bytes_written, n as u64);
                    self.written += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.blocked = true;
                    return true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// True when nothing is left to send.
    pub fn drained(&self) -> bool {
        self.session.out.segs.is_empty()
    }
}
