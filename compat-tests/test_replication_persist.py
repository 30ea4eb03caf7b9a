"""The replication state that survives a restart, and the rest of INFO replication, beside
Debian's redis-server 7.0: a restarted replica continues from its master with PSYNC (the ids
and offset are in its snapshot), a restarted master lets its replicas do so,
repl-backlog-ttl, the replication byte counters and the master_sync_* fields,
repl-diskless-load, replica-ignore-maxmemory, and keys whose time passed kept by a
replica's load.

Each test starts its own servers on free ports in its own temporary directory; every
scenario runs with Redis in Goblin's place too, so that what is asserted is Redis's
behaviour.
"""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest
import redis

import test_persistence
from test_aof import assert_same, deterministic_mix, keyspace
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import repl, replicaof, start, sync_stats, wait_for, wait_synced

KINDS = ["redis", "goblin"]


def shutdown_saving(p: Proc) -> None:
    """SHUTDOWN SAVE, and wait for the process to exit."""
    try:
        p.client().shutdown(save=True)
    except redis.ConnectionError:
        pass
    assert p.wait(30) == 0, p.output()


def save_done(c: redis.Redis) -> bool:
    """SAVE; False while a child (the sync's) runs."""
    try:
        return c.save()
    except redis.ResponseError as e:
        assert "in progress" in str(e)
        return False


def restart(p: Proc, monkeypatch, *args: str) -> Proc:
    """Starts `p` again on the same port (its replicas and master know it there)."""
    port = p.port
    p.args += list(args)
    with monkeypatch.context() as m:
        m.setattr(test_persistence, "free_port", lambda: port)
        return p.start()


@pytest.mark.parametrize("kind", KINDS)
def test_restarted_replica_continues_with_psync(procs, tmp_path, monkeypatch, kind):
    m = start(procs, "redis", tmp_path / "m")
    mc = m.client()
    deterministic_mix(mc, random.Random(1), 200)
    g = start(procs, kind, tmp_path / "g")
    replicaof(g, m)
    wait_synced(mc, g.client())
    deterministic_mix(mc, random.Random(2), 100)
    wait_synced(mc, g.client())
    shutdown_saving(g)
    # Writes while the replica is away: the master's backlog keeps them.
    deterministic_mix(mc, random.Random(3), 100)
    restart(g, monkeypatch, "--replicaof", "127.0.0.1", str(m.port))
    wait_synced(mc, g.client())
    assert sync_stats(mc) == (1, 1)
    assert repl(g.client())["master_replid"] == repl(mc)["master_replid"]
    deterministic_mix(mc, random.Random(4), 100)
    wait_synced(mc, g.client())
    assert_same(keyspace(mc), keyspace(g.client()), ttl_slack_ms=5000)


@pytest.mark.parametrize("kind", KINDS)
def test_restarted_master_keeps_its_history(procs, tmp_path, monkeypatch, kind):
    m = start(procs, kind, tmp_path / "m")
    deterministic_mix(m.client(), random.Random(5), 200)
    r = start(procs, "redis", tmp_path / "r")
    replicaof(r, m)
    wait_synced(m.client(), r.client())
    # Until the master has the replica's ACK of its whole stream: a SHUTDOWN before it
    # sends REPLCONF GETACK (37 bytes of stream) first, in Redis as in Goblin.
    wait_for(lambda: repl(m.client())["slave0"]["offset"] == repl(m.client())["master_repl_offset"],
             what="the replica's ACK")
    before = repl(m.client())
    shutdown_saving(m)
    restart(m, monkeypatch)
    mc = m.client()
    info = repl(mc)
    assert info["master_replid2"] == before["master_replid"]
    assert info["master_replid"] != before["master_replid"]
    assert info["second_repl_offset"] == before["master_repl_offset"] + 1
    assert info["master_repl_offset"] == before["master_repl_offset"]
    wait_for(lambda: repl(mc)["connected_slaves"] == 1
             and repl(mc)["slave0"]["state"] == "online", what="the replica's return")
    assert sync_stats(mc) == (0, 1)
    deterministic_mix(mc, random.Random(6), 100)
    wait_synced(mc, r.client())
    assert_same(keyspace(mc), keyspace(r.client()), ttl_slack_ms=5000)


@pytest.mark.parametrize("kind", KINDS)
def test_goblin_replica_of_restarted_goblin_master(procs, tmp_path, monkeypatch, kind):
    """Both ends restart in turn (master first, then the replica): PSYNC each time."""
    m = start(procs, "goblin", tmp_path / "m")
    deterministic_mix(m.client(), random.Random(7), 200)
    g = start(procs, kind, tmp_path / "g")
    replicaof(g, m)
    wait_synced(m.client(), g.client())
    shutdown_saving(m)
    restart(m, monkeypatch)
    wait_synced(m.client(), g.client())
    shutdown_saving(g)
    deterministic_mix(m.client(), random.Random(8), 100)
    restart(g, monkeypatch, "--replicaof", "127.0.0.1", str(m.port))
    wait_synced(m.client(), g.client())
    assert sync_stats(m.client()) == (0, 2)
    assert_same(keyspace(m.client()), keyspace(g.client()), ttl_slack_ms=5000)


def test_snapshot_aux_fields_as_redis_writes_them(procs, tmp_path):
    """A master with a replica writes repl-stream-db, repl-id and repl-offset (in Redis's
    order); one in no replication chain writes none."""
    orders = []
    for kind in KINDS:
        m = start(procs, kind, tmp_path / kind)
        c = m.client()
        c.set("k", "v")
        c.save()
        alone = (tmp_path / kind / "dump.rdb").read_bytes()
        assert b"repl-id" not in alone
        r = start(procs, "redis", tmp_path / f"{kind}-r")
        replicaof(r, m)
        wait_synced(c, r.client())
        wait_for(lambda: save_done(c), what="a SAVE once the sync's child is gone")
        data = (tmp_path / kind / "dump.rdb").read_bytes()
        names = [n for n in (b"redis-ver", b"redis-bits", b"ctime", b"used-mem", b"repl-stream-db",
                             b"repl-id", b"repl-offset", b"aof-base") if n in data]
        orders.append(sorted(names, key=data.index))
        assert repl(c)["master_replid"].encode() in data
    assert orders[0] == orders[1]


@pytest.mark.parametrize("kind", KINDS)
def test_backlog_freed_after_ttl_without_replicas(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m")
    mc = m.client()
    r = start(procs, "redis", tmp_path / "r")
    replicaof(r, m)
    mc.set("k", "v")
    wait_synced(mc, r.client())
    mc.config_set("repl-backlog-ttl", 1)
    assert mc.config_get("repl-backlog-ttl") == {"repl-backlog-ttl": "1"}
    before = repl(mc)
    assert before["repl_backlog_active"] == 1
    time.sleep(2.5)
    assert repl(mc)["repl_backlog_active"] == 1, "kept while a replica is connected"
    assert r.client().execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    # No PING goes into the stream once the replica is gone: the offset stays.
    wait_for(lambda: repl(mc)["connected_slaves"] == 0, what="the replica gone")
    offset = repl(mc)["master_repl_offset"]
    wait_for(lambda: repl(mc)["repl_backlog_active"] == 0, what="the backlog freed")
    after = repl(mc)
    assert after["master_replid"] != before["master_replid"]
    # redis-py reads the forty zeros as the number 0.
    assert after["master_replid2"] == 0 and after["second_repl_offset"] == -1
    assert after["master_repl_offset"] == offset
    assert after["repl_backlog_first_byte_offset"] == 0 and after["repl_backlog_histlen"] == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ignore", ["yes", "no"])
def test_replica_ignore_maxmemory(procs, tmp_path, kind, ignore):
    m = start(procs, "redis", tmp_path / "m")
    mc = m.client()
    g = start(procs, kind, tmp_path / "g", "--maxmemory", "2mb", "--maxmemory-policy",
              "allkeys-random", "--replica-ignore-maxmemory", ignore)
    gc = g.client()
    assert gc.config_get("slave-ignore-maxmemory") == {"slave-ignore-maxmemory": ignore}
    replicaof(g, m)
    pipe = mc.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"key:{i}", "x" * 500)
    pipe.execute()
    wait_synced(mc, gc)
    for i in range(20):
        gc.get(f"key:{i}")
    total = mc.dbsize()
    if ignore == "yes":
        assert gc.dbsize() == total
        assert gc.info("stats")["evicted_keys"] == 0
    else:
        assert gc.dbsize() < total
        assert gc.info("stats")["evicted_keys"] > 0


@pytest.mark.parametrize("kind", KINDS)
def test_replica_keeps_keys_whose_time_passed_until_the_masters_del(procs, tmp_path, kind):
    """The master's snapshot holds keys whose time passed (nothing touched them): a replica
    loads them, at a full sync and at start-up, and drops them by the master's DELs."""
    m = start(procs, "redis", tmp_path / "m", "--enable-debug-command", "yes",
              "--repl-diskless-sync", "no")
    mc = m.client()
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(50):
        mc.set(f"gone:{i}", i, px=50)
        mc.set(f"kept:{i}", i)
    time.sleep(0.3)
    assert mc.dbsize() == 100
    g = start(procs, kind, tmp_path / "g", "--repl-diskless-load", "disabled")
    replicaof(g, m)
    wait_synced(mc, g.client())
    assert g.client().dbsize() == 100
    assert g.client().info("keyspace")["db0"]["expires"] == 50
    # At start-up: the master's snapshot, kept as dump.rdb, loads with them.
    port = g.port
    g.kill9()
    g.args += ["--replicaof", "127.0.0.1", str(m.port)]
    g.start()
    wait_synced(mc, g.client())
    assert g.client().dbsize() == 100
    assert port != 0
    # The master's DELs remove them.
    for i in range(50):
        assert mc.get(f"gone:{i}") is None
    wait_synced(mc, g.client())
    assert g.client().dbsize() == 50


SYNC_FIELDS = ["master_sync_total_bytes", "master_sync_read_bytes", "master_sync_left_bytes",
               "master_sync_perc", "master_sync_last_io_seconds_ago"]


@pytest.mark.parametrize("kind", KINDS)
def test_replication_byte_counters_and_sync_progress(procs, tmp_path, kind):
    """A slow diskless full sync (rdb-key-save-delay on the master): the replica shows the
    master_sync_* fields while it reads; both ends count the bytes as replication traffic."""
    m = start(procs, "redis", tmp_path / "m", "--rdb-key-save-delay", "2000")
    mc = m.client()
    pipe = mc.pipeline(transaction=False)
    for i in range(1500):
        pipe.set(f"key:{i}", "x" * 100)
    pipe.execute()
    g = start(procs, kind, tmp_path / "g")
    gc = g.client()
    replicaof(g, m)

    def reading():
        info = repl(gc)
        return info if info.get("master_sync_read_bytes", 0) > 0 else None

    info = wait_for(reading, what="the transfer under way")
    assert info["master_sync_in_progress"] == 1
    assert [f for f in info if f.startswith("master_sync_") and f != "master_sync_in_progress"] \
        == SYNC_FIELDS
    # A diskless payload's size is not known: 0, and the bytes left go negative.
    assert info["master_sync_total_bytes"] == 0
    assert info["master_sync_left_bytes"] == -info["master_sync_read_bytes"]
    assert info["master_sync_perc"] == 0
    assert info["master_sync_last_io_seconds_ago"] <= 2
    mc.config_set("rdb-key-save-delay", 0)
    wait_synced(mc, gc)
    assert not any(f in repl(gc) for f in SYNC_FIELDS)
    assert mc.dbsize() == gc.dbsize()
    for i in range(200):
        mc.set(f"more:{i}", "y" * 1000)
    wait_synced(mc, gc)
    ms, gs = mc.info("stats"), gc.info("stats")
    # The stream's values alone (the snapshot's compress).
    assert gs["total_net_repl_input_bytes"] >= 200000
    assert ms["total_net_repl_output_bytes"] >= 200000
    assert gs["total_net_input_bytes"] >= gs["total_net_repl_input_bytes"]
    assert gs["total_net_repl_output_bytes"] == 0 and ms["total_net_repl_input_bytes"] == 0

    # The instantaneous rate moves while the stream flows.
    def rate():
        mc.set("flow", "z" * 20000)
        return gc.info("stats")["instantaneous_input_repl_kbps"] > 0

    wait_for(rate, what="instantaneous_input_repl_kbps")


@pytest.mark.parametrize("kind", KINDS)
def test_master_counts_output_and_replication_memory(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m")
    mc = m.client()
    assert mc.info("memory")["mem_replication_backlog"] == 0
    r = start(procs, "redis", tmp_path / "r")
    replicaof(r, m)
    # Synced first, so the writes go down the stream (a snapshot taken after some of them
    # carries them LZF-compressed, far under their 100 KB).
    wait_synced(mc, r.client())
    for i in range(100):
        mc.set(f"k{i}", "v" * 1000)
    wait_synced(mc, r.client())
    stats = mc.info("stats")
    assert stats["total_net_repl_output_bytes"] >= 100000
    assert stats["total_net_output_bytes"] >= stats["total_net_repl_output_bytes"]
    memory = mc.info("memory")
    assert memory["mem_replication_backlog"] > 0
    assert memory["mem_total_replication_buffers"] > 0

    def output_rate():
        mc.set("flow", "z" * 20000)
        return mc.info("stats")["instantaneous_output_repl_kbps"] > 0

    wait_for(output_rate, what="instantaneous_output_repl_kbps")


def slow_master(procs, workdir: Path, keys: int = 1500, size: int = 0) -> Proc:
    """A Redis master whose snapshot takes seconds to write (rdb-key-save-delay)."""
    m = start(procs, "redis", workdir, "--rdb-key-save-delay", "2000", "--rdbcompression", "no")
    pipe = m.client().pipeline(transaction=False)
    for i in range(keys):
        pipe.set(f"key:{i}", str(i).ljust(size, "."))
    pipe.execute()
    return m


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode,empty", [("disabled", False), ("on-empty-db", True),
                                        ("on-empty-db", False)])
def test_diskless_load_to_file_or_from_socket(procs, tmp_path, kind, mode, empty):
    """disabled, or on-empty-db with data: the payload goes to a file that becomes the
    snapshot; on-empty-db with an empty keyspace: loaded from the socket, no file."""
    m = slow_master(procs, tmp_path / "m", keys=300)
    g = start(procs, kind, tmp_path / "g", "--repl-diskless-load", mode)
    gc = g.client()
    assert gc.config_get("repl-diskless-load") == {"repl-diskless-load": mode}
    if not empty:
        gc.set("old", 1)
    replicaof(g, m)
    wait_synced(m.client(), gc)
    assert gc.get("old") is None and gc.dbsize() == 300
    assert (tmp_path / "g" / "dump.rdb").exists() == (not empty)
    assert not list((tmp_path / "g").glob("temp-*.rdb"))


@pytest.mark.parametrize("kind", KINDS)
def test_diskless_load_swapdb(procs, tmp_path, kind):
    """swapdb: a first sync (another history) loads with -LOADING; a full resync of the same
    history (the replica fell out of the backlog) keeps serving the old data meanwhile."""
    # Redis serves events while it loads only every 2 MB it read: 9 MB gives the polls
    # below four chances to find the async load under way, not one.
    m = slow_master(procs, tmp_path / "m", size=6000)
    mc = m.client()
    g = start(procs, kind, tmp_path / "g", "--repl-diskless-load", "swapdb")
    gc = g.client()
    gc.set("old", 1)
    replicaof(g, m)
    # Another history: never an async load (Redis serves no event while it loads a payload
    # this small; Goblin answers -LOADING).
    seen = set()

    def synced_watching():
        try:
            seen.add(gc.info("persistence")["async_loading"])
        except redis.BusyLoadingError:
            seen.add("loading")
        return repl(gc).get("master_link_status") == "up"

    wait_for(synced_watching, what="the first sync")
    assert 1 not in seen
    wait_synced(mc, gc)
    assert gc.get("old") is None and gc.dbsize() == 1500
    # Frozen while the master writes past its backlog: the replica's PSYNC cannot continue,
    # and the full resync that follows is of the same history.
    mc.config_set("repl-backlog-size", 16384)
    synced_at = mc.info("replication")["master_repl_offset"]
    g.proc.send_signal(signal.SIGSTOP)
    try:
        for i in range(100):
            mc.set(f"new:{i}", "x" * 1000)
        mc.client_kill_filter(_type="replica")
        # Redis 7 shares its backlog blocks with the replicas' output buffers and trims
        # them in its cron: until it has, the backlog still holds the frozen replica's
        # offset and its PSYNC would continue instead of falling back to a full resync.
        wait_for(lambda: mc.info("replication")["repl_backlog_first_byte_offset"]
                 > synced_at + 1, what="the master's backlog to drop the replica's offset")
    finally:
        g.proc.send_signal(signal.SIGCONT)
    info = wait_for(lambda: (lambda p: p if p["async_loading"] == 1 else None)(
        gc.info("persistence")), what="the async load")
    assert info["loading"] == 0
    # The old data answers meanwhile, without -LOADING.
    assert gc.get("key:0") == b"0".ljust(6000, b".")
    mc.config_set("rdb-key-save-delay", 0)
    wait_synced(mc, gc)
    assert gc.info("persistence")["async_loading"] == 0
    assert gc.dbsize() == 1600
    assert sync_stats(mc)[0] == 2
    assert not (tmp_path / "g" / "dump.rdb").exists()


def test_diskless_load_rejects_an_unknown_mode_as_redis(procs, tmp_path):
    errors = []
    for kind in KINDS:
        c = start(procs, kind, tmp_path / kind).client()
        with pytest.raises(redis.ResponseError) as e:
            c.config_set("repl-diskless-load", "sometimes")
        errors.append(str(e.value))
    assert errors[0] == errors[1]
