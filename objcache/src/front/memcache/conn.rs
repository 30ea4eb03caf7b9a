//! The state of one memcache connection beside its socket: the protocol [`Session`] and how
//! far its front reply was written. Replies accumulate in one buffer while a batch of
//! requests runs, so a batch of RAM-resident replies (and any single one up to 16 KiB)
//! leaves in one send.

use goblin_evloop::write_some;
use goblin_evloop::Stream;

use super::session::Session;
use super::Segment;
use crate::store::stats;
use crate::store::Store;

/// A client connection's state.
#[derive(Default)]
pub struct Conn {
    /// Protocol state and pending replies.
    pub session: Session,
    written: usize,
    /// The last flush stopped on a full socket buffer.
    pub blocked: bool,
}

impl Conn {
    /// Sends ready output to `stream` up to the first reply still waiting for a tail.
    /// Returns false when the socket failed. Sets `blocked` when the socket buffer is full.
    /// The last buffer is kept, cleared, for the next replies.
    pub fn flush(&mut self, stream: &mut Stream, store: &Store) -> bool {
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
            match write_some(stream, &b[self.written..]) {
                Ok(Some(n)) => {
                    stats::add(&store.stats.bytes_written, n as u64);
                    self.written += n;
                }
                Ok(None) => {
                    self.blocked = true;
                    return true;
                }
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
