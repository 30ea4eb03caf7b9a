//! A cached HTTP response as one store value, and the keys it is stored under.
//!
//! ```text
//! offset size
//!  0     4    magic "GHT2"
//!  4     2    status (little endian, as every field)
//!  6     2    flags: VARIES (stored under its variant key), MARKER (no response: the
//!             variants of this path are stored under their variant keys, see
//!             super::variants)
//!  8     8    stored at, Unix seconds
//! 16     4    the origin's Age when stored
//! 20     4    H, length of the header block
//! 24     4    time to live from `stored at`, seconds
//! 28     4    stale-while-revalidate window after it, seconds
//! 32     4    stale-if-error window after it, seconds
//! 36     H    header block: the origin's end-to-end headers, "Name: value\r\n" each
//! 36+H   ...  body
//! ```
//!
//! The store keeps an object for its time to live plus the larger stale window
//! ([`Meta::stale_window`]), and its entry's client flags hold that window, so that a soft
//! purge can end the freshness now and leave the window (see [`super::grace`]).
//!
//! The meta and header block come first so that they are always in the RAM head: an
//! object whose meta and headers would not fit in one head is not cached.

use crate::store::Digest;

/// Bytes of the fixed meta in front of the header block.
pub const META_LEN: usize = 36;
const MAGIC: &[u8; 4] = b"GHT2";

/// The object's Vary names request headers: it is stored under its variant key
/// ([`super::vary::variant_key`]).
pub const VARIES: u16 = 1;
/// A marker under the plain key: look up the variant key instead ([`super::variants`]).
pub const MARKER: u16 = 2;

/// The fixed fields of a stored response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// HTTP status.
    pub status: u16,
    /// `VARIES` / `MARKER`.
    pub flags: u16,
    /// Unix seconds when stored.
    pub stored_at: i64,
    /// The origin's Age header when stored.
    pub age: u32,
    /// Length of the header block.
    pub headers_len: u32,
    /// Seconds fresh after `stored_at`.
    pub ttl: u32,
    /// Seconds after that the object may be served stale while one fetch revalidates it.
    pub swr: u32,
    /// Seconds after that the object may be served stale when the origin fails.
    pub sie: u32,
}

impl Meta {
    /// Reads the meta at the start of a stored value.
    pub fn parse(value: &[u8]) -> Option<Meta> {
        if value.len() < META_LEN || &value[..4] != MAGIC {
            return None;
        }
        let u16_at = |i: usize| u16::from_le_bytes([value[i], value[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(value[i..i + 4].try_into().expect("4 bytes"));
        let meta = Meta {
            status: u16_at(4),
            flags: u16_at(6),
            stored_at: i64::from_le_bytes(value[8..16].try_into().expect("8 bytes")),
            age: u32_at(16),
            headers_len: u32_at(20),
            ttl: u32_at(24),
            swr: u32_at(28),
            sie: u32_at(32),
        };
        (META_LEN + meta.headers_len as usize <= value.len()).then_some(meta)
    }

    /// Writes the meta into the first [`META_LEN`] bytes of `out`.
    pub fn write(&self, out: &mut [u8]) {
        out[..4].copy_from_slice(MAGIC);
        out[4..6].copy_from_slice(&self.status.to_le_bytes());
        out[6..8].copy_from_slice(&self.flags.to_le_bytes());
        out[8..16].copy_from_slice(&self.stored_at.to_le_bytes());
        out[16..20].copy_from_slice(&self.age.to_le_bytes());
        out[20..24].copy_from_slice(&self.headers_len.to_le_bytes());
        out[24..28].copy_from_slice(&self.ttl.to_le_bytes());
        out[28..32].copy_from_slice(&self.swr.to_le_bytes());
        out[32..36].copy_from_slice(&self.sie.to_le_bytes());
    }

    /// Seconds the store keeps the object after its freshness ends: the larger window.
    pub fn stale_window(&self) -> u32 {
        self.swr.max(self.sie)
    }

    /// Offset of the body in the value.
    pub fn body_start(&self) -> usize {
        META_LEN + self.headers_len as usize
    }

    /// The header block of `value`.
    pub fn headers<'a>(&self, value: &'a [u8]) -> &'a [u8] {
        &value[META_LEN..self.body_start()]
    }
}

/// The content codings a request accepts, normalised as Varnish does: gzip or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AeClass {
    /// No Accept-Encoding, or one without gzip.
    Identity,
    /// gzip is accepted (with a non-zero q).
    Gzip,
}

impl AeClass {
    /// The class of a request's Accept-Encoding header.
    pub fn of(accept_encoding: Option<&[u8]>) -> AeClass {
        let Some(v) = accept_encoding else {
            return AeClass::Identity;
        };
        let gzip = v.split(|&b| b == b',').any(|item| {
            let mut parts = item.split(|&b| b == b';');
            let coding = parts.next().unwrap_or_default().trim_ascii();
            let zero_q = parts.any(|p| {
                let p = p.trim_ascii();
                p.len() >= 2
                    && p[..2].eq_ignore_ascii_case(b"q=")
                    && p[2..].iter().all(|&b| b == b'0' || b == b'.')
            });
            (coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip"))
                && !zero_q
        });
        if gzip {
            AeClass::Gzip
        } else {
            AeClass::Identity
        }
    }
}

/// The plain store key of a path: "GET " and the path (a space cannot occur in a memcache
/// key, so HTTP objects and memcache items never share a key). It holds the response, or
/// the marker of a path whose responses vary.
pub fn key(path: &[u8]) -> Digest {
    Digest::of_parts(&[b"GET ", path])
}

/// Lines of a header block as `(name, value)`.
pub fn header_lines(block: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    block.split(|&b| b == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = line.iter().position(|&b| b == b':')?;
        Some((&line[..colon], line[colon + 1..].trim_ascii()))
    })
}

/// The first value of header `name` (ASCII case-insensitive) in a header block.
pub fn header_value<'a>(block: &'a [u8], name: &str) -> Option<&'a [u8]> {
    header_lines(block)
        .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
        .map(|(_, v)| v)
}

/// True when a comma-separated header value lists `token` (ASCII case-insensitive).
pub fn lists_token(value: &[u8], token: &str) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trip() {
        let m = Meta {
            status: 404,
            flags: VARIES,
            stored_at: 1_700_000_000,
            age: 7,
            headers_len: 5,
            ttl: 60,
            swr: 10,
            sie: 30,
        };
        let mut v = vec![0u8; META_LEN];
        m.write(&mut v);
        v.extend_from_slice(b"A: b\n");
        v.extend_from_slice(b"body");
        let back = Meta::parse(&v).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.stale_window(), 30);
        assert_eq!(back.headers(&v), b"A: b\n");
        assert_eq!(&v[back.body_start()..], b"body");
        assert!(Meta::parse(&v[..META_LEN + 2]).is_none());
        assert!(Meta::parse(b"memcache value, not an HTTP object").is_none());
    }

    #[test]
    fn accept_encoding_classes() {
        assert_eq!(AeClass::of(None), AeClass::Identity);
        assert_eq!(AeClass::of(Some(b"gzip, deflate, br")), AeClass::Gzip);
        assert_eq!(AeClass::of(Some(b"br;q=1.0, GZIP;q=0.5")), AeClass::Gzip);
        assert_eq!(AeClass::of(Some(b"gzip;q=0")), AeClass::Identity);
        assert_eq!(AeClass::of(Some(b"gzip;q=0.000")), AeClass::Identity);
        assert_eq!(AeClass::of(Some(b"identity, br")), AeClass::Identity);
    }

    #[test]
    fn keys_and_headers() {
        assert_eq!(key(b"/a"), Digest::of(b"GET /a"));
        let block = b"Content-Type: text/plain\r\nETag: \"x\"\r\nVary: Accept-Encoding, Cookie\r\n";
        assert_eq!(header_value(block, "etag"), Some(&b"\"x\""[..]));
        assert_eq!(header_value(block, "last-modified"), None);
        assert!(lists_token(header_value(block, "vary").unwrap(), "cookie"));
        assert!(!lists_token(b"Accept", "accept-encoding"));
    }
}
