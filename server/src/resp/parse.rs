//! Incremental, zero-copy parser for client requests: RESP multibulk arrays and inline commands.
//!
//! The parser never copies argument bytes: it records each argument as a byte range of the
//! connection's read buffer. A request that arrives in pieces is resumed where the previous
//! call stopped (the state lives in [`RequestParser`]), so a 500 MB bulk or a command with a
//! million arguments is scanned once, not once per read.

use std::ops::{ControlFlow, Range};

/// Longest inline request, and longest `*N` / `$N` header line, before the client is refused.
pub const MAX_INLINE: usize = 64 * 1024;
/// Largest argument count and bulk length a client may send before AUTH (as Redis).
const UNAUTH_MAX_ARGS: i64 = 10;
/// An argument at least this long is read into a buffer sized for it (Redis's
/// PROTO_MBULK_BIG_ARG).
pub const BIG_ARG: usize = 32 * 1024;
const UNAUTH_MAX_BULK: i64 = 16384;
/// Argument ranges a connection keeps room for between requests (16 bytes each).
const KEPT_ARGS: usize = 1024;

/// A request that can never become valid: the connection gets `-ERR Protocol error: ...` and closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub &'static str);

/// What one call to [`RequestParser::parse`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A whole request; its arguments are in [`RequestParser::args`]. An empty argument
    /// list (`*0`, a blank inline line) means "nothing to run".
    Request {
        /// The buffer offset just past the request.
        end: usize,
    },
    /// More bytes are needed.
    Incomplete,
}

/// Limits that depend on the server configuration and the client's state.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// proto-max-bulk-len (at least 1 MiB, as the configuration allows: a length of two
    /// digits is never checked against it).
    pub max_bulk: i64,
    /// Whether the client has authenticated (or no password is set).
    pub authenticated: bool,
}

/// Resumable parser state for one connection.
#[derive(Debug, Default)]
pub struct RequestParser {
    args: Vec<Range<usize>>,
    /// Arguments of the current multibulk still to read; 0 when between requests.
    remaining: usize,
    /// Where scanning resumes.
    pos: usize,
    /// Inline argument bytes (unquoted copies), used only for inline requests.
    inline: Vec<Vec<u8>>,
    is_inline: bool,
}

impl RequestParser {
    /// The argument ranges of the last complete multibulk request.
    pub fn args(&self) -> &[Range<usize>] {
        &self.args
    }

    /// The arguments of the last complete inline request (owned: quotes were resolved).
    pub fn inline_args(&self) -> Option<&[Vec<u8>]> {
        self.is_inline.then_some(self.inline.as_slice())
    }

    /// For a multibulk request still arriving in `buf`: where its unparsed bytes start as
    /// Redis counts its query buffer (past the header of the argument being received,
    /// once that header is whole) and the bytes of its arguments already complete. None
    /// between requests.
    pub fn unfinished(&self, buf: &[u8]) -> Option<(usize, usize)> {
        if self.remaining == 0 || self.is_inline {
            return None;
        }
        let argv = self.args.iter().map(|r| r.len()).sum();
        let from = match self.pending_header(buf) {
            Ok(Some((_, data))) => data,
            _ => self.pos,
        };
        Some((from.min(buf.len()), argv))
    }

    /// The header of the argument being received, if it has arrived (nothing when no byte
    /// of it has).
    fn pending_header(&self, buf: &[u8]) -> Result<Option<(Option<i64>, usize)>, ProtocolError> {
        match self.pos < buf.len() {
            true => read_header(buf, self.pos, ""),
            false => Ok(None),
        }
    }

    /// The end in `buf` of an argument of at least [`BIG_ARG`] bytes being received (its
    /// CRLF included), so the owner can size the buffer for it.
    pub fn big_arg_end(&self, buf: &[u8]) -> Option<usize> {
        if self.remaining == 0 || self.is_inline {
            return None;
        }
        match self.pending_header(buf) {
            Ok(Some((Some(len), data))) if len >= BIG_ARG as i64 => Some(data + len as usize + 2),
            _ => None,
        }
    }

    /// Moves the resume point after the owner discarded the first `n` bytes of the buffer.
    pub fn shift(&mut self, n: usize) {
        self.pos -= n;
        if self.remaining == 0 {
            // The last request is complete and was run: its ranges are no longer needed.
            self.clear_args();
            return;
        }
        for r in &mut self.args {
            r.start -= n;
            r.end -= n;
        }
    }

    /// Forgets the last request's argument ranges. A vector grown past [`KEPT_ARGS`] by a
    /// request of many arguments is released, as Redis frees each command's argv: a
    /// connection that once sent `SADD key` with 100,000 members would otherwise keep
    /// 2 MiB of ranges for its whole life, counted in used_memory and in no client's.
    fn clear_args(&mut self) {
        if self.args.capacity() > KEPT_ARGS {
            self.args = Vec::new();
        } else {
            self.args.clear();
        }
    }

    /// Scans `buf` from where the last call stopped (the start of an unfinished request, or
    /// `start` when the previous request was complete).
    pub fn parse(
        &mut self,
        buf: &[u8],
        start: usize,
        limits: Limits,
    ) -> Result<Parsed, ProtocolError> {
        if self.remaining == 0 {
            self.clear_args();
            self.is_inline = false;
            self.pos = start;
            let count = match short_header(buf, start, b'*') {
                Some((count, next)) if limits.authenticated || count as i64 <= UNAUTH_MAX_ARGS => {
                    self.pos = next;
                    count
                }
                _ => match self.multibulk_header(buf, limits)? {
                    ControlFlow::Continue(count) => count,
                    ControlFlow::Break(parsed) => return Ok(parsed),
                },
            };
            self.remaining = count;
            self.args.reserve(count.min(1024));
        }
        let (mut pos, mut remaining) = (self.pos, self.remaining);
        while remaining > 0 {
            let header = match short_header(buf, pos, b'$') {
                None => bulk_header(buf, pos, limits)?,
                short => short,
            };
            let Some((len, data)) = header.filter(|&(len, data)| data + len + 2 <= buf.len())
            else {
                break;
            };
            self.args.push(data..data + len);
            pos = data + len + 2;
            remaining -= 1;
        }
        self.pos = pos;
        self.remaining = remaining;
        Ok(match remaining {
            0 => Parsed::Request { end: pos },
            _ => Parsed::Incomplete,
        })
    }

    /// The `*N` header (or inline request) at `self.pos`, of any other form than
    /// [`short_header`]'s: `Continue` with the argument count, or `Break` with what the call
    /// found (an incomplete line, an empty request, a whole inline request).
    fn multibulk_header(
        &mut self,
        buf: &[u8],
        limits: Limits,
    ) -> Result<ControlFlow<Parsed, usize>, ProtocolError> {
        if self.pos >= buf.len() {
            return Ok(ControlFlow::Break(Parsed::Incomplete));
        }
        if buf[self.pos] != b'*' {
            return self.parse_inline(buf).map(ControlFlow::Break);
        }
        let Some((count, next)) =
            read_header(buf, self.pos, "Protocol error: too big mbulk count string")?
        else {
            return Ok(ControlFlow::Break(Parsed::Incomplete));
        };
        let count = count.ok_or(ProtocolError("Protocol error: invalid multibulk length"))?;
        if count > i32::MAX as i64 {
            return Err(ProtocolError("Protocol error: invalid multibulk length"));
        }
        if !limits.authenticated && count > UNAUTH_MAX_ARGS {
            return Err(ProtocolError(
                "Protocol error: unauthenticated multibulk length",
            ));
        }
        self.pos = next;
        if count <= 0 {
            return Ok(ControlFlow::Break(Parsed::Request { end: next }));
        }
        Ok(ControlFlow::Continue(count as usize))
    }

    fn parse_inline(&mut self, buf: &[u8]) -> Result<Parsed, ProtocolError> {
        let rest = &buf[self.pos..];
        let Some(nl) = memchr(b'\n', rest) else {
            if rest.len() > MAX_INLINE {
                return Err(ProtocolError("Protocol error: too big inline request"));
            }
            return Ok(Parsed::Incomplete);
        };
        let mut line = &rest[..nl];
        if line.last() == Some(&b'\r') {
            line = &line[..line.len() - 1];
        }
        self.inline = split_args(line).ok_or(ProtocolError(
            "Protocol error: unbalanced quotes in request",
        ))?;
        self.is_inline = true;
        self.pos += nl + 1;
        Ok(Parsed::Request { end: self.pos })
    }
}

/// The error Redis gives when a multibulk element does not start with `$`.
fn expected_dollar(got: u8) -> &'static str {
    // One static string per byte value keeps the error allocation-free.
    static MESSAGES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    MESSAGES.get_or_init(|| {
        (0..=255u8)
            .map(|b| {
                let s = format!("Protocol error: expected '$', got '{}'", b as char);
                &*Box::leak(s.into_boxed_str())
            })
            .collect()
    })[got as usize]
}

/// The number of a whole header `<kind>N\r\n` at `at` of one or two digits and no leading
/// zero (the usual `*3`, `$5`, `$20`) and where the line ends: read without a digit loop,
/// and never past a bulk length limit (proto-max-bulk-len is at least 1 MiB, a client
/// may send 16 KiB before AUTH). None for any other line, or when the line (and for two
/// digits the byte after it) has not all arrived.
#[inline(always)]
fn short_header(buf: &[u8], at: usize, kind: u8) -> Option<(usize, usize)> {
    let line = buf.get(at..at + 4)?;
    let first = line[1].wrapping_sub(b'0');
    if line[0] != kind || first > 9 {
        return None;
    }
    if line[2] == b'\r' {
        return Some((usize::from(first), at + 4));
    }
    let second = line[2].wrapping_sub(b'0');
    if first == 0 || second > 9 || line[3] != b'\r' || buf.len() <= at + 4 {
        return None;
    }
    Some((usize::from(first * 10 + second), at + 5))
}

/// The `$N` header at `at` of any other form than [`short_header`]'s, checked against the
/// limits: its length and where its data starts, None while the line is incomplete.
#[inline(always)]
fn bulk_header(
    buf: &[u8],
    at: usize,
    limits: Limits,
) -> Result<Option<(usize, usize)>, ProtocolError> {
    let Some(&first) = buf.get(at) else {
        return Ok(None);
    };
    if first != b'$' {
        return Err(ProtocolError(expected_dollar(first)));
    }
    let Some((len, next)) = read_header(buf, at, "Protocol error: too big bulk count string")?
    else {
        return Ok(None);
    };
    let len = len.ok_or(ProtocolError("Protocol error: invalid bulk length"))?;
    if len < 0 || len > limits.max_bulk {
        return Err(ProtocolError("Protocol error: invalid bulk length"));
    }
    if !limits.authenticated && len > UNAUTH_MAX_BULK {
        return Err(ProtocolError("Protocol error: unauthenticated bulk length"));
    }
    Ok(Some((len as usize, next)))
}

/// Digits (and the `\r`) a header's one-pass read looks at: past it the number could
/// overflow, and the general path reads it.
const SHORT_DIGITS: usize = 18;

/// Reads a `*N\r\n` or `$N\r\n` header at `at`. Returns `None` when the line is incomplete,
/// `Some((None, _))` when the number does not parse. The usual header, a short number with
/// no leading zero ("$3\r\n", "*12\r\n"), is read here in one pass; anything else (and a
/// line still arriving) takes [`read_header_slow`].
#[inline(always)]
fn read_header(
    buf: &[u8],
    at: usize,
    too_big: &'static str,
) -> Result<Option<(Option<i64>, usize)>, ProtocolError> {
    let rest = &buf[at + 1..];
    if let Some(&first @ b'1'..=b'9') = rest.first() {
        let mut v = u64::from(first - b'0');
        let mut i = 1;
        let digits_end = rest.len().min(SHORT_DIGITS);
        while i < digits_end {
            let d = rest[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v * 10 + u64::from(d);
            i += 1;
        }
        if i < digits_end && rest[i] == b'\r' && i + 1 < rest.len() {
            return Ok(Some((Some(v as i64), at + 1 + i + 2)));
        }
    }
    read_header_slow(rest, at, too_big)
}

/// [`read_header`] of any other line: found by its `\r`, its number read as Redis's
/// string2ll reads it.
#[inline(never)]
fn read_header_slow(
    rest: &[u8],
    at: usize,
    too_big: &'static str,
) -> Result<Option<(Option<i64>, usize)>, ProtocolError> {
    let Some(cr) = memchr(b'\r', rest) else {
        if rest.len() > MAX_INLINE {
            return Err(ProtocolError(too_big));
        }
        return Ok(None);
    };
    if cr + 1 >= rest.len() {
        return Ok(None);
    }
    let number = crate::numbers::parse_i64(&rest[..cr]);
    Ok(Some((number, at + 1 + cr + 2)))
}

/// Position of the first `needle` in `hay`.
pub fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

/// Splits an inline request as redis-cli and Redis do (sdssplitargs): whitespace separates
/// arguments; "double quotes" understand \n \r \t \b \a \\ \" and \xHH; 'single quotes'
/// understand only \'. A closing quote must be followed by a space or the end.
/// Returns `None` for unbalanced quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= line.len() {
            return Some(args);
        }
        let mut current = Vec::new();
        let mut in_double = false;
        let mut in_single = false;
        loop {
            if in_double {
                let c = *line.get(i)?;
                if c == b'\\'
                    && i + 3 < line.len()
                    && line[i + 1] == b'x'
                    && hex(line[i + 2]).is_some()
                    && hex(line[i + 3]).is_some()
                {
                    current.push(hex(line[i + 2])? * 16 + hex(line[i + 3])?);
                    i += 3;
                } else if c == b'\\' && i + 1 < line.len() {
                    i += 1;
                    current.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                } else if c == b'"' {
                    if i + 1 < line.len() && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    current.push(c);
                }
            } else if in_single {
                let c = *line.get(i)?;
                if c == b'\\' && i + 1 < line.len() && line[i + 1] == b'\'' {
                    current.push(b'\'');
                    i += 1;
                } else if c == b'\'' {
                    if i + 1 < line.len() && !line[i + 1].is_ascii_whitespace() {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    current.push(c);
                }
            } else {
                match line.get(i) {
                    None => break,
                    Some(c) if c.is_ascii_whitespace() => break,
                    Some(b'"') => in_double = true,
                    Some(b'\'') => in_single = true,
                    Some(&c) => current.push(c),
                }
            }
            i += 1;
        }
        args.push(current);
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: Limits = Limits {
        max_bulk: 512 * 1024 * 1024,
        authenticated: true,
    };

    fn args_of(p: &RequestParser, buf: &[u8]) -> Vec<Vec<u8>> {
        match p.inline_args() {
            Some(a) => a.to_vec(),
            None => p.args().iter().map(|r| buf[r.clone()].to_vec()).collect(),
        }
    }

    #[test]
    fn parses_pipelined_multibulk() {
        let buf = b"*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n*1\r\n$4\r\nPING\r\n";
        let mut p = RequestParser::default();
        let Parsed::Request { end } = p.parse(buf, 0, OPEN).unwrap() else {
            panic!()
        };
        assert_eq!(args_of(&p, buf), vec![b"ECHO".to_vec(), b"hi".to_vec()]);
        assert_eq!(
            p.parse(buf, end, OPEN).unwrap(),
            Parsed::Request { end: buf.len() }
        );
        assert_eq!(args_of(&p, buf), vec![b"PING".to_vec()]);
        assert_eq!(p.parse(buf, buf.len(), OPEN).unwrap(), Parsed::Incomplete);
    }

    #[test]
    fn a_request_of_many_arguments_leaves_no_room_behind() {
        let mut buf = b"*5000\r\n".to_vec();
        for _ in 0..5000 {
            buf.extend_from_slice(b"$1\r\nx\r\n");
        }
        let mut p = RequestParser::default();
        let Parsed::Request { end } = p.parse(&buf, 0, OPEN).unwrap() else {
            panic!()
        };
        assert_eq!(p.args().len(), 5000);
        buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        assert!(matches!(
            p.parse(&buf, end, OPEN),
            Ok(Parsed::Request { .. })
        ));
        assert!(p.args.capacity() <= KEPT_ARGS, "{}", p.args.capacity());
        // Small requests keep their room.
        let capacity = p.args.capacity();
        p.shift(0);
        assert_eq!(p.args.capacity(), capacity);
    }

    #[test]
    fn unfinished_request_splits_into_argv_and_query_buffer() {
        let mut p = RequestParser::default();
        assert_eq!(p.unfinished(b""), None);
        // The header of the argument being received is whole: the query buffer starts
        // at its data.
        let buf = b"*3\r\n$3\r\nSET\r\n$5\r\nva";
        assert_eq!(p.parse(buf, 0, OPEN).unwrap(), Parsed::Incomplete);
        assert_eq!(p.unfinished(buf), Some((buf.len() - 2, 3)));
        // Half a header stays in the query buffer.
        let buf = b"*3\r\n$3\r\nSET\r\n$5";
        let mut p = RequestParser::default();
        assert_eq!(p.parse(buf, 0, OPEN).unwrap(), Parsed::Incomplete);
        assert_eq!(p.unfinished(buf), Some((buf.len() - 2, 3)));
        assert_eq!(p.big_arg_end(buf), None);
        // The request stops right after a whole argument: no header yet.
        let buf = b"*3\r\n$3\r\nSET\r\n";
        let mut p = RequestParser::default();
        assert_eq!(p.parse(buf, 0, OPEN).unwrap(), Parsed::Incomplete);
        assert_eq!(p.unfinished(buf), Some((buf.len(), 3)));
        assert_eq!(p.big_arg_end(buf), None);
        let buf = b"*1\r\n$4\r\nPING\r\n";
        let mut p = RequestParser::default();
        assert!(matches!(p.parse(buf, 0, OPEN), Ok(Parsed::Request { .. })));
        assert_eq!(p.unfinished(buf), None);
        let buf = b"*2\r\n$3\r\nSET\r\n$40000\r\nvv";
        let mut p = RequestParser::default();
        assert_eq!(p.parse(buf, 0, OPEN).unwrap(), Parsed::Incomplete);
        assert_eq!(p.big_arg_end(buf), Some(buf.len() - 2 + 40002));
    }

    #[test]
    fn resumes_across_every_split_point() {
        let whole = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n";
        for cut in 0..whole.len() {
            let mut p = RequestParser::default();
            assert_eq!(
                p.parse(&whole[..cut], 0, OPEN).unwrap(),
                Parsed::Incomplete,
                "cut {cut}"
            );
            assert_eq!(
                p.parse(whole, 0, OPEN).unwrap(),
                Parsed::Request { end: whole.len() }
            );
            assert_eq!(args_of(&p, whole).len(), 3);
        }
    }

    #[test]
    fn inline_and_quotes() {
        let buf = b"set \"a b\" 'c\\'d' \"\\x41\\n\"\r\n";
        let mut p = RequestParser::default();
        p.parse(buf, 0, OPEN).unwrap();
        assert_eq!(
            args_of(&p, buf),
            vec![
                b"set".to_vec(),
                b"a b".to_vec(),
                b"c'd".to_vec(),
                b"A\n".to_vec()
            ]
        );
        assert_eq!(split_args(b"\"unbalanced"), None);
        assert_eq!(split_args(b"\"a\"b"), None);
        assert_eq!(split_args(b"   "), Some(vec![]));
    }

    #[test]
    fn headers_read_in_one_pass_match_the_general_reading() {
        let cases: [&[u8]; 9] = [
            b"$3\r\n",
            b"$12\r\n",
            b"$0\r\n",
            b"$007\r\n",
            b"$+7\r\n",
            b"$7 \r\n",
            b"$12345678901234567\r\n",
            b"$123456789012345678901\r\n",
            b"$99999999999999999999\r\n",
        ];
        for case in cases {
            let cr = memchr(b'\r', case).expect("a line");
            let general = crate::numbers::parse_i64(&case[1..cr]);
            assert_eq!(
                read_header(case, 0, "too big"),
                Ok(Some((general, case.len()))),
                "{}",
                String::from_utf8_lossy(case)
            );
        }
        assert_eq!(read_header(b"$12\r", 0, "too big"), Ok(None), "no \\n yet");
        assert_eq!(read_header(b"$12", 0, "too big"), Ok(None));
    }

    #[test]
    fn short_headers_match_the_general_reading() {
        for kind in [b'*', b'$'] {
            for n in 0..=99 {
                let line = format!("{}{n}\r\n", kind as char).into_bytes();
                let general = read_header(&line, 0, "too big").unwrap().unwrap();
                let short = short_header(&line, 0, kind).expect("short");
                assert_eq!((Some(short.0 as i64), short.1), general);
            }
        }
        let others: [&[u8]; 9] = [
            b"$123\r\n",
            b"$07\r\n",
            b"$1\n\r\n",
            b"$12\r",
            b"$12\n\r\n",
            b"*1\r\n",
            b"$x\r\n",
            b"$+1\r\n",
            b"$",
        ];
        for line in others {
            assert_eq!(short_header(line, 0, b'$'), None, "{line:?}");
        }
        // Every short length, before AUTH too, and requests of up to 10 arguments before
        // AUTH (11 are refused), 99 after.
        let closed = Limits {
            authenticated: false,
            ..OPEN
        };
        let request = |count: usize, n: usize| {
            let mut buf = format!("*{count}\r\n").into_bytes();
            for _ in 0..count {
                buf.extend_from_slice(format!("${n}\r\n").as_bytes());
                buf.extend_from_slice(&vec![b'a'; n]);
                buf.extend_from_slice(b"\r\n");
            }
            buf
        };
        for (count, limits) in [(10, closed), (99, OPEN)] {
            for n in 0..=99 {
                let buf = request(count, n);
                let mut p = RequestParser::default();
                assert_eq!(
                    p.parse(&buf, 0, limits).unwrap(),
                    Parsed::Request { end: buf.len() }
                );
                assert_eq!(args_of(&p, &buf), vec![vec![b'a'; n]; count]);
            }
        }
        let mut p = RequestParser::default();
        assert_eq!(
            p.parse(&request(11, 1), 0, closed),
            Err(ProtocolError(
                "Protocol error: unauthenticated multibulk length"
            ))
        );
    }

    #[test]
    fn protocol_errors() {
        let mut p = RequestParser::default();
        assert_eq!(
            p.parse(b"*x\r\n", 0, OPEN),
            Err(ProtocolError("Protocol error: invalid multibulk length"))
        );
        let mut p = RequestParser::default();
        assert_eq!(
            p.parse(b"*1\r\n+OK\r\n", 0, OPEN),
            Err(ProtocolError("Protocol error: expected '$', got '+'"))
        );
        let mut p = RequestParser::default();
        assert_eq!(
            p.parse(b"*1\r\n$-5\r\n", 0, OPEN),
            Err(ProtocolError("Protocol error: invalid bulk length"))
        );
        let mut p = RequestParser::default();
        let closed = Limits {
            authenticated: false,
            ..OPEN
        };
        assert_eq!(
            p.parse(b"*11\r\n", 0, closed),
            Err(ProtocolError(
                "Protocol error: unauthenticated multibulk length"
            ))
        );
        let mut p = RequestParser::default();
        let long = vec![b'a'; MAX_INLINE + 2];
        assert_eq!(
            p.parse(&long, 0, OPEN),
            Err(ProtocolError("Protocol error: too big inline request"))
        );
    }

    #[test]
    fn empty_requests_are_skipped() {
        let mut p = RequestParser::default();
        assert_eq!(
            p.parse(b"*0\r\n", 0, OPEN).unwrap(),
            Parsed::Request { end: 4 }
        );
        assert!(p.args().is_empty());
        assert_eq!(
            p.parse(b"\r\n", 0, OPEN).unwrap(),
            Parsed::Request { end: 2 }
        );
        assert_eq!(p.inline_args().unwrap().len(), 0);
    }
}
