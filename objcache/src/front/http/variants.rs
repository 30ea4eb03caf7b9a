//! The marker of a path whose responses vary: stored under the path's plain key in place of
//! a response, it names the Vary headers and the variants stored under their own keys
//! ([`super::vary::variant_key`]), at most [`MAX_VARIANTS`], oldest first.
//!
//! ```text
//! meta (flags MARKER, see super::object), headers_len = N
//! N bytes   the Vary names, lowercase and sorted, joined by ','
//! 32 * k    the digests of the k variant keys, the oldest first
//! ```
//!
//! Admission threads record variants side by side, so a marker is rewritten only over the
//! version it was read from (CAS) and the update retried when another got there first; a
//! variant pushed out of the marker (the ninth, or all of them when the Vary names change)
//! is deleted, so that PURGE of the path, which follows the marker, reaches every variant
//! stored.

use super::object::{Meta, MARKER, META_LEN};
use crate::store::{Body, Digest, KeyNote, Mode, Store, Stored};

/// Most variants kept per path: recording another drops the oldest.
pub const MAX_VARIANTS: usize = 8;

/// Attempts at a marker update before giving up to concurrent updates.
const RETRIES: usize = 16;

/// A marker's contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Variants {
    /// The Vary names, lowercase and sorted.
    pub names: Vec<Vec<u8>>,
    /// The variant keys, the oldest first.
    pub digests: Vec<Digest>,
}

impl Variants {
    /// The contents of a stored marker value; `None` for anything else.
    pub fn parse(value: &[u8]) -> Option<Variants> {
        let meta = Meta::parse(value).filter(|m| m.flags & MARKER != 0)?;
        let names = meta.headers(value);
        let names = match names.is_empty() {
            true => Vec::new(),
            false => names.split(|&b| b == b',').map(<[u8]>::to_vec).collect(),
        };
        let digests = value[meta.body_start()..]
            .chunks_exact(32)
            .map(|d| Digest(d.try_into().expect("32 bytes")))
            .collect();
        Some(Variants { names, digests })
    }

    /// The marker value.
    pub fn encode(&self) -> Vec<u8> {
        let names = self.names.join(&b","[..]);
        let mut v = vec![0u8; META_LEN];
        Meta {
            status: 0,
            flags: MARKER,
            stored_at: 0,
            age: 0,
            headers_len: names.len() as u32,
            ttl: 0,
            swr: 0,
            sie: 0,
        }
        .write(&mut v);
        v.extend_from_slice(&names);
        for d in &self.digests {
            v.extend_from_slice(&d.0);
        }
        v
    }

    /// Adds `digest` as the newest variant (moving it there if present); returns the
    /// variants dropped to keep at most [`MAX_VARIANTS`].
    fn push(&mut self, digest: Digest) -> Vec<Digest> {
        self.digests.retain(|d| *d != digest);
        self.digests.push(digest);
        let over = self.digests.len().saturating_sub(MAX_VARIANTS);
        self.digests.drain(..over).collect()
    }
}

/// What a path's plain key holds.
enum Plain {
    Missing,
    /// A response, or anything that is not a marker.
    Object(u64),
    Marker(u64, u32, Variants),
}

fn read_plain(store: &Store, plain: &Digest) -> Plain {
    let found = store.lookup(plain, false, |e, body| match body {
        Body::Whole(b) => match Variants::parse(b) {
            Some(v) => Plain::Marker(e.cas, e.exptime, v),
            None => Plain::Object(e.cas),
        },
        Body::Split { .. } => Plain::Object(e.cas),
    });
    found.unwrap_or(Plain::Missing)
}

/// Records the variant `digest` of a path varying on `names` in the marker under the plain
/// key `plain`, kept until at least `exptime`; deletes the variants it pushes out.
pub fn record(store: &Store, plain: &Digest, names: &[Vec<u8>], digest: Digest, exptime: u32) {
    let none = KeyNote::default();
    for _ in 0..RETRIES {
        let (mode, cas, keep, mut variants) = match read_plain(store, plain) {
            Plain::Missing => (Mode::Add, 0, exptime, Variants::default()),
            Plain::Object(cas) => (Mode::Cas, cas, exptime, Variants::default()),
            Plain::Marker(cas, old, v) => {
                let keep = if old == 0 || exptime == 0 {
                    0
                } else {
                    old.max(exptime)
                };
                (Mode::Cas, cas, keep, v)
            }
        };
        let mut dropped = Vec::new();
        if variants.names != names {
            dropped = std::mem::take(&mut variants.digests);
            variants.names = names.to_vec();
        }
        dropped.extend(variants.push(digest));
        dropped.retain(|d| *d != digest);
        let value = variants.encode();
        match store.store(plain, none, mode, 0, keep, &value, cas, false) {
            Stored::Stored { .. } => {
                for d in &dropped {
                    store.delete(d, 0);
                }
                return;
            }
            Stored::Exists | Stored::NotFound | Stored::NotStored => continue,
            Stored::NoMemory => return,
        }
    }
}

/// The variants recorded under the plain key `plain`; `None` when it holds no marker.
pub fn of(store: &Store, plain: &Digest) -> Option<Vec<Digest>> {
    match read_plain(store, plain) {
        Plain::Marker(_, _, v) => Some(v.digests),
        Plain::Missing | Plain::Object(_) => None,
    }
}

/// Deletes the variants recorded under `plain` (the marker stays).
pub fn forget(store: &Store, plain: &Digest) {
    for d in of(store, plain).unwrap_or_default() {
        store.delete(&d, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StoreArgs;

    fn store() -> Store {
        let args = StoreArgs {
            small_memory: Some(4 << 20),
            block: Some(2 << 20),
            cores: Some(1),
            ..StoreArgs::default()
        };
        Store::new(args.resolve().unwrap()).unwrap()
    }

    fn set(st: &Store, d: &Digest, v: &[u8]) {
        let r = st.store(d, KeyNote::default(), Mode::Set, 0, 0, v, 0, false);
        assert!(matches!(r, Stored::Stored { .. }));
    }

    #[test]
    fn marker_round_trip() {
        let v = Variants {
            names: vec![b"accept".to_vec(), b"x-a".to_vec()],
            digests: vec![Digest::of(b"1"), Digest::of(b"2")],
        };
        assert_eq!(Variants::parse(&v.encode()), Some(v));
        let empty = Variants::default();
        assert_eq!(Variants::parse(&empty.encode()), Some(empty));
        assert_eq!(
            Variants::parse(b"GHT2 not a marker at all, just bytes here"),
            None
        );
    }

    #[test]
    fn at_most_eight_and_the_oldest_goes() {
        let st = store();
        let plain = Digest::of(b"GET /p");
        let names = vec![b"x-v".to_vec()];
        let keys: Vec<Digest> = (0..10)
            .map(|i| Digest::of(format!("v{i}").as_bytes()))
            .collect();
        for k in &keys {
            set(&st, k, b"variant");
            record(&st, &plain, &names, *k, 0);
        }
        assert_eq!(of(&st, &plain), Some(keys[2..].to_vec()));
        assert!(st.read(&keys[0]).is_none() && st.read(&keys[1]).is_none());
        assert!(st.read(&keys[2]).is_some());
        // Recording one again moves it to the newest end.
        record(&st, &plain, &names, keys[2], 0);
        assert_eq!(of(&st, &plain).unwrap().last(), Some(&keys[2]));
        // Other names: the old variants go.
        set(&st, &keys[0], b"variant");
        record(&st, &plain, &[b"x-w".to_vec()], keys[0], 0);
        assert_eq!(of(&st, &plain), Some(vec![keys[0]]));
        assert!(st.read(&keys[3]).is_none());
        forget(&st, &plain);
        assert!(st.read(&keys[0]).is_none());
        assert_eq!(of(&st, &Digest::of(b"GET /none")), None);
    }
}
