"""A master's full syncs as Redis's integration/replication checks them, beside Debian's
redis-server 7.0 in the master's place (the replicas are Redis in both runs):

- the child writes the snapshot into a pipe that the master relays to the replicas, so the
  master drops a replica that stops reading after repl-timeout ("Disconnecting timedout
  replica (full sync)") and goes on with the others ("done reading from pipe, 1 replicas
  still up"), and kills the child once no replica is left ("last replica dropped");
- a BGSAVE made for replicas is killed when the last replica waiting for it leaves and no
  save point asks for snapshots, and kept when one does;
- FLUSHALL kills a diskless sync's child, and its replica syncs again;
- a replica that came during a disk sync's BGSAVE waits for the next one, and the first
  one's replicas get the first file (not the next, whose offset is another).

Each test starts its own servers on free ports in its own temporary directory.
"""

from __future__ import annotations

import time

import pytest

from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import repl, replicaof, start, wait_for
from test_shutdown_wait import stopped

KINDS = ["redis", "goblin"]
DEBUG = ["--enable-debug-command", "yes"]


def persistence(p: Proc) -> dict:
    return p.client().info("persistence")


def populated_master(procs, tmp_path, kind: str, keys: int, size: int, *args: str) -> Proc:
    m = start(procs, kind, tmp_path / "m", "--repl-diskless-sync", "yes",
              "--rdbcompression", "no", *DEBUG, *args)
    m.client().execute_command("DEBUG", "POPULATE", keys, "test", size)
    return m


def replica(procs, tmp_path, name: str, *args: str) -> Proc:
    return start(procs, "redis", tmp_path / name, *DEBUG, *args)


@pytest.mark.parametrize("kind", KINDS)
def test_last_replica_gone_kills_the_child(procs, tmp_path, kind):
    m = populated_master(procs, tmp_path, kind, 1000, 10_000)
    m.client().config_set("rdb-key-save-delay", 10_000)  # 10 s for the whole snapshot
    r = replica(procs, tmp_path, "r", "--repl-diskless-load", "swapdb")
    replicaof(r, m)
    wait_for(lambda: "Loading DB in memory" in r.output(), what="the replica to load")
    r.kill9()
    wait_for(lambda: persistence(m)["rdb_bgsave_in_progress"] == 0, timeout=5,
             what="the child to be killed")
    assert "Diskless rdb transfer, last replica dropped, killing fork child." in m.output()


@pytest.mark.parametrize("kind", KINDS)
def test_stalled_replica_dropped_after_repl_timeout(procs, tmp_path, kind):
    m = populated_master(procs, tmp_path, kind, 2000, 10_000,
                         "--repl-diskless-sync-delay", "5",
                         "--repl-diskless-sync-max-replicas", "2")
    mc = m.client()
    slow = replica(procs, tmp_path, "slow", "--repl-diskless-load", "swapdb",
                   "--key-load-delay", "1000")
    fast = replica(procs, tmp_path, "fast")
    replicaof(slow, m)
    replicaof(fast, m)
    wait_for(lambda: "Loading DB in memory" in slow.output(), what="the slow replica to load")
    mc.config_set("repl-timeout", 2)
    with stopped(slow):
        mc.incr("during")
        wait_for(lambda: persistence(m)["rdb_bgsave_in_progress"] == 0, timeout=30,
                 what="the sync to end")
        out = m.output()
        assert "Disconnecting timedout replica (full sync)" in out
        assert "Diskless rdb transfer, done reading from pipe, 1 replicas still up." in out
    fc = fast.client()
    wait_for(lambda: repl(fc)["master_link_status"] == "up", what="the fast replica")
    wait_for(lambda: fc.dbsize() == mc.dbsize(), what="the same keys")
    assert fc.execute_command("DEBUG", "DIGEST") == mc.execute_command("DEBUG", "DIGEST")


@pytest.mark.parametrize("kind", KINDS)
def test_useless_bgsave_for_replicas_killed_unless_save_points(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m", "--repl-diskless-sync", "no")
    mc = m.client()
    for i in range(10):
        mc.set(i, i)
    mc.config_set("rdb-key-save-delay", 1_000_000)  # 10 s for the snapshot
    r1 = replica(procs, tmp_path, "r1")
    r2 = replica(procs, tmp_path, "r2")

    def both_waiting():
        info = mc.info()
        return (info["rdb_bgsave_in_progress"] == 1
                and all(info.get(f"slave{i}", {}).get("state") == "wait_bgsave" for i in (0, 1)))

    for save in ("", "900 1"):
        mc.config_set("save", save)
        replicaof(r1, m)
        replicaof(r2, m)
        wait_for(both_waiting, what="the sync's BGSAVE")
        r1.client().replicaof("no", "one")
        time.sleep(0.2)
        assert persistence(m)["rdb_bgsave_in_progress"] == 1, "another replica waits for it"
        r2.client().replicaof("no", "one")
        if save:
            time.sleep(0.3)
            assert persistence(m)["rdb_bgsave_in_progress"] == 1, "a save point wants it"
        else:
            wait_for(lambda: persistence(m)["rdb_bgsave_in_progress"] == 0, timeout=2,
                     what="the BGSAVE to be killed")
    mc.shutdown(nosave=True)


@pytest.mark.parametrize("kind", KINDS)
def test_flushall_kills_the_diskless_child_and_the_replica_syncs_again(procs, tmp_path, kind):
    m = populated_master(procs, tmp_path, kind, 2000, 1000)
    mc = m.client()
    mc.config_set("rdb-key-save-delay", 100_000)  # 200 s for the whole snapshot
    r = replica(procs, tmp_path, "r", "--repl-diskless-load", "swapdb")
    replicaof(r, m)
    wait_for(lambda: "Loading DB in memory" in r.output(), what="the replica to load")
    started = "Background RDB transfer started by pid"
    assert m.output().count(started) == 1
    mc.flushall()
    wait_for(lambda: m.output().count(started) == 2, timeout=10, what="a new sync")
    mc.config_set("rdb-key-save-delay", 0)
    rc = r.client()
    wait_for(lambda: repl(rc)["master_link_status"] == "up", what="the replica to sync")
    assert rc.dbsize() == 0


@pytest.mark.parametrize("kind", KINDS)
def test_each_disk_sync_sends_its_own_snapshot(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m", "--repl-diskless-sync", "no", *DEBUG)
    mc = m.client()
    mc.execute_command("DEBUG", "POPULATE", 100)
    mc.config_set("rdb-key-save-delay", 10_000)  # 1 s a snapshot
    first, second = replica(procs, tmp_path, "first"), replica(procs, tmp_path, "second")
    replicaof(first, m)
    wait_for(lambda: persistence(m)["rdb_bgsave_in_progress"] == 1, what="the first BGSAVE")
    for _ in range(5):
        mc.incr("counter")
    replicaof(second, m)
    wait_for(lambda: mc.info().get("slave1", {}).get("state") == "wait_bgsave",
             what="the second replica")
    for _ in range(5):
        mc.incr("counter")
    for r in (first, second):
        rc = r.client()
        wait_for(lambda: repl(rc)["master_link_status"] == "up", what="the syncs")
        wait_for(lambda: repl(rc)["slave_repl_offset"] == repl(mc)["master_repl_offset"],
                 what="the stream")
        assert rc.get("counter") == b"10"
        assert rc.execute_command("DEBUG", "DIGEST") == mc.execute_command("DEBUG", "DIGEST")
