//! keytable-bench: loads one key shape into one table, in process, and reports the resident
//! memory it took per key; then looks every key up `--rounds` times.
//!
//! Tables: `keytable` (goblin-zset's `KeyTable<Value>`, strings stored as this benchmark
//! encodes them) or `db` (the server's `Db`, which is itself a `KeyTable<Value>` since the
//! keyspace moved onto it; it was a slab of 72-byte entries behind a hashbrown index).
//! Shapes, as benchmarks/string_memory.py and
//! hash_memory.py load them over the network:
//!
//! * `s1`: keys "key:" + 12 digits, 16-byte string values (SET);
//! * `s2`: the same keys, integer values in [10,000, 10^9 + 10,000) (INCRBY);
//! * `h1`: keys "user:<n>", a 5-field profile hash each (name, email, age, city, score).
//!
//! RSS is read from /proc/self/status before and after loading (glibc malloc, as the
//! server). For instructions per lookup run it under callgrind with `--rounds 1` and
//! `--rounds 3` and divide the difference by twice the key count (see BENCHMARKS.md): the
//! lookup keys are built once, before the first round, so the difference is lookups alone.

use clap::{Parser, ValueEnum};
use goblin_server::keyspace::{Db, Hash, HashConfig, StringValue, Value};
use goblin_server::memory::allocator;
use goblin_zset::keytable::{self, KeyTable};
use std::hint::black_box;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Table {
    /// goblin-zset's KeyTable.
    Keytable,
    /// The server's Db.
    Db,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Shape {
    /// 16-byte keys, 16-byte strings.
    S1,
    /// 16-byte keys, integers above 10,000.
    S2,
    /// "user:<n>" keys, 5-field hashes.
    H1,
}

#[derive(Parser)]
#[command(about = "Key table memory and lookups beside the server's Db")]
struct Args {
    #[arg(long, value_enum)]
    table: Table,
    #[arg(long, value_enum)]
    shape: Shape,
    /// Keys to load.
    #[arg(long, default_value_t = 1_000_000)]
    keys: u64,
    /// Passes of lookups over every key, after loading.
    #[arg(long, default_value_t = 1)]
    rounds: u32,
}

/// splitmix64: the `i`-th key's random bits, so any key can be rebuilt from its number.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn key(shape: Shape, i: u64) -> Vec<u8> {
    match shape {
        Shape::H1 => format!("user:{i}").into_bytes(),
        _ => format!("key:{:012}", mix(i) % 1_000_000_000_000).into_bytes(),
    }
}

fn profile(i: u64) -> Hash {
    const NAMES: [&str; 5] = ["Ann", "Bob", "Carol", "Dmitri", "Eve"];
    let name = NAMES[(mix(i) % 5) as usize];
    let cfg = HashConfig::default();
    let mut h = Hash::new();
    h.set(b"name", name.as_bytes(), &cfg);
    h.set(
        b"email",
        format!("{}{i}@example.com", name.to_lowercase()).as_bytes(),
        &cfg,
    );
    h.set(b"age", (18 + mix(i) % 60).to_string().as_bytes(), &cfg);
    h.set(b"city", b"Lisbon", &cfg);
    h.set(b"score", (mix(i) % 100_000).to_string().as_bytes(), &cfg);
    h
}

/// The value of key `i`, as the server stores it.
fn value(shape: Shape, i: u64) -> Value {
    match shape {
        Shape::S1 => Value::Str(StringValue::from_set(
            format!("{:016x}", mix(!i)).as_bytes(),
        )),
        Shape::S2 => Value::Str(StringValue::from_int(
            10_000 + (mix(!i) % 1_000_000_000) as i64,
        )),
        Shape::H1 => Value::Hash(profile(i)),
    }
}

/// The value as the key table stores it: strings and integers inline, the rest on the heap.
fn table_value(shape: Shape, i: u64, text: &mut Vec<u8>) -> keytable::Value<'_, Value> {
    match value(shape, i) {
        Value::Str(s) => match s.as_int() {
            Some(v) if s.encoding().as_str() == "int" => keytable::Value::Int(v),
            _ => {
                text.clear();
                text.extend_from_slice(&s.bytes());
                keytable::Value::Str(text, false)
            }
        },
        other => keytable::Value::Heap(other),
    }
}

/// The keys to look up, in a pseudo-random order (none when there are no rounds), built
/// after the memory figures were taken.
fn lookup_keys(args: &Args) -> Vec<Vec<u8>> {
    if args.rounds == 0 {
        return Vec::new();
    }
    (0..args.keys)
        .map(|i| key(args.shape, mix(i ^ 0x5555) % args.keys))
        .collect()
}

fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS line");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmRSS number");
    kb * 1024
}

fn main() {
    let args = Args::parse();
    let base = (rss(), allocator::allocated());
    let mut text = Vec::new();
    let mut found = 0u64;
    match args.table {
        Table::Db => {
            let mut db = Db::default();
            for i in 0..args.keys {
                db.insert(&key(args.shape, i), value(args.shape, i), 0);
            }
            report(args.keys, db.len(), base, db.overhead().0);
            let keys = lookup_keys(&args);
            for _ in 0..args.rounds {
                for k in &keys {
                    found += black_box(db.get(k)).is_some() as u64;
                }
            }
        }
        Table::Keytable => {
            let mut table = KeyTable::<Value>::default();
            for i in 0..args.keys {
                let k = key(args.shape, i);
                table.insert(&k, table_value(args.shape, i, &mut text), 0);
            }
            report(args.keys, table.len(), base, table.memory_bytes());
            let keys = lookup_keys(&args);
            for _ in 0..args.rounds {
                for k in &keys {
                    found += black_box(table.get(k)).is_some() as u64;
                }
            }
        }
    }
    println!("lookups found {found}");
}

/// Prints the bytes per key: RSS growth, the allocator's growth (malloc'd and not freed),
/// RSS growth after handing free memory back (malloc_trim), and the table's own figure.
fn report(loaded: u64, len: usize, (base_rss, base_heap): (u64, u64), table_bytes: usize) {
    let per_key = |bytes: u64| bytes as f64 / len as f64;
    let grown = rss() - base_rss;
    let allocated = allocator::allocated() - base_heap;
    allocator::purge();
    let trimmed = rss() - base_rss;
    println!(
        "keys {len} (of {loaded} loaded): rss {:.1} B/key, allocated {:.1}, rss after trim {:.1}, \
         table's own figure {:.1}",
        per_key(grown),
        per_key(allocated),
        per_key(trimmed),
        per_key(table_bytes as u64),
    );
}
