//! One connection's buffers as the event loop keeps them (the socket is the loop's, the
//! client state the registry's): the read buffer the parser refers into and the write buffer.

use crate::clients::Buffers;
use crate::resp::parse::RequestParser;
use crate::stats::Stats;
use std::time::Instant;

/// Bytes reserved before each read call.
pub const READ_CHUNK: usize = 16 * 1024;
/// A write buffer with more capacity than this is given back once empty, and the bytes
/// written are dropped from its front once they are this many and at least half of it: the
/// room the replies took goes back as they are sent, as Redis frees its reply blocks (this
/// is the most its per-client reply buffer holds).
const KEEP_OUTPUT: usize = crate::clients::reply_buffer::CHUNK;
/// The cron trims a read buffer only when it wastes more than this (Redis's 4 KiB).
const QUERY_SLACK: usize = 4 * 1024;
/// A read buffer larger than this is trimmed to its recent peak while the client is active
/// (Redis's PROTO_RESIZE_THRESHOLD).
const QUERY_RESIZE_THRESHOLD: usize = 32 * 1024;
/// Seconds without a read or write after which the cron frees a read buffer's spare room.
const QUERY_IDLE_SECS: u64 = 2;

/// The state of one connection on the loop.
pub struct Conn {
    /// Requests received.
    pub rbuf: Vec<u8>,
    /// Start of the first request not yet run.
    pub rpos: usize,
    /// The most the read buffer held (or was sized for, for a big argument) since the
    /// cron last looked (Redis's querybuf_peak).
    pub query_peak: usize,
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
            query_peak: 0,
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
            output_capacity: self.wbuf.capacity(),
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
            output_capacity: self.wbuf.capacity(),
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
        }
    }

    /// Notes what the read buffer holds, or is sized for when a big argument is arriving,
    /// for the cron's next look ([`Conn::resize_input`]).
    pub fn note_query_peak(&mut self) {
        let wanted = self.parser.big_arg_end(&self.rbuf).unwrap_or(0);
        self.query_peak = self.query_peak.max(self.rbuf.len()).max(wanted);
    }

    /// The cron's trim of the read buffer, as Redis's clientsCronResizeQueryBuffer: when it
    /// wastes more than 4 KiB, a client idle for more than 2 s keeps only what it holds,
    /// and an active one whose buffer is over 32 KiB and twice its recent peak keeps that
    /// peak (or what it holds, or the big argument being received, if more). The peak then
    /// starts again from what the buffer holds. Returns whether the buffer changed.
    pub fn resize_input(&mut self, idle_secs: u64) -> bool {
        let held = self.rbuf.len();
        let capacity = self.rbuf.capacity();
        let arriving = self.parser.big_arg_end(&self.rbuf).unwrap_or(0);
        let mut changed = false;
        if capacity - held > QUERY_SLACK {
            if idle_secs > QUERY_IDLE_SECS {
                self.rbuf.shrink_to_fit();
                changed = true;
            } else if capacity > QUERY_RESIZE_THRESHOLD && capacity / 2 > self.query_peak {
                self.rbuf.shrink_to(held.max(self.query_peak).max(arriving));
                changed = true;
            }
        }
        self.query_peak = held.max(arriving);
        changed
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
            self.wpos = 0;
            release_output(&mut self.wbuf);
        } else if self.wpos > KEEP_OUTPUT && self.wpos * 2 > self.wbuf.len() {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
            // What waits keeps room to grow by as much again.
            self.wbuf.shrink_to(2 * self.wbuf.len());
        }
        true
    }
}

/// Empties an output buffer whose bytes were sent or moved on, giving its room back when
/// it outgrew a reply buffer (a burst of output leaves nothing allocated behind it).
pub fn release_output(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP_OUTPUT {
        *buf = Vec::new();
    } else {
        buf.clear();
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
                output_capacity: c.wbuf.capacity(),
            }
        );
        run_one(&mut c);
        assert_eq!((c.rbuf.len(), c.rpos), (0, 0));
    }

    #[test]
    fn output_room_past_a_reply_buffer_goes_once_sent() {
        let mut small = Vec::with_capacity(100);
        small.extend_from_slice(b"+OK\r\n");
        release_output(&mut small);
        assert_eq!((small.len(), small.capacity()), (0, 100));
        let mut burst = vec![b'x'; KEEP_OUTPUT + 1];
        release_output(&mut burst);
        assert_eq!(burst.capacity(), 0);
    }

    #[test]
    fn the_cron_trims_the_read_buffer_to_its_peak_then_frees_it_when_idle() {
        let mut c = Conn::new(1);
        c.rbuf.reserve_exact(400_000);
        c.query_peak = 400_000;
        assert!(
            !c.resize_input(0),
            "a request that filled it was just read: kept"
        );
        c.rbuf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        c.note_query_peak();
        assert!(c.resize_input(0), "over 32 KiB and twice the peak: trimmed");
        assert!(c.rbuf.capacity() >= 14 && c.rbuf.capacity() < 400_000);
        c.rbuf.reserve(READ_CHUNK);
        assert!(!c.resize_input(2), "idle for 2 s only, under 32 KiB: kept");
        assert!(c.resize_input(3), "idle for more than 2 s: freed");
        assert_eq!(c.rbuf.capacity(), c.rbuf.len());
    }

    #[test]
    fn a_big_argument_arriving_keeps_its_room_while_active() {
        let mut c = Conn::new(1);
        c.rbuf
            .extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1000000\r\n");
        let limits = Limits {
            max_bulk: 512 << 20,
            authenticated: true,
        };
        assert_eq!(
            c.parser.parse(&c.rbuf, 0, limits).unwrap(),
            Parsed::Incomplete
        );
        c.rbuf.reserve_exact(3_000_000);
        c.note_query_peak();
        assert!(c.resize_input(0), "twice the big argument: trimmed to it");
        assert!(c.rbuf.capacity() >= 1_000_002 + 30);
        assert!(!c.resize_input(1));
        assert!(c.resize_input(3), "idle: freed all the same");
        assert!(c.rbuf.capacity() < 1_000_000);
    }
}
