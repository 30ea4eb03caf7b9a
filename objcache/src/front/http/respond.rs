//! Response heads written by the front: for a stored or streaming object (with conditional
//! requests and single byte ranges applied) and for the front's own short replies.

use std::ops::Range;

use super::object::{header_lines, header_value};
use super::policy::{self, RangeSpec};

/// What a request asked of the object, kept beyond the request's bytes because a miss is
/// answered only once the origin's head arrives.
#[derive(Clone, Debug, Default)]
pub struct Ask {
    /// HEAD: the head only.
    pub head_only: bool,
    /// HTTP/1.x minor version of the request.
    pub minor: u8,
    /// The connection stays open after this response.
    pub keep_alive: bool,
    /// Range header.
    pub range: Option<Vec<u8>>,
    /// If-None-Match header.
    pub if_none_match: Option<Vec<u8>>,
    /// If-Modified-Since header.
    pub if_modified_since: Option<Vec<u8>>,
    /// If-Range header: the range applies only while the object is unchanged.
    pub if_range: Option<Vec<u8>>,
}

/// How the response was obtained, for the X-Cache header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// From the store.
    Hit,
    /// From an origin fetch.
    Miss,
    /// From the store, expired: within its stale window.
    Stale,
}

/// Headers a 304 repeats from the stored response (RFC 9110 15.4.5).
const NOT_MODIFIED_KEEPS: [&str; 6] = [
    "etag",
    "last-modified",
    "cache-control",
    "expires",
    "vary",
    "content-location",
];

/// The reason phrase of a status code.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        408 => "Request Timeout",
        416 => "Range Not Satisfiable",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

fn status_line(out: &mut Vec<u8>, status: u16) {
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(status.to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn common_tail(out: &mut Vec<u8>, ask: &Ask, now: i64) {
    out.extend_from_slice(b"Date: ");
    policy::format_http_date(now, out);
    out.extend_from_slice(b"\r\n");
    if !ask.keep_alive {
        out.extend_from_slice(b"Connection: close\r\n");
    } else if ask.minor == 0 {
        out.extend_from_slice(b"Connection: keep-alive\r\n");
    }
}

/// The response an object makes, before the request's validators and range apply.
pub struct Object<'a> {
    /// Status from the origin.
    pub status: u16,
    /// Stored header block.
    pub headers: &'a [u8],
    /// Body length; `None` while a fill of unknown length streams in (the response is
    /// then chunked, and ranges are not applied).
    pub body_len: Option<u64>,
    /// Age header value.
    pub age: u64,
    /// Hit or miss.
    pub source: Source,
}

/// The body a response head announced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Send {
    /// These bytes of the body (empty for HEAD, 304 and 416).
    Bytes(Range<u64>),
    /// The whole body, chunked, as it arrives.
    Chunked,
}

/// Writes the response head for `obj`, applying the request's validators and range.
/// Returns the status sent and the body to send after the head.
pub fn object_head(out: &mut Vec<u8>, ask: &Ask, obj: &Object<'_>, now: i64) -> (u16, Send) {
    let Object {
        status,
        headers,
        body_len,
        age,
        source,
    } = *obj;
    let validators_apply = status == 200;
    if validators_apply
        && policy::not_modified(
            ask.if_none_match.as_deref(),
            ask.if_modified_since.as_deref(),
            header_value(headers, "etag"),
            header_value(headers, "last-modified"),
        )
    {
        status_line(out, 304);
        for (name, value) in header_lines(headers) {
            if NOT_MODIFIED_KEEPS
                .iter()
                .any(|k| name.eq_ignore_ascii_case(k.as_bytes()))
            {
                push_header(out, name, value);
            }
        }
        extra(out, age, source);
        common_tail(out, ask, now);
        out.extend_from_slice(b"\r\n");
        return (304, Send::Bytes(0..0));
    }
    let unchanged = ask.if_range.as_deref().is_none_or(|v| {
        policy::if_range_matches(
            v,
            header_value(headers, "etag"),
            header_value(headers, "last-modified"),
        )
    });
    let spec = match (&ask.range, validators_apply && unchanged, body_len) {
        (Some(r), true, Some(len)) => policy::parse_range(r, len),
        _ => RangeSpec::Full,
    };
    let len = body_len.unwrap_or(0);
    let (code, range) = match spec {
        RangeSpec::Full => (status, 0..len),
        RangeSpec::Partial { start, end } => (206, start..end + 1),
        RangeSpec::Unsatisfiable => (416, 0..0),
    };
    status_line(out, code);
    for (name, value) in header_lines(headers) {
        push_header(out, name, value);
    }
    match spec {
        RangeSpec::Partial { start, end } => {
            out.extend_from_slice(
                format!("Content-Range: bytes {start}-{end}/{len}\r\n").as_bytes(),
            );
        }
        RangeSpec::Unsatisfiable => {
            out.extend_from_slice(format!("Content-Range: bytes */{len}\r\n").as_bytes());
        }
        RangeSpec::Full => {}
    }
    out.extend_from_slice(b"Accept-Ranges: bytes\r\n");
    let chunked = body_len.is_none() && !ask.head_only;
    if chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
    } else if body_len.is_some() {
        out.extend_from_slice(
            format!("Content-Length: {}\r\n", range.end - range.start).as_bytes(),
        );
    }
    extra(out, age, source);
    common_tail(out, ask, now);
    out.extend_from_slice(b"\r\n");
    let send = match (chunked, ask.head_only) {
        (true, _) => Send::Chunked,
        (false, true) => Send::Bytes(0..0),
        (false, false) => Send::Bytes(range),
    };
    (code, send)
}

fn push_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

fn extra(out: &mut Vec<u8>, age: u64, source: Source) {
    out.extend_from_slice(format!("Age: {age}\r\n").as_bytes());
    out.extend_from_slice(match source {
        Source::Hit => b"X-Cache: HIT\r\n",
        Source::Miss => b"X-Cache: MISS\r\n",
        Source::Stale => b"X-Cache: HIT-STALE\r\n",
    });
}

/// Writes a complete short response of the front's own (errors, PURGE, statistics).
pub fn simple(
    out: &mut Vec<u8>,
    ask: &Ask,
    status: u16,
    content_type: &str,
    extra_headers: &str,
    body: &[u8],
    now: i64,
) {
    status_line(out, status);
    out.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
    out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    out.extend_from_slice(extra_headers.as_bytes());
    common_tail(out, ask, now);
    out.extend_from_slice(b"\r\n");
    if !ask.head_only {
        out.extend_from_slice(body);
    }
}

/// A short response with a one-line plain-text body naming the status.
pub fn error(out: &mut Vec<u8>, ask: &Ask, status: u16, now: i64) {
    let body = format!("{status} {}\n", reason(status));
    simple(out, ask, status, "text/plain", "", body.as_bytes(), now);
}

/// [`error`] with `Connection: close`, for a connection the front ends without a request
/// it could read (malformed, too slow, or over the connection cap).
pub fn closing_error(out: &mut Vec<u8>, status: u16, now: i64) {
    let ask = Ask {
        minor: 1,
        ..Ask::default()
    };
    error(out, &ask, status, now);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> Ask {
        Ask {
            minor: 1,
            keep_alive: true,
            ..Ask::default()
        }
    }

    fn text(b: &[u8]) -> String {
        String::from_utf8(b.to_vec()).unwrap()
    }

    const HEADERS: &[u8] = b"Content-Type: text/plain\r\nETag: \"v1\"\r\n";

    fn obj(age: u64, source: Source) -> Object<'static> {
        Object {
            status: 200,
            headers: HEADERS,
            body_len: Some(10),
            age,
            source,
        }
    }

    #[test]
    fn full_range_and_unsatisfiable() {
        let mut out = Vec::new();
        let (code, r) = object_head(&mut out, &ask(), &obj(3, Source::Hit), 0);
        assert_eq!((code, r), (200, Send::Bytes(0..10)));
        let t = text(&out);
        assert!(t.starts_with("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nETag: \"v1\"\r\n"));
        assert!(t.contains("Content-Length: 10\r\nAge: 3\r\nX-Cache: HIT\r\n"));
        assert!(t.ends_with("GMT\r\n\r\n"));

        let mut a = ask();
        a.range = Some(b"bytes=2-4".to_vec());
        out.clear();
        let (code, r) = object_head(&mut out, &a, &obj(0, Source::Miss), 0);
        assert_eq!((code, r), (206, Send::Bytes(2..5)));
        let t = text(&out);
        assert!(t.contains("Content-Range: bytes 2-4/10\r\n"));
        assert!(t.contains("Content-Length: 3\r\n"));

        a.range = Some(b"bytes=20-".to_vec());
        out.clear();
        let (code, r) = object_head(&mut out, &a, &obj(0, Source::Miss), 0);
        assert_eq!((code, r), (416, Send::Bytes(0..0)));
        assert!(text(&out).contains(
            "Content-Range: bytes */10\r\nAccept-Ranges: bytes\r\nContent-Length: 0\r\n"
        ));
    }

    #[test]
    fn if_range_gates_the_range() {
        let mut a = ask();
        a.range = Some(b"bytes=2-4".to_vec());
        a.if_range = Some(b"\"v1\"".to_vec());
        let mut out = Vec::new();
        let (code, r) = object_head(&mut out, &a, &obj(0, Source::Hit), 0);
        assert_eq!((code, r), (206, Send::Bytes(2..5)));
        a.if_range = Some(b"\"v0\"".to_vec());
        out.clear();
        let (code, r) = object_head(&mut out, &a, &obj(0, Source::Hit), 0);
        assert_eq!((code, r), (200, Send::Bytes(0..10)));
        assert!(!text(&out).contains("Content-Range"));
    }

    #[test]
    fn unknown_length_is_chunked_and_ignores_ranges() {
        let mut a = ask();
        a.range = Some(b"bytes=0-1".to_vec());
        let o = Object {
            body_len: None,
            ..obj(0, Source::Miss)
        };
        let mut out = Vec::new();
        let (code, r) = object_head(&mut out, &a, &o, 0);
        assert_eq!((code, r), (200, Send::Chunked));
        let t = text(&out);
        assert!(t.contains("Transfer-Encoding: chunked\r\n"));
        assert!(!t.contains("Content-Length") && !t.contains("Content-Range"));
        a.head_only = true;
        out.clear();
        let (_, r) = object_head(&mut out, &a, &o, 0);
        assert_eq!(r, Send::Bytes(0..0));
        assert!(!text(&out).contains("Transfer-Encoding"));
    }

    #[test]
    fn not_modified_keeps_validators_only() {
        let mut a = ask();
        a.if_none_match = Some(b"\"v1\"".to_vec());
        let mut out = Vec::new();
        let (code, r) = object_head(&mut out, &a, &obj(0, Source::Hit), 0);
        assert_eq!((code, r), (304, Send::Bytes(0..0)));
        let t = text(&out);
        assert!(t.starts_with("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nAge: 0\r\n"));
        assert!(!t.contains("Content-Type"));
        assert!(!t.contains("Content-Length"));
    }

    #[test]
    fn head_and_connection_headers() {
        let mut a = ask();
        a.head_only = true;
        a.minor = 0;
        let mut out = Vec::new();
        let (_, r) = object_head(&mut out, &a, &obj(0, Source::Hit), 0);
        assert_eq!(r, Send::Bytes(0..0));
        assert!(text(&out).contains("Content-Length: 10\r\n"));
        assert!(text(&out).contains("Connection: keep-alive\r\n"));
        a.keep_alive = false;
        out.clear();
        error(&mut out, &a, 502, 0);
        let t = text(&out);
        assert!(t.starts_with("HTTP/1.1 502 Bad Gateway\r\n"));
        assert!(t.contains("Connection: close\r\n"));
        assert!(t.ends_with("\r\n\r\n"), "HEAD gets no body");
    }
}
