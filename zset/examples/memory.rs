//! Measures `memory_bytes()` per member for the two headline workloads:
//!
//! * W1: members "0".."999999" with score equal to the member;
//! * W2: members "m:" + 12 random lowercase hex characters with random
//!   integer scores in [0, 2^32);
//!
//! as loaded and after `optimize(0.97)` (and 1.0). Run with
//! `cargo run --release -p goblin-zset --example memory [members]`.

use std::time::Instant;

use goblin_zset::{Config, ZSet};

/// A small deterministic generator (splitmix64), so runs are repeatable.
mod common;

struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        let z = common::mix(self.0);
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z
    }
}

fn report(name: &str, z: &mut ZSet) {
    let n = z.len() as f64;
    let loaded = z.memory_bytes() as f64 / n;
    let t = Instant::now();
    z.optimize(0.97);
    let took = t.elapsed();
    let optimized = z.memory_bytes() as f64 / n;
    let mut full = z.clone();
    full.optimize(1.0);
    let dense = full.memory_bytes() as f64 / n;
    println!(
        "{name}: {} members, {loaded:.2} B/member as loaded, {optimized:.2} after optimize(0.97) ({took:?}), {dense:.2} after optimize(1.0)",
        z.len()
    );
}

fn main() {
    let members: u32 = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("member count"));
    let cfg = Config::default();

    let mut w1 = ZSet::new();
    let t = Instant::now();
    for i in 0..members {
        w1.insert(i.to_string().as_bytes(), f64::from(i), &cfg);
    }
    println!("W1 load {:?}", t.elapsed());
    report("W1 integer-like members, score = member", &mut w1);
    drop(w1);

    let mut rng = SplitMix(42);
    let mut w2 = ZSet::new();
    let t = Instant::now();
    while w2.len() < members as usize {
        let member = format!("m:{:012x}", rng.next() >> 16);
        let score = (rng.next() >> 32) as f64;
        w2.insert(member.as_bytes(), score, &cfg);
    }
    println!("W2 load {:?}", t.elapsed());
    report("W2 \"m:\"+12 hex, scores in [0, 2^32)", &mut w2);
    drop(w2);

    // W4: many keys of 10 and of 200 members (heap bytes only; the
    // keyspace entry and the inline ZSet header are the server's).
    for size in [10usize, 200] {
        let keys = 1000;
        let mut sets: Vec<ZSet> = (0..keys).map(|_| ZSet::new()).collect();
        for z in &mut sets {
            while z.len() < size {
                let member = format!("m:{:012x}", rng.next() >> 16);
                z.insert(member.as_bytes(), (rng.next() >> 32) as f64, &cfg);
            }
        }
        let members = (keys * size) as f64;
        let loaded: usize = sets.iter().map(ZSet::memory_bytes).sum();
        sets.iter_mut().for_each(|z| z.optimize(0.97));
        let optimized: usize = sets.iter().map(ZSet::memory_bytes).sum();
        println!(
            "W4 {keys} keys x {size} members ({}): {:.2} B/member as loaded, {:.2} after optimize(0.97)",
            sets[0].encoding().as_str(),
            loaded as f64 / members,
            optimized as f64 / members
        );
    }
}
