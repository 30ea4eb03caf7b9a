"""Replication and persistence behaviours Redis's own Tcl suite checks (integration/shutdown,
unit/shutdown, integration/replication-3, integration/replication-psync,
integration/psync2-master-restart, integration/rdb, integration/replication), beside
Debian's redis-server 7.0:

- INFO's shutdown_in_milliseconds while a shutdown waits for a lagging replica;
- a shutdown refused while the rewrite writing the first AOF runs ("Writing initial AOF,
  can't exit."), and a second SIGINT removing the temp file of the save in progress;
- a writable replica expiring the keys its own clients gave a time to live (Redis's
  slaveKeysWithExpire, INFO slave_expires_tracked_keys);
- CLIENT KILL of a replica's master by address (the link drops, the replica continues with
  PSYNC) and CONFIG RESETSTAT clearing the sync counters;
- keys whose time passed written to the snapshot, dropped by a restarted master's load
  (rdb_last_load_keys_expired) and their deletion sent to its replicas;
- a replica killed on its master while a diskless sync streams to it stops loading;
- GETSET and SET ... GET replicated as SET, and a smaller repl-backlog-size applied at once.

Every scenario runs with Redis in Goblin's place too, so that what is asserted is Redis's
behaviour. Each test starts its own servers on free ports in its own temporary directory.
"""

from __future__ import annotations

import signal

import pytest
import redis

from resp import RawConnection, encode
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_repl_async_loading import cut_off_replicas
from test_replication import repl, replicaof, start, sync_stats, wait_for, wait_synced
from test_replication_persist import restart
from test_shutdown_wait import master_and_replica, stopped, wait_until_waiting, write_pending

KINDS = ["redis", "goblin"]


def info(p: Proc, section: str) -> dict:
    return p.client().info(section)


@pytest.mark.parametrize("kind", KINDS)
def test_shutdown_in_milliseconds_while_waiting(procs, tmp_path, kind):
    m, r = master_and_replica(procs, tmp_path, (kind, kind), "--shutdown-timeout", "300")
    assert "shutdown_in_milliseconds" not in info(m, "server")
    with stopped(r):
        write_pending(m)
        caller = RawConnection(m.port, timeout=30)
        caller.send(encode("SHUTDOWN"))
        wait_until_waiting(m)
        left = info(m, "server")["shutdown_in_milliseconds"]
        assert 0 < left <= 300_000
        assert m.client().execute_command("SHUTDOWN", "ABORT") is True
    assert caller.read_replies(1) == b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
    assert "shutdown_in_milliseconds" not in info(m, "server")


def slow_saver(procs, tmp_path, kind: str, keys: int, delay_us: int, *args: str) -> Proc:
    """A server holding `keys` keys whose saves wait `delay_us` after each key."""
    p = start(procs, kind, tmp_path, *args)
    c = p.client()
    for i in range(keys):
        c.set(i, i)
    c.config_set("rdb-key-save-delay", delay_us)
    return p


@pytest.mark.parametrize("kind", KINDS)
def test_no_exit_while_the_first_aof_is_written(procs, tmp_path, kind):
    p = slow_saver(procs, tmp_path, kind, 10, 10_000_000)
    c = p.client()
    c.config_set("appendonly", "yes")
    wait_for(lambda: info(p, "persistence")["aof_rewrite_in_progress"] == 1, what="the rewrite")
    p.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: "Writing initial AOF, can't exit." in p.output(), what="the refusal")
    wait_for(lambda: "Errors trying to shut down the server" in p.output(), what="the cancel")
    assert c.ping() and p.proc.poll() is None
    c.shutdown(nosave=True, force=True)
    assert p.wait() == 0
    assert "Writing initial AOF. Exit anyway." in p.output()


@pytest.mark.parametrize("kind", KINDS)
def test_second_sigint_removes_the_temp_rdb(procs, tmp_path, kind):
    p = slow_saver(procs, tmp_path, kind, 20, 100_000, "--save", "900 1")
    pid = info(p, "server")["process_id"]
    temp = tmp_path / f"temp-{pid}.rdb"
    p.proc.send_signal(signal.SIGINT)
    wait_for(temp.exists, what="the shutdown save to start")
    p.proc.send_signal(signal.SIGINT)
    assert p.wait() == 1
    assert not temp.exists()
    assert "You insist... exiting now." in p.output()


@pytest.mark.parametrize("kind", KINDS)
def test_writable_replica_expires_its_own_keys(procs, tmp_path, kind):
    m = start(procs, "redis", tmp_path / "m", "--enable-debug-command", "yes")
    r = start(procs, kind, tmp_path / "r")
    replicaof(r, m)
    wait_synced(m.client(), r.client())
    rc = r.client(db=5)
    rc.config_set("replica-read-only", "no")
    for key in ("k1", "k2", "k3"):
        assert rc.set(key, 1, px=300)
    rc.set("forever", 1)
    assert rc.dbsize() == 4
    assert info(r, "stats")["slave_expires_tracked_keys"] == 3
    wait_for(lambda: rc.dbsize() == 1, what="the replica to expire its keys")
    assert info(r, "stats")["slave_expires_tracked_keys"] == 0
    # The master's own keys stay until the master's DEL, as before.
    mc = m.client()
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    mc.set("mk", 1, px=50)
    wait_synced(mc, r.client())
    assert info(r, "stats")["slave_expires_tracked_keys"] == 0
    wait_for(lambda: r.client().exists("mk") == 0, what="mk to look expired on the replica")
    assert r.client().dbsize() == 1


@pytest.mark.parametrize("kind", KINDS)
def test_client_kill_of_the_master_by_address(procs, tmp_path, kind):
    m = start(procs, "redis", tmp_path / "m")
    r = start(procs, kind, tmp_path / "r")
    replicaof(r, m)
    mc, rc = m.client(), r.client()
    wait_synced(mc, rc)
    assert sync_stats(mc) == (1, 0)
    address = f"127.0.0.1:{m.port}"
    assert rc.execute_command("CLIENT", "KILL", address) == b"OK"
    wait_for(lambda: sync_stats(mc) == (1, 1), what="the partial resync")
    wait_synced(mc, rc)
    assert rc.execute_command("CLIENT", "KILL", "ADDR", address) == 1
    wait_for(lambda: sync_stats(mc) == (1, 2), what="the second partial resync")
    wait_synced(mc, rc)
    master = [line for line in rc.execute_command("CLIENT", "LIST").decode().splitlines()
              if "flags=M" in line]
    master_id = master[0].split()[0].split("=")[1]
    assert rc.execute_command("CLIENT", "KILL", "ID", master_id) == 1
    wait_for(lambda: sync_stats(mc) == (1, 3), what="the third partial resync")
    assert rc.execute_command("CLIENT", "KILL", "ADDR", "127.0.0.1:1") == 0


@pytest.mark.parametrize("kind", KINDS)
def test_config_resetstat_clears_the_sync_counters(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m")
    r = start(procs, "redis", tmp_path / "r")
    replicaof(r, m)
    wait_synced(m.client(), r.client())
    assert sync_stats(m.client())[0] == 1
    assert m.client().config_resetstat()
    stats = info(m, "stats")
    assert (stats["sync_full"], stats["sync_partial_ok"], stats["sync_partial_err"]) == (0, 0, 0)


@pytest.mark.parametrize("kind", KINDS)
def test_restarted_master_drops_and_propagates_expired_keys(procs, tmp_path, monkeypatch, kind):
    m = start(procs, kind, tmp_path / "m", "--save", "3600 1", "--enable-debug-command", "yes")
    r = start(procs, "redis", tmp_path / "r")
    replicaof(r, m)
    mc = m.client()
    mc.set("stays", 1)
    wait_synced(mc, r.client())
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for j in range(32):
        mc.execute_command("SELECT", j % 4)
        mc.set(f"e{j}", "v", px=10)
    wait_synced(mc, r.client())
    wait_for(lambda: repl(mc)["slave0"]["offset"] == repl(mc)["master_repl_offset"],
             what="the replica's ACK")
    offset = repl(mc)["master_repl_offset"]
    try:
        mc.shutdown(save=True)
    except redis.ConnectionError:
        pass
    assert m.wait() == 0
    restart(m, monkeypatch)
    mc = m.client()
    assert info(m, "persistence")["rdb_last_load_keys_expired"] == 32
    assert info(m, "persistence")["rdb_last_load_keys_loaded"] == 1
    histlen = repl(mc)["repl_backlog_histlen"]
    assert histlen > 0
    assert repl(mc)["master_repl_offset"] == offset + histlen
    wait_synced(mc, r.client())
    assert sync_stats(mc) == (0, 1)
    for db in range(4):
        assert r.client(db=db).dbsize() == (1 if db == 0 else 0)


@pytest.mark.parametrize("kind", KINDS)
def test_killed_replica_stops_loading_a_diskless_sync(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m", "--repl-diskless-sync", "yes",
              "--enable-debug-command", "yes")
    r = start(procs, kind, tmp_path / "r", "--repl-diskless-load", "swapdb")
    mc, rc = m.client(), r.client()
    # Large values: a loading Redis answers INFO only every 2 MB it reads.
    mc.execute_command("DEBUG", "POPULATE", 1000, "master", 20_000)
    rc.set("mykey", "myvalue")
    mc.config_set("rdb-key-save-delay", 10_000)
    replicaof(r, m)
    wait_for(lambda: "Loading DB in memory" in r.output(), what="the replica to load")
    mc.config_set("repl-diskless-sync-delay", 5)
    assert mc.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    # The whole transfer takes 10 s; the replica sees its link end at once.
    failed = "Failed trying to load the MASTER synchronization DB from socket"
    wait_for(lambda: failed in r.output(), timeout=5, what="the load to stop")
    assert rc.get("mykey") == b"myvalue" and rc.dbsize() == 1
    mc.config_set("rdb-key-save-delay", 0)


@pytest.mark.parametrize("kind", KINDS)
def test_getset_and_set_get_replicate_as_set(procs, tmp_path, kind):
    m = start(procs, kind, tmp_path / "m")
    r = start(procs, "redis", tmp_path / "r")
    replicaof(r, m)
    mc, rc = m.client(), r.client()
    wait_synced(mc, rc)
    rc.config_resetstat()
    mc.set("test", "foo")
    assert mc.getset("test", "bar") == b"foo"
    assert mc.set("test", "vaz", get=True) == b"bar"
    wait_synced(mc, rc)
    stats = rc.info("commandstats")
    assert stats["cmdstat_set"]["calls"] == 3
    assert "cmdstat_getset" not in stats
    assert rc.get("test") == b"vaz"


@pytest.mark.parametrize("kind", KINDS)
def test_a_smaller_backlog_applies_at_once(procs, tmp_path, kind):
    """CONFIG SET repl-backlog-size trims the history at once: a replica cut off in the same
    transaction that then writes more than the new size needs a full sync."""
    m = start(procs, kind, tmp_path / "m")
    r = start(procs, kind, tmp_path / "r")
    replicaof(r, m)
    mc = m.client()
    wait_synced(mc, r.client())
    assert sync_stats(mc) == (1, 0)
    cut_off_replicas(mc)
    wait_for(lambda: sync_stats(mc)[0] == 2, what="the full sync")
    assert sync_stats(mc) == (2, 0)
    wait_synced(mc, r.client())
    assert r.client().get("k9") == b"A" * 16384
