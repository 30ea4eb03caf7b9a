//! resp-bench: Goblin's request parser against the redis-protocol crate's zero-copy decoder
//! (`resp2::decode::decode_range`) on one pipelined stream of ZADD requests, as a
//! connection's read buffer holds them. Both produce the argument byte ranges of every
//! request; the figure is nanoseconds per request and MB/s, best of several passes.

use goblin_server::resp::parse::{Limits, Parsed, RequestParser};
use redis_protocol::resp2::decode::decode_range;
use redis_protocol::resp2::types::RangeFrame;
use std::hint::black_box;
use std::time::Instant;

const PASSES: usize = 5;

/// `requests` ZADD requests as one RESP stream.
fn stream(requests: usize) -> Vec<u8> {
    let mut buf = Vec::new();
    for i in 0..requests {
        let score = i.to_string();
        let member = format!("element:{i:012}");
        let args: [&[u8]; 4] = [b"ZADD", b"bench", score.as_bytes(), member.as_bytes()];
        buf.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
    }
    buf
}

/// Parses the whole stream with Goblin's parser; returns the argument byte total.
fn goblin(buf: &[u8]) -> usize {
    let mut parser = RequestParser::default();
    let limits = Limits {
        max_bulk: 512 << 20,
        authenticated: true,
    };
    let mut pos = 0;
    let mut bytes = 0;
    while let Ok(Parsed::Request { end }) = parser.parse(buf, pos, limits) {
        bytes += parser
            .args()
            .iter()
            .map(|r| buf[r.clone()].len())
            .sum::<usize>();
        pos = end;
    }
    bytes
}

/// Parses the whole stream with redis-protocol; returns the argument byte total.
fn redis_protocol(buf: &[u8]) -> usize {
    let mut pos = 0;
    let mut bytes = 0;
    while let Ok(Some((frame, used))) = decode_range(&buf[pos..]) {
        if let RangeFrame::Array(items) = frame {
            for item in items {
                if let RangeFrame::BulkString((start, end)) = item {
                    bytes += buf[pos + start..pos + end].len();
                }
            }
        }
        pos += used;
    }
    bytes
}

fn best_of(buf: &[u8], f: fn(&[u8]) -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut total = 0;
    for _ in 0..PASSES {
        let start = Instant::now();
        total = black_box(f(black_box(buf)));
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, total)
}

fn main() {
    // `--requests N` sets the stream length (default one million).
    let args: Vec<String> = std::env::args().collect();
    let requests = match args.iter().position(|a| a == "--requests") {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .expect("--requests takes a number"),
        None => 1_000_000,
    };
    let buf = stream(requests);
    let mb = buf.len() as f64 / 1e6;
    println!("{requests} pipelined ZADD requests, {mb:.1} MB, best of {PASSES} passes");
    let mut totals = Vec::new();
    for (name, f) in [
        ("goblin RequestParser", goblin as fn(&[u8]) -> usize),
        ("redis-protocol decode_range", redis_protocol),
    ] {
        let (secs, total) = best_of(&buf, f);
        totals.push(total);
        println!(
            "{name:<28} {:>7.1} ns/request {:>8.0} MB/s",
            secs * 1e9 / requests as f64,
            mb / secs
        );
    }
    assert_eq!(
        totals[0], totals[1],
        "both parsers must see the same arguments"
    );
}
