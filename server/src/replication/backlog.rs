//! The replication backlog: the last `repl-backlog-size` bytes of the replication stream in
//! a ring, with the offsets that say which part of the stream it holds, so that a replica
//! that lost its link can continue from where it was (PSYNC) instead of a full sync.
//!
//! Offsets count stream bytes from 1: after `n` bytes were fed, the offset of the last byte
//! is `n` (Redis's master_repl_offset). The backlog holds the bytes from
//! [`first_offset`](Backlog::first_offset) to [`offset`](Backlog::offset); a replica whose
//! processed offset is `o` asks for `o + 1`.

/// A ring of the stream's last bytes.
#[derive(Debug, Clone)]
pub struct Backlog {
    ring: Vec<u8>,
    /// Where the next byte goes in `ring`.
    idx: usize,
    /// Bytes of history held (at most `ring.len()`).
    histlen: usize,
    /// Offset of the last byte fed.
    offset: u64,
}

impl Backlog {
    /// An empty backlog of `size` bytes (at least 1) whose stream so far ends at `offset`.
    pub fn new(size: usize, offset: u64) -> Backlog {
        Backlog {
            ring: vec![0; size.max(1)],
            idx: 0,
            histlen: 0,
            offset,
        }
    }

    /// Capacity in bytes (repl_backlog_size).
    pub fn size(&self) -> usize {
        self.ring.len()
    }

    /// Bytes of history held (repl_backlog_histlen).
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

    /// Appends stream bytes, dropping the oldest ones past the capacity.
    pub fn feed(&mut self, mut data: &[u8]) {
        self.offset += data.len() as u64;
        let size = self.ring.len();
        if data.len() > size {
            data = &data[data.len() - size..];
        }
        while !data.is_empty() {
            let n = (size - self.idx).min(data.len());
            self.ring[self.idx..self.idx + n].copy_from_slice(&data[..n]);
            self.idx = (self.idx + n) % size;
            self.histlen = (self.histlen + n).min(size);
            data = &data[n..];
        }
    }

    /// The bytes from offset `from` to the end, if the backlog holds them all
    /// (`from == offset() + 1` gives nothing, and is valid).
    pub fn since(&self, from: u64) -> Option<Vec<u8>> {
        if from < self.first_offset() || from > self.offset + 1 {
            return None;
        }
        let len = (self.offset + 1 - from) as usize;
        let size = self.ring.len();
        let start = (self.idx + size - len % size) % size;
        let mut out = Vec::with_capacity(len);
        if len == 0 {
            return Some(out);
        }
        if start + len <= size {
            out.extend_from_slice(&self.ring[start..start + len]);
        } else {
            out.extend_from_slice(&self.ring[start..]);
            out.extend_from_slice(&self.ring[..len - (size - start)]);
        }
        Some(out)
    }

    /// Changes the capacity, keeping the newest history that fits.
    pub fn resize(&mut self, size: usize) {
        let size = size.max(1);
        if size == self.ring.len() {
            return;
        }
        let keep = self.histlen.min(size);
        let tail = self
            .since(self.offset + 1 - keep as u64)
            .expect("held history");
        let offset = self.offset;
        *self = Backlog::new(size, offset - keep as u64);
        self.feed(&tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn offsets_as_redis_reports_them() {
        let mut b = Backlog::new(8, 0);
        assert_eq!((b.first_offset(), b.histlen(), b.offset()), (1, 0, 0));
        assert_eq!(b.since(1), Some(vec![]));
        assert_eq!(b.since(2), None);
        b.feed(b"abcde");
        assert_eq!((b.first_offset(), b.histlen(), b.offset()), (1, 5, 5));
        assert_eq!(b.since(3).unwrap(), b"cde");
        b.feed(b"fghij");
        assert_eq!((b.first_offset(), b.histlen(), b.offset()), (3, 8, 10));
        assert_eq!(b.since(3).unwrap(), b"cdefghij");
        assert_eq!(b.since(2), None);
        assert_eq!(b.since(11).unwrap(), b"");
        b.resize(4);
        assert_eq!(b.since(7).unwrap(), b"ghij");
        assert_eq!(b.first_offset(), 7);
    }

    proptest! {
        /// The backlog always answers what the last `size` bytes of the whole stream are.
        #[test]
        fn holds_the_streams_last_bytes(
            size in 1usize..64,
            start in 0u64..1000,
            feeds in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..20),
            resize_to in proptest::option::of(1usize..64),
        ) {
            let mut b = Backlog::new(size, start);
            let mut all: Vec<u8> = Vec::new();
            let mut cap = size;
            for (i, f) in feeds.iter().enumerate() {
                b.feed(f);
                all.extend_from_slice(f);
                if i == feeds.len() / 2 {
                    if let Some(n) = resize_to {
                        b.resize(n);
                        cap = n;
                    }
                }
                let end = start + all.len() as u64;
                prop_assert_eq!(b.offset(), end);
                prop_assert!(b.histlen() <= cap);
                for from in b.first_offset()..=end + 1 {
                    let expect = &all[(from - start - 1) as usize..];
                    prop_assert_eq!(b.since(from).unwrap(), expect);
                }
                prop_assert!(b.since(b.first_offset().saturating_sub(1)).is_none() || b.first_offset() == 0);
                prop_assert!(b.since(end + 2).is_none());
            }
        }
    }
}
