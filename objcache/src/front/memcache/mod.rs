//! The memcache front: the text protocol of memcached 1.6 on its own event loops.
//!
//! - [`binary`]: the binary protocol's framing, each packet answered with memcached's
//!   error for an opcode it does not implement.
//! - [`parse`] turns lines into requests; [`exec`] runs the classic commands and [`meta`]
//!   the meta commands ([`base64`] for their binary keys); [`slabs`] says where memcached
//!   would keep an object (for `me` and `stats items`).
//! - [`session`] drives them over a byte stream, writing replies into an [`Output`] whose
//!   segments keep pipelined replies in order while SSD tails are read.
//! - [`conn`]: a socket and its session; [`event_loop`]: the loops that accept, read, run
//!   sessions, submit tail reads and write.
//! - [`dump`]: the key dumps, `lru_crawler metadump` and `stats cachedump`.

pub mod base64;
pub mod binary;
pub mod conn;
pub mod dump;
pub mod event_loop;
pub mod exec;
pub mod meta;
pub mod parse;
pub mod session;
pub mod slabs;

use std::collections::VecDeque;

use crate::store::TailRef;

/// A reply part that waits for an SSD tail: `prefix` (header line and RAM head), then the
/// tail, then CRLF; or `on_fail` if the tail read fails or finds another object.
pub struct TailFetch {
    /// Bytes before the tail.
    pub prefix: Vec<u8>,
    /// The tail to read.
    pub tail: TailRef,
    /// Reply instead of the whole part when the read fails.
    pub on_fail: Vec<u8>,
    /// Read token once submitted.
    pub token: Option<u64>,
}

/// One part of a connection's pending output.
pub enum Segment {
    /// Ready bytes.
    Bytes(Vec<u8>),
    /// A reply waiting for a tail read.
    Tail(TailFetch),
}

/// Replies of one connection, in request order.
#[derive(Default)]
pub struct Output {
    /// Parts not yet written.
    pub segs: VecDeque<Segment>,
    /// A sent buffer kept for the next replies, so steady traffic does not allocate.
    spare: Vec<u8>,
}

impl Output {
    /// The ready buffer at the end, for appending.
    pub fn bytes(&mut self) -> &mut Vec<u8> {
        if !matches!(self.segs.back(), Some(Segment::Bytes(_))) {
            self.segs
                .push_back(Segment::Bytes(Vec::with_capacity(16 << 10)));
        }
        match self.segs.back_mut() {
            Some(Segment::Bytes(b)) => b,
            _ => unreachable!("a bytes segment was just pushed"),
        }
    }

    /// Appends a reply line and CRLF.
    pub fn line(&mut self, text: &str) {
        let b = self.bytes();
        b.extend_from_slice(text.as_bytes());
        b.extend_from_slice(b"\r\n");
    }

    /// Takes back a sent buffer for reuse (buffers grown past 1 MiB are freed instead).
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if buf.capacity() <= 1 << 20 && buf.capacity() > self.spare.capacity() {
            buf.clear();
            self.spare = buf;
        }
    }

    /// Appends a part that waits for a tail.
    pub fn push_tail(&mut self, fetch: TailFetch) {
        self.segs.push_back(Segment::Tail(fetch));
    }

    /// Moves every part of `other` to the end of this output.
    pub fn append(&mut self, other: Output) {
        for seg in other.segs {
            match seg {
                Segment::Bytes(b) => self.bytes().extend_from_slice(&b),
                t => self.segs.push_back(t),
            }
        }
    }

    /// True while a part waits for a tail read.
    pub fn waits_for_tail(&self) -> bool {
        self.segs.iter().any(|s| matches!(s, Segment::Tail(_)))
    }

    /// Bytes waiting in ready parts.
    pub fn ready_len(&self) -> usize {
        self.segs
            .iter()
            .map(|s| {
                if let Segment::Bytes(b) = s {
                    b.len()
                } else {
                    0
                }
            })
            .sum()
    }
}

/// Appends `n` in decimal without allocating.
pub fn push_u64(buf: &mut Vec<u8>, n: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Appends a `VALUE <key> <flags> <bytes>[ <cas>]` line with its CRLF.
pub fn push_value_line(buf: &mut Vec<u8>, key: &[u8], flags: u32, size: u32, cas: Option<u64>) {
    buf.extend_from_slice(b"VALUE ");
    buf.extend_from_slice(key);
    buf.push(b' ');
    push_u64(buf, u64::from(flags));
    buf.push(b' ');
    push_u64(buf, u64::from(size));
    if let Some(c) = cas {
        buf.push(b' ');
        push_u64(buf, c);
    }
    buf.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_value_lines() {
        let mut b = Vec::new();
        push_u64(&mut b, 0);
        b.push(b' ');
        push_u64(&mut b, u64::MAX);
        assert_eq!(b, b"0 18446744073709551615");
        let mut v = Vec::new();
        push_value_line(&mut v, b"k", 7, 1024, Some(99));
        assert_eq!(v, b"VALUE k 7 1024 99\r\n");
    }
}
