#!/usr/bin/env python3
"""Failover campaign: Goblin beside Redis in the same run. For each server, a cluster of 3
masters + 3 replicas (redis-cli --cluster create --cluster-replicas 1, node timeout
--timeout ms); a writer sets keys through RedisCluster, a write counting as acknowledged
once WAIT 1 confirmed a replica has it; a master is killed with SIGKILL; the promotion time
is from the kill until the replica calls itself master, the outage until the first write
that succeeds on the killed master's slots. The killed node is restarted and must rejoin as
a replica. After --rounds rounds every acknowledged key is read back: none may be lost.

    python3 scripts/cluster_failover.py [--rounds 3] [--timeout 2000]

Needs redis-cli, redis-server (Debian's 7.0) and target/release/goblin-server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "compat-tests"))
os.environ.setdefault("GOBLIN_BIN", str(ROOT / "target/release/goblin-server"))

from redis.cluster import RedisCluster  # noqa: E402

import test_cluster  # noqa: E402
from test_cluster_failover import (  # noqa: E402
    create_with_replicas, master_of, myid, pairs, restart, roles_settled,
)


class TmpFactory:
    """What start_nodes wants of pytest's tmp_path_factory."""

    def __init__(self, base: Path):
        self.base = base

    def mktemp(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=name, dir=self.base))


class Writer(threading.Thread):
    """Sets k0, k1, ... and records the keys a replica acknowledged (WAIT 1)."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.rc = RedisCluster(host="127.0.0.1", port=port)
        self.acked: list[str] = []
        self.ok_times: list[tuple[float, int]] = []
        self.stop = False
        self.i = 0

    def run(self) -> None:
        while not self.stop:
            key = f"k{self.i}"
            try:
                self.rc.set(key, self.i)
                node = self.rc.get_node_from_key(key)
                conn = self.rc.get_redis_connection(node)
                if conn.execute_command("WAIT", 1, 500) >= 1:
                    self.acked.append(key)
                self.ok_times.append((time.monotonic(), self.rc.keyslot(key)))
                self.i += 1
            except Exception:  # noqa: BLE001 - a failing node: retry the same key
                time.sleep(0.05)
                try:
                    self.rc.nodes_manager.initialize()
                except Exception:  # noqa: BLE001
                    pass


def slots_of(node) -> set[int]:
    out = set()
    for s in node.client().execute_command("CLUSTER", "SLOTS"):
        if s[2][2].decode() == myid(node):
            out.update(range(s[0], s[1] + 1))
    return out


def campaign(kind: str, rounds: int, timeout: str, base: Path) -> dict:
    nodes = test_cluster.start_nodes(TmpFactory(base), [kind] * 6, node_timeout=timeout)
    promotions, outages = [], []
    try:
        create_with_replicas(nodes)
        test_cluster.wait_for("sync", lambda: roles_settled(nodes), 60)
        writer = Writer(nodes[0].port)
        writer.start()
        for _ in range(rounds):
            time.sleep(2)
            master, replica = pairs(nodes)[0]
            owned = slots_of(master)
            t0 = time.monotonic()
            master.proc.kill()
            master.proc.wait()
            test_cluster.wait_for("promotion", lambda: master_of(replica) is None, 60)
            promotions.append(time.monotonic() - t0)
            test_cluster.wait_for("a write on its slots", lambda: any(
                t > t0 and s in owned for t, s in writer.ok_times[-200:]), 60)
            first = min(t for t, s in writer.ok_times if t > t0 and s in owned)
            outages.append(first - t0)
            restart(master)
            test_cluster.wait_for("rejoin", lambda: master_of(master) == myid(replica), 60)
            test_cluster.wait_for("settle", lambda: roles_settled(nodes), 60)
        writer.stop = True
        writer.join()
        lost = [k for k in writer.acked if writer.rc.get(k) != k[1:].encode()]
        return {
            "kind": kind, "promotion_s": promotions, "outage_s": outages,
            "writes": writer.i, "acked": len(writer.acked), "lost": len(lost),
        }
    finally:
        test_cluster.stop_all(nodes)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", default="2000", help="cluster-node-timeout, ms")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as base:
        for kind in ("goblin", "redis"):
            r = campaign(kind, args.rounds, args.timeout, Path(base))
            print(f"{kind:6} node-timeout {args.timeout} ms: promotion median "
                  f"{statistics.median(r['promotion_s']):.2f} s (each {[round(x, 2) for x in r['promotion_s']]}), "
                  f"write outage median {statistics.median(r['outage_s']):.2f} s, "
                  f"{r['writes']} writes, {r['acked']} acked by a replica, {r['lost']} acked lost")


if __name__ == "__main__":
    main()
