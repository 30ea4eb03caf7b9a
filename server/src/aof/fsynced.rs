//! The replication offset the AOF holds on disk (Redis's fsynced_reploff_pending): what
//! WAITAOF's `numlocal` waits for, and what a replica reports with `REPLCONF ACK <offset>
//! FACK <aofoffset>`.
//!
//! An fsync makes durable everything written before it, so it carries a [`Mark`]: the
//! replication offset when the file was written, taken before the fsync starts. The thread
//! that ran it (the everysec thread, the close thread, or the loop under `always`) records
//! the mark once the fsync succeeded. The loop copies the recorded offset into
//! [`super::Aof::fsynced_reploff`] once per iteration.
//!
//! The offsets of one history only grow, but a replica that syncs with another master
//! starts a new one (which may be lower): [`FsyncedOffset::reset`] starts an epoch, and a
//! mark taken in an earlier epoch (an fsync still running over the switch) is dropped when
//! it completes (Redis drains its fsync thread for the same reason).

use std::sync::{Arc, Mutex};

/// The epoch and the offset last recorded in it.
#[derive(Debug, Default)]
struct Recorded {
    epoch: u64,
    offset: u64,
}

/// The offset the fsyncs made durable, shared with the threads that run them.
#[derive(Debug, Clone, Default)]
pub struct FsyncedOffset(Arc<Mutex<Recorded>>);

/// An fsync's claim: once it succeeded, the stream up to `offset` is on disk.
#[derive(Debug)]
pub struct Mark {
    target: FsyncedOffset,
    epoch: u64,
    offset: u64,
}

impl FsyncedOffset {
    fn lock(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The mark of an fsync starting now over what was written up to `offset`.
    pub fn mark(&self, offset: u64) -> Mark {
        Mark {
            target: self.clone(),
            epoch: self.lock().epoch,
            offset,
        }
    }

    /// The offset recorded last.
    pub fn get(&self) -> u64 {
        self.lock().offset
    }

    /// Starts a new epoch at `offset`: the marks taken before it are dropped.
    pub fn reset(&self, offset: u64) {
        let mut r = self.lock();
        r.epoch += 1;
        r.offset = offset;
    }
}

impl Mark {
    /// Records the mark (its fsync succeeded), unless its epoch is over. Two fsyncs of the
    /// same epoch may end in either order (the close thread's and the everysec thread's):
    /// the larger offset stays.
    pub fn record(self) {
        let mut r = self.target.lock();
        if r.epoch == self.epoch && self.offset > r.offset {
            r.offset = self.offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_of_an_ended_epoch_are_dropped_and_offsets_only_grow_within_one() {
        let f = FsyncedOffset::default();
        let (early, late) = (f.mark(10), f.mark(20));
        late.record();
        early.record();
        assert_eq!(f.get(), 20, "the close thread's older fsync ended last");
        let stale = f.mark(30);
        f.reset(5);
        stale.record();
        assert_eq!(f.get(), 5, "an fsync of the previous history");
        f.mark(7).record();
        assert_eq!(f.get(), 7);
    }
}
