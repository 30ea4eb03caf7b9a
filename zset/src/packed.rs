//! Readers for the packed blobs that small sorted sets and hashes are stored in: ziplist
//! (Redis 2.6 to 6.2, RDB types 12 and 13), listpack (Redis 7.0 on, RDB types 16 and 17)
//! and zipmap (hashes before Redis 2.6, RDB type 9), and the listpack writer. Each holds a
//! flat sequence of items, each a byte string or an integer; a sorted set alternates member
//! and score, a hash field and value.
//!
//! The walk checks everything it relies on, so a corrupt blob yields an error naming the
//! byte position inside the blob, never a panic or an out-of-bounds read: the header's total
//! size, every item's bounds, the back-links between items (ziplist `prevlen`, listpack
//! `backlen`), the tail offset, the item count when the header states one, and the end byte.
//!
//! [`listpack`] writes the other way, for the nodes of a list (RDB type 18).

/// One item of a packed blob.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Item<'a> {
    /// A byte string.
    Str(&'a [u8]),
    /// An integer (members are decimal strings of it; scores its value).
    Int(i64),
}

/// The end marker of both formats.
const END: u8 = 0xff;

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

fn sign_extend(value: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((value << shift) as i64) >> shift
}

/// Walks a listpack: `[total u32 LE][count u16 LE] items... 0xff`; each item is its
/// encoding and data followed by `backlen`, the size of the two written in 7-bit groups.
/// Returns the number of items.
pub fn listpack_items<'a>(
    blob: &'a [u8],
    visit: &mut dyn FnMut(Item<'a>) -> Result<(), String>,
) -> Result<usize, String> {
    const HEADER: usize = 6;
    if blob.len() < HEADER + 1 {
        return Err(format!("listpack of {} bytes is too short", blob.len()));
    }
    let total = le(&blob[0..4]) as usize;
    if total != blob.len() {
        return Err(format!(
            "listpack header says {total} bytes but the blob has {}",
            blob.len()
        ));
    }
    let stated = le(&blob[4..6]) as usize;
    let mut pos = HEADER;
    let mut count = 0usize;
    loop {
        let Some(&b) = blob.get(pos) else {
            return Err("listpack has no end byte".into());
        };
        if b == END {
            break;
        }
        let start = pos;
        let (header, data_len, int): (usize, usize, Option<(usize, u32)>) = if b & 0x80 == 0 {
            (1, 0, None)
        } else if b & 0xc0 == 0x80 {
            (1, (b & 0x3f) as usize, None)
        } else if b & 0xe0 == 0xc0 {
            (2, 0, None)
        } else if b & 0xf0 == 0xe0 {
            let next = *blob.get(pos + 1).ok_or("listpack item header cut short")?;
            (2, (((b & 0x0f) as usize) << 8) | next as usize, None)
        } else {
            match b {
                0xf0 => {
                    let len = blob
                        .get(pos + 1..pos + 5)
                        .ok_or("listpack item header cut short")?;
                    (5, le(len) as usize, None)
                }
                0xf1 => (1, 0, Some((2, 16))),
                0xf2 => (1, 0, Some((3, 24))),
                0xf3 => (1, 0, Some((4, 32))),
                0xf4 => (1, 0, Some((8, 64))),
                _ => return Err(format!("bad listpack encoding byte {b:#04x} at {pos}")),
            }
        };
        let int_len = int.map_or(0, |(n, _)| n);
        let entry_len = header
            .checked_add(data_len)
            .and_then(|n| n.checked_add(int_len))
            .ok_or("listpack item too long")?;
        let body_end = start
            .checked_add(entry_len)
            .filter(|&e| e <= blob.len())
            .ok_or_else(|| format!("listpack item at {start} runs past the blob"))?;
        let item = if b & 0x80 == 0 {
            Item::Int((b & 0x7f) as i64)
        } else if b & 0xe0 == 0xc0 {
            let v = (((b & 0x1f) as u64) << 8) | blob[pos + 1] as u64;
            Item::Int(sign_extend(v, 13))
        } else if let Some((n, bits)) = int {
            Item::Int(sign_extend(le(&blob[pos + 1..pos + 1 + n]), bits))
        } else {
            Item::Str(&blob[start + header..body_end])
        };
        let backlen_size = backlen_size(entry_len);
        let next = body_end
            .checked_add(backlen_size)
            .filter(|&e| e <= blob.len())
            .ok_or_else(|| format!("listpack item at {start} runs past the blob"))?;
        // backlen is read right to left: 7 bits a byte, high bit set on all but the first.
        let mut value = 0u64;
        for (i, &byte) in blob[body_end..next].iter().rev().enumerate() {
            value |= ((byte & 0x7f) as u64) << (7 * i);
            let last = i + 1 == backlen_size;
            if (byte & 0x80 == 0) != last {
                return Err(format!("bad listpack back-length at {body_end}"));
            }
        }
        if value != entry_len as u64 {
            return Err(format!("bad listpack back-length at {body_end}"));
        }
        visit(item)?;
        count += 1;
        pos = next;
    }
    if pos + 1 != blob.len() {
        return Err(format!("listpack end byte at {pos} is not the last byte"));
    }
    if stated != 0xffff && stated != count {
        return Err(format!(
            "listpack header says {stated} items but holds {count}"
        ));
    }
    Ok(count)
}

/// Bytes of a listpack `backlen` for an item of `len` bytes (Redis's lpEncodeBacklen).
pub(crate) fn backlen_size(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// Walks a ziplist: `[total u32 LE][tail u32 LE][count u16 LE] items... 0xff`; each item is
/// `prevlen` (1 byte, or 0xfe and 4 bytes LE), an encoding with the length, and the data.
/// Returns the number of items.
pub fn ziplist_items<'a>(
    blob: &'a [u8],
    visit: &mut dyn FnMut(Item<'a>) -> Result<(), String>,
) -> Result<usize, String> {
    const HEADER: usize = 10;
    if blob.len() < HEADER + 1 {
        return Err(format!("ziplist of {} bytes is too short", blob.len()));
    }
    let total = le(&blob[0..4]) as usize;
    if total != blob.len() {
        return Err(format!(
            "ziplist header says {total} bytes but the blob has {}",
            blob.len()
        ));
    }
    let tail = le(&blob[4..8]) as usize;
    let stated = le(&blob[8..10]) as usize;
    let mut pos = HEADER;
    let mut prev_len = 0usize;
    let mut last_start = HEADER;
    let mut count = 0usize;
    loop {
        let Some(&first) = blob.get(pos) else {
            return Err("ziplist has no end byte".into());
        };
        if first == END {
            break;
        }
        let start = pos;
        let (prevlen, prevlen_size) = if first < 0xfe {
            (first as usize, 1)
        } else if first == 0xfe {
            let b = blob
                .get(pos + 1..pos + 5)
                .ok_or("ziplist prevlen cut short")?;
            (le(b) as usize, 5)
        } else {
            unreachable!("0xff is the end byte");
        };
        if prevlen != prev_len {
            return Err(format!(
                "ziplist item at {start} says the previous one has {prevlen} bytes, not {prev_len}"
            ));
        }
        pos += prevlen_size;
        let enc = *blob.get(pos).ok_or("ziplist item cut short")?;
        let (header, data_len, int_bytes): (usize, usize, usize) = match enc >> 6 {
            0 => (1, (enc & 0x3f) as usize, 0),
            1 => {
                let next = *blob.get(pos + 1).ok_or("ziplist item cut short")?;
                (2, (((enc & 0x3f) as usize) << 8) | next as usize, 0)
            }
            2 => {
                if enc != 0x80 {
                    return Err(format!("bad ziplist encoding byte {enc:#04x} at {pos}"));
                }
                let b = blob.get(pos + 1..pos + 5).ok_or("ziplist item cut short")?;
                let len = u32::from_be_bytes(b.try_into().expect("4 bytes"));
                (5, len as usize, 0)
            }
            _ => match enc {
                0xc0 => (1, 0, 2),
                0xd0 => (1, 0, 4),
                0xe0 => (1, 0, 8),
                0xf0 => (1, 0, 3),
                0xfe => (1, 0, 1),
                0xf1..=0xfd => (1, 0, 0),
                _ => return Err(format!("bad ziplist encoding byte {enc:#04x} at {pos}")),
            },
        };
        let end = pos
            .checked_add(header)
            .and_then(|p| p.checked_add(data_len))
            .and_then(|p| p.checked_add(int_bytes))
            .filter(|&e| e < blob.len())
            .ok_or_else(|| format!("ziplist item at {start} runs past the blob"))?;
        let item = if enc >> 6 != 3 {
            Item::Str(&blob[pos + header..end])
        } else if (0xf1..=0xfd).contains(&enc) {
            Item::Int(((enc & 0x0f) as i64) - 1)
        } else {
            let bytes = &blob[pos + 1..end];
            Item::Int(sign_extend(le(bytes), 8 * int_bytes as u32))
        };
        visit(item)?;
        count += 1;
        prev_len = end - start;
        last_start = start;
        pos = end;
    }
    if pos + 1 != blob.len() {
        return Err(format!("ziplist end byte at {pos} is not the last byte"));
    }
    if tail != last_start {
        return Err(format!(
            "ziplist tail offset {tail} does not point at the last item ({last_start})"
        ));
    }
    if stated != 0xffff && stated != count {
        return Err(format!(
            "ziplist header says {stated} items but holds {count}"
        ));
    }
    Ok(count)
}

/// Builds a listpack of `items` as Redis's lpAppend writes one, each at its narrowest
/// encoding (the writer's small hashes and QUICKLIST_2 list nodes, the tests' blobs).
pub fn listpack(items: &[Item]) -> Vec<u8> {
    let mut out = vec![0; 6];
    for item in items {
        encode_listpack_item(*item, &mut out);
    }
    let total = out.len() + 1;
    out[0..4].copy_from_slice(&(total as u32).to_le_bytes());
    out[4..6].copy_from_slice(&(items.len().min(0xffff) as u16).to_le_bytes());
    out.push(END);
    out
}

/// Appends one listpack item to `out` at its narrowest encoding, with its `backlen`: the
/// encoding byte(s), the data, then the size of the two in 7-bit groups (Redis's
/// lpEncodeBacklen). Returns the bytes written.
pub fn encode_listpack_item(item: Item, out: &mut Vec<u8>) -> usize {
    let l = encode_listpack_element(item, out);
    push_backlen(l, out);
    l + backlen_size(l)
}

/// Appends a listpack element's `backlen` for an element of `l` bytes.
pub(crate) fn push_backlen(l: usize, out: &mut Vec<u8>) {
    let size = backlen_size(l);
    for i in 0..size {
        let group = ((l >> (7 * (size - 1 - i))) & 0x7f) as u8;
        out.push(if i == 0 { group } else { group | 0x80 });
    }
}

/// Appends one listpack item's encoding byte(s) and data, without its `backlen`; returns
/// the bytes written.
pub(crate) fn encode_listpack_element(item: Item, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    match item {
        Item::Int(v) if (0..128).contains(&v) => out.push(v as u8),
        Item::Int(v) if (-4096..4096).contains(&v) => {
            let u = (v as u64) & 0x1fff;
            out.push(0xc0 | (u >> 8) as u8);
            out.push(u as u8);
        }
        Item::Int(v) if i16::try_from(v).is_ok() => {
            out.push(0xf1);
            out.extend_from_slice(&(v as i16).to_le_bytes());
        }
        Item::Int(v) if (-(1 << 23)..(1 << 23)).contains(&v) => {
            out.push(0xf2);
            out.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        }
        Item::Int(v) if i32::try_from(v).is_ok() => {
            out.push(0xf3);
            out.extend_from_slice(&(v as i32).to_le_bytes());
        }
        Item::Int(v) => {
            out.push(0xf4);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Item::Str(s) if s.len() < 64 => {
            out.push(0x80 | s.len() as u8);
            out.extend_from_slice(s);
        }
        Item::Str(s) if s.len() < 4096 => {
            out.push(0xe0 | (s.len() >> 8) as u8);
            out.push(s.len() as u8);
            out.extend_from_slice(s);
        }
        Item::Str(s) => {
            out.push(0xf0);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s);
        }
    }
    out.len() - start
}

/// Walks a zipmap (Redis 2.x's small hashes, RDB type 9): `[count u8] entries... 0xff`;
/// each entry is `[len]field[len][free]value` and `free` unused bytes, where a length is
/// one byte below 254, else 254 and 4 bytes LE. A count of 254 or more means "unknown".
/// Returns the number of items (twice the pairs).
pub fn zipmap_items<'a>(
    blob: &'a [u8],
    visit: &mut dyn FnMut(Item<'a>) -> Result<(), String>,
) -> Result<usize, String> {
    fn len_at(blob: &[u8], pos: usize) -> Result<(usize, usize), String> {
        match blob.get(pos) {
            Some(&b) if b < 254 => Ok((b as usize, pos + 1)),
            Some(254) => blob
                .get(pos + 1..pos + 5)
                .map(|l| (le(l) as usize, pos + 5))
                .ok_or_else(|| format!("zipmap length at {pos} cut short")),
            _ => Err(format!("zipmap length expected at {pos}")),
        }
    }
    fn bytes_at(blob: &[u8], pos: usize, len: usize) -> Result<&[u8], String> {
        pos.checked_add(len)
            .and_then(|end| blob.get(pos..end))
            .ok_or_else(|| format!("zipmap entry at {pos} runs past the blob"))
    }
    let stated = *blob.first().ok_or("empty zipmap")? as usize;
    let mut pos = 1;
    let mut pairs = 0usize;
    while blob.get(pos) != Some(&END) {
        let (flen, at) = len_at(blob, pos)?;
        let field = bytes_at(blob, at, flen)?;
        let (vlen, at) = len_at(blob, at + flen)?;
        let free = *blob.get(at).ok_or("zipmap free byte missing")? as usize;
        let value = bytes_at(blob, at + 1, vlen)?;
        bytes_at(blob, at + 1 + vlen, free)?;
        visit(Item::Str(field))?;
        visit(Item::Str(value))?;
        pairs += 1;
        pos = at + 1 + vlen + free;
    }
    if pos + 1 != blob.len() {
        return Err(format!("zipmap end byte at {pos} is not the last byte"));
    }
    if stated < 254 && stated != pairs {
        return Err(format!(
            "zipmap header says {stated} pairs but holds {pairs}"
        ));
    }
    Ok(2 * pairs)
}

/// Builds a ziplist (Redis 2.6 to 6.2) of `items`, each at its narrowest encoding: the
/// older form the readers accept, for tests of them.
pub fn ziplist(items: &[Item]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut prev = 0usize;
    let mut tail = 10;
    for item in items {
        let mut e = Vec::new();
        if prev < 254 {
            e.push(prev as u8);
        } else {
            e.push(0xfe);
            e.extend_from_slice(&(prev as u32).to_le_bytes());
        }
        match *item {
            Item::Int(v) if (0..=12).contains(&v) => e.push(0xf1 + v as u8),
            Item::Int(v) if i8::try_from(v).is_ok() => {
                e.push(0xfe);
                e.push(v as i8 as u8);
            }
            Item::Int(v) if i16::try_from(v).is_ok() => {
                e.push(0xc0);
                e.extend_from_slice(&(v as i16).to_le_bytes());
            }
            Item::Int(v) if (-(1 << 23)..(1 << 23)).contains(&v) => {
                e.push(0xf0);
                e.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
            }
            Item::Int(v) if i32::try_from(v).is_ok() => {
                e.push(0xd0);
                e.extend_from_slice(&(v as i32).to_le_bytes());
            }
            Item::Int(v) => {
                e.push(0xe0);
                e.extend_from_slice(&v.to_le_bytes());
            }
            Item::Str(s) if s.len() < 64 => {
                e.push(s.len() as u8);
                e.extend_from_slice(s);
            }
            Item::Str(s) if s.len() < 16384 => {
                e.push(0x40 | (s.len() >> 8) as u8);
                e.push(s.len() as u8);
                e.extend_from_slice(s);
            }
            Item::Str(s) => {
                e.push(0x80);
                e.extend_from_slice(&(s.len() as u32).to_be_bytes());
                e.extend_from_slice(s);
            }
        }
        tail = 10 + body.len();
        prev = e.len();
        body.extend_from_slice(&e);
    }
    let total = 10 + body.len() + 1;
    let mut out = Vec::new();
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(tail as u32).to_le_bytes());
    out.extend_from_slice(&(items.len().min(0xffff) as u16).to_le_bytes());
    out.extend_from_slice(&body);
    out.push(END);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Item<'static>> {
        let long: &'static [u8] = Box::leak(vec![b'x'; 300].into_boxed_slice());
        let huge: &'static [u8] = Box::leak(vec![b'y'; 20000].into_boxed_slice());
        vec![
            Item::Str(b"a"),
            Item::Int(0),
            Item::Int(12),
            Item::Int(13),
            Item::Int(-1),
            Item::Int(127),
            Item::Int(-4096),
            Item::Int(4095),
            Item::Int(30000),
            Item::Int(-30000),
            Item::Int(1 << 22),
            Item::Int(-(1 << 23)),
            Item::Int(1 << 30),
            Item::Int(i64::MIN),
            Item::Int(i64::MAX),
            Item::Str(b""),
            Item::Str(long),
            Item::Str(huge),
        ]
    }

    type Walk = for<'b> fn(
        &'b [u8],
        &mut dyn FnMut(Item<'b>) -> Result<(), String>,
    ) -> Result<usize, String>;

    fn collect(f: Walk, blob: &[u8]) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        f(blob, &mut |i| {
            out.push(format!("{i:?}"));
            Ok(())
        })?;
        Ok(out)
    }

    const LP: Walk = listpack_items;
    const ZL: Walk = ziplist_items;

    #[test]
    fn round_trip_every_encoding() {
        let items = sample();
        let want: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
        assert_eq!(collect(LP, &listpack(&items)).unwrap(), want);
        assert_eq!(collect(ZL, &ziplist(&items)).unwrap(), want);
        assert_eq!(collect(LP, &listpack(&[])).unwrap().len(), 0);
        assert_eq!(collect(ZL, &ziplist(&[])).unwrap().len(), 0);
    }

    #[test]
    fn every_truncation_and_byte_flip_is_an_error_or_a_valid_walk() {
        let items = [
            Item::Str(b"member"),
            Item::Int(5),
            Item::Str(b"m2"),
            Item::Int(-70000),
        ];
        for (f, blob) in [(LP, listpack(&items)), (ZL, ziplist(&items))] {
            for cut in 0..blob.len() {
                assert!(collect(f, &blob[..cut]).is_err(), "cut at {cut}");
            }
            for pos in 0..blob.len() {
                for flip in [1u8, 0x80, 0xff] {
                    let mut b = blob.clone();
                    b[pos] ^= flip;
                    let _ = collect(f, &b); // must not panic
                }
            }
        }
    }

    #[test]
    fn zipmap_walk_and_errors() {
        let mut blob = vec![2u8, 1, b'a', 2, 1, b'x', b'y', 0];
        blob.extend_from_slice(&[254, 3, 0, 0, 0]);
        blob.extend_from_slice(b"key");
        blob.extend_from_slice(&[0, 0, 0xff]);
        assert_eq!(
            collect(zipmap_items, &blob).unwrap(),
            ["a", "xy", "key", ""].map(|t| format!("{:?}", Item::Str(t.as_bytes())))
        );
        blob[0] = 3;
        assert!(collect(zipmap_items, &blob).is_err(), "wrong count");
        blob[0] = 254;
        assert!(collect(zipmap_items, &blob).is_ok(), "unknown count");
        for cut in 0..blob.len() {
            assert!(collect(zipmap_items, &blob[..cut]).is_err());
        }
    }
}
