//! Hit ratio of the store's SIEVE policy against plain LRU on Zipf traces (unit-size objects,
//! cache sizes of 1%, 5% and 10% of the key space). Run with
//! `cargo bench -p goblin-objcache --bench hit_ratio`.

use std::collections::{BTreeMap, HashMap};

use goblin_objcache::store::Sieve;

struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Zipf(alpha) over `n` keys by inversion of the cumulative distribution.
fn zipf_trace(n: usize, alpha: f64, len: usize, seed: u64) -> Vec<u64> {
    let mut cdf = Vec::with_capacity(n);
    let mut sum = 0.0;
    for k in 1..=n {
        sum += 1.0 / (k as f64).powf(alpha);
        cdf.push(sum);
    }
    let mut rng = Rng(seed);
    // Scatter ranks over key ids so popularity is not ordered by id.
    (0..len)
        .map(|_| {
            let u = rng.unit() * sum;
            let rank = cdf.partition_point(|&c| c < u) as u64;
            rank.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20
        })
        .collect()
}

fn sieve_hits(trace: &[u64], cap: usize) -> usize {
    let mut policy = Sieve::default();
    let mut by_key: HashMap<u64, u32> = HashMap::new();
    let mut by_id: Vec<u64> = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    let mut hits = 0;
    for &k in trace {
        if let Some(&id) = by_key.get(&k) {
            policy.touch(id);
            hits += 1;
            continue;
        }
        if by_key.len() == cap {
            let victim = policy.evict().expect("full cache has a victim");
            by_key.remove(&by_id[victim as usize]);
            free.push(victim);
        }
        let id = free.pop().unwrap_or_else(|| {
            by_id.push(0);
            by_id.len() as u32 - 1
        });
        by_id[id as usize] = k;
        by_key.insert(k, id);
        policy.insert(id);
    }
    hits
}

fn lru_hits(trace: &[u64], cap: usize) -> usize {
    let mut last: HashMap<u64, u64> = HashMap::new();
    let mut order: BTreeMap<u64, u64> = BTreeMap::new();
    let mut hits = 0;
    for (tick, &k) in trace.iter().enumerate() {
        let tick = tick as u64;
        if let Some(old) = last.insert(k, tick) {
            order.remove(&old);
            hits += 1;
        } else if last.len() > cap {
            let (_, victim) = order.pop_first().expect("non-empty");
            last.remove(&victim);
        }
        order.insert(tick, k);
    }
    hits
}

fn main() {
    let keys = 100_000;
    let len = 2_000_000;
    println!("| Zipf alpha | cache size | LRU hit ratio | SIEVE hit ratio | SIEVE - LRU |");
    println!("|---|---|---|---|---|");
    for alpha in [0.8, 0.99, 1.2] {
        let trace = zipf_trace(keys, alpha, len, 42);
        for pct in [1, 5, 10] {
            let cap = keys * pct / 100;
            let lru = lru_hits(&trace, cap) as f64 / len as f64;
            let sieve = sieve_hits(&trace, cap) as f64 / len as f64;
            println!(
                "| {alpha} | {pct}% ({cap}) | {:.2}% | {:.2}% | {:+.2} pts |",
                lru * 100.0,
                sieve * 100.0,
                (sieve - lru) * 100.0
            );
        }
    }
}
