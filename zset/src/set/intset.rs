//! The intset form: the members, all integers, sorted ascending in one buffer at the
//! narrowest width that holds them all (2, 4 or 8 bytes, little-endian), as Redis's
//! intset. A value that needs a wider width re-encodes the whole buffer; nothing narrows
//! again.

/// Redis's string2ll: the integer `s` spells canonically (no sign but `-`, no leading
/// zero, no "-0", at most 20 bytes, within i64), the test of "representable as integer".
pub fn parse_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        (v <= i64::MAX as u64 + 1).then(|| (v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// Characters in the decimal text of `v`, sign included (Redis's sdigits10).
pub(crate) fn digits(v: i64) -> usize {
    itoa::Buffer::new().format(v).len()
}

/// The narrowest width (2, 4 or 8 bytes) holding `v`.
fn width_of(v: i64) -> u8 {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

/// Sorted integers at one width, in one exact-size buffer: `[width][v0][v1]...`, so the
/// form costs 16 bytes inline (a thin box) and one allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct IntSet {
    buf: Box<[u8]>,
}

impl IntSet {
    /// The bytes per integer (2, 4 or 8): Redis's intset encoding.
    pub(crate) fn width(&self) -> u8 {
        self.buf.first().copied().unwrap_or(2)
    }

    /// The packed little-endian integers, ascending (an intset blob's contents).
    pub(crate) fn contents(&self) -> &[u8] {
        self.buf.get(1..).unwrap_or_default()
    }

    /// The whole buffer (width, then the integers): the packed form a caller keeps elsewhere.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The intset whose [`IntSet::bytes`] are `bytes`.
    pub(crate) fn from_bytes(bytes: &[u8]) -> IntSet {
        IntSet { buf: bytes.into() }
    }

    /// Number of integers.
    pub(crate) fn len(&self) -> usize {
        self.contents().len() / usize::from(self.width())
    }

    /// The integer at index `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> i64 {
        let w = usize::from(self.width());
        let b = &self.contents()[i * w..i * w + w];
        match w {
            2 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            4 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => i64::from_le_bytes(b.try_into().expect("8 bytes")),
        }
    }

    /// The index of `v`, or where it would go.
    fn search(&self, v: i64) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(&v) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Whether `v` is held.
    pub(crate) fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    /// The buffer of `width` holding `len` integers from `values`, with room for one more.
    fn encode(width: u8, len: usize, values: impl Iterator<Item = i64>) -> Vec<u8> {
        let w = usize::from(width);
        let mut buf = Vec::with_capacity(1 + (len + 1) * w);
        buf.push(width);
        for v in values {
            buf.extend_from_slice(&v.to_le_bytes()[..w]);
        }
        buf
    }

    /// Inserts `v`; false when it was already held.
    pub(crate) fn insert(&mut self, v: i64) -> bool {
        let Err(at) = self.search(v) else {
            return false;
        };
        let width = self.width().max(width_of(v));
        let w = usize::from(width);
        let mut buf = if width == self.width() && !self.buf.is_empty() {
            let mut buf = std::mem::take(&mut self.buf).into_vec();
            buf.reserve_exact(w);
            buf
        } else {
            // Widen (or start): re-encode everything at the new width.
            Self::encode(width, self.len(), (0..self.len()).map(|i| self.get(i)))
        };
        let pos = 1 + at * w;
        buf.splice(pos..pos, v.to_le_bytes()[..w].iter().copied());
        self.buf = buf.into_boxed_slice();
        true
    }

    /// Removes `v`; false when it was not held.
    pub(crate) fn remove(&mut self, v: i64) -> bool {
        let Ok(at) = self.search(v) else {
            return false;
        };
        let w = usize::from(self.width());
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        buf.drain(1 + at * w..1 + at * w + w);
        self.buf = buf.into_boxed_slice();
        true
    }

    /// The smallest and largest integers, if any.
    pub(crate) fn min_max(&self) -> Option<(i64, i64)> {
        (self.len() > 0).then(|| (self.get(0), self.get(self.len() - 1)))
    }

    /// The intset of a blob's contents at `width` (2, 4 or 8), if they are strictly
    /// ascending. A blob wider than its values need keeps its width, as in Redis.
    pub(crate) fn from_contents(width: u8, contents: &[u8]) -> Option<IntSet> {
        if !matches!(width, 2 | 4 | 8) || !contents.len().is_multiple_of(usize::from(width)) {
            return None;
        }
        let mut buf = Vec::with_capacity(1 + contents.len());
        buf.push(width);
        buf.extend_from_slice(contents);
        let set = IntSet {
            buf: buf.into_boxed_slice(),
        };
        let ascending = (1..set.len()).all(|i| set.get(i - 1) < set.get(i));
        ascending.then_some(set)
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Checks order and width.
    pub(crate) fn validate(&self) {
        assert!(self
            .contents()
            .len()
            .is_multiple_of(usize::from(self.width())));
        for i in 1..self.len() {
            assert!(self.get(i - 1) < self.get(i), "ascending at {i}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_is_string2ll() {
        for ok in [
            "0",
            "-1",
            "12",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            assert_eq!(parse_int(ok.as_bytes()).unwrap().to_string(), ok);
        }
        for bad in [
            "",
            "-0",
            "01",
            "+1",
            " 1",
            "1 ",
            "9223372036854775808",
            "1.0",
            "-",
        ] {
            assert_eq!(parse_int(bad.as_bytes()), None, "{bad:?}");
        }
        assert_eq!(digits(-100), 4);
        assert_eq!(digits(i64::MIN), 20);
    }

    #[test]
    fn widths_grow_and_order_holds() {
        let mut s = IntSet::default();
        assert!(s.insert(5));
        assert!(s.insert(-3));
        assert!(!s.insert(5));
        assert_eq!(s.width(), 2);
        assert!(s.insert(70_000));
        assert_eq!(s.width(), 4);
        assert!(s.insert(i64::MIN));
        assert_eq!(s.width(), 8);
        assert_eq!(
            (0..s.len()).map(|i| s.get(i)).collect::<Vec<_>>(),
            [i64::MIN, -3, 5, 70_000]
        );
        assert!(s.remove(-3));
        assert!(!s.remove(-3));
        assert_eq!(s.width(), 8, "never narrows");
        assert_eq!(s.memory_bytes(), 1 + 3 * 8);
        s.validate();
        let copy = IntSet::from_contents(8, s.contents()).unwrap();
        assert_eq!(copy, s);
        assert!(
            IntSet::from_contents(2, &[1, 0, 1, 0]).is_none(),
            "duplicates"
        );
        assert!(IntSet::from_contents(3, &[0; 3]).is_none());
    }
}
