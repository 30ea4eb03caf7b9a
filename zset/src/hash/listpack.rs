//! The listpack form: up to `hash-max-listpack-entries` field/value pairs, in insertion
//! order (the order Redis's listpack hash keeps and HGETALL shows), in one exact-size
//! buffer kept as the set listpack keeps its own: the pair count (4 bytes), then each pair
//! as two `entry` encodings with a zero score (a varint header and the bytes). The form
//! costs 16 bytes inline (a boxed slice) and one allocation; see the crate map in `hash`
//! for the byte counts.

use crate::entry;
use crate::set::listpack::{count, edit, HEADER};

/// Packed field/value pairs in insertion order.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackHash {
    buf: Box<[u8]>,
}

/// The entry bytes of one field or value (a zero score takes none).
pub(crate) fn encoded_len(bytes: &[u8]) -> usize {
    entry::encoded_len(bytes, 0.0)
}

/// One pair and where it lies in the buffer.
struct Slot<'a> {
    start: usize,
    value_start: usize,
    end: usize,
    field: &'a [u8],
    value: &'a [u8],
}

impl PackHash {
    /// Number of pairs.
    pub(crate) fn len(&self) -> usize {
        count(&self.buf)
    }

    /// Applies `f` to the buffer as a vector, then stores it exact-size with count `len`
    /// (the set listpack's buffer discipline).
    fn edit(&mut self, len: usize, f: impl FnOnce(&mut Vec<u8>)) {
        edit(&mut self.buf, len, f)
    }

    /// Every pair with its byte ranges, in order.
    fn slots(&self) -> impl Iterator<Item = Slot<'_>> + '_ {
        let mut pos = HEADER;
        std::iter::from_fn(move || {
            (pos < self.buf.len()).then(|| {
                let f = entry::decode(&self.buf, pos);
                let v = entry::decode(&self.buf, f.end);
                let slot = Slot {
                    start: pos,
                    value_start: f.end,
                    end: v.end,
                    field: f.member,
                    value: v.member,
                };
                pos = v.end;
                slot
            })
        })
    }

    /// Every pair, in order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.slots().map(|s| (s.field, s.value))
    }

    fn find(&self, field: &[u8]) -> Option<Slot<'_>> {
        self.slots().find(|s| s.field == field)
    }

    /// The value of `field`.
    pub(crate) fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.find(field).map(|s| s.value)
    }

    /// Sets `field` to `value`, in place when the field is held (its position kept), else
    /// appended; true when the field is new.
    pub(crate) fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        let n = encoded_len(value);
        if let Some(s) = self.find(field) {
            let (at, end) = (s.value_start, s.end);
            self.edit(self.len(), |buf| {
                let mut new = vec![0; n];
                entry::encode(&mut new, value, 0.0);
                buf.splice(at..end, new);
            });
            return false;
        }
        let nf = encoded_len(field);
        self.edit(self.len() + 1, |buf| {
            let at = buf.len();
            buf.reserve_exact(nf + n);
            buf.resize(at + nf + n, 0);
            entry::encode(&mut buf[at..at + nf], field, 0.0);
            entry::encode(&mut buf[at + nf..], value, 0.0);
        });
        true
    }

    /// Removes `field`; false when it was not held.
    pub(crate) fn remove(&mut self, field: &[u8]) -> bool {
        let Some((start, end)) = self.find(field).map(|s| (s.start, s.end)) else {
            return false;
        };
        self.edit(self.len() - 1, |buf| {
            buf.drain(start..end);
        });
        true
    }

    /// The entry bytes of every pair (the arena bytes a hashtable needs for them).
    pub(crate) fn entry_bytes(&self) -> usize {
        self.buf.len().saturating_sub(HEADER)
    }

    /// The whole buffer (count and pairs).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The listpack whose buffer is `bytes` (from [`PackHash::bytes`]).
    pub(crate) fn from_bytes(bytes: &[u8]) -> PackHash {
        PackHash { buf: bytes.into() }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Checks the count and that no field repeats.
    pub(crate) fn validate(&self) {
        let fields: Vec<&[u8]> = self.pairs().map(|(f, _)| f).collect();
        assert_eq!(fields.len(), self.len());
        let unique: std::collections::HashSet<&[u8]> = fields.iter().copied().collect();
        assert_eq!(unique.len(), fields.len(), "duplicate field");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_insertion_order_through_updates_and_removals() {
        let mut p = PackHash::default();
        assert!(p.set(b"name", b"Ada"));
        assert!(p.set(b"age", b"36"));
        assert!(p.set(b"city", b"London"));
        assert!(!p.set(b"name", b"Ada Lovelace, Countess of Lovelace"));
        assert!(p.remove(b"age"));
        assert!(!p.remove(b"age"));
        assert_eq!(
            p.pairs().collect::<Vec<_>>(),
            [
                (&b"name"[..], &b"Ada Lovelace, Countess of Lovelace"[..]),
                (b"city", b"London")
            ]
        );
        assert_eq!(p.get(b"city"), Some(&b"London"[..]));
        assert_eq!(p.get(b"age"), None);
        // 4 + (1 + 4) + (2 + 34) + (1 + 4) + (1 + 6)
        assert_eq!(p.memory_bytes(), 57);
        p.validate();
    }
}
