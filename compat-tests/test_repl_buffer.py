"""The shared replication buffer (Redis 7's: the backlog and every replica's output are one
list of blocks) beside Redis 7.2.4 (REDIS72_BIN, default /work/redis-7.2.4/src/redis-server;
skipped without it): the master under test is Redis 7.2.4 or Goblin, its replicas Redis
7.2.4.

- the stream kept for two replicas waiting for their snapshot is held once
  (mem_total_replication_buffers), split as Redis splits it (mem_replication_backlog up to
  repl-backlog-size, the rest mem_clients_slaves), the backlog outgrowing
  repl-backlog-size while they hold it (repl_backlog_histlen), kept while one replica still
  holds it and freed once none does;
- a partial resync served from that longer history;
- `client-output-buffer-limit replica` applied to a replica's share of the buffer, at
  least repl-backlog-size;
- a replica's omem (CLIENT LIST) is its share: the blocks from the one it refers to on;
- MEMORY STATS counts the buffer once in overhead.total, as replication.backlog and
  clients.slaves (INFO's split).

The memory figures are allocator-dependent (Redis counts jemalloc's size classes), so what
is compared is how they relate, the same on both.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis

from harness import GOBLIN_BIN
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import wait_for, wait_synced

REDIS72_BIN = os.environ.get("REDIS72_BIN", "/work/redis-7.2.4/src/redis-server")

pytestmark = pytest.mark.skipif(not Path(REDIS72_BIN).exists(),
                                reason=f"no Redis 7.2.4 at {REDIS72_BIN}")

BINARIES = {"redis": REDIS72_BIN, "goblin": GOBLIN_BIN}
KINDS = ["redis", "goblin"]
BACKLOG = 16384
MB = 1024 * 1024


def start(procs, kind: str, workdir: Path, *args: str) -> Proc:  # noqa: F811
    workdir.mkdir(parents=True, exist_ok=True)
    p = Proc(BINARIES[kind], workdir, "--dir", str(workdir), "--save", "", "--appendonly", "no",
             "--repl-diskless-sync", "no", "--repl-diskless-sync-delay", "0",
             "--enable-debug-command", "yes", *args, name=kind)
    procs.append(p)
    return p.start()


def memory(c: redis.Redis) -> dict:
    return c.info("memory")


def repl(c: redis.Redis) -> dict:
    return c.info("replication")


def slow_master(procs, tmp_path: Path, kind: str) -> Proc:
    """A master with a backlog of 16 KB whose snapshots take minutes (100 keys, 1 s each)."""
    m = start(procs, kind, tmp_path / "m", "--repl-backlog-size", str(BACKLOG),
              "--client-output-buffer-limit", "replica 0 0 0")
    mc = m.client()
    for i in range(100):
        mc.set(f"seed:{i}", "s" * 16)
    mc.config_set("rdb-key-save-delay", 1_000_000)
    return m


def waiting_replicas(procs, tmp_path: Path, m: Proc, n: int, others: int = 0) -> list[Proc]:
    """`n` Redis 7.2.4 replicas of `m` (which has `others` already), waiting for its
    snapshot."""
    replicas = [start(procs, "redis", tmp_path / f"r{i}") for i in range(n)]
    for r in replicas:
        r.client().replicaof("127.0.0.1", m.port)
    mc = m.client()
    wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 1
             and repl(mc)["connected_slaves"] == n + others
             and all(r.client().execute_command("ROLE")[3] == b"sync" for r in replicas),
             what="replicas waiting for the snapshot")
    return replicas


def write_mb(c: redis.Redis, prefix: str = "k") -> None:
    """1 MB of values through the stream."""
    pipe = c.pipeline(transaction=False)
    for i in range(1024):
        pipe.set(f"{prefix}:{i}", "v" * 1024)
    pipe.execute()


def replicas_holding_1mb(procs, tmp_path: Path, kind: str):  # noqa: F811
    """A slow master's client and its two replicas waiting for its snapshot, once 1 MB
    went through the stream kept for them."""
    m = slow_master(procs, tmp_path, kind)
    mc = m.client()
    r1, r2 = waiting_replicas(procs, tmp_path, m, 2)
    write_mb(mc)
    return mc, r1, r2


@pytest.mark.parametrize("kind", KINDS)
def test_replicas_waiting_for_a_snapshot_share_one_buffer(procs, tmp_path, kind):
    mc, r1, r2 = replicas_holding_1mb(procs, tmp_path, kind)
    mem, rep = memory(mc), repl(mc)
    total = mem["mem_total_replication_buffers"]
    # Held once for both replicas: over the 1 MB written, under twice it.
    assert MB < total < 2 * MB
    # (Redis adds its block index's few bytes to the backlog's share.)
    assert BACKLOG <= mem["mem_replication_backlog"] < BACKLOG + 1024
    assert mem["mem_clients_slaves"] == total - BACKLOG
    # The backlog keeps what the replicas hold, past its size.
    assert rep["repl_backlog_histlen"] > MB
    assert rep["repl_backlog_first_byte_offset"] == 1
    assert rep["repl_backlog_size"] == BACKLOG

    r1.kill9()
    wait_for(lambda: repl(mc)["connected_slaves"] == 1, what="one replica gone")
    assert memory(mc)["mem_total_replication_buffers"] == total, "the other holds it all"

    r2.kill9()
    wait_for(lambda: repl(mc)["connected_slaves"] == 0, what="both replicas gone")
    mem, rep = memory(mc), repl(mc)
    # Trimmed to the backlog's size (and the block past it): the rest is freed.
    assert mem["mem_total_replication_buffers"] < 100 * 1024
    assert mem["mem_clients_slaves"] == 0
    assert 0 <= mem["mem_replication_backlog"] - mem["mem_total_replication_buffers"] < 1024
    assert BACKLOG <= rep["repl_backlog_histlen"] < 100 * 1024
    assert rep["repl_backlog_first_byte_offset"] == rep["master_repl_offset"] - rep["repl_backlog_histlen"] + 1
    mc.config_set("rdb-key-save-delay", 0)


@pytest.mark.parametrize("kind", KINDS)
def test_partial_resync_from_the_history_a_waiting_replica_holds(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m", "--repl-backlog-size", str(BACKLOG),
              "--client-output-buffer-limit", "replica 0 0 0")
    mc = m.client()
    online = start(procs, "redis", tmp_path / "online")
    oc = online.client()
    oc.replicaof("127.0.0.1", m.port)
    wait_synced(mc, oc)
    for i in range(100):
        mc.set(f"seed:{i}", "s" * 16)
    mc.config_set("rdb-key-save-delay", 1_000_000)
    waiting_replicas(procs, tmp_path, m, 1, others=1)
    wait_synced(mc, oc)
    # The online replica leaves (toward a port nobody serves: it keeps its history) while
    # 1 MB is written, 64 times the backlog's size.
    gone = start(procs, "redis", tmp_path / "gone")
    gone_port = gone.port
    gone.kill9()
    oc.replicaof("127.0.0.1", gone_port)
    wait_for(lambda: repl(mc)["connected_slaves"] == 1, what="the online replica gone")
    write_mb(mc)
    assert repl(mc)["repl_backlog_histlen"] > MB
    oc.replicaof("127.0.0.1", m.port)
    wait_synced(mc, oc)
    stats = mc.info("stats")
    assert (stats["sync_full"], stats["sync_partial_ok"]) == (2, 1)
    assert oc.execute_command("DEBUG", "DIGEST") == mc.execute_command("DEBUG", "DIGEST")
    mc.config_set("rdb-key-save-delay", 0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_replica_is_dropped_on_its_share_of_the_buffer(procs, tmp_path, kind):
    m = slow_master(procs, tmp_path, kind)
    mc = m.client()
    (r,) = waiting_replicas(procs, tmp_path, m, 1)
    # The replica cannot come back once dropped.
    os.kill(r.proc.pid, signal.SIGSTOP)
    try:
        write_mb(mc)
        held = memory(mc)["mem_total_replication_buffers"]
        # A limit under repl-backlog-size counts as repl-backlog-size: 8 KB is 16 KB here,
        # and the replica holds more (dropped by the cron's check or at the next block).
        mc.config_set("client-output-buffer-limit", "replica 8kb 0 0")
        mc.set("big", "A" * 64 * 1024)
        wait_for(lambda: repl(mc)["connected_slaves"] == 0, what="the replica dropped")
        wait_for(lambda: repl(mc)["repl_backlog_histlen"] < 100 * 1024, what="the buffer trimmed")
        assert memory(mc)["mem_total_replication_buffers"] < held
        assert "for overcoming of output buffer limits" in m.output()
    finally:
        os.kill(r.proc.pid, signal.SIGCONT)
    mc.config_set("rdb-key-save-delay", 0)


@pytest.mark.parametrize("kind", KINDS)
def test_a_limit_under_the_backlog_size_keeps_a_replica(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m", "--repl-backlog-size", "4mb",
              "--client-output-buffer-limit", "replica 0 0 0")
    mc = m.client()
    for i in range(100):
        mc.set(f"seed:{i}", "s" * 16)
    mc.config_set("rdb-key-save-delay", 1_000_000)
    waiting_replicas(procs, tmp_path, m, 1)
    # 128 KB counts as the 4 MB backlog: the 1 MB the replica holds does not drop it.
    mc.config_set("client-output-buffer-limit", "replica 128kb 0 0")
    write_mb(mc)
    mc.set("big", "A" * 64 * 1024)
    mc.ping()
    assert memory(mc)["mem_clients_slaves"] == 0, "all within the backlog's size"
    assert repl(mc)["connected_slaves"] == 1
    assert mc.info("stats")["sync_full"] == 1, "never dropped"
    assert "for overcoming of output buffer limits" not in m.output()
    mc.config_set("rdb-key-save-delay", 0)


def omems(c: redis.Redis) -> list[int]:
    """The replicas' omem, in CLIENT LIST's order."""
    return [int(x["omem"]) for x in c.client_list(_type="replica")]


@pytest.mark.parametrize("kind", KINDS)
def test_a_replicas_omem_is_its_share_of_the_buffer(procs, tmp_path, kind):
    mc, r1, _ = replicas_holding_1mb(procs, tmp_path, kind)
    total = memory(mc)["mem_total_replication_buffers"]
    # Both refer to the first block (where the stream kept for them starts): their
    # share is the whole buffer.
    assert omems(mc) == [total, total]
    r1.kill9()
    wait_for(lambda: repl(mc)["connected_slaves"] == 1, what="one replica gone")
    assert omems(mc) == [memory(mc)["mem_total_replication_buffers"]]
    mc.config_set("rdb-key-save-delay", 0)


@pytest.mark.parametrize("kind", KINDS)
def test_memory_stats_count_the_buffer_once_in_the_overhead(procs, tmp_path, kind):
    mc, _, _ = replicas_holding_1mb(procs, tmp_path, kind)
    stats, mem = mc.memory_stats(), memory(mc)
    assert stats["replication.backlog"] == mem["mem_replication_backlog"]
    assert stats["clients.slaves"] == mem["mem_clients_slaves"] > MB - BACKLOG
    assert stats["keys.count"] == 100 + 1024
    parts = ("startup.allocated", "replication.backlog", "clients.slaves", "clients.normal",
             "cluster.links", "aof.buffer", "lua.caches", "functions.caches")
    dbs = sum(v for k, db in stats.items() if k.startswith("db.") for v in db.values())
    assert stats["overhead.total"] == sum(stats[p] for p in parts) + dbs
    assert stats["dataset.bytes"] == stats["total.allocated"] - stats["overhead.total"]
    mc.config_set("rdb-key-save-delay", 0)
