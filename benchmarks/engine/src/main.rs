//! zset-bench: times the engine's operations in process, with no network or protocol.
//!
//! Builds a set of `--members` members ("m:" + 12 hex digits from a seeded generator) and
//! runs `--ops` of each operation against it: insert (into a fresh set, growing to
//! `--members`), score lookup, rank, range by rank (16 members), range by score (16 members
//! from a random score), remove (each removed member is re-inserted, untimed, so the set
//! keeps its size). Reports nanoseconds per operation, as text or JSON.

use clap::{Parser, ValueEnum};
use goblin_zset::{Config, ScoreBound, ScoreRange, ZSet};
use std::hint::black_box;
use std::time::Instant;

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ScoreShape {
    /// Random integers in [0, 2^32).
    Integer,
    /// Random non-integer doubles.
    Float,
}

#[derive(Parser)]
#[command(about = "Micro-benchmark of the goblin-zset engine")]
struct Args {
    /// Members in the set.
    #[arg(long, default_value_t = 100_000)]
    members: usize,
    /// Operations timed per benchmark.
    #[arg(long, default_value_t = 1_000_000)]
    ops: usize,
    /// Score distribution.
    #[arg(long, value_enum, default_value_t = ScoreShape::Integer)]
    score_shape: ScoreShape,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Call optimize(0.97) after building the set, as GOBLIN.OPTIMIZE does.
    #[arg(long)]
    optimize: bool,
}

/// A small deterministic generator (splitmix64), so every run sees the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn score(rng: &mut Rng, shape: ScoreShape) -> f64 {
    match shape {
        ScoreShape::Integer => (rng.next() >> 32) as f64,
        ScoreShape::Float => (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 1e9,
    }
}

/// Times `ops` calls of `f(i)`; returns nanoseconds per call.
fn time(ops: usize, mut f: impl FnMut(usize)) -> f64 {
    let start = Instant::now();
    for i in 0..ops {
        f(i);
    }
    start.elapsed().as_nanos() as f64 / ops as f64
}

fn main() {
    let args = Args::parse();
    let cfg = Config::default();
    let mut rng = Rng(42);
    let members: Vec<Vec<u8>> = (0..args.members)
        .map(|_| format!("m:{:012x}", rng.next() >> 16).into_bytes())
        .collect();
    let scores: Vec<f64> = (0..args.members)
        .map(|_| score(&mut rng, args.score_shape))
        .collect();
    let probes: Vec<usize> = (0..args.ops)
        .map(|_| (rng.next() % args.members as u64) as usize)
        .collect();

    let mut results: Vec<(&str, f64)> = Vec::new();
    let mut set = ZSet::new();
    let insert_ns = time(args.members, |i| {
        set.insert(&members[i], scores[i], &cfg);
    });
    results.push(("insert", insert_ns));
    if args.optimize {
        set.optimize(0.97);
    }
    results.push((
        "score",
        time(args.ops, |i| {
            black_box(set.score(&members[probes[i]]));
        }),
    ));
    results.push((
        "rank",
        time(args.ops, |i| {
            black_box(set.rank(&members[probes[i]]));
        }),
    ));
    let len = set.len();
    results.push((
        "range_by_rank_16",
        time(args.ops, |i| {
            let start = probes[i] % len.saturating_sub(16).max(1);
            for item in set.iter_ranks(start..(start + 16).min(len)) {
                black_box(item);
            }
        }),
    ));
    results.push((
        "range_by_score_16",
        time(args.ops, |i| {
            let range = ScoreRange {
                min: ScoreBound {
                    value: scores[probes[i]],
                    exclusive: false,
                },
                max: ScoreBound {
                    value: f64::INFINITY,
                    exclusive: false,
                },
            };
            let ranks = set.score_range_ranks(&range);
            let end = (ranks.start + 16).min(ranks.end);
            for item in set.iter_ranks(ranks.start..end) {
                black_box(item);
            }
        }),
    ));
    // Remove, timing only the removal; each member goes back untimed so the size holds.
    let mut removed_ns = 0u128;
    for &p in &probes {
        let start = Instant::now();
        let old = set.remove(&members[p]);
        removed_ns += start.elapsed().as_nanos();
        if let Some(s) = old {
            set.insert(&members[p], s, &cfg);
        }
    }
    results.push(("remove", removed_ns as f64 / args.ops as f64));
    let bytes_per_member = set.memory_bytes() as f64 / len as f64;

    match args.format {
        Format::Text => {
            println!(
                "members {} ops {} memory {:.1} B/member",
                args.members, args.ops, bytes_per_member
            );
            for (name, ns) in &results {
                println!("{name:<18} {ns:>9.1} ns/op");
            }
        }
        Format::Json => {
            let body: Vec<String> = results
                .iter()
                .map(|(n, ns)| format!("\"{n}\": {ns:.1}"))
                .collect();
            println!(
                "{{\"members\": {}, \"ops\": {}, \"bytes_per_member\": {:.1}, \"ns_per_op\": {{{}}}}}",
                args.members,
                args.ops,
                bytes_per_member,
                body.join(", ")
            );
        }
    }
}
