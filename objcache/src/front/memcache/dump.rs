//! The key dumps, as memcached 1.6 answers them: `lru_crawler metadump all|hash|<classes>`
//! (one `key=... exp=... la=... cas=... fetch=... cls=... size=...` line per live item,
//! then END) and `stats cachedump <class> <limit>` (`ITEM key [n b; t s]` lines, what
//! libmemcached's `memcdump` reads). memcached's cachedump walks a class's COLD segment only;
//! Goblin reports every item in COLD (see `slabs`), so it lists every item of the class.

use std::fmt::Write as _;

use super::parse::strtoul;
use crate::store::classes::{entry_class, item_total};
use crate::store::{clock, Entry, Store, BIT_FETCHED};

/// memcached's MAX_NUMBER_OF_SLAB_CLASSES: class ids are 1 up to this, exclusive.
const CLASS_IDS: u32 = 64;
/// memcached caps a cachedump reply at 2 MiB (END included).
const CACHEDUMP_MAX: usize = 2 << 20;

/// The reply to `lru_crawler metadump <which>`: `all` or `hash` for every class, or class
/// ids separated by commas.
pub fn metadump(store: &Store, which: &[u8]) -> Vec<u8> {
    let mut wanted = [false; CLASS_IDS as usize];
    if which == b"all" || which == b"hash" {
        wanted = [true; CLASS_IDS as usize];
    } else {
        for tok in which.split(|&b| b == b',').filter(|t| !t.is_empty()) {
            match strtoul(tok) {
                Some(id) if (1..CLASS_IDS).contains(&id) => wanted[id as usize] = true,
                _ => return b"BADCLASS invalid class id\r\n".to_vec(),
            }
        }
        if !wanted.contains(&true) {
            return b"NOTSTARTED no items to crawl\r\n".to_vec();
        }
    }
    let mut out = Vec::new();
    store.for_each_item(|e, key| {
        let class = entry_class(e);
        if wanted[class] && !key.is_empty() {
            metadump_line(&mut out, e, key, class);
        }
    });
    out.extend_from_slice(b"END\r\n");
    out
}

/// One metadump line.
fn metadump_line(out: &mut Vec<u8>, e: &Entry, key: &[u8], class: usize) {
    out.extend_from_slice(b"key=");
    uri_encode(out, key);
    let exp = match e.exptime {
        0 => -1,
        t => clock::to_unix(t),
    };
    let mut line = String::with_capacity(96);
    // memcached ends these lines with a bare LF.
    let _ = writeln!(
        line,
        " exp={exp} la={} cas={} fetch={} cls={class} size={}",
        clock::to_unix(e.atime),
        e.cas,
        if e.bits & BIT_FETCHED != 0 {
            "yes"
        } else {
            "no"
        },
        item_total(key.len(), e.flags, e.size as usize),
    );
    out.extend_from_slice(line.as_bytes());
}

/// Appends `key` as memcached's uriencode writes it: letters, digits and `-._~` as they
/// are, every other byte as `%XX`.
fn uri_encode(out: &mut Vec<u8>, key: &[u8]) {
    for &b in key {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
}

/// The items of `class` for `stats cachedump <class> <limit>` (`limit` 0: all that fit
/// memcached's 2 MiB), END included.
pub fn cachedump(store: &Store, class: usize, limit: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut shown = 0u32;
    let mut full = false;
    store.for_each_item(|e, key| {
        if full || entry_class(e) != class || key.is_empty() || (limit != 0 && shown >= limit) {
            return;
        }
        let exp = match e.exptime {
            0 => 0,
            t => clock::to_unix(t),
        };
        let tail = format!(" [{} b; {exp} s]\r\n", e.size);
        // As memcached: the first line that would not leave room for END ends the list.
        full = out.len() + 5 + key.len() + tail.len() + 6 > CACHEDUMP_MAX;
        if !full {
            out.extend_from_slice(b"ITEM ");
            out.extend_from_slice(key);
            out.extend_from_slice(tail.as_bytes());
            shown += 1;
        }
    });
    out.extend_from_slice(b"END\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_uri_encoded_as_memcached_does() {
        let mut out = Vec::new();
        uri_encode(&mut out, b"a-b.c_d~e f%g/\xff");
        assert_eq!(out, b"a-b.c_d~e%20f%25g%2F%FF");
    }
}
