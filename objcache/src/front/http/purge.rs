//! PURGE, from --purge-allow addresses only, in three forms:
//!
//! - `PURGE /path`: the object at the path, every variant.
//! - `PURGE /dir/*`: every object whose path (before any query) starts with `/dir/`; the
//!   prefix is a whole path segment ending in `/` (`PURGE /*` is every object).
//! - `PURGE /` (any target) with `Surrogate-Key: tag1 tag2`, as Fastly's purge by key:
//!   every object whose response carried one of the tags in a `Surrogate-Key` or `xkey`
//!   header (space- or comma-separated).
//!
//! With `Goblin-Purge: soft` (or Fastly's `Fastly-Soft-Purge: 1`) the objects are marked
//! stale instead of dropped: their freshness ends now and their stale windows start, so
//! grace applies ([`super::grace`]). The answer is 200 with `purged N` (404 when nothing
//! went).
//!
//! Prefixes and surrogate keys are both tags in the store's tag index: at admission an
//! object is tagged with its path's directory prefixes and its surrogate keys
//! ([`object_tags`]), so one index serves both, and an object leaves it when evicted.
//!
//! A purge also reaches fetches still waiting for admission, which the store does not know
//! yet: it marks matching fills first, then purges the store; admission checks the mark
//! before storing (a hard purge drops the object) and again after storing and tagging (and
//! then deletes or softens what it stored). Either the second check sees the mark, or the
//! object was stored and tagged before the purge looked at the store.

use std::sync::atomic::Ordering;

use super::fill::{Fill, PURGE_HARD, PURGE_SOFT};
use super::object::{self, header_lines, Meta, MARKER};
use super::parse::RequestHead;
use super::serve::Shared;
use super::variants;
use crate::store::{clock, Body, Deleted, Digest, Entry, BIT_STALE, MAX_TAGS};

/// Most directory prefixes of a path that become tags.
const MAX_DEPTH: usize = 8;

/// What a PURGE request names.
pub enum Target<'a> {
    /// One path, every variant.
    Url(&'a [u8]),
    /// Every object carrying one of these tags.
    Tags(Vec<u64>),
}

/// A parsed PURGE request.
pub struct Purge<'a> {
    /// What goes.
    pub target: Target<'a>,
    /// Mark stale instead of dropping.
    pub soft: bool,
}

impl<'a> Purge<'a> {
    /// Reads a PURGE request for `path` (the target's path and query).
    pub fn of(req: &RequestHead, raw: &[u8], path: &'a [u8]) -> Purge<'a> {
        let is = |name, want: &[u8]| {
            req.header(raw, name)
                .is_some_and(|v| v.trim_ascii().eq_ignore_ascii_case(want))
        };
        let soft = is("goblin-purge", b"soft") || is("fastly-soft-purge", b"1");
        let target = if let Some(keys) = req.header(raw, "surrogate-key") {
            Target::Tags(surrogate_keys(keys).map(key_tag).collect())
        } else if let Some(prefix) = path.strip_suffix(b"*").filter(|p| p.ends_with(b"/")) {
            Target::Tags(vec![prefix_tag(prefix)])
        } else {
            Target::Url(path)
        };
        Purge { target, soft }
    }
}

/// The tags of a surrogate key.
fn key_tag(key: &[u8]) -> u64 {
    tag(b"key ", key)
}

/// The tag of a directory prefix (ending in `/`).
fn prefix_tag(prefix: &[u8]) -> u64 {
    tag(b"prefix ", prefix)
}

fn tag(kind: &[u8], name: &[u8]) -> u64 {
    let d = Digest::of_parts(&[kind, name]);
    u64::from_le_bytes(d.0[..8].try_into().expect("8 bytes"))
}

/// The keys of a Surrogate-Key or xkey value.
fn surrogate_keys(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b' ' || b == b',' || b == b'\t')
        .filter(|k| !k.is_empty())
}

/// The tags of an object at `path` with the header block `headers`: its directory
/// prefixes (`/`, `/a/`, `/a/b/` for `/a/b/c?q`, at most [`MAX_DEPTH`]) first, then its
/// surrogate keys, at most [`MAX_TAGS`] in all.
pub fn object_tags(path: &[u8], headers: &[u8]) -> Vec<u64> {
    let path = path.split(|&b| b == b'?').next().unwrap_or_default();
    let mut tags: Vec<u64> = path
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'/')
        .take(MAX_DEPTH)
        .map(|(i, _)| prefix_tag(&path[..=i]))
        .collect();
    let keys = header_lines(headers)
        .filter(|(n, _)| {
            n.eq_ignore_ascii_case(b"surrogate-key") || n.eq_ignore_ascii_case(b"xkey")
        })
        .flat_map(|(_, v)| surrogate_keys(v));
    tags.extend(keys.map(key_tag));
    tags.truncate(MAX_TAGS);
    tags
}

/// Ends an entry's freshness now and leaves its stale window (kept in its client flags,
/// see [`object`]): a soft purge.
pub fn soften(e: &mut Entry) {
    e.bits |= BIT_STALE;
    e.exptime = e.exptime.min(clock::now().saturating_add(e.flags));
}

/// Runs a purge; returns how many objects went (or were marked stale), counting fetched
/// objects whose admission it reached.
pub fn run(sh: &Shared, purge: &Purge<'_>) -> u64 {
    let level = if purge.soft { PURGE_SOFT } else { PURGE_HARD };
    let stats = &sh.stats;
    let (pending, stored) = match &purge.target {
        Target::Url(path) => {
            let pending = sh.fills.mark_purged(|f| f.path == *path, level);
            (pending, purge_url(sh, path, purge.soft))
        }
        Target::Tags(tags) => {
            let pending = sh
                .fills
                .mark_purged(|f| fill_tags(f).iter().any(|t| tags.contains(t)), level);
            let soft: Option<&dyn Fn(&mut Entry)> = if purge.soft { Some(&soften) } else { None };
            (pending, sh.store.purge_tags(tags, soft))
        }
    };
    let counter = match (&purge.target, purge.soft) {
        (_, true) => &stats.soft_purges,
        (Target::Url(_), false) => &stats.purges,
        (Target::Tags(_), false) => &stats.tag_purges,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    // A fill stored while this purge ran may be counted twice: once pending, once stored.
    let n = pending + stored;
    stats.purged_objects.fetch_add(n, Ordering::Relaxed);
    n
}

/// The tags of a fetched object (none before its head arrived).
fn fill_tags(f: &Fill) -> Vec<u64> {
    let st = f.lock();
    match st.meta {
        Some(m) => object_tags(&f.path, m.headers(st.head())),
        None => Vec::new(),
    }
}

/// Drops (or softens) the object at `path`, or every variant its marker lists and the
/// marker.
fn purge_url(sh: &Shared, path: &[u8], soft: bool) -> u64 {
    let plain = object::key(path);
    let variants = variants::of(&sh.store, &plain);
    if soft {
        let soften_object = |k: &Digest| {
            let object = sh.store.lookup(k, false, |e, body| {
                let ram = match body {
                    Body::Whole(b) => b,
                    Body::Split { head, .. } => head,
                };
                let object = Meta::parse(ram).is_some_and(|m| m.flags & MARKER == 0);
                if object {
                    soften(e);
                }
                object
            });
            u64::from(object == Some(true))
        };
        let keys = variants.unwrap_or_else(|| vec![plain]);
        return keys.iter().map(soften_object).sum();
    }
    let deleted = |k: &Digest| u64::from(matches!(sh.store.delete(k, 0), Deleted::Deleted(_)));
    let plain_gone = deleted(&plain);
    match variants {
        // The marker is not an object: it does not count.
        Some(keys) => keys.iter().map(deleted).sum(),
        None => plain_gone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_of_objects() {
        let t = object_tags(
            b"/a/b/c.jpg?x=/y/",
            b"Surrogate-Key: k1  k2\r\nxkey: k3,k1\r\n",
        );
        assert_eq!(
            t,
            vec![
                prefix_tag(b"/"),
                prefix_tag(b"/a/"),
                prefix_tag(b"/a/b/"),
                key_tag(b"k1"),
                key_tag(b"k2"),
                key_tag(b"k3"),
                key_tag(b"k1"),
            ]
        );
        assert_ne!(key_tag(b"/a/"), prefix_tag(b"/a/"));
        let deep = b"/1/2/3/4/5/6/7/8/9/10/x";
        assert_eq!(object_tags(deep, b"").len(), MAX_DEPTH);
        let many: String = (0..100).map(|i| format!("k{i} ")).collect();
        let block = format!("Surrogate-Key: {many}\r\n");
        assert_eq!(object_tags(b"/x", block.as_bytes()).len(), MAX_TAGS);
    }

    #[test]
    fn request_forms() {
        let parse = |head: &str| {
            let raw = head.replacen("\r\n", "\r\nHost: c\r\n", 1).into_bytes();
            let req = super::super::parse::parse_request(&raw).unwrap().unwrap();
            let path = super::super::parse::request_path(&raw[req.target.clone()])
                .unwrap()
                .to_vec();
            let p = Purge::of(&req, &raw, &path);
            let target = match p.target {
                Target::Url(u) => Err(u.to_vec()),
                Target::Tags(t) => Ok(t),
            };
            (target, p.soft)
        };
        assert_eq!(
            parse("PURGE /a/b HTTP/1.1\r\n\r\n"),
            (Err(b"/a/b".to_vec()), false)
        );
        assert_eq!(
            parse("PURGE /img/* HTTP/1.1\r\nGoblin-Purge: Soft\r\n\r\n"),
            (Ok(vec![prefix_tag(b"/img/")]), true)
        );
        assert_eq!(
            parse("PURGE /img* HTTP/1.1\r\n\r\n").0,
            Err(b"/img*".to_vec())
        );
        assert_eq!(
            parse("PURGE / HTTP/1.1\r\nSurrogate-Key: a b\r\nFastly-Soft-Purge: 1\r\n\r\n"),
            (Ok(vec![key_tag(b"a"), key_tag(b"b")]), true)
        );
    }

    #[test]
    fn soften_keeps_the_window() {
        let now = clock::now();
        let mut e = Entry {
            exptime: now + 1000,
            flags: 30,
            ..Entry::default()
        };
        soften(&mut e);
        assert_eq!((e.exptime, e.bits & BIT_STALE), (now + 30, BIT_STALE));
        let mut short = Entry {
            exptime: now + 5,
            flags: 30,
            ..Entry::default()
        };
        soften(&mut short);
        assert_eq!(short.exptime, now + 5);
    }
}
