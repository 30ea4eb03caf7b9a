//! In-place editing of a listpack that this engine built or a loader validated: read the
//! item at a byte position, append, and replace an integer (which may change its width).
//!
//! The layout is Redis's: `[total u32 LE][count u16 LE] items... 0xff`, each item its
//! encoding, data and `backlen` (see [`crate::packed`]). The count saturates at 65535
//! ("unknown"), as in Redis. Positions handed out are byte offsets of an item's first byte.

use crate::packed::{encode_listpack_item, Item};

/// Bytes of the header: the total size and the item count.
pub(crate) const HEADER: usize = 6;
/// The count a listpack states once it holds 65535 items or more.
const COUNT_UNKNOWN: u16 = u16::MAX;

/// An empty listpack with room for `capacity` bytes.
pub(crate) fn new(capacity: usize) -> Vec<u8> {
    let mut lp = Vec::with_capacity(capacity.max(HEADER + 1));
    lp.extend_from_slice(&((HEADER + 1) as u32).to_le_bytes());
    lp.extend_from_slice(&0u16.to_le_bytes());
    lp.push(0xff);
    lp
}

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

/// Appends `item` before the end byte, fixing the header.
pub(crate) fn append(lp: &mut Vec<u8>, item: Item) {
    lp.pop();
    encode_listpack_item(item, lp);
    lp.push(0xff);
    let count = u16::from_le_bytes([lp[4], lp[5]]);
    if count != COUNT_UNKNOWN {
        lp[4..6].copy_from_slice(&(count + 1).to_le_bytes());
    }
    set_total(lp);
}

/// Appends a byte string, stored as an integer when it is one (Redis's lpAppend).
pub(crate) fn append_bytes(lp: &mut Vec<u8>, s: &[u8]) {
    match canonical_int(s) {
        Some(v) => append(lp, Item::Int(v)),
        None => append(lp, Item::Str(s)),
    }
}

fn set_total(lp: &mut [u8]) {
    let total = lp.len() as u32;
    lp[0..4].copy_from_slice(&total.to_le_bytes());
}

/// The item at `pos` and the position of the next one. `pos` must be an item's start in a
/// well-formed listpack (not the end byte).
pub(crate) fn read(lp: &[u8], pos: usize) -> (Item<'_>, usize) {
    let b = lp[pos];
    let le = |n: usize| -> u64 {
        lp[pos + 1..pos + 1 + n]
            .iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | x as u64)
    };
    let sign = |v: u64, bits: u32| ((v << (64 - bits)) as i64) >> (64 - bits);
    let (item, len) = if b & 0x80 == 0 {
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
    };
    (item, pos + len + crate::packed::backlen_size(len))
}

/// The integer at `pos` (0 for a string, which a validated node never has where an
/// integer belongs), and the next position.
pub(crate) fn read_int(lp: &[u8], pos: usize) -> (i64, usize) {
    match read(lp, pos) {
        (Item::Int(v), next) => (v, next),
        (Item::Str(s), next) => (canonical_int(s).unwrap_or(0), next),
    }
}

/// The position after the item at `pos`.
pub(crate) fn skip(lp: &[u8], pos: usize) -> usize {
    read(lp, pos).1
}

/// Replaces the item at `pos` with the integer `v`, moving what follows when the width
/// changes.
pub(crate) fn replace_int(lp: &mut Vec<u8>, pos: usize, v: i64) {
    let end = skip(lp, pos);
    let mut encoded = Vec::with_capacity(12);
    encode_listpack_item(Item::Int(v), &mut encoded);
    lp.splice(pos..end, encoded);
    set_total(lp);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packed::{listpack, listpack_items};

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
    fn appends_match_the_blob_writer_and_replace_keeps_it_valid() {
        let mut lp = new(0);
        let long = vec![b'x'; 5000];
        append(&mut lp, Item::Int(5));
        append_bytes(&mut lp, b"12345");
        append_bytes(&mut lp, b"field");
        append_bytes(&mut lp, &long);
        assert_eq!(
            lp,
            listpack(&[
                Item::Int(5),
                Item::Int(12345),
                Item::Str(b"field"),
                Item::Str(&long)
            ])
        );
        replace_int(&mut lp, HEADER, 1 << 40);
        let mut items = Vec::new();
        listpack_items(&lp, &mut |i| {
            items.push(format!("{i:?}").len());
            Ok(())
        })
        .unwrap();
        assert_eq!(items.len(), 4);
        let (first, next) = read_int(&lp, HEADER);
        assert_eq!(first, 1 << 40);
        assert_eq!(read(&lp, next).0, Item::Int(12345));
        replace_int(&mut lp, HEADER, -3);
        assert_eq!(read_int(&lp, HEADER).0, -3);
        listpack_items(&lp, &mut |_| Ok(())).unwrap();
    }
}
