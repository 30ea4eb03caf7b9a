//! The replication buffer: the stream's recent bytes in one list of blocks that the backlog
//! and every replica share (Redis 7's shared replication buffer), so that a stream byte is
//! held once however many replicas still have to receive it.
//!
//! Offsets count stream bytes from 1: after `n` bytes were fed, the offset of the last byte
//! is `n` (Redis's master_repl_offset). The blocks hold the bytes from
//! [`first_offset`](Backlog::first_offset) to [`offset`](Backlog::offset); a replica whose
//! processed offset is `o` asks for `o + 1`.
//!
//! # Layout
//!
//! ```text
//! blocks: [start=s0, len=cap0] [start=s1=s0+cap0, len=cap1] ... [start=sn, len<=capn]  <- tail
//!          ^ trimmed from the head           a replica's position: the offset of the
//!                                            next byte it gets (a block and a place in it)
//! ```
//!
//! Every block but the tail is full. A block's capacity is the bytes appended when it was
//! made, at least 16 KiB and at most max(repl-backlog-size / 16, 16 KiB) (Redis's sizes:
//! big enough to append to, small enough to trim). A block costs its capacity and
//! [`BLOCK_OVERHEAD`] (Redis's block header and list node), which is what
//! [`memory`](Backlog::memory) sums (mem_total_replication_buffers).
//!
//! A replica refers to the block holding its position (the tail when it has everything).
//! The head block is dropped only when the history without it still passes
//! repl-backlog-size and no replica refers to it or an earlier byte
//! ([`trim`](Backlog::trim)): a slow replica makes the backlog outgrow its size, and a
//! partial resync may use that longer history.

use std::collections::VecDeque;

/// The smallest block (Redis's PROTO_REPLY_CHUNK_BYTES).
pub const MIN_BLOCK: usize = 16 * 1024;

/// What a block costs beyond its bytes: Redis's replBufBlock header (40 bytes) and list
/// node (24 bytes).
pub const BLOCK_OVERHEAD: usize = 64;

/// One block: the stream bytes from offset `start` on.
#[derive(Debug, Clone)]
struct Block {
    start: u64,
    /// Its bytes; the capacity is fixed when the block is made.
    data: Vec<u8>,
}

impl Block {
    /// Offset one past its last byte.
    fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }

    fn room(&self) -> usize {
        self.data.capacity() - self.data.len()
    }
}

/// The shared replication buffer.
#[derive(Debug, Clone)]
pub struct Backlog {
    blocks: VecDeque<Block>,
    /// repl-backlog-size: the history kept when no replica holds more.
    size: usize,
    /// Bytes held in the blocks (repl_backlog_histlen).
    histlen: usize,
    /// Offset of the last byte fed.
    offset: u64,
    /// Bytes the blocks cost (Redis's repl_buffer_mem).
    memory: usize,
}

impl Backlog {
    /// An empty buffer keeping `size` bytes of history (at least 1), whose stream so far
    /// ends at `offset`.
    pub fn new(size: usize, offset: u64) -> Backlog {
        Backlog {
            blocks: VecDeque::new(),
            size: size.max(1),
            histlen: 0,
            offset,
            memory: 0,
        }
    }

    /// repl-backlog-size (repl_backlog_size).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Bytes of history held (repl_backlog_histlen); more than the size while a replica
    /// holds older blocks.
    pub fn histlen(&self) -> usize {
        self.histlen
    }

    /// Offset of the last byte fed (master_repl_offset).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Offset of the oldest byte held (repl_backlog_first_byte_offset); `offset() + 1` when
    /// nothing is held.
    pub fn first_offset(&self) -> u64 {
        self.offset + 1 - self.histlen as u64
    }

    /// What the blocks cost in bytes (mem_total_replication_buffers).
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// Whether a replica may continue from offset `from`: the buffer holds every byte
    /// from it on (`from == offset() + 1`, nothing to send, is valid).
    pub fn covers(&self, from: u64) -> bool {
        from >= self.first_offset() && from <= self.offset + 1
    }

    /// Appends stream bytes; true when a new block was made (the moment Redis checks the
    /// replicas' output limits and trims).
    pub fn feed(&mut self, mut data: &[u8]) -> bool {
        let mut added = false;
        while !data.is_empty() {
            let n = match self.blocks.back_mut().filter(|b| b.room() > 0) {
                Some(tail) => {
                    let n = tail.room().min(data.len());
                    tail.data.extend_from_slice(&data[..n]);
                    n
                }
                None => {
                    let largest = (self.size / 16).max(MIN_BLOCK);
                    let capacity = data.len().clamp(MIN_BLOCK, largest);
                    let mut bytes = Vec::with_capacity(capacity);
                    let n = capacity.min(data.len());
                    bytes.extend_from_slice(&data[..n]);
                    self.memory += bytes.capacity() + BLOCK_OVERHEAD;
                    self.blocks.push_back(Block {
                        start: self.offset + 1,
                        data: bytes,
                    });
                    added = true;
                    n
                }
            };
            self.offset += n as u64;
            self.histlen += n;
            data = &data[n..];
        }
        added
    }

    /// Index of the block a replica at position `pos` refers to: the one holding `pos`, or
    /// the tail when it has everything. None when `pos` is not in the buffer (or it holds
    /// no block). The tail, where a streaming replica is, is tried first; other positions
    /// are found by a binary search of the blocks' starts.
    fn block_of(&self, pos: u64) -> Option<usize> {
        if !self.covers(pos) {
            return None;
        }
        let last = self.blocks.len().checked_sub(1)?;
        if pos >= self.blocks[last].start {
            return Some(last);
        }
        Some(self.blocks.partition_point(|b| b.end() <= pos))
    }

    /// The bytes a replica at position `pos` gets next: the rest of its block (empty when
    /// it has everything, or `pos` is not in the buffer).
    pub fn pending_from(&self, pos: u64) -> &[u8] {
        match self.block_of(pos) {
            Some(i) => {
                let b = &self.blocks[i];
                &b.data[(pos - b.start) as usize..]
            }
            None => &[],
        }
    }

    /// The last `n` bytes of history (fewer when less is held), oldest first: what Redis's
    /// showLatestBacklog logs.
    pub fn latest(&self, n: usize) -> Vec<u8> {
        let mut parts = Vec::new();
        let mut left = n.min(self.histlen);
        for b in self.blocks.iter().rev() {
            if left == 0 {
                break;
            }
            let take = left.min(b.data.len());
            parts.push(&b.data[b.data.len() - take..]);
            left -= take;
        }
        parts.into_iter().rev().flatten().copied().collect()
    }

    /// Whether bytes wait for a replica at position `pos`.
    pub fn has_pending(&self, pos: u64) -> bool {
        self.covers(pos) && pos <= self.offset
    }

    /// A replica's output memory as Redis counts it (getClientOutputBufferMemoryUsage):
    /// from the start of the block it refers to, every block's capacity and overhead to
    /// the tail's. Every block but the tail is full, so the capacities add up to the
    /// offsets between that block's start and the tail's end of capacity: no walk of the
    /// blocks.
    pub fn usage_from(&self, pos: u64) -> usize {
        let (Some(i), Some(tail)) = (self.block_of(pos), self.blocks.back()) else {
            return 0;
        };
        let bytes = (tail.start - self.blocks[i].start) as usize + tail.data.capacity();
        bytes + (self.blocks.len() - i) * BLOCK_OVERHEAD
    }

    /// Whether a replica that moved from position `from` to `to` left the head block:
    /// the only move after which [`trim`](Backlog::trim) may drop a block.
    pub fn leaves_head(&self, from: u64, to: u64) -> bool {
        self.blocks.len() > 1 && from < self.blocks[0].end() && to >= self.blocks[0].end()
    }

    /// Whether the head block is past what repl-backlog-size keeps: [`trim`](Backlog::trim)
    /// would drop it if no replica referred to it.
    pub fn trimmable(&self) -> bool {
        self.blocks.len() > 1 && self.histlen - self.blocks[0].data.len() > self.size
    }

    /// Drops head blocks while the history without them is still longer than the size,
    /// none is the tail, and no replica refers to them: `oldest` is the smallest position
    /// of the replicas (None: no replica reads the buffer).
    pub fn trim(&mut self, oldest: Option<u64>) {
        while self.trimmable() {
            let head = &self.blocks[0];
            let len = head.data.len();
            if oldest.is_some_and(|p| p < head.end()) {
                break;
            }
            self.memory -= head.data.capacity() + BLOCK_OVERHEAD;
            self.histlen -= len;
            self.blocks.pop_front();
        }
    }

    /// Changes repl-backlog-size; a smaller one trims at once what no replica holds.
    pub fn resize(&mut self, size: usize, oldest: Option<u64>) {
        self.size = size.max(1);
        self.trim(oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a replica at `pos` reads until it has everything.
    fn read_all(b: &Backlog, mut pos: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while b.has_pending(pos) {
            let chunk = b.pending_from(pos);
            assert!(!chunk.is_empty());
            out.extend_from_slice(chunk);
            pos += chunk.len() as u64;
        }
        out
    }

    /// A replica's usage by summing the blocks from the one it refers to (the tail when it
    /// has everything).
    fn usage_by_walk(b: &Backlog, pos: u64) -> usize {
        let last = b.blocks.len().saturating_sub(1);
        b.blocks
            .iter()
            .enumerate()
            .filter(|&(i, block)| block.end() > pos || i == last)
            .map(|(_, block)| block.data.capacity() + BLOCK_OVERHEAD)
            .sum()
    }

    #[test]
    fn trimmed_only_past_the_size_when_the_head_is_left() {
        let mut b = Backlog::new(1, 0);
        b.feed(&vec![b'x'; MIN_BLOCK]);
        assert!(!b.trimmable(), "one block");
        b.feed(b"0123456789");
        assert!(b.trimmable());
        let head_end = MIN_BLOCK as u64 + 1;
        assert!(b.leaves_head(1, head_end) && b.leaves_head(5, head_end + 3));
        assert!(!b.leaves_head(1, head_end - 1), "still in it");
        assert!(!b.leaves_head(head_end, head_end + 5), "never in it");
    }

    #[test]
    fn the_latest_bytes_span_blocks() {
        let mut b = Backlog::new(1, 0);
        assert!(b.latest(256).is_empty());
        b.feed(&vec![b'x'; MIN_BLOCK]);
        b.feed(b"0123456789");
        assert_eq!(b.latest(4), b"6789");
        let mut expected = vec![b'x'; 6];
        expected.extend_from_slice(b"0123456789");
        assert_eq!(
            b.latest(16),
            expected,
            "the head block's end, then the tail"
        );
        assert_eq!(b.latest(usize::MAX).len(), MIN_BLOCK + 10);
    }

    #[test]
    fn offsets_as_redis_reports_them() {
        let mut b = Backlog::new(8, 0);
        assert_eq!((b.first_offset(), b.histlen(), b.offset()), (1, 0, 0));
        assert!(b.covers(1) && !b.covers(2));
        assert_eq!((b.memory(), b.usage_from(1)), (0, 0));
        assert!(b.feed(b"abcde"), "the first block");
        assert!(!b.feed(b"fghij"), "room in it");
        assert_eq!((b.first_offset(), b.histlen(), b.offset()), (1, 10, 10));
        assert_eq!(read_all(&b, 3), b"cdefghij");
        assert_eq!(b.memory(), MIN_BLOCK + BLOCK_OVERHEAD);
        assert_eq!(
            b.usage_from(11),
            b.memory(),
            "an idle replica refers to the tail"
        );
    }

    #[test]
    fn a_replica_holds_blocks_past_the_size() {
        let mut b = Backlog::new(MIN_BLOCK, 0);
        let chunk = vec![b'x'; MIN_BLOCK];
        for _ in 0..4 {
            b.feed(&chunk);
            b.trim(Some(1));
        }
        assert_eq!(
            b.histlen(),
            4 * MIN_BLOCK,
            "the replica at 1 holds everything"
        );
        assert_eq!(b.usage_from(1), 4 * (MIN_BLOCK + BLOCK_OVERHEAD));
        assert_eq!(
            b.usage_from(3 * MIN_BLOCK as u64 + 1),
            MIN_BLOCK + BLOCK_OVERHEAD
        );
        b.trim(Some(2 * MIN_BLOCK as u64 + 1));
        assert_eq!(b.histlen(), 2 * MIN_BLOCK, "two blocks the replica passed");
        b.trim(None);
        assert_eq!(b.histlen(), 2 * MIN_BLOCK, "never under the size");
        assert_eq!(b.first_offset(), 2 * MIN_BLOCK as u64 + 1);
        b.resize(1, None);
        assert_eq!(b.histlen(), MIN_BLOCK, "the tail stays");
        assert_eq!(b.memory(), MIN_BLOCK + BLOCK_OVERHEAD);
    }

    #[test]
    fn blocks_are_sized_by_the_backlog_size() {
        let mut b = Backlog::new(1 << 20, 0);
        b.feed(&vec![0; 200 * 1024]);
        // 64 KiB blocks (1 MiB / 16), the last one made for the 8 KiB left: 16 KiB.
        assert_eq!(b.memory(), 4 * BLOCK_OVERHEAD + 3 * 64 * 1024 + MIN_BLOCK);
    }

    proptest! {
        /// The buffer always answers the stream's bytes from any offset it covers, holds
        /// at least the last `size` bytes, and everything from the oldest replica on.
        #[test]
        fn holds_the_streams_last_bytes(
            size in 1usize..40_000,
            start in 0u64..1000,
            feeds in proptest::collection::vec(0usize..30_000, 0..20),
            reader in proptest::option::of(0usize..100_000),
        ) {
            let mut b = Backlog::new(size, start);
            let mut all: Vec<u8> = Vec::new();
            for (i, n) in feeds.iter().enumerate() {
                let bytes: Vec<u8> = (0..*n).map(|j| (i * 7 + j) as u8).collect();
                b.feed(&bytes);
                all.extend_from_slice(&bytes);
                let end = start + all.len() as u64;
                let oldest = reader.map(|r| start + 1 + (r as u64).min(all.len() as u64));
                b.trim(oldest);
                prop_assert_eq!(b.offset(), end);
                prop_assert!(b.histlen() >= size.min(all.len()));
                if let Some(p) = oldest {
                    prop_assert!(b.covers(p));
                }
                for from in [b.first_offset(), (b.first_offset() + end).div_ceil(2), end + 1] {
                    let expect = &all[(from - start - 1) as usize..];
                    prop_assert_eq!(read_all(&b, from), expect);
                    prop_assert_eq!(b.usage_from(from), usage_by_walk(&b, from));
                }
                prop_assert!(!b.covers(end + 2));
            }
        }
    }
}
