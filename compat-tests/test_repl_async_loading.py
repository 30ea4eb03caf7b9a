"""A replica loading its master's snapshot as Redis's integration/replication checks it,
beside Debian's redis-server 7.0 in the replica's place (the masters are Redis in both runs):

- the master's function libraries arrive with its snapshot and replace the replica's;
- while a `repl-diskless-load swapdb` replica loads a snapshot of the history it already
  had (INFO async_loading:1), its old data serves, and what would save, resync or change
  its role is refused with -LOADING (Redis's CMD_NO_ASYNC_LOADING and the configs denied
  while loading);
- a replica that moves to a new master keeps its own replicas and its old master cached
  until the new master's data arrives: a sync that fails before leaves both, so a PSYNC
  with the old master continues (Redis's replicationAttachToNewMaster);
- a full sync cut short during the transfer or the load is tried again at once
  ("Reconnecting to MASTER ... after failure");
- loading-process-events-interval-bytes (hidden) and dynamic-hz, the hz a cron round
  doubling while more than 200 clients a round would be looked at.

Each test starts its own servers on free ports in its own temporary directory.
"""

from __future__ import annotations

import pytest
import redis

from resp import RawConnection
from test_persistence import procs  # noqa: F401 (the fixture)
from test_replication import repl, replicaof, start, wait_for

KINDS = ["redis", "goblin"]
DEBUG = ["--enable-debug-command", "yes"]
LIB = ("#!lua name={name}\nredis.register_function{{function_name='test', "
       "callback=function() return '{reply}' end, flags={{'no-writes'}}}}")


@pytest.mark.parametrize("kind", KINDS)
def test_the_masters_functions_arrive_with_its_snapshot(procs, tmp_path, kind):
    m = start(procs, "redis", tmp_path / "m")
    r = start(procs, kind, tmp_path / "r")
    mc, rc = m.client(), r.client()
    mc.function_load(LIB.format(name="lib", reply="from-master"))
    rc.function_load(LIB.format(name="own", reply="own"))
    replicaof(r, m)
    wait_for(lambda: repl(rc)["master_link_status"] == "up", what="the sync")
    assert rc.fcall("test", 0) == b"from-master"
    assert [lib[b"library_name"] for lib in map(to_dict, rc.function_list())] == [b"lib"]


def to_dict(entry: list) -> dict:
    return dict(zip(entry[::2], entry[1::2]))


def cut_off_replicas(mc: redis.Redis) -> None:
    """Drops the master's replicas and, in the same transaction, writes past a backlog made
    small: their PSYNC finds their offset gone and they sync in full, in the same history."""
    tx = mc.pipeline(transaction=True)
    tx.execute_command("CLIENT", "KILL", "TYPE", "replica")
    tx.config_set("repl-backlog-size", 16384)
    for i in range(10):
        tx.set(f"k{i}", "A" * 16384)
    tx.execute()


@pytest.mark.parametrize("kind", KINDS)
def test_async_loading_serves_old_data_and_refuses_changes(procs, tmp_path, kind):
    m = start(procs, "redis", tmp_path / "m", "--repl-diskless-sync", "yes", *DEBUG)
    # Clients served every 1 KB the load reads (a loading Redis serves them only every
    # loading-process-events-interval-bytes).
    r = start(procs, kind, tmp_path / "r", "--repl-diskless-load", "swapdb",
              "--replica-read-only", "no", "--loading-process-events-interval-bytes", "1024")
    mc, rc = m.client(), r.client()
    replicaof(r, m)
    wait_for(lambda: repl(rc)["master_link_status"] == "up", what="the first sync")
    mc.execute_command("DEBUG", "POPULATE", 200, "master", 100_000)
    mc.config_set("rdbcompression", "no")
    rc.set("mykey", "myvalue")
    mc.config_set("rdb-key-save-delay", 100_000)  # 20 s for the snapshot
    # A full sync of the same history: the backlog no longer holds the replica's offset.
    cut_off_replicas(mc)
    wait_for(lambda: rc.info("persistence")["async_loading"] == 1, what="async_loading")
    assert rc.info("persistence")["loading"] == 0
    assert rc.get("mykey") == b"myvalue"
    for args in (("CONFIG", "SET", "appendonly", "no"), ("REPLICAOF", "NO", "ONE"),
                 ("BGSAVE",)):
        with pytest.raises(redis.exceptions.BusyLoadingError):
            rc.execute_command(*args)
    # The next sync, of the same history again, without the delay.
    mc.config_set("rdb-key-save-delay", 0)
    mc.execute_command("CLIENT", "KILL", "TYPE", "replica")
    wait_for(lambda: rc.info("persistence")["async_loading"] == 0
             and repl(rc)["master_link_status"] == "up", what="the sync")
    assert rc.get("mykey") is None
    assert rc.dbsize() == mc.dbsize()


@pytest.mark.parametrize("kind", KINDS)
def test_loading_interval_and_dynamic_hz_parameters(procs, tmp_path, kind):
    p = start(procs, kind, tmp_path / "s")
    c = p.client()
    name = "loading-process-events-interval-bytes"
    assert c.config_get(name) == {name: "2097152"}
    assert c.config_get("loading*") == {}, "hidden: only by its exact name"
    with pytest.raises(redis.ResponseError) as e:
        c.config_set(name, 1000)
    assert str(e.value) == (f"CONFIG SET failed (possibly related to argument '{name}') - "
                            "argument must be between 1024 and 2147483647 inclusive")
    assert c.config_set(name, 1024) and c.config_get(name) == {name: "1024"}
    assert c.config_get("dynamic-hz") == {"dynamic-hz": "yes"}
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("dynamic-hz", "maybe")
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'dynamic-hz') - "
                            "argument must be 'yes' or 'no'")
    # With more than 200 clients a cron round, the cron runs more often (up to 500 hz).
    c.config_set("hz", 1)
    conns = [RawConnection(p.port) for _ in range(450)]
    wait_for(lambda: c.info("server")["hz"] == 4, what="hz to follow the clients")
    assert c.info("server")["configured_hz"] == 1
    c.config_set("dynamic-hz", "no")
    wait_for(lambda: c.info("server")["hz"] == 1, what="hz back to the configured one")
    for conn in conns:
        conn.sock.close()


@pytest.mark.parametrize("kind", KINDS)
def test_replicas_and_cached_master_kept_until_a_new_masters_data_arrives(procs, tmp_path, kind):
    m1 = start(procs, "redis", tmp_path / "m1")
    m2 = start(procs, "redis", tmp_path / "m2", *DEBUG)
    sub = start(procs, "redis", tmp_path / "sub")
    r = start(procs, kind, tmp_path / "r")
    m1c, m2c, rc, subc = m1.client(), m2.client(), r.client(), sub.client()
    m1c.set("a", "b")
    m2c.execute_command("DEBUG", "POPULATE", 10, "master2", 10)
    m2c.config_set("rdb-key-save-delay", 1_000_000)  # 10 s for its snapshot
    replicaof(r, m1)
    wait_for(lambda: repl(rc)["master_link_status"] == "up", what="the first sync")
    replicaof(sub, r)
    wait_for(lambda: repl(subc)["master_link_status"] == "up", what="the sub-replica")
    replicaof(r, m2)
    wait_for(lambda: repl(m2c).get("slave0", {}).get("state") == "wait_bgsave",
             what="the second master's sync")
    try:
        m2c.shutdown(nosave=True)
    except redis.ConnectionError:
        pass
    lost = "Connection with master lost"
    assert lost not in sub.output(), "the sub-replica stays while no new data arrived"
    assert repl(rc)["master_replid"] == repl(m1c)["master_replid"] == repl(subc)["master_replid"]
    full, partial = m1c.info("stats")["sync_full"], m1c.info("stats")["sync_partial_ok"]
    replicaof(r, m1)
    wait_for(lambda: repl(rc)["master_link_status"] == "up", what="the resync")
    assert m1c.info("stats")["sync_full"] == full
    assert m1c.info("stats")["sync_partial_ok"] == partial + 1
    assert lost not in sub.output()
    assert subc.info("stats")["sync_full"] == 0 and rc.get("a") == b"b"


@pytest.mark.parametrize("kind", KINDS)
def test_a_sync_cut_short_reconnects_at_once(procs, tmp_path, kind):
    m = start(procs, "redis", tmp_path / "m", "--repl-diskless-sync", "yes", *DEBUG)
    r = start(procs, kind, tmp_path / "r", "--repl-diskless-load", "swapdb")
    mc = m.client()
    # Large values: a loading Redis serves its clients only every 2 MB it reads.
    mc.execute_command("DEBUG", "POPULATE", 1000, "master", 20_000)
    mc.config_set("rdb-key-save-delay", 10_000)  # 10 s for the snapshot
    replicaof(r, m)
    wait_for(lambda: "Loading DB in memory" in r.output(), what="the load")
    assert mc.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    wait_for(lambda: f"Reconnecting to MASTER 127.0.0.1:{m.port} after failure" in r.output(),
             timeout=10, what="the reconnection")
    mc.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: repl(r.client())["master_link_status"] == "up", what="the sync")
