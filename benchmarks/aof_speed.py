#!/usr/bin/env python3
"""The append-only file, goblin-server beside redis-server in one run.

Write throughput: redis-benchmark (pinned to --client-cpu) runs SET and ZADD against a fresh
server (pinned to --server-cpu) started with `--appendonly yes --appendfsync always|everysec`,
50 connections, pipeline 16 and pipeline 1, -r 100000; --rounds rounds alternating which
server goes first; medians.

Rewrite: one sorted set of --members members (4M) in a server with appendonly yes, then
BGREWRITEAOF (RDB preamble, the default): the time from the command to the end of the
rewrite (INFO polled every 10 ms), the peak RSS of the server and of the rewrite child over
that time, the child's copy-on-write (aof_last_cow_size) and the base file's size.
"""

import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode, info, rss_bytes  # noqa: E402


def redis_benchmark(port, cpu, requests, pipeline):
    cmd = ["taskset", "-c", str(cpu), "redis-benchmark", "-p", str(port), "-c", "50", "-P",
           str(pipeline), "-n", str(requests), "-r", "100000", "-t", "set,zadd", "--csv"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [r for r in csv.reader(io.StringIO(out)) if r and r[0] != "test"]
    return {r[0].split()[0]: float(r[1]) for r in rows}


def throughput(args):
    results = {}
    for fsync in ("always", "everysec"):
        for rnd in range(args.rounds):
            kinds = ("goblin", "redis") if rnd % 2 == 0 else ("redis", "goblin")
            for kind in kinds:
                extra = ["--appendonly", "yes", "--appendfsync", fsync]
                with Server(kind, cpu=args.server_cpu, extra=extra) as s:
                    for pipeline, n in ((16, args.requests), (1, args.requests // 4)):
                        for test, rps in redis_benchmark(s.port, args.client_cpu, n, pipeline).items():
                            results.setdefault((fsync, pipeline, test, kind), []).append(rps)
    print("| appendfsync | pipeline | test | Goblin (req/s) | Redis 7.0 (req/s) | Goblin/Redis |")
    print("|---|---:|---|---:|---:|---:|")
    for fsync in ("always", "everysec"):
        for pipeline in (16, 1):
            for test in ("SET", "ZADD"):
                g = statistics.median(results[(fsync, pipeline, test, "goblin")])
                r = statistics.median(results[(fsync, pipeline, test, "redis")])
                print(f"| {fsync} | {pipeline} | {test} | {g:,.0f} | {r:,.0f} | {g / r:.2f} |")


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def rewrite(args):
    print("| | rewrite | server peak RSS | child peak RSS | child copy-on-write | base file |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in ("goblin", "redis"):
        with Server(kind, cpu=args.server_cpu, extra=["--appendonly", "yes"]) as s:
            c = Client(s.port)

            def commands():
                for start in range(0, args.members, 1000):
                    a = ["ZADD", "big"]
                    for i in range(start, min(start + 1000, args.members)):
                        a += [str(i * 0.5), "member:%d" % i]
                    yield encode(*a)

            c.pipeline(commands())
            while info(c, "persistence")["aof_rewrite_in_progress"] != "0":
                time.sleep(0.1)
            peak_parent, peak_child = s.rss(), 0
            started = time.monotonic()
            c.call("BGREWRITEAOF")
            while True:
                peak_parent = max(peak_parent, s.rss())
                for child in children(s.pid):
                    try:
                        peak_child = max(peak_child, rss_bytes(child))
                    except (OSError, RuntimeError):
                        pass
                i = info(c, "persistence")
                if i["aof_rewrite_in_progress"] == "0" and i["aof_rewrite_scheduled"] == "0":
                    break
                time.sleep(0.01)
            took = time.monotonic() - started
            d = os.path.join(s.dir, "appendonlydir")
            base = [f for f in os.listdir(d) if ".base." in f][0]
            size = os.path.getsize(os.path.join(d, base))
            cow = int(i["aof_last_cow_size"])
            name = "Goblin" if kind == "goblin" else "Redis 7.0"
            print(f"| {name} | {took:.2f} s | {peak_parent >> 20} MB | {peak_child >> 20} MB "
                  f"| {cow >> 20} MB | {size >> 20} MB |")
            c.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--members", type=int, default=4_000_000)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--only", choices=["throughput", "rewrite"])
    args = ap.parse_args()
    if args.only != "rewrite":
        throughput(args)
    if args.only != "throughput":
        rewrite(args)


if __name__ == "__main__":
    main()
