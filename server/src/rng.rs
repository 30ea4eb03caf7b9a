//! The server's one pseudo-random generator: xorshift64* (Vigna), fast and good enough
//! for sampling and random picks (SRANDMEMBER, eviction and expiry samples, LFU's counter,
//! HOTKEYS's sampling and sketch); never for secrets.

/// A xorshift64* generator: 64 bits of state, never zero.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed` (any value: its low bit is set, so the state is
    /// never zero).
    pub fn seeded(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (n > 0).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A number uniform in [0, 1) (the top 53 bits of a draw).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_seed_still_draws() {
        let mut r = Rng::seeded(0);
        assert_ne!(r.next_u64(), r.next_u64());
    }

    #[test]
    fn draws_stay_in_their_ranges_and_spread() {
        let mut r = Rng::seeded(42);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            seen[r.below(10)] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
    }
}
