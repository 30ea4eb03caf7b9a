#!/usr/bin/env python3
"""Crash safety of Goblin's append-only file: kill -9 during a write load, restart from the
AOF, check the writes.

With `appendfsync always` (the default here) every write the server acknowledged must be
there after each restart; with `--fsync everysec` a kill -9 of the process alone loses
nothing either (the write(2) precedes the reply; only the fsync lags), and the check is the
same. Every third kill lands during a BGREWRITEAOF of a large sorted set. The clients keep
the list of acknowledged writes: counters per client (INCR: the value after restart is at
least the last acknowledged one and at most one more, the write in flight) and SADD of
unique members (each acknowledged member is present).

    scripts/aof_crash.py --kills 100                 # the long campaign, by hand
    scripts/aof_crash.py --kills 5 --workdir /tmp/x  # the short one the compat suite runs
    scripts/aof_crash.py --fsync everysec --kills 20 --rounds 3 --peer redis-server --count
                        # both servers in one run, each round starting with the next one,
                        # acknowledged writes lost counted (not fatal) and their medians printed
    ... --io-load       # a thread writing and fsyncing 8 MiB at a time beside the servers'
                        # files the whole time (a busy disk: slow fsyncs, as on a shared machine)
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from common import Client as Conn, encode, free_port  # noqa: E402  (stdlib-only RESP client)


class Server:
    def __init__(self, binary: str, workdir: Path, fsync: str):
        self.binary, self.workdir, self.fsync = binary, workdir, fsync
        self.name = Path(binary).name
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> None:
        self.port = free_port()
        log = open(self.workdir / "server.log", "ab")
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--dir", str(self.workdir), "--save", "",
             "--appendonly", "yes", "--appendfsync", self.fsync], stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited; see {self.workdir / 'server.log'}")
            try:
                c = Conn(self.port)
                c.call("PING")
                c.close()
                return
            except (OSError, RuntimeError):  # refused, or -LOADING
                time.sleep(0.05)
        raise RuntimeError(f"{self.name} did not come up")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def load(port: int, cid: int, acked: dict, stop: threading.Event) -> None:
    """One client: INCR its counter and SADD a unique member, recording what was acked."""
    try:
        c = Conn(port)
        while not stop.is_set():
            n = acked[cid]["n"] + 1
            acked[cid]["inflight"] = True
            v = c.call("INCR", f"counter:{cid}")
            acked[cid]["n"] = v
            c.call("SADD", f"members:{cid}", v)
            acked[cid]["members"] = v
            acked[cid]["inflight"] = False
            assert v == n, (v, n)
    except (OSError, ConnectionError, RuntimeError):
        pass


def check(port: int, acked: dict, count: bool) -> int:
    """The acknowledged writes lost (an error unless `count`); the bookkeeping follows the
    server's state so that the next round counts only its own losses."""
    c = Conn(port)
    lost = 0
    for cid, a in acked.items():
        got = int(c.call("GET", f"counter:{cid}") or 0)
        if got > a["n"] + 1:
            raise AssertionError(f"client {cid}: acknowledged {a['n']}, found {got}")
        if got < a["n"]:
            if not count:
                raise AssertionError(f"client {cid}: acknowledged {a['n']}, found {got}")
            lost += a["n"] - got
        elif a["members"] and c.call("SISMEMBER", f"members:{cid}", a["members"]) != 1:
            if not count:
                raise AssertionError(f"client {cid}: acknowledged member {a['members']} missing")
            lost += 1
        a["n"] = got
        a["members"] = 0
    c.close()
    return lost


def io_load(workdir: Path, stop: threading.Event) -> None:
    """Keeps the disk busy: 8 MiB written and fsynced, over and over, in one file."""
    block = random.randbytes(8 << 20)
    with open(workdir / "io-load.bin", "wb") as f:
        while not stop.is_set():
            f.seek(0)
            f.write(block)
            f.flush()
            os.fsync(f.fileno())


def campaign(binary: str, args, rng: random.Random) -> list[int]:
    """`args.kills` kills of one server in a fresh directory: the losses of each."""
    workdir = Path(tempfile.mkdtemp(prefix="aof-crash-", dir=args.workdir))
    server = Server(binary, workdir, args.fsync)
    busy = threading.Event()
    if args.io_load:
        threading.Thread(target=io_load, args=(workdir, busy), daemon=True).start()
    server.start()
    c = Conn(server.port)
    c.pipeline(encode("ZADD", "big", *[x for j in range(i, i + 10_000) for x in (j, f"m{j}")])
               for i in range(0, 400_000, 10_000))
    c.close()
    acked = {cid: {"n": 0, "members": 0, "inflight": False} for cid in range(args.clients)}
    losses = []
    for kill in range(args.kills):
        stop = threading.Event()
        threads = [threading.Thread(target=load, args=(server.port, cid, acked, stop))
                   for cid in range(args.clients)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.2, 0.8))
        if kill % 3 == 2:
            r = Conn(server.port)
            try:
                r.call("BGREWRITEAOF")
            except RuntimeError:
                pass  # one already running
            r.close()
            time.sleep(rng.uniform(0.0, 0.05))
        server.kill9()
        stop.set()
        for t in threads:
            t.join()
        server.start()
        total = sum(a["n"] for a in acked.values())
        losses.append(check(server.port, acked, args.count))
        print(f"{server.name} kill {kill + 1}/{args.kills}: {total} acknowledged writes, "
              f"{losses[-1]} lost", flush=True)
    server.kill9()
    busy.set()
    if not sum(losses):
        shutil.rmtree(workdir, ignore_errors=True)
    return losses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--fsync", default="always", choices=["always", "everysec"])
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--binary", default=str(REPO / "target" / "release" / "goblin-server"))
    ap.add_argument("--peer", action="append", default=[],
                    help="another server binary (redis-server) run in the same rounds; repeatable")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--count", action="store_true",
                    help="count acknowledged writes lost instead of stopping at the first")
    ap.add_argument("--io-load", action="store_true",
                    help="keep the disk busy with a writer that fsyncs 8 MiB at a time")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
    binaries = [args.binary] + args.peer
    totals: dict[str, list[int]] = {Path(b).name: [] for b in binaries}
    for rnd in range(args.rounds):
        order = binaries[rnd % len(binaries):] + binaries[:rnd % len(binaries)]
        for b in order:
            losses = campaign(b, args, random.Random(rng.random()))
            totals[Path(b).name].append(sum(losses))
            print(f"round {rnd + 1} {Path(b).name}: {sum(losses)} acknowledged writes lost "
                  f"over {args.kills} kills", flush=True)
    for name, lost in totals.items():
        print(f"{name}: lost per round {lost}, median {statistics.median(lost)}")
    if any(sum(lost) for lost in totals.values()):
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
