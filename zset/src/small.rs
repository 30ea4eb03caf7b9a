//! The small form (Redis's "listpack"): every entry of the set in one packed
//! byte buffer, in `(score, member)` order, using the encoding of `entry`.
//! Every operation is a linear walk, which for at most a few hundred short
//! entries in one or two cache lines per entry beats any index.

use std::ops::Range;

use crate::entry::{self, Entry};
use crate::order::{cmp_key, cmp_score};
use crate::{LexRange, ScoreRange};

/// A small sorted set in one packed buffer.
#[derive(Clone, Debug, Default)]
pub(crate) struct SmallSet {
    buf: Vec<u8>,
    len: u32,
}

/// Entries of a buffer from a byte offset onwards, with their offsets.
struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Walk<'a> {
    type Item = (usize, Entry<'a>);

    fn next(&mut self) -> Option<(usize, Entry<'a>)> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let at = self.pos;
        let e = entry::decode(self.buf, at);
        self.pos = e.end;
        Some((at, e))
    }
}

impl SmallSet {
    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    fn walk(&self) -> Walk<'_> {
        Walk {
            buf: &self.buf,
            pos: 0,
        }
    }

    /// Every entry in order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = Entry<'_>> + '_ {
        self.walk().map(|(_, e)| e)
    }

    /// Offset, rank and entry of `member`. The walk reads headers and members only: the
    /// score is decoded for the entry found.
    fn find(&self, member: &[u8]) -> Option<(usize, usize, Entry<'_>)> {
        let buf = &self.buf[..];
        let (mut at, mut rank) = (0, 0);
        while at < buf.len() {
            let (start, end) = entry::member_span(buf, at);
            if &buf[start..end] == member {
                return Some((at, rank, entry::decode(buf, at)));
            }
            at = end;
            rank += 1;
        }
        None
    }

    /// Number of entries in `buf`, from their headers.
    fn count(buf: &[u8]) -> usize {
        let (mut at, mut n) = (0, 0);
        while at < buf.len() {
            at = entry::member_span(buf, at).1;
            n += 1;
        }
        n
    }

    /// The score of `member`.
    pub(crate) fn score(&self, member: &[u8]) -> Option<f64> {
        self.find(member).map(|(_, _, e)| e.score)
    }

    /// The rank of `member`.
    pub(crate) fn rank(&self, member: &[u8]) -> Option<usize> {
        self.find(member).map(|(_, rank, _)| rank)
    }

    /// The entry at `rank`.
    pub(crate) fn get_by_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        self.entries().nth(rank).map(|e| (e.member, e.score))
    }

    /// Updates the score of an existing member (a no-op when the scores are
    /// numerically equal, as Redis does); returns the previous score, or
    /// `None` if the member is absent.
    pub(crate) fn update(&mut self, member: &[u8], score: f64) -> Option<f64> {
        let (at, _, e) = self.find(member)?;
        let old = e.score;
        if cmp_score(old, score).is_ne() {
            let end = e.end;
            self.cut(at..end);
            self.len -= 1;
            self.insert_new(member, score);
        }
        Some(old)
    }

    /// Inserts a member known to be absent.
    pub(crate) fn insert_new(&mut self, member: &[u8], score: f64) {
        let at = self
            .walk()
            .find(|(_, e)| cmp_key(e.score, e.member, score, member).is_gt())
            .map_or(self.buf.len(), |(at, _)| at);
        let n = entry::encoded_len(member, score);
        let old_len = self.buf.len();
        if self.buf.capacity() - old_len < n {
            self.buf.reserve_exact(n.max(self.buf.capacity() / 8));
        }
        self.buf.resize(old_len + n, 0);
        self.buf.copy_within(at..old_len, at + n);
        entry::encode(&mut self.buf[at..at + n], member, score);
        self.len += 1;
    }

    /// Removes `member`, returning its score.
    pub(crate) fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let (at, _, e) = self.find(member)?;
        let (score, end) = (e.score, e.end);
        self.cut(at..end);
        self.len -= 1;
        self.trim();
        Some(score)
    }

    /// Deletes a byte range of whole entries (does not touch `len`).
    fn cut(&mut self, bytes: Range<usize>) {
        self.buf.copy_within(bytes.end.., bytes.start);
        self.buf.truncate(self.buf.len() - bytes.len());
    }

    fn trim(&mut self) {
        if self.buf.capacity() > 64 && self.buf.capacity() > self.buf.len() * 2 {
            self.buf.shrink_to(self.buf.len() + self.buf.len() / 8);
        }
    }

    /// Byte offset of the entry at `rank` (or the end of the buffer).
    fn offset_of(&self, rank: usize) -> usize {
        self.walk().nth(rank).map_or(self.buf.len(), |(at, _)| at)
    }

    /// Removes the entries at `ranks` (clamped); returns how many.
    pub(crate) fn remove_rank_range(&mut self, ranks: Range<usize>) -> usize {
        let end = ranks.end.min(self.len());
        if ranks.start >= end {
            return 0;
        }
        let from = self.offset_of(ranks.start);
        let to = self.offset_of(end);
        self.cut(from..to);
        self.len -= (end - ranks.start) as u32;
        self.trim();
        end - ranks.start
    }

    /// Number of leading entries satisfying `pred`.
    fn count_where(&self, pred: impl Fn(&Entry<'_>) -> bool) -> usize {
        self.entries().take_while(|e| pred(e)).count()
    }

    /// Ranks of the entries whose scores lie in `range`.
    pub(crate) fn score_range_ranks(&self, range: &ScoreRange) -> Range<usize> {
        let start = self.count_where(|e| range.before_start(e.score));
        let end = self.count_where(|e| range.before_end(e.score));
        crate::order::rank_range(start, end)
    }

    /// Ranks of the entries whose members lie in `range`.
    pub(crate) fn lex_range_ranks(&self, range: &LexRange) -> Range<usize> {
        let start = self.count_where(|e| range.before_start(e.member));
        let end = self.count_where(|e| range.before_end(e.member));
        crate::order::rank_range(start, end)
    }

    /// Entries at `ranks` (clamped), from either end.
    pub(crate) fn range(&self, ranks: Range<usize>) -> SmallIter<'_> {
        let end = ranks.end.min(self.len());
        let start = ranks.start.min(end);
        SmallIter {
            buf: &self.buf,
            front: self.offset_of(start),
            remaining: end - start,
            back: None,
        }
    }

    /// The entries (the packed form a caller keeps elsewhere; the count is theirs).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The set whose [`SmallSet::bytes`] are `bytes`.
    pub(crate) fn from_bytes(bytes: &[u8]) -> SmallSet {
        SmallSet {
            buf: bytes.to_vec(),
            len: SmallSet::count(bytes) as u32,
        }
    }

    /// The set of the `len` entries in `buf`.
    pub(crate) fn from_parts(buf: Vec<u8>, len: usize) -> SmallSet {
        SmallSet {
            buf,
            len: len as u32,
        }
    }

    /// Releases spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.buf.shrink_to_fit();
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Checks that entries decode, are in strict order and match `len`.
    pub(crate) fn validate(&self) {
        let mut count = 0;
        let mut prev: Option<Entry<'_>> = None;
        for e in self.entries() {
            assert!(!e.score.is_nan(), "NaN stored");
            if let Some(p) = prev {
                assert!(
                    cmp_key(p.score, p.member, e.score, e.member).is_lt(),
                    "entries out of order"
                );
            }
            prev = Some(e);
            count += 1;
        }
        assert_eq!(count, self.len(), "length");
    }
}

/// Entries of a small set over a rank range, from either end. Walking back
/// needs entry offsets, which are gathered on the first `next_back`.
#[derive(Clone, Debug)]
pub(crate) struct SmallIter<'a> {
    buf: &'a [u8],
    front: usize,
    remaining: usize,
    /// Offsets of the entries not yet returned, once walking back began.
    back: Option<Vec<u32>>,
}

impl<'a> Iterator for SmallIter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<(&'a [u8], f64)> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let at = match &mut self.back {
            Some(offsets) => offsets.remove(0) as usize,
            None => self.front,
        };
        let e = entry::decode(self.buf, at);
        self.front = e.end;
        Some((e.member, e.score))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl DoubleEndedIterator for SmallIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        let (buf, front, remaining) = (self.buf, self.front, self.remaining);
        let offsets = self.back.get_or_insert_with(|| {
            Walk { buf, pos: front }
                .take(remaining)
                .map(|(at, _)| at as u32)
                .collect()
        });
        let at = offsets.pop().expect("one offset per remaining entry") as usize;
        self.remaining -= 1;
        let e = entry::decode(self.buf, at);
        Some((e.member, e.score))
    }
}

impl ExactSizeIterator for SmallIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[(&str, f64)]) -> SmallSet {
        let mut s = SmallSet::default();
        for &(m, sc) in items {
            s.insert_new(m.as_bytes(), sc);
        }
        s.validate();
        s
    }

    #[test]
    fn ordered_by_score_then_member() {
        let s = set(&[("b", 1.0), ("a", 1.0), ("z", -0.0), ("c", 0.5), ("y", 0.0)]);
        let got: Vec<_> = s.range(0..10).map(|(m, _)| m.to_vec()).collect();
        assert_eq!(
            got,
            [
                b"y".to_vec(),
                b"z".to_vec(),
                b"c".to_vec(),
                b"a".to_vec(),
                b"b".to_vec()
            ]
        );
        assert!(s.score(b"z").unwrap().is_sign_negative());
        assert_eq!(s.rank(b"a"), Some(3));
        assert_eq!(s.get_by_rank(2), Some((&b"c"[..], 0.5)));
    }

    #[test]
    fn update_remove_and_ranges() {
        let mut s = set(&[("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 4.0)]);
        assert_eq!(s.update(b"a", 5.0), Some(1.0));
        assert_eq!(s.update(b"q", 5.0), None);
        assert_eq!(s.rank(b"a"), Some(3));
        assert_eq!(s.remove(b"c"), Some(3.0));
        assert_eq!(s.remove_rank_range(1..2), 1);
        s.validate();
        let got: Vec<_> = s
            .range(0..9)
            .rev()
            .map(|(m, sc)| (m.to_vec(), sc))
            .collect();
        assert_eq!(got, [(b"a".to_vec(), 5.0), (b"b".to_vec(), 2.0)]);
    }

    #[test]
    fn iterator_meets_in_the_middle() {
        let s = set(&[("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 4.0), ("e", 5.0)]);
        let mut it = s.range(1..5);
        assert_eq!(it.next().unwrap().0, b"b");
        assert_eq!(it.next_back().unwrap().0, b"e");
        assert_eq!(it.next().unwrap().0, b"c");
        assert_eq!(it.len(), 1);
        assert_eq!(it.next_back().unwrap().0, b"d");
        assert!(it.next().is_none() && it.next_back().is_none());
    }
}
