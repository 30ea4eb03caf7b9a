//! The engine's share of callgrind_requests.py's 1M sorted-set tests, without the server:
//! loads "element:%012d" with score i (ascending, 1,000 a ZADD, as the benchmark's
//! preload), then runs `requests` random ZADD updates (random member, random integer score
//! below the member count), ZSCORE and ZRANK lookups, each phase in its own function so
//! callgrind can count it alone:
//!
//! ```text
//! cargo build --release -p goblin-zset --example large_requests
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*phase_zadd*' \
//!   target/release/examples/large_requests 1000000 20000
//! ```

use std::hint::black_box;

use goblin_zset::{Config, ZSet};

mod common;
use common::mix;

fn member(i: u64) -> Vec<u8> {
    format!("element:{i:012}").into_bytes()
}

#[inline(never)]
fn phase_zadd(z: &mut ZSet, cfg: &Config, writes: &[(Vec<u8>, f64)]) {
    for (m, score) in writes {
        black_box(z.insert(m, *score, cfg));
    }
}

#[inline(never)]
fn phase_zscore(z: &ZSet, reads: &[Vec<u8>]) {
    for m in reads {
        black_box(z.score(m));
    }
}

#[inline(never)]
fn phase_zrank(z: &ZSet, reads: &[Vec<u8>]) {
    for m in reads {
        black_box(z.rank(m));
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("members"));
    let requests: u64 = args.next().map_or(20_000, |a| a.parse().expect("requests"));
    let cfg = Config::default();
    let mut z = ZSet::new();
    for start in (0..n).step_by(1000) {
        let end = (start + 1000).min(n);
        z.maybe_convert((end - start) as usize, &cfg);
        for i in start..end {
            z.insert(&member(i), i as f64, &cfg);
        }
    }
    let writes: Vec<(Vec<u8>, f64)> = (0..requests)
        .map(|i| (member(mix(2 * i) % n), (mix(2 * i + 1) % n) as f64))
        .collect();
    let reads: Vec<Vec<u8>> = (0..requests).map(|i| member(mix(!i) % n)).collect();
    phase_zadd(&mut z, &cfg, &writes);
    phase_zscore(&z, &reads);
    phase_zrank(&z, &reads);
    println!("{} members, memory {} B", z.len(), z.memory_bytes());
}
