//! The tail reader of one event loop: SSD tail reads through io_uring ([`uring`]) or a
//! blocking thread pool ([`blocking`]), whichever [`TailEngine`] was chosen at start, each
//! waking the loop when reads finish. A read's token names the connection that asked.

pub(crate) mod blocking;
pub(crate) mod uring;

use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;

use mio::unix::SourceFd;
use mio::{Interest, Poll, Token};

use crate::store::{AlignedBuf, TailRef};
use blocking::BlockingReader;
use uring::UringReader;

/// Which engine the loops use for tail reads, chosen once at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TailEngine {
    /// No SSD pool: nothing to read.
    None,
    /// io_uring.
    Uring,
    /// Blocking-read thread pool.
    Blocking,
}

impl TailEngine {
    /// Name for logs and stats.
    pub fn as_str(self) -> &'static str {
        match self {
            TailEngine::None => "none",
            TailEngine::Uring => "io_uring",
            TailEngine::Blocking => "blocking",
        }
    }
}

/// The connection a token from [`TailReader::read_tail`] belongs to.
pub fn conn_of(token: u64) -> usize {
    (token >> 32) as usize
}

/// A tail read to perform.
pub struct ReadJob {
    /// Caller's identifier, returned in [`ReadDone`].
    pub token: u64,
    /// Pool file descriptor.
    pub fd: RawFd,
    /// Byte offset (page aligned).
    pub offset: u64,
    /// Bytes to read (page aligned).
    pub len: usize,
    /// Bytes per read request.
    pub chunk: usize,
}

/// A finished tail read.
pub struct ReadDone {
    /// The job's token.
    pub token: u64,
    /// The bytes read, or the error.
    pub result: io::Result<AlignedBuf>,
}

/// The tail read engine of one event loop.
pub enum TailReader {
    /// io_uring with an eventfd registered in the loop's poll.
    Uring(Box<uring::UringReader>),
    /// A blocking-read thread pool that wakes the loop.
    Blocking(blocking::BlockingReader),
}

impl TailReader {
    /// Queues the read of a tail's whole extent for connection `conn` and returns its token,
    /// `conn << 32 | seq` (`seq` advances per read; [`conn_of`] gives the connection back).
    pub fn read_tail(&mut self, conn: usize, seq: &mut u32, tail: &TailRef, chunk: usize) -> u64 {
        self.read_range(conn, seq, tail, 0..tail.extent_len, chunk)
    }

    /// Queues the read of bytes `range` of a tail's extent (page aligned, the end clipped
    /// to a page multiple of the extent) for connection `conn`; the token as
    /// [`TailReader::read_tail`]'s.
    pub fn read_range(
        &mut self,
        conn: usize,
        seq: &mut u32,
        tail: &TailRef,
        range: std::ops::Range<usize>,
        chunk: usize,
    ) -> u64 {
        *seq = seq.wrapping_add(1);
        let token = ((conn as u64) << 32) | u64::from(*seq);
        self.submit(ReadJob {
            token,
            fd: tail.fd,
            offset: tail.offset + range.start as u64,
            len: range.len(),
            chunk,
        });
        token
    }

    /// Queues a read; its completion is collected by [`TailReader::drain`].
    pub fn submit(&mut self, job: ReadJob) {
        match self {
            TailReader::Uring(r) => r.submit(job),
            TailReader::Blocking(r) => r.submit(job),
        }
    }

    /// Collects finished reads.
    pub fn drain(&mut self, out: &mut Vec<ReadDone>) {
        match self {
            TailReader::Uring(r) => r.drain(out),
            TailReader::Blocking(r) => r.drain(out),
        }
    }
}

/// The tail reader of one event loop, registered in `poll` under `token`: io_uring with its
/// eventfd, or the blocking pool with a waker; `None` without an SSD pool.
pub fn open(poll: &Poll, token: Token, engine: TailEngine) -> io::Result<Option<TailReader>> {
    if engine == TailEngine::Uring {
        match UringReader::new(256) {
            Ok(r) => {
                poll.registry()
                    .register(&mut SourceFd(&r.eventfd()), token, Interest::READABLE)?;
                return Ok(Some(TailReader::Uring(Box::new(r))));
            }
            Err(e) => {
                crate::store_log!(
                    Warning,
                    "io_uring ring failed ({e}); this loop uses blocking reads"
                )
            }
        }
    }
    if engine == TailEngine::None {
        return Ok(None);
    }
    let waker = Arc::new(mio::Waker::new(poll.registry(), token)?);
    Ok(Some(TailReader::Blocking(BlockingReader::new(2, waker)?)))
}
