//! One connection's buffers as the event loop keeps them (the socket is the loop's, the
//! client state the registry's): the read buffer the parser refers into and the write buffer.

use crate::clients::Buffers;
use crate::resp::parse::RequestParser;
use crate::stats::Stats;
use std::time::Instant;

/// Bytes reserved before each read call.
pub const READ_CHUNK: usize = 16 * 1024;
/// A write buffer with more capacity than this is given back once empty.
const KEEP_OUTPUT: usize = 1024 * 1024;

/// The state of one connection on the loop.
pub struct Conn {
    /// Requests received.
    pub rbuf: Vec<u8>,
    /// Start of the first request not yet run.
    pub rpos: usize,
    /// The request being parsed.
    pub parser: RequestParser,
    /// Replies not yet written start at `wpos`.
    pub wbuf: Vec<u8>,
    wpos: usize,
    /// Close once the write buffer is flushed (protocol error, QUIT, CLIENT KILL).
    pub closing: bool,
    /// Since when the output has been over the soft limit.
    pub soft_limit_since: Option<Instant>,
    /// The client's CLIENT ID (the registry maps it to the connection's key).
    pub id: u64,
}

impl Conn {
    /// A connection whose client is `id`.
    pub fn new(id: u64) -> Conn {
        Conn {
            rbuf: Vec::new(),
            rpos: 0,
            parser: RequestParser::default(),
            wbuf: Vec::new(),
            wpos: 0,
            closing: false,
            soft_limit_since: None,
            id,
        }
    }

    /// Bytes of replies not yet written.
    #[inline]
    pub fn pending_output(&self) -> usize {
        self.wbuf.len() - self.wpos
    }

    /// Bytes of requests received and not yet run.
    #[inline]
    pub fn pending_input(&self) -> usize {
        self.rbuf.len() - self.rpos
    }

    /// The buffer sizes the registry reports for the client between its commands: the
    /// query buffer and argv-mem as Redis has them then (an unfinished request's complete
    /// arguments are out of its query buffer, in its argv).
    pub fn buffers(&self) -> Buffers {
        let (from, argv) = self.parser.unfinished(&self.rbuf).unwrap_or((self.rpos, 0));
        Buffers {
            query: self.rbuf.len() - from,
            input_capacity: self.rbuf.capacity(),
            pending_output: self.pending_output(),
            argv,
        }
    }

    /// The buffer sizes while a command parsed from the batch read since `batch_start`
    /// runs: the whole batch is still the query buffer (Redis trims it after the batch),
    /// `argv` the command's arguments.
    pub fn running_buffers(&self, batch_start: usize, argv: usize) -> Buffers {
        Buffers {
            query: self.rbuf.len() - batch_start,
            input_capacity: self.rbuf.capacity(),
            pending_output: self.pending_output(),
            argv,
        }
    }

    /// Drops the requests already run, once they are at least half of the read buffer (the
    /// parser's ranges for an unfinished request are shifted with them).
    pub fn compact_input(&mut self) {
        if self.rpos > 0 && (self.rpos == self.rbuf.len() || self.rpos >= self.rbuf.len() / 2) {
            let n = self.rpos;
            self.rbuf.drain(..n);
            self.parser.shift(n);
            self.rpos = 0;
            if self.rbuf.is_empty() && self.rbuf.capacity() > 4 * READ_CHUNK {
                self.rbuf = Vec::new();
            }
        }
    }

    /// Writes what the socket takes. Returns false when the connection broke.
    #[inline]
    pub fn flush(&mut self, stream: &mut goblin_evloop::Stream, stats: &mut Stats) -> bool {
        if self.wpos < self.wbuf.len() {
            stats.writes_processed += 1;
        }
        while self.wpos < self.wbuf.len() {
            match goblin_evloop::write_some(stream, &self.wbuf[self.wpos..]) {
                Ok(Some(n)) => {
                    self.wpos += n;
                    stats.net_output_bytes += n as u64;
                }
                Ok(None) => break,
                Err(_) => return false,
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
            if self.wbuf.capacity() > KEEP_OUTPUT {
                self.wbuf = Vec::new();
            }
        } else if self.wpos > KEEP_OUTPUT && self.wpos * 2 > self.wbuf.len() {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::parse::{Limits, Parsed};

    fn run_one(c: &mut Conn) {
        let limits = Limits {
            max_bulk: 512 << 20,
            authenticated: true,
        };
        match c.parser.parse(&c.rbuf, c.rpos, limits) {
            Ok(Parsed::Request { end }) => c.rpos = end,
            _ => panic!("a complete request"),
        }
        c.compact_input();
    }

    #[test]
    fn compacting_drops_what_ran_once_it_is_half_the_buffer() {
        let mut c = Conn::new(1);
        c.rbuf.extend_from_slice(&b"*1\r\n$4\r\nPING\r\n".repeat(3));
        run_one(&mut c);
        assert_eq!((c.rbuf.len(), c.rpos), (42, 14), "less than half ran");
        run_one(&mut c);
        assert_eq!((c.rbuf.len(), c.rpos), (14, 0));
        assert_eq!(c.pending_input(), 14);
        c.wbuf.extend_from_slice(b"+PONG\r\n");
        assert_eq!(
            c.buffers(),
            Buffers {
                query: 14,
                input_capacity: c.rbuf.capacity(),
                pending_output: 7,
                argv: 0,
            }
        );
        run_one(&mut c);
        assert_eq!((c.rbuf.len(), c.rpos), (0, 0));
    }
}
