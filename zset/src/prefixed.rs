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

use crate::entry::{self, member_span, score_at};
use crate::order::cmp_score;
use crate::Config;

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
    put_cut(out, entries, shared);
    true
}

/// Appends `entries` (of the `entry` encoding, members whole) with each member's first
/// `cut` bytes left out (all of them share those bytes).
#[inline]
fn put_cut(out: &mut Vec<u8>, entries: &[u8], cut: usize) {
    if cut == 0 {
        return out.extend_from_slice(entries);
    }
    let (mut from, mut at) = (0, 0);
    while at < entries.len() {
        let (start, end) = member_span(entries, at);
        out.extend_from_slice(&entries[from..start]);
        from = start + cut;
        at = end;
    }
    out.extend_from_slice(&entries[from..]);
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

/// A small sorted set where a key's record holds it, read and written there without
/// rebuilding a [`crate::ZSet`]: its plain entries ([`crate::ZSet::packed`]) or its
/// prefixed form ([`crate::ZSet::prefixed_into`]), whichever the record keeps.
///
/// A write gives the form the record would choose for the result. A member added to a
/// prefixed set with its prefix leaves the prefix as it is (a set's shared prefix cannot
/// grow with a member); a plain set of three or more entries shares nothing (else it would
/// be prefixed), so it stays plain; a plain set of fewer may become prefixed with the new
/// member, which the write works out from those few. The writes declined, for the caller's
/// general path, are a member without a prefixed set's prefix (the prefix would shrink)
/// and those that convert the set.
#[derive(Clone, Copy, Debug)]
pub struct RecordSet<'a> {
    /// The prefix every member shares (empty in the plain form).
    prefix: &'a [u8],
    /// The entries, each member without the prefix.
    body: &'a [u8],
    /// Whether the form is the prefixed one.
    prefixed: bool,
}

/// What [`RecordSet::insert_into`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RecordInsert {
    /// The member is new: the form with it is written, prefixed or not.
    Added {
        /// Whether the form written is the prefixed one.
        prefixed: bool,
    },
    /// The member had the score `old`: the form with the new one is written, prefixed or
    /// not (as the set was).
    Updated {
        /// The member's previous score.
        old: f64,
        /// Whether the form written is the prefixed one.
        prefixed: bool,
    },
    /// The member already had this score (numerically): nothing is written.
    Unchanged(f64),
    /// Not written here (the prefix would shrink, or the set would convert): nothing is
    /// written.
    Declined,
}

/// Where a member's entry is, from one walk of a record's entries.
struct Probe {
    /// Offset and end of the member's entry, when present.
    found: Option<(usize, usize)>,
    /// Offset of the first entry after `(score, member)`, when the walk reached it.
    after: Option<usize>,
    /// Entries walked (all of them when the member is absent).
    count: usize,
}

impl<'a> RecordSet<'a> {
    /// The set whose plain entries are `bytes`.
    pub fn plain(bytes: &'a [u8]) -> RecordSet<'a> {
        RecordSet {
            prefix: &[],
            body: bytes,
            prefixed: false,
        }
    }

    /// The set whose prefixed form is `bytes`.
    pub fn prefixed(bytes: &'a [u8]) -> RecordSet<'a> {
        let (prefix, body) = bytes[1..].split_at(bytes[0] as usize);
        RecordSet {
            prefix,
            body,
            prefixed: true,
        }
    }

    /// Where the entry of `member` (without the prefix: `rest`) is, walking until it is
    /// found and, with `score`, until the first entry after `(score, member)` is too.
    #[inline]
    fn probe(&self, rest: &[u8], score: Option<f64>) -> Probe {
        let (body, shared) = (self.body, self.prefix.len());
        let mut probe = Probe {
            found: None,
            after: None,
            count: 0,
        };
        let mut at = 0;
        while at < body.len() {
            let (start, end) = member_span(body, at);
            let end = end - shared;
            let stored = &body[start..end];
            if probe.found.is_none() && stored == rest {
                probe.found = Some((at, end));
            }
            if let (None, Some(score)) = (probe.after, score) {
                let order = cmp_score(score_at(body, at), score).then_with(|| stored.cmp(rest));
                if order.is_gt() {
                    probe.after = Some(at);
                }
            }
            probe.count += 1;
            if probe.found.is_some() && (score.is_none() || probe.after.is_some()) {
                break;
            }
            at = end;
        }
        probe
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        let rest = member.strip_prefix(self.prefix)?;
        let (at, _) = self.probe(rest, None).found?;
        Some(score_at(self.body, at))
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.body.is_empty()
    }

    /// Inserts `member` or updates its score (`score` not NaN), as [`crate::ZSet::insert`]
    /// does while the set stays small: the record's form of the result is written into
    /// `out` (cleared first), unless nothing changes or the write is declined.
    pub fn insert_into(
        &self,
        member: &[u8],
        score: f64,
        cfg: &Config,
        out: &mut Vec<u8>,
    ) -> RecordInsert {
        debug_assert!(!score.is_nan(), "NaN scores are refused by the caller");
        let Some(rest) = member.strip_prefix(self.prefix) else {
            return RecordInsert::Declined;
        };
        let probe = self.probe(rest, Some(score));
        let body = self.body;
        let at = probe.after.unwrap_or(body.len());
        // Bytes of each member newly shared as a prefix (a plain set of a few becoming
        // prefixed).
        let mut cut = 0;
        let outcome = match probe.found {
            Some((from, _)) => {
                let old = score_at(body, from);
                if cmp_score(old, score).is_eq() {
                    return RecordInsert::Unchanged(old);
                }
                RecordInsert::Updated {
                    old,
                    prefixed: self.prefixed,
                }
            }
            None if !cfg.fits_small(probe.count + 1, member.len()) => {
                return RecordInsert::Declined
            }
            None => {
                if !self.prefixed && probe.count < 3 {
                    cut = self.shared_with(member, probe.count);
                }
                RecordInsert::Added {
                    prefixed: self.prefixed || cut > 0,
                }
            }
        };
        // The body without the old entry, cut around the new one's place.
        let (old_from, old_end) = probe.found.unwrap_or((at, at));
        let (head, middle, tail) = if at <= old_from {
            (&body[..at], &body[at..old_from], &body[old_end..])
        } else {
            (&body[..old_from], &body[old_end..at], &body[at..])
        };
        let n = entry::encoded_len(member, score);
        let shared = self.prefix.len() + cut;
        out.clear();
        out.reserve(1 + shared + body.len() + n);
        if shared > 0 {
            out.push(shared as u8);
            out.extend_from_slice(&member[..shared]);
        }
        put_cut(out, head, cut);
        if at <= old_from {
            put_stripped(out, member, score, n, shared);
            put_cut(out, middle, cut);
        } else {
            put_cut(out, middle, cut);
            put_stripped(out, member, score, n, shared);
        }
        put_cut(out, tail, cut);
        outcome
    }

    /// The prefix [`strip`] would store once for this plain set of `count` entries with
    /// `member` added (0 when it stores none).
    fn shared_with(&self, member: &[u8], count: usize) -> usize {
        let mut shared = member.len().min(PREFIX_MAX);
        let mut at = 0;
        while at < self.body.len() && shared > 0 {
            let (start, end) = member_span(self.body, at);
            shared = common_len(&member[..shared], &self.body[start..end]);
            at = end;
        }
        // The prefix saves `count * shared` bytes and costs `shared + 1`.
        if count * shared < 2 {
            0
        } else {
            shared
        }
    }
}

/// Appends the entry of `(member, score)`, `n` bytes encoded, with its member's first
/// `shared` bytes left out.
#[inline]
fn put_stripped(out: &mut Vec<u8>, member: &[u8], score: f64, n: usize, shared: usize) {
    let start = out.len();
    out.resize(start + n, 0);
    entry::encode(&mut out[start..], member, score);
    let from = start + n - member.len();
    out.copy_within(from + shared.., from);
    out.truncate(start + n - shared);
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

    /// The form a key's record keeps `set` in, and whether it is the prefixed one.
    fn record_form(set: &crate::ZSet) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        if set.prefixed_into(&mut out) {
            (out, true)
        } else {
            (set.packed().expect("small").to_vec(), false)
        }
    }

    fn record_set(form: &(Vec<u8>, bool)) -> RecordSet<'_> {
        if form.1 {
            RecordSet::prefixed(&form.0)
        } else {
            RecordSet::plain(&form.0)
        }
    }

    #[test]
    fn record_writes_give_the_records_form_or_decline() {
        let cfg = Config::default();
        let mut set = crate::ZSet::new();
        for (m, s) in [(&b"m:01"[..], 1.0), (b"m:02", 2.0)] {
            set.insert(m, s, &cfg);
        }
        let form = record_form(&set);
        assert!(form.1);
        let mut out = Vec::new();
        let rs = record_set(&form);
        assert_eq!(
            rs.insert_into(b"x", 1.0, &cfg, &mut out),
            RecordInsert::Declined
        );
        assert_eq!(
            rs.insert_into(b"m:02", 2.0, &cfg, &mut out),
            RecordInsert::Unchanged(2.0)
        );
        assert_eq!(rs.score(b"m:01"), Some(1.0));
        assert_eq!(rs.score(b"m"), None);
        let long = [b'm'; 65];
        assert_eq!(
            rs.insert_into(&long, 1.0, &cfg, &mut out),
            RecordInsert::Declined
        );
        let small = Config {
            max_listpack_entries: 2,
            ..cfg
        };
        assert_eq!(
            rs.insert_into(b"m:03", 1.0, &small, &mut out),
            RecordInsert::Declined
        );
        assert_eq!(
            rs.insert_into(b"m:02", 5.0, &small, &mut out),
            RecordInsert::Updated {
                old: 2.0,
                prefixed: true
            }
        );
        assert_eq!(
            rs.insert_into(b"m:00", 1.5, &cfg, &mut out),
            RecordInsert::Added { prefixed: true }
        );
        set.insert(b"m:00", 1.5, &cfg);
        assert_eq!((out.clone(), true), record_form(&set));
        // One member is plain; a second sharing its first bytes makes the set prefixed.
        let mut one = crate::ZSet::new();
        one.insert(b"m:01", 1.0, &cfg);
        let form = record_form(&one);
        assert!(!form.1);
        assert_eq!(
            record_set(&form).insert_into(b"m:02", 0.5, &cfg, &mut out),
            RecordInsert::Added { prefixed: true }
        );
        one.insert(b"m:02", 0.5, &cfg);
        assert_eq!((out.clone(), true), record_form(&one));
        assert_eq!(
            record_set(&form).insert_into(b"x", 0.5, &cfg, &mut out),
            RecordInsert::Added { prefixed: false }
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn record_writes_agree_with_the_set(
            prefix in proptest::collection::vec(0u8..3, 0..4),
            items in proptest::collection::vec(
                (proptest::collection::vec(0u8..3, 0..3), -3i32..4), 0..12),
            member in proptest::collection::vec(0u8..3, 0..4),
            score in prop_oneof![(-3i32..4).prop_map(f64::from), Just(-0.0), Just(0.5), Just(1e300)],
            withprefix in any::<bool>(),
            max in 1usize..14,
        ) {
            let cfg = Config { max_listpack_entries: max, max_listpack_value: 6 };
            let mut set = crate::ZSet::new();
            for (rest, s) in &items {
                set.insert(&[prefix.clone(), rest.clone()].concat(), f64::from(*s), &Config::default());
            }
            prop_assume!(set.len() <= max);
            let member = if withprefix { [prefix.clone(), member].concat() } else { member };
            let form = record_form(&set);
            let rs = record_set(&form);
            for (m, s) in set.iter() {
                prop_assert_eq!(rs.score(m).map(f64::to_bits), Some(s.to_bits()));
            }
            prop_assert_eq!(rs.score(&member).map(f64::to_bits), set.score(&member).map(f64::to_bits));
            let mut out = vec![7];
            let got = rs.insert_into(&member, score, &cfg, &mut out);
            let mut want = set.clone();
            let old = want.insert(&member, score, &cfg);
            match got {
                RecordInsert::Declined => {
                    prop_assert_eq!(out, vec![7]);
                    prop_assert!(old.is_none());
                    prop_assert!(!set.insert_stays_small(&member, &cfg) || form.1);
                }
                RecordInsert::Unchanged(s) => {
                    prop_assert_eq!(out, vec![7]);
                    prop_assert_eq!(old, Some(s));
                    prop_assert_eq!(record_form(&want), form.clone());
                }
                RecordInsert::Added { prefixed } => {
                    prop_assert_eq!(old, None);
                    prop_assert_eq!((out, prefixed), record_form(&want));
                }
                RecordInsert::Updated { old: s, prefixed } => {
                    prop_assert_eq!(old, Some(s));
                    prop_assert_eq!(prefixed, form.1);
                    prop_assert_eq!((out, prefixed), record_form(&want));
                }
            }
        }
    }
}
