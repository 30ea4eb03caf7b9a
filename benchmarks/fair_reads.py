#!/usr/bin/env python3
"""Fairness under a bulk load: how long an interactive client waits while another client
streams commands as fast as it can.

For Goblin and each peer, on a fresh server: `redis-cli --pipe` sends N SETs (one RESP file,
written once) while a probe client sends one PING at a time, a millisecond apart, from just
before the pipe starts until it ends. Printed per server: the pipe's wall time, the number of
probes, and the probe's median, p99 and worst round trip in ms.

A server that keeps reading one busy connection until its socket is empty answers the probe
only when the pipe pauses; one that serves each ready connection in turn answers within a
round of requests.

    benchmarks/fair_reads.py [--sets N] [--peer NAME=redis-server ...]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, add_peer_option, encode, peers  # noqa: E402


def write_pipe_file(path, sets):
    """N SETs of distinct 16-byte keys and 16-byte values, as redis-cli --pipe reads them."""
    with open(path, "wb") as f:
        batch = []
        for i in range(sets):
            batch.append(encode("SET", "key:%012d" % i, "value:%010d" % i))
            if len(batch) == 10000:
                f.write(b"".join(batch))
                batch = []
        f.write(b"".join(batch))


def probe(port, stop, samples):
    """PING once a millisecond until `stop` is set; appends each round trip in seconds."""
    c = Client(port)
    while not stop.is_set():
        t = time.perf_counter()
        c.call("PING")
        samples.append(time.perf_counter() - t)
        time.sleep(0.001)
    c.close()


def measure(server, pipe_file):
    """(pipe wall s, probe round trips in s) while the pipe loads `pipe_file`."""
    stop, samples = threading.Event(), []
    prober = threading.Thread(target=probe, args=(server.port, stop, samples))
    prober.start()
    time.sleep(0.2)
    t = time.perf_counter()
    with open(pipe_file, "rb") as f:
        subprocess.run(["redis-cli", "-p", str(server.port), "--pipe"], stdin=f,
                       stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    stop.set()
    prober.join()
    return wall, samples


def quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", type=int, default=1_000_000)
    add_peer_option(ap)
    args = ap.parse_args()
    servers = [("goblin", "goblin", None)] + [(name, "redis", binary) for name, binary in peers(args)]
    with tempfile.TemporaryDirectory(prefix="goblin-fair-") as tmp:
        pipe_file = os.path.join(tmp, "sets.resp")
        write_pipe_file(pipe_file, args.sets)
        print("%d SETs by redis-cli --pipe, a PING every ms beside it" % args.sets)
        print("| server | pipe wall, s | probes | PING median, ms | p99, ms | worst, ms |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, kind, binary in servers:
            with Server(kind, binary=binary) as server:
                wall, samples = measure(server, pipe_file)
            ms = sorted(s * 1000 for s in samples)
            print("| %s | %.2f | %d | %.2f | %.2f | %.1f |" % (
                name, wall, len(ms), quantile(ms, 0.5), quantile(ms, 0.99), ms[-1]), flush=True)


if __name__ == "__main__":
    main()
