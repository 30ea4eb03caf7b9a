//! memcached's slab classes: which class memcached 1.6.18 with its defaults (`-n 48`,
//! `-f 1.25`, 1 MiB pages, 512 KiB largest chunk) would keep an item in. Goblin has no
//! slabs; the memcache front's replies (`me`, `stats items`, `stats slabs`) and the
//! per-class counters ([`super::stats::SlabStats`]) class items this way, so tools that
//! parse them see the same numbers for the same keys and values.

use super::Entry;

/// memcached's `sizeof(item)` on 64-bit builds.
pub const ITEM_HEADER: u64 = 48;
/// `sizeof(item_chunk)`: the header of each chunk of a large item.
pub const CHUNK_HEADER: u64 = 48;
/// `settings.slab_page_size`.
pub const PAGE_SIZE: u64 = 1 << 20;
/// `settings.slab_chunk_size_max`: the largest class; bigger items are chained chunks.
pub const CHUNK_MAX: u32 = 512 << 10;
/// Number of slab classes memcached makes with its defaults.
pub const CLASSES: usize = 39;

/// Chunk size of each class (class `i` is `CHUNK_SIZES[i - 1]`), as `slabs_init` computes
/// them: from `sizeof(item) + 48`, times 1.25 (truncated, as on memcached's unsigned int,
/// which `* 5 / 4` reproduces exactly), aligned to 8, until the next size reaches
/// `CHUNK_MAX / 1.25`; the last class is `CHUNK_MAX`.
pub const CHUNK_SIZES: [u32; CLASSES] = chunk_sizes();

const fn chunk_sizes() -> [u32; CLASSES] {
    let mut sizes = [0u32; CLASSES];
    let mut size = ITEM_HEADER as u32 + 48;
    let mut i = 0;
    while (size as u64) * 5 < (CHUNK_MAX as u64) * 4 {
        if !size.is_multiple_of(8) {
            size += 8 - size % 8;
        }
        sizes[i] = size;
        i += 1;
        size = size * 5 / 4;
    }
    sizes[i] = CHUNK_MAX;
    assert!(i + 1 == CLASSES, "memcached's defaults make 39 classes");
    sizes
}

/// Bytes memcached charges an item against -I (`ITEM_ntotal`): its 48-byte header, 8-byte
/// CAS, the key and its NUL, 4 bytes of client flags when non-zero, and the value with its
/// CRLF.
pub fn item_total(key_len: usize, flags: u32, len: usize) -> u64 {
    (ITEM_HEADER as usize + 8 + key_len + 1 + if flags == 0 { 0 } else { 4 } + len + 2) as u64
}

/// memcached's `slabs_clsid`: the smallest class whose chunks hold `ntotal` bytes (the
/// largest class for anything bigger).
pub fn class_of(ntotal: u64) -> usize {
    CHUNK_SIZES
        .iter()
        .position(|&c| ntotal <= u64::from(c))
        .map_or(CLASSES, |i| i + 1)
}

/// The class memcached files an item of `len` value bytes under (`ITEM_clsid`: its `me`
/// `cls=`, its `stats items` and per-class counters): the class of its total size, the
/// largest class for a chunked item.
pub fn item_class(key_len: usize, flags: u32, len: usize) -> usize {
    class_of(item_total(key_len, flags, len))
}

/// [`item_class`] of a stored entry.
pub fn entry_class(e: &Entry) -> usize {
    item_class(usize::from(e.key_len), e.flags, e.size as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_match_memcached_vv() {
        // `memcached -vv` with the defaults prints these chunk sizes.
        assert_eq!(&CHUNK_SIZES[..6], &[96, 120, 152, 192, 240, 304]);
        assert_eq!(CHUNK_SIZES[17], 4544);
        assert_eq!(CHUNK_SIZES[36], 315_872);
        assert_eq!(CHUNK_SIZES[37], 394_840);
        assert_eq!(CHUNK_SIZES[38], 524_288);
    }

    #[test]
    fn class_of_items() {
        // `set foo 0 0 3`: memcached's `me` says cls=1 size=65.
        assert_eq!(item_total(3, 0, 3), 65);
        assert_eq!(class_of(65), 1);
        assert_eq!(class_of(96), 1);
        assert_eq!(class_of(97), 2);
        // 100000-byte value, 2-byte key: cls=32 size=100061.
        assert_eq!(item_class(2, 0, 100_000), 32);
        assert_eq!(class_of(10 << 20), CLASSES);
        // A chunked item is filed under the largest class (memcached's `me` says cls=39).
        assert_eq!(item_class(20, 0, 600_000), CLASSES);
    }
}
