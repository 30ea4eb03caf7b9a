//! Tail reads through io_uring. Each read is split into --io-chunk requests; the ring's
//! eventfd is registered in the event loop, which calls [`UringReader::drain`] when it fires.

use std::io;

use io_uring::{opcode, types};
use slab::Slab;

use super::{AlignedBuf, ReadDone, ReadJob};
use crate::io::event_ring::EventRing;

const PART_BITS: u32 = 24;

struct Pending {
    token: u64,
    buf: AlignedBuf,
    parts_left: usize,
    error: Option<io::Error>,
}

/// io_uring tail reader of one event loop.
pub struct UringReader {
    ring: EventRing,
    pending: Slab<Pending>,
}

impl UringReader {
    /// Creates a ring of `entries` submission slots with a registered eventfd.
    pub fn new(entries: u32) -> io::Result<UringReader> {
        Ok(UringReader {
            ring: EventRing::new(entries)?,
            pending: Slab::new(),
        })
    }

    /// The eventfd to register for readability in the event loop.
    pub fn eventfd(&self) -> i32 {
        self.ring.eventfd()
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
            // SAFETY: the buffer lives in `pending` until every part's completion is
            // reaped in drain().
            unsafe { self.ring.push(sqe) };
        }
    }

    /// Reaps completions and returns finished reads.
    pub fn drain(&mut self, out: &mut Vec<ReadDone>) {
        for (data, res) in self.ring.completions() {
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
    }
}
