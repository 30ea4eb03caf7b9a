#!/usr/bin/env python3
"""PUBLISH fan-out: goblin-server beside redis-server, in one run.

Each round starts a fresh server pinned to --server-cpu and, in a separate process pinned
to --client-cpu, opens N subscriber connections (raw sockets) that SUBSCRIBE to one
channel and then read and discard until every message has arrived. One publisher
connection (pinned to --client-cpu too) sends --messages PUBLISH (--fanout-messages when
there is more than one subscriber) pipelined (--pipeline unanswered at
most). Measured: publisher throughput (PUBLISH replies read per second), delivery time
(first send until the last subscriber has every byte), and the server's CPU seconds
(/proc/<pid>/stat utime+stime) over the run, per message. The pubsub output buffer limit is
off on both servers so a slow reader is not disconnected. Rounds alternate the servers;
the table shows medians.

    python3 benchmarks/publish_speed.py [--subscribers 1 100] [--messages 200000]
        [--fanout-messages 20000] [--rounds 3]
"""

import argparse
import multiprocessing
import os
import selectors
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode  # noqa: E402

CHANNEL = b"bench-channel"
PAYLOAD = b"x" * 16
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def message_bytes():
    """One delivered message as a RESP2 subscriber reads it."""
    return encode(b"message", CHANNEL, PAYLOAD)


def subscribers(port, n, messages, cpu, ready, done):
    """Opens `n` subscribers, signals `ready`, reads until each has every message."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    want = messages * len(message_bytes())
    sel = selectors.DefaultSelector()
    left = {}
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(encode(b"SUBSCRIBE", CHANNEL))
        # The confirmation: *3 $9 subscribe $<n> channel :1
        expect = b"*3\r\n$9\r\nsubscribe\r\n" + b"$%d\r\n%s\r\n:1\r\n" % (len(CHANNEL), CHANNEL)
        got = b""
        while len(got) < len(expect):
            got += s.recv(len(expect) - len(got))
        assert got == expect, got
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        left[s] = want
    ready.set()
    while left:
        for key, _ in sel.select():
            s = key.fileobj
            chunk = s.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed a subscriber")
            left[s] -= len(chunk)
            if left[s] <= 0:
                sel.unregister(s)
                del left[s]
    done.set()


def run_round(kind, n, args):
    messages = args.messages if n == 1 else args.fanout_messages
    extra = ["--client-output-buffer-limit", "pubsub 0 0 0"]
    with Server(kind, cpu=args.server_cpu, extra=extra) as server:
        ready, done = multiprocessing.Event(), multiprocessing.Event()
        proc = multiprocessing.Process(
            target=subscribers, args=(server.port, n, messages, args.client_cpu, ready, done))
        proc.start()
        ready.wait(60)
        pub = Client(server.port)
        assert pub.call("PING") == b"PONG"
        cmds = [encode(b"PUBLISH", CHANNEL, PAYLOAD)] * messages
        cpu0 = cpu_seconds(server.pid)
        t0 = time.perf_counter()
        pub.pipeline(cmds, window=args.pipeline)
        t_pub = time.perf_counter() - t0
        done.wait(600)
        t_all = time.perf_counter() - t0
        cpu = cpu_seconds(server.pid) - cpu0
        proc.join(10)
        assert proc.exitcode == 0, "subscribers failed"
        pub.close()
        return {
            "pub_per_s": messages / t_pub,
            "deliveries_per_s": messages * n / t_all,
            "cpu_us_per_msg": cpu / messages * 1e6,
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--subscribers", type=int, nargs="+", default=[1, 100])
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--fanout-messages", type=int, default=20_000)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    args = ap.parse_args()
    if args.client_cpu is not None:
        os.sched_setaffinity(0, {args.client_cpu})
    runs = {(kind, n): [] for kind in ("goblin", "redis") for n in args.subscribers}
    for r in range(args.rounds):
        for kind in (["goblin", "redis"] if r % 2 == 0 else ["redis", "goblin"]):
            for n in args.subscribers:
                runs[(kind, n)].append(run_round(kind, n, args))
            print("round %d %s done" % (r + 1, kind), file=sys.stderr, flush=True)
    print("%d messages (%d with more than one subscriber) of %d bytes, pipeline %d, %d rounds; medians" % (
        args.messages, args.fanout_messages, len(PAYLOAD), args.pipeline, args.rounds))
    print("| subscribers | server | PUBLISH/s | deliveries/s | server CPU us/message |")
    print("|---:|---|---:|---:|---:|")
    for n in args.subscribers:
        for kind in ("goblin", "redis"):
            rs = runs[(kind, n)]
            print("| %d | %s | %.0f | %.0f | %.2f |" % (
                n, kind,
                statistics.median(x["pub_per_s"] for x in rs),
                statistics.median(x["deliveries_per_s"] for x in rs),
                statistics.median(x["cpu_us_per_msg"] for x in rs)))


if __name__ == "__main__":
    main()
