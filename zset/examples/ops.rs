//! Rough per-operation timings of the engine on one large set (members
//! "m:" + 12 hex, integer scores in [0, 2^32)), after `optimize(0.97)`.
//! Run with `cargo run --release -p goblin-zset --example ops [members]`.

use std::hint::black_box;
use std::time::Instant;

use goblin_zset::{Config, ScoreBound, ScoreRange, ZSet};

mod common;
use common::mix;

fn member(i: u64) -> Vec<u8> {
    format!("m:{:012x}", mix(i) >> 16).into_bytes()
}

fn time(name: &str, ops: u64, mut f: impl FnMut(u64)) {
    let t = Instant::now();
    for i in 0..ops {
        f(i);
    }
    let ns = t.elapsed().as_nanos() as f64 / ops as f64;
    println!("{name:<28} {ns:>8.0} ns/op");
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(1_000_000, |a| a.parse().expect("members"));
    let cfg = Config::default();
    let members: Vec<Vec<u8>> = (0..n).map(member).collect();
    let mut z = ZSet::new();
    time("insert (new)", n, |i| {
        z.insert(&members[i as usize], (mix(!i) >> 32) as f64, &cfg);
    });
    z.optimize(0.97);
    let ops = 1_000_000;
    let pick = |i: u64| &members[(mix(i ^ 0x55) % n) as usize];
    let std_map: std::collections::HashMap<&[u8], f64> =
        members.iter().map(|m| (m.as_slice(), 1.0)).collect();
    time("std HashMap get (baseline)", ops, |i| {
        black_box(std_map.get(pick(i).as_slice()));
    });
    drop(std_map);
    time("score (hit)", ops, |i| {
        black_box(z.score(pick(i)));
    });
    time("score (miss)", ops, |i| {
        black_box(z.score(format!("x:{i:012x}").as_bytes()));
    });
    time("rank", ops, |i| {
        black_box(z.rank(pick(i)));
    });
    time("get_by_rank", ops, |i| {
        black_box(z.get_by_rank((mix(i) % n) as usize));
    });
    time("iter_ranks 16", ops, |i| {
        let start = (mix(i) % n) as usize;
        black_box(z.iter_ranks(start..start + 16).count());
    });
    time("score_range_ranks", ops, |i| {
        let lo = (mix(i) >> 32) as f64;
        let r = ScoreRange {
            min: ScoreBound {
                value: lo,
                exclusive: false,
            },
            max: ScoreBound {
                value: lo + 1e6,
                exclusive: true,
            },
        };
        black_box(z.score_range_ranks(&r));
    });
    time("update score", ops, |i| {
        z.insert(pick(i), (mix(i ^ 7) >> 32) as f64, &cfg);
    });
    time("remove + re-insert", ops, |i| {
        let m = pick(i);
        let s = z.remove(m).expect("present");
        z.insert(m, s, &cfg);
    });
    full_scan("full scan, COUNT 10, 0.97", &z);
    z.optimize(1.0);
    time("score (miss) at density 1.0", ops, |i| {
        black_box(z.score(format!("x:{i:012x}").as_bytes()));
    });
    full_scan("full scan, COUNT 10, 1.0", &z);
}

fn full_scan(name: &str, z: &ZSet) {
    let mut out = Vec::new();
    let mut cursor = 0;
    let mut seen = 0;
    let t = Instant::now();
    loop {
        out.clear();
        cursor = z.scan(cursor, 10, &mut out);
        seen += out.len();
        if cursor == 0 {
            break;
        }
    }
    println!("{name:<28} {:?} ({seen} members)", t.elapsed());
}
