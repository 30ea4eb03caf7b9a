#!/usr/bin/env python3
"""Stream memory and speed: goblin-server beside its peers (by default Redis 7.2.4 built from
source with jemalloc, and Debian's Redis 7.0; --peer NAME=PATH picks others), in one run
(issue 32).

Memory: each case starts a fresh server pinned to --cpu, loads it with pipelined XADDs and
reports (VmRSS after loading - VmRSS after start-up) / entries, with used_memory growth
beside it. Entries have two fields, "user" = "u" + 8 digits and "amount" = a 16-bit
integer, under explicit ids one millisecond apart.
  M1  one stream of 1M entries
  M2  10,000 streams of 100 entries

Speed: server CPU per request (utime + stime of the server from /proc, before and after)
for redis-benchmark at pipeline 16 over one connection (client pinned to --client-cpu,
server to --cpu), on a stream preloaded with 100,000 entries whose ids are 1-0 .. 100000-0:
  XADD    XADD bench:x * user u<rand> amount 1234 (a growing stream)
  XRANGE  XRANGE bench:s <rand> + COUNT 10 (10 entries from a random start)
then, on a second stream bench:g of 10 entries per XREADGROUP request (ids 1-0, 2-0, ...)
with group g created at 0 (a quarter of --requests, so no read comes back empty):
  XREADGROUP  XREADGROUP GROUP g c COUNT 10 STREAMS bench:g > (10 new entries into the PEL)
  XACK        XACK bench:g g <rand>-0 (a random delivered id; about 4 in 5 still pending)
Rounds alternate the servers; the table shows medians. The machine is shared with other
builds: CPU time per request is less disturbed by them than throughput, not immune.

Usage: benchmarks/stream_bench.py [--quick] [--rounds 5] [--requests 200000] [--peer NAME=PATH]...
                                  [--cpu 0] [--client-cpu 1] [--memory-only] [--json out.json]
(plot_memory.py draws the memory cases of --json beside the other types'.)
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import REDIS_BIN, Client, Server, add_peer_option, encode, memory_field, peers  # noqa: E402
from redis_benchmark_speed import redis_benchmark  # noqa: E402

REDIS72_BIN = os.environ.get("REDIS72_BIN", "/work/redis-7.2.4/src/redis-server")
DEFAULT_PEERS = ["redis-7.2.4=" + REDIS72_BIN, "redis-7.0=" + REDIS_BIN]
TARGETS = {"M1": 0.75, "M2": 0.5}
PRELOAD = 100_000
SPEED_TESTS = {
    "XADD": ["XADD", "bench:x", "*", "user", "u__rand_int__", "amount", "1234"],
    "XRANGE": ["XRANGE", "bench:s", "__rand_int__", "+", "COUNT", "10"],
    "XREADGROUP": ["XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "bench:g", ">"],
    "XACK": ["XACK", "bench:g", "g", "__rand_int__-0"],
}
GROUP_TESTS = ("XREADGROUP", "XACK")


def xadds(key, first_ms, n):
    for i in range(n):
        yield encode(b"XADD", key, b"%d-0" % (first_ms + i), b"user", b"u%08d" % (i * 7919 % 10**8),
                     b"amount", b"%d" % (i * 31 % 65536))


def workload(name, quick):
    """(description, entries, encoded commands)."""
    if name == "M1":
        n = 10_000 if quick else 1_000_000
        return "1 stream of %d entries" % n, n, xadds(b"s", 1, n)
    if name == "M2":
        keys = 100 if quick else 10_000

        def commands():
            for k in range(keys):
                yield from xadds(b"s:%d" % k, 1, 100)

        return "%d streams of 100 entries" % keys, keys * 100, commands()
    raise ValueError(name)


def measure_memory(binary, name, cpu, quick):
    """RSS and used_memory growth per entry of workload `name` (binary None: Goblin)."""
    kind = "redis" if binary else "goblin"
    desc, entries, commands = workload(name, quick)
    with Server(kind, cpu=cpu, binary=binary) as server:
        c = Client(server.port)
        base_rss, base_used = server.rss(), memory_field(c, "used_memory")
        c.pipeline(commands)
        result = {
            "shape": desc,
            "entries": entries,
            "rss": (server.rss() - base_rss) / entries,
            "used": (memory_field(c, "used_memory") - base_used) / entries,
        }
        c.close()
        return result


def cpu_seconds(pid):
    """utime + stime of process `pid`, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def speed_round(binary, args):
    """Server CPU microseconds per request for each test, on a fresh server (binary None:
    Goblin)."""
    kind = "redis" if binary else "goblin"
    group_requests = args.requests // 4
    with Server(kind, cpu=args.cpu, binary=binary) as server:
        c = Client(server.port)
        c.pipeline(xadds(b"bench:s", 1, PRELOAD))
        c.pipeline(xadds(b"bench:g", 1, group_requests * 10))
        assert c.call("XGROUP", "CREATE", "bench:g", "g", "0") == b"OK"
        c.close()
        out = {}
        for test, command in SPEED_TESTS.items():
            requests, ids = (group_requests, group_requests * 10) if test in GROUP_TESTS else (args.requests, PRELOAD)
            before = cpu_seconds(server.pid)
            redis_benchmark(server.port, args.client_cpu, requests, ids, command)
            out[test] = (cpu_seconds(server.pid) - before) / requests * 1e6
        return out


def speed(args, binaries):
    """The speed rounds, alternating the servers; prints the medians and returns them with
    every round's figures."""
    servers = list(binaries)
    others = servers[1:]
    rounds = {s: [] for s in servers}
    for r in range(args.rounds):
        order = servers[r % len(servers):] + servers[:r % len(servers)]
        for s in order:
            rounds[s].append(speed_round(binaries[s], args))
    print("\nserver CPU per request, microseconds (median of %d rounds of %d requests, pipeline 16)"
          % (args.rounds, args.requests))
    print("%-10s " % "test" + " ".join("%12s" % s for s in servers) + "".join("  G/%-10s" % s for s in others))
    out = {}
    for test in SPEED_TESTS:
        med = {s: statistics.median(x[test] for x in rounds[s]) for s in servers}
        out[test] = {"median_us": med, "rounds": {s: [x[test] for x in rounds[s]] for s in servers}}
        ratios = "".join("  %12.2f" % (med["goblin"] / med[s]) if med[s] else "  %12s" % "-" for s in others)
        print("%-10s " % test + " ".join("%12.2f" % med[s] for s in servers) + ratios, flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for the CI smoke run")
    add_peer_option(ap)
    ap.add_argument("--cpu", type=int, default=0, help="CPU the servers are pinned to")
    ap.add_argument("--client-cpu", type=int, default=1, help="CPU redis-benchmark is pinned to")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--memory-only", action="store_true", help="the memory cases alone, no speed rounds")
    ap.add_argument("--json", help="write the raw results as JSON")
    args = ap.parse_args()
    args.peer = args.peer or [p for p in DEFAULT_PEERS if os.path.exists(p.partition("=")[2])]
    binaries = dict([("goblin", None)] + peers(args))
    servers = list(binaries)
    others = servers[1:]
    if args.quick:
        args.rounds, args.requests = 1, 2_000
    results = {"memory": {}, "speed": {}}

    print("memory, bytes of RSS (used_memory) per entry")
    print("%-4s %-28s " % ("case", "shape") + " ".join("%22s" % s for s in servers)
          + "".join("  G/%-10s" % s for s in others) + " target")
    for name in TARGETS:
        row = {s: measure_memory(binaries[s], name, args.cpu, args.quick) for s in servers}
        results["memory"][name] = row
        cells = " ".join("%12.1f (%7.1f)" % (row[s]["rss"], row[s]["used"]) for s in servers)
        ratios = "".join("  %12.2f" % (row["goblin"]["rss"] / row[s]["rss"]) for s in others)
        print("%-4s %-28s %s%s %6.2f" % (name, row["goblin"]["shape"], cells, ratios, TARGETS[name]), flush=True)

    if not args.memory_only:
        results["speed"] = speed(args, binaries)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
