#!/usr/bin/env python3
"""Throughput of a cluster of 2 and 3 masters (Goblin, then Redis) on this machine
(redis-benchmark refuses a cluster of one node):
redis-benchmark --cluster, pipeline 16, 50 clients, its SET, GET and ZADD tests. Every node
runs on the same machine, so on 2 cores the figures show the routing overhead, not scaling.

--slot-del N times the deletion of N keys of one slot (`{t}:i`, loaded first) in random
order, pipelined, on a node serving every slot (the slot-to-keys index's removal).
--rebalance times `redis-cli --cluster rebalance --cluster-use-empty-masters` of a cluster
of 3 masters and a 4th empty one added (4096 empty slots move: SETSLOT commands and the
nodes.conf writes they cause).

Usage: benchmarks/cluster_speed.py [--requests N | --slot-del N | --rebalance]
(needs target/release/goblin-server, redis-server, redis-cli and redis-benchmark)
"""

import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import GOBLIN_BIN, REDIS_BIN, Client, encode, wait_for_pong  # noqa: E402


def port_pair_free(port):
    for p in (port, port + 10000):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                return False
    return True


def start_node(kind):
    port = next(p for p in iter(lambda: random.randint(20000, 29999), None) if port_pair_free(p))
    d = tempfile.mkdtemp(prefix="goblin-cluster-bench-")
    binary = GOBLIN_BIN if kind == "goblin" else REDIS_BIN
    cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
           "--cluster-enabled", "yes", "--cluster-node-timeout", "5000"]
    if kind == "redis":
        cmd += ["--dir", d]
    proc = subprocess.Popen(cmd, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_pong(proc, port, kind, 10)
    return proc, port, d


def cluster_of(kind, n):
    nodes = [start_node(kind) for _ in range(n)]
    ports = [p for _, p, _ in nodes]
    if n >= 3:
        subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in ports],
                        "--cluster-yes"], check=True, capture_output=True)
    else:
        # redis-cli wants 3 masters: split the slots by hand and meet.
        share = 16384 // n
        for i, p in enumerate(ports):
            end = 16383 if i == n - 1 else (i + 1) * share - 1
            subprocess.run(["redis-cli", "-p", str(p), "cluster", "addslotsrange", str(i * share), str(end)],
                           check=True, capture_output=True)
            subprocess.run(["redis-cli", "-p", str(p), "cluster", "set-config-epoch", str(i + 1)],
                           check=True, capture_output=True)
        for p in ports[1:]:
            subprocess.run(["redis-cli", "-p", str(p), "cluster", "meet", "127.0.0.1", str(ports[0])],
                           check=True, capture_output=True)
    for _ in range(300):
        states = [subprocess.run(["redis-cli", "-p", str(p), "cluster", "info"], capture_output=True,
                                 text=True).stdout for p in ports]
        if all("cluster_state:ok" in s and f"cluster_known_nodes:{n}" in s for s in states):
            return nodes
        time.sleep(0.1)
    raise RuntimeError("cluster not ok")


def bench(port, requests):
    out = subprocess.run(["redis-benchmark", "--cluster", "-p", str(port), "-P", "16", "-c", "50",
                          "-n", str(requests), "-t", "set,get,zadd", "-q"],
                         capture_output=True, text=True, check=True).stdout
    rates = {}
    for line in out.replace("\r", "\n").splitlines():
        if "requests per second" in line:
            name, rest = line.split(":", 1)
            rates[name.strip()] = float(rest.split()[0])
    return rates


def stop(nodes):
    for proc, _, d in nodes:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def slot_del(kind, n):
    """Seconds to DEL n keys of one slot in random order (pipelined, 1000 a batch)."""
    nodes = [start_node(kind)]
    try:
        port = nodes[0][1]
        c = Client(port)
        c.call("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        while b"cluster_state:ok" not in c.call("CLUSTER", "INFO"):
            time.sleep(0.05)
        keys = [f"{{t}}:{i}" for i in range(n)]
        c.pipeline(encode("MSET", *[x for k in keys[s:s + 1000] for x in (k, "v")])
                   for s in range(0, n, 1000))
        random.shuffle(keys)
        t = time.perf_counter()
        c.pipeline(encode("DEL", *keys[s:s + 1000]) for s in range(0, n, 1000))
        elapsed = time.perf_counter() - t
        assert c.call("DBSIZE") == 0
        c.close()
        return elapsed
    finally:
        stop(nodes)


def rebalance(kind):
    """Seconds `redis-cli --cluster rebalance` takes to give an added empty 4th master its
    share of a 3-master cluster's slots."""
    nodes = cluster_of(kind, 3)
    nodes.append(start_node(kind))
    try:
        ports = [p for _, p, _ in nodes]
        subprocess.run(["redis-cli", "--cluster", "add-node", f"127.0.0.1:{ports[3]}",
                        f"127.0.0.1:{ports[0]}"], check=True, capture_output=True)
        for _ in range(300):
            infos = [subprocess.run(["redis-cli", "-p", str(p), "cluster", "info"],
                                    capture_output=True, text=True).stdout for p in ports]
            if all("cluster_known_nodes:4" in i and "cluster_state:ok" in i for i in infos):
                break
            time.sleep(0.1)
        t = time.perf_counter()
        out = subprocess.run(["redis-cli", "--cluster", "rebalance", f"127.0.0.1:{ports[0]}",
                              "--cluster-use-empty-masters"], capture_output=True, text=True)
        elapsed = time.perf_counter() - t
        if out.returncode != 0:
            raise RuntimeError(out.stdout + out.stderr)
        return elapsed
    finally:
        stop(nodes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=500000)
    ap.add_argument("--slot-del", type=int, default=0)
    ap.add_argument("--rebalance", action="store_true")
    args = ap.parse_args()
    if args.slot_del:
        for kind in ("goblin", "redis"):
            print(f"{kind}: DEL of {args.slot_del} keys of one slot: {slot_del(kind, args.slot_del):.2f} s")
        return
    if args.rebalance:
        for kind in ("goblin", "redis"):
            print(f"{kind}: rebalance onto an empty 4th master: {rebalance(kind):.2f} s")
        return
    for kind in ("goblin", "redis"):
        for n in (2, 3):
            nodes = cluster_of(kind, n)
            try:
                rates = bench(nodes[0][1], args.requests)
                print(f"{kind} {n} node(s): " + ", ".join(f"{k} {v:,.0f}/s" for k, v in rates.items()))
            finally:
                stop(nodes)


if __name__ == "__main__":
    main()
