//! Argument parsing for the sorted-set commands, with Redis's exact error texts.

use crate::commands::Ctx;
use crate::errors;
use crate::numbers::parse_f64;
use goblin_zset::{LexBound, LexRange, ScoreBound, ScoreRange};

/// A score argument (ZADD, ZINCRBY): "ERR value is not a valid float" when bad.
pub fn score(ctx: &mut Ctx, arg: &[u8]) -> Option<f64> {
    let v = parse_f64(arg);
    if v.is_none() {
        ctx.error(errors::NOT_A_FLOAT);
    }
    v
}

/// One end of a score range as strtod reads it after an optional '(' (leading spaces and
/// overflow to infinity allowed, NaN refused), as Redis's zslParseRange does.
fn score_bound(arg: &[u8]) -> Option<ScoreBound> {
    let (exclusive, text) = match arg.first() {
        Some(b'(') => (true, &arg[1..]),
        _ => (false, arg),
    };
    // strtod reads a C string: it stops at a NUL, and an empty string is 0.
    let text = &text[..text.iter().position(|&c| c == 0).unwrap_or(text.len())];
    if text.is_empty() {
        return Some(ScoreBound {
            value: 0.0,
            exclusive,
        });
    }
    let text = std::str::from_utf8(text).ok()?.trim_start();
    let value = match parse_f64(text.as_bytes()) {
        Some(v) => v,
        // strtod saturates on overflow and flushes underflow to zero; NaN stays refused.
        None => {
            let v: f64 = text.parse().ok()?;
            if v.is_nan() || text.is_empty() || text.to_ascii_lowercase().contains("nan") {
                return None;
            }
            v
        }
    };
    Some(ScoreBound { value, exclusive })
}

/// A score range: "ERR min or max is not a float" when bad.
pub fn score_range(ctx: &mut Ctx, min: &[u8], max: &[u8]) -> Option<ScoreRange> {
    match (score_bound(min), score_bound(max)) {
        (Some(min), Some(max)) => Some(ScoreRange { min, max }),
        _ => {
            ctx.error(errors::MIN_MAX_NOT_FLOAT);
            None
        }
    }
}

fn lex_bound(arg: &[u8]) -> Option<LexBound> {
    match arg.first()? {
        b'+' if arg.len() == 1 => Some(LexBound::PosInf),
        b'-' if arg.len() == 1 => Some(LexBound::NegInf),
        b'(' => Some(LexBound::Exclusive(arg[1..].to_vec())),
        b'[' => Some(LexBound::Inclusive(arg[1..].to_vec())),
        _ => None,
    }
}

/// A lex range: "ERR min or max not valid string range item" when bad.
pub fn lex_range(ctx: &mut Ctx, min: &[u8], max: &[u8]) -> Option<LexRange> {
    match (lex_bound(min), lex_bound(max)) {
        (Some(min), Some(max)) => Some(LexRange { min, max }),
        _ => {
            ctx.error(errors::MIN_MAX_NOT_STRING_RANGE);
            None
        }
    }
}

/// A blocking timeout in seconds (fractions allowed; 0 is forever). Returns the deadline in
/// Unix milliseconds, None meaning forever.
pub fn timeout(ctx: &mut Ctx, arg: &[u8]) -> Option<Option<u64>> {
    let Some(secs) = parse_f64(arg) else {
        ctx.error("ERR timeout is not a float or out of range");
        return None;
    };
    let ms = (secs * 1000.0).ceil();
    if ms > i64::MAX as f64 {
        ctx.error(errors::TIMEOUT_OUT_OF_RANGE);
        return None;
    }
    deadline(ctx, ms as i64)
}

/// A timeout in whole milliseconds (XREAD BLOCK, WAIT, CLIENT PAUSE; 0 is forever or no
/// end), as [`timeout`] returns it.
pub fn timeout_ms(ctx: &mut Ctx, arg: &[u8]) -> Option<Option<u64>> {
    let Some(ms) = crate::numbers::parse_i64(arg) else {
        ctx.error("ERR timeout is not an integer or out of range");
        return None;
    };
    deadline(ctx, ms)
}

/// The end time of a timeout of `ms` from the command's time (the tail of Redis's
/// getTimeoutFromObjectOrReply): negative and overflowing timeouts are errors.
fn deadline(ctx: &mut Ctx, ms: i64) -> Option<Option<u64>> {
    if ms < 0 {
        ctx.error("ERR timeout is negative");
        return None;
    }
    if ms == 0 {
        return Some(None);
    }
    match ms.checked_add(ctx.now_ms as i64) {
        Some(at) => Some(Some(at as u64)),
        None => {
            ctx.error(errors::TIMEOUT_OUT_OF_RANGE);
            None
        }
    }
}

/// An integer in [min, max] (Redis's getRangeLongFromObjectOrReply): `message` when it is not
/// an integer or out of range; without one, Redis's two default messages.
pub fn int_in_range(
    ctx: &mut Ctx,
    arg: &[u8],
    min: i64,
    max: i64,
    message: Option<&str>,
) -> Option<i64> {
    match (crate::numbers::parse_i64(arg), message) {
        (Some(v), _) if (min..=max).contains(&v) => return Some(v),
        (_, Some(m)) => ctx.error(m),
        (None, None) => ctx.error(errors::NOT_AN_INTEGER),
        (Some(_), None) => ctx.error(&format!(
            "ERR value is out of range, value must between {min} and {max}"
        )),
    }
    None
}

/// Normalizes a rank range with negative indexes as Redis does; None when empty.
pub fn rank_range(start: i64, end: i64, len: usize) -> Option<std::ops::Range<usize>> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some(start as usize..(end.min(len - 1) + 1) as usize)
}

/// Parses `numkeys key... WHERE [COUNT count]` starting at `at`, WHERE one of `words`
/// (MIN|MAX for ZMPOP, LEFT|RIGHT for LMPOP, and their blocking forms): the keys, whether
/// WHERE was the second word, and the count (1 when absent), with Redis's errors.
pub fn mpop_args<'a>(
    ctx: &mut Ctx,
    args: &[&'a [u8]],
    at: usize,
    words: [&[u8]; 2],
) -> Option<(Vec<&'a [u8]>, bool, usize)> {
    let numkeys = int_in_range(
        ctx,
        args[at],
        1,
        i64::MAX,
        Some("ERR numkeys should be greater than 0"),
    )? as usize;
    let where_at = at.saturating_add(numkeys).saturating_add(1);
    if where_at >= args.len() {
        ctx.syntax_error();
        return None;
    }
    let second = if args[where_at].eq_ignore_ascii_case(words[0]) {
        false
    } else if args[where_at].eq_ignore_ascii_case(words[1]) {
        true
    } else {
        ctx.syntax_error();
        return None;
    };
    let mut count = None;
    let mut j = where_at + 1;
    while j < args.len() {
        if count.is_none() && args[j].eq_ignore_ascii_case(b"COUNT") && j + 1 < args.len() {
            count = Some(int_in_range(
                ctx,
                args[j + 1],
                1,
                i64::MAX,
                Some("ERR count should be greater than 0"),
            )? as usize);
            j += 2;
        } else {
            ctx.syntax_error();
            return None;
        }
    }
    Some((args[at + 1..where_at].to_vec(), second, count.unwrap_or(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_bounds_like_zsl_parse_range() {
        assert!(score_bound(b"(1.5").is_some_and(|b| b.exclusive && b.value == 1.5));
        assert!(score_bound(b"-inf").is_some_and(|b| b.value == f64::NEG_INFINITY));
        assert!(score_bound(b"1e400").is_some_and(|b| b.value == f64::INFINITY));
        assert!(score_bound(b" 2").is_some_and(|b| b.value == 2.0));
        assert!(score_bound(b"nan").is_none());
        assert!(score_bound(b"(").is_some_and(|b| b.exclusive && b.value == 0.0));
        assert!(score_bound(b"").is_some_and(|b| b.value == 0.0));
        assert!(score_bound(b"1\0x").is_some_and(|b| b.value == 1.0));
        assert!(score_bound(b"abc").is_none());
    }

    #[test]
    fn lex_bounds() {
        assert!(matches!(lex_bound(b"-"), Some(LexBound::NegInf)));
        assert!(matches!(lex_bound(b"[a"), Some(LexBound::Inclusive(v)) if v == b"a"));
        assert!(matches!(lex_bound(b"("), Some(LexBound::Exclusive(v)) if v.is_empty()));
        assert!(lex_bound(b"a").is_none());
        assert!(lex_bound(b"").is_none());
        assert!(lex_bound(b"+a").is_none());
    }

    #[test]
    fn rank_ranges() {
        assert_eq!(rank_range(0, -1, 5), Some(0..5));
        assert_eq!(rank_range(-100, 100, 5), Some(0..5));
        assert_eq!(rank_range(3, 1, 5), None);
        assert_eq!(rank_range(5, 10, 5), None);
        assert_eq!(rank_range(-2, -1, 5), Some(3..5));
        assert_eq!(rank_range(0, 0, 0), None);
    }
}
