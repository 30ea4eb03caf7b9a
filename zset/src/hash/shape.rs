//! Field shapes: the ordered field names many small hashes share ("name", "email", "age",
//! ... of a million user profiles), kept once in a dictionary, so that a small hash kept
//! elsewhere (the key table, inside its key's record) stores a shape number and its values
//! alone.
//!
//! ```text
//! shaped form: [shape id: varint, 1 byte below 128, 2 below 16,384][cell per value]
//!   cell: [b: 1] b <= 0xF7      a string of b bytes follows
//!                b = 0xF7 + w   (w = 1..=4) an integer of w bytes, little-endian two's
//!                               complement, whose canonical decimal text is the value
//! dictionary: shape id -> the fields' listpack entries ([hdr|field]..., see `listpack`),
//!             and those bytes -> id; at most 16,384 shapes and 1 MiB of field bytes
//! admission:  a field list becomes a shape on its second sighting (1,024 fingerprints of
//!             field lists seen once, direct-mapped), so one-off field lists never fill it
//! ```
//!
//! A 5-field profile (fields "name", "email", "age", "city", "score": 21 bytes of names;
//! values "Grace", "grace17@example.com", "42", "London", "31337") takes 1 + 6 + 20 + 2 +
//! 7 + 3 = 39 bytes where its listpack takes 4 + 11 + 21 + 37 = 73.
//! Shapes are never removed (the dictionary is bounded; it goes with its database on a
//! flush); a list that finds the dictionary full stays in the listpack form. Field lists of
//! listpackex hashes (field times) and values over 247 bytes are not shaped.

use super::listpack::PackHash;
use super::{Hash, Repr};
use crate::entry;
use crate::set::listpack::HEADER;
use crate::set::parse_int;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// Most shapes a dictionary holds (ids take at most 2 varint bytes).
const MAX_SHAPES: usize = 1 << 14;
/// Most field bytes a dictionary holds.
const MAX_BYTES: usize = 1 << 20;
/// Field lists seen once, remembered for admission (a power of two).
const SEEN: usize = 1024;
/// Longest string a cell holds.
const CELL_STR_MAX: usize = 0xF7;

/// Hashes field lists with the crate's member hash (std's SipHash costs more than the
/// rest of a small hash's packing).
#[derive(Default, Clone, Copy, Debug)]
struct FieldListHasher(u64);

impl Hasher for FieldListHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = (self.0 ^ super::hash(bytes)).rotate_left(29);
    }
}

/// The dictionary of field shapes (see the module comment).
#[derive(Default, Debug)]
pub struct FieldShapes {
    ids: HashMap<Arc<[u8]>, u32, BuildHasherDefault<FieldListHasher>>,
    /// Each shape's field entries and field count.
    shapes: Vec<(Arc<[u8]>, usize)>,
    bytes: usize,
    /// Fingerprints of field lists seen once (empty until the first sighting).
    seen: Vec<u64>,
}

impl FieldShapes {
    /// Number of shapes.
    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    /// Whether no shape is held.
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// Heap bytes held (field bytes twice counted once, the map, the fingerprints).
    pub fn memory_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(Arc<[u8]>, u32)>() + 1;
        self.bytes
            + 16 * self.shapes.len()
            + self.ids.capacity() * entry
            + self.shapes.capacity() * std::mem::size_of::<(Arc<[u8]>, usize)>()
            + self.seen.capacity() * 8
    }

    /// The shape of `hash`'s field list, if it is one (`buf` is scratch).
    fn lookup(&self, hash: &Hash, buf: &mut Vec<u8>) -> Option<u32> {
        field_entries(plain(hash)?, buf);
        self.ids.get(&buf[..]).copied()
    }

    /// Notes a sighting of `hash`'s field list (a plain listpack's): it becomes a shape on
    /// its second one, while the dictionary has room. Returns its shape, if it is one (for
    /// [`Hash::shaped_as`]); `buf` is scratch.
    pub fn note(&mut self, hash: &Hash, buf: &mut Vec<u8>) -> Option<u32> {
        let p = plain(hash)?;
        field_entries(p, buf);
        if let Some(&id) = self.ids.get(&buf[..]) {
            return Some(id);
        }
        if self.shapes.len() == MAX_SHAPES || self.bytes + buf.len() > MAX_BYTES {
            return None;
        }
        if self.seen.is_empty() {
            self.seen = vec![0; SEEN];
        }
        let print = super::hash(buf) | 1;
        let at = (print as usize >> 7) & (SEEN - 1);
        if self.seen[at] != print {
            self.seen[at] = print;
            return None;
        }
        self.seen[at] = 0;
        let id = self.shapes.len() as u32;
        let fields: Arc<[u8]> = buf[..].into();
        self.ids.insert(fields.clone(), id);
        self.shapes.push((fields, p.len()));
        self.bytes += buf.len();
        Some(id)
    }
}

/// The listpack of a hash whose field list may be shaped.
fn plain(hash: &Hash) -> Option<&PackHash> {
    match &hash.repr {
        Repr::Pack(p) if !p.is_ex() && p.len() > 0 => Some(p),
        _ => None,
    }
}

/// Writes the field entries of `p`, in order, into `out` (cleared first): a plain
/// listpack's field entries are the dictionary's encoding as they stand.
fn field_entries(p: &PackHash, out: &mut Vec<u8>) {
    out.clear();
    for (field, _) in p.field_entries_and_values() {
        out.extend_from_slice(field);
    }
}

/// Writes the shape number `id` at the start of a shaped form into `out` (cleared first).
fn put_id(out: &mut Vec<u8>, id: u32) {
    out.clear();
    if id < 0x80 {
        out.push(id as u8);
    } else {
        out.extend_from_slice(&[(id as u8) | 0x80, (id >> 7) as u8]);
    }
}

/// The shape number a shaped form starts with, and the offset of its first cell.
pub fn shape_id(bytes: &[u8]) -> (u32, usize) {
    if bytes[0] < 0x80 {
        (u32::from(bytes[0]), 1)
    } else {
        (u32::from(bytes[0] & 0x7f) | u32::from(bytes[1]) << 7, 2)
    }
}

/// The integer whose canonical decimal text `b` is, within the cells' 4 bytes.
fn canonical_int(b: &[u8]) -> Option<i32> {
    parse_int(b).and_then(|v| i32::try_from(v).ok())
}

/// Bytes of the narrowest two's complement holding `v`.
fn int_width(v: i32) -> usize {
    match v {
        -0x80..=0x7f => 1,
        -0x8000..=0x7fff => 2,
        -0x80_0000..=0x7f_ffff => 3,
        _ => 4,
    }
}

/// Appends the cell of `value` to `out`; false when it is too long for one.
fn put_cell(out: &mut Vec<u8>, value: &[u8]) -> bool {
    if let Some(v) = canonical_int(value) {
        let w = int_width(v);
        out.push(CELL_STR_MAX as u8 + w as u8);
        out.extend_from_slice(&v.to_le_bytes()[..w]);
        return true;
    }
    if value.len() > CELL_STR_MAX {
        return false;
    }
    out.push(value.len() as u8);
    out.extend_from_slice(value);
    true
}

/// What a cell holds: a text, or the integer whose canonical decimal text the value is.
enum Cell<'a> {
    Text(&'a [u8]),
    Int(i32),
}

/// The cell at `pos` of `bytes`, and the offset after it.
#[inline(always)]
fn cell_at(bytes: &[u8], pos: usize) -> (Cell<'_>, usize) {
    let b = bytes[pos] as usize;
    if b <= CELL_STR_MAX {
        let end = pos + 1 + b;
        return (Cell::Text(&bytes[pos + 1..end]), end);
    }
    let w = b - CELL_STR_MAX;
    let end = pos + 1 + w;
    let mut raw = [0u8; 4];
    raw[..w].copy_from_slice(&bytes[pos + 1..end]);
    let shift = 32 - 8 * w as u32;
    (Cell::Int((i32::from_le_bytes(raw) << shift) >> shift), end)
}

/// Characters of `v`'s decimal text.
fn decimal_len(v: i32) -> usize {
    let digits = v
        .unsigned_abs()
        .checked_ilog10()
        .map_or(1, |d| d as usize + 1);
    digits + usize::from(v < 0)
}

/// Bytes of the listpack entry of the cell at `pos` of `bytes`, and the offset after it.
#[inline]
fn cell_entry_len(bytes: &[u8], pos: usize) -> (usize, usize) {
    match cell_at(bytes, pos) {
        (Cell::Int(v), end) => (entry::unscored_len(decimal_len(v)), end),
        (Cell::Text(t), end) => (entry::unscored_len(t.len()), end),
    }
}

/// Appends the listpack entry of the cell at `pos` of `bytes` to `out`; returns the offset
/// after the cell.
#[inline]
fn put_cell_entry(bytes: &[u8], pos: usize, out: &mut Vec<u8>) -> usize {
    let mut digits = itoa::Buffer::new();
    let (text, end) = match cell_at(bytes, pos) {
        (Cell::Text(t), end) => (t, end),
        (Cell::Int(v), end) => (digits.format(v).as_bytes(), end),
    };
    entry::put_unscored(out, text);
    end
}

impl Hash {
    /// Writes the shaped form of this hash into `out` (cleared first): true when it has one
    /// (a plain listpack whose field list is a shape of `shapes`, no value over 247 bytes).
    pub fn shaped(&self, shapes: &FieldShapes, out: &mut Vec<u8>) -> bool {
        shapes
            .lookup(self, out)
            .is_some_and(|id| self.shaped_as(id, out))
    }

    /// Writes the shaped form of this hash, whose field list is shape `id` (from
    /// [`FieldShapes::note`]), into `out` (cleared first): false when a value is over 247
    /// bytes.
    pub fn shaped_as(&self, id: u32, out: &mut Vec<u8>) -> bool {
        let Some(p) = plain(self) else {
            return false;
        };
        put_id(out, id);
        p.pairs().all(|(_, value)| put_cell(out, value))
    }

    /// As [`Hash::shaped_as`] when this hash's field list is still shape `id` of `shapes`
    /// (a record of that shape, written to): checked by comparing the listpack's field
    /// entries with the shape's in the same pass, no lookup; false when it is not.
    pub fn reshaped(&self, shapes: &FieldShapes, id: u32, out: &mut Vec<u8>) -> bool {
        let (Some(p), Some((fields, count))) = (plain(self), shapes.shapes.get(id as usize)) else {
            return false;
        };
        if p.len() != *count {
            return false;
        }
        put_id(out, id);
        let mut at = 0;
        // Entries delimit themselves: a field entry equal to the bytes at `at` is the
        // shape's entry there.
        p.field_entries_and_values().all(|(field, value)| {
            let same = fields[at..].starts_with(field);
            at += field.len();
            same && put_cell(out, value)
        })
    }

    /// The listpack hash whose shaped form (from [`Hash::shaped`] with `shapes`) is `bytes`,
    /// written in one exact-size allocation.
    pub fn from_shaped(shapes: &FieldShapes, bytes: &[u8]) -> Hash {
        let (id, first) = shape_id(bytes);
        let (fields, count) = &shapes.shapes[id as usize];
        let mut len = HEADER + fields.len();
        let mut pos = first;
        while pos < bytes.len() {
            let (n, end) = cell_entry_len(bytes, pos);
            len += n;
            pos = end;
        }
        let mut buf = Vec::with_capacity(len);
        buf.extend_from_slice(&(*count as u32).to_le_bytes());
        let (mut at, mut pos) = (0, first);
        while at < fields.len() {
            let end = entry::decode(fields, at).end;
            buf.extend_from_slice(&fields[at..end]);
            at = end;
            pos = put_cell_entry(bytes, pos, &mut buf);
        }
        debug_assert_eq!((pos, buf.len()), (bytes.len(), len));
        Hash::from_pack(PackHash::from_vec(buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashConfig;
    use proptest::prelude::*;

    fn hash(pairs: &[(&[u8], &[u8])]) -> Hash {
        let mut h = Hash::new();
        for (f, v) in pairs {
            h.set(f, v, &HashConfig::default());
        }
        h
    }

    fn pairs(h: &Hash) -> Vec<(Vec<u8>, Vec<u8>)> {
        h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
    }

    const PROFILE: [(&[u8], &[u8]); 5] = [
        (b"name", b"Grace"),
        (b"email", b"grace17@example.com"),
        (b"age", b"42"),
        (b"city", b"London"),
        (b"score", b"31337"),
    ];

    #[test]
    fn a_field_list_is_a_shape_on_its_second_sighting() {
        let mut shapes = FieldShapes::default();
        let mut buf = Vec::new();
        let h = hash(&PROFILE);
        assert!(!h.shaped(&shapes, &mut buf));
        shapes.note(&h, &mut buf);
        assert!(!h.shaped(&shapes, &mut buf), "seen once");
        shapes.note(&h, &mut buf);
        assert!(h.shaped(&shapes, &mut buf));
        assert_eq!(shapes.len(), 1);
        // id 1 + "Grace" 6 + email 20 + 42 as i8 2 + "London" 7 + 31337 as i16 3
        assert_eq!(buf.len(), 39);
        // count 4 + headers 11 (the email's takes 2) + names 21 + values 37
        assert_eq!(h.packed().unwrap().len(), 4 + 11 + 21 + 37);
        let back = Hash::from_shaped(&shapes, &buf);
        assert_eq!(pairs(&back), pairs(&h));
        assert_eq!(back.packed(), h.packed());
        let mut again = Vec::new();
        assert!(h.reshaped(&shapes, 0, &mut again));
        assert_eq!(again, buf);
        assert!(!h.reshaped(&shapes, 1, &mut again), "no shape 1");
        let mut other = h.clone();
        other.set(b"zip", b"75001", &HashConfig::default());
        assert!(
            !other.reshaped(&shapes, 0, &mut again),
            "the field list changed"
        );
    }

    #[test]
    fn integers_keep_their_exact_text() {
        for text in [
            &b"0"[..],
            b"-0",
            b"00",
            b"07",
            b"-1",
            b"127",
            b"-128",
            b"128",
            b"8388607",
            b"-8388609",
            b"2147483647",
            b"-2147483648",
            b"2147483648",
            b"99999999999",
            b"+5",
            b"1 ",
            b"-",
            b"",
        ] {
            let mut out = Vec::new();
            assert!(put_cell(&mut out, text));
            let mut back = Vec::new();
            assert_eq!(put_cell_entry(&out, 0, &mut back), out.len());
            assert_eq!(entry::decode(&back, 0).member, text);
        }
        assert_eq!(canonical_int(b"-0"), None);
        assert_eq!(canonical_int(b"007"), None);
        assert_eq!(canonical_int(b"-2147483648"), Some(i32::MIN));
        assert_eq!(canonical_int(b"2147483648"), None);
    }

    #[test]
    fn what_is_not_shaped() {
        let mut shapes = FieldShapes::default();
        let mut buf = Vec::new();
        let long = [b'v'; 248];
        let h = hash(&[(b"f", &long)]);
        shapes.note(&h, &mut buf);
        shapes.note(&h, &mut buf);
        assert!(!h.shaped(&shapes, &mut buf), "a value longer than a cell");
        let empty = Hash::new();
        shapes.note(&empty, &mut buf);
        shapes.note(&empty, &mut buf);
        assert!(!empty.shaped(&shapes, &mut buf));
        let mut ex = hash(&[(b"f", b"v")]);
        ex.set(b"g", b"w", &HashConfig::default());
        shapes.note(&ex, &mut buf);
        shapes.note(&ex, &mut buf);
        assert!(ex.shaped(&shapes, &mut buf));
        ex.enable_field_expiry();
        assert!(!ex.shaped(&shapes, &mut buf), "a listpackex");
    }

    #[test]
    fn the_dictionary_is_bounded() {
        let mut shapes = FieldShapes::default();
        let mut buf = Vec::new();
        for i in 0..MAX_SHAPES + 10 {
            let h = hash(&[(format!("f{i}").as_bytes(), b"v")]);
            shapes.note(&h, &mut buf);
            shapes.note(&h, &mut buf);
        }
        assert_eq!(shapes.len(), MAX_SHAPES);
        let h = hash(&[(format!("f{}", MAX_SHAPES - 1).as_bytes(), b"v")]);
        assert!(h.shaped(&shapes, &mut buf));
        assert_eq!(buf[..2], [0xFF, 0x7F], "the last id takes 2 bytes");
        assert_eq!(pairs(&Hash::from_shaped(&shapes, &buf)), pairs(&h));
    }

    proptest! {
        #[test]
        fn shaped_forms_rebuild_the_same_listpack(
            hashes in proptest::collection::vec(
                proptest::collection::vec(
                    (0u8..6, prop_oneof![
                        proptest::collection::vec(any::<u8>(), 0..12),
                        any::<i64>().prop_map(|v| v.to_string().into_bytes()),
                        (-300i32..300).prop_map(|v| v.to_string().into_bytes()),
                    ]),
                    1..6,
                ),
                1..20,
            )
        ) {
            let mut shapes = FieldShapes::default();
            let mut buf = Vec::new();
            for pairs_in in hashes {
                let mut h = Hash::new();
                for (f, v) in &pairs_in {
                    h.set(&[b'f', *f], v, &HashConfig::default());
                }
                shapes.note(&h, &mut buf);
                if h.shaped(&shapes, &mut buf) {
                    let back = Hash::from_shaped(&shapes, &buf);
                    prop_assert_eq!(back.packed(), h.packed());
                    prop_assert!(buf.len() < h.packed().unwrap().len());
                }
                // Re-encoding under each shape: only the hash's own list's gives a form.
                for id in 0..shapes.len() as u32 {
                    let mut again = Vec::new();
                    let own = shapes.lookup(&h, &mut Vec::new()) == Some(id);
                    prop_assert_eq!(
                        h.reshaped(&shapes, id, &mut again),
                        own && h.shaped_as(id, &mut buf)
                    );
                    if own {
                        prop_assert_eq!(&again, &buf);
                    }
                }
            }
        }
    }
}
