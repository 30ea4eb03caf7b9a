#!/usr/bin/env python3
"""GEOSEARCH throughput with redis-benchmark, goblin-server beside redis-server, in one run.

Each round starts a fresh server pinned to --server-cpu, loads --points geo points
(callgrind_requests.preload_geo: a 2 x 2 degree square, about 26 points a square kilometre
for a million), then runs redis-benchmark pinned to --client-cpu, one connection, pipeline
16, -r points, for GEOSEARCH FROMMEMBER p:__rand_int__ BYRADIUS 500 m ASC (about 20
results) and the same BYBOX 1000 1000 m. Rounds alternate the servers; the table shows
medians and the Goblin/Redis ratio.

    python3 benchmarks/geo_speed.py [--points 1000000] [--requests 200000] [--rounds 3]
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from callgrind_requests import GEO_KEY, TESTS, preload_geo  # noqa: E402
from common import Server  # noqa: E402
from redis_benchmark_speed import redis_benchmark  # noqa: E402

SEARCHES = [
    ("GEOSEARCH BYRADIUS 500 m ASC", TESTS["GEOSEARCH"]),
    ("GEOSEARCH BYBOX 1000x1000 m ASC",
     ["GEOSEARCH", GEO_KEY, "FROMMEMBER", "p:__rand_int__", "BYBOX", "1000", "1000", "m", "ASC"]),
]


def run_round(kind, args):
    with Server(kind, cpu=args.server_cpu) as server:
        preload_geo(server.port, args.points)
        return {name: redis_benchmark(server.port, args.client_cpu, args.requests, args.points, cmd)[0]
                for name, cmd in SEARCHES}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args()
    runs = {"goblin": [], "redis": []}
    for r in range(args.rounds):
        for kind in (["goblin", "redis"] if r % 2 == 0 else ["redis", "goblin"]):
            runs[kind].append(run_round(kind, args))
            print("round %d %s done" % (r + 1, kind), file=sys.stderr, flush=True)
    print("%d points, %d requests a test, %d rounds, pipeline 16, one connection; medians" % (
        args.points, args.requests, args.rounds))
    print("| test | goblin req/s | redis req/s | goblin/redis |")
    print("|---|---:|---:|---:|")
    for name, _ in SEARCHES:
        g = statistics.median(run[name] for run in runs["goblin"])
        r = statistics.median(run[name] for run in runs["redis"])
        print("| %s | %.0f | %.0f | %.2f |" % (name, g, r, g / r))


if __name__ == "__main__":
    main()
