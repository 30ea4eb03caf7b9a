#!/usr/bin/env python3
"""Instructions per request on the server, counted by valgrind's callgrind: repeatable
whatever else the machine is doing, so it shows what a change does to the request path when
throughput figures drown in the VM's noise.

The server runs under callgrind with instrumentation off. The script preloads one set of
--members members (as redis_benchmark_speed.py does; with the GEOSEARCH test also --members geo points,
see preload_geo), turns instrumentation on with
callgrind_control, runs redis-benchmark (one connection, pipeline 16, --requests requests)
for each test, and dumps the counts after each (a dump resets them). A figure is the server's user-space
instructions for the test (everything: event loop, parsing, the command, the reply, the
system-call wrappers; not the kernel) divided by the requests. With `--servers goblin,redis`
each `--peer` (default Debian's redis-server) is measured the same way after Goblin, and the
table shows the ratios.

    python3 benchmarks/callgrind_requests.py [--members 1000000] [--requests 20000] [--tests ZADD,ZSCORE]
        [--servers goblin,redis] [--peer redis-7.2.4=/work/redis-7.2.4 ...] [--keep-dumps DIR]
        [--cache-sim] [--stream-entries 500000]

With --cache-sim callgrind also simulates the caches (its model of a first-level data cache
and a last-level cache, not the machine's), and the table adds D1 and last-level misses per
request: what a hardware counter would show where the VM has none (perf's cache events are
not supported here).
"""

import argparse
import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, add_peer_option, encode, peers  # noqa: E402
from redis_benchmark_speed import KEY, preload, redis_benchmark  # noqa: E402

GEO_KEY = "bench:geo"
STREAM_KEY = "bench:g"

TESTS = {
    "ZADD": ["ZADD", KEY, "__rand_int__", "element:__rand_int__"],
    "ZSCORE": ["ZSCORE", KEY, "element:__rand_int__"],
    "ZRANK": ["ZRANK", KEY, "element:__rand_int__"],
    "ZRANGEBYSCORE": ["ZRANGEBYSCORE", KEY, "__rand_int__", "+inf", "LIMIT", "0", "16"],
    # A hash of the fields HSET has written so far (run HSET first, with --requests a few
    # times --members, so HGET hits).
    "HSET": ["HSET", "hbench", "element:__rand_int__", "value:__rand_int__"],
    "HGET": ["HGET", "hbench", "element:__rand_int__"],
    # Small hashes, one per key (H1's shape: a listpack the key table keeps in the key's
    # record): HSET_PROFILE writes two fields of "user:<n>", HGET_PROFILE reads one.
    "HSET_PROFILE": ["HSET", "user:__rand_int__", "name", "ada", "city", "Rome"],
    "HGET_PROFILE": ["HGET", "user:__rand_int__", "name"],
    # Small collections, one per key (W4a's, T3's and L2's shapes, kept in the key's record):
    # each write adds to "zs:<n>", "ss:<n>" or "ls:<n>" (about --requests / --members
    # members a key), ZSCORE_SMALL reads a sorted set.
    "ZADD_SMALL": ["ZADD", "zs:__rand_int__", "__rand_int__", "m:__rand_int__"],
    "ZSCORE_SMALL": ["ZSCORE", "zs:__rand_int__", "m:__rand_int__"],
    "SADD_SMALL": ["SADD", "ss:__rand_int__", "m__rand_int__"],
    "LPUSH_SMALL": ["LPUSH", "ls:__rand_int__", "e:__rand_int__"],
    # redis-benchmark's own SET, GET, INCR, SADD, SPOP and MSET tests (3-byte values).
    "SET": ["SET", "key:__rand_int__", "xxx"],
    "GET": ["GET", "key:__rand_int__"],
    "INCR": ["INCR", "counter:__rand_int__"],
    "SADD": ["SADD", "myset", "element:__rand_int__"],
    "SPOP": ["SPOP", "myset"],
    "MSET": ["MSET"] + ["key:__rand_int__", "xxx"] * 10,
    # Needs the points of preload_geo: about 20 within 500 m of each.
    "GEOSEARCH": ["GEOSEARCH", GEO_KEY, "FROMMEMBER", "p:__rand_int__", "BYRADIUS", "500", "m", "ASC"],
    # Lists, in this order: LPUSH fills "mylist", LRANGE_100 reads it, LPOP or RPOP empties it.
    "LPUSH": ["LPUSH", "mylist", "element:__rand_int__"],
    "LRANGE_100": ["LRANGE", "mylist", "0", "99"],
    "LPOP": ["LPOP", "mylist"],
    "RPOP": ["RPOP", "mylist"],
    # HyperLogLog, in this order: PFADD fills "myhll" (dense past about 2,000 elements),
    # PFCOUNT reads it (the cached cardinality after the first), PFCOUNT_UNION counts it with
    # "myhll2" (a merge of the registers and the estimate on every call).
    "PFADD": ["PFADD", "myhll", "element:__rand_int__"],
    "PFCOUNT": ["PFCOUNT", "myhll"],
    "PFCOUNT_UNION": ["PFCOUNT", "myhll", "myhll2"],
    # Streams (stream_bench.py's XACK): a stream of --stream-entries entries, ids 1-0,
    # 2-0, ..., all delivered to consumer c of group g (so all pending); each XACK
    # acknowledges a random id, --requests of them.
    "XACK": ["XACK", STREAM_KEY, "g", "__rand_int__-0"],
}
STREAM_TESTS = ("XACK",)


def preload_geo(port, points):
    """GEOADDs `points` points "p:" + the number zero-padded to 12 digits (as redis-benchmark
    writes __rand_int__) at fixed pseudo-random places over a 2 x 2 degree square of Sicily,
    about 26 a square kilometre for a million."""
    rng = random.Random(16)
    c = Client(port)

    def commands():
        for start in range(0, points, 1000):
            args = ["GEOADD", GEO_KEY]
            for i in range(start, min(start + 1000, points)):
                args += ["%.6f" % rng.uniform(12, 14), "%.6f" % rng.uniform(37, 39), "p:%012d" % i]
            yield encode(*args)

    c.pipeline(commands())
    assert c.call("ZCARD", GEO_KEY) == points
    c.close()


def preload_stream_group(port, entries):
    """XADDs `entries` two-field entries (stream_bench.py's) with ids 1-0 .. entries-0 to
    STREAM_KEY, creates group g at 0 and reads them all as consumer c, so all are pending."""
    c = Client(port)
    c.pipeline(encode("XADD", STREAM_KEY, "%d-0" % i, "user", "u%08d" % i, "amount", i % 65536)
               for i in range(1, entries + 1))
    assert c.call("XGROUP", "CREATE", STREAM_KEY, "g", "0") == b"OK"
    c.close()
    # redis-benchmark reads the replies (this client's buffer handling is too slow for them).
    redis_benchmark(port, None, -(-entries // 10), 1,
                    ["XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", STREAM_KEY, ">"])


def dumped_totals(path):
    """The `totals:` figures of one callgrind dump by event name (Ir; with the cache
    simulation also D1mr, D1mw, DLmr, DLmw, ...); its `summary:` line can be garbage after a
    dump has reset the counters."""
    events = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("totals:"):
                return dict(zip(events, map(int, line.split()[1:])))
    raise RuntimeError("no totals in %s" % path)


def control(pid, *flags):
    subprocess.run(["callgrind_control", *flags, str(pid)], check=True, capture_output=True)


def measure(kind, args, binary=None, label=None):
    out_dir = tempfile.mkdtemp(prefix="goblin-callgrind-")
    wrapper = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               "--callgrind-out-file=%s/callgrind.out.%%p" % out_dir]
    if args.cache_sim:
        wrapper.append("--cache-sim=yes")
    results = {}
    extra = args.extra if kind == "goblin" else []
    with Server(kind, extra=extra, wrapper=wrapper, start_timeout=120, binary=binary) as server:
        preload(server.port, args.members)
        if "GEOSEARCH" in args.tests:
            preload_geo(server.port, args.members)
        if any(t in STREAM_TESTS for t in args.tests):
            preload_stream_group(server.port, args.stream_entries)
        for name in args.tests:
            keys = args.stream_entries if name in STREAM_TESTS else args.members
            control(server.pid, "--instr=on")
            subprocess.run(["redis-benchmark", "-p", str(server.port), "-c", "1", "-P", "16",
                            "-n", str(args.requests), "-r", str(keys), "-q"] + TESTS[name],
                           check=True, capture_output=True)
            before = set(glob.glob(out_dir + "/callgrind.out.*"))
            control(server.pid, "--dump=" + name)
            control(server.pid, "--instr=off")
            deadline = time.time() + 60
            while not (new := set(glob.glob(out_dir + "/callgrind.out.*")) - before):
                if time.time() > deadline:
                    raise RuntimeError("callgrind wrote no dump for " + name)
                time.sleep(0.1)
            time.sleep(0.5)
            dump = new.pop()
            totals = dumped_totals(dump)
            results[name] = {
                "Ir": totals["Ir"] / args.requests,
                "D1miss": (totals.get("D1mr", 0) + totals.get("D1mw", 0)) / args.requests,
                "LLmiss": sum(totals.get(e, 0) for e in ("ILmr", "DLmr", "DLmw")) / args.requests,
            }
            if args.keep_dumps:
                os.makedirs(args.keep_dumps, exist_ok=True)
                shutil.copy(dump, os.path.join(args.keep_dumps, "%s.%s.callgrind" % (label or kind, name)))
    shutil.rmtree(out_dir, ignore_errors=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=1_000_000)
    ap.add_argument("--requests", type=int, default=20_000)
    ap.add_argument("--stream-entries", type=int, default=500_000, help="pending entries of the XACK test")
    ap.add_argument("--cache-sim", action="store_true",
                    help="simulate the caches too: D1 and last-level misses per request beside Ir")
    ap.add_argument("--tests", default="ZADD,ZSCORE", help="comma-separated, of: " + ",".join(TESTS))
    ap.add_argument("--extra", nargs="*", default=[], help="more goblin-server flags")
    ap.add_argument("--keep-dumps", metavar="DIR",
                    help="keep each test's callgrind dump as DIR/<server>.<TEST>.callgrind (for callgrind_annotate)")
    ap.add_argument("--servers", default="goblin", help="goblin, or goblin,redis for the peers beside it")
    add_peer_option(ap)
    args = ap.parse_args()
    args.tests = [t.strip().upper() for t in args.tests.split(",")]
    unknown = [t for t in args.tests if t not in TESTS]
    if unknown:
        sys.exit("unknown test(s): " + ", ".join(unknown))
    for tool in ("valgrind", "callgrind_control", "redis-benchmark"):
        if not shutil.which(tool):
            sys.exit(tool + " not found")
    kinds = [k.strip() for k in args.servers.split(",")]
    if kinds not in (["goblin"], ["goblin", "redis"]):
        sys.exit("--servers is goblin or goblin,redis")
    others = peers(args) if len(kinds) == 2 else []
    goblin = measure("goblin", args)
    results = [(peer, measure("redis", args, binary, peer)) for peer, binary in others]
    print("%d members, %d requests a test, pipeline 16, one connection" % (args.members, args.requests))
    figures = ["Ir", "D1miss", "LLmiss"] if args.cache_sim else ["Ir"]
    print("| command | figure | Goblin/request |" + "".join(" %s/request | Goblin/%s |" % (p, p) for p, _ in results))
    print("|---|---|---:|" + "---:|---:|" * len(results))
    for name in args.tests:
        for fig in figures:
            g = goblin[name][fig]
            print("| %s | %s | %.1f |" % (name, fig, g)
                  + "".join(" %.1f | %s |" % (r[name][fig], "%.2f" % (g / r[name][fig]) if r[name][fig] else "-")
                            for _, r in results))


if __name__ == "__main__":
    main()
