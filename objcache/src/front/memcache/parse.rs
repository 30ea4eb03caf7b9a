//! The memcache text protocol parser: request lines to [`Request`]s, with memcached's
//! tokenizer (spaces only, at most 24 tokens counting the terminal one), its number parsers
//! (`safe_strtol` and friends) and its argument checks, so that errors come out in the same
//! order and with the same strings as memcached 1.6.

use crate::store::{parse_u64, Mode};

/// Longest key memcached accepts.
pub const KEY_MAX: usize = 250;
/// Longest opaque token of a meta command.
pub const OPAQUE_MAX: usize = 32;
/// A buffer this long without a newline is junk unless it is a multi-get (memcached closes).
pub const LINE_JUNK: usize = 2048;
const MAX_TOKENS: usize = 24;

/// Finds the next request line in `buf`.
pub enum Line<'a> {
    /// No complete line yet.
    Incomplete,
    /// No newline in the first 2 KiB and not a get: memcached closes the connection.
    Junk,
    /// A line without its terminator, and the bytes it used.
    Complete(&'a [u8], usize),
}

/// Splits the next line off `buf`, stripping "\n" and a "\r" before it.
pub fn next_line(buf: &[u8]) -> Line<'_> {
    match buf.iter().position(|&b| b == b'\n') {
        Some(nl) => {
            let end = if nl > 1 && buf[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            Line::Complete(&buf[..end], nl + 1)
        }
        None if buf.len() > LINE_JUNK => {
            let trimmed = buf.iter().position(|&b| b != b' ').unwrap_or(buf.len());
            let rest = &buf[trimmed..];
            if trimmed > 100 || !(rest.starts_with(b"get ") || rest.starts_with(b"gets ")) {
                Line::Junk
            } else {
                Line::Incomplete
            }
        }
        None => Line::Incomplete,
    }
}

/// memcached's tokenizer: tokens split on spaces. memcached stops after 23 tokens (get
/// re-tokenizes the rest), so `ntokens`, which counts the terminal token as memcached does,
/// is capped at 24 while every token is returned.
pub fn tokenize(line: &[u8]) -> (Vec<&[u8]>, usize) {
    let tokens: Vec<&[u8]> = line
        .split(|&b| b == b' ')
        .filter(|t| !t.is_empty())
        .collect();
    let n = tokens.len().min(MAX_TOKENS - 1) + 1;
    (tokens, n)
}

fn trailing_ok(rest: &[u8]) -> bool {
    rest.first().is_none_or(|b| b.is_ascii_whitespace())
}

/// `safe_strtol`: a signed decimal that fits 32 bits, optionally followed by whitespace.
pub fn strtol(tok: &[u8]) -> Option<i32> {
    let s = std::str::from_utf8(tok).ok()?;
    let t = s.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+'))
        .unwrap_or(t.len());
    if !trailing_ok(&t.as_bytes()[end..]) {
        return None;
    }
    let v: i64 = t[..end].parse().ok()?;
    i32::try_from(v).ok()
}

/// `safe_strtoul` as used for client flags: unsigned, at most 32 bits after memcached's
/// truncation of a 64-bit `unsigned long`, and no negative numbers.
pub fn strtoul(tok: &[u8]) -> Option<u32> {
    parse_u64(tok).map(|v| v as u32)
}

/// `safe_strtoull`: an unsigned 64-bit decimal.
pub fn strtoull(tok: &[u8]) -> Option<u64> {
    parse_u64(tok)
}

/// A request, parsed from its line.
#[derive(Debug, PartialEq, Eq)]
pub enum Request<'a> {
    /// get, gets, gat, gats.
    Get {
        /// Keys, in order.
        keys: Vec<&'a [u8]>,
        /// Return CAS values.
        cas: bool,
        /// New expiry for gat and gats.
        touch: Option<i32>,
    },
    /// set, add, replace, append, prepend, cas: `len` bytes of data follow.
    Store {
        /// Storage mode.
        mode: Mode,
        /// Key.
        key: &'a [u8],
        /// Client flags.
        flags: u32,
        /// Protocol expiry.
        exptime: i32,
        /// Value length.
        len: usize,
        /// CAS value for `cas`.
        cas: u64,
        /// No reply wanted.
        noreply: bool,
    },
    /// delete.
    Delete {
        /// Key.
        key: &'a [u8],
        /// No reply wanted.
        noreply: bool,
    },
    /// incr, decr.
    Arith {
        /// Key.
        key: &'a [u8],
        /// incr (true) or decr.
        incr: bool,
        /// Delta.
        delta: u64,
        /// No reply wanted.
        noreply: bool,
    },
    /// touch.
    Touch {
        /// Key.
        key: &'a [u8],
        /// Protocol expiry.
        exptime: i32,
        /// No reply wanted.
        noreply: bool,
    },
    /// flush_all.
    FlushAll {
        /// Delay (protocol expiry), 0 for now.
        delay: i32,
        /// No reply wanted.
        noreply: bool,
    },
    /// version.
    Version,
    /// verbosity.
    Verbosity {
        /// The level asked for.
        level: u32,
        /// No reply wanted.
        noreply: bool,
    },
    /// shutdown, with or without `graceful`.
    Shutdown {
        /// The arguments are a mode memcached knows (none, or `graceful`).
        mode_ok: bool,
    },
    /// cache_memlimit.
    MemLimit {
        /// The new limit in megabytes (memcached's 32-bit reading of the number).
        megabytes: u32,
        /// No reply wanted.
        noreply: bool,
    },
    /// stats, with the tokens after it (sub-command and its arguments).
    Stats(Vec<&'a [u8]>),
    /// lru_crawler, with the tokens after it.
    LruCrawler(Vec<&'a [u8]>),
    /// quit.
    Quit,
    /// A meta command (mg, ms, md, ma, mn, me): its letter and tokens after the command.
    Meta {
        /// Second letter of the command.
        cmd: u8,
        /// Tokens after the command (key first).
        args: Vec<&'a [u8]>,
        /// memcached's token count (terminal token included).
        ntokens: usize,
    },
    /// An error reply; `noreply` suppresses it; `swallow` bytes of data follow and are dropped.
    Error {
        /// Reply line without CRLF.
        reply: &'static str,
        /// Suppressed by noreply.
        noreply: bool,
        /// Bytes to drop after the line.
        swallow: usize,
    },
    /// memcached closes the connection (an HTTP request line).
    Close,
}

const ERROR: &str = "ERROR";
const BAD_FORMAT: &str = "CLIENT_ERROR bad command line format";

fn error(reply: &'static str) -> Request<'static> {
    Request::Error {
        reply,
        noreply: false,
        swallow: 0,
    }
}

fn noreply_of(tokens: &[&[u8]]) -> bool {
    tokens.last().is_some_and(|t| *t == b"noreply")
}

/// Parses one request line.
pub fn parse_line(line: &[u8]) -> Request<'_> {
    let (t, ntokens) = tokenize(line);
    if t.is_empty() || t[0].len() < 2 {
        return error(ERROR);
    }
    let cmd = t[0];
    if cmd.len() == 2 && cmd[0] == b'm' {
        return match cmd[1] {
            b'g' | b's' | b'd' | b'n' | b'a' | b'e' => Request::Meta {
                cmd: cmd[1],
                args: t[1..].to_vec(),
                ntokens,
            },
            _ => error(ERROR),
        };
    }
    let want = |ok: bool, r: Request<'static>| if ok { None } else { Some(r) };
    let checked = match cmd {
        b"get" | b"gets" | b"gat" | b"gats" => want(ntokens >= 3, error(ERROR)),
        b"set" | b"add" | b"append" | b"replace" | b"prepend" => {
            want(ntokens == 6 || ntokens == 7, error(ERROR))
        }
        b"cas" => want(ntokens == 7 || ntokens == 8, error(ERROR)),
        b"incr" | b"decr" | b"touch" => want(ntokens == 4 || ntokens == 5, error(ERROR)),
        b"delete" => want((3..=5).contains(&ntokens), error(ERROR)),
        b"flush_all" => want((2..=4).contains(&ntokens), error(ERROR)),
        b"verbosity" | b"cache_memlimit" => want(ntokens == 3 || ntokens == 4, error(ERROR)),
        _ => None,
    };
    if let Some(r) = checked {
        return r;
    }
    match cmd {
        b"get" => Request::Get {
            keys: t[1..].to_vec(),
            cas: false,
            touch: None,
        },
        b"gets" => Request::Get {
            keys: t[1..].to_vec(),
            cas: true,
            touch: None,
        },
        b"gat" | b"gats" => match strtol(t[1]) {
            Some(e) => Request::Get {
                keys: t[2..].to_vec(),
                cas: cmd == b"gats",
                touch: Some(e),
            },
            None => error("CLIENT_ERROR invalid exptime argument"),
        },
        b"set" => storage(&t, Mode::Set),
        b"add" => storage(&t, Mode::Add),
        b"replace" => storage(&t, Mode::Replace),
        b"append" => storage(&t, Mode::Append),
        b"prepend" => storage(&t, Mode::Prepend),
        b"cas" => storage(&t, Mode::Cas),
        b"incr" | b"decr" => {
            let noreply = noreply_of(&t);
            if t[1].len() > KEY_MAX {
                return Request::Error {
                    reply: BAD_FORMAT,
                    noreply,
                    swallow: 0,
                };
            }
            match strtoull(t[2]) {
                Some(delta) => Request::Arith {
                    key: t[1],
                    incr: cmd == b"incr",
                    delta,
                    noreply,
                },
                None => Request::Error {
                    reply: "CLIENT_ERROR invalid numeric delta argument",
                    noreply,
                    swallow: 0,
                },
            }
        }
        b"touch" => {
            let noreply = noreply_of(&t);
            if t[1].len() > KEY_MAX {
                return Request::Error {
                    reply: BAD_FORMAT,
                    noreply,
                    swallow: 0,
                };
            }
            match strtol(t[2]) {
                Some(exptime) => Request::Touch {
                    key: t[1],
                    exptime,
                    noreply,
                },
                None => Request::Error {
                    reply: "CLIENT_ERROR invalid exptime argument",
                    noreply,
                    swallow: 0,
                },
            }
        }
        b"delete" => {
            let mut noreply = false;
            if ntokens > 3 {
                let hold_is_zero = t[2] == b"0";
                noreply = noreply_of(&t);
                let valid = (ntokens == 4 && (hold_is_zero || noreply))
                    || (ntokens == 5 && hold_is_zero && noreply);
                if !valid {
                    return Request::Error {
                        reply:
                            "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]",
                        noreply,
                        swallow: 0,
                    };
                }
            }
            if t[1].len() > KEY_MAX {
                return Request::Error {
                    reply: BAD_FORMAT,
                    noreply,
                    swallow: 0,
                };
            }
            Request::Delete { key: t[1], noreply }
        }
        b"flush_all" => {
            let noreply = noreply_of(&t);
            let mut delay = 0;
            if ntokens != if noreply { 3 } else { 2 } {
                match strtol(t[1]) {
                    Some(d) => delay = d,
                    None => {
                        return Request::Error {
                            reply: "CLIENT_ERROR invalid exptime argument",
                            noreply,
                            swallow: 0,
                        }
                    }
                }
            }
            Request::FlushAll { delay, noreply }
        }
        b"verbosity" => number_and_noreply(&t, BAD_FORMAT, |level, noreply| Request::Verbosity {
            level,
            noreply,
        }),
        b"cache_memlimit" => number_and_noreply(&t, ERROR, |megabytes, noreply| {
            Request::MemLimit { megabytes, noreply }
        }),
        b"version" => Request::Version,
        b"quit" => Request::Quit,
        b"shutdown" => Request::Shutdown {
            mode_ok: ntokens == 2 || (ntokens == 3 && t[1] == b"graceful"),
        },
        b"stats" => Request::Stats(t[1..].to_vec()),
        b"lru_crawler" => Request::LruCrawler(t[1..].to_vec()),
        _ if t[t.len() - 1].starts_with(b"HTTP/") => Request::Close,
        _ => error(ERROR),
    }
}

/// A command of one 32-bit number and an optional noreply (verbosity, cache_memlimit): the
/// request `make` builds, or the error `bad` (silenced by noreply) when it is no number.
fn number_and_noreply<'a>(
    t: &[&[u8]],
    bad: &'static str,
    make: impl FnOnce(u32, bool) -> Request<'a>,
) -> Request<'a> {
    let noreply = noreply_of(t);
    match strtoul(t[1]) {
        Some(n) => make(n, noreply),
        None => Request::Error {
            reply: bad,
            noreply,
            swallow: 0,
        },
    }
}

fn storage<'a>(t: &[&'a [u8]], mode: Mode) -> Request<'a> {
    let noreply = noreply_of(t);
    let bad = Request::Error {
        reply: BAD_FORMAT,
        noreply,
        swallow: 0,
    };
    if t[1].len() > KEY_MAX {
        return bad;
    }
    let (Some(flags), Some(exptime), Some(len)) = (strtoul(t[2]), strtol(t[3]), strtol(t[4]))
    else {
        return bad;
    };
    let cas = if mode == Mode::Cas {
        match strtoull(t[5]) {
            Some(c) => c,
            None => return bad,
        }
    } else {
        0
    };
    if !(0..=i32::MAX - 2).contains(&len) {
        return bad;
    }
    Request::Store {
        mode,
        key: t[1],
        flags,
        exptime,
        len: len as usize,
        cas,
        noreply,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert!(matches!(
            next_line(b"get a\r\nrest"),
            Line::Complete(b"get a", 7)
        ));
        assert!(matches!(
            next_line(b"get a\nrest"),
            Line::Complete(b"get a", 6)
        ));
        assert!(matches!(next_line(b"\r\n"), Line::Complete(b"\r", 2)));
        assert!(matches!(next_line(b"get a"), Line::Incomplete));
        assert!(matches!(next_line(&[b'x'; 3000]), Line::Junk));
        let mut long_get = b"get ".to_vec();
        long_get.extend_from_slice(&[b'k'; 3000]);
        assert!(matches!(next_line(&long_get), Line::Incomplete));
    }

    #[test]
    fn numbers() {
        assert_eq!(strtol(b"-5"), Some(-5));
        assert_eq!(strtol(b"abc"), None);
        assert_eq!(strtol(b"99999999999"), None);
        assert_eq!(strtoul(b"4294967296"), Some(0));
        assert_eq!(strtoul(b"-1"), None);
        assert_eq!(strtoull(b"18446744073709551615"), Some(u64::MAX));
    }

    #[test]
    fn commands_and_errors() {
        assert_eq!(parse_line(b""), error(ERROR));
        assert_eq!(parse_line(b"get"), error(ERROR));
        assert_eq!(parse_line(b"x"), error(ERROR));
        assert_eq!(
            parse_line(b"set k 5 -1 3 noreply"),
            Request::Store {
                mode: Mode::Set,
                key: b"k",
                flags: 5,
                exptime: -1,
                len: 3,
                cas: 0,
                noreply: true
            }
        );
        assert_eq!(parse_line(b"set k 0 0 -1"), error(BAD_FORMAT));
        assert_eq!(parse_line(b"set k 0 0"), error(ERROR));
        assert_eq!(parse_line(b"cas k 0 0 1"), error(ERROR));
        assert!(matches!(parse_line(b"delete k 5"), Request::Error { .. }));
        assert_eq!(
            parse_line(b"delete k 0 noreply"),
            Request::Delete {
                key: b"k",
                noreply: true
            }
        );
        assert_eq!(parse_line(b"flush_all 0 0 0"), error(ERROR));
        assert_eq!(parse_line(b"GET / HTTP/1.1"), Request::Close);
        assert!(matches!(
            parse_line(b"mg k v"),
            Request::Meta { cmd: b'g', .. }
        ));
        let many = [b"get".as_slice(), &b" k".repeat(40)].concat();
        match parse_line(&many) {
            Request::Get { keys, .. } => assert_eq!(keys.len(), 40),
            other => panic!("{other:?}"),
        }
    }
}
