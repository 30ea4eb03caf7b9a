//! The byte encoding of one `(member, score)` entry, shared by the small
//! form's packed buffer and the large form's member arena.
//!
//! ```text
//! +-------------------------------+------------------------+--------------+
//! | header: LEB128 varint         | score: 0 to 8 bytes LE | member bytes |
//! |   (member_len << 3) | kind    |   width set by kind    |              |
//! |   1 byte when member < 16 B   |                        |              |
//! +-------------------------------+------------------------+--------------+
//! kind 0: f64 (8)   1: zero (0)   2: i8 (1)   3: i16 (2)   4: i24 (3)
//!      5: i32 (4)   6: u32 (4)    7: i56 (7)
//! ```
//!
//! A score is stored as an integer when that is lossless: it has no fraction,
//! its magnitude is at most 2^53 and it is not `-0.0` (whose sign Redis
//! prints). An integer score then costs 0 to 4 bytes instead of 8 when it is
//! within `[-2^31, 2^32)` (0 bytes for `0`, which lex-ordered sets use
//! throughout), and 7 above that. Everything else keeps the exact 8 bytes of
//! the `f64`.

/// Largest integer magnitude stored in the integer form (every integer up to
/// 2^53 is exactly representable as an `f64`).
const INT_LIMIT: f64 = 9_007_199_254_740_992.0;

/// One decoded entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<'a> {
    /// The score, exactly as it was stored.
    pub score: f64,
    /// The member bytes, borrowed from the buffer.
    pub member: &'a [u8],
    /// Offset just past this entry.
    pub end: usize,
}

/// The integer form of `score`, when storing it as one is lossless.
fn int_score(score: f64) -> Option<i64> {
    let negative_zero = score == 0.0 && score.is_sign_negative();
    if score.fract() == 0.0 && score.abs() <= INT_LIMIT && !negative_zero {
        Some(score as i64)
    } else {
        None
    }
}

/// Score bytes stored for each kind.
const WIDTH: [usize; 8] = [8, 0, 1, 2, 3, 4, 4, 7];
const KIND_F64: u64 = 0;
const KIND_ZERO: u64 = 1;
const KIND_U32: u64 = 6;

/// The smallest kind holding `score`.
#[inline]
fn kind_of(score: f64) -> u64 {
    if score.to_bits() == 0 {
        // +0 (not -0): the unscored entries of hashes, sets and lists, tested first.
        return KIND_ZERO;
    }
    let Some(v) = int_score(score) else {
        return KIND_F64;
    };
    match v {
        0 => KIND_ZERO,
        -0x80..=0x7f => 2,
        -0x8000..=0x7fff => 3,
        -0x80_0000..=0x7f_ffff => 4,
        -0x8000_0000..=0x7fff_ffff => 5,
        0x8000_0000..=0xffff_ffff => KIND_U32,
        _ => 7,
    }
}

fn varint_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Writes `v` at the start of `dst`, returning the bytes written.
fn put_varint(dst: &mut [u8], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        dst[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    dst[i] = v as u8;
    i + 1
}

/// Reads a varint at `pos`, returning it and the offset after it. Headers of one and two
/// bytes (members under 2 KiB) take no loop.
#[inline]
fn get_varint(buf: &[u8], pos: usize) -> (u64, usize) {
    let first = buf[pos];
    if first < 0x80 {
        return (u64::from(first), pos + 1);
    }
    let second = buf[pos + 1];
    if second < 0x80 {
        return (u64::from(first & 0x7f) | u64::from(second) << 7, pos + 2);
    }
    get_long_varint(buf, pos)
}

/// [`get_varint`] of three bytes or more.
#[inline(never)]
fn get_long_varint(buf: &[u8], mut pos: usize) -> (u64, usize) {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = buf[pos];
        pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return (v, pos);
        }
        shift += 7;
    }
}

/// Bytes the entry for `(member, score)` occupies.
pub(crate) fn encoded_len(member: &[u8], score: f64) -> usize {
    let kind = kind_of(score);
    varint_len(((member.len() as u64) << 3) | kind) + WIDTH[kind as usize] + member.len()
}

/// Encodes the entry into `dst`, which must be exactly `encoded_len` long.
pub(crate) fn encode(dst: &mut [u8], member: &[u8], score: f64) {
    let kind = kind_of(score);
    let mut pos = put_varint(dst, ((member.len() as u64) << 3) | kind);
    let width = WIDTH[kind as usize];
    let bits = if kind == KIND_F64 {
        score.to_bits()
    } else {
        score as i64 as u64
    };
    dst[pos..pos + width].copy_from_slice(&bits.to_le_bytes()[..width]);
    pos += width;
    dst[pos..pos + member.len()].copy_from_slice(member);
    debug_assert_eq!(pos + member.len(), dst.len());
}

/// Replaces the score of the entry at `pos` with `score` in place when its stored width
/// stays the same (the header's kind bits and the score bytes change; the member does not
/// move) and returns true; returns false, changing nothing, when the width would differ.
pub(crate) fn rewrite_score(buf: &mut [u8], pos: usize, score: f64) -> bool {
    let (header, at) = get_varint(buf, pos);
    let kind = kind_of(score);
    let width = WIDTH[kind as usize];
    if WIDTH[(header & 7) as usize] != width {
        return false;
    }
    // The kind is in the low 3 bits of the header's first byte.
    buf[pos] = (buf[pos] & !7) | kind as u8;
    let bits = if kind == KIND_F64 {
        score.to_bits()
    } else {
        score as i64 as u64
    };
    if let Some(word) = buf.get_mut(at..at + 8) {
        // One 8-byte read-modify-write keeps the member bytes after a narrower score.
        let mask = MASK[kind as usize];
        let old = u64::from_le_bytes((&*word).try_into().expect("8 bytes"));
        word.copy_from_slice(&((old & !mask) | (bits & mask)).to_le_bytes());
    } else {
        buf[at..at + width].copy_from_slice(&bits.to_le_bytes()[..width]);
    }
    true
}

/// Bytes of the entry of `member` with score 0 (its header and bytes).
#[inline]
pub(crate) fn unscored_len(member_len: usize) -> usize {
    varint_len(((member_len as u64) << 3) | KIND_ZERO) + member_len
}

/// Appends the entry of `member` with score 0 to `out`: what [`encode`] writes for it.
#[inline]
pub(crate) fn put_unscored(out: &mut Vec<u8>, member: &[u8]) {
    let header = ((member.len() as u64) << 3) | KIND_ZERO;
    if header < 0x80 {
        out.push(header as u8);
    } else {
        let mut bytes = [0u8; 10];
        let n = put_varint(&mut bytes, header);
        out.extend_from_slice(&bytes[..n]);
    }
    out.extend_from_slice(member);
}

/// Where the member of the entry at `pos` starts and ends, read from the header alone (the
/// score is skipped, not decoded): the walks that only count entries or look for a member.
#[inline]
pub(crate) fn member_span(buf: &[u8], pos: usize) -> (usize, usize) {
    let (header, at) = get_varint(buf, pos);
    let start = at + WIDTH[(header & 7) as usize];
    (start, start + (header >> 3) as usize)
}

/// Decodes the entry starting at `pos`.
#[inline]
pub(crate) fn decode(buf: &[u8], pos: usize) -> Entry<'_> {
    let first = buf[pos];
    if first < 0x80 && u64::from(first & 7) == KIND_ZERO {
        // A one-byte header and no score: a short member of a hash, set or list.
        let end = pos + 1 + (first >> 3) as usize;
        return Entry {
            score: 0.0,
            member: &buf[pos + 1..end],
            end,
        };
    }
    decode_scored(buf, pos)
}

/// The bits of each kind's stored width.
const MASK: [u64; 8] = [
    u64::MAX,
    0,
    0xff,
    0xffff,
    0xff_ffff,
    0xffff_ffff,
    0xffff_ffff,
    0xff_ffff_ffff_ffff,
];
/// The shift that brings each signed kind's top stored bit to bit 63 (0 for the kinds
/// with no sign to extend).
const SIGN_SHIFT: [u32; 8] = [0, 0, 56, 48, 40, 32, 0, 8];

/// [`decode`] of an entry with a score or a header of more than one byte.
#[inline(never)]
fn decode_scored(buf: &[u8], pos: usize) -> Entry<'_> {
    let (header, pos) = get_varint(buf, pos);
    let kind = (header & 7) as usize;
    let start = pos + WIDTH[kind];
    let end = start + (header >> 3) as usize;
    Entry {
        score: score_of(buf, pos, kind),
        member: &buf[start..end],
        end,
    }
}

/// The score of the entry at `pos`, its member not sliced: what a search by score reads
/// of each entry it probes. With a header of one or two bytes (members under 2 KiB) and
/// 10 bytes of buffer from `pos`, one bounds check covers the header and the 8-byte load
/// of the score.
#[inline(always)]
pub(crate) fn score_at(buf: &[u8], pos: usize) -> f64 {
    if let Some(window) = buf.get(pos..pos + 10) {
        let first = window[0];
        if first < 0x80 || window[1] < 0x80 {
            let at = 1 + usize::from(first >> 7);
            let word = u64::from_le_bytes(window[at..at + 8].try_into().expect("8 bytes"));
            let kind = usize::from(first & 7);
            return score_from(word & MASK[kind], kind);
        }
    }
    score_at_slow(buf, pos)
}

/// [`score_at`] of an entry with a longer header or near the end of the buffer.
#[inline(never)]
fn score_at_slow(buf: &[u8], pos: usize) -> f64 {
    let (header, pos) = get_varint(buf, pos);
    score_of(buf, pos, (header & 7) as usize)
}

/// The score of `kind` stored at `at`: one 8-byte load masked to its width (the member's
/// bytes follow it) and sign-extended by shifts, with no copy of a variable length.
#[inline]
fn score_of(buf: &[u8], at: usize, kind: usize) -> f64 {
    let raw = match buf.get(at..at + 8) {
        Some(word) => u64::from_le_bytes(word.try_into().expect("8 bytes")) & MASK[kind],
        None => {
            // Too near the end of the buffer for the 8-byte load.
            let width = WIDTH[kind];
            let mut bytes = [0u8; 8];
            bytes[..width].copy_from_slice(&buf[at..at + width]);
            u64::from_le_bytes(bytes)
        }
    };
    score_from(raw, kind)
}

/// The score of `kind` whose stored bytes (masked to its width) are `raw`.
#[inline]
fn score_from(raw: u64, kind: usize) -> f64 {
    if kind as u64 == KIND_F64 {
        f64::from_bits(raw)
    } else {
        let shift = SIGN_SHIFT[kind];
        (((raw << shift) as i64) >> shift) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(member: &[u8], score: f64) -> usize {
        let n = encoded_len(member, score);
        let mut buf = vec![0xAA; n + 3];
        encode(&mut buf[1..n + 1], member, score);
        if score.to_bits() == 0 {
            let mut unscored = vec![0xAA];
            put_unscored(&mut unscored, member);
            assert_eq!(unscored[1..], buf[1..n + 1]);
            assert_eq!(unscored_len(member.len()), n);
        }
        let e = decode(&buf, 1);
        assert_eq!(e.member, member);
        assert_eq!(e.score.to_bits(), score.to_bits(), "score {score}");
        assert_eq!(e.end, n + 1);
        assert_eq!(member_span(&buf, 1), (e.end - member.len(), e.end));
        assert_eq!(
            score_at(&buf, 1).to_bits(),
            score.to_bits(),
            "score_at {score}"
        );
        // Followed by other bytes: the one-load path (headers of one or two bytes).
        let mut padded = buf.clone();
        padded.extend_from_slice(&[0xAA; 16]);
        assert_eq!(
            score_at(&padded, 1).to_bits(),
            score.to_bits(),
            "padded {score}"
        );
        // Alone in an exact buffer: no 8-byte load fits past a short entry's score.
        let exact = &buf[1..n + 1];
        let e = decode(exact, 0);
        assert_eq!((e.member, e.end), (member, n));
        assert_eq!(e.score.to_bits(), score.to_bits(), "exact {score}");
        assert_eq!(score_at(exact, 0).to_bits(), score.to_bits());
        n
    }

    #[test]
    fn scores_round_trip_bit_exact() {
        for s in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            127.0,
            128.0,
            -129.0,
            32767.0,
            -32769.0,
            8388607.0,
            -8388609.0,
            2147483647.0,
            2147483648.0,
            -2147483649.0,
            4294967295.0,
            4294967296.0,
            INT_LIMIT,
            -INT_LIMIT,
            INT_LIMIT * 2.0,
            0.1,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
        ] {
            round_trip(b"member", s);
        }
    }

    #[test]
    fn narrow_scores_save_bytes() {
        assert_eq!(round_trip(b"a", 0.0), 2);
        assert_eq!(round_trip(b"a", 5.0), 3);
        assert_eq!(round_trip(b"a", -128.0), 3);
        assert_eq!(round_trip(b"a", 200.0), 4);
        assert_eq!(round_trip(b"a", 999_999.0), 5);
        assert_eq!(round_trip(b"a", -2147483648.0), 6);
        assert_eq!(round_trip(b"a", 4294967295.0), 6);
        assert_eq!(round_trip(b"a", 4294967296.0), 9);
        assert_eq!(round_trip(b"a", -0.0), 10);
        assert_eq!(round_trip(b"a", 0.5), 10);
        assert_eq!(round_trip(&[7u8; 15], 1.0), 1 + 1 + 15);
        assert_eq!(round_trip(&[7u8; 16], 1.0), 2 + 1 + 16);
        assert_eq!(round_trip(b"", 1.0), 2);
        // Headers of two and three bytes.
        assert_eq!(round_trip(&[7u8; 300], -5.0), 2 + 1 + 300);
        assert_eq!(round_trip(&[7u8; 3000], 0.5), 3 + 8 + 3000);
    }

    #[test]
    fn varint_lengths() {
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(u64::MAX), 10);
    }
}
