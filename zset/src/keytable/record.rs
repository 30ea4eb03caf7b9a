//! The byte encoding of one key's record (see the module diagram in `keytable`).
//!
//! ```text
//! [hdr: 1][clock: 3][expiry: 0|12][key len: 1|5][key][value: 1|2|4|8 | 1+len | 4]
//!
//! hdr bits 0-2  value kind: I8 I16 I32 I64 (integer, narrowest width that holds it),
//!               STR (length byte + bytes), HEAP (u32 index into the table's value slab),
//!               PACKED (length byte + bytes of the caller's own format)
//!     bit 3     the caller's string flag (Goblin: "raw" encoding)
//!     bit 4     volatile: a 12-byte expiry block follows the clock
//!     bits 5-7  PACKED: the caller's tag, which of its formats the bytes are in
//! clock         24-bit access clock, little-endian
//! expiry        expire_at: u64 Unix ms, then position in the table's volatile list: u32
//! key len       one byte below 255; else 0xFF and a u32
//! ```
//!
//! Every fixed field sits at a fixed offset (clock at 1, expiry at 4), so touching a key's
//! clock or expiry writes in place; the key starts at 4 or 16 and the value follows it.

/// Value kinds (the low 3 bits of the header).
const I8: u8 = 0;
const I16: u8 = 1;
const I32: u8 = 2;
const I64: u8 = 3;
const STR: u8 = 4;
const HEAP: u8 = 5;
const PACKED: u8 = 6;
const KIND_MASK: u8 = 0x07;
/// The caller's flag on a string value.
const FLAG: u8 = 0x08;
/// An expiry block follows the clock.
const VOLATILE: u8 = 0x10;
/// The packed value's tag (bits 5-7).
const TAG_SHIFT: u8 = 5;
const TAG_MASK: u8 = 0xE0;
/// Number of distinct tags a packed value can carry.
pub const PACKED_TAGS: u8 = 8;
/// Key length byte announcing a 4-byte length.
const LONG_KEY: u8 = 0xFF;

/// Offset of the 24-bit clock.
const CLOCK_AT: usize = 1;
/// Offset of the expiry block (volatile records).
const EXPIRY_AT: usize = 4;
/// Offset of the volatile-list position inside a volatile record.
const VPOS_AT: usize = EXPIRY_AT + 8;
/// Bytes of the expiry block.
const EXPIRY_LEN: usize = 12;

/// Longest string stored inside a record (its length is one byte).
pub const STR_MAX: usize = 255;
/// Largest value of the 24-bit access clock.
pub const CLOCK_MAX: u32 = (1 << 24) - 1;

/// A value as a record holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stored<'a> {
    /// An integer.
    Int(i64),
    /// Bytes (at most [`STR_MAX`]) and the caller's flag.
    Str(&'a [u8], bool),
    /// An index into the table's value slab.
    Heap(u32),
    /// The caller's tag (below [`PACKED_TAGS`]) and bytes of its own format (at most
    /// [`STR_MAX`]).
    Packed(u8, &'a [u8]),
}

impl Stored<'_> {
    /// The kind bits and the bytes the value takes after the key.
    #[inline]
    fn kind_and_len(&self) -> (u8, usize) {
        match *self {
            Stored::Int(v) if v as i8 as i64 == v => (I8, 1),
            Stored::Int(v) if v as i16 as i64 == v => (I16, 2),
            Stored::Int(v) if v as i32 as i64 == v => (I32, 4),
            Stored::Int(_) => (I64, 8),
            Stored::Str(b, flag) => (STR | if flag { FLAG } else { 0 }, 1 + b.len()),
            Stored::Heap(_) => (HEAP, 4),
            Stored::Packed(tag, b) => (PACKED | tag << TAG_SHIFT, 1 + b.len()),
        }
    }
}

/// Bytes of the record for a key of `key_len` bytes holding `value`.
#[cfg(test)]
pub(super) fn encoded_len(key_len: usize, value: &Stored<'_>, volatile: bool) -> usize {
    let klen = if key_len < LONG_KEY as usize { 1 } else { 5 };
    4 + if volatile { EXPIRY_LEN } else { 0 } + klen + key_len + value.kind_and_len().1
}

/// Appends the record to `out` (which the caller cleared). `expiry` is the expire time and
/// volatile-list position of a volatile key.
pub(super) fn encode(
    out: &mut Vec<u8>,
    key: &[u8],
    value: &Stored<'_>,
    clock: u32,
    expiry: Option<(u64, u32)>,
) {
    let (kind, _) = value.kind_and_len();
    out.push(kind | if expiry.is_some() { VOLATILE } else { 0 });
    out.extend_from_slice(&(clock & CLOCK_MAX).to_le_bytes()[..3]);
    if let Some((at, pos)) = expiry {
        out.extend_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&pos.to_le_bytes());
    }
    if key.len() >= LONG_KEY as usize {
        out.push(LONG_KEY);
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    } else {
        out.push(key.len() as u8);
    }
    out.extend_from_slice(key);
    match *value {
        Stored::Int(v) => {
            let (_, width) = value.kind_and_len();
            out.extend_from_slice(&v.to_le_bytes()[..width]);
        }
        Stored::Str(b, _) | Stored::Packed(_, b) => {
            out.push(b.len() as u8);
            out.extend_from_slice(b);
        }
        Stored::Heap(i) => out.extend_from_slice(&i.to_le_bytes()),
    }
}

/// A little-endian integer of `N` bytes at `at`.
#[inline]
fn le<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes[at..at + N].try_into().expect("N bytes")
}

/// A record's bytes (a slot may be longer than its record: readers stop at the value's end).
#[derive(Clone, Copy)]
pub(super) struct Record<'a>(pub(super) &'a [u8]);

impl<'a> Record<'a> {
    #[inline]
    fn hdr(&self) -> u8 {
        self.0[0]
    }

    /// The 24-bit access clock.
    #[inline]
    pub(super) fn clock(&self) -> u32 {
        let [a, b, c] = le::<3>(self.0, CLOCK_AT);
        u32::from_le_bytes([a, b, c, 0])
    }

    /// Whether the record carries an expiry block.
    #[inline]
    pub(super) fn is_volatile(&self) -> bool {
        self.hdr() & VOLATILE != 0
    }

    /// The expire time and volatile-list position, for a volatile record.
    #[inline]
    pub(super) fn expiry(&self) -> Option<(u64, u32)> {
        self.is_volatile().then(|| {
            (
                u64::from_le_bytes(le(self.0, EXPIRY_AT)),
                u32::from_le_bytes(le(self.0, VPOS_AT)),
            )
        })
    }

    /// Where the key starts and how long it is.
    #[inline]
    fn key_span(&self) -> (usize, usize) {
        let at = if self.is_volatile() {
            4 + EXPIRY_LEN
        } else {
            4
        };
        if self.0[at] == LONG_KEY {
            (at + 5, u32::from_le_bytes(le(self.0, at + 1)) as usize)
        } else {
            (at + 1, self.0[at] as usize)
        }
    }

    /// Whether the value is an index into the table's value slab.
    #[inline]
    pub(super) fn holds_heap(&self) -> bool {
        self.hdr() & KIND_MASK == HEAP
    }

    /// The slab index of a heap value; None for a value the record holds.
    #[inline]
    pub(super) fn heap_index(&self) -> Option<u32> {
        self.holds_heap()
            .then(|| u32::from_le_bytes(le(self.0, self.value_at())))
    }

    /// The kind of the value, from the header.
    #[inline]
    pub(super) fn kind(&self) -> super::Kind {
        match self.hdr() & KIND_MASK {
            STR => super::Kind::Str,
            HEAP => super::Kind::Heap,
            PACKED => super::Kind::Packed(self.hdr() >> TAG_SHIFT),
            _ => super::Kind::Int,
        }
    }

    /// Where the value starts (just past the key).
    #[inline]
    pub(super) fn value_at(&self) -> usize {
        let (at, len) = self.key_span();
        at + len
    }

    /// The key bytes.
    #[inline]
    pub(super) fn key(&self) -> &'a [u8] {
        let (at, len) = self.key_span();
        &self.0[at..at + len]
    }

    /// The value.
    #[inline]
    pub(super) fn value(&self) -> Stored<'a> {
        let (at, len) = self.key_span();
        let v = at + len;
        let b = self.0;
        match self.hdr() & KIND_MASK {
            I8 => Stored::Int(b[v] as i8 as i64),
            I16 => Stored::Int(i16::from_le_bytes(le(b, v)) as i64),
            I32 => Stored::Int(i32::from_le_bytes(le(b, v)) as i64),
            I64 => Stored::Int(i64::from_le_bytes(le(b, v))),
            STR => {
                let n = b[v] as usize;
                Stored::Str(&b[v + 1..v + 1 + n], self.hdr() & FLAG != 0)
            }
            PACKED => {
                let n = b[v] as usize;
                Stored::Packed(self.hdr() >> TAG_SHIFT, &b[v + 1..v + 1 + n])
            }
            _ => Stored::Heap(u32::from_le_bytes(le(b, v))),
        }
    }

    /// Bytes the record takes (its slot may be larger).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        let (at, len) = self.key_span();
        let v = at + len;
        v + match self.hdr() & KIND_MASK {
            I8 => 1,
            I16 => 2,
            I32 => 4,
            I64 => 8,
            STR | PACKED => 1 + self.0[v] as usize,
            _ => 4,
        }
    }
}

/// Overwrites the value of the record in `bytes` with `value` when it takes the same kind
/// and bytes (a counter within its width, a string of the same length): no re-encoding.
/// False, and nothing written, otherwise.
#[inline]
pub(super) fn overwrite_value(bytes: &mut [u8], value: &Stored<'_>) -> bool {
    let r = Record(bytes);
    let (kind, len) = value.kind_and_len();
    let old = r.hdr() & KIND_MASK;
    if old != kind & KIND_MASK || old == HEAP {
        return false;
    }
    let (at, klen) = r.key_span();
    let v = at + klen;
    if matches!(old, STR | PACKED) && 1 + bytes[v] as usize != len {
        return false;
    }
    bytes[0] = (bytes[0] & !(KIND_MASK | FLAG | TAG_MASK)) | kind;
    match *value {
        Stored::Int(x) => bytes[v..v + len].copy_from_slice(&x.to_le_bytes()[..len]),
        Stored::Str(b, _) | Stored::Packed(_, b) => bytes[v + 1..v + len].copy_from_slice(b),
        Stored::Heap(_) => unreachable!("checked above"),
    }
    true
}

/// Writes `b` as the packed value of tag `tag` of the record in `bytes`, whose value starts
/// at `at` (the header's other bits and the fields before `at` stay as they are).
#[inline]
pub(super) fn put_packed(bytes: &mut [u8], at: usize, tag: u8, b: &[u8]) {
    bytes[0] = (bytes[0] & !(KIND_MASK | FLAG | TAG_MASK)) | PACKED | tag << TAG_SHIFT;
    bytes[at] = b.len() as u8;
    bytes[at + 1..at + 1 + b.len()].copy_from_slice(b);
}

/// Writes the 24-bit clock of the record in `bytes`.
#[inline]
pub(super) fn set_clock(bytes: &mut [u8], clock: u32) {
    bytes[CLOCK_AT..CLOCK_AT + 3].copy_from_slice(&(clock & CLOCK_MAX).to_le_bytes()[..3]);
}

/// Writes the expire time of the volatile record in `bytes`.
#[inline]
pub(super) fn set_expire_at(bytes: &mut [u8], at_ms: u64) {
    debug_assert!(Record(bytes).is_volatile());
    bytes[EXPIRY_AT..EXPIRY_AT + 8].copy_from_slice(&at_ms.to_le_bytes());
}

/// Writes the volatile-list position of the volatile record in `bytes`.
#[inline]
pub(super) fn set_volatile_pos(bytes: &mut [u8], pos: u32) {
    debug_assert!(Record(bytes).is_volatile());
    bytes[VPOS_AT..VPOS_AT + 4].copy_from_slice(&pos.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(key: &[u8], value: Stored<'_>, clock: u32, expiry: Option<(u64, u32)>) {
        let mut out = Vec::new();
        encode(&mut out, key, &value, clock, expiry);
        assert_eq!(out.len(), encoded_len(key.len(), &value, expiry.is_some()));
        out.extend_from_slice(&[0xAA; 7]); // slot padding is ignored
        let r = Record(&out);
        assert_eq!(r.key(), key);
        assert_eq!(r.value(), value);
        assert_eq!(r.clock(), clock & CLOCK_MAX);
        assert_eq!(r.expiry(), expiry);
        assert_eq!(r.len(), out.len() - 7);
    }

    #[test]
    fn every_kind_and_width() {
        let long = vec![b'k'; 300];
        for key in [
            &b""[..],
            b"key:000000000042",
            &[b'x'; 254],
            &[b'y'; 255],
            &long,
        ] {
            for v in [
                0,
                -1,
                127,
                -128,
                128,
                32767,
                -32769,
                1 << 31,
                i32::MIN as i64,
                i64::MAX,
                i64::MIN,
            ] {
                round_trip(key, Stored::Int(v), 7, None);
                round_trip(key, Stored::Int(v), CLOCK_MAX + 5, Some((u64::MAX, 9)));
            }
            for s in [&b""[..], b"0123456789abcdef", &[7u8; STR_MAX]] {
                round_trip(key, Stored::Str(s, false), 1, None);
                round_trip(key, Stored::Str(s, true), 1, Some((1, 0)));
                round_trip(key, Stored::Packed(0, s), 2, None);
                round_trip(key, Stored::Packed(PACKED_TAGS - 1, s), 3, Some((4, 5)));
            }
            round_trip(key, Stored::Heap(u32::MAX), 0, None);
        }
    }

    #[test]
    fn sizes_of_the_benchmark_shapes() {
        let key = b"key:000000000042";
        // S2: a counter above 10,000 and below 2^31 takes 4 bytes.
        assert_eq!(encoded_len(16, &Stored::Int(1_000_000), false), 25);
        // S1: a 16-byte string.
        assert_eq!(encoded_len(16, &Stored::Str(key, false), false), 38);
        // A collection: the slab index.
        assert_eq!(encoded_len(16, &Stored::Heap(0), false), 25);
        assert_eq!(encoded_len(16, &Stored::Heap(0), true), 37);
    }

    #[test]
    fn values_of_the_same_size_are_overwritten_in_place() {
        let mut out = Vec::new();
        encode(&mut out, b"key", &Stored::Int(70_000), 9, Some((10, 3)));
        assert!(overwrite_value(&mut out, &Stored::Int(-70_000)));
        assert!(!overwrite_value(&mut out, &Stored::Int(5)), "another width");
        assert!(!overwrite_value(&mut out, &Stored::Str(b"abcd", false)));
        let r = Record(&out);
        assert_eq!(
            (r.value(), r.clock(), r.expiry()),
            (Stored::Int(-70_000), 9, Some((10, 3)))
        );
        let mut out = Vec::new();
        encode(&mut out, b"key", &Stored::Str(b"abc", false), 1, None);
        assert!(overwrite_value(&mut out, &Stored::Str(b"xyz", true)));
        assert_eq!(Record(&out).value(), Stored::Str(b"xyz", true));
        assert!(
            !overwrite_value(&mut out, &Stored::Str(b"xy", true)),
            "another length"
        );
        assert!(
            !overwrite_value(&mut out, &Stored::Packed(0, b"xyz")),
            "another kind"
        );
        let mut out = Vec::new();
        encode(&mut out, b"key", &Stored::Packed(2, b"abc"), 1, None);
        assert!(overwrite_value(&mut out, &Stored::Packed(5, b"xyz")));
        assert_eq!(
            Record(&out).value(),
            Stored::Packed(5, b"xyz"),
            "tag rewritten"
        );
        let mut out = Vec::new();
        encode(&mut out, b"key", &Stored::Heap(4), 1, None);
        assert!(!overwrite_value(&mut out, &Stored::Heap(5)));
    }

    #[test]
    fn fixed_fields_are_written_in_place() {
        let mut out = Vec::new();
        encode(&mut out, b"k", &Stored::Int(5), 1, Some((10, 3)));
        set_clock(&mut out, 0xABCDEF);
        set_expire_at(&mut out, 99);
        set_volatile_pos(&mut out, 4);
        let r = Record(&out);
        assert_eq!((r.clock(), r.expiry()), (0xABCDEF, Some((99, 4))));
        assert_eq!((r.key(), r.value()), (&b"k"[..], Stored::Int(5)));
    }
}
