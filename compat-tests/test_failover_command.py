"""FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] beside Debian's redis-server 7.0: its
errors, a master handing over to its replica (Goblin to Redis, Redis to Goblin, Goblin to
Goblin with TO), INFO's master_failover_state through waiting-for-sync, ABORT, and a TIMEOUT
that gives up (or, with FORCE, hands over anyway) when the replica cannot catch up (stopped
with SIGSTOP).

Each test but the first starts its own servers on free ports in its own temporary directory.
"""

from __future__ import annotations

import os
import signal

import pytest

from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import repl, replicaof, start, wait_for


@pytest.mark.parametrize("args", [
    (), ("ABORT",), ("TIMEOUT", "0"), ("TIMEOUT", "x"), ("TO", "127.0.0.1", "x"), ("FORCE",),
    ("bogus",), ("TO", "127.0.0.1"), ("FORCE", "FORCE"), ("TIMEOUT", "10", "TIMEOUT", "10"),
])
def test_errors_as_redis(both, args):
    both.err("FAILOVER", *args)


def state(c) -> str:
    return repl(c)["master_failover_state"]


def pair(procs, tmp_path, master_kind: str, replica_kind: str):
    m = start(procs, master_kind, tmp_path / "m")
    r = start(procs, replica_kind, tmp_path / "r")
    replicaof(r, m)
    mc, rc = m.client(), r.client()
    wait_for(lambda: repl(mc).get("slave0", {}).get("state") == "online", what="online")
    return m, r, mc, rc


@pytest.mark.parametrize("master_kind,replica_kind",
                         [("goblin", "redis"), ("redis", "goblin"), ("goblin", "goblin")])
def test_the_master_hands_over_to_its_replica(procs, tmp_path, master_kind, replica_kind):
    m, r, mc, rc = pair(procs, tmp_path, master_kind, replica_kind)
    for i in range(200):
        mc.set(f"k{i}", i)
    assert state(mc) == "no-failover"
    assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port) == b"OK"
    wait_for(lambda: rc.execute_command("ROLE")[0] == b"master", what="the replica promoted")
    wait_for(lambda: mc.execute_command("ROLE")[:4] == [b"slave", b"127.0.0.1", r.port,
                                                        b"connected"], what="the old master following")
    wait_for(lambda: state(mc) == "no-failover", what="the failover to end")
    assert rc.get("k199") == b"199"
    rc.set("after", "yes")
    wait_for(lambda: mc.get("after") == b"yes", what="the stream the other way")


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_wrong_target_errors_as_redis(procs, tmp_path, kind):
    m, r, mc, rc = pair(procs, tmp_path, kind, kind)
    for args, error in [
        (("TO", "127.0.0.1", r.port + 1), "FAILOVER target HOST and PORT is not a replica."),
        (("TO", "127.0.0.1", r.port, "FORCE"), "FAILOVER with force option requires both a "
                                                "timeout and target HOST and IP."),
    ]:
        with pytest.raises(Exception) as e:
            mc.execute_command("FAILOVER", *args)
        assert str(e.value) == error
    with pytest.raises(Exception) as e:
        rc.execute_command("FAILOVER")
    assert str(e.value) == "FAILOVER is not valid when server is a replica."


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_timeout_abort_and_force_with_a_stopped_replica(procs, tmp_path, kind):
    m, r, mc, rc = pair(procs, tmp_path, kind, kind)
    os.kill(r.proc.pid, signal.SIGSTOP)
    try:
        mc.set("behind", 1)
        # No TIMEOUT: it waits (writes paused) until ABORT.
        assert mc.execute_command("FAILOVER") == b"OK"
        assert state(mc) == "waiting-for-sync"
        with pytest.raises(Exception) as e:
            mc.execute_command("FAILOVER")
        assert str(e.value) == "FAILOVER already in progress."
        assert mc.execute_command("FAILOVER", "ABORT") == b"OK"
        assert state(mc) == "no-failover"
        mc.set("writable", 1)
        # TIMEOUT without FORCE gives up and stays master.
        assert mc.execute_command("FAILOVER", "TIMEOUT", 300) == b"OK"
        wait_for(lambda: state(mc) == "no-failover", 5, "the timeout")
        assert mc.execute_command("ROLE")[0] == b"master"
        # With FORCE it hands over anyway once the time is up.
        assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port, "FORCE",
                                  "TIMEOUT", 300) == b"OK"
        wait_for(lambda: state(mc) == "failover-in-progress", 5, "the forced handover")
        assert mc.execute_command("ROLE")[0] == b"slave"
    finally:
        os.kill(r.proc.pid, signal.SIGCONT)
    wait_for(lambda: rc.execute_command("ROLE")[0] == b"master", 20, "the replica promoted")
    wait_for(lambda: state(mc) == "no-failover", 20, "the failover to end")
