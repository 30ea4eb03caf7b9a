#!/usr/bin/env python3
"""A bounded load test of maxmemory: 4 clients write new sorted-set members with ZADD as fast
as they can for --seconds, far past --maxmemory, while the server's RSS is sampled every 100
ms. It passes when no client saw a reply other than an integer or the OOM error, the server
is alive at the end, and the RSS stayed within 10% of maxmemory plus --overhead (code, stacks,
buffers: what a server holds before it stores anything).

    python3 benchmarks/maxmemory_load.py [--seconds 60] [--maxmemory 64mb] [--policy allkeys-lru]
"""

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode, info  # noqa: E402

PAD = "x" * 80  # members of about 100 bytes
OOM = "OOM command not allowed when used memory > 'maxmemory'."


def writer(port, n, stop, seen):
    c = Client(port)
    i = 0
    batch = 64
    while not stop.is_set():
        cmds = []
        for _ in range(batch):
            key = "w%d:k%d" % (n, i // 50)
            cmds.append(encode("ZADD", key, i, "member:%d:%d:%s" % (n, i, PAD)))
            i += 1
        c.sock.sendall(b"".join(cmds))
        for _ in range(batch):
            try:
                r = c.read_reply()
                kind = "int" if isinstance(r, int) else repr(r)
            except RuntimeError as e:
                kind = "oom" if str(e) == OOM else "error: %s" % e
            seen[kind] = seen.get(kind, 0) + 1
    c.close()


def parse_size(text):
    units = {"kb": 1024, "mb": 1 << 20, "gb": 1 << 30, "k": 1000, "m": 10 ** 6, "g": 10 ** 9}
    for u in sorted(units, key=len, reverse=True):
        if text.lower().endswith(u):
            return int(text[: -len(u)]) * units[u]
    return int(text)


def run(seconds, maxmemory, policy, overhead_mb, clients=4):
    limit = parse_size(maxmemory)
    with Server("goblin", extra=["--maxmemory", maxmemory, "--maxmemory-policy", policy]) as s:
        base_rss = s.rss()
        stop = threading.Event()
        seen = [dict() for _ in range(clients)]
        threads = [threading.Thread(target=writer, args=(s.port, n, stop, seen[n])) for n in range(clients)]
        for t in threads:
            t.start()
        peak = 0
        deadline = time.time() + seconds
        while time.time() < deadline:
            peak = max(peak, s.rss())
            time.sleep(0.1)
        stop.set()
        for t in threads:
            t.join()
        alive = s.proc.poll() is None
        c = Client(s.port)
        evicted = int(info(c, "stats")["evicted_keys"])
        c.close()
    totals = {}
    for d in seen:
        for k, v in d.items():
            totals[k] = totals.get(k, 0) + v
    bound = limit * 1.1 + overhead_mb * (1 << 20)
    ok = alive and set(totals) <= {"int", "oom"} and peak <= bound
    return {"ok": ok, "alive": alive, "replies": totals, "peak_rss": peak, "base_rss": base_rss,
            "bound": bound, "evicted": evicted}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--maxmemory", default="64mb")
    ap.add_argument("--policy", default="allkeys-lru")
    ap.add_argument("--overhead", type=int, default=16, help="MiB allowed beside maxmemory")
    args = ap.parse_args()
    r = run(args.seconds, args.maxmemory, args.policy, args.overhead)
    print("%s for %.0f s, maxmemory %s, 4 writers: replies %s, evicted %d keys" % (
        args.policy, args.seconds, args.maxmemory, r["replies"], r["evicted"]))
    print("RSS at start %.1f MiB, peak %.1f MiB, bound %.1f MiB -> %s" % (
        r["base_rss"] / 2 ** 20, r["peak_rss"] / 2 ** 20, r["bound"] / 2 ** 20, "ok" if r["ok"] else "FAILED"))
    sys.exit(0 if r["ok"] else 1)


if __name__ == "__main__":
    main()
