//! Stream entry ids: a millisecond time and a sequence number, ordered as a 128-bit number.

use std::fmt;

/// Room for an id's decimal text: two 20-digit numbers and the dash.
pub const ID_TEXT_LEN: usize = 41;

/// An entry id, `<ms>-<seq>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part.
    pub seq: u64,
}

impl StreamId {
    /// `0-0`, the smallest id (`-`).
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest id (`+`).
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// The id `ms-seq`.
    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The next id, None after [`StreamId::MAX`].
    pub fn next(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (u64::MAX, u64::MAX) => None,
            (ms, u64::MAX) => Some(StreamId::new(ms + 1, 0)),
            (ms, seq) => Some(StreamId::new(ms, seq + 1)),
        }
    }

    /// The previous id, None before [`StreamId::MIN`].
    pub fn prev(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (0, 0) => None,
            (ms, 0) => Some(StreamId::new(ms - 1, u64::MAX)),
            (ms, seq) => Some(StreamId::new(ms, seq - 1)),
        }
    }

    /// The decimal text `<ms>-<seq>`, written at the start of `buf` (no allocation).
    pub fn format(self, buf: &mut [u8; ID_TEXT_LEN]) -> &[u8] {
        let (mut ms, mut seq) = (itoa::Buffer::new(), itoa::Buffer::new());
        let (ms, seq) = (
            ms.format(self.ms).as_bytes(),
            seq.format(self.seq).as_bytes(),
        );
        let dash = ms.len();
        let end = dash + 1 + seq.len();
        buf[..dash].copy_from_slice(ms);
        buf[dash] = b'-';
        buf[dash + 1..end].copy_from_slice(seq);
        &buf[..end]
    }

    /// Whether this is `0-0`.
    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The 16-byte big-endian form (Redis's rax keys and RDB PEL entries).
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut b = [0; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    /// The id of a 16-byte big-endian key.
    pub fn from_be_bytes(b: [u8; 16]) -> StreamId {
        let (ms, seq) = b.split_at(8);
        StreamId::new(
            u64::from_be_bytes(ms.try_into().expect("8 bytes")),
            u64::from_be_bytes(seq.try_into().expect("8 bytes")),
        )
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0; ID_TEXT_LEN];
        f.write_str(std::str::from_utf8(self.format(&mut buf)).expect("ASCII digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::StreamId;

    #[test]
    fn neighbours_wrap_the_sequence_and_stop_at_the_ends() {
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::MIN.prev(), None);
        let id = StreamId::new(0x0102, 7);
        assert_eq!(StreamId::from_be_bytes(id.to_be_bytes()), id);
        assert!(StreamId::new(1, 9) < StreamId::new(2, 0));
        assert_eq!(id.to_string(), "258-7");
        assert_eq!(
            StreamId::MAX.to_string(),
            format!("{}-{}", u64::MAX, u64::MAX)
        );
        assert_eq!(StreamId::MIN.to_string(), "0-0");
    }
}
