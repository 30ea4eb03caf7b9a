//! Vary: which request headers select a variant of a path, and what is forwarded to the
//! origin.
//!
//! A response's `Vary` names request headers; each distinct combination of their
//! normalised values is one variant, stored under its own key ([`variant_key`]). Values are
//! normalised so that requests meaning the same thing share a variant: trimmed, runs of
//! spaces and tabs collapsed to one space, and lowercased for the headers compared without
//! case ([`CASELESS`]); `Accept-Encoding` is reduced to `gzip` or nothing, as Varnish does
//! ([`AeClass`]). A request's forwarded headers are one header block ([`forward`]) of
//! `name: value\r\n` lines, names lowercase and sorted, values normalised: the origin sees
//! exactly the values the variant key is made of, so every request joining a fetch gets
//! what the origin answered for it.
//!
//! Before a path's Vary is known (first contact, or a path whose objects do not vary), a
//! miss forwards every forwardable header and fetches under a key of the path and the whole
//! block ([`first_contact_key`]): requests with identical forwarded headers join. Once a
//! marker records the Vary ([`super::variants`]), only the named headers are forwarded and
//! the fetch runs under the variant key. `Vary: *`, more than [`MAX_NAMES`] names, or a
//! name never forwarded ([`NOT_FORWARDED`]: the origin would not have seen it) make a
//! response uncacheable ([`names`]).

use super::object::{header_lines, AeClass};
use super::parse::RequestHead;
use crate::store::Digest;

/// Most header names a cacheable Vary may list.
pub const MAX_NAMES: usize = 8;

/// Request headers never forwarded to the origin: its Host is its own, credentials stay
/// with the client, hop-by-hop fields and request framing belong to the client's
/// connection, and ranges and validators are the front's to answer.
const NOT_FORWARDED: [&str; 19] = [
    "host",
    "cookie",
    "authorization",
    "proxy-authorization",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "expect",
    "range",
    "if-range",
    "if-match",
    "if-none-match",
    "if-modified-since",
    "if-unmodified-since",
];

/// Request headers whose values compare without case (besides Accept-Encoding, which is
/// classed).
const CASELESS: [&str; 3] = ["accept", "accept-charset", "accept-language"];

fn listed(list: &[&str], name: &[u8]) -> bool {
    list.iter().any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
}

/// The header names a response's `Vary` lists (lowercase, sorted, without repeats) in its
/// header block; empty when it does not vary, `None` when it must not be cached.
pub fn names(block: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut names: Vec<Vec<u8>> = Vec::new();
    for (_, value) in header_lines(block).filter(|(n, _)| n.eq_ignore_ascii_case(b"vary")) {
        for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
            if token == b"*" || listed(&NOT_FORWARDED, token) {
                return None;
            }
            if !token.is_empty() {
                names.push(token.to_ascii_lowercase());
            }
        }
    }
    names.sort();
    names.dedup();
    (names.len() <= MAX_NAMES).then_some(names)
}

/// The normalised value of header `name` (lowercase) from its raw value; `None` when the
/// header counts as absent (empty, or an Accept-Encoding without gzip).
fn normalise(name: &[u8], raw: &[u8]) -> Option<Vec<u8>> {
    if name == b"accept-encoding" {
        return (AeClass::of(Some(raw)) == AeClass::Gzip).then(|| b"gzip".to_vec());
    }
    let mut out = Vec::with_capacity(raw.len());
    for word in raw
        .split(|&b| b == b' ' || b == b'\t')
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(b' ');
        }
        out.extend_from_slice(word);
    }
    if listed(&CASELESS, name) {
        out.make_ascii_lowercase();
    }
    (!out.is_empty()).then_some(out)
}

/// The forwarded header block of a request (see the module comment): the headers `only`
/// names when the Vary is known, else every forwardable one. Repeated fields are joined with
/// `, `; fields the request's Connection header lists are hop-by-hop and left out.
pub fn forward(req: &RequestHead, raw: &[u8], only: Option<&[Vec<u8>]>) -> Vec<u8> {
    let hop = req.header(raw, "connection").unwrap_or_default();
    let hop_listed = |name: &[u8]| {
        hop.split(|&b| b == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(name))
    };
    let mut fields: Vec<(Vec<u8>, &[u8])> = req
        .headers
        .iter()
        .map(|h| {
            (
                raw[h.name.clone()].to_ascii_lowercase(),
                &raw[h.value.clone()],
            )
        })
        .filter(|(n, _)| match only {
            Some(names) => names.contains(n),
            None => !listed(&NOT_FORWARDED, n),
        })
        .filter(|(n, _)| !hop_listed(n))
        .collect();
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    let mut block = Vec::new();
    let mut i = 0;
    while i < fields.len() {
        let name = &fields[i].0;
        let mut joined = fields[i].1.to_vec();
        let mut j = i + 1;
        while j < fields.len() && fields[j].0 == *name {
            joined.extend_from_slice(b", ");
            joined.extend_from_slice(fields[j].1);
            j += 1;
        }
        if let Some(v) = normalise(name, &joined) {
            block.extend_from_slice(name);
            block.extend_from_slice(b": ");
            block.extend_from_slice(&v);
            block.extend_from_slice(b"\r\n");
        }
        i = j;
    }
    block
}

/// The store key of the variant of `path` for the Vary `names` whose forwarded headers are
/// `forwarded` (a [`forward`] block; a named header missing from it counts as absent).
pub fn variant_key(path: &[u8], names: &[Vec<u8>], forwarded: &[u8]) -> Digest {
    let mut selected = Vec::with_capacity(forwarded.len() + 64);
    for name in names {
        let value = header_lines(forwarded)
            .find(|(n, _)| n == &name.as_slice())
            .map_or(&[][..], |(_, v)| v);
        selected.push(b'\n');
        selected.extend_from_slice(name);
        selected.push(b'=');
        selected.extend_from_slice(value);
    }
    Digest::of_parts(&[b"GET ", path, b" vary", &selected])
}

/// The in-flight key of a first-contact fetch of `path` forwarding `forwarded`: never a
/// store key, only what identical requests join on.
pub fn first_contact_key(path: &[u8], forwarded: &[u8]) -> Digest {
    Digest::of_parts(&[b"GET ", path, b" fetch\n", forwarded])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::http::parse::parse_request;

    fn request(headers: &str) -> (RequestHead, Vec<u8>) {
        let raw = format!("GET /p HTTP/1.1\r\nHost: h\r\n{headers}\r\n").into_bytes();
        (parse_request(&raw).unwrap().unwrap(), raw)
    }

    #[test]
    fn vary_names() {
        let n = names(b"Vary: Accept-Language,  accept-encoding\r\nVary: X-A, X-A\r\n").unwrap();
        assert_eq!(
            n,
            vec![
                b"accept-encoding".to_vec(),
                b"accept-language".to_vec(),
                b"x-a".to_vec()
            ]
        );
        assert_eq!(names(b"Content-Type: a\r\n"), Some(Vec::new()));
        assert_eq!(names(b"Vary: *\r\n"), None);
        assert_eq!(names(b"Vary: Accept, Cookie\r\n"), None);
        assert_eq!(names(b"Vary: authorization\r\n"), None);
        let many: String = (0..=MAX_NAMES).map(|i| format!("x-{i},")).collect();
        assert_eq!(names(format!("Vary: {many}\r\n").as_bytes()), None);
    }

    #[test]
    fn forwarded_headers_are_normalised() {
        let (req, raw) = request(
            "Accept-Language:  EN-us,\t  fr \r\nCookie: a=b\r\nX-Dev: Phone  X\r\nAccept-Encoding: br, gzip\r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\nx-dev: 2\r\n",
        );
        assert_eq!(
            forward(&req, &raw, None),
            b"accept-encoding: gzip\r\naccept-language: en-us, fr\r\nx-dev: Phone X, 2\r\n"
        );
        let only = [b"x-dev".to_vec(), b"x-none".to_vec()];
        assert_eq!(forward(&req, &raw, Some(&only)), b"x-dev: Phone X, 2\r\n");
        let (req, raw) = request("Accept-Encoding: identity\r\n");
        assert_eq!(forward(&req, &raw, None), b"");
    }

    #[test]
    fn variant_keys() {
        let names = vec![b"accept-language".to_vec(), b"x-dev".to_vec()];
        let a = variant_key(b"/p", &names, b"accept-language: en\r\nx-other: 1\r\n");
        let b = variant_key(b"/p", &names, b"accept-language: en\r\n");
        let c = variant_key(b"/p", &names, b"accept-language: fr\r\n");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, variant_key(b"/q", &names, b"accept-language: en\r\n"));
        assert_ne!(variant_key(b"/p", &[], b""), first_contact_key(b"/p", b""));
    }
}
