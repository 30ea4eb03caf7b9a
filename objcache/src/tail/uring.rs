//! Tail reads through io_uring. Each read is split into --io-chunk requests; the ring's
//! eventfd is registered in the event loop, which calls [`UringReader::drain`] when it fires.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use io_uring::{opcode, squeue, types, IoUring};
use slab::Slab;

use super::{AlignedBuf, ReadDone, ReadJob};

const PART_BITS: u32 = 24;

struct Pending {
    token: u64,
    buf: AlignedBuf,
    parts_left: usize,
    error: Option<io::Error>,
}

/// io_uring tail reader of one event loop.
pub struct UringReader {
    ring: IoUring,
    eventfd: OwnedFd,
    pending: Slab<Pending>,
    backlog: VecDeque<squeue::Entry>,
}

impl UringReader {
    /// Creates a ring of `entries` submission slots with a registered eventfd.
    pub fn new(entries: u32) -> io::Result<UringReader> {
        let ring = IoUring::new(entries)?;
        // SAFETY: eventfd has no memory preconditions; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor owned by nobody else.
        let eventfd = unsafe { OwnedFd::from_raw_fd(fd) };
        ring.submitter().register_eventfd(eventfd.as_raw_fd())?;
        Ok(UringReader {
            ring,
            eventfd,
            pending: Slab::new(),
            backlog: VecDeque::new(),
        })
    }

    /// The eventfd to register for readability in the event loop.
    pub fn eventfd(&self) -> i32 {
        self.eventfd.as_raw_fd()
    }

    /// Queues the chunked reads of `job`.
    pub fn submit(&mut self, job: ReadJob) {
        let parts = job.len.div_ceil(job.chunk);
        let idx = self.pending.insert(Pending {
            token: job.token,
            buf: AlignedBuf::new(job.len),
            parts_left: parts,
            error: None,
        });
        let base = self.pending[idx].buf.as_mut_ptr();
        for part in 0..parts {
            let start = part * job.chunk;
            let len = job.chunk.min(job.len - start);
            // The buffer lives in the slab until every part completes; its heap address is
            // stable even if the slab grows.
            let sqe = opcode::Read::new(types::Fd(job.fd), base.wrapping_add(start), len as u32)
                .offset(job.offset + start as u64)
                .build()
                .user_data(((idx as u64) << PART_BITS) | (len as u64 & ((1 << PART_BITS) - 1)));
            self.backlog.push_back(sqe);
        }
        self.push_backlog();
    }

    fn push_backlog(&mut self) {
        while let Some(sqe) = self.backlog.front() {
            // SAFETY: the buffer an entry points at stays alive in `pending` until the
            // entry's completion is reaped in drain().
            let pushed = unsafe { self.ring.submission().push(sqe).is_ok() };
            if !pushed {
                if self.ring.submit().is_err() {
                    break;
                }
                // SAFETY: as above.
                if unsafe { self.ring.submission().push(sqe).is_err() } {
                    break;
                }
            }
            self.backlog.pop_front();
        }
        if let Err(e) = self.ring.submit() {
            eprintln!("goblin-store: io_uring submit failed: {e}");
        }
    }

    /// Reaps completions and returns finished reads.
    pub fn drain(&mut self, out: &mut Vec<ReadDone>) {
        let mut counter = [0u8; 8];
        // SAFETY: reading 8 bytes into a local buffer from our own non-blocking eventfd.
        unsafe {
            libc::read(self.eventfd.as_raw_fd(), counter.as_mut_ptr().cast(), 8);
        }
        let completions: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (data, res) in completions {
            let idx = (data >> PART_BITS) as usize;
            let expected = (data & ((1 << PART_BITS) - 1)) as i32;
            let Some(p) = self.pending.get_mut(idx) else {
                continue;
            };
            if res < 0 {
                p.error = Some(io::Error::from_raw_os_error(-res));
            } else if res != expected && expected != 0 {
                p.error = Some(io::ErrorKind::UnexpectedEof.into());
            }
            p.parts_left -= 1;
            if p.parts_left == 0 {
                let p = self.pending.remove(idx);
                let result = match p.error {
                    Some(e) => Err(e),
                    None => Ok(p.buf),
                };
                out.push(ReadDone {
                    token: p.token,
                    result,
                });
            }
        }
        if !self.backlog.is_empty() {
            self.push_backlog();
        }
    }
}
