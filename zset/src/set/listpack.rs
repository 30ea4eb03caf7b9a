//! The listpack form: up to `set-max-listpack-entries` members, in insertion order, in
//! one packed buffer of `entry` encodings with a zero score (a varint header and the
//! member bytes), the order Redis's listpack set keeps and SMEMBERS shows. The buffer is
//! exact-size and starts with the member count (`[count: u32 LE][entries]`), so the form
//! costs 16 bytes inline (a thin box) and one allocation.

use crate::entry;

/// Packed members in insertion order.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackSet {
    buf: Box<[u8]>,
}

/// Bytes of the count in front of the entries (of a hash's listpack too).
pub(crate) const HEADER: usize = 4;

/// The entry bytes of `member` (a zero score takes none).
fn encoded_len(member: &[u8]) -> usize {
    entry::encoded_len(member, 0.0)
}

/// The count in front of the entries of a packed buffer (0 for an empty one).
pub(crate) fn count(buf: &[u8]) -> usize {
    buf.get(..HEADER).map_or(0, |h| {
        u32::from_le_bytes(h.try_into().expect("4 bytes")) as usize
    })
}

/// Applies `f` to a packed buffer as a vector, then stores it exact-size with count `len`.
pub(crate) fn edit(buf: &mut Box<[u8]>, len: usize, f: impl FnOnce(&mut Vec<u8>)) {
    let mut v = std::mem::take(buf).into_vec();
    if v.len() < HEADER {
        v.resize(HEADER, 0);
    }
    f(&mut v);
    let count = u32::try_from(len).expect("listpack count fits u32");
    v[..HEADER].copy_from_slice(&count.to_le_bytes());
    *buf = v.into_boxed_slice();
}

/// Whether `entries` (a listpack set's, without the count) hold `member`, and how many
/// entries the walk passed (all of them when it does not).
pub(crate) fn find_in_entries(entries: &[u8], member: &[u8]) -> (bool, usize) {
    let (mut at, mut n) = (0, 0);
    while at < entries.len() {
        let (start, end) = entry::member_span(entries, at);
        if &entries[start..end] == member {
            return (true, n);
        }
        at = end;
        n += 1;
    }
    (false, n)
}

impl PackSet {
    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        count(&self.buf)
    }

    fn edit(&mut self, len: usize, f: impl FnOnce(&mut Vec<u8>)) {
        edit(&mut self.buf, len, f)
    }

    /// The entries without the count in front (the packed form a caller keeps elsewhere).
    pub(crate) fn entry_bytes(&self) -> &[u8] {
        self.buf.get(HEADER..).unwrap_or_default()
    }

    /// The set whose [`PackSet::entry_bytes`] are `entries` (the count is theirs).
    pub(crate) fn from_entry_bytes(entries: &[u8]) -> PackSet {
        let mut buf = Vec::with_capacity(HEADER + entries.len());
        buf.extend_from_slice(&[0; HEADER]);
        buf.extend_from_slice(entries);
        let mut pos = HEADER;
        let mut n: u32 = 0;
        while pos < buf.len() {
            pos = entry::decode(&buf, pos).end;
            n += 1;
        }
        buf[..HEADER].copy_from_slice(&n.to_le_bytes());
        PackSet {
            buf: buf.into_boxed_slice(),
        }
    }

    /// Every member with its byte range, in order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = (usize, &[u8], usize)> + '_ {
        let mut pos = HEADER;
        std::iter::from_fn(move || {
            (pos < self.buf.len()).then(|| {
                let e = entry::decode(&self.buf, pos);
                let start = pos;
                pos = e.end;
                (start, e.member, e.end)
            })
        })
    }

    /// Every member, in order.
    pub(crate) fn members(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.entries().map(|(_, m, _)| m)
    }

    /// The byte range of `member`'s entry.
    fn find(&self, member: &[u8]) -> Option<(usize, usize)> {
        self.entries()
            .find(|(_, m, _)| *m == member)
            .map(|(s, _, e)| (s, e))
    }

    /// Whether `member` is held.
    pub(crate) fn contains(&self, member: &[u8]) -> bool {
        self.find(member).is_some()
    }

    /// Appends `member`, which must not be held.
    pub(crate) fn push(&mut self, member: &[u8]) {
        let n = encoded_len(member);
        self.edit(self.len() + 1, |buf| {
            let at = buf.len();
            buf.reserve_exact(n);
            buf.resize(at + n, 0);
            entry::encode(&mut buf[at..], member, 0.0);
        });
    }

    /// Removes `member`; false when it was not held.
    pub(crate) fn remove(&mut self, member: &[u8]) -> bool {
        let Some((start, end)) = self.find(member) else {
            return false;
        };
        self.edit(self.len() - 1, |buf| {
            buf.drain(start..end);
        });
        true
    }

    /// The member at position `i` (below `len`).
    pub(crate) fn get(&self, i: usize) -> &[u8] {
        self.members().nth(i).expect("index below len")
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Checks the count and that no member repeats.
    pub(crate) fn validate(&self) {
        let all: Vec<&[u8]> = self.members().collect();
        assert_eq!(all.len(), self.len());
        let unique: std::collections::HashSet<&[u8]> = all.iter().copied().collect();
        assert_eq!(unique.len(), all.len(), "duplicate member");
    }
}

/// The bytes a listpack form needs for `members`.
pub(crate) fn bytes_for<'a>(members: impl Iterator<Item = &'a [u8]>) -> usize {
    members.map(encoded_len).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_insertion_order_through_removals() {
        let mut p = PackSet::default();
        for m in [
            &b"b"[..],
            b"a",
            b"a-much-longer-member-than-sixteen-bytes",
            b"c",
        ] {
            p.push(m);
        }
        assert!(p.remove(b"a"));
        assert!(!p.remove(b"a"));
        assert_eq!(
            p.members().collect::<Vec<_>>(),
            [&b"b"[..], b"a-much-longer-member-than-sixteen-bytes", b"c"]
        );
        assert_eq!(p.get(2), b"c");
        assert_eq!(p.memory_bytes(), HEADER + bytes_for(p.members()));
        p.validate();
    }
}
