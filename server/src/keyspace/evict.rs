//! Eviction under maxmemory, as Redis's evict.c: the eight policies, the eviction pool
//! (evictionPoolPopulate) and the loop that deletes keys until the figure is back under
//! the limit (performEvictions). Big values go to the lazy-free thread, as any delete.

use super::Keyspace;

/// maxmemory-policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Refuse writes that may grow memory.
    NoEviction,
    /// The least recently used key of all.
    AllKeysLru,
    /// The least frequently used key of all.
    AllKeysLfu,
    /// Any key.
    AllKeysRandom,
    /// The least recently used key with an expiry.
    VolatileLru,
    /// The least frequently used key with an expiry.
    VolatileLfu,
    /// Any key with an expiry.
    VolatileRandom,
    /// The key with an expiry due soonest.
    VolatileTtl,
}

impl Policy {
    /// Every policy with its redis.conf name.
    pub const NAMES: [(&'static str, Policy); 8] = [
        ("volatile-lru", Policy::VolatileLru),
        ("volatile-lfu", Policy::VolatileLfu),
        ("volatile-random", Policy::VolatileRandom),
        ("volatile-ttl", Policy::VolatileTtl),
        ("allkeys-lru", Policy::AllKeysLru),
        ("allkeys-lfu", Policy::AllKeysLfu),
        ("allkeys-random", Policy::AllKeysRandom),
        ("noeviction", Policy::NoEviction),
    ];

    /// The redis.conf name.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, p)| *p == self)
            .expect("every policy is named")
            .0
    }

    /// Whether the policy tracks frequencies (MAXMEMORY_FLAG_LFU).
    pub fn is_lfu(self) -> bool {
        matches!(self, Policy::AllKeysLfu | Policy::VolatileLfu)
    }

    /// Whether only keys with an expiry are candidates.
    fn volatile(self) -> bool {
        matches!(
            self,
            Policy::VolatileLru
                | Policy::VolatileLfu
                | Policy::VolatileRandom
                | Policy::VolatileTtl
        )
    }
}

/// Candidates kept between evictions (EVPOOL_SIZE).
const POOL_SIZE: usize = 16;

/// Keys freed between two readings of the memory figure while the lazy-free thread has
/// work (Redis checks every 16).
const RECHECK_EVERY: u64 = 16;

/// A candidate: the higher `idle`, the better a victim.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    idle: u64,
    db: usize,
    key: Vec<u8>,
}

/// The eviction pool, ascending by idleness, and the round-robin database of the random
/// policies.
#[derive(Debug, Default)]
pub struct Evictor {
    pool: Vec<Candidate>,
    next_db: usize,
}

/// What one round of eviction achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Keys deleted.
    pub keys: u64,
    /// Whether the figure is (estimated) back under the limit; false when no candidate was
    /// left (Redis's EVICT_FAIL).
    pub enough: bool,
    /// The request's deadline stopped it before it freed enough (Redis's EVICT_RUNNING).
    pub timed_out: bool,
}

/// What eviction is asked for: the policy, its sample size, and the bytes to free.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// maxmemory-policy.
    pub policy: Policy,
    /// maxmemory-samples.
    pub samples: usize,
    /// Bytes over the limit.
    pub to_free: u64,
    /// When to stop and let the command run (the next command evicts the rest).
    pub deadline: Option<std::time::Instant>,
}

impl Evictor {
    /// Adds to the pool the best of `samples` keys sampled from database `db`
    /// (evictionPoolPopulate); returns the number of candidate keys the database has.
    fn populate(&mut self, ks: &mut Keyspace, db: usize, policy: Policy, samples: usize) -> usize {
        let volatile = policy.volatile();
        let size = if volatile {
            ks.db(db).volatile_len()
        } else {
            ks.db(db).len()
        };
        if size == 0 {
            return 0;
        }
        let now_ms = crate::clock::unix_ms();
        let clock = ks.clock_secs_at(now_ms);
        // How good a victim a key is, from its access field and expiry.
        let idle = |ks: &Keyspace, accessed: u32, expire_at: Option<u64>| match policy {
            Policy::VolatileTtl => u64::MAX - expire_at.unwrap_or(u64::MAX),
            p if p.is_lfu() => 255 - ks.access.decayed(accessed, now_ms) as u64,
            _ => super::lfu::idle_secs(clock, accessed) as u64 * 1000,
        };
        // As dictGetSomeKeys, a database no bigger than the sample gives all its keys.
        let whole = size <= samples;
        if !volatile && !whole {
            // Neighbouring slots from a random one, as dictGetSomeKeys.
            let seed = ks.random();
            let ks = &*ks;
            ks.db(db).sample(seed, samples, |key, accessed, expire_at| {
                let idle = idle(ks, accessed, expire_at);
                self.offer(idle, db, key);
            });
            return size;
        }
        for n in 0..samples.min(size) {
            let r = if whole { n as u64 } else { ks.random() };
            let key = if volatile {
                ks.db(db).volatile_key(r as usize)
            } else {
                ks.db(db).iter().nth(n).map(|e| e.key())
            };
            let Some(key) = key else { continue };
            let (accessed, expire_at) = ks
                .db(db)
                .access_and_expiry(key)
                .expect("a sampled key exists");
            let idle = idle(ks, accessed, expire_at);
            self.offer(idle, db, key);
        }
        size
    }

    /// Offers `key` of idleness `idle` to the pool, copying the key only when it enters.
    fn offer(&mut self, idle: u64, db: usize, key: &[u8]) {
        if self.pool.len() == POOL_SIZE && self.pool[0].idle >= idle {
            return;
        }
        self.insert(Candidate {
            idle,
            db,
            key: key.to_vec(),
        });
    }

    /// Inserts a candidate in idleness order; when the pool is full the least idle one
    /// leaves, or the newcomer is dropped if it is less idle than all.
    fn insert(&mut self, candidate: Candidate) {
        let k = self.pool.partition_point(|c| c.idle < candidate.idle);
        if self.pool.len() < POOL_SIZE {
            self.pool.insert(k, candidate);
        } else if k > 0 {
            self.pool.remove(0);
            self.pool.insert(k - 1, candidate);
        }
    }

    /// The best victim: the most idle candidate of the pool whose key is still a candidate
    /// (refilling the pool from every database until one is found), or a random key.
    fn pick(
        &mut self,
        ks: &mut Keyspace,
        policy: Policy,
        samples: usize,
    ) -> Option<(usize, Vec<u8>)> {
        let dbs = ks.db_count();
        if matches!(policy, Policy::AllKeysRandom | Policy::VolatileRandom) {
            for _ in 0..dbs {
                self.next_db = (self.next_db + 1) % dbs;
                let db = self.next_db;
                let r = ks.random();
                let key = if policy.volatile() {
                    ks.db(db).volatile_key(r as usize).map(<[u8]>::to_vec)
                } else {
                    ks.random_key(db, crate::clock::unix_ms())
                };
                if let Some(key) = key {
                    return Some((db, key));
                }
            }
            return None;
        }
        loop {
            let mut total = 0;
            for db in 0..dbs {
                total += self.populate(ks, db, policy, samples);
            }
            if total == 0 {
                return None;
            }
            while let Some(c) = self.pool.pop() {
                let alive = ks
                    .db(c.db)
                    .access_and_expiry(&c.key)
                    .is_some_and(|(_, at)| !policy.volatile() || at.is_some());
                if alive {
                    return Some((c.db, c.key));
                }
            }
        }
    }

    /// Deletes keys as `request` says until about `to_free` bytes (the engine's figure of
    /// each key) are freed or no candidate is left. `over_limit` reads the real figure
    /// again, consulted while the lazy-free thread has big values in hand.
    pub fn evict(
        &mut self,
        ks: &mut Keyspace,
        request: Request,
        mut over_limit: impl FnMut(&Keyspace) -> bool,
    ) -> Evicted {
        let mut freed = 0u64;
        let mut keys = 0u64;
        if request.policy == Policy::NoEviction {
            return Evicted {
                keys,
                enough: false,
                timed_out: false,
            };
        }
        while freed < request.to_free {
            let Some((db, key)) = self.pick(ks, request.policy, request.samples) else {
                return Evicted {
                    keys,
                    enough: false,
                    timed_out: false,
                };
            };
            freed += ks.db(db).memory_usage(&key).unwrap_or(0) as u64;
            let deleting = (crate::latency::threshold() != 0).then(std::time::Instant::now);
            ks.delete_by_server(db, &key, super::Cause::Evicted);
            if let Some(started) = deleting {
                crate::latency::sample("eviction-del", started.elapsed());
            }
            ks.notifier
                .fire(crate::pubsub::notify::EVICTED, "evicted", db, &key);
            keys += 1;
            if keys.is_multiple_of(RECHECK_EVERY) {
                if ks.lazyfree_pending() > 0 && !over_limit(ks) {
                    break;
                }
                if request
                    .deadline
                    .is_some_and(|d| std::time::Instant::now() >= d)
                {
                    return Evicted {
                        keys,
                        enough: true,
                        timed_out: true,
                    };
                }
            }
        }
        Evicted {
            keys,
            enough: true,
            timed_out: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::Value;

    fn keyspace(n: usize) -> Keyspace {
        let mut ks = Keyspace::new(2);
        for i in 0..n {
            ks.store(i % 2, format!("k{i}").as_bytes(), Value::empty_zset());
        }
        ks
    }

    #[test]
    fn the_pool_keeps_the_most_idle_in_order() {
        let mut ev = Evictor::default();
        for idle in [5u64, 1, 9, 3, 7] {
            ev.insert(Candidate {
                idle,
                db: 0,
                key: vec![idle as u8],
            });
        }
        let idles: Vec<u64> = ev.pool.iter().map(|c| c.idle).collect();
        assert_eq!(idles, vec![1, 3, 5, 7, 9]);
        for idle in 10..30u64 {
            ev.insert(Candidate {
                idle,
                db: 0,
                key: vec![],
            });
        }
        assert_eq!(ev.pool.len(), POOL_SIZE);
        assert_eq!(ev.pool[0].idle, 14, "the least idle left");
        ev.insert(Candidate {
            idle: 2,
            db: 0,
            key: vec![],
        });
        assert_eq!(ev.pool[0].idle, 14, "a less idle newcomer is dropped");
    }

    #[test]
    fn volatile_ttl_takes_the_soonest_expiry() {
        let mut ks = keyspace(10);
        for (i, at) in [(3, 5_000u64), (4, 1_000), (7, 9_000)] {
            assert!(ks.set_expiry(i % 2, format!("k{i}").as_bytes(), at));
        }
        let mut ev = Evictor::default();
        let request = Request {
            policy: Policy::VolatileTtl,
            samples: 10,
            to_free: 1,
            deadline: None,
        };
        assert_eq!(
            ev.evict(&mut ks, request, |_| true),
            Evicted {
                keys: 1,
                enough: true,
                timed_out: false
            }
        );
        assert!(ks.db(0).get(b"k4").is_none());
        ev.evict(&mut ks, request, |_| true);
        assert!(ks.db(1).get(b"k3").is_none());
        ev.evict(&mut ks, request, |_| true);
        let left = ev.evict(&mut ks, request, |_| true);
        assert_eq!(
            left,
            Evicted {
                keys: 0,
                enough: false,
                timed_out: false
            },
            "no volatile key left"
        );
        assert_eq!(ks.db(0).len() + ks.db(1).len(), 7);
    }

    #[test]
    fn lru_prefers_keys_not_touched_lately() {
        let mut ks = keyspace(40);
        ks.started_ms -= 2_000_000;
        // The even keys were touched at second 1000, the odd ones at 0.
        for db in 0..2 {
            let keys: Vec<Vec<u8>> = ks.db(db).iter().map(|e| e.key().to_vec()).collect();
            for key in keys {
                let id = ks.dbs[db].find(&key).unwrap();
                let even = key[1..]
                    .iter()
                    .fold(0u32, |n, d| n * 10 + (d - b'0') as u32)
                    % 2
                    == 0;
                ks.dbs[db].set_clock(id, if even { 1000 } else { 10 });
            }
        }
        let mut ev = Evictor::default();
        let request = Request {
            policy: Policy::AllKeysLru,
            samples: 40,
            to_free: 1,
            deadline: None,
        };
        for _ in 0..20 {
            ev.evict(&mut ks, request, |_| true);
        }
        assert_eq!(ks.db(0).len() + ks.db(1).len(), 20);
        assert!(
            ks.entries().all(|e| e.accessed() == 1000),
            "only the touched keys stay"
        );
    }

    #[test]
    fn random_policies_and_noeviction() {
        let mut ks = keyspace(10);
        let mut ev = Evictor::default();
        let req = |policy| Request {
            policy,
            samples: 5,
            to_free: 1,
            deadline: None,
        };
        assert!(!ev.evict(&mut ks, req(Policy::NoEviction), |_| true).enough);
        assert!(
            !ev.evict(&mut ks, req(Policy::VolatileRandom), |_| true)
                .enough
        );
        for _ in 0..10 {
            assert!(
                ev.evict(&mut ks, req(Policy::AllKeysRandom), |_| true)
                    .enough
            );
        }
        assert!(
            !ev.evict(&mut ks, req(Policy::AllKeysRandom), |_| true)
                .enough
        );
    }
}
