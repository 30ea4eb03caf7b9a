//! A tail sent as it is read: the SSD extent is read one --io-chunk at a time, at most
//! [`READ_AHEAD`] chunks read or in flight per stream, and each chunk is written to the
//! client as soon as its read completes and the bytes before it are sent. A hit's time to
//! first byte and the memory it holds so no longer depend on its size, and a client that
//! stops reading stops the reads too (a sent chunk is what makes room for the next).
//!
//! ```text
//! extent:  [hdr|.......... tail ..........|pad]
//! chunks:  |  c0  |  c1  |  c2  |  c3  |  c4 |     io-chunk each, page aligned
//! send:        [from ...................to)        TAIL_HEADER + the range
//! slots:         c1 (sent)  c2 (read)  c3 (in flight)   <- at most READ_AHEAD
//! ```
//!
//! Only the first chunk holds the header a read is checked against; the later chunks are
//! the object's because the stream pins the extent for as long as it lives ([`TailPin`],
//! see the pinning comment in `store::tail::extents`): the pin is taken under the shard
//! lock while the entry still owns the extent, and dropped with the stream, when its bytes
//! are sent or its connection closes. A tail from the hot-tail cache is one RAM buffer and
//! needs no pin. A stream of a whole tail the cache would keep collects its chunks and hands
//! the assembled extent to the cache once the last one arrives.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use crate::store::{AlignedBuf, Store, TailRef, TAIL_HEADER};

/// Most chunks read or in flight per stream.
pub const READ_AHEAD: usize = 4;

/// A pin of a tail's extent against reuse, dropped with it.
pub struct TailPin {
    store: Arc<Store>,
    tail: TailRef,
}

impl TailPin {
    /// Pins `tail`'s extent; `None` when its object version is gone.
    pub fn new(store: &Arc<Store>, tail: &TailRef) -> Option<TailPin> {
        store.pin(tail).then(|| TailPin {
            store: Arc::clone(store),
            tail: *tail,
        })
    }
}

impl Drop for TailPin {
    fn drop(&mut self) {
        self.store.unpin(&self.tail);
    }
}

/// One chunk of the extent: requested (its read's token), then read.
struct Slot {
    /// Extent offset of its first byte.
    start: usize,
    token: Option<u64>,
    buf: Option<Arc<AlignedBuf>>,
}

/// What a completed read did to a stream.
pub enum Completed {
    /// The chunk is in; with the assembled extent when the hot-tail cache is to get it.
    Read(Option<AlignedBuf>),
    /// The first chunk's header is not the object's: the tail cannot be trusted.
    BadHeader,
}

/// A tail range being read and sent.
pub struct TailStream {
    /// The tail.
    pub tail: TailRef,
    /// The object was read before: the hot-tail cache may take it.
    pub hot: bool,
    /// Extent bytes to send: `TAIL_HEADER` plus the range of the tail.
    send: Range<usize>,
    /// Extent offset of the next chunk to request; the end of reads.
    next: usize,
    end: usize,
    chunk: usize,
    slots: VecDeque<Slot>,
    pin: Option<TailPin>,
    /// Chunks received so far, kept for the hot-tail cache (a whole tail it wants).
    keep: Option<Vec<Option<Arc<AlignedBuf>>>>,
}

impl TailStream {
    /// A stream of bytes `range` of `tail`, read in `chunk`-byte pieces; `cached` is the
    /// tail's extent from the hot-tail cache, if it is there (then nothing is read).
    pub fn new(
        tail: TailRef,
        range: Range<usize>,
        chunk: usize,
        hot: bool,
        cached: Option<Arc<AlignedBuf>>,
    ) -> TailStream {
        let send = TAIL_HEADER + range.start..TAIL_HEADER + range.end;
        let mut s = TailStream {
            tail,
            hot,
            next: send.start / chunk * chunk,
            end: send.end.div_ceil(4096) * 4096,
            send,
            chunk,
            slots: VecDeque::new(),
            pin: None,
            keep: None,
        };
        if let Some(buf) = cached {
            s.next = s.end;
            s.slots.push_back(Slot {
                start: 0,
                token: None,
                buf: Some(buf),
            });
        }
        s
    }

    /// True while the stream still has to read from the extent (so it must be pinned).
    pub fn reads(&self) -> bool {
        self.next < self.end
    }

    /// Pins the extent (see [`TailPin`]) and, when the stream sends the whole tail and the
    /// hot-tail cache `wants` it, keeps the chunks for it. False when the object is gone.
    pub fn pin(&mut self, store: &Arc<Store>) -> bool {
        self.pin = TailPin::new(store, &self.tail);
        let whole =
            self.send.start == TAIL_HEADER && self.send.end == TAIL_HEADER + self.tail.tail_len;
        if whole && store.tails.wants(self.tail.extent_len, self.hot) {
            self.keep = Some(vec![None; self.tail.extent_len.div_ceil(self.chunk)]);
        }
        self.pin.is_some()
    }

    /// Bytes of the range.
    pub fn len(&self) -> usize {
        self.send.len()
    }

    /// True for an empty range.
    pub fn is_empty(&self) -> bool {
        self.send.is_empty()
    }

    /// Requests chunks while fewer than [`READ_AHEAD`] are read or in flight: `read` queues
    /// the read of an extent range and returns its token.
    pub fn request(&mut self, mut read: impl FnMut(Range<usize>) -> u64) {
        while self.reads() && self.slots.len() < READ_AHEAD {
            let range = self.next..(self.next + self.chunk).min(self.end);
            self.next = range.end;
            self.slots.push_back(Slot {
                start: range.start,
                token: Some(read(range)),
                buf: None,
            });
        }
    }

    /// True when the read with `token` belongs to this stream.
    pub fn owns(&self, token: u64) -> bool {
        self.slots.iter().any(|s| s.token == Some(token))
    }

    /// Takes the finished read with `token`.
    pub fn complete(&mut self, token: u64, buf: AlignedBuf) -> Completed {
        let Some(slot) = self.slots.iter_mut().find(|s| s.token == Some(token)) else {
            return Completed::Read(None);
        };
        if slot.start == 0 && !self.tail.verify_header(&buf) {
            return Completed::BadHeader;
        }
        let buf = Arc::new(buf);
        slot.token = None;
        slot.buf = Some(Arc::clone(&buf));
        let Some(keep) = self.keep.as_mut() else {
            return Completed::Read(None);
        };
        keep[slot.start / self.chunk] = Some(buf);
        if keep.iter().any(Option::is_none) {
            return Completed::Read(None);
        }
        let mut whole = AlignedBuf::new(self.tail.extent_len);
        for (i, piece) in self.keep.take().into_iter().flatten().flatten().enumerate() {
            let at = i * self.chunk;
            let n = piece.len().min(whole.len() - at);
            whole[at..at + n].copy_from_slice(&piece[..n]);
        }
        Completed::Read(Some(whole))
    }

    /// True when the stream's first bytes can be written now (from the hot-tail cache, or
    /// a chunk that arrived).
    pub fn has_bytes_ready(&self) -> bool {
        self.slots.front().is_some_and(|s| s.buf.is_some())
    }

    /// The bytes to write next, `sent` bytes of the range being written already, and
    /// whether they may be spliced (their buffer owns its mapping and is never written
    /// again, see `super::splice`); `None` while their chunk is being read. Chunks sent are
    /// dropped, making room for reads.
    pub fn ready(&mut self, sent: usize) -> Option<(&[u8], bool)> {
        let at = self.send.start + sent;
        if at >= self.send.end {
            return None;
        }
        while let Some(front) = self.slots.front() {
            match &front.buf {
                Some(b) if front.start + b.len() <= at => {
                    self.slots.pop_front();
                }
                _ => break,
            }
        }
        let front = self.slots.front()?;
        let buf = front.buf.as_ref()?;
        let to = self.send.end.min(front.start + buf.len());
        Some((&buf[at - front.start..to - front.start], buf.owns_pages()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Digest;

    fn tail(tail_len: usize) -> TailRef {
        TailRef {
            fd: -1,
            offset: 0,
            extent_len: (TAIL_HEADER + tail_len).div_ceil(4096) * 4096,
            tail_len,
            digest: Digest::of(b"k"),
            cas: 7,
        }
    }

    /// The extent of `t`: its header, then byte i of the tail is i as u8.
    fn extent(t: &TailRef) -> Vec<u8> {
        let mut v = vec![0u8; t.extent_len];
        v[..8].copy_from_slice(b"GOBTAIL1");
        v[8..40].copy_from_slice(&t.digest.0);
        v[40..48].copy_from_slice(&t.cas.to_le_bytes());
        v[48..56].copy_from_slice(&(t.tail_len as u64).to_le_bytes());
        for i in 0..t.tail_len {
            v[TAIL_HEADER + i] = i as u8;
        }
        v
    }

    fn read_of(ext: &[u8], r: Range<usize>) -> AlignedBuf {
        let mut b = AlignedBuf::new(r.len());
        b[..r.len()].copy_from_slice(&ext[r]);
        b
    }

    /// Streams `range` of a tail, completing reads in reverse order of request, and
    /// returns what was sent.
    fn stream(t: &TailRef, range: Range<usize>, keep: bool) -> (Vec<u8>, Option<AlignedBuf>) {
        let ext = extent(t);
        let mut s = TailStream::new(*t, range, 8192, false, None);
        if keep {
            s.keep = Some(vec![None; t.extent_len.div_ceil(8192)]);
        }
        let (mut out, mut whole, mut token) = (Vec::new(), None, 0);
        let mut reads: Vec<(u64, Range<usize>)> = Vec::new();
        while out.len() < s.len() {
            s.request(|r| {
                token += 1;
                reads.push((token, r));
                token
            });
            assert!(s.slots.len() <= READ_AHEAD);
            while let Some((b, _)) = s.ready(out.len()) {
                let b = b.to_vec();
                out.extend_from_slice(&b);
            }
            if let Some((tok, r)) = reads.pop() {
                assert!(s.owns(tok));
                match s.complete(tok, read_of(&ext, r)) {
                    Completed::Read(w) => whole = whole.or(w),
                    Completed::BadHeader => panic!("bad header"),
                }
            }
        }
        (out, whole)
    }

    #[test]
    fn streams_ranges_byte_exact() {
        let t = tail(50_000);
        let want: Vec<u8> = (0..t.tail_len).map(|i| i as u8).collect();
        let (all, whole) = stream(&t, 0..t.tail_len, true);
        assert_eq!(all, want);
        assert_eq!(&whole.unwrap()[..], &extent(&t)[..]);
        let (mid, none) = stream(&t, 20_000..30_001, false);
        assert_eq!(mid, &want[20_000..30_001]);
        assert!(none.is_none());
        let (end, _) = stream(&t, 49_999..50_000, false);
        assert_eq!(end, &want[49_999..]);
    }

    #[test]
    fn cached_tails_read_nothing_and_bad_headers_are_caught() {
        let t = tail(10_000);
        let ext = extent(&t);
        let mut s = TailStream::new(
            t,
            100..200,
            8192,
            false,
            Some(Arc::new(read_of(&ext, 0..ext.len()))),
        );
        assert!(!s.reads());
        s.request(|_| panic!("a cached tail is not read"));
        assert_eq!(
            s.ready(0).unwrap().0,
            &ext[TAIL_HEADER + 100..TAIL_HEADER + 200]
        );
        let mut s = TailStream::new(t, 0..10, 8192, false, None);
        s.request(|_| 1);
        let mut bad = ext.clone();
        bad[40] ^= 1;
        assert!(matches!(
            s.complete(1, read_of(&bad, 0..8192)),
            Completed::BadHeader
        ));
    }
}
