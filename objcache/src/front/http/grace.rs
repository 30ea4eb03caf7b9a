//! Grace: expired objects served stale while one fetch revalidates them, as Varnish's grace
//! and RFC 5861's `stale-while-revalidate` / `stale-if-error` describe.
//!
//! An object is stored for its time to live plus its stale window (the larger of the two
//! windows, see [`Meta::stale_window`]), so the store's expiry marks the end of the window
//! and the start of staleness is that expiry less the window. A soft purge moves the expiry
//! to now plus the window and sets the entry's stale bit, so the whole window applies from
//! the purge on:
//!
//! ```text
//!   stored_at        fresh end = expiry - window                expiry
//!   |---- fresh ----|---- stale-while-revalidate ----|           |
//!                   |---- stale-if-error ------------------------|
//! ```
//!
//! Within stale-while-revalidate a request is answered from the stale object (`X-Cache:
//! HIT-STALE`) and one background fetch revalidates it. Past it, the request waits for the
//! fetch, and is answered from the stale object when the fetch fails within stale-if-error.
//! A revalidation is conditional when the object has validators; a 304 refreshes the stored
//! header block and freshness and keeps the stored body ([`refreshed_headers`]).

use super::object::{header_lines, header_value, Meta};
use crate::store::Digest;

/// Where a stored object stands at a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Fresh: serve it.
    Fresh,
    /// Stale within stale-while-revalidate: serve it, revalidate in the background;
    /// `on_error` when it is also within stale-if-error.
    Revalidate {
        /// Within stale-if-error too.
        on_error: bool,
    },
    /// Stale past stale-while-revalidate but within stale-if-error: fetch, and serve it if
    /// the fetch fails.
    OnErrorOnly,
    /// Past both windows: a miss.
    Gone,
}

/// The standing of an object with `meta` whose store entry expires at `exptime` (store
/// clock, 0 for never) with the stale bit `stale` (a soft purge), at store time `now`.
pub fn standing(meta: &Meta, exptime: u32, stale: bool, now: u32) -> Standing {
    let window = meta.stale_window();
    if exptime == 0 {
        return Standing::Fresh;
    }
    let left = exptime.saturating_sub(now);
    if !stale && left > window {
        return Standing::Fresh;
    }
    let elapsed = window - left.min(window);
    let on_error = elapsed < meta.sie;
    if elapsed < meta.swr {
        Standing::Revalidate { on_error }
    } else if on_error {
        Standing::OnErrorOnly
    } else {
        Standing::Gone
    }
}

/// A stale object being revalidated, as its fetch needs it.
#[derive(Clone, Debug)]
pub struct Revalidation {
    /// The store key of the stale object.
    pub target: Digest,
    /// Its CAS value: a 304 refreshes only this version.
    pub cas: u64,
    /// Its status.
    pub status: u16,
    /// Its stored header block.
    pub headers: Vec<u8>,
    /// Within stale-if-error: a failed fetch or a 5xx leaves it serving.
    pub serve_on_error: bool,
}

impl Revalidation {
    /// Appends the conditional request fields of the stored validators: If-None-Match from
    /// the ETag, If-Modified-Since from Last-Modified.
    pub fn conditional_headers(&self, out: &mut Vec<u8>) {
        for (field, validator) in [
            ("If-None-Match", "etag"),
            ("If-Modified-Since", "last-modified"),
        ] {
            if let Some(v) = header_value(&self.headers, validator) {
                out.extend_from_slice(field.as_bytes());
                out.extend_from_slice(b": ");
                out.extend_from_slice(v);
                out.extend_from_slice(b"\r\n");
            }
        }
    }
}

/// The header block of an object refreshed by a 304 (RFC 9111 4.3.4): the stored fields,
/// less those the 304 sends, then the 304's fields (`fresh`, a header block of the fields
/// that are stored).
pub fn refreshed_headers(stored: &[u8], fresh: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(stored.len() + fresh.len());
    for (name, value) in header_lines(stored) {
        if !header_lines(fresh).any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(fresh);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(swr: u32, sie: u32) -> Meta {
        Meta {
            status: 200,
            flags: 0,
            stored_at: 0,
            age: 0,
            headers_len: 0,
            ttl: 10,
            swr,
            sie,
        }
    }

    #[test]
    fn standings() {
        use Standing::*;
        let m = meta(5, 20);
        // Expiry 100: fresh until 80, revalidate until 85, on error until 100.
        assert_eq!(standing(&m, 100, false, 79), Fresh);
        assert_eq!(standing(&m, 100, false, 80), Revalidate { on_error: true });
        assert_eq!(standing(&m, 100, false, 84), Revalidate { on_error: true });
        assert_eq!(standing(&m, 100, false, 85), OnErrorOnly);
        assert_eq!(standing(&m, 100, false, 99), OnErrorOnly);
        assert_eq!(standing(&m, 100, false, 100), Gone);
        // Soft-purged: stale whatever the expiry says.
        assert_eq!(standing(&m, 100, true, 50), Revalidate { on_error: true });
        assert_eq!(standing(&m, 0, false, 50), Fresh);
        let only_swr = meta(5, 0);
        assert_eq!(
            standing(&only_swr, 100, false, 96),
            Revalidate { on_error: false }
        );
        assert_eq!(standing(&meta(0, 0), 100, false, 100), Gone);
        assert_eq!(standing(&meta(0, 0), 100, true, 50), Gone);
    }

    #[test]
    fn conditional_fields() {
        let r = Revalidation {
            target: Digest::of(b"x"),
            cas: 1,
            status: 200,
            headers: b"ETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n".to_vec(),
            serve_on_error: false,
        };
        let mut out = Vec::new();
        r.conditional_headers(&mut out);
        assert_eq!(
            out,
            b"If-None-Match: \"v1\"\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
        );
        let none = Revalidation {
            headers: b"X: y\r\n".to_vec(),
            ..r
        };
        out.clear();
        none.conditional_headers(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn refresh_replaces_sent_fields() {
        let stored = b"Content-Type: text/plain\r\nETag: \"v1\"\r\nX-A: 1\r\nX-A: 2\r\n";
        let fresh = b"ETag: \"v1\"\r\nx-a: 3\r\nCache-Control: max-age=9\r\n";
        assert_eq!(
            refreshed_headers(stored, fresh),
            b"Content-Type: text/plain\r\nETag: \"v1\"\r\nx-a: 3\r\nCache-Control: max-age=9\r\n"
        );
        assert_eq!(refreshed_headers(stored, b""), stored);
    }
}
