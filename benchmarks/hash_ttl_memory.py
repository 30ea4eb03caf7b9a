#!/usr/bin/env python3
"""Memory of hash-field expiry: one hash of 1M fields ("field:N" = 8-byte value), INFO's
used_memory after the fields are set, then after every field got a time (HPEXPIREAT, far
in the future), on Goblin and on a Redis 7.4+ (REDIS74_BIN, default /work/redis-unstable).

Usage: benchmarks/hash_ttl_memory.py [fields]"""

import os
import sys

from common import Client, Server

REDIS74_BIN = os.environ.get("REDIS74_BIN", "/work/redis-unstable/src/redis-server")
BATCH = 1000


def used(c):
    info = c.call("INFO", "memory").decode()
    return int(next(l.split(":")[1] for l in info.splitlines() if l.startswith("used_memory:")))


def measure(kind, n):
    with Server(kind, binary=REDIS74_BIN if kind == "redis" else None) as s:
        c = Client(s.port)
        base = used(c)
        for i in range(0, n, BATCH):
            args = []
            for j in range(i, min(n, i + BATCH)):
                args += [f"field:{j}", f"v{j:07d}"]
            c.call("HSET", "h", *args)
        plain = used(c) - base
        for i in range(0, n, BATCH):
            fields = [f"field:{j}" for j in range(i, min(n, i + BATCH))]
            c.call("HPEXPIREAT", "h", 4102444800000 + i, "FIELDS", len(fields), *fields)
        timed = used(c) - base
        c.close()
    return plain, timed


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    print(f"{n} fields: bytes per field without times, with times")
    for kind in ("goblin", "redis"):
        plain, timed = measure(kind, n)
        print(f"{kind:7} {plain / n:6.1f} {timed / n:6.1f}")


if __name__ == "__main__":
    main()
