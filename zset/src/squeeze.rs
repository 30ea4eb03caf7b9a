//! The record form of a small collection's packed entries (a listpack set's, a list's or a
//! small sorted set's, as the key table keeps them inside the key's record): the prefix
//! every member shares stored once, and members made of lowercase hex digits (decimal
//! digits too) stored two digits a byte. Nothing else changes: each entry keeps its own
//! header (which still gives the member's full length) and score or integer bytes, so a
//! squeezed buffer expands back to exactly the packed bytes it was made from.
//!
//! ```text
//! [mode 1][prefix p bytes][item][item]...
//!   mode  p (0..=127) | 0x80 when the rest of every member is hex digits
//!   item  the entry as the packed form writes it, its member's L bytes (L from the
//!         entry's header) replaced by
//!           plain: the L - p bytes after the prefix
//!           hex:   (L - p + 1) / 2 bytes, two digits a byte, the first in the high
//!                  nibble (an odd count's last low nibble 0)
//!   a list's integer elements have no member bytes: copied whole, not in the prefix
//!   cost 1 + p bytes a collection; saves p bytes a member, and half of the rest when hex
//!
//!   "m:" + 12 hex digits, u32 score (zset_memory's W4a): 19 B an entry packed, 11 squeezed,
//!     10 members 190 -> 113 B
//!   "e:" + 14 hex digits in a list (list_memory's L2): 17 -> 8 B an element, 170 -> 83 B
//!   "m0".."m9999" in a listpack set (set_memory's T3): 4-6 -> 2-3 B a member
//! ```

use crate::{entry, list};

/// The packed form whose entries are squeezed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `entry` encodings: a small sorted set's, a listpack set's entries.
    Entries,
    /// A list's listpack node entries (`List::packed`).
    ListNode,
}

impl Layout {
    /// Where the member of the item at `pos` starts and its length (None: an integer with
    /// no member bytes, ending at the offset given), read from the item's header alone.
    #[inline]
    fn member_span(self, buf: &[u8], pos: usize) -> (usize, Option<usize>) {
        match self {
            Layout::Entries => {
                let (start, len) = entry::member_span(buf, pos);
                (start, Some(len))
            }
            Layout::ListNode => list::string_span(buf, pos),
        }
    }
}

/// The mode bit of a squeezed form whose members' rests are hex digits.
const HEX: u8 = 0x80;
/// The longest prefix kept (the mode byte's other 7 bits).
const MAX_PREFIX: usize = 0x7F;
/// Not a hex digit, in [`NIBBLE`].
const NOT_HEX: u8 = 0xFF;
/// The value of each byte as a lowercase hex digit, or [`NOT_HEX`].
const NIBBLE: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 16 {
        t[DIGITS[i] as usize] = i as u8;
        i += 1;
    }
    t
};
/// The digit of each nibble.
const DIGITS: &[u8; 16] = b"0123456789abcdef";
/// The two digits of each byte of packed hex.
const PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [DIGITS[i >> 4], DIGITS[i & 0xF]];
        i += 1;
    }
    t
};

/// The items of a packed buffer: the bytes in front of each member (header, score or a
/// whole integer) and the member, if any.
#[inline]
fn items(layout: Layout, buf: &[u8]) -> impl Iterator<Item = (&[u8], Option<&[u8]>)> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= buf.len() {
            return None;
        }
        let (start, len) = layout.member_span(buf, pos);
        let head = &buf[pos..start];
        let member = len.map(|len| &buf[start..start + len]);
        pos = start + len.unwrap_or(0);
        Some((head, member))
    })
}

/// Writes the squeezed form of `packed` (entries in `layout`) into `out`, replacing what
/// it held.
pub fn squeeze(layout: Layout, packed: &[u8], out: &mut Vec<u8>) {
    let members = || items(layout, packed).filter_map(|(_, m)| m);
    let mut prefix: Option<&[u8]> = None;
    for m in members() {
        let p = prefix.unwrap_or(&m[..m.len().min(MAX_PREFIX)]);
        let common = p.iter().zip(m).take_while(|(a, b)| a == b).count();
        prefix = Some(&p[..common]);
    }
    let prefix = prefix.unwrap_or_default();
    let p = prefix.len();
    let hex = members().all(|m| m[p..].iter().all(|&b| NIBBLE[usize::from(b)] != NOT_HEX));
    out.clear();
    out.reserve(packed.len() + 1);
    out.push(p as u8 | if hex { HEX } else { 0 });
    out.extend_from_slice(prefix);
    for (head, member) in items(layout, packed) {
        out.extend_from_slice(head);
        let Some(rest) = member.map(|m| &m[p..]) else {
            continue;
        };
        if !hex {
            out.extend_from_slice(rest);
            continue;
        }
        let nibble = |b: u8| NIBBLE[usize::from(b)];
        let pairs = rest.chunks_exact(2);
        let odd = pairs.remainder().first().copied();
        out.extend(pairs.map(|d| nibble(d[0]) << 4 | nibble(d[1])));
        if let Some(last) = odd {
            out.push(nibble(last) << 4);
        }
    }
}

/// The items of a squeezed buffer: the bytes in front of each member and, for a member,
/// its full length and its stored bytes (as [`squeeze`] wrote them).
#[inline]
fn squeezed_items(
    layout: Layout,
    squeezed: &[u8],
    p: usize,
    hex: bool,
) -> impl Iterator<Item = (&[u8], Option<(usize, &[u8])>)> {
    let mut pos = 1 + p;
    std::iter::from_fn(move || {
        if pos >= squeezed.len() {
            return None;
        }
        let (start, len) = layout.member_span(squeezed, pos);
        let head = &squeezed[pos..start];
        pos = start;
        let member = len.map(|len| {
            let digits = len - p;
            let stored = if hex { digits.div_ceil(2) } else { digits };
            pos += stored;
            (len, &squeezed[start..pos])
        });
        Some((head, member))
    })
}

/// Appends the packed entries that the squeezed form `squeezed` (made by [`squeeze`] with
/// the same `layout`) was made from to `out`, reserving exactly their bytes.
pub fn expand(layout: Layout, squeezed: &[u8], out: &mut Vec<u8>) {
    let p = (squeezed[0] & MAX_PREFIX as u8) as usize;
    let hex = squeezed[0] & HEX != 0;
    let prefix = &squeezed[1..1 + p];
    let items = || squeezed_items(layout, squeezed, p, hex);
    out.reserve_exact(
        items()
            .map(|(head, m)| head.len() + m.map_or(0, |m| m.0))
            .sum(),
    );
    for (head, member) in items() {
        out.extend_from_slice(head);
        let Some((len, stored)) = member else {
            continue;
        };
        out.extend_from_slice(prefix);
        if !hex {
            out.extend_from_slice(stored);
            continue;
        }
        let digits = len - p;
        for &b in &stored[..digits / 2] {
            out.extend_from_slice(&PAIRS[usize::from(b)]);
        }
        if digits % 2 == 1 {
            out.push(DIGITS[usize::from(stored[digits / 2] >> 4)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list::{End, List, ListConfig};
    use crate::set::{PackedSet, Set, SetConfig};
    use crate::{Config, ZSet};
    use proptest::prelude::*;

    /// Squeezes and expands `packed`, checking the round trip; returns the squeezed size.
    fn round_trip(layout: Layout, packed: &[u8]) -> usize {
        let mut squeezed = Vec::new();
        squeeze(layout, packed, &mut squeezed);
        let mut back = vec![7];
        expand(layout, &squeezed, &mut back);
        assert_eq!(&back[1..], packed, "squeezed {squeezed:?}");
        assert!(squeezed.len() <= packed.len() + 1);
        squeezed.len()
    }

    fn zset(members: &[(Vec<u8>, f64)]) -> ZSet {
        let mut z = ZSet::new();
        for (m, s) in members {
            z.insert(m, *s, &Config::default());
        }
        z
    }

    #[test]
    fn hex_members_with_a_prefix_take_half() {
        let members: Vec<_> = (0..10u64)
            .map(|i| {
                let m = format!("m:{:012x}", i * 0x1234_5678_9abc + 0xfedc);
                (m.into_bytes(), (3_000_000_000 + i) as f64)
            })
            .collect();
        let z = zset(&members);
        assert_eq!(z.packed().unwrap().len(), 190);
        assert_eq!(
            round_trip(Layout::Entries, z.packed().unwrap()),
            1 + 2 + 10 * 11
        );

        let mut l = List::new();
        let elements: Vec<Vec<u8>> = (0..10u64)
            .map(|i| format!("e:{:014x}", i * 0x0012_3456_789a_bcde).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = elements.iter().map(Vec::as_slice).collect();
        l.push(End::Back, &refs, &ListConfig::default());
        assert_eq!(l.packed().unwrap().len(), 170);
        assert_eq!(
            round_trip(Layout::ListNode, l.packed().unwrap()),
            1 + 2 + 10 * 8
        );
    }

    #[test]
    fn odd_digits_empty_members_and_integers() {
        let z = zset(&[(b"a".to_vec(), 1.0), (b"abc".to_vec(), 2.5)]);
        // Prefix "a", rests "" and "bc".
        assert_eq!(
            round_trip(Layout::Entries, z.packed().unwrap()),
            1 + 1 + 2 + 9 + 1
        );
        let z = zset(&[(b"".to_vec(), 1.0), (b"x".to_vec(), 2.0)]);
        round_trip(Layout::Entries, z.packed().unwrap());
        let mut l = List::new();
        let items: [&[u8]; 4] = [b"12345", b"k:7", b"-3", b"k:70"];
        l.push(End::Back, &items, &ListConfig::default());
        // Prefix "k:", hex rests "7" and "70", integers whole.
        let packed = l.packed().unwrap();
        assert_eq!(
            round_trip(Layout::ListNode, packed),
            packed.len() + 1 + 2 - 2 - 3
        );
        let mut ints = List::new();
        ints.push(End::Back, &[b"1", b"2"], &ListConfig::default());
        round_trip(Layout::ListNode, ints.packed().unwrap());
        assert_eq!(round_trip(Layout::Entries, &[]), 1);
    }

    /// Members from a few shapes: a shared prefix or none, then hex digits or any bytes.
    fn member() -> impl Strategy<Value = Vec<u8>> {
        let prefix = prop::sample::select(vec!["", "m:", "user:", "a", "0"]);
        let rest = prop_oneof![
            "[0-9a-f]{0,20}".prop_map(String::into_bytes),
            "[0-9]{0,6}".prop_map(String::into_bytes),
            prop::collection::vec(any::<u8>(), 0..20),
        ];
        (prefix, rest).prop_map(|(p, r)| [p.as_bytes(), &r].concat())
    }

    fn members(prefixed: bool) -> impl Strategy<Value = Vec<Vec<u8>>> {
        let one = member();
        prop::collection::vec(one, 0..40).prop_map(move |ms| {
            if prefixed {
                ms.into_iter()
                    .map(|m| [b"id:".as_slice(), &m].concat())
                    .collect()
            } else {
                ms
            }
        })
    }

    proptest! {
        #[test]
        fn sorted_sets_round_trip(ms in members(false), prefixed in members(true), scores in prop::collection::vec(prop_oneof![any::<i32>().prop_map(f64::from), any::<f64>()], 40)) {
            for ms in [ms, prefixed] {
                let pairs: Vec<_> = ms.into_iter().zip(scores.iter().copied()).filter(|(_, s)| !s.is_nan()).collect();
                let z = zset(&pairs);
                if let Some(packed) = z.packed() {
                    round_trip(Layout::Entries, packed);
                }
            }
        }

        #[test]
        fn sets_round_trip(ms in members(false), prefixed in members(true)) {
            for ms in [ms, prefixed] {
                let mut s = Set::new_listpack();
                for m in &ms {
                    s.add(m, &SetConfig::default());
                }
                if let Some((PackedSet::Listpack, packed)) = s.packed() {
                    round_trip(Layout::Entries, packed);
                }
            }
        }

        #[test]
        fn lists_round_trip(ms in members(false), prefixed in members(true), long in prop::collection::vec(b'a'..=b'f', 240..300)) {
            for mut ms in [ms, prefixed] {
                ms.push(long.clone());
                let refs: Vec<&[u8]> = ms.iter().map(Vec::as_slice).collect();
                let mut l = List::new();
                l.push(End::Back, &refs, &ListConfig::default());
                if let Some(packed) = l.packed() {
                    round_trip(Layout::ListNode, packed);
                }
            }
        }
    }
}
