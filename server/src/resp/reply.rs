//! Reply encoding for RESP2 and RESP3 into a connection's write buffer.
//!
//! Commands describe replies in RESP3 terms (map, set, double, null, ...); the writer
//! lowers them to RESP2 when the client has not said HELLO 3, as Redis does: maps become
//! flat arrays, sets arrays, doubles bulk strings, nulls `$-1` or `*-1`.

use crate::numbers::format_double;

/// Writes replies for one client into a byte buffer.
pub struct ReplyWriter<'a> {
    out: &'a mut Vec<u8>,
    resp3: bool,
}

impl<'a> ReplyWriter<'a> {
    /// A writer appending to `out`, in RESP3 when `resp3` is set.
    pub fn new(out: &'a mut Vec<u8>, resp3: bool) -> Self {
        ReplyWriter { out, resp3 }
    }

    /// Whether the client speaks RESP3.
    pub fn is_resp3(&self) -> bool {
        self.resp3
    }

    /// Switches protocol (HELLO), effective for what is written next.
    pub fn set_resp3(&mut self, resp3: bool) {
        self.resp3 = resp3;
    }

    /// Bytes written so far into the underlying buffer.
    pub fn position(&self) -> usize {
        self.out.len()
    }

    /// What the underlying buffer holds from `start` on.
    pub fn since(&self, start: usize) -> &[u8] {
        &self.out[start.min(self.out.len())..]
    }

    /// Drops everything written after `len` (used to replace a partial reply).
    pub fn truncate(&mut self, len: usize) {
        self.out.truncate(len);
    }

    /// Bytes already in the protocol (the replication stream, a snapshot's chunk).
    pub fn raw(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    /// `+OK`
    pub fn ok(&mut self) {
        self.out.extend_from_slice(b"+OK\r\n");
    }

    /// A status reply: `+text`.
    pub fn simple(&mut self, text: &str) {
        self.out.push(b'+');
        self.out.extend_from_slice(text.as_bytes());
        self.out.extend_from_slice(b"\r\n");
    }

    /// An error reply: `-text` (text already carries its code, e.g. "ERR ...").
    /// Newlines would break the protocol, so they become spaces, as Redis does.
    pub fn error(&mut self, text: &str) {
        self.out.push(b'-');
        self.out.extend(
            text.bytes()
                .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
        self.out.extend_from_slice(b"\r\n");
    }

    /// An integer reply.
    pub fn int(&mut self, v: i64) {
        self.header(b':', v);
    }

    /// A bulk string.
    pub fn bulk(&mut self, bytes: &[u8]) {
        self.out.reserve(bytes.len() + 16);
        self.header(b'$', bytes.len() as i64);
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(b"\r\n");
    }

    /// A verbatim string (RESP3 `=`, with the "txt" format); a bulk string in RESP2.
    pub fn verbatim(&mut self, text: &[u8]) {
        self.verbatim_as(b"txt", text);
    }

    /// A verbatim string of a three-letter `format` (RESP3 `=`); a bulk string in RESP2.
    pub fn verbatim_as(&mut self, format: &[u8], text: &[u8]) {
        if self.resp3 {
            let format = &format[..format.len().min(3)];
            self.header(b'=', (text.len() + format.len() + 1) as i64);
            self.out.extend_from_slice(format);
            self.out.push(b':');
            self.out.extend_from_slice(text);
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(text);
        }
    }

    /// A big number (RESP3 `(`; a bulk string in RESP2).
    pub fn big_number(&mut self, digits: &[u8]) {
        if self.resp3 {
            self.out.push(b'(');
            self.out.extend_from_slice(digits);
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(digits);
        }
    }

    /// A double: RESP3 `,` or a RESP2 bulk string, printed as Redis 7.2 prints it.
    pub fn double(&mut self, v: f64) {
        if self.resp3 {
            self.out.push(b',');
            format_double(v, self.out);
            self.out.extend_from_slice(b"\r\n");
        } else {
            // Print the text in place, then put the `$len` header in front of it.
            let start = self.out.len();
            format_double(v, self.out);
            let len = self.out.len() - start;
            self.header(b'$', len as i64);
            self.out[start..].rotate_left(len);
            self.out.extend_from_slice(b"\r\n");
        }
    }

    /// A double already printed as `text`: RESP3 `,text`, a RESP2 bulk string (for the
    /// replies Redis prints in another form than d2string's, as GEOPOS's coordinates).
    pub fn double_text(&mut self, text: &[u8]) {
        if self.resp3 {
            self.out.push(b',');
            self.out.extend_from_slice(text);
            self.out.extend_from_slice(b"\r\n");
        } else {
            self.bulk(text);
        }
    }

    /// The null bulk string (`$-1`; `_` in RESP3).
    pub fn null(&mut self) {
        self.out
            .extend_from_slice(if self.resp3 { b"_\r\n" } else { b"$-1\r\n" });
    }

    /// The null array (`*-1`; `_` in RESP3).
    pub fn null_array(&mut self) {
        self.out
            .extend_from_slice(if self.resp3 { b"_\r\n" } else { b"*-1\r\n" });
    }

    /// A boolean (RESP3 `#t`/`#f`; integer 1/0 in RESP2).
    pub fn boolean(&mut self, v: bool) {
        if self.resp3 {
            self.out
                .extend_from_slice(if v { b"#t\r\n" } else { b"#f\r\n" });
        } else {
            self.int(v as i64);
        }
    }

    /// An array header of `n` elements.
    pub fn array(&mut self, n: usize) {
        self.header(b'*', n as i64);
    }

    /// A map header of `n` key/value pairs (a flat array of 2n in RESP2).
    pub fn map(&mut self, n: usize) {
        if self.resp3 {
            self.header(b'%', n as i64);
        } else {
            self.header(b'*', 2 * n as i64);
        }
    }

    /// A push header of `n` elements (RESP3 `>`; an array in RESP2).
    pub fn push(&mut self, n: usize) {
        self.header(if self.resp3 { b'>' } else { b'*' }, n as i64);
    }

    /// A set header (an array in RESP2).
    pub fn set(&mut self, n: usize) {
        self.header(if self.resp3 { b'~' } else { b'*' }, n as i64);
    }

    /// The line `<tag><n>\r\n` (an integer reply, a length or count header): four bytes
    /// stored at once for one digit, else made on the stack and appended in one copy.
    #[inline]
    fn header(&mut self, tag: u8, n: i64) {
        if (0..10).contains(&n) {
            self.out
                .extend_from_slice(&[tag, b'0' + n as u8, b'\r', b'\n']);
        } else {
            let (line, start) = integer_line(tag, n);
            self.out.extend_from_slice(&line[start..]);
        }
    }
}

/// Two decimal digits for each value below 100, "00" to "99".
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// `<tag><n>\r\n` at the end of a buffer (a tag, a sign, 19 digits and CRLF at most), and
/// where it starts: the digits are written from the last, two at a time.
#[inline(always)]
fn integer_line(tag: u8, n: i64) -> ([u8; 24], usize) {
    let mut line = [0u8; 24];
    let mut at = line.len() - 2;
    line[at..].copy_from_slice(b"\r\n");
    let mut v = n.unsigned_abs();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        line[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        at -= 2;
        let pair = v as usize * 2;
        line[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        line[at] = b'0' + v as u8;
    }
    if n < 0 {
        at -= 1;
        line[at] = b'-';
    }
    at -= 1;
    line[at] = tag;
    (line, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(f: impl Fn(&mut ReplyWriter)) -> (String, String) {
        let mut a = Vec::new();
        let mut b = Vec::new();
        f(&mut ReplyWriter::new(&mut a, false));
        f(&mut ReplyWriter::new(&mut b, true));
        (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap())
    }

    #[test]
    fn integer_lines_match_the_decimal_text() {
        let mut values = vec![i64::MIN, i64::MIN + 1, i64::MAX, -1, 0];
        for p in 0..19 {
            let power = 10i64.pow(p);
            values.extend([power - 1, power, power + 1, -power, 1 - power, -power - 1]);
        }
        for v in values {
            let (line, start) = integer_line(b':', v);
            assert_eq!(line[start..], *format!(":{v}\r\n").as_bytes(), "{v}");
        }
    }

    #[test]
    fn lowers_resp3_types_to_resp2() {
        assert_eq!(
            both(|w| w.double(1.5)),
            ("$3\r\n1.5\r\n".into(), ",1.5\r\n".into())
        );
        assert_eq!(both(|w| w.null()), ("$-1\r\n".into(), "_\r\n".into()));
        assert_eq!(both(|w| w.null_array()), ("*-1\r\n".into(), "_\r\n".into()));
        assert_eq!(both(|w| w.map(2)), ("*4\r\n".into(), "%2\r\n".into()));
        assert_eq!(
            both(|w| w.int(i64::MIN)),
            (
                ":-9223372036854775808\r\n".into(),
                ":-9223372036854775808\r\n".into()
            )
        );
        assert_eq!(
            both(|w| w.error("ERR a\r\nb")),
            ("-ERR a  b\r\n".into(), "-ERR a  b\r\n".into())
        );
    }
}
