//! One packed node: a run of list elements in one buffer, integers narrowed as listpack
//! narrows them, with its element count and the size Redis's listpack of the same
//! elements would have (the figure every fill limit and conversion of Redis 7.2 reads).
//!
//! ```text
//! buf: [count: u32 LE][lp_bytes: u32 LE][code|data][code|data]...
//!      count's top bit marks a plain node: one element too large for a packed one
//!      (Redis's PLAIN container), kept apart from its neighbours; the next bit a
//!      compressed node, whose buffer is instead
//!        [count: u32][lp_bytes: u32][raw_len: u32][LZF of Redis's node bytes]
//!      (the listpack Redis would hold, or a plain node's element: quicklist.c's
//!      __quicklistCompressNode input, so an RDB carries the LZF blob as Redis's)
//!      code 0x00..=0xEF  a string of that many bytes (0..239), the bytes follow
//!      code 0xF1 0xF2 0xF3 0xF4 0xF8
//!                        an integer (a string that is a canonical i64) in 1, 2, 3,
//!                        4 or 8 little-endian two's-complement bytes
//!      code 0xFF         a longer string: [len: u32 LE][bytes]
//!   cost: 8 per node; 1 + len per string below 240 B (a 16-byte element is 17 B),
//!         2..=9 per integer ("7" 2 B, "1234567" 4 B)
//! ```
//!
//! Entries are read front to back only (no back-length as in listpack: one byte less per
//! element), so reaching entry `i` walks `i` codes; a node holds at most a few hundred
//! elements under the default 8 KiB fill, and the quicklist around it skips whole nodes
//! by their counts.

use crate::lzf;
use crate::packed::{self, Item};
use crate::set::{parse_int, Member};

/// Bytes of the count and listpack size in front of the entries.
pub(super) const HEADER: usize = 8;
/// Largest string length kept in the code byte.
const MAX_SHORT: usize = 0xEF;
/// The code of a string with a 4-byte length.
const LONG: u8 = 0xFF;
/// The code of an integer of `w` bytes is `INT | w`.
const INT: u8 = 0xF0;
/// Redis's listpack header (total bytes, count) plus its end byte.
pub(super) const LP_OVERHEAD: usize = 6 + 1;
/// The plain-node bit of the count field.
const PLAIN: u32 = 1 << 31;
/// The compressed-node bit of the count field.
const COMPRESSED: u32 = 1 << 30;
/// Redis's `MIN_COMPRESS_BYTES`: smaller nodes are not compressed.
const MIN_COMPRESS_BYTES: usize = 48;
/// Redis's `MIN_COMPRESS_IMPROVE`: compression must save more than this many bytes.
const MIN_COMPRESS_IMPROVE: usize = 8;
/// Bytes in front of a compressed node's LZF data (the header and the raw length).
const LZF_HEADER: usize = HEADER + 4;
/// Spare bytes of a node made from a small list's entries kept elsewhere (the key's
/// record): the command that unpacks it mostly adds an element or two, which then need
/// no reallocation (a copy for the command's time only: its entries go back to the record).
const UNPACKED_ROOM: usize = 64;

/// An element ready to be stored: the integer it reads as, or its bytes.
#[derive(Clone, Copy)]
pub(super) enum Encoded<'a> {
    Int(i64),
    Bytes(&'a [u8]),
}

impl<'a> Encoded<'a> {
    /// `s` as listpack would store it: an integer when it is a canonical i64.
    pub(super) fn of(s: &'a [u8]) -> Encoded<'a> {
        match parse_int(s) {
            Some(v) => Encoded::Int(v),
            None => Encoded::Bytes(s),
        }
    }

    /// Bytes of this element's entry in a node.
    fn stored_len(self) -> usize {
        match self {
            Encoded::Int(v) => 1 + int_width(v),
            Encoded::Bytes(b) if b.len() <= MAX_SHORT => 1 + b.len(),
            Encoded::Bytes(b) => 5 + b.len(),
        }
    }

    /// Bytes of this element's entry in Redis's listpack (encoding, data, back-length).
    fn lp_len(self) -> usize {
        let enc = match self {
            Encoded::Int(v) => match v {
                0..=127 => 1,
                -4096..=4095 => 2,
                -32768..=32767 => 3,
                -8_388_608..=8_388_607 => 4,
                -2_147_483_648..=2_147_483_647 => 5,
                _ => 9,
            },
            Encoded::Bytes(b) if b.len() < 64 => 1 + b.len(),
            Encoded::Bytes(b) if b.len() < 4096 => 2 + b.len(),
            Encoded::Bytes(b) => 5 + b.len(),
        };
        let backlen = match enc {
            0..=127 => 1,
            128..=16_383 => 2,
            16_384..=2_097_151 => 3,
            2_097_152..=268_435_455 => 4,
            _ => 5,
        };
        enc + backlen
    }

    /// Appends this element's entry to `out`.
    fn write(self, out: &mut Vec<u8>) {
        match self {
            Encoded::Int(v) => {
                let w = int_width(v);
                out.push(INT | w as u8);
                out.extend_from_slice(&v.to_le_bytes()[..w]);
            }
            Encoded::Bytes(b) if b.len() <= MAX_SHORT => {
                out.push(b.len() as u8);
                out.extend_from_slice(b);
            }
            Encoded::Bytes(b) => {
                out.push(LONG);
                let len = u32::try_from(b.len()).expect("list element under 4 GiB");
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
}

/// The narrowest of 1, 2, 3, 4 or 8 bytes holding `v`.
fn int_width(v: i64) -> usize {
    match v {
        -128..=127 => 1,
        -32768..=32767 => 2,
        -8_388_608..=8_388_607 => 3,
        -2_147_483_648..=2_147_483_647 => 4,
        _ => 8,
    }
}

/// The element at `pos` of `buf` and the offset after it.
#[inline]
fn decode(buf: &[u8], pos: usize) -> (Member<'_>, usize) {
    let code = buf[pos];
    match code {
        0..=0xEF => {
            let end = pos + 1 + code as usize;
            (Member::Bytes(&buf[pos + 1..end]), end)
        }
        LONG => {
            let len = u32::from_le_bytes(buf[pos + 1..pos + 5].try_into().expect("4 bytes"));
            let end = pos + 5 + len as usize;
            (Member::Bytes(&buf[pos + 5..end]), end)
        }
        _ => {
            let w = (code & 0x0F) as usize;
            let mut le = [0u8; 8];
            le[..w].copy_from_slice(&buf[pos + 1..pos + 1 + w]);
            // Sign-extend from w bytes.
            let shift = 64 - 8 * w as u32;
            let v = (i64::from_le_bytes(le) << shift) >> shift;
            (Member::Int(v), pos + 1 + w)
        }
    }
}

/// The offset after the element at `pos`, without decoding it.
#[inline]
fn skip(buf: &[u8], pos: usize) -> usize {
    let code = buf[pos];
    match code {
        0..=0xEF => pos + 1 + code as usize,
        LONG => {
            pos + 5
                + u32::from_le_bytes(buf[pos + 1..pos + 5].try_into().expect("4 bytes")) as usize
        }
        _ => pos + 1 + (code & 0x0F) as usize,
    }
}

/// Whether `m` reads as the bytes `s` (encoded as `e`).
#[inline]
pub(super) fn member_eq(m: Member, e: Encoded) -> bool {
    match (m, e) {
        (Member::Int(a), Encoded::Int(b)) => a == b,
        (Member::Bytes(a), Encoded::Bytes(b)) => a == b,
        _ => false,
    }
}

/// A run of elements in one buffer.
#[derive(Clone, Debug)]
pub(super) struct Node {
    buf: Vec<u8>,
}

impl Default for Node {
    fn default() -> Node {
        let mut buf = vec![0; HEADER];
        buf[4..8].copy_from_slice(&(LP_OVERHEAD as u32).to_le_bytes());
        Node { buf }
    }
}

impl Node {
    fn count_field(&self) -> u32 {
        u32::from_le_bytes(self.buf[..4].try_into().expect("4 bytes"))
    }

    /// Number of elements.
    #[inline]
    pub(super) fn count(&self) -> usize {
        (self.count_field() & !(PLAIN | COMPRESSED)) as usize
    }

    /// Whether the node is held LZF-compressed (its entries unreadable until
    /// [`Node::decompressed`]).
    #[inline]
    pub(super) fn compressed(&self) -> bool {
        self.count_field() & COMPRESSED != 0
    }

    /// The bytes Redis's node holds: its listpack, or a plain node's element.
    fn redis_bytes(&self) -> Vec<u8> {
        if self.plain() {
            return self.get(0).to_vec();
        }
        let items: Vec<Item> = self
            .iter_from(0)
            .map(|m| match m {
                Member::Int(v) => Item::Int(v),
                Member::Bytes(b) => Item::Str(b),
            })
            .collect();
        packed::listpack(&items)
    }

    /// Redis's node size (`sz`): its listpack's bytes, or a plain node's element length.
    pub(super) fn redis_sz(&self) -> usize {
        if self.compressed() {
            self.raw_len()
        } else if self.plain() {
            self.get(0).with_bytes(<[u8]>::len)
        } else {
            self.lp_bytes()
        }
    }

    fn raw_len(&self) -> usize {
        u32::from_le_bytes(self.buf[HEADER..LZF_HEADER].try_into().expect("4 bytes")) as usize
    }

    /// Compresses the node as Redis's `__quicklistCompressNode`: Redis's node bytes of at
    /// least [`MIN_COMPRESS_BYTES`], LZF within their own size, kept when that saves more
    /// than [`MIN_COMPRESS_IMPROVE`] bytes. Returns whether the node is compressed.
    pub(super) fn compress(&mut self) -> bool {
        if self.compressed() {
            return true;
        }
        if self.redis_sz() < MIN_COMPRESS_BYTES {
            return false;
        }
        let raw = self.redis_bytes();
        let Some(lzf) = lzf::compress_within(&raw, raw.len()) else {
            return false;
        };
        if lzf.len() + MIN_COMPRESS_IMPROVE >= raw.len() {
            return false;
        }
        let mut buf = Vec::with_capacity(LZF_HEADER + lzf.len());
        buf.extend_from_slice(&self.buf[..HEADER]);
        buf.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        buf.extend_from_slice(&lzf);
        let field = self.count_field() | COMPRESSED;
        buf[..4].copy_from_slice(&field.to_le_bytes());
        self.buf = buf;
        true
    }

    /// The LZF blob of a compressed node and the length it expands to (what Redis's RDB
    /// writes for a compressed node); None for a readable one.
    pub(super) fn lzf(&self) -> Option<(usize, &[u8])> {
        self.compressed()
            .then(|| (self.raw_len(), &self.buf[LZF_HEADER..]))
    }

    /// The readable form of a compressed node.
    pub(super) fn decompressed(&self) -> Node {
        let (raw_len, data) = self.lzf().expect("a compressed node");
        let mut raw = Vec::with_capacity(raw_len);
        lzf::decompress(data, raw_len, &mut raw).expect("LZF written by compress");
        if self.plain() {
            return Node::new_plain(Encoded::Bytes(&raw));
        }
        let mut node = Node {
            buf: Vec::with_capacity(HEADER + raw_len),
        };
        node.buf.extend_from_slice(&Node::default().buf);
        packed::listpack_items(&raw, &mut |item| {
            let e = match item {
                Item::Int(v) => Encoded::Int(v),
                Item::Str(b) => Encoded::Bytes(b),
            };
            node.insert(node.count(), e);
            Ok(())
        })
        .expect("a listpack written by compress");
        node
    }

    /// Makes a compressed node readable in place.
    pub(super) fn decompress(&mut self) {
        if self.compressed() {
            *self = self.decompressed();
        }
    }

    /// Whether this is a plain node (one large element).
    #[inline]
    pub(super) fn plain(&self) -> bool {
        self.count_field() & PLAIN != 0
    }

    /// A plain node holding `e`.
    pub(super) fn new_plain(e: Encoded) -> Node {
        let mut node = Node::default();
        node.insert(0, e);
        node.buf[..4].copy_from_slice(&(1 | PLAIN).to_le_bytes());
        node
    }

    /// Bytes of Redis's listpack holding the same elements (its `lpBytes`).
    #[inline]
    pub(super) fn lp_bytes(&self) -> usize {
        u32::from_le_bytes(self.buf[4..8].try_into().expect("4 bytes")) as usize
    }

    fn set_header(&mut self, count: usize, lp_bytes: usize) {
        let flag = self.count_field() & PLAIN;
        self.buf[..4].copy_from_slice(&(count as u32 | flag).to_le_bytes());
        self.buf[4..8].copy_from_slice(&(lp_bytes as u32).to_le_bytes());
    }

    /// Bytes held on the heap.
    pub(super) fn memory_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Drops spare capacity (a node no more elements are expected in).
    pub(super) fn shrink(&mut self) {
        self.buf.shrink_to_fit();
    }

    /// Offset of element `i` (`count` gives the end).
    fn offset(&self, i: usize) -> usize {
        if i == self.count() {
            return self.buf.len();
        }
        let mut pos = HEADER;
        for _ in 0..i {
            pos = skip(&self.buf, pos);
        }
        pos
    }

    /// Element `i` (< count).
    pub(super) fn get(&self, i: usize) -> Member<'_> {
        decode(&self.buf, self.offset(i)).0
    }

    /// The elements from index `from`, in order.
    pub(super) fn iter_from(&self, from: usize) -> impl Iterator<Item = Member<'_>> + '_ {
        let mut pos = self.offset(from);
        std::iter::from_fn(move || {
            (pos < self.buf.len()).then(|| {
                let (m, next) = decode(&self.buf, pos);
                pos = next;
                m
            })
        })
    }

    /// Inserts `e` before element `i` (`i == count` appends).
    pub(super) fn insert(&mut self, i: usize, e: Encoded) {
        let (count, lp) = (self.count(), self.lp_bytes());
        let len = e.stored_len();
        if self.buf.len() + len > self.buf.capacity() && self.buf.len() < 256 {
            // Small nodes grow exactly, as a listpack does; larger ones amortized.
            self.buf.reserve_exact(len);
        }
        if i == count {
            e.write(&mut self.buf);
        } else {
            // Appended, then turned into place: no buffer for the entry.
            let at = self.offset(i);
            e.write(&mut self.buf);
            self.buf[at..].rotate_right(len);
        }
        self.set_header(count + 1, lp + e.lp_len());
    }

    /// Removes `n` elements from index `i`.
    pub(super) fn remove(&mut self, i: usize, n: usize) {
        let (count, mut lp) = (self.count(), self.lp_bytes());
        let start = self.offset(i);
        let mut end = start;
        for _ in 0..n {
            let (m, next) = decode(&self.buf, end);
            lp -= member_lp_len(m);
            end = next;
        }
        self.buf.drain(start..end);
        self.set_header(count - n, lp);
    }

    /// The offset of every element, front to back.
    pub(super) fn offsets(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.count());
        let mut pos = HEADER;
        while pos < self.buf.len() {
            out.push(pos as u32);
            pos = skip(&self.buf, pos);
        }
        out
    }

    /// The offset an element pushed at the back starts at.
    pub(super) fn end_offset(&self) -> usize {
        self.buf.len()
    }

    /// Removes and returns the last element, which starts at offset `at`.
    pub(super) fn take_last_at(&mut self, at: usize) -> Vec<u8> {
        let (m, end) = decode(&self.buf, at);
        debug_assert_eq!(end, self.buf.len(), "the last element");
        let (v, lp) = (m.to_vec(), member_lp_len(m));
        self.buf.truncate(at);
        let (count, bytes) = (self.count(), self.lp_bytes());
        self.set_header(count - 1, bytes - lp);
        v
    }

    /// Removes and returns element `i`.
    pub(super) fn take(&mut self, i: usize) -> Vec<u8> {
        let v = self.get(i).to_vec();
        self.remove(i, 1);
        v
    }

    /// Splits off the elements from index `at` into a new node.
    pub(super) fn split_off(&mut self, at: usize) -> Node {
        let mut tail = Node::default();
        for m in self.iter_from(at) {
            tail.append_member(m);
        }
        let n = self.count() - at;
        self.remove(at, n);
        tail
    }

    /// Appends the elements of `other`.
    pub(super) fn append(&mut self, other: &Node) {
        let (count, lp) = (self.count(), self.lp_bytes());
        self.buf.extend_from_slice(&other.buf[HEADER..]);
        self.set_header(count + other.count(), lp + other.lp_bytes() - LP_OVERHEAD);
    }

    /// Appends an element read out of another node.
    fn append_member(&mut self, m: Member) {
        let count = self.count();
        match m {
            Member::Int(v) => self.insert(count, Encoded::Int(v)),
            Member::Bytes(b) => self.insert(count, Encoded::Bytes(b)),
        }
    }

    /// The entries of a packed node without the header in front (the packed form a caller
    /// keeps elsewhere); None for a plain or compressed node.
    pub(super) fn entry_bytes(&self) -> Option<&[u8]> {
        (!self.plain() && !self.compressed()).then(|| &self.buf[HEADER..])
    }

    /// The packed node whose [`Node::entry_bytes`] are `entries` (the header is theirs),
    /// with [`UNPACKED_ROOM`] bytes to spare.
    pub(super) fn from_entry_bytes(entries: &[u8]) -> Node {
        let mut buf = Vec::with_capacity(HEADER + entries.len() + UNPACKED_ROOM);
        buf.extend_from_slice(&[0; HEADER]);
        buf.extend_from_slice(entries);
        let mut node = Node { buf };
        let (count, lp_bytes, _) = node.walk();
        node.set_header(count, lp_bytes);
        node
    }

    /// The element count, Redis's listpack size and the end offset the entries give.
    fn walk(&self) -> (usize, usize, usize) {
        walk_entries(&self.buf, HEADER)
    }

    /// Checks the header against the entries; for tests.
    pub(super) fn validate(&self) {
        if self.compressed() {
            let raw = self.decompressed();
            raw.validate();
            assert_eq!(raw.count(), self.count(), "compressed count");
            assert_eq!(raw.lp_bytes(), self.lp_bytes(), "compressed size");
            return;
        }
        let (n, lp, pos) = self.walk();
        assert_eq!(pos, self.buf.len(), "entries end at the buffer's end");
        assert_eq!(n, self.count(), "count");
        assert_eq!(lp, self.lp_bytes(), "listpack size");
    }
}

/// The element count, Redis's listpack size and the end offset of the entries in `buf`
/// from offset `from` to its end.
pub(super) fn walk_entries(buf: &[u8], from: usize) -> (usize, usize, usize) {
    let mut pos = from;
    let (mut n, mut lp) = (0, LP_OVERHEAD);
    while pos < buf.len() {
        let (m, next) = decode(buf, pos);
        lp += member_lp_len(m);
        n += 1;
        pos = next;
    }
    (n, lp, pos)
}

/// Appends the entry of element `s` to `out`, as a node stores it.
pub(super) fn put_entry(out: &mut Vec<u8>, s: &[u8]) {
    Encoded::of(s).write(out);
}

/// Listpack entry bytes of an element read out of a node.
fn member_lp_len(m: Member) -> usize {
    match m {
        Member::Int(v) => Encoded::Int(v).lp_len(),
        Member::Bytes(b) => Encoded::Bytes(b).lp_len(),
    }
}

/// Bytes of `s` in Redis's listpack (for fill checks before an element is stored).
pub(super) fn lp_entry_len(s: &[u8]) -> usize {
    Encoded::of(s).lp_len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_narrow_and_round_trip() {
        let mut n = Node::default();
        let vals: [&[u8]; 9] = [
            b"0",
            b"-1",
            b"127",
            b"-129",
            b"40000",
            b"-8388608",
            b"2147483647",
            b"-9223372036854775808",
            b"007",
        ];
        for v in vals {
            n.insert(n.count(), Encoded::of(v));
        }
        n.validate();
        let got: Vec<Vec<u8>> = n.iter_from(0).map(Member::to_vec).collect();
        assert_eq!(got, vals.map(<[u8]>::to_vec));
        // "007" is not canonical: a 3-byte string.
        assert_eq!(n.buf.len() - HEADER, 2 + 2 + 2 + 3 + 4 + 4 + 5 + 9 + 4);
    }

    #[test]
    fn listpack_sizes_follow_redis() {
        // lpBytes of a listpack with "a", 16 x "b", 100: 7 + 3 + 18 + 2.
        let mut n = Node::default();
        for v in [&b"a"[..], &[b'b'; 16], b"100"] {
            n.insert(n.count(), Encoded::of(v));
        }
        assert_eq!(n.lp_bytes(), 7 + 3 + 18 + 2);
        assert_eq!(lp_entry_len(&[b'x'; 200]), 2 + 200 + 2);
    }

    #[test]
    fn long_strings_split_and_append() {
        let long = vec![b'z'; 300];
        let mut n = Node::default();
        n.insert(0, Encoded::of(b"x"));
        n.insert(1, Encoded::of(&long));
        n.insert(0, Encoded::of(b"5"));
        let tail = n.split_off(1);
        assert_eq!(n.count(), 1);
        assert_eq!(tail.get(1).to_vec(), long);
        n.append(&tail);
        n.validate();
        assert_eq!(n.take(2), long);
    }
}
