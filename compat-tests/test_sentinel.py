"""Redis Sentinel (Debian's redis-sentinel, or redis-server --sentinel) fails a master over
on loopback: a master and two replicas, each started from a configuration file, watched by
three sentinels (down-after-milliseconds 1000, failover-timeout 3000). The master is killed
with SIGKILL; a replica must be promoted, the other must follow it, and the old master,
restarted from its file, must come back as a replica of the new one (Sentinel sends it
`MULTI; SLAVEOF; CONFIG REWRITE; CLIENT KILL; EXEC`, so its rewritten file names the new
master too). A client writing through redis-py's Sentinel sees the outage end and loses no
write acknowledged after the promotion. Run as Goblin everywhere and mixed with Redis.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
import redis
import redis.sentinel

from harness import GOBLIN_BIN, REDIS_BIN, free_port
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import wait_for

SENTINEL_BIN = shutil.which("redis-sentinel")
NAME = "mymaster"


class ConfProc(Proc):
    """A server started from a configuration file on a port fixed once (a restart reuses it
    and the file as it was rewritten)."""

    def __init__(self, binary: str, workdir: Path, lines: list[str], name: str):
        super().__init__(binary, workdir, name=name)
        workdir.mkdir(parents=True, exist_ok=True)
        self.fixed_port = free_port()
        self.conf = workdir / f"{name}.conf"
        self.conf.write_text("\n".join([f"port {self.fixed_port}", "bind 127.0.0.1",
                                        f'dir "{workdir}"', *lines]) + "\n")
        self.sentinel = any(line.startswith("sentinel ") for line in lines)

    def start(self, expect_up: bool = True, timeout: float = 20.0) -> "ConfProc":
        argv = [self.binary, str(self.conf)]
        if self.sentinel and SENTINEL_BIN is None:
            argv.append("--sentinel")
        self.port = self.fixed_port
        import subprocess

        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(argv, cwd=self.workdir, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for(lambda: self._pings(), timeout, f"{self.conf.name} to start:\n{self.output()}")
        return self

    def _pings(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.conf.name} exited:\n{self.output()}")
        try:
            return self.client().ping()
        except (redis.ConnectionError, redis.ResponseError):
            return False


def server_conf() -> list[str]:
    return ["save \"\"", "appendonly no", "repl-diskless-sync-delay 0", "daemonize no"]


def role(p: ConfProc) -> list:
    try:
        return p.client().execute_command("ROLE")
    except redis.ConnectionError:
        return []


def follows(p: ConfProc, master: ConfProc) -> bool:
    """Whether `p` is a replica of `master` with its link up (one ROLE: Sentinel's CLIENT
    KILLs may cut a connection between two)."""
    r = role(p)
    return r[:1] == [b"slave"] and r[2] == master.port and r[3] == b"connected"


class Writer:
    """Writes k0, k1, ... through Sentinel, recording what was acknowledged and when."""

    def __init__(self, sentinels: list[int]):
        self.sentinel = redis.sentinel.Sentinel([("127.0.0.1", p) for p in sentinels],
                                                socket_timeout=0.5)
        self.acked: list[tuple[str, float]] = []
        self.errors = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        master = self.sentinel.master_for(NAME, socket_timeout=0.5, socket_connect_timeout=0.5)
        i = 0
        while not self.stop.is_set():
            key = f"k{i}"
            try:
                master.set(key, i)
                self.acked.append((key, time.monotonic()))
                i += 1
            except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError,
                    redis.ResponseError):
                self.errors += 1
                time.sleep(0.05)
            time.sleep(0.005)


@pytest.mark.parametrize("master_kind,replica_kind",
                         [("goblin", "goblin"), ("goblin", "redis"), ("redis", "goblin")])
def test_sentinel_fails_the_master_over(procs, tmp_path, master_kind, replica_kind):
    binary = {"goblin": GOBLIN_BIN, "redis": REDIS_BIN}
    master = ConfProc(binary[master_kind], tmp_path / "m", server_conf(), "master")
    procs.append(master.start())
    replicas = []
    for i in range(2):
        r = ConfProc(binary[replica_kind], tmp_path / f"r{i}",
                     [*server_conf(), f"replicaof 127.0.0.1 {master.port}"], f"replica{i}")
        procs.append(r.start())
        replicas.append(r)
    sentinels = []
    for i in range(3):
        s = ConfProc(SENTINEL_BIN or REDIS_BIN, tmp_path / f"s{i}", [
            f"sentinel monitor {NAME} 127.0.0.1 {master.port} 2",
            f"sentinel down-after-milliseconds {NAME} 1000",
            f"sentinel failover-timeout {NAME} 3000",
            f"sentinel parallel-syncs {NAME} 1",
        ], f"sentinel{i}")
        procs.append(s.start())
        sentinels.append(s)

    def known(s: ConfProc) -> bool:
        c = s.client()
        return (len(c.execute_command("SENTINEL", "REPLICAS", NAME)) == 2
                and len(c.execute_command("SENTINEL", "SENTINELS", NAME)) == 2)

    wait_for(lambda: all(known(s) for s in sentinels), 30, "the sentinels to know everyone")
    writer = Writer([s.port for s in sentinels])
    writer.thread.start()
    wait_for(lambda: len(writer.acked) > 50, 10, "writes through Sentinel")

    master.kill9()
    killed = time.monotonic()

    def promoted():
        addr = sentinels[0].client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
        port = int(addr[1])
        return next((r for r in replicas if r.port == port), None)

    new = wait_for(promoted, 30, "a replica to be promoted")
    other = next(r for r in replicas if r is not new)
    wait_for(lambda: role(new)[:1] == [b"master"], 20, "the promoted replica to be master")
    wait_for(lambda: follows(other, new), 30, "the other replica to follow")
    wait_for(lambda: writer.acked and writer.acked[-1][1] > killed + 0.1
             and any(t > killed for _, t in writer.acked[-5:]), 30, "writes to resume")
    resumed = next(t for _, t in writer.acked if t > killed)

    # The old master comes back as a master (its file says so); Sentinel converts it. On a
    # loaded machine the sentinels may fail over a second time (a promoted master is briefly
    # slow to answer their PINGs), so the end state is read from Sentinel: every other server
    # follows the master it names.
    master.start()
    servers = [master, *replicas]

    def settled():
        addr = sentinels[0].client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
        current = next((p for p in servers if p.port == int(addr[1])), None)
        if current is None or role(current)[:1] != [b"master"]:
            return None
        return current if all(follows(p, current) for p in servers if p is not current) else None

    try:
        final = wait_for(settled, 40, "the old master to rejoin")
    except AssertionError:
        raise AssertionError(f"old master's ROLE {role(master)}, new master :{new.port}\n"
                             f"{master.output()[-3000:]}\n{sentinels[0].output()[-3000:]}")
    if final is not master:
        assert f"replicaof 127.0.0.1 {final.port}" in master.conf.read_text()
    settled_at = time.monotonic()
    wait_for(lambda: any(t > settled_at for _, t in writer.acked), 20, "writes after rejoining")

    writer.stop.set()
    writer.thread.join(10)
    # Every write acknowledged after the promotion is on the new master (and replicated). A
    # second failover may lose writes acknowledged before it (replication is asynchronous), so
    # then only those acknowledged once everything settled are required.
    since = resumed if final is new else settled_at
    c = final.client()
    after = [k for k, t in writer.acked if t > since]
    assert after and all(c.exists(k) for k in after)
    wait_for(lambda: all(p.client().exists(after[-1]) for p in servers if p is not final), 20,
             "the last write on every replica")
    print(f"{master_kind} master / {replica_kind} replicas: writes resumed "
          f"{resumed - killed:.1f} s after the kill"
          + ("" if final is new else f"; a second failover moved the master to :{final.port}"))
