#!/usr/bin/env python3
"""String memory: RSS bytes per key for goblin-server and redis-server, each case on a fresh
server pinned to one CPU, loaded over a pipelined connection, reported as
(VmRSS after loading - VmRSS after start-up) / keys, beside used_memory's growth.

Workloads (issue 13):
  S1  1M keys "key:" + 12 digits, 16-byte values, by SET
  S2  1M counters "key:" + 12 digits, by INCRBY to values above 10,000 (Redis's shared
      integers stop at 9,999)

Usage: benchmarks/string_memory.py [--quick] [--workloads S1,S2] [--json out.json]
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, add_peer_option, encode, memory_field, peers  # noqa: E402

def commands(name, keys, seed=1):
    rng = random.Random(seed)
    names = [b"key:%012d" % rng.randrange(10**12) for _ in range(keys)]
    if name == "S1":
        for k in names:
            yield encode(b"SET", k, b"%016x" % rng.getrandbits(64))
    elif name == "S2":
        for k in names:
            yield encode(b"INCRBY", k, 10_000 + rng.randrange(10**9))
    else:
        raise ValueError(name)


def measure(kind, name, keys, cpu, binary=None):
    with Server(kind, cpu=cpu, binary=binary) as server:
        c = Client(server.port)
        base_rss, base_used = server.rss(), memory_field(c, "used_memory")
        c.pipeline(commands(name, keys))
        loaded = c.call("DBSIZE")
        result = {
            "keys": loaded,
            "rss": (server.rss() - base_rss) / loaded,
            "used": (memory_field(c, "used_memory") - base_used) / loaded,
        }
        c.close()
        return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10K keys, for the CI smoke run")
    ap.add_argument("--workloads", default="S1,S2")
    ap.add_argument("--cpu", type=int, default=0, help="CPU the servers are pinned to")
    ap.add_argument("--json", help="write the raw results as JSON")
    add_peer_option(ap)
    args = ap.parse_args()
    others = peers(args)
    keys = 10_000 if args.quick else 1_000_000
    rows = []
    print("%-4s %9s | %9s %9s | %9s %9s | %6s" % ("case", "keys", "G rss", "G used", "P rss", "P used", "G/P"))
    for name in args.workloads.split(","):
        g = measure("goblin", name, keys, args.cpu)
        results = {peer: measure("redis", name, keys, args.cpu, binary) for peer, binary in others}
        rows.append({"case": name, "goblin": g, "peers": results, "redis": results[others[0][0]]})
        for peer, r in results.items():
            print("%-4s %9d | %9.1f %9.1f | %9.1f %9.1f | %6.2f  %s" % (
                name, g["keys"], g["rss"], g["used"], r["rss"], r["used"], g["rss"] / r["rss"], peer), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
