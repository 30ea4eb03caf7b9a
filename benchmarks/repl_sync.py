#!/usr/bin/env python3
"""Full sync time, Goblin beside Debian's redis-server 7.0, every pairing, in one run.

Each master gets the same dataset: strings "key:%09d" of VALUE bytes (incompressible), GIB
gibibytes of values in all. A fresh replica then runs REPLICAOF; the time is from the REPLICAOF
to the replica's link being up with its offset equal to the master's (snapshot made, sent,
loaded). Both transfer modes: diskless (repl-diskless-sync yes, Redis 7's default, delay 0) and
disk (the snapshot file). The keys' count is checked on the replica.

Usage: benchmarks/repl_sync.py [--gib G] [--value BYTES] [--modes diskless,disk]
Needs target/release/goblin-server (cargo build --release -p goblin-server) and redis-server.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode, info  # noqa: E402


def fill(port, keys, value_len):
    value = os.urandom(value_len)
    c = Client(port)
    batch = 200

    def commands():
        for start in range(0, keys, batch):
            args = ["MSET"]
            for i in range(start, min(start + batch, keys)):
                key = b"key:%09d" % i
                args += [key, key + value[len(key):]]
            yield encode(*args)

    c.pipeline(commands(), window=16)
    n = c.call("DBSIZE")
    c.close()
    return n


def synced(master, replica):
    r = info(replica, "replication")
    return (r.get("master_link_status") == "up"
            and r.get("slave_repl_offset") == info(master, "replication")["master_repl_offset"])


def run(master_kind, replica_kind, mode, keys, value_len):
    extra = ["--repl-diskless-sync", "yes" if mode == "diskless" else "no",
             "--repl-diskless-sync-delay", "0"]
    with Server(master_kind, extra=extra) as m, Server(replica_kind, extra=extra) as r:
        n = fill(m.port, keys, value_len)
        mc, rc = Client(m.port), Client(r.port)
        started = time.monotonic()
        rc.call("REPLICAOF", "127.0.0.1", m.port)
        while not synced(mc, rc):
            time.sleep(0.01)
        secs = time.monotonic() - started
        assert rc.call("DBSIZE") == n, "the replica holds another keyspace"
        return secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--value", type=int, default=1000)
    ap.add_argument("--modes", default="diskless,disk")
    a = ap.parse_args()
    keys = int(a.gib * (1 << 30) / a.value)
    print("%d keys of %d-byte values (%.2f GiB of values)" % (keys, a.value, a.gib))
    print("| mode | master -> replica | full sync (s) |")
    print("|---|---|---:|")
    for mode in a.modes.split(","):
        for master, replica in (("redis", "redis"), ("redis", "goblin"),
                                ("goblin", "redis"), ("goblin", "goblin")):
            secs = run(master, replica, mode, keys, a.value)
            print("| %s | %s -> %s | %.2f |" % (mode, master, replica, secs), flush=True)


if __name__ == "__main__":
    main()
