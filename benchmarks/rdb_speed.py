#!/usr/bin/env python3
"""RDB speed and BGSAVE latency, Goblin beside Debian's redis-server 7.0, in one run.

1. Save and load of one sorted set of N members (default 4,000,000; member "member:%09d",
   score a random double): SAVE time, file size, MB/s; load time at start-up (the servers'
   own "DB loaded from disk" line, and the wall time from exec to the first PONG); and each
   server loading the other's file.
2. Latency seen by another client while BGSAVE writes that keyspace: one connection runs
   ZADD (update of a random existing member) and ZSCORE alternately, one request at a time,
   for a baseline period and then from 0.2 s before BGSAVE (sent by another thread, so
   requests are in flight during the fork) until the child is done. Reported:
   p50 / p99 / p99.9 / max, the fork time (INFO latest_fork_usec), the BGSAVE duration and
   the copy-on-write the child reported.

Usage: benchmarks/rdb_speed.py [--members N] [--baseline-secs S]
Needs target/release/goblin-server (cargo build --release -p goblin-server) and redis-server.
"""

import argparse
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GOBLIN_BIN, REDIS_BIN, Client, encode, free_port, wait_for_pong  # noqa: E402


class Proc:
    def __init__(self, kind, workdir, dbfilename):
        self.kind, self.workdir, self.dbfilename = kind, workdir, dbfilename
        self.log = os.path.join(workdir, "%s-%d.log" % (kind, time.monotonic_ns()))
        self.port = free_port()
        binary = GOBLIN_BIN if kind == "goblin" else REDIS_BIN
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", workdir, "--dbfilename", dbfilename]
        self.t0 = time.monotonic()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
        wait_for_pong(self.proc, self.port, "%s (log: %s)" % (kind, self.log))
        self.ready_secs = time.monotonic() - self.t0

    def loaded_secs(self):
        m = re.search(r"DB loaded from disk: ([0-9.]+) seconds", open(self.log).read())
        return float(m.group(1)) if m else None

    def client(self):
        return Client(self.port)

    def logtext(self):
        return open(self.log, errors="replace").read()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def fill(c, members, seed=7):
    rng = random.Random(seed)
    batch = 10_000

    def commands():
        for start in range(0, members, batch):
            args = ["ZADD", "big"]
            for i in range(start, min(start + batch, members)):
                args += [repr(rng.uniform(-1e6, 1e6)), "member:%09d" % i]
            yield encode(*args)

    c.pipeline(commands(), window=4)


def percentiles(samples):
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] * 1e3  # noqa: E731
    return {"n": len(s), "p50": pick(0.5), "p99": pick(0.99), "p99.9": pick(0.999), "max": s[-1] * 1e3}


def latency_loop(port, members, until, rng):
    """ZADD / ZSCORE alternately on a raw socket until until() is true; per-request seconds."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out = []
    i = 0
    while not until():
        m = b"member:%09d" % rng.randrange(members)
        if i % 2:
            req = encode("ZADD", "big", repr(rng.uniform(-1e6, 1e6)), m)
        else:
            req = encode("ZSCORE", "big", m)
        t = time.perf_counter()
        sock.sendall(req)
        buf = b""
        while True:
            buf += sock.recv(4096)
            if buf.startswith(b"$") and buf.count(b"\r\n") >= 2 or buf.startswith(b":") and buf.endswith(b"\r\n"):
                break
        out.append(time.perf_counter() - t)
        i += 1
    sock.close()
    return out


def info_field(c, section, field):
    text = c.call("INFO", section).decode()
    m = re.search(r"^%s:(\S+)" % field, text, re.M)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--members", type=int, default=4_000_000)
    ap.add_argument("--baseline-secs", type=float, default=3.0)
    args = ap.parse_args()
    n = args.members
    work = tempfile.mkdtemp(prefix="rdb-speed-")
    rows = []
    lat_rows = []
    try:
        files = {}
        for kind in ("goblin", "redis"):
            p = Proc(kind, work, "%s.rdb" % kind)
            c = p.client()
            t = time.monotonic()
            fill(c, n)
            fill_secs = time.monotonic() - t
            assert c.call("ZCARD", "big") == n
            t = time.monotonic()
            c.call("SAVE")
            save_secs = time.monotonic() - t
            size = os.path.getsize(os.path.join(work, "%s.rdb" % kind))
            files[kind] = size

            # Latency during BGSAVE on the same keyspace.
            rng = random.Random(1)
            end = time.monotonic() + args.baseline_secs
            base = latency_loop(p.port, n, lambda: time.monotonic() > end, rng)
            # BGSAVE from another thread, so a request may be in flight during the fork.
            admin = p.client()
            state = {"started": None, "done": False}

            def saver():
                time.sleep(0.2)
                state["started"] = time.monotonic()
                admin.call("BGSAVE")
                while int(info_field(admin, "persistence", "rdb_bgsave_in_progress")):
                    time.sleep(0.01)
                state["ended"] = time.monotonic()
                state["done"] = True

            t = threading.Thread(target=saver)
            t.start()
            during = latency_loop(p.port, n, lambda: state["done"], rng)
            t.join()
            bg_secs = state["ended"] - state["started"]
            fork_us = int(info_field(admin, "stats", "latest_fork_usec"))
            status = info_field(admin, "persistence", "rdb_last_bgsave_status")
            cow = re.findall(r"Fork CoW for RDB: current (\d+) MB", p.logtext())
            rss = int(open("/proc/%d/status" % p.proc.pid).read().split("VmRSS:")[1].split()[0]) * 1024
            lat_rows.append((kind, percentiles(base), percentiles(during), fork_us, bg_secs, status,
                             cow[-1] if cow else "?", rss))
            p.stop()

            p = Proc(kind, work, "%s.rdb" % kind)
            assert p.client().call("ZCARD", "big") == n
            rows.append((kind, fill_secs, save_secs, size, p.loaded_secs(), p.ready_secs))
            p.stop()
        cross = []
        for kind, other in (("goblin", "redis"), ("redis", "goblin")):
            p = Proc(kind, work, "%s.rdb" % other)
            assert p.client().call("ZCARD", "big") == n
            cross.append((kind, other, p.loaded_secs(), p.ready_secs, files[other]))
            p.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    mb = lambda b: b / 1e6  # noqa: E731
    print("## RDB save and load, one sorted set of %d members\n" % n)
    print("| server | ZADD fill s | SAVE s | file MB | save MB/s | load s (log) | load MB/s | exec to PONG s |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, fill_s, save_s, size, load_s, ready_s in rows:
        print("| %s | %.2f | %.3f | %.1f | %.0f | %.3f | %.0f | %.3f |" % (
            kind, fill_s, save_s, mb(size), mb(size) / save_s, load_s, mb(size) / load_s, ready_s))
    print("\n| loader | file from | load s (log) | load MB/s | exec to PONG s |")
    print("|---|---|---|---|---|")
    for kind, other, load_s, ready_s, size in cross:
        print("| %s | %s | %.3f | %.0f | %.3f |" % (kind, other, load_s, mb(size) / load_s, ready_s))
    print("\n## ZADD/ZSCORE latency seen by another client, ms (one request at a time)\n")
    print("| server | phase | requests | p50 | p99 | p99.9 | max |")
    print("|---|---|---|---|---|---|---|")
    for kind, base, during, fork_us, bg_s, status, cow, rss in lat_rows:
        for phase, pc in (("no save", base), ("during BGSAVE", during)):
            print("| %s | %s | %d | %.3f | %.3f | %.3f | %.2f |" % (
                kind, phase, pc["n"], pc["p50"], pc["p99"], pc["p99.9"], pc["max"]))
    print("\n| server | RSS MB | fork ms | BGSAVE s | status | child CoW MB |")
    print("|---|---|---|---|---|---|")
    for kind, base, during, fork_us, bg_s, status, cow, rss in lat_rows:
        print("| %s | %.0f | %.1f | %.2f | %s | %s |" % (kind, mb(rss), fork_us / 1e3, bg_s, status, cow))


if __name__ == "__main__":
    main()
