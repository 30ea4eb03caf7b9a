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
"""

from __future__ import annotations

import argparse
import random
import signal
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
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> None:
        self.port = free_port()
        log = open(self.workdir / "goblin.log", "ab")
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--dir", str(self.workdir), "--save", "",
             "--appendonly", "yes", "--appendfsync", self.fsync], stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("goblin-server exited; see " + str(self.workdir / "goblin.log"))
            try:
                c = Conn(self.port)
                c.call("PING")
                c.close()
                return
            except (OSError, RuntimeError):
                time.sleep(0.05)
        raise RuntimeError("goblin-server did not come up")

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


def check(port: int, acked: dict) -> None:
    c = Conn(port)
    for cid, a in acked.items():
        got = int(c.call("GET", f"counter:{cid}") or 0)
        if not a["n"] <= got <= a["n"] + 1:
            raise AssertionError(f"client {cid}: acknowledged {a['n']}, found {got}")
        a["n"] = got
        if a["members"]:
            present = c.call("SISMEMBER", f"members:{cid}", a["members"])
            if present != 1:
                raise AssertionError(f"client {cid}: acknowledged member {a['members']} missing")
    c.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--fsync", default="always", choices=["always", "everysec"])
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--binary", default=str(REPO / "target" / "release" / "goblin-server"))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="aof-crash-"))
    workdir.mkdir(parents=True, exist_ok=True)
    server = Server(args.binary, workdir, args.fsync)
    server.start()
    c = Conn(server.port)
    c.pipeline(encode("ZADD", "big", *[x for j in range(i, i + 10_000) for x in (j, f"m{j}")])
               for i in range(0, 400_000, 10_000))
    c.close()
    acked = {cid: {"n": 0, "members": 0, "inflight": False} for cid in range(args.clients)}
    for kill in range(args.kills):
        stop = threading.Event()
        threads = [threading.Thread(target=load, args=(server.port, cid, acked, stop))
                   for cid in range(args.clients)]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.2, 0.8))
        if kill % 3 == 2:
            r = Conn(server.port)
            r.call("BGREWRITEAOF")
            r.close()
            time.sleep(rng.uniform(0.0, 0.05))
        server.kill9()
        stop.set()
        for t in threads:
            t.join()
        server.start()
        check(server.port, acked)
        total = sum(a["n"] for a in acked.values())
        print(f"kill {kill + 1}/{args.kills}: {total} acknowledged writes present", flush=True)
    server.kill9()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
