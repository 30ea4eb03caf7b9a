//! The listpack form: up to `hash-max-listpack-entries` field/value pairs, in insertion
//! order (the order Redis's listpack hash keeps and HGETALL shows), in one exact-size
//! buffer kept as the set listpack keeps its own: the pair count (4 bytes), then each pair
//! as two `entry` encodings (a varint header and the bytes). The form costs 16 bytes
//! inline (a boxed slice) and one allocation; see the crate map in `hash` for the byte
//! counts.
//!
//! Field expiry (Redis 7.4's "listpackex"): the top bit of the count marks the form, and a
//! field's expiry time (Unix ms) is the score of its field entry (a field without one has
//! score 0, which costs no byte). Pairs then stand in Redis's listpackex order: fields with
//! a time first, earliest first (a field takes its place before the first one expiring
//! at the same time or later), then the fields without one in insertion order.

use crate::entry;
use crate::set::listpack::{count, HEADER};

/// The bit of the count that marks the listpackex form.
const EX_FLAG: usize = 1 << 31;

/// Packed field/value pairs in insertion order.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackHash {
    buf: Box<[u8]>,
}

/// The score a field entry keeps for an expiry time (0: none).
pub(crate) fn ttl_score(at: Option<u64>) -> f64 {
    at.map_or(0.0, |t| t as f64)
}

/// The expiry time a field entry's score stands for.
pub(crate) fn score_ttl(score: f64) -> Option<u64> {
    (score != 0.0).then_some(score as u64)
}

/// The entry bytes of one field or value (a zero score takes none).
pub(crate) fn encoded_len(bytes: &[u8]) -> usize {
    entry::encoded_len(bytes, 0.0)
}

/// One pair and where it lies in the buffer.
struct Slot<'a> {
    start: usize,
    expire_at: Option<u64>,
    value_start: usize,
    end: usize,
    field: &'a [u8],
    value: &'a [u8],
}

impl PackHash {
    /// Number of pairs.
    pub(crate) fn len(&self) -> usize {
        count(&self.buf) & !EX_FLAG
    }

    /// Whether this is the listpackex form (fields may have expiry times).
    pub(crate) fn is_ex(&self) -> bool {
        count(&self.buf) & EX_FLAG != 0
    }

    /// Turns the buffer into the listpackex form (Redis converts on the first HEXPIRE);
    /// the order is already right, as no field has a time yet.
    pub(crate) fn make_ex(&mut self) {
        if !self.is_ex() {
            let len = self.len();
            self.splice(HEADER, HEADER, 0, len | EX_FLAG, |_| {});
        }
    }

    /// Replaces bytes `at..end` of the buffer (`at` at least [`HEADER`]) with the `n` bytes
    /// `write` fills, in place when the length holds, by a reallocation to the exact size
    /// when it grows, else in one exact-size allocation (no vector slack, no shrink), and
    /// stores count `len`, keeping the listpackex mark.
    fn splice(
        &mut self,
        at: usize,
        end: usize,
        n: usize,
        len: usize,
        write: impl FnOnce(&mut [u8]),
    ) {
        let len = len | (count(&self.buf) & EX_FLAG);
        if self.buf.len() >= HEADER && n == end - at {
            write(&mut self.buf[at..end]);
        } else if self.buf.len() >= HEADER && n > end - at {
            // Growing: the buffer is reallocated (often extended where it lies, no copy)
            // and its tail moved up, where a fresh buffer took two copies of all of it.
            let grow = n - (end - at);
            let mut buf = std::mem::take(&mut self.buf).into_vec();
            let old_len = buf.len();
            buf.reserve_exact(grow);
            buf.resize(old_len + grow, 0);
            buf.copy_within(end..old_len, end + grow);
            write(&mut buf[at..at + n]);
            self.buf = buf.into_boxed_slice();
        } else {
            let old: &[u8] = if self.buf.len() < HEADER {
                &[0; HEADER]
            } else {
                &self.buf
            };
            let mut buf = Vec::with_capacity(old.len() - (end - at) + n);
            buf.extend_from_slice(&old[..at]);
            buf.resize(at + n, 0);
            write(&mut buf[at..]);
            buf.extend_from_slice(&old[end..]);
            self.buf = buf.into_boxed_slice();
        }
        let len = u32::try_from(len).expect("listpack count fits u32");
        self.buf[..HEADER].copy_from_slice(&len.to_le_bytes());
    }

    /// Every pair with its byte ranges, in order.
    fn slots(&self) -> impl Iterator<Item = Slot<'_>> + '_ {
        let mut pos = HEADER;
        std::iter::from_fn(move || {
            (pos < self.buf.len()).then(|| {
                let slot = self.slot_at(pos);
                pos = slot.end;
                slot
            })
        })
    }

    /// The pair whose field entry starts at `pos`, decoded.
    #[inline]
    fn slot_at(&self, pos: usize) -> Slot<'_> {
        let f = entry::decode(&self.buf, pos);
        let v = entry::decode(&self.buf, f.end);
        Slot {
            start: pos,
            expire_at: score_ttl(f.score),
            value_start: f.end,
            end: v.end,
            field: f.member,
            value: v.member,
        }
    }

    /// Every pair, in order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.slots().map(|s| (s.field, s.value))
    }

    /// Every pair as its field's entry bytes (header and name) and its value, in order.
    pub(crate) fn field_entries_and_values(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.slots()
            .map(|s| (&self.buf[s.start..s.value_start], s.value))
    }

    /// Every pair with its field's expiry time, in order.
    pub(crate) fn triples(&self) -> impl Iterator<Item = (&[u8], &[u8], Option<u64>)> + '_ {
        self.slots().map(|s| (s.field, s.value, s.expire_at))
    }

    /// The pair of `field`. The walk reads each entry's header alone (its span, the score
    /// skipped) and compares lengths, then last bytes (fields often share a prefix, as
    /// "user:1", "user:2"), before all bytes; only the pair found is decoded in full: a miss
    /// on a 512-pair listpack was two out-of-line decodes and a memcmp a pair.
    fn find(&self, field: &[u8]) -> Option<Slot<'_>> {
        let buf = &self.buf[..];
        let last = field.last().copied();
        let mut pos = HEADER;
        while pos < buf.len() {
            let (start, end) = entry::member_span(buf, pos);
            let (_, next) = entry::member_span(buf, end);
            if end - start == field.len()
                && last.is_none_or(|b| buf[end - 1] == b)
                && buf[start..end] == *field
            {
                return Some(self.slot_at(pos));
            }
            pos = next;
        }
        None
    }

    /// The value of `field`.
    pub(crate) fn get(&self, field: &[u8]) -> Option<&[u8]> {
        self.find(field).map(|s| s.value)
    }

    /// The value of `field` and its expiry time.
    pub(crate) fn get_with_expiry(&self, field: &[u8]) -> Option<(&[u8], Option<u64>)> {
        self.find(field).map(|s| (s.value, s.expire_at))
    }

    /// Sets `field` to `value`; true when the field is new (appended). A held field keeps
    /// its place and its time when `keep_ttl` (HINCRBY) or when it has none; otherwise it
    /// loses its time and moves to the end, as Redis's HSET on a listpackex.
    pub(crate) fn set(&mut self, field: &[u8], value: &[u8], keep_ttl: bool) -> bool {
        let n = encoded_len(value);
        if let Some(s) = self.find(field) {
            let (at, end, ttl) = (s.value_start, s.end, s.expire_at);
            if ttl.is_some() && !keep_ttl {
                self.remove(field);
                self.insert(field, value, None);
                return false;
            }
            if s.value != value {
                self.splice(at, end, n, self.len(), |dst| entry::encode(dst, value, 0.0));
            }
            return false;
        }
        self.insert(field, value, None);
        true
    }

    /// Inserts a new pair where its time puts it (at the end without one).
    fn insert(&mut self, field: &[u8], value: &[u8], expire_at: Option<u64>) {
        let score = ttl_score(expire_at);
        let at = match expire_at {
            None => None,
            Some(t) => self
                .slots()
                .find(|s| s.expire_at.is_none_or(|x| x >= t))
                .map(|s| s.start),
        };
        let (nf, nv) = (entry::encoded_len(field, score), encoded_len(value));
        let at = at.unwrap_or(self.buf.len().max(HEADER));
        self.splice(at, at, nf + nv, self.len() + 1, |dst| {
            entry::encode(&mut dst[..nf], field, score);
            entry::encode(&mut dst[nf..], value, 0.0);
        });
    }

    /// Sets or clears the expiry time of `field`, moving it to its place in the order;
    /// false when the field is not held. The form must be listpackex.
    pub(crate) fn set_expiry(&mut self, field: &[u8], expire_at: Option<u64>) -> bool {
        debug_assert!(self.is_ex());
        let Some(s) = self.find(field) else {
            return false;
        };
        let value = s.value.to_vec();
        self.remove(field);
        self.insert(field, &value, expire_at);
        true
    }

    /// The earliest expiry time of a field (the first field's, in the listpackex order).
    pub(crate) fn min_expiry(&self) -> Option<u64> {
        if !self.is_ex() {
            return None;
        }
        self.slots().next().and_then(|s| s.expire_at)
    }

    /// Removes up to `max` fields whose time is at or before `now`, earliest first,
    /// returning their names.
    pub(crate) fn take_expired(&mut self, now: u64, max: usize) -> Vec<Vec<u8>> {
        let due: Vec<(Vec<u8>, usize)> = self
            .slots()
            .take_while(|s| s.expire_at.is_some_and(|t| t <= now))
            .take(max)
            .map(|s| (s.field.to_vec(), s.end))
            .collect();
        if let Some(&(_, end)) = due.last() {
            self.splice(HEADER, end, 0, self.len() - due.len(), |_| {});
        }
        due.into_iter().map(|(f, _)| f).collect()
    }

    /// Removes `field`; false when it was not held.
    pub(crate) fn remove(&mut self, field: &[u8]) -> bool {
        let Some((start, end)) = self.find(field).map(|s| (s.start, s.end)) else {
            return false;
        };
        self.splice(start, end, 0, self.len() - 1, |_| {});
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

    /// The listpack whose buffer `buf` is (written as [`PackHash::bytes`] gives it), taken
    /// as it is: no reallocation when its capacity is its length.
    pub(crate) fn from_vec(buf: Vec<u8>) -> PackHash {
        PackHash {
            buf: buf.into_boxed_slice(),
        }
    }

    /// Heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Checks the count, that no field repeats and the listpackex order (a plain
    /// listpack has no time).
    pub(crate) fn validate(&self) {
        let fields: Vec<&[u8]> = self.pairs().map(|(f, _)| f).collect();
        assert_eq!(fields.len(), self.len());
        let times: Vec<Option<u64>> = self.slots().map(|s| s.expire_at).collect();
        if !self.is_ex() {
            assert!(
                times.iter().all(Option::is_none),
                "a time in a plain listpack"
            );
        }
        let timed = times.iter().take_while(|t| t.is_some()).count();
        assert!(
            times[timed..].iter().all(Option::is_none),
            "timed after untimed"
        );
        assert!(times[..timed].is_sorted(), "times out of order");
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
        assert!(p.set(b"name", b"Ada", false));
        assert!(p.set(b"age", b"36", false));
        assert!(p.set(b"city", b"London", false));
        assert!(!p.set(b"name", b"Ada Lovelace, Countess of Lovelace", false));
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

    #[test]
    fn listpackex_orders_by_time_then_insertion() {
        let mut p = PackHash::default();
        for f in [&b"a"[..], b"b", b"c", b"d"] {
            p.set(f, b"v", false);
        }
        p.make_ex();
        assert!(p.is_ex());
        assert!(p.set_expiry(b"c", Some(2000)));
        assert!(p.set_expiry(b"a", Some(1000)));
        assert!(p.set_expiry(b"d", Some(1000)), "before the equal time");
        assert!(!p.set_expiry(b"x", Some(5)));
        let order = |p: &PackHash| p.triples().map(|t| (t.0.to_vec(), t.2)).collect::<Vec<_>>();
        assert_eq!(
            order(&p),
            [
                (b"d".to_vec(), Some(1000)),
                (b"a".to_vec(), Some(1000)),
                (b"c".to_vec(), Some(2000)),
                (b"b".to_vec(), None)
            ]
        );
        assert_eq!(p.min_expiry(), Some(1000));
        assert!(!p.set(b"a", b"w", true), "HINCRBY keeps the time and place");
        assert_eq!(p.get_with_expiry(b"a"), Some((&b"w"[..], Some(1000))));
        assert!(!p.set(b"d", b"w", false), "HSET drops the time, to the end");
        assert_eq!(order(&p)[3], (b"d".to_vec(), None));
        assert_eq!(p.take_expired(1500, 10), [b"a".to_vec()]);
        assert_eq!(p.len(), 3);
        assert!(p.set_expiry(b"c", None));
        assert_eq!(p.min_expiry(), None);
        assert!(p.is_ex(), "stays listpackex");
        p.validate();
    }
}
