#!/usr/bin/env python3
"""Set memory: RSS bytes per member for goblin-server and redis-server, in one run.

Each case starts a fresh server pinned to one CPU, loads it with pipelined SADDs and
reports (VmRSS after loading - VmRSS after start-up) / members, with Redis's used_memory
growth beside it and the encoding of the first key.

Workloads (issue 13):
  T1  one set of 1M members of 14 bytes ("m:" + 12 seeded random hex chars)
  T2  one set of 1M integers 0..999999 (in seeded random order)
  T3  --keys keys "s:<n>" (1M) of 10 small members ("m" + 1..4 digits, a listpack in Redis 7.2)

Usage: benchmarks/set_memory.py [--quick] [--workloads T1,T2,T3] [--keys N] [--json out.json]
                                [--peer NAME=PATH ...]
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, RatioTable, Server, add_peer_option, encode, memory_field, peers  # noqa: E402

BATCH = 1000  # members per SADD, or keys per pipeline round in T3


def workload(name, size, keys, seed=1):
    """Returns (description, member count, list of (key, [members]))."""
    rng = random.Random(seed)
    if name == "T1":
        seen = set()
        while len(seen) < size:
            seen.add(b"m:%012x" % rng.getrandbits(48))
        return "1 set, 14-byte members", size, [(b"t1", list(seen))]
    if name == "T2":
        ints = [b"%d" % i for i in range(size)]
        rng.shuffle(ints)
        return "1 set, integers", size, [(b"t2", ints)]
    if name == "T3":
        sets = [(b"s:%d" % k, [b"m%d" % rng.randrange(10000) for _ in range(10)]) for k in range(keys)]
        sets = [(k, list(dict.fromkeys(ms))) for k, ms in sets]
        return "%d keys of 10 small members" % keys, sum(len(ms) for _, ms in sets), sets
    raise ValueError(name)


def sadd_commands(sets):
    for key, members in sets:
        for i in range(0, len(members), BATCH):
            yield encode(b"SADD", key, *members[i:i + BATCH])


def measure(kind, sets, members, cpu, binary=None):
    with Server(kind, cpu=cpu, binary=binary) as server:
        c = Client(server.port)
        base_rss, base_used = server.rss(), memory_field(c, "used_memory")
        c.pipeline(sadd_commands(sets))
        result = {
            "rss": (server.rss() - base_rss) / members,
            "used": (memory_field(c, "used_memory") - base_used) / members,
            "encoding": c.call("OBJECT", "ENCODING", sets[0][0]).decode(),
        }
        c.close()
        return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for the CI smoke run")
    ap.add_argument("--workloads", default="T1,T2,T3")
    ap.add_argument("--cpu", type=int, default=0, help="CPU the servers are pinned to")
    ap.add_argument("--keys", type=int, default=1_000_000, help="keys of T3")
    ap.add_argument("--json", help="write the raw results as JSON")
    add_peer_option(ap)
    args = ap.parse_args()
    others = peers(args)
    size = 10_000 if args.quick else 1_000_000
    # Issue 13's goals for T1 and T2, issue 35's for T3, against Redis 7.2.4.
    targets = {"T1": 1 / 3, "T2": 1 / 3, "T3": 0.6}
    table = RatioTable("members", 32, targets)
    for name in args.workloads.split(","):
        if name not in targets:
            ap.error("unknown workload %r (T1, T2, T3)" % name)
        desc, members, sets = workload(name, size, min(size, args.keys))
        g = measure("goblin", sets, members, args.cpu)
        results = {peer: measure("redis", sets, members, args.cpu, binary) for peer, binary in others}
        table.add(name, desc, members, g, results)
    table.dump(args.json)

if __name__ == "__main__":
    main()
