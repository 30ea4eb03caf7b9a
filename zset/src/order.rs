//! The order of a sorted set: by score, then by member bytes, and the range
//! predicates both forms use to turn score and lex bounds into rank ranges.
//!
//! Scores compare numerically, so `-0.0` and `0.0` tie (and fall back to
//! the member) while each keeps its stored sign. NaN is never stored.

use std::cmp::Ordering;

use crate::{LexBound, LexRange, ScoreRange};

/// Numeric order of two scores; `-0.0 == 0.0`.
#[inline]
pub(crate) fn cmp_score(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// The big-endian word of the 8 bytes of `s` at `at` (which must fit).
#[inline(always)]
fn word_at(s: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(s[at..at + 8].try_into().expect("8 bytes"))
}

/// Byte order of two members, as `a.cmp(b)`, compared 8 bytes at a time inline: members
/// are short, and a call to `memcmp` costs about as much as comparing them. Words compare
/// big-endian, so the first differing byte decides, as in `memcmp`; the last word
/// overlaps the one before it (its leading bytes are known equal).
#[inline]
pub(crate) fn cmp_members(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    if n < 8 {
        return a.cmp(b);
    }
    let mut at = 0;
    while at + 8 < n {
        let (x, y) = (word_at(a, at), word_at(b, at));
        if x != y {
            return x.cmp(&y);
        }
        at += 8;
    }
    word_at(a, n - 8)
        .cmp(&word_at(b, n - 8))
        .then(a.len().cmp(&b.len()))
}

/// Whether two members are equal, compared as in [`cmp_members`].
#[inline]
pub(crate) fn members_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a == b;
    }
    let mut at = 0;
    while at + 8 < n {
        if word_at(a, at) != word_at(b, at) {
            return false;
        }
        at += 8;
    }
    word_at(a, n - 8) == word_at(b, n - 8)
}

/// Order of `(score, member)` keys.
#[inline]
pub(crate) fn cmp_key(a_score: f64, a_member: &[u8], b_score: f64, b_member: &[u8]) -> Ordering {
    cmp_score(a_score, b_score).then_with(|| cmp_members(a_member, b_member))
}

impl ScoreRange {
    /// Whether `score` sorts before the range: entries satisfying this form
    /// a prefix, whose length is the first rank in the range.
    #[inline]
    pub(crate) fn before_start(&self, score: f64) -> bool {
        if self.min.exclusive {
            score <= self.min.value
        } else {
            score < self.min.value
        }
    }

    /// Whether `score` is not past the range's end: entries satisfying this
    /// form a prefix, whose length is the end rank of the range.
    #[inline]
    pub(crate) fn before_end(&self, score: f64) -> bool {
        if self.max.exclusive {
            score < self.max.value
        } else {
            score <= self.max.value
        }
    }
}

impl LexRange {
    /// Whether `member` sorts before the range (prefix property as for scores).
    #[inline]
    pub(crate) fn before_start(&self, member: &[u8]) -> bool {
        match &self.min {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Inclusive(b) => member < b.as_slice(),
            LexBound::Exclusive(b) => member <= b.as_slice(),
        }
    }

    /// Whether `member` is not past the range's end.
    #[inline]
    pub(crate) fn before_end(&self, member: &[u8]) -> bool {
        match &self.max {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Inclusive(b) => member <= b.as_slice(),
            LexBound::Exclusive(b) => member < b.as_slice(),
        }
    }
}

/// The rank range `start..end`, empty (at `start`) when the bounds cross.
pub(crate) fn rank_range(start: usize, end: usize) -> std::ops::Range<usize> {
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ScoreBound;

    #[test]
    fn member_compares_match_the_slices() {
        let mut samples: Vec<Vec<u8>> = vec![Vec::new()];
        for len in [1, 7, 8, 9, 15, 16, 17, 20, 24, 33] {
            for fill in [0u8, 0x7f, 0x80, 0xff] {
                let base: Vec<u8> = (0..len).map(|i| fill.wrapping_add(i as u8 * 3)).collect();
                samples.push(base.clone());
                for at in [0, len / 2, len - 1] {
                    let mut other = base.clone();
                    other[at] = other[at].wrapping_add(1);
                    samples.push(other);
                }
            }
        }
        for a in &samples {
            for b in &samples {
                assert_eq!(cmp_members(a, b), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(members_eq(a, b), a == b, "{a:?} {b:?}");
            }
            // Every proper prefix sorts first.
            for cut in 0..a.len() {
                assert_eq!(cmp_members(&a[..cut], a), Ordering::Less);
                assert!(!members_eq(&a[..cut], a));
            }
        }
    }

    #[test]
    fn zeros_tie_and_fall_back_to_member() {
        assert_eq!(cmp_score(-0.0, 0.0), Ordering::Equal);
        assert_eq!(cmp_key(0.0, b"a", -0.0, b"b"), Ordering::Less);
        assert_eq!(
            cmp_key(f64::NEG_INFINITY, b"z", -1e300, b"a"),
            Ordering::Less
        );
    }

    #[test]
    fn score_bounds() {
        let r = ScoreRange {
            min: ScoreBound {
                value: 1.0,
                exclusive: true,
            },
            max: ScoreBound {
                value: 2.0,
                exclusive: false,
            },
        };
        assert!(r.before_start(1.0) && !r.before_start(1.5));
        assert!(r.before_end(2.0) && !r.before_end(2.5));
    }

    #[test]
    fn lex_bounds() {
        let r = LexRange {
            min: LexBound::Exclusive(b"b".to_vec()),
            max: LexBound::Inclusive(b"d".to_vec()),
        };
        assert!(r.before_start(b"b") && !r.before_start(b"ba"));
        assert!(r.before_end(b"d") && !r.before_end(b"da"));
        let all = LexRange {
            min: LexBound::NegInf,
            max: LexBound::PosInf,
        };
        assert!(!all.before_start(b"") && all.before_end(b"\xff"));
        let none = LexRange {
            min: LexBound::PosInf,
            max: LexBound::NegInf,
        };
        assert!(none.before_start(b"") && !none.before_end(b""));
    }
}
