#!/usr/bin/env python3
"""Restart at scale: every path that builds or walks the keyspace, Goblin beside Redis.

Builds one dataset of N keys of mixed types (by default 10M: 70% small strings, 20%
counters, 10% small hashes of 5 fields; plus a 1M-member sorted set, a 1M-field hash, a
1M-member set and a 1M-element list, each a tenth of N), written once as RESP and piped into
each server with `redis-cli --pipe`, so both hold the same data. Then, for each server:

  growth      (first, on a fresh server) redis-benchmark sets about N new keys (random in a
              space of 10N, pipeline 64) while another client sends one SET at a time: that
              client's latency while the key table grows, max, p99.9 and p99, ms
  fill        the pipe's wall time
  save        SAVE: wall time, the server's CPU seconds and the file size
  rdb-load    restart on the snapshot: CPU seconds of the process when it first answers PING
              (wall time beside it), and its peak RSS (VmHWM)
  aof-rewrite BGREWRITEAOF with the RDB preamble, wall time until it is done
  aof-load    restart on that AOF: CPU and wall as rdb-load
  aof-plain   the same with aof-use-rdb-preamble no (an AOF of commands)
  full-sync   a fresh replica of the same kind: wall time from REPLICAOF until its link is
              up and it has loaded, and the replica's CPU seconds
  syncs       (with --transfers-only) a fresh replica's full sync in each repl-diskless-load
              mode (disabled, on-empty-db, swapdb), the master streaming without delay: wall
              and the replica's CPU
  migrate     (with --transfers-only) MIGRATE ... COPY of each 1M-member value to a fresh
              server of the same kind: wall, the source's and the target's CPU
  reshard     (with --reshard-only) three masters of a cluster; one slot of the first holds
              N keys; `redis-cli --cluster reshard` moves that slot to the second: wall,
              and the CPU of the two nodes
  info        INFO (all sections), INFO memory and MEMORY STATS: median and max of 50 calls, ms
  probe       redis-cli --latency for 10 s while a scraper sends INFO all every second, as an
              exporter does: the probe's max and average, ms
  scan        a full SCAN walk with COUNT 1000: wall, and the server's CPU seconds
  restore     DUMP of the 1M-member sorted set, then RESTORE of it under another name: CPU
  reload      DEBUG RELOAD (save, flush, load): wall and CPU
  flushall    FLUSHALL ASYNC: its reply's latency, ms, and the wall time until the
              background free is done (lazyfree_pending_objects 0)
  eviction    maxmemory lowered to 90% of used_memory (allkeys-lru) while PINGs are sent one
              at a time: wall and CPU until used_memory is under it (within a thousandth),
              the slowest PING, and the evicted_keys

Usage:
  benchmarks/scale.py [--keys N] [--peers goblin,redis] [--json FILE] [--growth-only]
                     [--transfers-only] [--reshard-only]
  benchmarks/scale.py --check            # the complexity check CI runs (see below)
  benchmarks/scale.py --plot out.svg a.json b.json ...   # cost against keys, log-log

REDIS_BIN names the peer (Redis 7.2.4 built from source, e.g. REDIS_BIN=.../src/redis-server;
Debian's 7.0 otherwise). Run by hand; a 10M-key run takes about ten minutes a server.

--check runs Goblin alone at 200K and 800K keys (both past the CPU caches, so the cost per
key is the same; the reshard with a quarter of that in its slot) and fails when a path's time at 800K is more than twice what linear scaling
from 200K predicts (plus 50 ms for clock granularity), or an INFO call at 800K takes more than
twice its time at 200K (plus 1 ms). That is a complexity
check, not a timed test: it compares Goblin with itself on the same machine in the same run.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GOBLIN_BIN, REDIS_BIN, Client, encode, free_port, wait_for_pong  # noqa: E402

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
TICK = os.sysconf("SC_CLK_TCK")


def dataset(path, keys):
    """Writes the dataset's commands to `path` as RESP; returns the number of commands."""
    big = max(keys // 10, 1)
    commands = 0
    with open(path, "wb") as f:
        out = []
        for i in range(keys):
            kind = i % 10
            if kind < 7:
                out.append(encode("SET", "s:%010d" % i, "value-%08d" % i))
            elif kind < 9:
                out.append(encode("SET", "n:%010d" % i, i))
            else:
                out.append(encode("HSET", "h:%010d" % i, "a", 1, "b", 2, "c", 3, "d", 4, "e", i))
            if len(out) >= 10_000:
                f.write(b"".join(out))
                commands += len(out)
                out = []
        for start in range(0, big, 1000):
            members = range(start, min(start + 1000, big))
            zargs, hargs, sargs, largs = [], [], [], []
            for m in members:
                zargs += [m * 0.5, "member:%09d" % m]
                hargs += ["field:%09d" % m, m]
                sargs.append("element:%09d" % m)
                largs.append("item:%09d" % m)
            out.append(encode("ZADD", "big:zset", *zargs))
            out.append(encode("HSET", "big:hash", *hargs))
            out.append(encode("SADD", "big:set", *sargs))
            out.append(encode("RPUSH", "big:list", *largs))
        f.write(b"".join(out))
        commands += len(out)
    return commands


def proc_stat(pid):
    """(CPU seconds, peak RSS bytes) of process `pid`."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    hwm = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
    return cpu, hwm


class Proc:
    """One server process of `kind` in `workdir`, started with `extra` directives."""

    def __init__(self, kind, workdir, extra=()):
        self.kind, self.workdir = kind, workdir
        self.port = free_port()
        binary = GOBLIN_BIN if kind == "goblin" else REDIS_BIN
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--dir", workdir, "--logfile", "%s-%d.log" % (kind, self.port),
                "--enable-debug-command", "yes"]
        argv += list(extra)
        start = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
        wait_for_pong(self.proc, self.port, "%s (see %s)" % (kind, workdir))
        self.ready_wall = time.monotonic() - start
        self.ready_cpu, self.ready_hwm = proc_stat(self.proc.pid)
        self.client = Client(self.port)

    def call(self, *args):
        return self.client.call(*args)

    def info(self, section):
        text = self.call("INFO", section).decode()
        return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)

    def wait(self, section, done, timeout=3600):
        deadline = time.monotonic() + timeout
        while not done(self.info(section)):
            if time.monotonic() > deadline:
                raise RuntimeError("%s: timed out waiting on INFO %s" % (self.kind, section))
            time.sleep(0.01)

    def stop(self):
        try:
            self.client.close()
        finally:
            self.proc.kill()
            self.proc.wait()


def restart_figures(p):
    return {"cpu": p.ready_cpu, "wall": p.ready_wall, "peak_rss": p.ready_hwm}


def info_latency(p):
    out = {}
    for name, args in (("info", ("INFO", "everything")), ("info_memory", ("INFO", "memory")),
                       ("memory_stats", ("MEMORY", "STATS"))):
        times = []
        for _ in range(50):
            t = time.perf_counter()
            p.call(*args)
            times.append((time.perf_counter() - t) * 1000)
        out[name] = {"median_ms": statistics.median(times), "max_ms": max(times)}
    return out


def scraped_probe(p, secs=10):
    """redis-cli --latency for `secs` beside a thread sending INFO all every second."""
    stop = threading.Event()

    def scrape():
        c = Client(p.port)
        while not stop.wait(1.0):
            c.call("INFO", "all")
        c.close()

    scraper = threading.Thread(target=scrape)
    scraper.start()
    try:
        out = subprocess.run([REDIS_CLI, "-p", str(p.port), "--latency", "--raw", "-i", str(secs)],
                             check=True, capture_output=True, text=True).stdout.split()
    finally:
        stop.set()
        scraper.join()
    return {"max_ms": float(out[1]), "avg_ms": float(out[2]), "samples": int(out[3])}


def growth(kind, keys, workdir):
    """SET latency seen by one client while redis-benchmark grows a fresh server to about
    `keys` keys (each SET of the probe is a new key too)."""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    p = Proc(kind, workdir)
    stop = threading.Event()
    times = []

    def probe():
        c = Client(p.port)
        n = 0
        while not stop.is_set():
            s = time.perf_counter()
            c.call("SET", "probe:%d" % n, n)
            times.append(time.perf_counter() - s)
            n += 1
        c.close()

    prober = threading.Thread(target=probe)
    t = time.monotonic()
    prober.start()
    try:
        subprocess.run([REDIS_BENCHMARK, "-p", str(p.port), "-t", "set", "-n", str(keys),
                        "-r", str(keys * 10), "-P", "64", "-c", "1", "-d", "16", "-q"],
                       check=True, stdout=subprocess.DEVNULL)
    finally:
        stop.set()
        prober.join()
    r = {"wall": time.monotonic() - t, "cpu": proc_stat(p.proc.pid)[0], "dbsize": p.call("DBSIZE")}
    p.stop()
    times.sort()
    pct = lambda q: times[min(len(times) - 1, int(len(times) * q))] * 1000  # noqa: E731
    r.update({"max_ms": times[-1] * 1000, "p999_ms": pct(0.999), "p99_ms": pct(0.99),
              "samples": len(times), "over_10ms": sum(x > 0.01 for x in times)})
    return r


def transfers(kind, commands_file, workdir):
    """Full syncs in each repl-diskless-load mode and MIGRATE of the big values, from one
    server holding the dataset."""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    p = Proc(kind, workdir, ["--repl-diskless-sync-delay", "0"])
    with open(commands_file, "rb") as f:
        subprocess.run([REDIS_CLI, "-p", str(p.port), "--pipe"], stdin=f, check=True,
                       stdout=subprocess.DEVNULL)
    r = {"kind": kind, "dbsize": p.call("DBSIZE")}
    for mode in ("disabled", "on-empty-db", "swapdb"):
        rdir = os.path.join(workdir, "replica-" + mode)
        os.makedirs(rdir)
        replica = Proc(kind, rdir, ["--repl-diskless-load", mode])
        t = time.monotonic()
        replica.call("REPLICAOF", "127.0.0.1", str(p.port))
        replica.wait("replication", lambda i: i.get("master_link_status") == "up")
        replica.wait("persistence", lambda i: i.get("loading") == "0" and i.get("async_loading", "0") == "0")
        r["sync_" + mode] = {"wall": time.monotonic() - t, "cpu": proc_stat(replica.proc.pid)[0]}
        if replica.call("DBSIZE") != r["dbsize"]:
            raise RuntimeError("%s replica (%s) has %s keys" % (kind, mode, replica.call("DBSIZE")))
        replica.stop()
    tdir = os.path.join(workdir, "target")
    os.makedirs(tdir)
    target = Proc(kind, tdir)
    for key in ("big:zset", "big:hash", "big:set", "big:list"):
        before = proc_stat(target.proc.pid)[0]
        reply, wall, cpu = timed(p, "MIGRATE", "127.0.0.1", target.port, key, 0, 600000, "COPY")
        if reply != b"OK":
            raise RuntimeError("%s MIGRATE %s: %r" % (kind, key, reply))
        r["migrate_" + key.split(":")[1]] = {"wall": wall, "source_cpu": cpu,
                                             "target_cpu": proc_stat(target.proc.pid)[0] - before}
    target.stop()
    p.stop()
    return r


def key_slot(key):
    """Redis Cluster's slot of `key` (CRC16-XMODEM of the whole key; no hash tag in it)."""
    crc = 0
    for b in key.encode():
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc % 16384


def reshard(kind, keys, workdir):
    """`redis-cli --cluster reshard` of one slot holding `keys` keys between two masters."""
    shutil.rmtree(workdir, ignore_errors=True)
    nodes = []
    for i in range(3):
        d = os.path.join(workdir, "node%d" % i)
        os.makedirs(d)
        # The bus listens on port + 10000: an ephemeral port above 55535 has none.
        for _ in range(20):
            try:
                nodes.append(Proc(kind, d, ["--cluster-enabled", "yes", "--cluster-node-timeout", "5000"]))
                break
            except RuntimeError:
                continue
    try:
        subprocess.run([REDIS_CLI, "--cluster", "create"] + ["127.0.0.1:%d" % n.port for n in nodes]
                       + ["--cluster-yes"], check=True, stdout=subprocess.DEVNULL)
        for n in nodes:
            n.wait("cluster", lambda i: True)
            deadline = time.monotonic() + 60
            while b"cluster_state:ok" not in n.call("CLUSTER", "INFO"):
                if time.monotonic() > deadline:
                    raise RuntimeError("%s cluster not ok" % kind)
                time.sleep(0.1)
        # A tag of slot 0, the first slot of the first master: reshard moves it first.
        tag = next(t for t in ("t%d" % i for i in range(1 << 20)) if key_slot(t) == 0)
        cmds = os.path.join(workdir, "slot.resp")
        with open(cmds, "wb") as f:
            for start in range(0, keys, 10_000):
                f.write(b"".join(encode("SET", "{%s}:%010d" % (tag, i), "value-%08d" % i)
                                 for i in range(start, min(start + 10_000, keys))))
        with open(cmds, "rb") as f:
            subprocess.run([REDIS_CLI, "-p", str(nodes[0].port), "--pipe"], stdin=f, check=True,
                           stdout=subprocess.DEVNULL)
        ids = [n.call("CLUSTER", "MYID").decode() for n in nodes]
        cpu = [proc_stat(n.proc.pid)[0] for n in nodes[:2]]
        t = time.monotonic()
        subprocess.run([REDIS_CLI, "--cluster", "reshard", "127.0.0.1:%d" % nodes[0].port,
                        "--cluster-from", ids[0], "--cluster-to", ids[1], "--cluster-slots", "1",
                        "--cluster-yes"], check=True, stdout=subprocess.DEVNULL)
        source, target = proc_stat(nodes[0].proc.pid)[0] - cpu[0], proc_stat(nodes[1].proc.pid)[0] - cpu[1]
        r = {"kind": kind, "keys": keys, "wall": time.monotonic() - t, "cpu": source + target,
             "source_cpu": source, "target_cpu": target,
             "moved": nodes[1].call("CLUSTER", "COUNTKEYSINSLOT", 0)}
    finally:
        for n in nodes:
            n.stop()
    return r


def timed(p, *args):
    """Sends one command: (reply, wall seconds, the server's CPU seconds)."""
    t, cpu = time.monotonic(), proc_stat(p.proc.pid)[0]
    reply = p.call(*args)
    return reply, time.monotonic() - t, proc_stat(p.proc.pid)[0] - cpu


def walks(p):
    """SCAN, RESTORE of the big sorted set, DEBUG RELOAD and FLUSHALL ASYNC on `p`."""
    r = {"probe": scraped_probe(p)}
    t, cpu = time.monotonic(), proc_stat(p.proc.pid)[0]
    cursor, seen = b"0", 0
    while True:
        cursor, batch = p.call("SCAN", cursor, "COUNT", 1000)
        seen += len(batch)
        if cursor == b"0":
            break
    r["scan"] = {"wall": time.monotonic() - t, "cpu": proc_stat(p.proc.pid)[0] - cpu, "keys": seen}
    payload = p.call("DUMP", "big:zset")
    _, wall, cpu = timed(p, "RESTORE", "big:copy", 0, payload)
    r["restore"] = {"wall": wall, "cpu": cpu, "payload_bytes": len(payload)}
    p.call("DEL", "big:copy")
    _, wall, cpu = timed(p, "DEBUG", "RELOAD")
    r["reload"] = {"wall": wall, "cpu": cpu}
    t = time.monotonic()
    p.call("FLUSHALL", "ASYNC")
    reply_ms = (time.monotonic() - t) * 1000
    p.wait("memory", lambda i: i.get("lazyfree_pending_objects") == "0")
    r["flushall"] = {"reply_ms": reply_ms, "wall": time.monotonic() - t}
    return r


def eviction(p):
    """maxmemory lowered under the data: until used_memory is below it, PINGs one at a time."""
    used = int(p.info("memory")["used_memory"])
    p.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    t, cpu = time.monotonic(), proc_stat(p.proc.pid)[0]
    p.call("CONFIG", "SET", "maxmemory", used * 9 // 10)
    slowest = 0.0
    # INFO's own figure includes the sections already written before its memory section
    # (in Redis as in Goblin): a thousandth of slack for that.
    while int(p.info("memory")["used_memory"]) > used * 9 // 10 + used // 1000:
        for _ in range(100):
            s = time.perf_counter()
            p.call("PING")
            slowest = max(slowest, time.perf_counter() - s)
    return {"wall": time.monotonic() - t, "cpu": proc_stat(p.proc.pid)[0] - cpu,
            "slowest_ping_ms": slowest * 1000, "evicted_keys": int(p.info("stats")["evicted_keys"])}


def run(kind, commands_file, keys, workdir):
    """Every measurement for one server kind; returns a dict of figures."""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    r = {"kind": kind, "keys": keys, "growth": growth(kind, keys, workdir)}
    p = Proc(kind, workdir)
    t = time.monotonic()
    with open(commands_file, "rb") as f:
        subprocess.run([REDIS_CLI, "-p", str(p.port), "--pipe"], stdin=f, check=True,
                       stdout=subprocess.DEVNULL)
    r["fill_wall"] = time.monotonic() - t
    r["dbsize"] = p.call("DBSIZE")
    r["info"] = info_latency(p)
    t, cpu = time.monotonic(), proc_stat(p.proc.pid)[0]
    p.call("SAVE")
    r["save"] = {"wall": time.monotonic() - t, "cpu": proc_stat(p.proc.pid)[0] - cpu}
    r["rdb_bytes"] = os.path.getsize(os.path.join(workdir, "dump.rdb"))

    # Full sync to a fresh replica of the same kind.
    rdir = os.path.join(workdir, "replica")
    os.makedirs(rdir)
    replica = Proc(kind, rdir, ["--repl-diskless-load", "disabled"])
    t = time.monotonic()
    replica.call("REPLICAOF", "127.0.0.1", str(p.port))
    replica.wait("replication", lambda i: i.get("master_link_status") == "up")
    replica.wait("persistence", lambda i: i.get("loading") == "0")
    r["full_sync"] = {"wall": time.monotonic() - t, "cpu": proc_stat(replica.proc.pid)[0],
                      "peak_rss": proc_stat(replica.proc.pid)[1]}
    if replica.call("DBSIZE") != r["dbsize"]:
        raise RuntimeError("%s replica has %s keys, master %s" % (kind, replica.call("DBSIZE"), r["dbsize"]))
    replica.stop()
    p.stop()

    p = Proc(kind, workdir)
    r["rdb_load"] = restart_figures(p)
    if p.call("DBSIZE") != r["dbsize"]:
        raise RuntimeError("%s loaded %s keys of %s" % (kind, p.call("DBSIZE"), r["dbsize"]))
    p.stop()

    for name, preamble in (("aof", "yes"), ("aof_plain", "no")):
        p = Proc(kind, workdir, ["--aof-use-rdb-preamble", preamble])
        t = time.monotonic()
        p.call("CONFIG", "SET", "appendonly", "yes")
        p.wait("persistence", lambda i: i.get("aof_rewrite_in_progress") == "0"
               and i.get("aof_rewrite_scheduled") == "0" and i.get("aof_enabled") == "1")
        r[name + "_rewrite_wall"] = time.monotonic() - t
        p.stop()
        p = Proc(kind, workdir, ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble])
        p.wait("persistence", lambda i: i.get("loading") == "0")
        r[name + "_load"] = restart_figures(p)
        r[name + "_load"]["cpu"] = proc_stat(p.proc.pid)[0]
        if p.call("DBSIZE") != r["dbsize"]:
            raise RuntimeError("%s AOF (%s) loaded %s keys" % (kind, name, p.call("DBSIZE")))
        p.stop()
        shutil.rmtree(os.path.join(workdir, "appendonlydir"), ignore_errors=True)

    p = Proc(kind, workdir)
    r.update(walks(p))
    p.stop()
    p = Proc(kind, workdir)
    r["eviction"] = eviction(p)
    p.stop()
    return r


# The paths the complexity check judges. Eviction is measured in full runs only: at 200K
# keys its CPU is a few clock ticks, too coarse for a ratio.
PATHS = ("save", "full_sync", "rdb_load", "aof_rewrite_wall", "aof_load",
         "aof_plain_rewrite_wall", "aof_plain_load", "scan", "restore", "reload", "reshard")


def cost(r, path):
    """The figure a path is judged by: CPU seconds where measured, else wall seconds."""
    v = r[path]
    return v["cpu"] if isinstance(v, dict) else v


def check(workdir):
    """Goblin at 100K and 400K keys; fails when a path grows faster than twice linear."""
    small, large = 200_000, 800_000
    results = {}
    for keys in (small, large):
        cmds = os.path.join(workdir, "commands-%d.resp" % keys)
        dataset(cmds, keys)
        results[keys] = run("goblin", cmds, keys, os.path.join(workdir, "goblin-%d" % keys))
        # The cheaper of two reshards: a single one of a few tenths of a second moved by
        # 10x on a loaded CI machine (0.37 s at 200K, 4.21 s at 800K where a re-run gave
        # 0.77 and 3.05).
        results[keys]["reshard"] = min(
            (reshard("goblin", keys // 4, os.path.join(workdir, "reshard-%d" % keys)) for _ in range(2)),
            key=lambda r: r["cpu"])
    factor = large / small
    failures = []
    for path in PATHS:
        a, b = cost(results[small], path), cost(results[large], path)
        limit = 2 * factor * a + 0.05
        print("%-24s %8.3f s at %d  %8.3f s at %d  (limit %.3f)" % (path, a, small, b, large, limit))
        if b > limit:
            failures.append(path)
    for name in results[small]["info"]:
        a = results[small]["info"][name]["median_ms"]
        b = results[large]["info"][name]["median_ms"]
        limit = 2 * a + 1.0
        print("%-24s %8.3f ms at %d  %8.3f ms at %d  (limit %.3f)" % (name, a, small, b, large, limit))
        if b > limit:
            failures.append(name)
    if failures:
        print("FAILED: more than twice linear: %s" % ", ".join(failures))
        return 1
    print("complexity check passed")
    return 0


# The paths the plot draws, with a colour each.
PLOTTED = (("save", "#1f77b4"), ("rdb_load", "#ff7f0e"), ("full_sync", "#2ca02c"),
           ("aof_load", "#d62728"), ("aof_plain_load", "#9467bd"), ("scan", "#8c564b"),
           ("reload", "#e377c2"))


def plot(json_files, out):
    """Writes to `out` an SVG of each path's cost (CPU seconds) against the key count, on
    log-log axes, from the --json files of full runs at several sizes: Goblin solid, the
    peer dashed; a line parallel to the diagonal is linear."""
    series = {}
    for name in json_files:
        with open(name) as f:
            for r in json.load(f):
                for path, _ in PLOTTED:
                    if path in r and cost(r, path) > 0:
                        series.setdefault((r["kind"], path), []).append((r["keys"], cost(r, path)))
    points = [pt for pts in series.values() for pt in pts]
    if not points:
        raise SystemExit("no figures to plot")
    w, h, m = 760, 480, 60
    lx = [math.log10(k) for k, _ in points]
    ly = [math.log10(c) for _, c in points]
    x0, x1 = math.floor(min(lx)), math.ceil(max(lx))
    y0, y1 = math.floor(min(ly)), math.ceil(max(ly))
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
    sx = lambda k: m + (math.log10(k) - x0) / (x1 - x0) * (w - 2 * m - 140)  # noqa: E731
    sy = lambda c: h - m - (math.log10(c) - y0) / (y1 - y0) * (h - 2 * m)  # noqa: E731
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12"><rect width="100%%" height="100%%" fill="white"/>' % (w, h)]
    for e in range(x0, x1 + 1):
        x = sx(10 ** e)
        svg.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" '
                   'text-anchor="middle">1e%d</text>' % (x, m, x, h - m, x, h - m + 16, e))
    for e in range(y0, y1 + 1):
        y = sy(10 ** e)
        svg.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" '
                   'text-anchor="end">%g s</text>' % (m, y, w - m - 140, y, m - 4, y + 4, 10 ** e))
    svg.append('<text x="%d" y="%d" text-anchor="middle">keys</text>' % ((w - 140) // 2, h - 16))
    colour = dict(PLOTTED)
    for i, ((kind, path), pts) in enumerate(sorted(series.items())):
        pts.sort()
        dash = "" if kind == "goblin" else ' stroke-dasharray="6,4"'
        svg.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>' % (
            colour[path], dash, " ".join("%.1f,%.1f" % (sx(k), sy(c)) for k, c in pts)))
        svg.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   '<text x="%d" y="%d">%s %s</text>' % (
                       w - 190, m + 16 * i, w - 170, m + 16 * i, colour[path], dash,
                       w - 165, m + 16 * i + 4, kind, path))
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


def report(results, path):
    """Prints `results` and writes them to `path` when given."""
    print(json.dumps(results, indent=1))
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--peers", default="goblin,redis")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--check", action="store_true", help="the CI complexity check")
    ap.add_argument("--growth-only", action="store_true", help="only the growth step")
    ap.add_argument("--transfers-only", action="store_true", help="only the syncs and MIGRATEs")
    ap.add_argument("--reshard-only", action="store_true", help="only the cluster reshard")
    ap.add_argument("--plot", nargs="+", metavar=("SVG", "JSON"),
                    help="write SVG from the --json files of full runs at several sizes")
    args = ap.parse_args()
    if args.plot:
        return plot(args.plot[1:], args.plot[0])
    workdir = tempfile.mkdtemp(prefix="goblin-scale-")
    peers = args.peers.split(",")
    try:
        if args.check:
            return check(workdir)
        if args.reshard_only:
            return report([reshard(kind, args.keys, os.path.join(workdir, kind)) for kind in peers], args.json)
        if args.growth_only:
            return report([growth(kind, args.keys, os.path.join(workdir, kind)) for kind in peers], args.json)
        cmds = os.path.join(workdir, "commands.resp")
        t = time.monotonic()
        n = dataset(cmds, args.keys)
        print("dataset: %d commands, %.0f MB, written in %.1f s" % (n, os.path.getsize(cmds) / 1e6, time.monotonic() - t))
        if args.transfers_only:
            return report([transfers(kind, cmds, os.path.join(workdir, kind)) for kind in peers], args.json)
        return report([run(kind, cmds, args.keys, os.path.join(workdir, kind)) for kind in peers], args.json)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
