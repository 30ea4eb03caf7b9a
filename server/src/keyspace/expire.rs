//! Active expiry (Redis's activeExpireCycle), active rehashing and the keyspace counters
//! INFO shows.

use super::Keyspace;
use crate::clock::unix_ms;
use std::time::{Duration, Instant};

/// Most hash fields one cycle removes in a database (Redis's fields quota).
const FIELDS_PER_CYCLE: usize = 1000;

/// Active expiry's tuning under active-expire-effort, rescaled as Redis's
/// activeExpireCycle does from effort 1 (the default) to 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpireEffort {
    /// Keys with an expiry sampled per round: 20, plus 5 per step of effort.
    pub keys_per_round: usize,
    /// Percent of each cron period the slow cycle may take: 25, plus 2 per step.
    pub time_percent: u64,
    /// Percent of due keys in the rounds so far under which a database is left: 10, less
    /// 1 per step.
    pub acceptable_stale_percent: usize,
}

impl ExpireEffort {
    /// The tuning of `effort` (clamped to 1..=10).
    pub fn of(effort: u32) -> ExpireEffort {
        let steps = effort.clamp(1, 10) as usize - 1;
        ExpireEffort {
            keys_per_round: 20 + 20 / 4 * steps,
            time_percent: 25 + 2 * steps as u64,
            acceptable_stale_percent: 10 - steps,
        }
    }

    /// The time one slow cycle may take at `hz` cron runs a second.
    pub fn slow_cycle_budget(&self, hz: u32) -> Duration {
        Duration::from_micros(self.time_percent * 1_000_000 / hz.max(1) as u64 / 100)
    }
}

/// Keyspace counters for INFO stats.
#[derive(Debug, Default, Clone)]
pub struct KeyspaceStats {
    /// expired_keys
    pub expired_keys: u64,
    /// keyspace_hits
    pub keyspace_hits: u64,
    /// keyspace_misses
    pub keyspace_misses: u64,
    /// expired_time_cap_reached_count: active expiry cycles stopped by their time budget.
    pub expire_time_cap_reached: u64,
    /// Microseconds spent in active expiry (expire_cycle_cpu_milliseconds).
    pub expire_cycle_micros: u64,
    /// Estimated share of keys with an expiry that are due but not removed yet
    /// (expired_stale_perc / 100): each cycle's due / sampled, averaged at 5% a cycle.
    pub expired_stale: f64,
}

impl Keyspace {
    /// Active expiry: samples keys with an expiry in every database and removes those due,
    /// repeating while the share of due keys among those sampled in the database is above
    /// what `effort` accepts, within a time budget (Redis's slow activeExpireCycle).
    pub fn active_expire(&mut self, effort: ExpireEffort, budget: Duration) {
        if !self.active_expire_enabled || self.expiry_held {
            // Held by a write pause too, as Redis's activeExpireCycle.
            return;
        }
        let start = Instant::now();
        let now = unix_ms();
        let (mut sampled, mut stale) = (0, 0);
        for db in 0..self.dbs.len() {
            self.expire_fields_actively(db, now, FIELDS_PER_CYCLE);
            loop {
                let volatile = self.dbs[db].volatile_len();
                if volatile == 0 {
                    break;
                }
                let sample = volatile.min(effort.keys_per_round);
                let mut due = Vec::new();
                for _ in 0..sample {
                    let n = self.random() as usize;
                    let d = &self.dbs[db];
                    if let Some(key) = d.volatile_key(n) {
                        if d.find(key).is_some_and(|slot| d.expired(slot, now)) {
                            due.push(key.to_vec());
                        }
                    }
                }
                let expired = due.len();
                sampled += sample;
                stale += expired;
                for key in due {
                    self.expire_if_needed(db, &key, now);
                }
                if expired * 100 / sample <= effort.acceptable_stale_percent {
                    break;
                }
                if start.elapsed() > budget {
                    self.stats.expire_time_cap_reached += 1;
                    break;
                }
            }
        }
        self.stats.expire_cycle_micros += start.elapsed().as_micros() as u64;
        let this_cycle = if sampled == 0 {
            0.0
        } else {
            stale as f64 / sampled as f64
        };
        self.stats.expired_stale = this_cycle * 0.05 + self.stats.expired_stale * 0.95;
    }

    /// Active rehashing, as Redis's incrementallyRehash: moves keys of the key-table
    /// resizes in progress, 100 index groups at a time, until `budget` is spent, so a
    /// resize the commands started ends even when few writes follow it.
    pub fn rehash_step(&mut self, budget: Duration) {
        let start = Instant::now();
        for db in &mut self.dbs {
            while db.rehash_step(100) {
                if start.elapsed() >= budget {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::Value;

    #[test]
    fn effort_rescales_as_redis_active_expire_cycle() {
        let low = ExpireEffort::of(1);
        assert_eq!((low.keys_per_round, low.time_percent), (20, 25));
        assert_eq!(low.acceptable_stale_percent, 10);
        assert_eq!(low.slow_cycle_budget(10), Duration::from_millis(25));
        let high = ExpireEffort::of(10);
        assert_eq!((high.keys_per_round, high.time_percent), (65, 43));
        assert_eq!(high.acceptable_stale_percent, 1);
        assert_eq!(high.slow_cycle_budget(100), Duration::from_micros(4_300));
        assert_eq!(ExpireEffort::of(0), low);
    }

    #[test]
    fn active_expiry_removes_due_keys_and_keeps_the_others() {
        let mut ks = Keyspace::new(1);
        for i in 0..200u32 {
            let key = format!("k{i}");
            ks.store(0, key.as_bytes(), Value::empty_zset());
            if i < 150 {
                ks.set_expiry(0, key.as_bytes(), 1);
            }
        }
        ks.active_expire(ExpireEffort::of(1), Duration::from_secs(10));
        assert_eq!(ks.db(0).len(), 50);
        assert_eq!(ks.stats().expired_keys, 150);
        let stale = ks.stats().expired_stale;
        assert!(
            stale > 0.0 && stale <= 0.05,
            "5% of the cycle's due share: {stale}"
        );
        ks.active_expire(ExpireEffort::of(1), Duration::from_secs(10));
        assert!(
            ks.stats().expired_stale < stale,
            "nothing due: the estimate decays"
        );
    }
}
