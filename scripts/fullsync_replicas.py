#!/usr/bin/env python3
"""One full sync of a large dataset to several replicas at once, with writes during it:
Goblin beside Redis (or two Goblin builds), for the shared replication buffer's cost.

For each binary given: a master with --keys keys (DEBUG POPULATE, 100-byte values), then
--replicas fresh replicas of the same binary sent REPLICAOF together (disk-based sync, the
master's diskless delay 0); while they sync, one client writes --writes SETs of 1 KB, so
that the stream piles up for every replica during the sync. Reported per binary: the wall
time until every replica's link is up, loaded and at the master's offset; the master's
CPU seconds over that time; the master's peak RSS (VmHWM) growth over its RSS before the
sync; the largest mem_total_replication_buffers seen (polled every 50 ms).

Usage: scripts/fullsync_replicas.py [--keys N] [--replicas R] [--writes W] NAME=BINARY...
Run by hand (it takes a minute or two per binary at 1M keys); not a test.
"""

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import redis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_stat(pid: int) -> tuple[float, int, int]:
    """CPU seconds, VmHWM and VmRSS (bytes) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    mem = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                name, value = line.split(":")
                mem[name] = int(value.split()[0]) * 1024
    return cpu, mem["VmHWM"], mem["VmRSS"]


def start(binary: str, workdir: str, *args: str) -> tuple[subprocess.Popen, redis.Redis]:
    os.makedirs(workdir, exist_ok=True)
    port = free_port()
    p = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", workdir,
                          "--save", "", "--appendonly", "no", "--repl-diskless-sync", "no",
                          "--repl-diskless-sync-delay", "0", "--enable-debug-command", "yes", *args],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = redis.Redis(port=port)
    deadline = time.monotonic() + 30
    while True:
        try:
            c.ping()
            return p, c
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def run(binary: str, keys: int, replicas: int, writes: int) -> dict:
    tmp = tempfile.mkdtemp(prefix="fullsync-")
    procs = []
    try:
        m, mc = start(binary, os.path.join(tmp, "m"))
        procs.append(m)
        mc.execute_command("DEBUG", "POPULATE", keys, "key", 100)
        reps = [start(binary, os.path.join(tmp, f"r{i}")) for i in range(replicas)]
        procs += [p for p, _ in reps]
        with open(f"/proc/{m.pid}/clear_refs", "w") as f:
            f.write("5")  # VmHWM starts again from VmRSS: the populate's peak is not counted
        cpu0, _, rss0 = proc_stat(m.pid)
        peak_buffers = 0
        done = threading.Event()

        def writer():
            w = redis.Redis(port=mc.connection_pool.connection_kwargs["port"])
            pipe = w.pipeline(transaction=False)
            for i in range(writes):
                pipe.set(f"w:{i}", "x" * 1000)
                if i % 100 == 99:
                    pipe.execute()
            pipe.execute()
            done.set()

        t = time.monotonic()
        for _, rc in reps:
            rc.execute_command("REPLICAOF", "127.0.0.1", mc.connection_pool.connection_kwargs["port"])
        th = threading.Thread(target=writer)
        th.start()
        while True:
            peak_buffers = max(peak_buffers, int(mc.info("memory")["mem_total_replication_buffers"]))
            if done.is_set():
                offset = mc.info("replication")["master_repl_offset"]
                infos = [rc.info("replication") for _, rc in reps]
                if all(i.get("master_link_status") == "up" and i["master_repl_offset"] >= offset
                       for i in infos):
                    break
            time.sleep(0.05)
        wall = time.monotonic() - t
        th.join()
        cpu1, hwm, _ = proc_stat(m.pid)
        for _, rc in reps:
            assert rc.dbsize() == mc.dbsize(), "replica missing keys"
        return {"wall_s": round(wall, 2), "master_cpu_s": round(cpu1 - cpu0, 2),
                "master_peak_growth_mb": round((hwm - rss0) / 2**20, 1),
                "peak_repl_buffers_mb": round(peak_buffers / 2**20, 1)}
    finally:
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--writes", type=int, default=100_000)
    ap.add_argument("binaries", nargs="+", help="NAME=BINARY")
    a = ap.parse_args()
    for spec in a.binaries:
        name, binary = spec.split("=", 1)
        print(name, run(binary, a.keys, a.replicas, a.writes), flush=True)


if __name__ == "__main__":
    main()
