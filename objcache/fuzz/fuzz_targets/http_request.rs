//! Fuzzes the HTTP/1.1 front's parsers: request heads, origin response heads and chunked
//! bodies. Any input must be handled without a panic; a parsed head must lie inside the
//! input and be found again, unchanged, in any longer input and in none shorter; a chunked
//! body split at a fuzzer-chosen point must decode as it does in one piece.
//!
//! Input: a cut byte (where to split, as a fraction of the rest), a flag byte (HEAD
//! request for the response parser), then the bytes.
#![no_main]

use std::ops::Range;

use goblin_objcache::front::http::parse::{
    self, ChunkedDecoder, Header, ParseError, RequestHead, ResponseHead, MAX_HEAD,
};
use libfuzzer_sys::fuzz_target;

fn check_ranges(buf: &[u8], head_len: usize, headers: &[Header], extra: &[Range<usize>]) {
    assert!(head_len <= buf.len() && head_len <= MAX_HEAD);
    for r in headers
        .iter()
        .flat_map(|h| [&h.name, &h.value])
        .chain(extra)
    {
        assert!(
            r.start <= r.end && r.end <= head_len,
            "{r:?} outside {head_len}"
        );
    }
}

fn request(buf: &[u8], cut: usize) {
    let full = parse::parse_request(buf);
    if let Ok(Some(h)) = &full {
        check_ranges(buf, h.head_len, &h.headers, std::slice::from_ref(&h.target));
        let _ = parse::request_path(&buf[h.target.clone()]);
        let _ = h.header(buf, "host");
    }
    let prefix = parse::parse_request(&buf[..cut]);
    incremental(&full, prefix, cut, |h: &RequestHead| h.head_len);
}

fn response(buf: &[u8], cut: usize, head_request: bool) {
    let full = parse::parse_response(buf, head_request);
    if let Ok(Some(h)) = &full {
        check_ranges(buf, h.head_len, &h.headers, &[]);
        assert!((100..1000).contains(&h.status));
        let _ = h.header(buf, "content-length");
    }
    let prefix = parse::parse_response(&buf[..cut], head_request);
    incremental(&full, prefix, cut, |h: &ResponseHead| h.head_len);
}

/// A complete head is incomplete in every shorter prefix and the same in every longer one.
fn incremental<H: PartialEq + std::fmt::Debug>(
    full: &Result<Option<H>, ParseError>,
    prefix: Result<Option<H>, ParseError>,
    cut: usize,
    head_len: impl Fn(&H) -> usize,
) {
    if let Ok(Some(h)) = full {
        if cut < head_len(h) {
            assert_eq!(prefix, Ok(None));
        } else {
            assert!(
                matches!(&prefix, Ok(Some(p)) if p == h),
                "{prefix:?} != {h:?}"
            );
        }
    }
}

fn chunked(buf: &[u8], cut: usize) {
    let mut one = ChunkedDecoder::new();
    let mut out_one = Vec::new();
    let whole = one.decode(buf, &mut out_one);

    let mut two = ChunkedDecoder::new();
    let mut out_two = Vec::new();
    let split = two.decode(&buf[..cut], &mut out_two).and_then(|(n, done)| {
        assert!(n <= cut);
        if done {
            return Ok((n, done));
        }
        assert_eq!(n, cut, "an unfinished decoder consumes everything");
        let (m, done) = two.decode(&buf[cut..], &mut out_two)?;
        Ok((n + m, done))
    });
    match (whole, split) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b);
            assert_eq!(out_one, out_two);
            assert!(out_one.len() <= a.0);
            if a.1 {
                assert_eq!(one.decode(b"0\r\n\r\n", &mut out_one), Ok((0, true)));
            }
        }
        (Err(_), Err(_)) => {}
        (a, b) => panic!("one piece {a:?}, two pieces {b:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let [cut, flags, body @ ..] = data else {
        return;
    };
    let cut = (*cut as usize * (body.len() + 1)) / 256;
    request(body, cut);
    response(body, cut, flags & 1 == 1);
    chunked(body, cut);
});
