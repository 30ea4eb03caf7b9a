#!/usr/bin/env python3
"""List memory: RSS bytes per element for goblin-server and redis-server, in one run.

Each case starts a fresh server pinned to one CPU, loads it with pipelined RPUSHes and
reports (VmRSS after loading - VmRSS after start-up) / elements, with used_memory growth
beside it and the encoding of the first key. The keyspace entry of a key (72 B plus about
10.5 B of index in Goblin) is in L2's figure: `--breakdown` prints Goblin's share of it
from MEMORY USAGE (the value alone) beside the RSS per key.

Workloads (issue 16):
  L1  one list of 10M elements of 16 bytes ("e:" + 14 seeded random hex chars)
  L2  --keys keys "l:<n>" (1M) of 10 such elements

With --compress-depth N both servers run under list-compress-depth N; --contents
compressible pushes "e:" + 14 decimal digits of a counter modulo 1000 (runs LZF shortens)
in place of the random hex.

Usage: benchmarks/list_memory.py [--quick] [--workloads L1,L2] [--keys N] [--breakdown] [--json out.json]
                                 [--compress-depth N] [--contents random|compressible] [--peer NAME=PATH ...]
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, RatioTable, Server, add_peer_option, encode, memory_field, peers  # noqa: E402

BATCH = 1000  # elements per RPUSH, or keys per pipeline round in L2
# Issue 16's goal for L1, issue 35's for L2, against Redis 7.2.4.
TARGETS = {"L1": 0.95, "L2": 0.75}


def element(rng):
    return b"e:%014x" % rng.getrandbits(56)


def compressible_elements():
    n = 0

    def element(_rng):
        nonlocal n
        n += 1
        return b"e:%014d" % (n % 1000)

    return element


def workload(name, size, seed=1, contents="random"):
    """Returns (description, element count, list of (key, [elements]))."""
    rng = random.Random(seed)
    element = compressible_elements() if contents == "compressible" else globals()["element"]
    if name == "L1":
        return "1 list, 16-byte elements", size, [(b"l1", [element(rng) for _ in range(size)])]
    if name == "L2":
        keys = size // 10
        lists = [(b"l:%d" % k, [element(rng) for _ in range(10)]) for k in range(keys)]
        return "%d keys of 10 16-byte elements" % keys, keys * 10, lists
    raise ValueError(name)


def rpush_commands(lists):
    for key, elements in lists:
        for i in range(0, len(elements), BATCH):
            yield encode(b"RPUSH", key, *elements[i:i + BATCH])


def measure(kind, lists, elements, cpu, breakdown, extra=(), binary=None):
    with Server(kind, cpu=cpu, extra=extra, binary=binary) as server:
        c = Client(server.port)
        base_rss, base_used = server.rss(), memory_field(c, "used_memory")
        c.pipeline(rpush_commands(lists))
        result = {
            "rss": (server.rss() - base_rss) / elements,
            "used": (memory_field(c, "used_memory") - base_used) / elements,
            "encoding": c.call("OBJECT", "ENCODING", lists[0][0]).decode(),
        }
        if breakdown and len(lists) > 1:
            sample = lists[:: max(1, len(lists) // 1000)]
            usage = [c.call("MEMORY", "USAGE", k, "SAMPLES", 0) for k, _ in sample]
            result["memory_usage_per_key"] = sum(usage) / len(usage)
            result["rss_per_key"] = result["rss"] * elements / len(lists)
        c.close()
        return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for the CI smoke run")
    ap.add_argument("--workloads", default="L1,L2")
    ap.add_argument("--cpu", type=int, default=0, help="CPU the servers are pinned to")
    ap.add_argument("--breakdown", action="store_true", help="MEMORY USAGE per key beside RSS per key")
    ap.add_argument("--keys", type=int, default=1_000_000, help="keys of L2")
    ap.add_argument("--json", help="write the raw results as JSON")
    add_peer_option(ap)
    ap.add_argument("--compress-depth", type=int, default=0, help="list-compress-depth of both servers")
    ap.add_argument("--contents", choices=("random", "compressible"), default="random")
    args = ap.parse_args()
    others = peers(args)
    sizes = {"L1": 10_000_000, "L2": 10 * args.keys}
    table = RatioTable("elements", 34, TARGETS)
    for name in args.workloads.split(","):
        if name not in TARGETS:
            ap.error("unknown workload %r (L1, L2)" % name)
        desc, elements, lists = workload(name, 10_000 if args.quick else sizes[name], contents=args.contents)
        extra = ("--list-compress-depth", str(args.compress_depth))
        g = measure("goblin", lists, elements, args.cpu, args.breakdown, extra)
        results = {peer: measure("redis", lists, elements, args.cpu, args.breakdown, extra, binary)
                   for peer, binary in others}

        def per_key(peer, r):
            if "rss_per_key" in g:
                print("     per key: goblin rss %.1f B, MEMORY USAGE %.1f B; %s rss %.1f B, MEMORY USAGE %.1f B"
                      % (g["rss_per_key"], g["memory_usage_per_key"], peer, r["rss_per_key"],
                         r["memory_usage_per_key"]))
        table.add(name, desc, elements, g, results, per_key)
    table.dump(args.json)

if __name__ == "__main__":
    main()
