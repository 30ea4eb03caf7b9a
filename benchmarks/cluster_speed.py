#!/usr/bin/env python3
"""Throughput of a cluster of 2 and 3 masters (Goblin, then Redis) on this machine
(redis-benchmark refuses a cluster of one node):
redis-benchmark --cluster, pipeline 16, 50 clients, its SET, GET and ZADD tests. Every node
runs on the same machine, so on 2 cores the figures show the routing overhead, not scaling.

Usage: benchmarks/cluster_speed.py [--requests N]   (needs target/release/goblin-server,
redis-server, redis-cli and redis-benchmark)
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
from common import GOBLIN_BIN, REDIS_BIN, Client  # noqa: E402


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
    for _ in range(200):
        try:
            c = Client(port)
            c.call("PING")
            c.close()
            return proc, port, d
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{kind} did not start")


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=500000)
    args = ap.parse_args()
    for kind in ("goblin", "redis"):
        for n in (2, 3):
            nodes = cluster_of(kind, n)
            try:
                rates = bench(nodes[0][1], args.requests)
                print(f"{kind} {n} node(s): " + ", ".join(f"{k} {v:,.0f}/s" for k, v in rates.items()))
            finally:
                for proc, _, d in nodes:
                    proc.terminate()
                    proc.wait()
                    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
