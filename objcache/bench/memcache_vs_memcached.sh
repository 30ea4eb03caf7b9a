#!/usr/bin/env bash
# Goblin Store against memcached 1.6 in the same run: load 400,000 1-KiB objects into
# each, report RSS per object, then serial gets (latency) and gets over 8 and 64
# connections (throughput), all from goblin-bench.
#
# Usage: objcache/bench/memcache_vs_memcached.sh [target-dir]   (default: <repo>/target)
#        GOBLIN_ARGS="--store-busy-poll-us 100" adds flags to goblin-store.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=${1:-$REPO/target}
KEYS=${KEYS:-400000}
REQUESTS=${REQUESTS:-200000}
CORES=${CORES:-$(nproc)}
MC_PORT=${MC_PORT:-22122}
GB_PORT=${GB_PORT:-22123}
BENCH="$TARGET/release/goblin-bench"

(cd "$REPO" && CARGO_TARGET_DIR="$TARGET" cargo build --release -p goblin-objcache -p goblin-objcache-load >/dev/null)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_port() { for _ in $(seq 100); do (echo > /dev/tcp/127.0.0.1/"$1") 2>/dev/null && return; sleep 0.1; done; exit 1; }

memcached -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 1024 -t "$CORES" -u root & pids+=($!); MC_PID=$!
"$TARGET/release/goblin-store" --listen-address 127.0.0.1 --memcache-port "$GB_PORT" \
    --small-memory 1G --cores "$CORES" ${GOBLIN_ARGS:-} 2>/dev/null & pids+=($!); GB_PID=$!
wait_port "$MC_PORT"; wait_port "$GB_PORT"

echo "# $(date -u +%FT%TZ) keys=$KEYS value=1024 requests=$REQUESTS cores=$CORES ($(nproc) CPUs)"
for side in memcached:$MC_PORT:$MC_PID goblin:$GB_PORT:$GB_PID; do
    IFS=: read -r name port pid <<<"$side"
    "$BENCH" --addr 127.0.0.1:"$port" --keys "$KEYS" --load --conns 0 --pid "$pid" --label "$name"
done
for conns in 1 8 64; do
    for side in memcached:$MC_PORT goblin:$GB_PORT; do
        IFS=: read -r name port <<<"$side"
        "$BENCH" --addr 127.0.0.1:"$port" --keys "$KEYS" --conns "$conns" --requests "$REQUESTS" --label "$name"
    done
done
