#!/usr/bin/env bash
# A small, quick run of every benchmark, so CI keeps them working. The figures it prints are
# not measurements: the real runs are in BENCHMARKS.md, with the commands that made them.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p goblin-server -p goblin-zset-bench -p goblin-resp-bench
cargo build --release -p goblin-objcache-load
python3 benchmarks/zset_memory.py --quick --workloads W1,W2,W4b --sizes 250000
python3 benchmarks/string_memory.py --quick
python3 benchmarks/hash_memory.py --quick
python3 benchmarks/redis_benchmark_speed.py --quick
python3 benchmarks/stream_bench.py --quick
./target/release/zset-bench --members 10000 --ops 10000 --format json
./target/release/resp-bench --requests 20000
python3 benchmarks/delete_latency.py --members 20000
# Not a smoke run: the complexity check of every keyspace-building path (fails when one grows
# more than twice as fast as linear between 200K and 800K keys; figures in BENCHMARKS.md).
python3 benchmarks/scale.py --check
python3 benchmarks/objcache/run_http_bench.py --smoke --workdir "${TMPDIR:-/tmp}/goblin-bench-http-smoke"
