//! The x87 80-bit `long double` INCRBYFLOAT computes in, emulated exactly: Redis parses
//! both numbers with strtold, adds them, and prints the sum with `%.17Lf` before trimming
//! trailing zeros. Each step is done here on exact big integers with the hardware's
//! rounding (to nearest, ties to even, 64-bit significand), so the text matches Redis's on
//! x86-64 byte for byte.
//!
//! A value is `mant × 2^exp` with the top bit of `mant` set (or zero). Hexadecimal inputs
//! and results in the subnormal range (below 2^-16382) are not handled: the first is
//! refused as "not a valid float", the second computed as if the range went on.

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};

/// Longest text strtold is given (Redis's MAX_LONG_DOUBLE_CHARS).
const MAX_CHARS: usize = 5 * 1024;
/// Largest binary exponent of a finite value's top bit (16383), as `exp` of the 64-bit form.
const MAX_EXP: i64 = 16383 - 63;
/// Smallest `exp` of a normal value's 64-bit form (2^-16382).
const MIN_EXP: i64 = -16382 - 63;

/// What a number's text parses to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A finite value.
    Finite(LongDouble),
    /// Plus or minus infinity: valid, but no sum with it is.
    Infinite,
}

/// A finite long double.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongDouble {
    neg: bool,
    mant: u64,
    exp: i64,
}

impl LongDouble {
    /// The exact value of an integer.
    pub fn from_i64(v: i64) -> LongDouble {
        round(v < 0, BigUint::from(v.unsigned_abs()), 0, false).expect("an i64 fits")
    }

    /// Parses `text` as Redis's string2ld does: decimal with optional sign, fraction and
    /// exponent, or inf / infinity ([`Parsed::Infinite`]); no spaces; None for anything
    /// else, for NaN, and for overflow or underflow to zero.
    pub fn parse(text: &[u8]) -> Option<Parsed> {
        if text.is_empty() || text.len() >= MAX_CHARS {
            return None;
        }
        let (neg, body) = match text[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(Parsed::Infinite);
        }
        let (mantissa, exponent) = match body.iter().position(|&c| c == b'e' || c == b'E') {
            Some(at) => (&body[..at], Some(&body[at + 1..])),
            None => (body, None),
        };
        let (int_part, frac_part) = match mantissa.iter().position(|&c| c == b'.') {
            Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
            None => (mantissa, &b""[..]),
        };
        let all_digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
        if int_part.len() + frac_part.len() == 0 || !all_digits(int_part) || !all_digits(frac_part)
        {
            return None;
        }
        let mut exp10: i64 = match exponent {
            None => 0,
            Some(e) => {
                let (sign, digits) = match e.first() {
                    Some(b'-') => (-1, &e[1..]),
                    Some(b'+') => (1, &e[1..]),
                    _ => (1, e),
                };
                if digits.is_empty() || !all_digits(digits) {
                    return None;
                }
                // Past this, the value is out of range whatever the digits.
                let mut v: i64 = 0;
                for &d in digits {
                    v = (v * 10 + (d - b'0') as i64).min(1 << 40);
                }
                sign * v
            }
        };
        let digits: Vec<u8> = int_part.iter().chain(frac_part).map(|d| d - b'0').collect();
        exp10 -= frac_part.len() as i64;
        let d = BigUint::from_radix_be(&digits, 10).expect("decimal digits");
        if d.is_zero() {
            return Some(Parsed::Finite(LongDouble {
                neg,
                mant: 0,
                exp: 0,
            }));
        }
        // Out of range long before the arithmetic gets costly.
        let magnitude = d.bits() as f64 * std::f64::consts::LOG10_2 + exp10 as f64;
        if magnitude > 4940.0 {
            return None;
        }
        if magnitude < -4960.0 {
            return None;
        }
        let value = if exp10 >= 0 {
            round(neg, d * pow10(exp10 as u32), 0, false)
        } else {
            let den = pow10((-exp10) as u32);
            let shift = (66 + den.bits() as i64 - d.bits() as i64).max(0);
            let num = d << shift as usize;
            let (q, r) = (&num / &den, &num % &den);
            round(neg, q, -shift, !r.is_zero())
        }?;
        (value.mant != 0).then_some(Parsed::Finite(value))
    }

    /// The largest finite value (LDBL_MAX).
    pub const MAX: LongDouble = LongDouble {
        neg: false,
        mant: u64::MAX,
        exp: MAX_EXP,
    };

    /// The value with its sign flipped.
    pub fn neg(self) -> LongDouble {
        LongDouble {
            neg: !self.neg,
            ..self
        }
    }

    /// Whether the value is below zero.
    pub fn is_negative(self) -> bool {
        self.neg && self.mant != 0
    }

    /// Compares two values as numbers (-0 equals 0).
    pub fn compare(self, other: LongDouble) -> std::cmp::Ordering {
        let sign = |v: LongDouble| match (v.mant == 0, v.neg) {
            (true, _) => 0,
            (false, true) => -1,
            (false, false) => 1,
        };
        let (a, b) = (sign(self), sign(other));
        if a != b || a == 0 {
            return a.cmp(&b);
        }
        // Same sign, both nonzero: the top bit of `mant` is set, so `exp` orders first.
        let magnitude = self.exp.cmp(&other.exp).then(self.mant.cmp(&other.mant));
        if a < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }

    /// The sum, rounded as the FPU rounds; None when it overflows.
    pub fn add(self, other: LongDouble) -> Option<LongDouble> {
        if self.mant == 0 {
            return Some(if other.mant == 0 {
                // -0 + -0 is -0; any other pair of zeros is +0.
                LongDouble {
                    neg: self.neg && other.neg,
                    ..other
                }
            } else {
                other
            });
        }
        if other.mant == 0 {
            return Some(self);
        }
        let base = self.exp.min(other.exp);
        let a = BigUint::from(self.mant) << (self.exp - base) as usize;
        let b = BigUint::from(other.mant) << (other.exp - base) as usize;
        if self.neg == other.neg {
            return round(self.neg, a + b, base, false);
        }
        match a.cmp(&b) {
            std::cmp::Ordering::Equal => Some(LongDouble {
                neg: false,
                mant: 0,
                exp: 0,
            }),
            std::cmp::Ordering::Greater => round(self.neg, a - b, base, false),
            std::cmp::Ordering::Less => round(other.neg, b - a, base, false),
        }
    }

    /// The text Redis stores: `%.17Lf`, trailing zeros and a trailing point removed, and
    /// "-0" written "0" (ld2string with LD_STR_HUMAN).
    pub fn to_text(self) -> Vec<u8> {
        let scale = pow10(17);
        let scaled = if self.exp >= 0 {
            (BigUint::from(self.mant) << self.exp as usize) * scale
        } else {
            let shift = (-self.exp) as usize;
            let num = BigUint::from(self.mant) * scale;
            let q = &num >> shift;
            let rem = &num - (&q << shift);
            let half = BigUint::one() << (shift - 1);
            if rem > half || (rem == half && q.bit(0)) {
                q + 1u32
            } else {
                q
            }
        };
        let digits = scaled.to_str_radix(10);
        let digits = format!("{digits:0>18}");
        let (int_part, frac) = digits.split_at(digits.len() - 17);
        let frac = frac.trim_end_matches('0');
        let mut out = String::new();
        if self.neg {
            out.push('-');
        }
        out.push_str(int_part);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        if out == "-0" {
            out = "0".into();
        }
        out.into_bytes()
    }
}

/// 10^n.
fn pow10(n: u32) -> BigUint {
    BigUint::from(10u32).pow(n)
}

/// `n × 2^exp` (plus a nonzero remainder below it when `sticky`) rounded to a 64-bit
/// significand, ties to even; None when it overflows the exponent range.
fn round(neg: bool, n: BigUint, exp: i64, sticky: bool) -> Option<LongDouble> {
    if n.is_zero() {
        return Some(LongDouble {
            neg,
            mant: 0,
            exp: 0,
        });
    }
    let bits = n.bits() as i64;
    // A sticky remainder only comes with more than 64 bits (a quotient of 66 or more).
    let (mant, exp) = if bits <= 64 {
        let m = n.to_u64().expect("at most 64 bits") << (64 - bits);
        (m, exp - (64 - bits))
    } else {
        let shift = (bits - 64) as usize;
        let top = (&n >> shift).to_u64().expect("64 bits");
        let rem = &n - (BigUint::from(top) << shift);
        let half = BigUint::one() << (shift - 1);
        let up = rem > half || (rem == half && (sticky || top & 1 == 1));
        match (up, top.checked_add(1)) {
            (false, _) => (top, exp + shift as i64),
            (true, Some(m)) => (m, exp + shift as i64),
            (true, None) => (1 << 63, exp + shift as i64 + 1),
        }
    };
    if exp > MAX_EXP {
        return None;
    }
    if exp < MIN_EXP - 64 {
        return Some(LongDouble {
            neg,
            mant: 0,
            exp: 0,
        });
    }
    Some(LongDouble { neg, mant, exp })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_orders_by_value() {
        use std::cmp::Ordering::*;
        let pairs = [
            ("1", "2", Less),
            ("-1", "-2", Greater),
            ("-0", "0", Equal),
            ("0.5", "-3", Greater),
            ("1e300", "1e299", Greater),
            ("-1e300", "1", Less),
            ("3", "3", Equal),
        ];
        for (a, b, want) in pairs {
            assert_eq!(finite(a).compare(finite(b)), want, "{a} vs {b}");
        }
        assert_eq!(LongDouble::MAX.compare(finite("1e4000")), Greater);
        assert_eq!(
            finite("2").add(finite("2").neg()).map(|v| v.to_text()),
            Some(b"0".to_vec())
        );
    }

    fn finite(text: &str) -> LongDouble {
        match LongDouble::parse(text.as_bytes()) {
            Some(Parsed::Finite(v)) => v,
            other => panic!("{text:?}: {other:?}"),
        }
    }

    fn incr(a: &str, b: &str) -> String {
        String::from_utf8(finite(a).add(finite(b)).unwrap().to_text()).unwrap()
    }

    #[test]
    fn sums_as_redis_prints_them() {
        // Replies of Redis 7.0 on x86-64 to SET k a, INCRBYFLOAT k b.
        assert_eq!(incr("10.5", "0.1"), "10.6");
        assert_eq!(incr("0", "3.0e3"), "3000");
        assert_eq!(incr("5.0e3", "2.0e2"), "5200");
        assert_eq!(incr("0.1", "0.2"), "0.3");
        assert_eq!(incr("1", "-1"), "0");
        assert_eq!(incr("-0", "-0"), "0");
        assert_eq!(incr("0", "1e-20"), "0");
        assert_eq!(incr("0", "-1e-20"), "0");
        assert_eq!(incr("1", "1.5"), "2.5");
        assert_eq!(incr("0", "1.23456789012345678"), "1.23456789012345678");
    }

    #[test]
    fn refuses_what_strtold_would() {
        for bad in [
            "", " 1", "1 ", "1e", ".", "-", "abc", "1.2.3", "nan", "1e5000", "0x10",
        ] {
            assert!(LongDouble::parse(bad.as_bytes()).is_none(), "{bad:?}");
        }
        for good in [".5", "5.", "+1", "-1e-3", "1E+2", "007"] {
            assert!(LongDouble::parse(good.as_bytes()).is_some(), "{good:?}");
        }
        assert_eq!(LongDouble::parse(b"-INF"), Some(Parsed::Infinite));
        let big = finite("1e4900");
        assert!(big.add(big).is_some());
        let top = finite("1.1e4932");
        assert!(top.add(top).is_none(), "overflow");
    }
}
