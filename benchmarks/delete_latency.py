#!/usr/bin/env python3
"""What other clients see while a big sorted set is deleted: loads one set of --members
members into a fresh server, then one thread sends ZSCORE requests back to back on another
key while the main thread sends DEL (or UNLINK, FLUSHALL) of the big set; reports the
longest and the p99.9 wait of the ZSCORE client during the window, for goblin-server and
redis-server. Redis's DEL frees in place unless lazyfree-lazy-user-del is set; Goblin
always hands big values to its lazy-free thread."""

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode  # noqa: E402


def run(kind, members, command, cpu):
    with Server(kind, cpu=cpu) as server:
        c = Client(server.port)
        c.pipeline(encode("ZADD", "big", *[x for i in range(s, min(s + 1000, members)) for x in (i, "m:%012x" % i)])
                   for s in range(0, members, 1000))
        c.call("ZADD", "small", 1, "a")
        waits = []
        stop = threading.Event()

        def prober():
            p = Client(server.port)
            while not stop.is_set():
                t = time.perf_counter()
                p.call("ZSCORE", "small", "a")
                waits.append(time.perf_counter() - t)
            p.close()

        th = threading.Thread(target=prober)
        th.start()
        time.sleep(0.3)
        t = time.perf_counter()
        c.call(*command)
        took = time.perf_counter() - t
        time.sleep(0.3)
        stop.set()
        th.join()
        waits.sort()
        return took, waits[-1], waits[int(len(waits) * 0.999)]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--members", type=int, default=4_000_000)
    ap.add_argument("--cpu", type=int, default=0)
    args = ap.parse_args()
    print("| server | command | command took (ms) | other client's longest wait (ms) | p99.9 (ms) |")
    print("|---|---|---:|---:|---:|")
    for command in (("DEL", "big"), ("UNLINK", "big"), ("FLUSHALL",)):
        for kind in ("goblin", "redis"):
            took, worst, p999 = run(kind, args.members, command, args.cpu)
            print("| %s | %s | %.2f | %.2f | %.2f |" % (kind, " ".join(command), took * 1e3, worst * 1e3, p999 * 1e3), flush=True)


if __name__ == "__main__":
    main()
