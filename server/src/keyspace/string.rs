//! The string value: integers as integers, short strings inside the keyspace entry, long
//! ones in one heap allocation, with the encoding Redis 7.2 would report (OBJECT ENCODING
//! `int`, `embstr`, `raw`) and the moments it changes.
//!
//! Layout (the value sits in [`super::Value`]'s 32 bytes, whose first 8 hold the sorted
//! set's niche, so a string has 24 bytes and costs no allocation up to 22 bytes):
//!
//! ```text
//! Value (32 bytes)
//!   [niche / zset: 8][StringValue: 24]
//! StringValue (24 bytes)
//!   Int:    [tag: 1][pad: 7][i64: 8][pad: 8]         "int": no allocation
//!   Inline: [tag: 1][meta: 1][bytes: 22]             meta = len (5 bits) | raw (bit 7)
//!   Heap:   [tag: 1][raw: 1][pad: 2][len: 4][Box<[u8]>: 16] -> one allocation of the
//!                                                    capacity (grown as Redis's sds grows)
//! In the key table (see [`super::db`]) an `int` and an inline string live in the key's
//! record itself ([`StringValue::compact`]: the integer in 1 to 8 bytes, or a length byte
//! and the bytes); a heap string is a heap value of the table.
//! ```
//!
//! Encodings follow Redis: SET and its kin store a canonical integer of up to 20 characters
//! as `int`, up to 44 bytes as `embstr`, longer as `raw` ([`StringValue::from_set`]);
//! INCR and its kin store `int` ([`StringValue::from_int`]); INCRBYFLOAT stores `embstr`
//! or `raw` by length ([`StringValue::from_text`]); every in-place write (APPEND to an
//! existing key, SETRANGE, SETBIT, BITFIELD) leaves `raw` ([`StringValue::bytes_mut`]);
//! new strings made by those writes and by BITOP are `raw` ([`StringValue::raw`]).

use crate::numbers::parse_i64;
use std::ops::Deref;

/// Longest string kept inside the entry.
pub const INLINE: usize = 22;
/// Longest string Redis stores as `embstr` (OBJ_ENCODING_EMBSTR_SIZE_LIMIT).
pub const EMBSTR_LIMIT: usize = 44;
/// Longest string Redis tries as an integer.
const INT_LIMIT: usize = 20;
/// Past this size a growing string grows by this much instead of doubling (SDS_MAX_PREALLOC).
const MAX_PREALLOC: usize = 1024 * 1024;
const RAW_BIT: u8 = 0x80;

/// A string value as the keyspace stores it.
#[derive(Clone)]
pub struct StringValue(Repr);

#[derive(Clone)]
enum Repr {
    Int(i64),
    Inline { meta: u8, bytes: [u8; INLINE] },
    Heap { raw: bool, len: u32, buf: Box<[u8]> },
}

/// What OBJECT ENCODING reports for a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// A canonical 64-bit integer.
    Int,
    /// A string Redis keeps in the object's own allocation.
    Embstr,
    /// A string Redis keeps in a separate, growable buffer.
    Raw,
}

impl Encoding {
    /// The name OBJECT ENCODING replies with.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Int => "int",
            Encoding::Embstr => "embstr",
            Encoding::Raw => "raw",
        }
    }
}

/// A string's bytes: borrowed, or the digits of an integer.
pub enum Bytes<'a> {
    /// The stored bytes.
    Stored(&'a [u8]),
    /// The decimal text of an integer value.
    Digits {
        /// The digits, from the start.
        buf: [u8; INT_LIMIT],
        /// How many of `buf` are used.
        len: u8,
    },
}

impl Deref for Bytes<'_> {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Stored(b) => b,
            Bytes::Digits { buf, len } => &buf[..*len as usize],
        }
    }
}

/// A string as the key table keeps it inside a key's record, with no allocation: an
/// integer (`int`), or up to [`INLINE`] bytes and whether they are `raw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compact<'a> {
    /// An `int` value.
    Int(i64),
    /// Inline bytes and the `raw` flag.
    Bytes(&'a [u8], bool),
}

impl StringValue {
    /// The value as SET stores `bytes` (Redis's tryObjectEncoding): `int` for a canonical
    /// integer of up to 20 characters, `embstr` up to 44 bytes, `raw` past that.
    pub fn from_set(bytes: &[u8]) -> StringValue {
        if bytes.len() <= INT_LIMIT {
            if let Some(v) = parse_i64(bytes) {
                return StringValue(Repr::Int(v));
            }
        }
        StringValue::from_text(bytes)
    }

    /// An integer value (`int`), as INCR stores it.
    pub fn from_int(v: i64) -> StringValue {
        StringValue(Repr::Int(v))
    }

    /// `bytes` as a plain string object (createStringObject): `embstr` up to 44 bytes,
    /// `raw` past that; never `int`.
    pub fn from_text(bytes: &[u8]) -> StringValue {
        StringValue::stored(bytes, bytes.len() > EMBSTR_LIMIT, bytes.len())
    }

    /// `bytes` as a `raw` string (SETRANGE and SETBIT creating a key, BITOP's result).
    pub fn raw(bytes: &[u8]) -> StringValue {
        StringValue::stored(bytes, true, bytes.len())
    }

    /// `bytes` stored inline when `capacity` fits, else in an allocation of `capacity`.
    fn stored(bytes: &[u8], raw: bool, capacity: usize) -> StringValue {
        if capacity.max(bytes.len()) <= INLINE {
            let mut inline = [0u8; INLINE];
            inline[..bytes.len()].copy_from_slice(bytes);
            return StringValue(Repr::Inline {
                meta: bytes.len() as u8 | if raw { RAW_BIT } else { 0 },
                bytes: inline,
            });
        }
        let mut buf = vec![0u8; capacity.max(bytes.len())].into_boxed_slice();
        buf[..bytes.len()].copy_from_slice(bytes);
        StringValue(Repr::Heap {
            raw,
            len: bytes.len() as u32,
            buf,
        })
    }

    /// The value as a key's record holds it, when it needs no allocation; None for a string
    /// kept in a heap buffer (which the key table keeps as a heap value).
    #[inline]
    pub fn compact(&self) -> Option<Compact<'_>> {
        match &self.0 {
            Repr::Int(v) => Some(Compact::Int(*v)),
            Repr::Inline { meta, bytes } => Some(Compact::Bytes(
                &bytes[..(meta & !RAW_BIT) as usize],
                meta & RAW_BIT != 0,
            )),
            Repr::Heap { .. } => None,
        }
    }

    /// The value a record's inline string stands for (at most [`INLINE`] bytes).
    #[inline]
    pub fn from_compact(bytes: &[u8], raw: bool) -> StringValue {
        debug_assert!(bytes.len() <= INLINE);
        StringValue::stored(bytes, raw, bytes.len())
    }

    /// The encoding OBJECT ENCODING reports.
    pub fn encoding(&self) -> Encoding {
        match &self.0 {
            Repr::Int(_) => Encoding::Int,
            Repr::Inline { meta, .. } if meta & RAW_BIT != 0 => Encoding::Raw,
            Repr::Heap { raw: true, .. } => Encoding::Raw,
            _ => Encoding::Embstr,
        }
    }

    /// The string's bytes (an integer's decimal text).
    #[inline]
    pub fn bytes(&self) -> Bytes<'_> {
        match &self.0 {
            Repr::Int(v) => digits(*v),
            Repr::Inline { meta, bytes } => Bytes::Stored(&bytes[..(meta & !RAW_BIT) as usize]),
            Repr::Heap { len, buf, .. } => Bytes::Stored(&buf[..*len as usize]),
        }
    }

    /// Length in bytes (STRLEN).
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Int(_) => self.bytes().len(),
            Repr::Inline { meta, .. } => (meta & !RAW_BIT) as usize,
            Repr::Heap { len, .. } => *len as usize,
        }
    }

    /// Whether the string is empty (a key may hold an empty string).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value as a 64-bit integer, when it is one (Redis's string2ll on the bytes).
    #[inline]
    pub fn as_int(&self) -> Option<i64> {
        match &self.0 {
            Repr::Int(v) => Some(*v),
            _ => parse_i64(&self.bytes()),
        }
    }

    /// Heap bytes the value holds beyond the entry (MEMORY USAGE).
    pub fn memory_bytes(&self) -> usize {
        match &self.0 {
            Repr::Heap { buf, .. } => buf.len(),
            _ => 0,
        }
    }

    /// The bytes for an in-place write, zero-extended to at least `min_len`: the value
    /// becomes `raw` (Redis's dbUnshareStringValue) and a growing buffer gets room to grow
    /// as an sds would (double, or 1 MiB past 1 MiB).
    pub fn bytes_mut(&mut self, min_len: usize) -> &mut [u8] {
        let len = self.len().max(min_len);
        match &mut self.0 {
            Repr::Inline { meta, .. } if len <= INLINE => *meta = len as u8 | RAW_BIT,
            Repr::Heap { raw, len: l, buf } if len <= buf.len() => {
                *raw = true;
                *l = len as u32;
            }
            _ => {
                let capacity = if len > self.len() && len > INLINE {
                    grown(len)
                } else {
                    len
                };
                let moved = StringValue::stored(&self.bytes(), true, capacity);
                *self = moved;
                return self.bytes_mut(min_len);
            }
        }
        match &mut self.0 {
            Repr::Inline { meta, bytes } => &mut bytes[..(*meta & !RAW_BIT) as usize],
            Repr::Heap { len, buf, .. } => &mut buf[..*len as usize],
            Repr::Int(_) => unreachable!("an in-place write leaves bytes"),
        }
    }

    /// Edits the bytes as a growable vector (the HyperLogLog commands, whose sparse edits
    /// change the length); the value becomes `raw`. A heap buffer is lent without a copy
    /// and keeps whatever room the edit leaves it.
    pub fn edit<R>(&mut self, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        let mut bytes = match &mut self.0 {
            Repr::Heap { len, buf, .. } => {
                let mut v = Vec::from(std::mem::take(buf));
                v.truncate(*len as usize);
                v
            }
            _ => self.bytes().to_vec(),
        };
        let result = f(&mut bytes);
        let len = bytes.len();
        *self = if len <= INLINE {
            StringValue::stored(&bytes, true, len)
        } else {
            bytes.resize(bytes.capacity(), 0);
            StringValue(Repr::Heap {
                raw: true,
                len: len as u32,
                buf: bytes.into_boxed_slice(),
            })
        };
        result
    }

    /// Appends `tail` in place (APPEND on an existing key); returns the new length.
    pub fn append(&mut self, tail: &[u8]) -> usize {
        let start = self.len();
        let bytes = self.bytes_mut(start + tail.len());
        bytes[start..].copy_from_slice(tail);
        bytes.len()
    }

    /// Overwrites from byte `offset` with `data`, zero-padding as needed (SETRANGE); returns
    /// the new length.
    pub fn set_range(&mut self, offset: usize, data: &[u8]) -> usize {
        let bytes = self.bytes_mut(offset + data.len());
        bytes[offset..offset + data.len()].copy_from_slice(data);
        bytes.len()
    }

    /// Sets bit `bit` (0 is the most significant bit of the first byte) to `on`, growing
    /// the string as needed (SETBIT); returns the previous bit.
    pub fn set_bit(&mut self, bit: usize, on: bool) -> bool {
        let byte = bit / 8;
        let mask = 0x80u8 >> (bit % 8);
        let bytes = self.bytes_mut(byte + 1);
        let old = bytes[byte] & mask != 0;
        if on {
            bytes[byte] |= mask;
        } else {
            bytes[byte] &= !mask;
        }
        old
    }
}

/// The decimal text of `v`, from the start of a buffer.
fn digits(v: i64) -> Bytes<'static> {
    let mut tmp = itoa::Buffer::new();
    let text = tmp.format(v).as_bytes();
    let mut buf = [0u8; INT_LIMIT];
    buf[..text.len()].copy_from_slice(text);
    Bytes::Digits {
        buf,
        len: text.len() as u8,
    }
}

/// The capacity a string growing to `len` bytes gets (sdsMakeRoomFor's greedy rule).
fn grown(len: usize) -> usize {
    if len < MAX_PREALLOC {
        len * 2
    } else {
        len + MAX_PREALLOC
    }
}

/// The byte range GETRANGE returns for `start..=end` (negative counts from the end) on a
/// string of `len` bytes, with Redis's clamping; None for the empty reply.
pub fn range(len: usize, start: i64, end: i64) -> Option<std::ops::Range<usize>> {
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let len = len as i128;
    let fix = |i: i64| {
        let i = i as i128;
        (if i < 0 { len + i } else { i }).max(0)
    };
    let (start, end) = (fix(start), fix(end).min(len - 1));
    (len > 0 && start <= end).then(|| start as usize..end as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<StringValue>(), 24);
        assert_eq!(std::mem::size_of::<super::super::Value>(), 32);
    }

    #[test]
    fn encodings_at_the_moments_redis_chooses() {
        let enc = |v: &StringValue| v.encoding();
        assert_eq!(enc(&StringValue::from_set(b"12345")), Encoding::Int);
        assert_eq!(
            enc(&StringValue::from_set(b"-9223372036854775808")),
            Encoding::Int
        );
        for s in [
            &b"007"[..],
            b"+1",
            b"-0",
            b" 1",
            b"9223372036854775808",
            b"",
        ] {
            assert_eq!(enc(&StringValue::from_set(s)), Encoding::Embstr, "{s:?}");
        }
        assert_eq!(enc(&StringValue::from_set(&[b'a'; 44])), Encoding::Embstr);
        assert_eq!(enc(&StringValue::from_set(&[b'a'; 45])), Encoding::Raw);
        assert_eq!(enc(&StringValue::from_text(b"3")), Encoding::Embstr);
        let mut v = StringValue::from_set(b"12");
        v.append(b"");
        assert_eq!((enc(&v), &*v.bytes()), (Encoding::Raw, &b"12"[..]));
        assert_eq!(v.as_int(), Some(12));
        assert_eq!(v.memory_bytes(), 0, "short raw strings stay inline");
        assert_eq!(enc(&StringValue::raw(b"")), Encoding::Raw);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Set(Vec<u8>),
        Append(Vec<u8>),
        SetRange(usize, Vec<u8>),
        IncrBy(i64),
        SetBit(usize, bool),
        GetRange(i64, i64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let bytes = prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..60),
            (-1000i64..1000).prop_map(|n| n.to_string().into_bytes()),
        ];
        prop_oneof![
            bytes.clone().prop_map(Op::Set),
            bytes.clone().prop_map(Op::Append),
            (0usize..80, bytes).prop_map(|(o, b)| Op::SetRange(o, b)),
            (-100i64..100).prop_map(Op::IncrBy),
            (0usize..400, any::<bool>()).prop_map(|(b, on)| Op::SetBit(b, on)),
            (-100i64..100, -100i64..100).prop_map(|(s, e)| Op::GetRange(s, e)),
        ]
    }

    /// GETRANGE on the model, written directly from Redis's getrangeCommand.
    fn model_range(s: &[u8], mut start: i64, mut end: i64) -> Vec<u8> {
        let len = s.len() as i64;
        if start < 0 && end < 0 && start > end {
            return vec![];
        }
        if start < 0 {
            start += len;
        }
        if end < 0 {
            end += len;
        }
        start = start.max(0);
        end = end.max(0).min(len - 1);
        if start > end || len == 0 {
            return vec![];
        }
        s[start as usize..=end as usize].to_vec()
    }

    proptest! {
        #[test]
        fn behaves_as_a_byte_vector(ops in proptest::collection::vec(op(), 1..40)) {
            let mut model: Vec<u8> = Vec::new();
            let mut value = StringValue::from_set(b"");
            for op in ops {
                match op {
                    Op::Set(b) => {
                        value = StringValue::from_set(&b);
                        model = b;
                    }
                    Op::Append(b) => {
                        model.extend_from_slice(&b);
                        prop_assert_eq!(value.append(&b), model.len());
                        prop_assert_eq!(value.encoding(), Encoding::Raw);
                    }
                    Op::SetRange(offset, b) => {
                        if model.len() < offset + b.len() {
                            model.resize(offset + b.len(), 0);
                        }
                        model[offset..offset + b.len()].copy_from_slice(&b);
                        prop_assert_eq!(value.set_range(offset, &b), model.len());
                    }
                    Op::IncrBy(by) => {
                        let Some(n) = parse_i64(&model) else {
                            prop_assert_eq!(value.as_int(), None);
                            continue;
                        };
                        prop_assert_eq!(value.as_int(), Some(n));
                        let n = n.saturating_add(by);
                        model = n.to_string().into_bytes();
                        value = StringValue::from_int(n);
                        prop_assert_eq!(value.encoding(), Encoding::Int);
                    }
                    Op::SetBit(bit, on) => {
                        if model.len() <= bit / 8 {
                            model.resize(bit / 8 + 1, 0);
                        }
                        let mask = 0x80 >> (bit % 8);
                        let old = model[bit / 8] & mask != 0;
                        if on { model[bit / 8] |= mask } else { model[bit / 8] &= !mask }
                        prop_assert_eq!(value.set_bit(bit, on), old);
                        prop_assert_eq!(value.encoding(), Encoding::Raw);
                    }
                    Op::GetRange(start, end) => {
                        let bytes = value.bytes();
                        let got = range(bytes.len(), start, end).map_or(&[][..], |r| &bytes[r]);
                        prop_assert_eq!(got, &model_range(&model, start, end)[..]);
                    }
                }
                prop_assert_eq!(&*value.bytes(), &model[..]);
                prop_assert_eq!(value.len(), model.len());
                prop_assert_eq!(value.memory_bytes() == 0, model.len() <= INLINE || value.encoding() == Encoding::Int);
            }
        }
    }
}
