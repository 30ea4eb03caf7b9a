"""Replication with Debian's redis-server 7.0, both ways: a Redis replica of a Goblin master and
a Goblin replica of a Redis master, each with writes running through the full sync and through
a forced disconnection (CLIENT KILL TYPE replica / master) that must end in a partial resync,
then identical keyspaces compared key by key. Also a chain (Redis -> Goblin -> Redis), WAIT,
ROLE, min-replicas-to-write, the READONLY and NOMASTERLINK errors, INFO replication's fields,
and `redis-cli --rdb` / `redis-cli --replica` against Goblin.

Each test starts its own servers on free ports in its own temporary directory.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis

from harness import GOBLIN_BIN, REDIS_BIN, free_port
from test_aof import assert_same, deterministic_mix, keyspace
from test_persistence import Proc, procs  # noqa: F401 (the fixture)

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
# Full syncs start at once (Redis waits 5 s for more replicas by default).
FAST = ["--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"]


def start(procs, kind: str, workdir: Path, *args: str) -> Proc:
    workdir.mkdir(parents=True, exist_ok=True)
    binary = GOBLIN_BIN if kind == "goblin" else REDIS_BIN
    p = Proc(binary, workdir, "--dir", str(workdir), *FAST, *args, name=kind)
    procs.append(p)
    return p.start()


def replicaof(p: Proc, master: Proc) -> None:
    assert p.client().execute_command("REPLICAOF", "127.0.0.1", master.port) == b"OK"


def repl(c: redis.Redis) -> dict:
    return c.info("replication")


def wait_for(cond, timeout: float = 20.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def wait_synced(master: redis.Redis, replica: redis.Redis, timeout: float = 20.0) -> None:
    """Until the replica's link is up and it processed the master's whole stream."""

    def caught_up():
        r = repl(replica)
        return (r.get("master_link_status") == "up"
                and r.get("slave_repl_offset") == repl(master)["master_repl_offset"])

    wait_for(caught_up, timeout, "the replica to catch up")


class Writer:
    """The compat suite's deterministic command mix on a thread, until stopped."""

    def __init__(self, port: int, seed: int):
        self.port = port
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.rounds = 0
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        c = redis.Redis(port=self.port, socket_timeout=30)
        try:
            while not self.stop.is_set():
                deterministic_mix(c, self.rng, 50)
                self.rounds += 1
        except BaseException as e:  # noqa: BLE001 (reported by finish)
            self.error = e

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(60)
        assert self.error is None, self.error


def sync_stats(c: redis.Redis) -> tuple[int, int]:
    s = c.info("stats")
    return s["sync_full"], s["sync_partial_ok"]


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_goblin_master_redis_replica_under_writes(procs, tmp_path, diskless):
    g = start(procs, "goblin", tmp_path / "g", "--repl-diskless-sync", diskless)
    gc = g.client()
    deterministic_mix(gc, random.Random(1), 300)
    r = start(procs, "redis", tmp_path / "r")
    with Writer(g.port, 2) as w:
        replicaof(r, g)
        wait_for(lambda: repl(r.client()).get("master_link_status") == "up", what="the link")
        wait_for(lambda: w.rounds >= 3, what="writes after the sync")
        # A forced disconnection: the replica comes back with PSYNC from the backlog.
        assert gc.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
        wait_for(lambda: sync_stats(gc)[1] >= 1, what="the partial resync")
        wait_for(lambda: repl(r.client()).get("master_link_status") == "up", what="the link")
        rounds = w.rounds
        wait_for(lambda: w.rounds >= rounds + 3, what="writes after the resync")
    assert sync_stats(gc) == (1, 1)
    wait_synced(gc, r.client())
    assert_same(keyspace(gc), keyspace(r.client()), ttl_slack_ms=5000)
    info = repl(gc)
    assert info["connected_slaves"] == 1
    assert info["slave0"]["state"] == "online" and info["slave0"]["port"] == r.port


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_redis_master_goblin_replica_under_writes(procs, tmp_path, diskless):
    m = start(procs, "redis", tmp_path / "m", "--repl-diskless-sync", diskless)
    mc = m.client()
    deterministic_mix(mc, random.Random(3), 300)
    g = start(procs, "goblin", tmp_path / "g")
    gc = g.client()
    with Writer(m.port, 4) as w:
        replicaof(g, m)
        wait_for(lambda: repl(gc).get("master_link_status") == "up", what="the link")
        wait_for(lambda: w.rounds >= 3, what="writes after the sync")
        assert gc.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
        wait_for(lambda: sync_stats(mc)[1] >= 1, what="the partial resync")
        wait_for(lambda: repl(gc).get("master_link_status") == "up", what="the link")
        rounds = w.rounds
        wait_for(lambda: w.rounds >= rounds + 3, what="writes after the resync")
    assert sync_stats(mc) == (1, 1)
    wait_synced(mc, gc)
    assert_same(keyspace(mc), keyspace(gc), ttl_slack_ms=5000)
    # Its master's stream, not its own writes: read-only, as a Redis replica answers.
    with pytest.raises(redis.ResponseError) as e:
        gc.set("x", 1)
    assert str(e.value) == "You can't write against a read only replica."
    assert gc.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    assert gc.set("x", 1)
    info = repl(gc)
    assert info["role"] == "master" and info["master_replid2"] == repl(mc)["master_replid"]


def test_chain_redis_goblin_redis(procs, tmp_path):
    """A replica of a replica: Goblin forwards its master's stream, same ids and offsets."""
    m = start(procs, "redis", tmp_path / "m")
    mc = m.client()
    deterministic_mix(mc, random.Random(5), 200)
    g = start(procs, "goblin", tmp_path / "g")
    r = start(procs, "redis", tmp_path / "r")
    replicaof(g, m)
    wait_synced(mc, g.client())
    with Writer(m.port, 6) as w:
        replicaof(r, g)
        wait_for(lambda: repl(r.client()).get("master_link_status") == "up", what="the link")
        rounds = w.rounds
        wait_for(lambda: w.rounds >= rounds + 3, what="writes through the chain")
    wait_synced(mc, g.client())
    wait_synced(mc, r.client())
    assert repl(r.client())["master_replid"] == repl(mc)["master_replid"]
    assert_same(keyspace(mc), keyspace(r.client()), ttl_slack_ms=5000)


def role_shape(role: list) -> list:
    """ROLE with the ports and offsets replaced by their types (they differ between runs)."""
    if role[0] == b"master":
        return [role[0], type(role[1]), [[ip, type(p), type(o)] for ip, p, o in role[2]]]
    return [role[0], role[1], type(role[2]), role[3], type(role[4])]


def test_role_info_wait_and_min_replicas_as_redis(procs, tmp_path):
    g = start(procs, "goblin", tmp_path / "g")
    gr = start(procs, "redis", tmp_path / "gr")
    m = start(procs, "redis", tmp_path / "m")
    mr = start(procs, "goblin", tmp_path / "mr")
    replicaof(gr, g)
    replicaof(mr, m)
    gc, mc = g.client(), m.client()
    gc.set("k", "v")
    mc.set("k", "v")
    wait_synced(gc, gr.client())
    wait_synced(mc, mr.client())
    # ROLE of each side, beside Redis in the same role.
    assert role_shape(gc.execute_command("ROLE")) == role_shape(mc.execute_command("ROLE"))
    goblin_replica = mr.client().execute_command("ROLE")
    redis_replica = gr.client().execute_command("ROLE")
    assert role_shape(goblin_replica)[::2] == role_shape(redis_replica)[::2]
    assert goblin_replica[3] == b"connected" and goblin_replica[2] == m.port
    assert goblin_replica[4] == repl(mc)["master_repl_offset"]
    # INFO replication: the same fields, master and replica.
    assert set(repl(gc)) == set(repl(mc))
    assert set(repl(mr.client())) == set(repl(gr.client()))
    # WAIT: the replica acknowledges the write; asking for more replicas than exist times out
    # with the count.
    for c in (gc, mc):
        c.incr("n")
        assert c.execute_command("WAIT", 1, 5000) == 1
        started = time.monotonic()
        assert c.execute_command("WAIT", 2, 200) == 1
        assert time.monotonic() - started >= 0.15
    errors = []
    for c in (mr.client(), gr.client()):
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("WAIT", 1, 0)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    # min-replicas-to-write: one good replica is not two.
    replies = []
    for c in (gc, mc):
        c.config_set("min-replicas-to-write", 2)
        with pytest.raises(redis.ResponseError) as e:
            c.set("k", "w")
        replies.append(str(e.value))
        assert repl(c)["min_slaves_good_slaves"] == 1
        c.config_set("min-replicas-to-write", 1)
        assert c.set("k", "w")
        c.config_set("min-replicas-to-write", 0)
    assert replies[0] == replies[1] == "NOREPLICAS Not enough good replicas to write."
    for name in ("repl-backlog-size", "repl-diskless-sync", "repl-timeout", "replica-read-only",
                 "min-slaves-max-lag", "replica-serve-stale-data"):
        assert gc.config_get(name) == mc.config_get(name), name


def test_stale_replica_errors_as_redis(procs, tmp_path):
    """A replica whose master is down: MASTERDOWN with replica-serve-stale-data no, and
    NOMASTERLINK for a replica of it."""
    port = free_port()
    outs = []
    for kind in ("redis", "goblin"):
        p = start(procs, kind, tmp_path / kind, "--replica-serve-stale-data", "no")
        c = p.client()
        assert c.execute_command("REPLICAOF", "127.0.0.1", port) == b"OK"
        assert c.execute_command("REPLICAOF", "127.0.0.1", port) == b"OK Already connected to specified master"
        got = []
        for cmd in (("GET", "k"), ("PSYNC", "?", "-1")):
            try:
                c.execute_command(*cmd)
                got.append(None)
            except redis.ResponseError as e:
                got.append(str(e))
        assert c.execute_command("ROLE")[3] in (b"connect", b"connecting")
        with pytest.raises(redis.ResponseError) as e:
            c.execute_command("REPLICAOF", "127.0.0.1", "x")
        got.append(str(e.value))
        outs.append(got)
    assert outs[0] == outs[1]


def test_redis_cli_rdb_and_replica(procs, tmp_path):
    g = start(procs, "goblin", tmp_path / "g")
    gc = g.client()
    deterministic_mix(gc, random.Random(7), 300)
    dump = tmp_path / "cli.rdb"
    out = subprocess.run([REDIS_CLI, "-p", str(g.port), "--rdb", str(dump)], capture_output=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    assert b"Transfer finished with success" in out.stdout + out.stderr
    # The file loads into Redis with the same keyspace.
    (tmp_path / "load").mkdir()
    shutil.copy(dump, tmp_path / "load" / "dump.rdb")
    loaded = start(procs, "redis", tmp_path / "load", "--dbfilename", "dump.rdb")
    assert_same(keyspace(gc), keyspace(loaded.client()), ttl_slack_ms=5000)
    # redis-cli --replica prints the stream after the snapshot.
    cli = subprocess.Popen([REDIS_CLI, "-p", str(g.port), "--replica"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    try:
        lines = []
        deadline = time.monotonic() + 20
        wait_for(lambda: repl(gc)["connected_slaves"] == 1 and
                 repl(gc)["slave0"]["state"] == "online", what="redis-cli --replica")
        gc.set("through-the-stream", "yes")
        while time.monotonic() < deadline:
            line = cli.stdout.readline()
            lines.append(line)
            if b"through-the-stream" in line:
                break
        assert b'"set","through-the-stream","yes"' in lines[-1].lower(), lines
    finally:
        cli.kill()
        cli.wait()


def test_goblin_master_goblin_replica_with_partial_resync(procs, tmp_path):
    m = start(procs, "goblin", tmp_path / "m")
    mc = m.client()
    deterministic_mix(mc, random.Random(8), 200)
    g = start(procs, "goblin", tmp_path / "g")
    gc = g.client()
    with Writer(m.port, 9) as w:
        replicaof(g, m)
        wait_for(lambda: repl(gc).get("master_link_status") == "up", what="the link")
        wait_for(lambda: w.rounds >= 3, what="writes after the sync")
        assert gc.execute_command("CLIENT", "KILL", "TYPE", "master") == 1
        wait_for(lambda: sync_stats(mc)[1] >= 1, what="the partial resync")
        rounds = w.rounds
        wait_for(lambda: w.rounds >= rounds + 3, what="writes after the resync")
    assert sync_stats(mc) == (1, 1)
    wait_synced(mc, gc)
    assert_same(keyspace(mc), keyspace(gc), ttl_slack_ms=5000)


def test_masterauth_and_replicaof_at_start(procs, tmp_path):
    m = start(procs, "redis", tmp_path / "m")
    # A delayed diskless sync: the master sends newlines before its +FULLRESYNC.
    m.client().config_set("repl-diskless-sync-delay", 2)
    m.client().config_set("requirepass", "secret")
    mc = redis.Redis(port=m.port, password="secret")
    mc.set("k", "v")
    g = start(procs, "goblin", tmp_path / "g", "--masteruser", "default", "--masterauth", "secret",
              "--replicaof", "127.0.0.1", str(m.port))
    wait_synced(mc, g.client())
    assert g.client().get("k") == b"v"
    assert g.client().config_get("masterauth") == {"masterauth": "secret"}
    # Without the password the master refuses the replica: the link stays down.
    bad = start(procs, "goblin", tmp_path / "bad", "--replicaof", "127.0.0.1", str(m.port))
    time.sleep(1.5)
    assert repl(bad.client())["master_link_status"] == "down"
    assert b"Unable to AUTH to MASTER" in bad.output().encode() or "NOAUTH" in bad.output()


def test_migration_rehearsal_loses_no_acknowledged_write(procs, tmp_path):
    """Replicate Redis into Goblin under writes, promote Goblin (REPLICAOF NO ONE), move the
    client to it: every write either server acknowledged is in Goblin."""
    m = start(procs, "redis", tmp_path / "m")
    g = start(procs, "goblin", tmp_path / "g")
    acked: list[int] = []
    target = {"port": m.port}
    stop, pause, paused, resume = (threading.Event() for _ in range(4))

    def writer():
        i = 0
        c = redis.Redis(port=target["port"], socket_timeout=10)
        while not stop.is_set():
            if pause.is_set():
                # Between two writes: the client lets go of the old master.
                paused.set()
                resume.wait(30)
                pause.clear()
                c.close()
                c = redis.Redis(port=target["port"], socket_timeout=10)
            c.set(f"w:{i}", i)
            c.sadd("members", i)
            acked.append(i)
            i += 1
        c.close()

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    replicaof(g, m)
    wait_for(lambda: repl(g.client()).get("master_link_status") == "up", what="the link")
    wait_for(lambda: len(acked) > 2000, what="writes")
    # The switch: the client stops writing to the old master, the new one catches up and is
    # promoted, the client moves to it.
    pause.set()
    assert paused.wait(30)
    wait_synced(m.client(), g.client())
    assert g.client().execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    target["port"] = g.port
    resume.set()
    n = len(acked)
    wait_for(lambda: len(acked) > n + 2000, what="writes on the new master")
    stop.set()
    t.join(30)
    gc = g.client()
    present = gc.smembers("members")
    missing = [i for i in acked if gc.get(f"w:{i}") != str(i).encode() or str(i).encode() not in present]
    assert not missing, missing[:10]


def test_replicaof_unblocks_clients_and_client_list_shows_the_master(procs, tmp_path):
    m = start(procs, "redis", tmp_path / "m")
    m.client().set("k", "v")
    outcomes = []
    for kind in ("redis", "goblin"):
        p = start(procs, kind, tmp_path / kind)
        blocked = p.client()
        got = {}

        def blpop(c=blocked, got=got):
            try:
                got["reply"] = c.blpop("nothing", 0)
            except redis.ResponseError as e:
                got["error"] = str(e)

        t = threading.Thread(target=blpop, daemon=True)
        t.start()
        wait_for(lambda: p.client().info("clients")["blocked_clients"] == 1, what="BLPOP")
        replicaof(p, m)
        t.join(10)
        wait_synced(m.client(), p.client())
        masters = p.client().execute_command("CLIENT", "LIST", "TYPE", "master").decode()
        lines = masters.strip().split("\n")
        assert len(lines) == 1 and " flags=M " in lines[0], masters
        assert f"addr=127.0.0.1:{m.port} " in lines[0]
        outcomes.append((got, p.client().info("clients")["blocked_clients"]))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0]["error"].startswith("UNBLOCKED force unblock from blocking operation")


def test_goblin_replica_with_aof_restarts_with_its_masters_data(procs, tmp_path):
    """A replica with appendonly yes: after the full sync its AOF is rewritten from the loaded
    data, then takes the stream; restarted from it, it holds its master's keyspace."""
    m = start(procs, "redis", tmp_path / "m")
    mc = m.client()
    deterministic_mix(mc, random.Random(10), 300)
    g = start(procs, "goblin", tmp_path / "g", "--appendonly", "yes")
    gc = g.client()
    gc.set("before-the-sync", 1)  # gone with the sync, from the AOF too
    with Writer(m.port, 11) as w:
        replicaof(g, m)
        wait_for(lambda: repl(gc).get("master_link_status") == "up", what="the link")
        wait_for(lambda: gc.info("persistence")["aof_rewrites"] >= 1
                 and gc.info("persistence")["aof_rewrite_in_progress"] == 0, what="the rewrite")
        rounds = w.rounds
        wait_for(lambda: w.rounds >= rounds + 3, what="writes after the rewrite")
    wait_synced(mc, gc)
    expected = keyspace(mc)
    assert_same(expected, keyspace(gc), ttl_slack_ms=5000)
    g.kill9()
    g.start()
    assert_same(expected, keyspace(g.client()), ttl_slack_ms=5000)


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_a_large_snapshot_arrives_whole(procs, tmp_path, diskless):
    """64 MB of payload: far more than one read of the link takes at a time."""
    m = start(procs, "redis", tmp_path / "m", "--repl-diskless-sync", diskless,
              "--rdbcompression", "no")
    mc = m.client()
    blob = random.Random(12).randbytes(1 << 20)
    p = mc.pipeline(transaction=False)
    for i in range(64):
        p.set(f"big:{i}", blob[i:] + blob[:i])
    p.execute()
    g = start(procs, "goblin", tmp_path / "g")
    replicaof(g, m)
    wait_synced(mc, g.client(), timeout=60)
    gc = g.client()
    assert gc.dbsize() == 64
    assert all(gc.get(f"big:{i}") == blob[i:] + blob[:i] for i in range(64))
