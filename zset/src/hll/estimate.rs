//! The cardinality estimate from a register histogram: Otmar Ertl's improved estimator
//! ("New cardinality estimation algorithms for HyperLogLog sketches", arXiv:1702.01284),
//! in the order of operations Redis 7.2 uses, so the same registers give the same count.

use super::{Q, REGISTERS};

/// 0.5 / ln 2, the estimator's constant for an infinite number of registers.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// The count for `histogram[v]` registers at value `v`. Values above 51 (which no hash
/// produces) are left out, as Redis leaves them; an estimate past the 64-bit range (only
/// hand-made registers reach it) comes out as 2^63, as Redis's rounding gives it.
pub fn estimate(histogram: &[u64; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - histogram[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += histogram[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histogram[0] as f64 / m);
    let rounded = (ALPHA_INF * m * m / z).round();
    // llroundl gives i64::MIN out of range; Redis then goes through a double.
    let whole = if (-TWO_63..TWO_63).contains(&rounded) {
        rounded as i64
    } else {
        i64::MIN
    };
    let back = whole as f64;
    if back < 0.0 {
        back as i64 as u64
    } else {
        back as u64
    }
}

/// 2^63 as a double.
const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// Ertl's sigma: x + x^2 + 2 x^4 + 4 x^8 + ... (infinite at 1).
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

/// Ertl's tau (0 at 0 and 1).
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if z == before {
            return z / 3.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_zero_and_small_counts_are_close() {
        let mut h = [0u64; 64];
        h[0] = REGISTERS as u64;
        assert_eq!(estimate(&h), 0);
        // n registers at 1, the rest empty: about n elements for small n.
        for n in [1u64, 10, 100] {
            let mut h = [0u64; 64];
            h[0] = REGISTERS as u64 - n;
            h[1] = n;
            let e = estimate(&h) as f64;
            assert!((e - n as f64).abs() <= n as f64 * 0.02 + 1.0, "{n}: {e}");
        }
    }
}
