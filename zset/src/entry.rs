//! The byte encoding of one `(member, score)` entry, shared by the small
//! form's packed buffer and the large form's member arena.
//!
//! ```text
//! +----------------------------+-----------------------------+--------------+
//! | header: LEB128 varint      | score                       | member bytes |
//! |   (member_len << 1) | int  |   int=1: zigzag LEB128 i64  |              |
//! |   1 byte when len < 64     |   int=0: 8 bytes f64 bits LE|              |
//! +----------------------------+-----------------------------+--------------+
//! ```
//!
//! A score is stored as an integer when that is lossless: it has no fraction,
//! its magnitude is at most 2^53 and it is not `-0.0` (whose sign Redis
//! prints). Integer scores below 64 in magnitude then cost 1 byte, below 8192
//! 2 bytes, below 2^31 at most 5 bytes, instead of 8. Everything else keeps
//! the exact 8 bytes of the `f64`.

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

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
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

/// Reads a varint at `pos`, returning it and the offset after it.
fn get_varint(buf: &[u8], mut pos: usize) -> (u64, usize) {
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

/// The header and score fields of an entry, computed once for encoding.
struct Fields {
    header: u64,
    int: Option<i64>,
}

impl Fields {
    fn new(member: &[u8], score: f64) -> Fields {
        let int = int_score(score);
        Fields {
            header: ((member.len() as u64) << 1) | u64::from(int.is_some()),
            int,
        }
    }

    fn score_len(&self) -> usize {
        self.int.map_or(8, |v| varint_len(zigzag(v)))
    }
}

/// Bytes the entry for `(member, score)` occupies.
pub(crate) fn encoded_len(member: &[u8], score: f64) -> usize {
    let f = Fields::new(member, score);
    varint_len(f.header) + f.score_len() + member.len()
}

/// Encodes the entry into `dst`, which must be exactly `encoded_len` long.
pub(crate) fn encode(dst: &mut [u8], member: &[u8], score: f64) {
    let f = Fields::new(member, score);
    let mut pos = put_varint(dst, f.header);
    match f.int {
        Some(v) => pos += put_varint(&mut dst[pos..], zigzag(v)),
        None => {
            dst[pos..pos + 8].copy_from_slice(&score.to_bits().to_le_bytes());
            pos += 8;
        }
    }
    dst[pos..pos + member.len()].copy_from_slice(member);
    debug_assert_eq!(pos + member.len(), dst.len());
}

/// Decodes the entry starting at `pos`.
#[inline]
pub(crate) fn decode(buf: &[u8], pos: usize) -> Entry<'_> {
    let (header, mut pos) = get_varint(buf, pos);
    let score = if header & 1 == 1 {
        let (v, next) = get_varint(buf, pos);
        pos = next;
        unzigzag(v) as f64
    } else {
        let mut bits = [0u8; 8];
        bits.copy_from_slice(&buf[pos..pos + 8]);
        pos += 8;
        f64::from_bits(u64::from_le_bytes(bits))
    };
    let len = (header >> 1) as usize;
    Entry {
        score,
        member: &buf[pos..pos + len],
        end: pos + len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(member: &[u8], score: f64) -> usize {
        let n = encoded_len(member, score);
        let mut buf = vec![0xAA; n + 3];
        encode(&mut buf[1..n + 1], member, score);
        let e = decode(&buf, 1);
        assert_eq!(e.member, member);
        assert_eq!(e.score.to_bits(), score.to_bits(), "score {score}");
        assert_eq!(e.end, n + 1);
        n
    }

    #[test]
    fn scores_round_trip_bit_exact() {
        for s in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            63.0,
            64.0,
            -64.0,
            4294967295.0,
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
        assert_eq!(round_trip(b"a", 5.0), 3);
        assert_eq!(round_trip(b"a", 100.0), 4);
        assert_eq!(round_trip(b"a", 4294967295.0), 7);
        assert_eq!(round_trip(b"a", -0.0), 10);
        assert_eq!(round_trip(b"a", 0.5), 10);
        assert_eq!(round_trip(&[7u8; 64], 1.0), 2 + 1 + 64);
        assert_eq!(round_trip(b"", 1.0), 2);
    }

    #[test]
    fn varint_lengths() {
        assert_eq!(varint_len(0), 1);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(u64::MAX), 10);
    }
}
