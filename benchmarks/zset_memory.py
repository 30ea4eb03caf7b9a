#!/usr/bin/env python3
"""Sorted-set memory: RSS bytes per member for goblin-server and redis-server.

Each case starts a fresh server pinned to one CPU, loads it over a pipelined connection and
reports (VmRSS after loading - VmRSS after start-up) / members, plus the engine's own
figure (GOBLIN.MEMORY for Goblin, used_memory growth for Redis). Goblin is measured as
loaded and again after GOBLIN.OPTIMIZE on every key (the deployment path).

Workloads (see issue "Sorted-set memory and speed"):
  W1  one set of 1M members "0".."999999", score = member
  W2  one set of N members "m:" + 12 seeded random hex chars, score a random integer in [0, 2^32)
  W3  as W2 at 1M with random non-integer f64 scores
  W4  1M keys of 10 members, and 100K keys of 200 members (members as W2)

Usage: benchmarks/zset_memory.py [--quick] [--workloads W1,W2,...] [--sizes 250000,...]
       [--plot BENCHMARKS-w2.png] [--json out.json] [--peer NAME=PATH ...]
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, add_peer_option, encode, memory_field, peers  # noqa: E402

BATCH = 500  # members per ZADD


def members_w2(n, seed):
    rng = random.Random(seed)
    seen = set()
    out = []
    while len(out) < n:
        m = b"m:%012x" % rng.getrandbits(48)
        if m not in seen:
            seen.add(m)
            out.append(m)
    return out


def zadd_commands(key, pairs):
    for i in range(0, len(pairs), BATCH):
        args = [b"ZADD", key]
        for member, score in pairs[i:i + BATCH]:
            args.append(score)
            args.append(member)
        yield encode(*args)


def workload(name, size, seed=1):
    """Returns (description, member count, list of (key, [(member, score-bytes)]))."""
    rng = random.Random(seed + 1000)
    if name == "W1":
        pairs = [(b"%d" % i, b"%d" % i) for i in range(size)]
        return "1 set, integer-like members, ordered scores", size, [(b"w1", pairs)]
    if name == "W2":
        ms = members_w2(size, seed)
        pairs = [(m, b"%d" % rng.randrange(1 << 32)) for m in ms]
        return "1 set, 14-byte members, random u32 scores", size, [(b"w2", pairs)]
    if name == "W3":
        ms = members_w2(size, seed)
        pairs = [(m, repr(rng.uniform(-1e9, 1e9)).encode()) for m in ms]
        return "1 set, 14-byte members, random f64 scores", size, [(b"w3", pairs)]
    if name.startswith("W4"):
        keys, per = (size, 10) if name == "W4a" else (size, 200)
        ms = members_w2(per * 4, seed)
        sets = []
        for k in range(keys):
            chosen = rng.sample(ms, per)
            sets.append((b"k:%d" % k, [(m, b"%d" % rng.randrange(1 << 32)) for m in chosen]))
        return "%d keys of %d members" % (keys, per), keys * per, sets
    raise ValueError(name)


def measure(kind, sets, members, cpu, binary=None):
    """Loads `sets` into a fresh server; returns a dict of bytes-per-member figures."""
    with Server(kind, cpu=cpu, binary=binary) as server:
        c = Client(server.port)
        base_rss = server.rss()
        base_used = memory_field(c, "used_memory") if kind == "redis" else 0
        for key, pairs in sets:
            c.pipeline(zadd_commands(key, pairs))
        result = {"rss": (server.rss() - base_rss) / members}
        if kind == "redis":
            result["engine"] = (memory_field(c, "used_memory") - base_used) / members
        else:
            summary = c.call("GOBLIN.MEMORY")
            result["engine"] = summary[b"bytes"] / members if isinstance(summary, dict) else dict(zip(summary[::2], summary[1::2]))[b"bytes"] / members
            c.pipeline(encode("GOBLIN.OPTIMIZE", key) for key, _ in sets)
            result["rss_optimized"] = (server.rss() - base_rss) / members
            summary = c.call("GOBLIN.MEMORY")
            summary = summary if isinstance(summary, dict) else dict(zip(summary[::2], summary[1::2]))
            result["engine_optimized"] = summary[b"bytes"] / members
        c.close()
        return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for the CI smoke run")
    ap.add_argument("--workloads", default="W1,W2,W3,W4a,W4b")
    ap.add_argument("--sizes", default="250000,500000,1000000,2000000,4000000", help="W2 member counts")
    ap.add_argument("--cpu", type=int, default=0, help="CPU the servers are pinned to")
    ap.add_argument("--plot", help="write a PNG of W2 bytes/member against members")
    ap.add_argument("--json", help="write the raw results as JSON")
    add_peer_option(ap)
    args = ap.parse_args()
    others = peers(args)

    scale = 0.01 if args.quick else 1.0
    cases = []
    names = [n for w in args.workloads.split(",") for n in (["W4a", "W4b"] if w == "W4" else [w])]
    for w in names:
        if w not in ("W1", "W2", "W3", "W4a", "W4b"):
            ap.error("unknown workload %r (W1, W2, W3, W4a, W4b; W4 means both W4 cases)" % w)
        if w == "W2":
            for n in args.sizes.split(","):
                cases.append((w, max(1000, int(int(n) * scale))))
        elif w == "W4a":
            cases.append((w, max(100, int(1_000_000 * scale))))
        elif w == "W4b":
            cases.append((w, max(10, int(100_000 * scale))))
        else:
            cases.append((w, max(1000, int(1_000_000 * scale))))

    rows = []
    print("%-4s %-45s %9s | %9s %9s %9s %9s | %9s %9s | %6s %6s" % (
        "case", "shape", "members", "G rss", "G eng", "G rss/o", "G eng/o", "P rss", "P used", "G/P", "Go/P"))
    for name, size in cases:
        desc, members, sets = workload(name, size)
        g = measure("goblin", sets, members, args.cpu)
        results = {peer: measure("redis", sets, members, args.cpu, binary) for peer, binary in others}
        rows.append({"case": name, "shape": desc, "members": members, "goblin": g, "peers": results,
                     "redis": results[others[0][0]]})
        for peer, r in results.items():
            print("%-4s %-45s %9d | %9.1f %9.1f %9.1f %9.1f | %9.1f %9.1f | %6.2f %6.2f  %s" % (
                name, desc, members, g["rss"], g["engine"], g["rss_optimized"], g["engine_optimized"],
                r["rss"], r["engine"], g["rss"] / r["rss"], g["rss_optimized"] / r["rss"], peer), flush=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        w2 = [r for r in rows if r["case"] == "W2"]
        xs = [r["members"] for r in w2]
        plt.figure(figsize=(7, 4))
        for peer, _ in others:
            plt.plot(xs, [r["peers"][peer]["rss"] for r in w2], "o-", label="%s (RSS)" % peer)
        plt.plot(xs, [r["goblin"]["rss"] for r in w2], "s-", label="goblin as loaded (RSS)")
        plt.plot(xs, [r["goblin"]["rss_optimized"] for r in w2], "^-", label="goblin after GOBLIN.OPTIMIZE (RSS)")
        plt.xscale("log")
        plt.ylim(bottom=0)
        plt.xlabel("members in the set (W2)")
        plt.ylabel("RSS bytes per member")
        plt.title("Sorted-set memory, W2: 14-byte members, random u32 scores")
        plt.grid(True, alpha=0.3)
        plt.legend()
        plt.tight_layout()
        plt.savefig(args.plot, dpi=100)
        print("plot written to", args.plot)


if __name__ == "__main__":
    main()
