//! Number parsing and printing exactly as Redis does it (string2ll, string2d, d2string).

/// Parses a signed 64-bit integer the way Redis's `string2ll` does: optional '-', no '+', no
/// leading zeros (except "0" itself), no spaces, no overflow. (The set engine's intset test
/// is the same function.)
#[inline]
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    goblin_zset::set::parse_int(s)
}

/// Parses a double the way Redis's `string2d` does (strtod over the whole string): no leading
/// space, no NaN, no overflow to infinity or underflow to zero from a finite literal.
/// "inf", "+inf", "-inf", "infinity" (any case) are accepted.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s[0].is_ascii_whitespace() {
        return None;
    }
    if let Some(v) = parse_small_integer(s) {
        return Some(v);
    }
    let text = std::str::from_utf8(s).ok()?;
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let b = body.as_bytes();
    if b.len() > 8 && b[0].is_ascii_digit() && !b[1].eq_ignore_ascii_case(&b'x') {
        // Not a word or a hex float: skip the lowercased copy below.
        return parse_decimal(text, body);
    }
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Some(if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if let Some(hex) = lower.strip_prefix("0x") {
        return parse_hex_float(hex).map(|v| if text.starts_with('-') { -v } else { v });
    }
    parse_decimal(text, &lower)
}

/// An optionally signed run of at most 15 decimal digits (leading zeros allowed, as strtod
/// reads them): exact as an `f64` with no float parsing. None for anything else.
#[inline]
fn parse_small_integer(s: &[u8]) -> Option<f64> {
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    let v = v as f64;
    Some(if negative { -v } else { v })
}

/// The decimal forms strtod reads, `body` being the text after its sign.
fn parse_decimal(text: &str, body: &str) -> Option<f64> {
    // Rust accepts the same decimal forms as strtod ("1e5", ".5", "5.") except words.
    if !body
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    if v.is_infinite() {
        return None; // ERANGE overflow
    }
    if v == 0.0
        && body
            .bytes()
            .take_while(|c| *c != b'e' && *c != b'E')
            .any(|c| (b'1'..=b'9').contains(&c))
    {
        return None; // ERANGE underflow
    }
    Some(v)
}

/// strtod's hexadecimal form: digits with an optional '.', then an optional binary exponent.
fn parse_hex_float(s: &str) -> Option<f64> {
    let (mantissa, exponent) = match s.find('p') {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    let v = v * 2f64.powi(exponent);
    v.is_finite().then_some(v)
}

/// Appends a double as Redis 7.2 prints it (d2string): "inf", "-inf", "0", "-0", integers
/// within ±2^62 as integers, anything else in the shortest form that round-trips, in
/// fixed notation for moderate exponents and in "1.5e+300" form otherwise.
pub fn format_double(value: f64, out: &mut Vec<u8>) {
    if value.is_nan() {
        out.extend_from_slice(b"nan");
    } else if value.is_infinite() {
        out.extend_from_slice(if value > 0.0 { b"inf" } else { b"-inf" });
    } else if value == 0.0 {
        out.extend_from_slice(if value.is_sign_negative() {
            b"-0"
        } else {
            b"0"
        });
    } else if value >= -((i64::MAX / 2) as f64)
        && value <= (i64::MAX / 2) as f64
        && value == (value as i64) as f64
    {
        write_i64(value as i64, out);
    } else {
        format_shortest(value, out);
    }
}

/// Appends the decimal text of `v`.
#[inline]
pub fn write_i64(v: i64, out: &mut Vec<u8>) {
    // Lengths and counts in replies are mostly one or two digits.
    if (0..10).contains(&v) {
        out.push(b'0' + v as u8);
        return;
    }
    if (10..100).contains(&v) {
        out.extend_from_slice(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8]);
        return;
    }
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// The grisu-style emitter Redis 7.2 uses (fpconv_dtoa): `digits` x 10^k.
fn format_shortest(value: f64, out: &mut Vec<u8>) {
    // `{:e}` gives the shortest round-trip digits: "d.ddde-N".
    let sci = format!("{:e}", value.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} always has an exponent");
    let digits: Vec<u8> = mantissa.bytes().filter(|c| *c != b'.').collect();
    let exp10: i32 = exp.parse().expect("valid exponent");
    let neg = value < 0.0;
    let nd = digits.len() as i32;
    let k = exp10 - (nd - 1);
    let abs_exp = (k + nd - 1).abs();
    if neg {
        out.push(b'-');
    }
    if k >= 0 && abs_exp < nd + 7 {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', k as usize));
        return;
    }
    if k < 0 && (k > -7 || abs_exp < 4) {
        let offset = nd + k;
        if offset <= 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat_n(b'0', (-offset) as usize));
            out.extend_from_slice(&digits);
        } else {
            out.extend_from_slice(&digits[..offset as usize]);
            out.push(b'.');
            out.extend_from_slice(&digits[offset as usize..]);
        }
        return;
    }
    let nd = digits.len().min(18 - neg as usize);
    out.push(digits[0]);
    if nd > 1 {
        out.push(b'.');
        out.extend_from_slice(&digits[1..nd]);
    }
    out.push(b'e');
    out.push(if k + digits.len() as i32 - 1 < 0 {
        b'-'
    } else {
        b'+'
    });
    out.extend_from_slice(abs_exp.to_string().as_bytes());
}

/// Parses a SCAN-family cursor as Redis does, with strtoul: an optional sign ("-1" is
/// 2^64-1) and decimal digits, no leading space; the empty string is 0. None otherwise.
pub fn parse_cursor(s: &[u8]) -> Option<u64> {
    let (negative, digits) = match s.first() {
        None => return Some(0),
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        Some(_) => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative { v.wrapping_neg() } else { v })
}

/// C's strtol in base 10 as Redis's callers use it (and atoi, where it fits): leading white
/// space, a sign, then the digits up to the first other byte (0 without any), saturating at
/// `i64`'s ends.
pub fn strtol(text: &[u8]) -> i64 {
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != b'\x0b')
        .unwrap_or(text.len());
    let rest = &text[start..];
    let (negative, digits) = match rest.first() {
        Some(b'-') => (true, &rest[1..]),
        Some(b'+') => (false, &rest[1..]),
        _ => (false, rest),
    };
    // Accumulated towards the sign's end, so "-9223372036854775808" reads as i64::MIN.
    let digit_values = digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .map(|d| i64::from(d - b'0'));
    if negative {
        digit_values.fold(0, |v, d| v.saturating_mul(10).saturating_sub(d))
    } else {
        digit_values.fold(0, |v, d| v.saturating_mul(10).saturating_add(d))
    }
}

/// C's atoi: [`strtol`] saturated to an `int`.
pub fn atoi(text: &[u8]) -> i32 {
    strtol(text).clamp(i32::MIN.into(), i32::MAX.into()) as i32
}

/// A double printed into a fresh byte vector.
pub fn double_to_bytes(value: f64) -> Vec<u8> {
    let mut v = Vec::with_capacity(24);
    format_double(value, &mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtol_and_atoi_read_as_c_does() {
        assert_eq!(strtol(b" \t-12abc"), -12);
        assert_eq!(strtol(b"+7"), 7);
        assert_eq!(strtol(b"x1"), 0);
        assert_eq!(strtol(b""), 0);
        assert_eq!(strtol(b"99999999999999999999"), i64::MAX);
        assert_eq!(strtol(b"-99999999999999999999"), i64::MIN);
        assert_eq!(atoi(b"99999999999"), i32::MAX);
        assert_eq!(atoi(b"-99999999999"), i32::MIN);
        assert_eq!(atoi(b"-17\n"), -17);
    }

    fn fmt(v: f64) -> String {
        String::from_utf8(double_to_bytes(v)).unwrap()
    }

    #[test]
    fn integers_like_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        for bad in [&b""[..], b"-", b"+1", b"01", b" 1", b"1 ", b"-0", b"1.0"] {
            assert_eq!(parse_i64(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn doubles_like_string2d() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"0x10"), Some(16.0));
        assert_eq!(parse_f64(b".5"), Some(0.5));
        assert_eq!(parse_f64(b"1e-300"), Some(1e-300));
        for bad in [
            &b"nan"[..],
            b" 1",
            b"1 ",
            b"1e400",
            b"1e-400",
            b"abc",
            b"",
            b"1,5",
        ] {
            assert_eq!(parse_f64(bad), None, "{:?}", std::str::from_utf8(bad));
        }
    }

    #[test]
    fn prints_like_redis_7_2() {
        assert_eq!(fmt(3.3), "3.3");
        assert_eq!(fmt(1.0), "1");
        assert_eq!(fmt(-0.0), "-0");
        assert_eq!(fmt(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(fmt(1e-300), "1e-300");
        assert_eq!(fmt(f64::INFINITY), "inf");
        assert_eq!(fmt(-1.5e300), "-1.5e+300");
        assert_eq!(fmt(1e19), "1e+19");
        assert_eq!(fmt(4294967295.0), "4294967295");
        assert_eq!(fmt(0.000123), "0.000123");
        assert_eq!(fmt(1.2345e-7), "1.2345e-7");
        assert_eq!(fmt(12.5), "12.5");
        assert_eq!(fmt(4611686018427387904.0), "4611686018427387904");
        assert_eq!(fmt(9223372036854775808.0), "9223372036854776000");
        assert_eq!(fmt(1e22), "1e+22");
    }

    #[test]
    fn cursors_like_strtoul() {
        assert_eq!(parse_cursor(b""), Some(0));
        assert_eq!(parse_cursor(b"-1"), Some(u64::MAX));
        assert_eq!(parse_cursor(b" 12"), None);
        assert_eq!(parse_cursor(b"18446744073709551616"), None);
        assert_eq!(parse_cursor(b"-1x"), None);
        assert_eq!(parse_cursor(b"1 "), None);
    }
}
