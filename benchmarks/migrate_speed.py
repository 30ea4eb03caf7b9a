#!/usr/bin/env python3
"""MIGRATE, DUMP and RESTORE cost, Goblin beside Debian's redis-server 7.0, in one run.

For each kind, a source and a target server of that kind (fresh, --save ""):
1. N string keys of 50 bytes (compressible: each payload goes through LZF) moved with
   MIGRATE ... KEYS in batches of 1000; reported: the CPU seconds of the source and of the
   target (utime + stime from /proc, which the load of a shared machine disturbs less than
   wall time), the wall time, and keys per second.
2. One sorted set of M members: DUMP, and RESTORE of that payload, each timed by the server
   (INFO commandstats usec_per_call); the payload size.

Usage: benchmarks/migrate_speed.py [--keys N] [--members M] [--rounds R]
Needs target/release/goblin-server and redis-server.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode, info  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_secs(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def usec_per_call(client, command):
    """The server's own time per call of `command` (INFO commandstats)."""
    fields = info(client, "commandstats")["cmdstat_" + command]
    return float(dict(f.split("=") for f in fields.split(","))["usec_per_call"])


def fill_strings(client, n):
    cmds = [encode("SET", "key:%d" % i, "v" * 50) for i in range(n)]
    client.pipeline(cmds, window=1000)


def run(kind, keys, members):
    with Server(kind) as src, Server(kind) as dst:
        c = Client(src.port)
        fill_strings(c, keys)
        s0, d0, t0 = cpu_secs(src.pid), cpu_secs(dst.pid), time.time()
        for start in range(0, keys, 1000):
            batch = ["key:%d" % i for i in range(start, min(keys, start + 1000))]
            reply = c.call("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", *batch)
            assert reply == b"OK", reply
        wall = time.time() - t0
        src_cpu, dst_cpu = cpu_secs(src.pid) - s0, cpu_secs(dst.pid) - d0
        zadd = []
        for start in range(0, members, 1000):
            args = []
            for i in range(start, min(members, start + 1000)):
                args += [i * 0.5, "member:%09d" % i]
            zadd.append(encode("ZADD", "z", *args))
        c.pipeline(zadd, window=16)
        payload = c.call("DUMP", "z")
        c.call("RESTORE", "z2", 0, payload)
        out = {
            "src_cpu": src_cpu,
            "dst_cpu": dst_cpu,
            "wall": wall,
            "keys_per_sec": keys / wall,
            "dump_ms": usec_per_call(c, "dump") / 1000,
            "restore_ms": usec_per_call(c, "restore") / 1000,
            "payload": len(payload),
        }
        c.close()
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--members", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    print("| | source CPU | target CPU | wall | keys/s | DUMP zset | RESTORE zset | payload |")
    print("|---|---|---|---|---|---|---|---|")
    for _ in range(a.rounds):
        for kind in ("redis", "goblin"):
            r = run(kind, a.keys, a.members)
            print(
                "| %s | %.2f s | %.2f s | %.1f s | %.0f | %.1f ms | %.1f ms | %d B |"
                % (kind, r["src_cpu"], r["dst_cpu"], r["wall"], r["keys_per_sec"],
                   r["dump_ms"], r["restore_ms"], r["payload"])
            )


if __name__ == "__main__":
    main()
