//! The access clock in an entry's `accessed` field, as Redis reuses its 24-bit `lru` field:
//! under an LRU (or no) policy the seconds of the keyspace's clock at the last access; under
//! an LFU policy a Morris counter in the low 8 bits and the last decrement time in minutes
//! (16 bits) above it (Redis's evict.c: LFULogIncr, LFUDecrAndReturn).

use crate::rng::Rng;

/// The counter a new key starts with, so it is not evicted before it had a chance to be
/// used again (Redis's LFU_INIT_VAL).
pub const LFU_INIT_VAL: u32 = 5;

/// How accesses are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccessPolicy {
    /// Record a frequency (an LFU policy) instead of the last access time.
    pub lfu: bool,
    /// lfu-log-factor: how many hits it takes to raise the counter (logarithmically).
    pub log_factor: u32,
    /// lfu-decay-time: minutes for the counter to lose one (0: never decays).
    pub decay_time: u32,
}

impl Default for AccessPolicy {
    fn default() -> Self {
        AccessPolicy {
            lfu: false,
            log_factor: 10,
            decay_time: 1,
        }
    }
}

/// Seconds since `accessed` on the LRU clock `clock_secs`, both read modulo 2^24 as the
/// key table keeps the field (Redis's estimateObjectIdleTime: the clock wraps after 194
/// days).
#[inline]
pub fn idle_secs(clock_secs: u32, accessed: u32) -> u32 {
    clock_secs.wrapping_sub(accessed) & super::db::CLOCK_MAX
}

/// Minutes of Unix time modulo 2^16, the LFU decrement clock.
#[inline]
fn minutes(now_ms: u64) -> u32 {
    ((now_ms / 60_000) & 0xffff) as u32
}

/// The access recorder: the policy and the random numbers of the counter's increments.
#[derive(Debug)]
pub struct AccessClock {
    policy: AccessPolicy,
    rng: Rng,
}

impl AccessClock {
    /// A recorder seeded with `seed` (any value).
    pub fn new(seed: u64) -> AccessClock {
        AccessClock {
            policy: AccessPolicy::default(),
            rng: Rng::seeded(seed),
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> AccessPolicy {
        self.policy
    }

    /// Switches the policy; existing fields are read the new way from now on, as Redis does.
    pub fn set_policy(&mut self, policy: AccessPolicy) {
        self.policy = policy;
    }

    /// The field of a key created now (`clock_secs` of the keyspace's clock).
    #[inline]
    pub fn initial(&self, clock_secs: u32, now_ms: u64) -> u32 {
        if self.policy.lfu {
            (minutes(now_ms) << 8) | LFU_INIT_VAL
        } else {
            clock_secs
        }
    }

    /// The field of a counter set to `counter` now (RESTORE ... FREQ).
    pub fn counter_field(counter: u8, now_ms: u64) -> u32 {
        (minutes(now_ms) << 8) | u32::from(counter)
    }

    /// Records an access in `field`.
    #[inline]
    pub fn touch(&mut self, field: &mut u32, clock_secs: u32, now_ms: u64) {
        if self.policy.lfu {
            self.lfu_touch(field, now_ms);
        } else {
            *field = clock_secs;
        }
    }

    // Kept out of line so that the LRU path stays small enough to inline into lookups.
    #[inline(never)]
    fn lfu_touch(&mut self, field: &mut u32, now_ms: u64) {
        let counter = self.decayed(*field, now_ms);
        let r = self.rng.unit();
        let counter = log_incr(counter, self.policy.log_factor, r);
        *field = (minutes(now_ms) << 8) | counter;
    }

    /// The LFU counter of `field` after the decay due by `now_ms` (OBJECT FREQ).
    pub fn decayed(&self, field: u32, now_ms: u64) -> u32 {
        decr_and_return(field, self.policy.decay_time, minutes(now_ms))
    }
}

/// Raises `counter` by one with probability 1 / ((counter - LFU_INIT_VAL) * factor + 1),
/// saturating at 255 (LFULogIncr); `r` is uniform in [0, 1).
pub fn log_incr(counter: u32, factor: u32, r: f64) -> u32 {
    if counter >= 255 {
        return 255;
    }
    let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (base * factor as f64 + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// The counter of `field` less one per `decay_time` minutes elapsed since its decrement
/// time, at minute `now` (LFUDecrAndReturn, with LFUTimeElapsed's wrap-around).
pub fn decr_and_return(field: u32, decay_time: u32, now: u32) -> u32 {
    let last = (field >> 8) & 0xffff;
    let counter = field & 0xff;
    let elapsed = if now >= last {
        now - last
    } else {
        65535 - last + now
    };
    let periods = elapsed.checked_div(decay_time).unwrap_or(0);
    counter.saturating_sub(periods)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_grows_logarithmically() {
        assert_eq!(log_incr(255, 10, 0.0), 255);
        assert_eq!(
            log_incr(3, 10, 0.99),
            4,
            "below the initial value it always grows"
        );
        assert_eq!(log_incr(5, 10, 0.99), 6, "at the initial value p is 1");
        // At 15 with factor 10, p = 1/101.
        assert_eq!(log_incr(15, 10, 0.0098), 16);
        assert_eq!(log_incr(15, 10, 0.0100), 15);
        // Redis's table for factor 10: about 1M hits reach 255; 100 hits reach about 10.
        let mut clock = AccessClock::new(42);
        clock.set_policy(AccessPolicy {
            lfu: true,
            log_factor: 10,
            decay_time: 1,
        });
        let mut field = clock.initial(0, 0);
        for _ in 0..100 {
            clock.touch(&mut field, 0, 0);
        }
        let c = field & 0xff;
        assert!((8..=14).contains(&c), "100 hits gave {c}");
    }

    #[test]
    fn the_counter_decays_with_time() {
        let field = (100 << 8) | 20;
        assert_eq!(decr_and_return(field, 1, 100), 20);
        assert_eq!(decr_and_return(field, 1, 107), 13);
        assert_eq!(decr_and_return(field, 2, 107), 17);
        assert_eq!(decr_and_return(field, 0, 60000), 20, "0 never decays");
        assert_eq!(decr_and_return(field, 1, 500), 0);
        // The minute clock wraps at 2^16.
        let late = (65530 << 8) | 20;
        assert_eq!(decr_and_return(late, 1, 3), 12);
    }

    #[test]
    fn lru_records_the_clock() {
        let mut clock = AccessClock::new(1);
        let mut field = clock.initial(7, 0);
        assert_eq!(field, 7);
        clock.touch(&mut field, 9, 0);
        assert_eq!(field, 9);
    }
}
