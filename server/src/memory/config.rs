//! The memory directives: maxmemory, maxmemory-policy, maxmemory-samples, lfu-log-factor
//! and lfu-decay-time, with Redis's defaults.

use crate::keyspace::evict::Policy;
use crate::keyspace::lfu::AccessPolicy;

/// The memory limit and how it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryConfig {
    /// maxmemory, bytes (0: no limit).
    pub maxmemory: u64,
    /// maxmemory-policy.
    pub policy: Policy,
    /// maxmemory-samples: keys sampled per database to refill the eviction pool.
    pub samples: u32,
    /// maxmemory-eviction-tenacity: how long one round of eviction may run (0 to 100).
    pub eviction_tenacity: u32,
    /// lfu-log-factor.
    pub lfu_log_factor: u32,
    /// lfu-decay-time, minutes.
    pub lfu_decay_time: u32,
    /// maxmemory-clients: the limit on the memory of the normal and pubsub clients.
    pub clients: crate::clients::memory::ClientsLimit,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            maxmemory: 0,
            policy: Policy::NoEviction,
            samples: 5,
            eviction_tenacity: 10,
            lfu_log_factor: 10,
            lfu_decay_time: 1,
            clients: Default::default(),
        }
    }
}

impl MemoryConfig {
    /// How the keyspace records accesses under this configuration.
    pub fn access_policy(&self) -> AccessPolicy {
        AccessPolicy {
            lfu: self.policy.is_lfu(),
            log_factor: self.lfu_log_factor,
            decay_time: self.lfu_decay_time,
        }
    }

    /// Whether Redis would share its small integer objects under this configuration: not
    /// when a limit is set with an LRU or LFU policy, which needs each key's own access
    /// clock (Redis's MAXMEMORY_FLAG_NO_SHARED_INTEGERS).
    pub fn shares_integers(&self) -> bool {
        self.maxmemory == 0
            || !matches!(
                self.policy,
                Policy::AllKeysLru | Policy::VolatileLru | Policy::AllKeysLfu | Policy::VolatileLfu
            )
    }

    /// How long one round of eviction may run before the command goes on (the rest is
    /// evicted before the next commands), as Redis's evictionTimeLimitUs: 50 us a step up
    /// to 10, then 15% more a step; None (no limit) at 100.
    pub fn eviction_time_limit(&self) -> Option<std::time::Duration> {
        let t = self.eviction_tenacity;
        let micros = match t {
            100.. => return None,
            0..=10 => 50.0 * t as f64,
            _ => 500.0 * 1.15f64.powi(t as i32 - 10),
        };
        Some(std::time::Duration::from_micros(micros as u64))
    }

    /// The policy named `name` (a maxmemory-policy value, lower case).
    pub fn policy_named(name: &str) -> Option<Policy> {
        Policy::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, p)| p)
    }

    /// The policy names in redis.conf's order (for the error listing them).
    pub fn policy_names() -> [&'static str; 8] {
        Policy::NAMES.map(|(n, _)| n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn tenacity_as_redis_scales_it() {
        let limit = |t| {
            MemoryConfig {
                eviction_tenacity: t,
                ..Default::default()
            }
            .eviction_time_limit()
        };
        assert_eq!(limit(0), Some(Duration::ZERO));
        assert_eq!(limit(10), Some(Duration::from_micros(500)));
        assert_eq!(limit(11), Some(Duration::from_micros(575)));
        assert_eq!(limit(100), None);
        for name in MemoryConfig::policy_names() {
            assert_eq!(MemoryConfig::policy_named(name).unwrap().name(), name);
        }
    }
}
