//! A small sorted set's entries with the prefix every member shares stored once: the form a
//! key's record keeps them in when that is smaller (`ZSet::prefixed_into`).
//!
//! ```text
//! [prefix len: 1][prefix: 0..=255][entry]...
//!   entry: the `entry` encoding's header and score, unchanged (the header still gives the
//!          member's full length), then the member's bytes after the prefix
//! ```
//!
//! Ten members "m:" + 12 hex digits with u32 scores: 190 -> 173 bytes (1 + 2 + ten of
//! 1 + 4 + 12). Both directions copy the bytes between two prefixes in one piece (a
//! member's rest, then the next entry's header and score) and read only headers, never
//! scores.

use crate::entry::member_span;

/// Longest prefix stored.
const PREFIX_MAX: usize = u8::MAX as usize;

/// Writes `entries` (at least one entry of the `entry` encoding) in the prefixed form into
/// `out` (cleared first) and returns true, or returns false and leaves `out` alone when that
/// form would not be smaller.
pub(crate) fn strip(entries: &[u8], out: &mut Vec<u8>) -> bool {
    if entries.is_empty() {
        return false;
    }
    let (start, end) = member_span(entries, 0);
    let first = &entries[start..end];
    let mut shared = first.len().min(PREFIX_MAX);
    let (mut at, mut n) = (end, 1);
    while at < entries.len() {
        let (start, end) = member_span(entries, at);
        shared = common_len(&first[..shared], &entries[start..end]);
        if shared == 0 {
            return false;
        }
        at = end;
        n += 1;
    }
    // The prefix saves `n * shared` bytes and costs `shared + 1`.
    if (n - 1) * shared < 2 {
        return false;
    }
    out.clear();
    out.reserve(entries.len() + 1 - (n - 1) * shared);
    out.push(shared as u8);
    out.extend_from_slice(&first[..shared]);
    let (mut from, mut at) = (0, 0);
    while at < entries.len() {
        let (start, end) = member_span(entries, at);
        out.extend_from_slice(&entries[from..start]);
        from = start + shared;
        at = end;
    }
    out.extend_from_slice(&entries[from..]);
    true
}

/// Length of the longest common prefix of `a` and `b`, eight bytes a step.
#[inline]
fn common_len(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let x = u64::from_le_bytes(a[i..i + 8].try_into().expect("8 bytes"))
            ^ u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Entries a record's set is sized for before it counts them (a small set in a record has
/// about ten; more only grow the buffer once more).
const EXPECTED_ENTRIES: usize = 16;

/// The entries [`strip`] wrote `bytes` from, and how many there are (one walk).
pub(crate) fn expand(bytes: &[u8]) -> (Vec<u8>, usize) {
    let shared = bytes[0] as usize;
    let (prefix, body) = bytes[1..].split_at(shared);
    let mut out = Vec::with_capacity(body.len() + EXPECTED_ENTRIES * shared);
    let (mut from, mut at, mut n) = (0, 0, 0);
    while at < body.len() {
        let (start, end) = member_span(body, at);
        out.extend_from_slice(&body[from..start]);
        out.extend_from_slice(prefix);
        from = start;
        at = end - shared;
        n += 1;
    }
    out.extend_from_slice(&body[from..]);
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{encode, encoded_len};
    use proptest::prelude::*;

    fn entries(items: &[(Vec<u8>, f64)]) -> Vec<u8> {
        let mut buf = Vec::new();
        for (member, score) in items {
            let at = buf.len();
            buf.resize(at + encoded_len(member, *score), 0);
            encode(&mut buf[at..], member, *score);
        }
        buf
    }

    #[test]
    fn shared_prefix_is_stored_once() {
        let items: Vec<(Vec<u8>, f64)> = (0..10)
            .map(|i| {
                (
                    format!("m:{:012x}", i * 7919).into_bytes(),
                    3e9 + f64::from(i),
                )
            })
            .collect();
        let plain = entries(&items);
        assert_eq!(plain.len(), 190);
        let mut out = Vec::new();
        assert!(strip(&plain, &mut out));
        // "m:" and the seven hex digits all ten share (the largest is 0x11667).
        assert_eq!(&out[..10], b"\x09m:0000000");
        assert_eq!(out.len(), 1 + 9 + 10 * (1 + 4 + 5));
        assert_eq!(expand(&out), (plain, 10));
    }

    #[test]
    fn common_len_across_word_steps() {
        let a = b"0123456789abcdefXYZ";
        for cut in 0..a.len() {
            let mut b = a.to_vec();
            b[cut] = b'!';
            assert_eq!(common_len(a, &b), cut);
        }
        assert_eq!(common_len(a, &a[..11]), 11);
        assert_eq!(common_len(a, a), a.len());
        assert_eq!(common_len(b"", a), 0);
    }

    #[test]
    fn no_saving_no_prefixed_form() {
        let mut out = vec![9];
        let one = entries(&[(b"member".to_vec(), 1.0)]);
        assert!(!strip(&one, &mut out), "a single entry");
        let apart = entries(&[(b"ab".to_vec(), 1.0), (b"cd".to_vec(), 2.0)]);
        assert!(!strip(&apart, &mut out), "nothing shared");
        let one_byte = entries(&[(b"ab".to_vec(), 1.0), (b"ac".to_vec(), 2.0)]);
        assert!(
            !strip(&one_byte, &mut out),
            "one byte shared by two saves nothing"
        );
        assert!(!strip(&[], &mut out));
        assert_eq!(out, [9]);
        let empty_member = entries(&[(b"".to_vec(), 1.0), (b"a".to_vec(), 2.0)]);
        assert!(!strip(&empty_member, &mut out));
    }

    #[test]
    fn prefix_stops_at_255_bytes() {
        let long = vec![b'x'; 300];
        let items = vec![(long[..299].to_vec(), 1.0), (long.clone(), 2.0)];
        let plain = entries(&items);
        let mut out = Vec::new();
        assert!(strip(&plain, &mut out));
        assert_eq!(out[0], 255);
        assert_eq!(expand(&out), (plain, 2));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn strip_then_expand_gives_the_entries_back(
            prefix in proptest::collection::vec(any::<u8>(), 0..20),
            items in proptest::collection::vec(
                (proptest::collection::vec(0u8..4, 0..20), prop_oneof![
                    Just(0.0), any::<i32>().prop_map(f64::from), any::<f64>().prop_filter("not NaN", |s| !s.is_nan()),
                    (0u64..1 << 32).prop_map(|v| v as f64),
                ]),
                1..12,
            ),
        ) {
            let items: Vec<(Vec<u8>, f64)> = items
                .into_iter()
                .map(|(rest, score)| ([prefix.clone(), rest].concat(), score))
                .collect();
            let plain = entries(&items);
            let mut out = Vec::new();
            if strip(&plain, &mut out) {
                prop_assert!(out.len() < plain.len());
                prop_assert_eq!(expand(&out), (plain, items.len()));
            } else {
                prop_assert!(items.len() < 2 || prefix.len() < 2);
            }
        }
    }
}
