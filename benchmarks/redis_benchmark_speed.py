#!/usr/bin/env python3
"""Sorted-set throughput with redis-benchmark (the C load generator), goblin-server beside
redis-server, in one run.

Each round starts a fresh server pinned to --server-cpu, preloads one set of --members
members "element:" + the number zero-padded to 12 digits (that is how redis-benchmark writes
__rand_int__, so lookups hit) with score equal to the number, then runs redis-benchmark
pinned to --client-cpu: one connection, pipeline 16, -r members, for ZADD, ZSCORE, ZRANK,
ZREVRANK, ZINCRBY, ZRANGE of 16 members by index, ZRANGEBYSCORE ... LIMIT 0 16, ZREM then
ZADD (which puts the members back); then ZSCORE at pipeline 1 (p50 and p99 latency) and
ZSCORE over 50 connections without pipelining. Rounds alternate the servers (each round
starts with a different one); the table shows medians and the Goblin/Redis ratio. With
--busy-poll-us N, Goblin also runs with that flag, as a third server in the same rounds.
--tests picks some of the tests by name.

ZRANGE by index: redis-benchmark's __rand_int__ is zero-padded ("000000123456"), which
Redis (and Goblin) refuse as an index, so the start is drawn from five fixed positions
spread over the set (0, 20%, 40%, 60%, 80% of it); each position gets requests/5 requests
and the figure is their combined rate.
"""

import argparse
import csv
import io
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode  # noqa: E402

KEY = "bench"


def preload(port, members):
    c = Client(port)

    def commands():
        for start in range(0, members, 1000):
            args = ["ZADD", KEY]
            for i in range(start, min(start + 1000, members)):
                args.append(str(i))
                args.append("element:%012d" % i)
            yield encode(*args)

    c.pipeline(commands())
    assert c.call("ZCARD", KEY) == members
    c.close()


def redis_benchmark(port, cpu, requests, members, command, clients=1, pipeline=16):
    """Runs one redis-benchmark test; returns (requests per second, p50 ms, p99 ms)."""
    cmd = ["redis-benchmark", "-p", str(port), "-c", str(clients), "-P", str(pipeline), "-n", str(requests),
           "-r", str(members), "--csv"] + command
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [r for r in csv.reader(io.StringIO(out)) if r and r[0] != "test"]
    rps = float(rows[-1][1])
    p50 = float(rows[-1][4]) if len(rows[-1]) > 4 else float("nan")
    p99 = float(rows[-1][6]) if len(rows[-1]) > 6 else float("nan")
    return rps, p50, p99


def tests(members):
    starts = [members * k // 5 for k in range(5)]
    return [
        ("ZADD", [["ZADD", KEY, "__rand_int__", "element:__rand_int__"]], {}),
        ("ZSCORE", [["ZSCORE", KEY, "element:__rand_int__"]], {}),
        ("ZRANK", [["ZRANK", KEY, "element:__rand_int__"]], {}),
        ("ZREVRANK", [["ZREVRANK", KEY, "element:__rand_int__"]], {}),
        ("ZINCRBY", [["ZINCRBY", KEY, "1", "element:__rand_int__"]], {}),
        ("ZRANGE 16 by index", [["ZRANGE", KEY, str(s), str(s + 15)] for s in starts], {}),
        ("ZRANGEBYSCORE LIMIT 0 16", [["ZRANGEBYSCORE", KEY, "__rand_int__", "+inf", "LIMIT", "0", "16"]], {}),
        ("ZREM", [["ZREM", KEY, "element:__rand_int__"]], {}),
        ("ZADD (restore)", [["ZADD", KEY, "__rand_int__", "element:__rand_int__"]], {}),
        ("ZSCORE P1 (p50/p99 ms)", [["ZSCORE", KEY, "element:__rand_int__"]], {"pipeline": 1, "latency": True}),
        ("ZSCORE 50 conns P1", [["ZSCORE", KEY, "element:__rand_int__"]], {"pipeline": 1, "clients": 50}),
    ]


def selected(args):
    """The tests to run: all, or those named by --tests."""
    wanted = args.tests and {t.strip().upper() for t in args.tests.split(",")}
    return [t for t in tests(args.members) if not wanted or t[0].upper() in wanted]


def run_round(kind, args):
    results = {}
    extra = ["--busy-poll-us", str(args.busy_poll_us)] if kind == "goblin-bp" else []
    with Server("goblin" if kind == "goblin-bp" else kind, cpu=args.server_cpu, extra=extra) as server:
        preload(server.port, args.members)
        for name, commands, opts in selected(args):
            per = max(1, args.requests // len(commands))
            total_time = 0.0
            p50s, p99s = [], []
            for command in commands:
                rps, p50, p99 = redis_benchmark(server.port, args.client_cpu, per, args.members, command,
                                                clients=opts.get("clients", 1), pipeline=opts.get("pipeline", 16))
                total_time += per / rps
                p50s.append(p50)
                p99s.append(p99)
            results[name] = (per * len(commands) / total_time, max(p50s), max(p99s))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=1_000_000)
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="10K members, 20K requests, one round (CI smoke)")
    ap.add_argument("--busy-poll-us", type=int, default=0,
                    help="also run Goblin with --busy-poll-us N, as a third server in the same rounds")
    ap.add_argument("--tests", help="comma-separated test names to run (default: all), e.g. ZADD,ZSCORE")
    args = ap.parse_args()
    if args.quick:
        args.members, args.requests, args.rounds = 10_000, 20_000, 1
    if not shutil.which("redis-benchmark"):
        sys.exit("redis-benchmark not found (apt-get install redis-tools)")

    kinds = ["goblin", "redis"] + (["goblin-bp"] if args.busy_poll_us else [])
    runs = {kind: [] for kind in kinds}
    for r in range(args.rounds):
        # Each round starts with a different server, so none always runs first.
        order = kinds[r % len(kinds):] + kinds[:r % len(kinds)]
        for kind in order:
            runs[kind].append(run_round(kind, args))
            print("round %d %s done" % (r + 1, kind), file=sys.stderr, flush=True)

    print("%d members, %d requests a test, %d rounds, server on CPU %s, client on CPU %s; medians" % (
        args.members, args.requests, args.rounds, args.server_cpu, args.client_cpu))
    bp = " | goblin --busy-poll-us %d | bp/redis" % args.busy_poll_us if args.busy_poll_us else ""
    print("| test | goblin | redis | goblin/redis%s |" % bp)
    print("|---|---:|---:|---:%s|" % ("|---:|---:" if bp else ""))
    for name, _, opts in selected(args):
        r = [run[name] for run in runs["redis"]]
        cells = []
        for kind in [k for k in kinds if k != "redis"]:
            g = [run[name] for run in runs[kind]]
            if opts.get("latency"):
                gp50, gp99 = statistics.median(x[1] for x in g), statistics.median(x[2] for x in g)
                rp50, rp99 = statistics.median(x[1] for x in r), statistics.median(x[2] for x in r)
                cells.append(("%.3f / %.3f" % (gp50, gp99), "%.2f / %.2f" % (gp50 / rp50, gp99 / rp99)))
                redis_cell = "%.3f / %.3f" % (rp50, rp99)
            else:
                gr, rr = statistics.median(x[0] for x in g), statistics.median(x[0] for x in r)
                cells.append(("%.0f" % gr, "%.2f" % (gr / rr)))
                redis_cell = "%.0f" % rr
        row = [name, cells[0][0], redis_cell, cells[0][1]] + [c for pair in cells[1:] for c in pair]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
