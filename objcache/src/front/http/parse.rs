//! HTTP/1.1 message heads (RFC 9112) and chunked bodies, without I/O and without copying:
//! a parsed head is a set of ranges into the caller's buffer.
//!
//! The parsers are stateless: the caller passes everything it has read so far and gets
//! `Ok(None)` until the head is complete. Each call is one linear pass over the complete
//! lines of the head, which is at most [`MAX_HEAD`] bytes. Errors are reported as soon as a
//! complete line proves the message bad, so a client that sends garbage is answered without
//! waiting for the end of its head.
//!
//! What is accepted, and why:
//! - Lines end in CRLF or in a bare LF (as nginx and Varnish accept); a CR anywhere else is
//!   refused, as are other control characters in a field value.
//! - Empty lines before a request line are skipped (RFC 9112 section 2.2).
//! - Framing is strict, because a cache that disagrees with its peer on where a message ends
//!   can be used for request smuggling or response splitting: Content-Length is digits only,
//!   repeated Content-Length must agree, Content-Length with Transfer-Encoding is refused,
//!   and the only transfer coding is `chunked`. Field names followed by whitespace before the
//!   colon and obsolete line folding are refused (RFC 9112 sections 5.1 and 5.2).

use std::ops::Range;

/// The longest head (request or status line, fields and the empty line) accepted; a longer
/// request head is answered with 431.
pub const MAX_HEAD: usize = 64 * 1024;

/// Longest chunk-size line (size, extensions and line end) or trailer section accepted.
const MAX_CHUNK_LINE: usize = 4096;

/// Largest chunk accepted: 1 TiB, far above any object and far below overflow.
const MAX_CHUNK: u64 = 1 << 40;

/// One header field: ranges of its name and of its value (trimmed of optional whitespace)
/// in the buffer the head was parsed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The field name, as sent (compare it case-insensitively).
    pub name: Range<usize>,
    /// The field value without leading and trailing spaces and tabs.
    pub value: Range<usize>,
}

/// The request methods the front tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`.
    Head,
    /// `PURGE`, the cache-invalidation method of Varnish and nginx's cache-purge module.
    Purge,
    /// Any other method (a valid token).
    Other,
}

/// How the body after a head is delimited (RFC 9112 section 6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body at all.
    None,
    /// Exactly this many bytes.
    Length(u64),
    /// Chunked transfer coding, to be read with a [`ChunkedDecoder`].
    Chunked,
    /// Everything until the peer closes the connection (responses only).
    UntilClose,
}

/// Why a head was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Malformed syntax or ambiguous framing (400).
    BadRequest,
    /// The head is longer than [`MAX_HEAD`] (431).
    HeadTooLarge,
    /// A transfer coding other than chunked (501).
    NotImplemented,
    /// An HTTP major version other than 1 (505).
    VersionNotSupported,
}

impl ParseError {
    /// The status code to answer a request refused for this reason.
    pub fn status(self) -> u16 {
        match self {
            ParseError::BadRequest => 400,
            ParseError::HeadTooLarge => 431,
            ParseError::NotImplemented => 501,
            ParseError::VersionNotSupported => 505,
        }
    }
}

/// A parsed request head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHead {
    /// The method.
    pub method: Method,
    /// The request target as sent (see [`request_path`]).
    pub target: Range<usize>,
    /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1 (and for a later 1.x, which is
    /// handled as 1.1, RFC 9110 section 6.2).
    pub minor: u8,
    /// The header fields, in order.
    pub headers: Vec<Header>,
    /// Bytes of the head, skipped empty lines and final empty line included: the body or the
    /// next request starts there.
    pub head_len: usize,
    /// Whether the connection stays open after the response.
    pub keep_alive: bool,
    /// The request body's framing: [`Framing::None`], [`Framing::Length`] or
    /// [`Framing::Chunked`].
    pub body: Framing,
}

/// A parsed response head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status code (100 to 999).
    pub status: u16,
    /// The minor version, as in [`RequestHead::minor`].
    pub minor: u8,
    /// The header fields, in order.
    pub headers: Vec<Header>,
    /// Bytes of the head, final empty line included.
    pub head_len: usize,
    /// Whether the connection can carry another request after this response's body (never
    /// when the body runs until close).
    pub keep_alive: bool,
    /// The body's framing.
    pub body: Framing,
}

impl RequestHead {
    /// The value of the first header field called `name` (ASCII case-insensitive).
    pub fn header<'a>(&self, buf: &'a [u8], name: &str) -> Option<&'a [u8]> {
        find_header(&self.headers, buf, name)
    }
}

impl ResponseHead {
    /// The value of the first header field called `name` (ASCII case-insensitive).
    pub fn header<'a>(&self, buf: &'a [u8], name: &str) -> Option<&'a [u8]> {
        find_header(&self.headers, buf, name)
    }
}

fn find_header<'a>(headers: &[Header], buf: &'a [u8], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|h| buf[h.name.clone()].eq_ignore_ascii_case(name.as_bytes()))
        .map(|h| &buf[h.value.clone()])
}

/// Parses a request head from the start of `buf`.
///
/// `Ok(None)` means the head is not complete yet: read more and call again with the longer
/// buffer. An error means the bytes already read prove the request bad, including a head
/// that has not ended within [`MAX_HEAD`] bytes.
pub fn parse_request(buf: &[u8]) -> Result<Option<RequestHead>, ParseError> {
    let mut lines = Lines::new(buf);
    // Empty lines before the request line (RFC 9112 section 2.2).
    let line = loop {
        match lines.next()? {
            None => return Ok(None),
            Some(l) if l.is_empty() => continue,
            Some(l) => break l,
        }
    };
    let (method, target, minor) = request_line(buf, line)?;
    let Some((headers, head_len)) = fields(buf, &mut lines)? else {
        return Ok(None);
    };
    let f = Semantics::of(buf, &headers, minor)?;
    if f.hosts != 1 && (minor == 1 || f.hosts > 1) {
        return Err(ParseError::BadRequest);
    }
    let body = match (f.length, f.chunked) {
        (Some(_), Some(_)) => return Err(ParseError::BadRequest),
        (None, Some(false)) => return Err(ParseError::NotImplemented),
        (None, Some(true)) => Framing::Chunked,
        (Some(n), None) => Framing::Length(n),
        (None, None) => Framing::None,
    };
    Ok(Some(RequestHead {
        method,
        target,
        minor,
        headers,
        head_len,
        keep_alive: f.keep_alive,
        body,
    }))
}

/// Parses an origin's response head from the start of `buf`; `head_request` says the
/// request was HEAD, so no body follows whatever the fields say. 1xx, 204 and 304 responses
/// have no body either, and a response with neither Content-Length nor chunked coding runs
/// until the origin closes. `Ok(None)` and errors as for [`parse_request`]; any error means
/// the origin cannot be trusted with this connection.
pub fn parse_response(buf: &[u8], head_request: bool) -> Result<Option<ResponseHead>, ParseError> {
    let mut lines = Lines::new(buf);
    let Some(line) = lines.next()? else {
        return Ok(None);
    };
    let (status, minor) = status_line(buf, line)?;
    let Some((headers, head_len)) = fields(buf, &mut lines)? else {
        return Ok(None);
    };
    let f = Semantics::of(buf, &headers, minor)?;
    let body = match (f.length, f.chunked) {
        // Both, or a coding this cache cannot undo: the body cannot be delimited safely.
        (Some(_), Some(_)) | (None, Some(false)) => return Err(ParseError::BadRequest),
        _ if head_request || status < 200 || status == 204 || status == 304 => Framing::None,
        (None, Some(true)) => Framing::Chunked,
        (Some(n), None) => Framing::Length(n),
        (None, None) => Framing::UntilClose,
    };
    Ok(Some(ResponseHead {
        status,
        minor,
        headers,
        head_len,
        keep_alive: f.keep_alive && body != Framing::UntilClose,
        body,
    }))
}

/// The origin-form path and query of a request target. An origin-form target (`/a?b`) is
/// returned as is; an absolute-form one (`http://host:port/a?b`) loses its scheme and
/// authority, since the cache only ever contacts its configured origin, and `http://host`
/// alone is `/`. Asterisk-form, authority-form, an absolute form with an empty host or with a
/// query but no path, and anything else are refused.
pub fn request_path(target: &[u8]) -> Result<&[u8], ParseError> {
    if target.first() == Some(&b'/') {
        return Ok(target);
    }
    let rest = strip_prefix_ignore_case(target, b"http://")
        .or_else(|| strip_prefix_ignore_case(target, b"https://"))
        .ok_or(ParseError::BadRequest)?;
    let end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    match rest.get(end) {
        _ if end == 0 => Err(ParseError::BadRequest),
        None => Ok(b"/"),
        Some(b'/') => Ok(&rest[end..]),
        Some(_) => Err(ParseError::BadRequest),
    }
}

fn strip_prefix_ignore_case<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Iterates over the complete lines at the start of a buffer, without their line ends.
struct Lines<'a> {
    buf: &'a [u8],
    /// Where the next line starts.
    pos: usize,
}

impl<'a> Lines<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Lines { buf, pos: 0 }
    }

    /// The next line's range, `None` when it is not complete yet, or `HeadTooLarge` when it
    /// would end past [`MAX_HEAD`].
    fn next(&mut self) -> Result<Option<Range<usize>>, ParseError> {
        let window = &self.buf[..self.buf.len().min(MAX_HEAD)];
        let Some(lf) = window[self.pos..].iter().position(|&b| b == b'\n') else {
            return if self.buf.len() >= MAX_HEAD {
                Err(ParseError::HeadTooLarge)
            } else {
                Ok(None)
            };
        };
        let start = self.pos;
        let lf = start + lf;
        self.pos = lf + 1;
        let end = if lf > start && self.buf[lf - 1] == b'\r' {
            lf - 1
        } else {
            lf
        };
        Ok(Some(start..end))
    }
}

/// `tchar` of RFC 9110 section 5.6.2: the characters of methods and field names.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Parses `HTTP/1.x`, returning the minor version (a later 1.x counts as 1.1).
fn version(v: &[u8]) -> Result<u8, ParseError> {
    match v {
        [b'H', b'T', b'T', b'P', b'/', major, b'.', minor]
            if major.is_ascii_digit() && minor.is_ascii_digit() =>
        {
            if *major != b'1' {
                Err(ParseError::VersionNotSupported)
            } else {
                Ok((minor - b'0').min(1))
            }
        }
        _ => Err(ParseError::BadRequest),
    }
}

/// `method SP request-target SP HTTP-version`.
fn request_line(buf: &[u8], line: Range<usize>) -> Result<(Method, Range<usize>, u8), ParseError> {
    let l = &buf[line.clone()];
    let sp1 = l
        .iter()
        .position(|&b| b == b' ')
        .ok_or(ParseError::BadRequest)?;
    let sp2 = l
        .iter()
        .rposition(|&b| b == b' ')
        .ok_or(ParseError::BadRequest)?;
    let (m, target, v) = (&l[..sp1], &l[sp1 + 1..sp2.max(sp1 + 1)], &l[sp2 + 1..]);
    if m.is_empty() || !m.iter().all(|&b| is_tchar(b)) {
        return Err(ParseError::BadRequest);
    }
    // Visible ASCII, or bytes above 127 as nginx accepts in paths; no spaces or controls.
    if sp2 <= sp1 || target.is_empty() || target.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(ParseError::BadRequest);
    }
    let minor = version(v)?;
    let method = match m {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        b"PURGE" => Method::Purge,
        _ => Method::Other,
    };
    let start = line.start + sp1 + 1;
    Ok((method, start..start + target.len(), minor))
}

/// `HTTP-version SP status-code SP [reason-phrase]`; the space before an empty reason may be
/// missing (RFC 9112 section 4).
fn status_line(buf: &[u8], line: Range<usize>) -> Result<(u16, u8), ParseError> {
    let l = &buf[line];
    let (v, rest) = l.split_at(l.len().min(8));
    let minor = version(v)?;
    let (code, reason) = match rest {
        [b' ', a, b, c] => ([*a, *b, *c], &[][..]),
        [b' ', a, b, c, b' ', reason @ ..] => ([*a, *b, *c], reason),
        _ => return Err(ParseError::BadRequest),
    };
    if !code.iter().all(u8::is_ascii_digit)
        || code[0] == b'0'
        || !reason.iter().all(|&b| is_field_byte(b))
    {
        return Err(ParseError::BadRequest);
    }
    let status = code.iter().fold(0u16, |n, &d| n * 10 + u16::from(d - b'0'));
    Ok((status, minor))
}

/// A byte allowed in a field value or reason phrase: tab, space, visible ASCII, obs-text.
fn is_field_byte(b: u8) -> bool {
    b == b'\t' || (b >= b' ' && b != 0x7f)
}

/// Parses the field lines after the start line, up to and including the empty line. Returns
/// the fields and the length of the whole head, or `None` when the head is not complete.
fn fields(buf: &[u8], lines: &mut Lines) -> Result<Option<(Vec<Header>, usize)>, ParseError> {
    let mut headers = Vec::new();
    loop {
        let Some(line) = lines.next()? else {
            return Ok(None);
        };
        if line.is_empty() {
            return Ok(Some((headers, lines.pos)));
        }
        headers.push(field(buf, line)?);
    }
}

/// `field-name ":" OWS field-value OWS`.
fn field(buf: &[u8], line: Range<usize>) -> Result<Header, ParseError> {
    let l = &buf[line.clone()];
    // A line starting with whitespace is obsolete folding (or whitespace before the first
    // field); a name must be a token right up to the colon.
    let colon = l
        .iter()
        .position(|&b| !is_tchar(b))
        .ok_or(ParseError::BadRequest)?;
    if colon == 0 || l[colon] != b':' {
        return Err(ParseError::BadRequest);
    }
    let value = &l[colon + 1..];
    if !value.iter().all(|&b| is_field_byte(b)) {
        return Err(ParseError::BadRequest);
    }
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let lead = value.iter().take_while(|b| is_ows(b)).count();
    let trail = value[lead..].iter().rev().take_while(|b| is_ows(b)).count();
    let start = line.start + colon + 1 + lead;
    Ok(Header {
        name: line.start..line.start + colon,
        value: start..line.end - trail,
    })
}

/// The comma-separated elements of a list-valued field, trimmed, empty ones skipped.
fn list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value.split(|&b| b == b',').filter_map(|e| {
        let e = e.trim_ascii();
        (!e.is_empty()).then_some(e)
    })
}

/// What the fields say about framing and persistence.
struct Semantics {
    /// The agreed Content-Length.
    length: Option<u64>,
    /// Transfer-Encoding present: `true` when it is exactly `chunked`.
    chunked: Option<bool>,
    /// Number of Host fields.
    hosts: usize,
    /// Whether the connection persists.
    keep_alive: bool,
}

impl Semantics {
    fn of(buf: &[u8], headers: &[Header], minor: u8) -> Result<Semantics, ParseError> {
        let mut length = None;
        let mut codings = 0usize;
        let mut all_chunked = true;
        let mut hosts = 0;
        let (mut close, mut keep) = (false, false);
        for h in headers {
            let (name, value) = (&buf[h.name.clone()], &buf[h.value.clone()]);
            if name.eq_ignore_ascii_case(b"content-length") {
                let n = digits(value).ok_or(ParseError::BadRequest)?;
                if length.is_some_and(|m| m != n) {
                    return Err(ParseError::BadRequest);
                }
                length = Some(n);
            } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
                if list(value).next().is_none() {
                    return Err(ParseError::BadRequest);
                }
                for coding in list(value) {
                    codings += 1;
                    all_chunked &= coding.eq_ignore_ascii_case(b"chunked");
                }
            } else if name.eq_ignore_ascii_case(b"host") {
                hosts += 1;
            } else if name.eq_ignore_ascii_case(b"connection") {
                for token in list(value) {
                    close |= token.eq_ignore_ascii_case(b"close");
                    keep |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            }
        }
        // An HTTP/1.0 message with Transfer-Encoding has faulty framing (RFC 9112 6.1).
        if codings > 0 && minor == 0 {
            return Err(ParseError::BadRequest);
        }
        Ok(Semantics {
            length,
            chunked: (codings > 0).then_some(codings == 1 && all_chunked),
            hosts,
            keep_alive: !close && (minor == 1 || keep),
        })
    }
}

/// `1*DIGIT` as a u64, `None` when empty, not all digits or too large.
fn digits(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Decodes a chunked body (RFC 9112 section 7.1) incrementally: feed it the bytes after the
/// head as they arrive. Chunk extensions are ignored and trailer fields skipped; the decoder
/// stops right after the final empty line, so the bytes after it belong to the next message.
#[derive(Clone, Debug)]
pub struct ChunkedDecoder {
    state: Chunk,
    /// Bytes of the current chunk-size line or of the trailer section so far.
    line: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunk {
    /// Hex digits of a chunk size; `digits` read so far.
    Size { size: u64, digits: u32 },
    /// After the size: whitespace or extensions up to the line end.
    Ext { size: u64 },
    /// A CR seen at the end of the size line.
    SizeLf { size: u64 },
    /// Chunk data, this many bytes left.
    Data { left: u64 },
    /// After the data: CR LF (or a bare LF) expected.
    DataEnd,
    /// A CR seen after the data.
    DataLf,
    /// At the start of a trailer line (or of the final empty line).
    TrailerStart,
    /// Inside a trailer line.
    Trailer,
    /// A CR seen at the start of a trailer line: the final line end.
    LastLf,
    /// The body is complete.
    Done,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkedDecoder {
    /// A decoder at the start of a chunked body.
    pub fn new() -> Self {
        ChunkedDecoder {
            state: Chunk::Size { size: 0, digits: 0 },
            line: 0,
        }
    }

    /// Decodes from `input`, appending chunk data to `out`. Returns the bytes of `input`
    /// consumed and whether the body is finished; once finished, no more bytes are consumed.
    /// A bad chunk size (not hex, over 2^40, missing), a missing line end after the data or
    /// an over-long size line or trailer section is `Err(BadRequest)`.
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(usize, bool), ParseError> {
        let bad = Err(ParseError::BadRequest);
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            self.state = match self.state {
                Chunk::Done => break,
                Chunk::Data { left } => {
                    let n = left.min((input.len() - i) as u64) as usize;
                    out.extend_from_slice(&input[i..i + n]);
                    i += n;
                    self.state = match left - n as u64 {
                        0 => Chunk::DataEnd,
                        left => Chunk::Data { left },
                    };
                    continue;
                }
                Chunk::Size { size, digits } => {
                    self.count_line()?;
                    match (b as char).to_digit(16) {
                        Some(d) => {
                            let size = size * 16 + u64::from(d);
                            if size > MAX_CHUNK {
                                return bad;
                            }
                            Chunk::Size {
                                size,
                                digits: digits + 1,
                            }
                        }
                        None if digits == 0 => return bad,
                        None => self.after_size(size, b)?,
                    }
                }
                Chunk::Ext { size } => {
                    self.count_line()?;
                    self.after_size(size, b)?
                }
                Chunk::SizeLf { size } => {
                    if b != b'\n' {
                        return bad;
                    }
                    self.end_size_line(size)
                }
                Chunk::DataEnd => match b {
                    b'\r' => Chunk::DataLf,
                    b'\n' => Chunk::Size { size: 0, digits: 0 },
                    _ => return bad,
                },
                Chunk::DataLf if b == b'\n' => Chunk::Size { size: 0, digits: 0 },
                Chunk::DataLf => return bad,
                Chunk::TrailerStart => {
                    self.count_line()?;
                    match b {
                        b'\r' => Chunk::LastLf,
                        b'\n' => Chunk::Done,
                        _ => Chunk::Trailer,
                    }
                }
                Chunk::Trailer => {
                    self.count_line()?;
                    if b == b'\n' {
                        Chunk::TrailerStart
                    } else {
                        Chunk::Trailer
                    }
                }
                Chunk::LastLf if b == b'\n' => Chunk::Done,
                Chunk::LastLf => return bad,
            };
            i += 1;
        }
        Ok((i, self.state == Chunk::Done))
    }

    /// Counts one more byte of a size line or of the trailers.
    fn count_line(&mut self) -> Result<(), ParseError> {
        self.line += 1;
        if self.line > MAX_CHUNK_LINE {
            return Err(ParseError::BadRequest);
        }
        Ok(())
    }

    /// The state after byte `b` that follows the size digits (or an extension byte).
    fn after_size(&mut self, size: u64, b: u8) -> Result<Chunk, ParseError> {
        Ok(match b {
            b'\r' => Chunk::SizeLf { size },
            b'\n' => self.end_size_line(size),
            b'\t' | b' '..=0x7e | 0x80..=0xff => Chunk::Ext { size },
            _ => return Err(ParseError::BadRequest),
        })
    }

    /// The state after a complete size line.
    fn end_size_line(&mut self, size: u64) -> Chunk {
        self.line = 0;
        if size == 0 {
            Chunk::TrailerStart
        } else {
            Chunk::Data { left: size }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn req(s: &str) -> Result<Option<RequestHead>, ParseError> {
        parse_request(s.as_bytes())
    }

    fn ok(s: &str) -> RequestHead {
        req(s).unwrap().unwrap()
    }

    fn resp(s: &str) -> Result<Option<ResponseHead>, ParseError> {
        parse_response(s.as_bytes(), false)
    }

    #[test]
    fn simple_get() {
        let s = "GET /a?b HTTP/1.1\r\nHost: x\r\nX-Y:  v  w \t\r\n\r\nrest";
        let h = ok(s);
        assert_eq!(h.method, Method::Get);
        assert_eq!(&s[h.target.clone()], "/a?b");
        assert_eq!(h.minor, 1);
        assert_eq!(h.head_len, s.len() - 4);
        assert!(h.keep_alive);
        assert_eq!(h.body, Framing::None);
        assert_eq!(h.header(s.as_bytes(), "x-y"), Some(&b"v  w"[..]));
        assert_eq!(h.header(s.as_bytes(), "HOST"), Some(&b"x"[..]));
        assert_eq!(h.header(s.as_bytes(), "missing"), None);
    }

    #[test]
    fn methods() {
        for (m, want) in [
            ("GET", Method::Get),
            ("HEAD", Method::Head),
            ("PURGE", Method::Purge),
            ("get", Method::Other),
            ("POST", Method::Other),
        ] {
            assert_eq!(
                ok(&format!("{m} / HTTP/1.1\r\nHost: a\r\n\r\n")).method,
                want
            );
        }
    }

    #[test]
    fn incomplete_then_complete() {
        let s = "\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n";
        for n in 0..s.len() {
            assert_eq!(req(&s[..n]), Ok(None), "prefix {n}");
        }
        assert_eq!(ok(s).head_len, s.len());
    }

    #[test]
    fn bare_lf_line_ends() {
        let s = "GET / HTTP/1.0\nConnection: Keep-Alive\n\n";
        let h = ok(s);
        assert_eq!(h.head_len, s.len());
        assert_eq!(h.minor, 0);
        assert!(h.keep_alive);
    }

    #[test]
    fn bad_request_lines() {
        for s in [
            "GET\r\n\r\n",
            "GET /\r\n\r\n",
            "GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
            "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
            " GET / HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET /a\x01b HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.10\r\nHost: a\r\n\r\n",
            "GET / HTTX/1.1\r\nHost: a\r\n\r\n",
            "GET / http/1.1\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.1\rHost: a\r\n\r\n",
        ] {
            assert_eq!(req(s).err(), Some(ParseError::BadRequest), "{s:?}");
        }
        // Refused as soon as the bad line is complete.
        assert_eq!(req("BAD\r\n").err(), Some(ParseError::BadRequest));
    }

    #[test]
    fn versions() {
        for v in ["HTTP/2.0", "HTTP/0.9", "HTTP/3.0"] {
            let s = format!("GET / {v}\r\nHost: a\r\n\r\n");
            assert_eq!(req(&s).err(), Some(ParseError::VersionNotSupported), "{v}");
        }
        assert_eq!(ok("GET / HTTP/1.2\r\nHost: a\r\n\r\n").minor, 1);
    }

    #[test]
    fn bad_fields() {
        for f in [
            "Host : a",
            "Host\t: a",
            "Ho st: a",
            "NoColon",
            ": empty-name",
            " folded",
            "\tfolded",
            "X: a\x00b",
            "X: a\rb",
            "X: a\x7f",
        ] {
            let s = format!("GET / HTTP/1.1\r\nHost: a\r\n{f}\r\n\r\n");
            assert_eq!(req(&s).err(), Some(ParseError::BadRequest), "{f:?}");
        }
        // Obsolete folding right after the request line too.
        assert_eq!(
            req("GET / HTTP/1.1\r\n Host: a\r\n\r\n").err(),
            Some(ParseError::BadRequest)
        );
        // obs-text is allowed in values, and empty values.
        let s = "GET / HTTP/1.1\r\nHost: a\r\nX: \u{e9}\r\nY:\r\n\r\n";
        assert_eq!(ok(s).header(s.as_bytes(), "y"), Some(&b""[..]));
    }

    #[test]
    fn host_rules() {
        let bad = Some(ParseError::BadRequest);
        assert_eq!(req("GET / HTTP/1.1\r\n\r\n").err(), bad);
        assert_eq!(
            req("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n").err(),
            bad
        );
        assert_eq!(
            req("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n").err(),
            bad
        );
        assert!(!ok("GET / HTTP/1.0\r\n\r\n").keep_alive);
        assert!(ok("GET / HTTP/1.1\r\nHost:\r\n\r\n").keep_alive);
    }

    #[test]
    fn connection_tokens() {
        assert!(!ok("GET / HTTP/1.1\r\nHost: a\r\nConnection: foo, Close\r\n\r\n").keep_alive);
        assert!(
            !ok("GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n")
                .keep_alive
        );
        assert!(ok("GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\n\r\n").keep_alive);
        assert!(!ok("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n").keep_alive);
    }

    #[test]
    fn request_framing() {
        let h = |f: &str| req(&format!("POST / HTTP/1.1\r\nHost: a\r\n{f}\r\n\r\n"));
        let body = |f: &str| h(f).unwrap().unwrap().body;
        assert_eq!(body("Content-Length: 12"), Framing::Length(12));
        assert_eq!(body("Content-Length: 0"), Framing::Length(0));
        assert_eq!(
            body("Content-Length: 5\r\nContent-Length: 5"),
            Framing::Length(5)
        );
        assert_eq!(body("Transfer-Encoding: chunked"), Framing::Chunked);
        assert_eq!(body("Transfer-Encoding: CHUNKED"), Framing::Chunked);
        let bad = Some(ParseError::BadRequest);
        for f in [
            "Content-Length: 5\r\nContent-Length: 6",
            "Content-Length: 5, 5",
            "Content-Length: +5",
            "Content-Length: 5x",
            "Content-Length: ",
            "Content-Length: 99999999999999999999",
            "Content-Length: 5\r\nTransfer-Encoding: chunked",
            "Transfer-Encoding: chunked\r\nContent-Length: 5",
            "Transfer-Encoding: ",
        ] {
            assert_eq!(h(f).err(), bad, "{f:?}");
        }
        let ni = Some(ParseError::NotImplemented);
        for f in [
            "Transfer-Encoding: gzip",
            "Transfer-Encoding: gzip, chunked",
            "Transfer-Encoding: chunked, chunked",
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
            "Transfer-Encoding: identity",
        ] {
            assert_eq!(h(f).err(), ni, "{f:?}");
        }
        assert_eq!(
            req("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n").err(),
            bad
        );
    }

    #[test]
    fn head_size_limit() {
        let mut s = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
        while s.len() < MAX_HEAD - 20 {
            s.extend_from_slice(b"X-Pad: 0123456789abcdef\r\n");
        }
        let mut over = s.clone();
        while over.len() < MAX_HEAD {
            over.extend_from_slice(b"X-Pad: 0123456789abcdef\r\n");
        }
        assert_eq!(parse_request(&over), Err(ParseError::HeadTooLarge));
        assert_eq!(parse_request(&over[..MAX_HEAD - 1]), Ok(None));
        // A head of exactly MAX_HEAD bytes is accepted, even with a body after it.
        let mut exact = s.clone();
        let pad = MAX_HEAD - exact.len() - b"Z: \r\n\r\n".len();
        exact.extend_from_slice(b"Z: ");
        exact.extend(std::iter::repeat_n(b'z', pad));
        exact.extend_from_slice(b"\r\n\r\n");
        assert_eq!(exact.len(), MAX_HEAD);
        exact.extend_from_slice(b"body");
        assert_eq!(parse_request(&exact).unwrap().unwrap().head_len, MAX_HEAD);
        // One byte more is too large.
        let mut big = exact[..MAX_HEAD - 4].to_vec();
        big.extend_from_slice(b"z\r\n\r\n");
        assert_eq!(parse_request(&big), Err(ParseError::HeadTooLarge));
        // A single endless line.
        assert_eq!(
            parse_request(&vec![b'A'; MAX_HEAD]),
            Err(ParseError::HeadTooLarge)
        );
        assert_eq!(ParseError::HeadTooLarge.status(), 431);
    }

    #[test]
    fn statuses() {
        use ParseError::*;
        let codes: Vec<u16> = [
            BadRequest,
            HeadTooLarge,
            NotImplemented,
            VersionNotSupported,
        ]
        .iter()
        .map(|e| e.status())
        .collect();
        assert_eq!(codes, [400, 431, 501, 505]);
    }

    #[test]
    fn responses() {
        let s = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nETag: \"x\"\r\n\r\nabc";
        let h = resp(s).unwrap().unwrap();
        assert_eq!(
            (h.status, h.minor, h.body, h.keep_alive),
            (200, 1, Framing::Length(3), true)
        );
        assert_eq!(h.head_len, s.len() - 3);
        assert_eq!(h.header(s.as_bytes(), "etag"), Some(&b"\"x\""[..]));

        let body = |s: &str, head: bool| parse_response(s.as_bytes(), head).unwrap().unwrap().body;
        assert_eq!(
            body(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                false
            ),
            Framing::Chunked
        );
        assert_eq!(
            body("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", true),
            Framing::None
        );
        assert_eq!(
            body(
                "HTTP/1.1 304 Not Modified\r\nContent-Length: 3\r\n\r\n",
                false
            ),
            Framing::None
        );
        assert_eq!(
            body("HTTP/1.1 204 No Content\r\n\r\n", false),
            Framing::None
        );
        assert_eq!(body("HTTP/1.1 100 Continue\r\n\r\n", false), Framing::None);
        let h = resp("HTTP/1.1 200 OK\r\n\r\n").unwrap().unwrap();
        assert_eq!((h.body, h.keep_alive), (Framing::UntilClose, false));
        // The reason phrase may be empty, even without its space.
        assert_eq!(resp("HTTP/1.1 404\r\n\r\n").unwrap().unwrap().status, 404);
        assert_eq!(resp("HTTP/1.1 404 \r\n\r\n").unwrap().unwrap().status, 404);
        // HTTP/1.0 closes unless asked.
        let h = resp("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!h.keep_alive);
        let h = resp("HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n");
        assert!(h.unwrap().unwrap().keep_alive);
        let h = resp("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assert!(!h.unwrap().unwrap().keep_alive);
    }

    #[test]
    fn bad_responses() {
        for s in [
            "HTTP/1.1 20 OK\r\n\r\n",
            "HTTP/1.1 2000 OK\r\n\r\n",
            "HTTP/1.1 099 OK\r\n\r\n",
            "HTTP/1.1 abc OK\r\n\r\n",
            "HTTP/1.1  200 OK\r\n\r\n",
            "HTTP/1.1\r\n\r\n",
            "HTTP/1.1 200 O\x01K\r\n\r\n",
            "ICY 200 OK\r\n\r\n",
            "\r\nHTTP/1.1 200 OK\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert_eq!(resp(s).err(), Some(ParseError::BadRequest), "{s:?}");
        }
        assert_eq!(
            resp("HTTP/2.0 200 OK\r\n\r\n").err(),
            Some(ParseError::VersionNotSupported)
        );
        assert_eq!(resp("HTTP/1.1 200 OK\r\n"), Ok(None));
    }

    #[test]
    fn paths() {
        let p = |t: &str| {
            request_path(t.as_bytes()).map(|p| std::str::from_utf8(p).unwrap().to_string())
        };
        assert_eq!(p("/a?b").unwrap(), "/a?b");
        assert_eq!(p("http://evil.example:81/a?b").unwrap(), "/a?b");
        assert_eq!(p("HTTPS://h/x").unwrap(), "/x");
        assert_eq!(p("http://host").unwrap(), "/");
        for t in [
            "*",
            "host:80",
            "http://",
            "http:///a",
            "http://h?q",
            "ftp://h/a",
            "a/b",
            "",
        ] {
            assert_eq!(p(t), Err(ParseError::BadRequest), "{t:?}");
        }
    }

    fn decode_all(input: &[u8]) -> Result<(Vec<u8>, usize, bool), ParseError> {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        let (n, done) = d.decode(input, &mut out)?;
        Ok((out, n, done))
    }

    #[test]
    fn chunked() {
        let body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        let (out, n, done) = decode_all(body).unwrap();
        assert_eq!(out, b"hello world");
        assert!(done);
        assert_eq!(n, body.len() - 4);
        // Bare LFs, upper-case hex, whitespace before an extension.
        let (out, _, done) = decode_all(b"A \n0123456789\n0\n\n").unwrap();
        assert_eq!((out.as_slice(), done), (&b"0123456789"[..], true));
        // Not finished yet.
        assert_eq!(
            decode_all(b"5\r\nhel").unwrap(),
            (b"hel".to_vec(), 6, false)
        );
        assert_eq!(decode_all(b"0\r\n").unwrap(), (vec![], 3, false));
    }

    #[test]
    fn bad_chunks() {
        for s in [
            &b"x\r\n"[..],
            b"\r\n",
            b";a\r\n",
            b"-1\r\n",
            b"10000000001\r\n",
            b"ffffffffffffffffff\r\n",
            b"5\r\nhelloX",
            b"5\r\nhello\rX",
            b"5\rX",
            b"5\x00\r\n",
            b"0\r\n\rX",
        ] {
            assert_eq!(decode_all(s), Err(ParseError::BadRequest), "{s:?}");
        }
        // 2^40 itself is accepted.
        assert!(decode_all(b"10000000000\r\n").is_ok());
        // An endless extension or trailer section is refused.
        let mut long = b"1;".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_CHUNK_LINE));
        assert_eq!(decode_all(&long), Err(ParseError::BadRequest));
    }

    /// Encodes `chunks` with the given extensions and trailers.
    fn encode(chunks: &[Vec<u8>], trailer: bool) -> Vec<u8> {
        let mut v = Vec::new();
        for c in chunks.iter().filter(|c| !c.is_empty()) {
            v.extend_from_slice(format!("{:x};e=v\r\n", c.len()).as_bytes());
            v.extend_from_slice(c);
            v.extend_from_slice(b"\r\n");
        }
        v.extend_from_slice(b"0\r\n");
        if trailer {
            v.extend_from_slice(b"T: 1\r\n");
        }
        v.extend_from_slice(b"\r\n");
        v
    }

    proptest! {
        #[test]
        fn chunked_split_anywhere(
            chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..6),
            trailer in any::<bool>(),
            cuts in prop::collection::vec(0usize..400, 0..8),
        ) {
            let mut wire = encode(&chunks, trailer);
            let len = wire.len();
            wire.extend_from_slice(b"GET");
            let mut d = ChunkedDecoder::new();
            let mut out = Vec::new();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (wire.len() + 1)).collect();
            cuts.push(wire.len());
            cuts.sort_unstable();
            let (mut at, mut done) = (0, false);
            for c in cuts {
                let c = c.max(at);
                let (n, fin) = d.decode(&wire[at..c], &mut out).unwrap();
                at += n;
                done = fin;
                if fin {
                    break;
                }
                prop_assert_eq!(at, c);
            }
            prop_assert!(done);
            prop_assert_eq!(at, len);
            prop_assert_eq!(out, chunks.concat());
        }

        #[test]
        fn request_prefixes_are_incomplete(
            extra in prop::collection::vec(("[A-Za-z-]{1,12}", "[ -~]{0,20}"), 0..6),
            lf_only in any::<bool>(),
        ) {
            let eol = if lf_only { "\n" } else { "\r\n" };
            let mut s = format!("GET /p HTTP/1.1{eol}Host: h{eol}");
            for (n, v) in &extra {
                s.push_str(&format!("X-{n}: {v}{eol}"));
            }
            s.push_str(eol);
            let h = parse_request(s.as_bytes()).unwrap().unwrap();
            prop_assert_eq!(h.head_len, s.len());
            prop_assert_eq!(h.headers.len(), extra.len() + 1);
            for (h, (_, v)) in h.headers[1..].iter().zip(&extra) {
                prop_assert_eq!(&s.as_bytes()[h.value.clone()], v.trim().as_bytes());
            }
            for n in 0..s.len() {
                prop_assert_eq!(parse_request(&s.as_bytes()[..n]), Ok(None));
            }
        }
    }
}
