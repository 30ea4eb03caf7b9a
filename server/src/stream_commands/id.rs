//! Stream id arguments as Redis's streamGenericParseIDOrReply reads them: `<ms>-<seq>`,
//! `<ms>` (the sequence supplied by the caller), `-` and `+` where allowed, XADD's
//! `<ms>-*`, and the `(` of an exclusive range bound.

use crate::keyspace::StreamId;
use crate::numbers::parse_i64;

/// The reply to an id that does not parse.
pub const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

/// A parsed id argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedId {
    /// The id (its sequence 0 for `<ms>-*`).
    pub id: StreamId,
    /// False for XADD's `<ms>-*`: the sequence is to be generated.
    pub seq_given: bool,
}

/// How an id argument may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdRules {
    /// The sequence a bare `<ms>` gets.
    pub missing_seq: u64,
    /// `-` and `+` are refused.
    pub strict: bool,
    /// `<ms>-*` is accepted (XADD).
    pub auto_seq: bool,
}

impl IdRules {
    /// `-`, `+` and bare `<ms>` accepted, the sequence filled with `missing_seq`.
    pub const fn loose(missing_seq: u64) -> IdRules {
        IdRules {
            missing_seq,
            strict: false,
            auto_seq: false,
        }
    }

    /// An explicit id: no `-` or `+`; a bare `<ms>` gets sequence 0.
    pub const STRICT: IdRules = IdRules {
        missing_seq: 0,
        strict: true,
        auto_seq: false,
    };
}

/// Parses `arg` under `rules`; None when it is not an id.
pub fn parse(arg: &[u8], rules: IdRules) -> Option<ParsedId> {
    if arg.len() > 127 {
        return None;
    }
    // Redis reads the argument as a C string: it ends at the first NUL.
    let s = arg.split(|&b| b == 0).next().unwrap_or_default();
    let exact = |id| ParsedId {
        id,
        seq_given: true,
    };
    match s {
        b"-" | b"+" if rules.strict => None,
        b"-" => Some(exact(StreamId::MIN)),
        b"+" => Some(exact(StreamId::MAX)),
        _ => {
            let (ms, seq) = match s.iter().position(|&b| b == b'-') {
                Some(dash) => (&s[..dash], Some(&s[dash + 1..])),
                None => (s, None),
            };
            let ms = parse_u64(ms)?;
            match seq {
                Some(b"*") if rules.auto_seq => Some(ParsedId {
                    id: StreamId::new(ms, 0),
                    seq_given: false,
                }),
                Some(seq) => Some(exact(StreamId::new(ms, parse_u64(seq)?))),
                None => Some(exact(StreamId::new(ms, rules.missing_seq))),
            }
        }
    }
}

/// A range bound (XRANGE, XREVRANGE, XPENDING): `(` before a strict id makes it exclusive.
/// Returns the id and whether it is excluded.
pub fn parse_bound(arg: &[u8], missing_seq: u64) -> Option<(StreamId, bool)> {
    match arg {
        [b'(', rest @ ..] if !rest.is_empty() => {
            let rules = IdRules {
                missing_seq,
                ..IdRules::STRICT
            };
            parse(rest, rules).map(|p| (p.id, true))
        }
        _ => parse(arg, IdRules::loose(missing_seq)).map(|p| (p.id, false)),
    }
}

/// An unsigned 64-bit number as Redis's string2ull reads one: a canonical integer, which
/// must not be negative, or else whatever strtoull takes whole (leading spaces, a sign,
/// leading zeros; a minus negates modulo 2^64), overflow refused.
fn parse_u64(s: &[u8]) -> Option<u64> {
    if let Some(v) = parse_i64(s) {
        return u64::try_from(v).ok();
    }
    let start = s
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))?;
    let (negative, digits) = match &s[start..] {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })?;
    Some(if negative { v.wrapping_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> Option<StreamId> {
        Some(StreamId::new(ms, seq))
    }

    #[test]
    fn ids_parse_as_redis_reads_them() {
        let loose = |s: &[u8]| parse(s, IdRules::loose(7)).map(|p| p.id);
        assert_eq!(loose(b"1-2"), id(1, 2));
        assert_eq!(loose(b"5"), id(5, 7));
        assert_eq!(loose(b"-"), id(0, 0));
        assert_eq!(loose(b"+"), Some(StreamId::MAX));
        assert_eq!(loose(b"01-02"), id(1, 2));
        assert_eq!(loose(b" 3"), id(3, 7));
        assert_eq!(loose(b"+3"), id(3, 7));
        assert_eq!(loose(b"1--1"), None);
        assert_eq!(loose(b"1--01"), id(1, u64::MAX));
        assert_eq!(loose(b"18446744073709551615-0"), id(u64::MAX, 0));
        assert_eq!(loose(b"18446744073709551616"), None);
        assert_eq!(loose(b""), None);
        assert_eq!(loose(b"1-"), None);
        assert_eq!(loose(b"1-2-3"), None);
        assert_eq!(loose(b"1-*"), None);
        assert_eq!(loose(b"4\0junk"), id(4, 7));
        assert_eq!(parse(b"-", IdRules::STRICT), None);
        let auto = IdRules {
            auto_seq: true,
            ..IdRules::STRICT
        };
        assert_eq!(
            parse(b"9-*", auto),
            Some(ParsedId {
                id: StreamId::new(9, 0),
                seq_given: false
            })
        );
        assert_eq!(parse_bound(b"(5", 0), Some((StreamId::new(5, 0), true)));
        assert_eq!(parse_bound(b"(-", 0), None);
        assert_eq!(parse_bound(b"(", 0), None);
        assert_eq!(parse_bound(b"-", 0), Some((StreamId::MIN, false)));
    }
}
