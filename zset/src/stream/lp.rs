//! Listpack items for the stream nodes: read from a listpack (a loaded node) and written
//! bare into a node's compact form, where each item is a listpack element (encoding bytes
//! and data) without its `backlen`.
//!
//! The listpack layout is Redis's: `[total u32 LE][count u16 LE] items... 0xff`, each item
//! its element and `backlen` (see [`crate::packed`]). Positions handed out are byte offsets
//! of an item's first byte.

use crate::packed::{backlen_size, encode_listpack_element, Item};

/// Bytes of a listpack's header: the total size and the item count.
pub(crate) const HEADER: usize = 6;

/// The integer a byte string stands for when Redis's listpack stores it as one
/// (lpStringToInt64): the canonical decimal form of an `i64`, so it reads back the same.
pub(crate) fn canonical_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let v: i64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    let canonical = match s {
        [b'0'] => true,
        [b'-', b'1'..=b'9', ..] | [b'1'..=b'9', ..] => s[1..].iter().all(u8::is_ascii_digit),
        _ => false,
    };
    canonical.then_some(v)
}

/// The bytes a listpack item whose element takes `element` bytes takes with its backlen.
pub(crate) fn item_size(element: usize) -> usize {
    element + backlen_size(element)
}

/// The listpack item size of the integer `v` at its narrowest encoding.
pub(crate) fn int_size(v: i64) -> usize {
    let element = match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        _ if i16::try_from(v).is_ok() => 3,
        -0x80_0000..=0x7f_ffff => 4,
        _ if i32::try_from(v).is_ok() => 5,
        _ => 9,
    };
    item_size(element)
}

/// Appends `item`'s bare element to `out`; returns its size as a listpack item.
pub(crate) fn push(out: &mut Vec<u8>, item: Item) -> usize {
    item_size(encode_listpack_element(item, out))
}

/// Appends a byte string's bare element, an integer when it is one (Redis's lpAppend);
/// returns its size as a listpack item.
pub(crate) fn push_bytes(out: &mut Vec<u8>, s: &[u8]) -> usize {
    match canonical_int(s) {
        Some(v) => push(out, Item::Int(v)),
        None => push(out, Item::Str(s)),
    }
}

/// The element at `pos` (a listpack item's start, or a bare element's) and its length
/// without backlen. `pos` must be an element's start in well-formed bytes.
pub(crate) fn read_element(lp: &[u8], pos: usize) -> (Item<'_>, usize) {
    let b = lp[pos];
    let le = |n: usize| -> u64 {
        lp[pos + 1..pos + 1 + n]
            .iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | x as u64)
    };
    let sign = |v: u64, bits: u32| ((v << (64 - bits)) as i64) >> (64 - bits);
    if b & 0x80 == 0 {
        (Item::Int((b & 0x7f) as i64), 1)
    } else if b & 0xc0 == 0x80 {
        let n = (b & 0x3f) as usize;
        (Item::Str(&lp[pos + 1..pos + 1 + n]), 1 + n)
    } else if b & 0xe0 == 0xc0 {
        let v = (((b & 0x1f) as u64) << 8) | lp[pos + 1] as u64;
        (Item::Int(sign(v, 13)), 2)
    } else if b & 0xf0 == 0xe0 {
        let n = (((b & 0x0f) as usize) << 8) | lp[pos + 1] as usize;
        (Item::Str(&lp[pos + 2..pos + 2 + n]), 2 + n)
    } else {
        match b {
            0xf0 => {
                let n = le(4) as usize;
                (Item::Str(&lp[pos + 5..pos + 5 + n]), 5 + n)
            }
            0xf1 => (Item::Int(sign(le(2), 16)), 3),
            0xf2 => (Item::Int(sign(le(3), 24)), 4),
            0xf3 => (Item::Int(sign(le(4), 32)), 5),
            _ => (Item::Int(le(8) as i64), 9),
        }
    }
}

/// The length of the element at `pos` (a listpack item's start, or a bare element's),
/// without reading its value: what a walk skipping items needs.
#[inline]
pub(crate) fn element_len(lp: &[u8], pos: usize) -> usize {
    match lp[pos] {
        0..=0x7f => 1,
        b @ 0x80..=0xbf => 1 + (b & 0x3f) as usize,
        0xc0..=0xdf => 2,
        b @ 0xe0..=0xef => 2 + ((((b & 0x0f) as usize) << 8) | lp[pos + 1] as usize),
        0xf0 => {
            5 + u32::from_le_bytes([lp[pos + 1], lp[pos + 2], lp[pos + 3], lp[pos + 4]]) as usize
        }
        0xf1 => 3,
        0xf2 => 4,
        0xf3 => 5,
        _ => 9,
    }
}

/// The integer an item holds (0 for a string that is none, which a validated node never
/// has where an integer belongs).
fn int_of(item: Item) -> i64 {
    match item {
        Item::Int(v) => v,
        Item::Str(s) => canonical_int(s).unwrap_or(0),
    }
}

/// The bare element at `pos` and the position of the next one.
pub(crate) fn read_bare(bytes: &[u8], pos: usize) -> (Item<'_>, usize) {
    let (item, len) = read_element(bytes, pos);
    (item, pos + len)
}

/// The integer of the bare element at `pos`, and the next position.
#[inline]
pub(crate) fn read_bare_int(bytes: &[u8], pos: usize) -> (i64, usize) {
    if bytes[pos] < 0x80 {
        return (bytes[pos] as i64, pos + 1);
    }
    let (item, next) = read_bare(bytes, pos);
    (int_of(item), next)
}

/// The item at `pos` of a listpack and the position of the next one.
pub(crate) fn read(lp: &[u8], pos: usize) -> (Item<'_>, usize) {
    let (item, len) = read_element(lp, pos);
    (item, pos + item_size(len))
}

/// The integer of the listpack item at `pos`, and the next position.
pub(crate) fn read_int(lp: &[u8], pos: usize) -> (i64, usize) {
    let (item, next) = read(lp, pos);
    (int_of(item), next)
}

/// The position after the listpack item at `pos`.
pub(crate) fn skip(lp: &[u8], pos: usize) -> usize {
    read(lp, pos).1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::listpack;

    #[test]
    fn canonical_ints_are_those_redis_stores_as_integers() {
        for (s, want) in [
            (&b"0"[..], Some(0)),
            (b"-1", Some(-1)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"-9223372036854775808", Some(i64::MIN)),
            (b"9223372036854775808", None),
            (b"01", None),
            (b"-0", None),
            (b"+1", None),
            (b" 1", None),
            (b"", None),
            (b"1a", None),
        ] {
            assert_eq!(canonical_int(s), want, "{:?}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn bare_elements_read_back_and_size_as_listpack_items() {
        let long = vec![b'x'; 5000];
        let mut bare = Vec::new();
        let mut sizes = 0;
        // One integer of each listpack width, at its bounds.
        const INTS: [i64; 11] = [
            0,
            127,
            128,
            -4096,
            4095,
            4096,
            -32768,
            32768,
            1 << 23,
            1 << 40,
            i64::MIN,
        ];
        for v in INTS {
            let n = push(&mut bare, Item::Int(v));
            assert_eq!(n, int_size(v), "{v}");
            sizes += n;
        }
        sizes += push_bytes(&mut bare, b"12345");
        sizes += push_bytes(&mut bare, b"field");
        sizes += push_bytes(&mut bare, &long);
        let mut items = Vec::new();
        let mut pos = 0;
        while pos < bare.len() {
            let (item, next) = read_bare(&bare, pos);
            assert_eq!(next, pos + element_len(&bare, pos));
            items.push(item);
            pos = next;
        }
        let want = INTS
            .map(Item::Int)
            .into_iter()
            .chain([Item::Int(12345), Item::Str(b"field"), Item::Str(&long)])
            .collect::<Vec<_>>();
        assert_eq!(items, want);
        let lp = listpack(&want);
        assert_eq!(lp.len(), HEADER + sizes + 1);
        let (mut pos, mut read_back) = (HEADER, Vec::new());
        while lp[pos] != 0xff {
            let (item, next) = read(&lp, pos);
            read_back.push(item);
            pos = next;
        }
        assert_eq!(read_back, want);
    }
}
