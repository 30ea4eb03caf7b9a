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

/// Order of `(score, member)` keys.
#[inline]
pub(crate) fn cmp_key(a_score: f64, a_member: &[u8], b_score: f64, b_member: &[u8]) -> Ordering {
    cmp_score(a_score, b_score).then_with(|| a_member.cmp(b_member))
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
