"""A replica whose master's stream replies an error (integration/replication-4's "data
divergence" cases): the `== CRITICAL ==` log line, INFO's unexpected_error_replies,
propagation-error-behavior (ignore, panic-on-replicas) and DEBUG REPLICATE, each on a
Redis pair and a Goblin pair side by side."""

from __future__ import annotations

import pytest

from test_persistence import procs  # noqa: F401 (the fixture)
from test_replication import replicaof, start, wait_for, wait_synced


def pair(procs, tmp_path, kind):
    master = start(procs, kind, tmp_path / f"{kind}-master", "--enable-debug-command", "yes")
    replica = start(procs, kind, tmp_path / f"{kind}-replica")
    replicaof(replica, master)
    wait_synced(master.client(), replica.client())
    return master, replica


def lines_with(proc, text: str) -> int:
    return sum(text in line for line in proc.output().splitlines())


def unexpected(proc) -> int:
    return proc.client().info("stats")["unexpected_error_replies"]


def test_errors_from_the_masters_stream_are_logged_and_counted(procs, tmp_path):
    seen = {}
    for kind in ("redis", "goblin"):
        master, replica = pair(procs, tmp_path, kind)
        m, r = master.client(), replica.client()
        assert r.config_get("propagation-error-behavior") == {"propagation-error-behavior": "ignore"}
        r.config_set("propagation-error-behavior", "ignore")
        assert m.execute_command("DEBUG", "REPLICATE", "fake-command-1") == b"OK"
        m.set("foo", "bar2")
        assert m.execute_command("WAIT", 1, 2000) == 1
        first = (lines_with(replica, "fake-command-1"), lines_with(replica, "== CRITICAL =="), unexpected(replica))
        r.config_set("replica-read-only", "no")
        r.set("number2", "foo")
        m.incrby("number2", 1)
        assert m.execute_command("WAIT", 1, 2000) == 1
        assert (m.get("number2"), r.get("number2")) == (b"1", b"foo")
        second = (lines_with(replica, "incrby"), unexpected(replica), unexpected(master))
        seen[kind] = (first, second)
    assert seen["goblin"] == seen["redis"] == ((1, 1, 1), (1, 2, 0)), seen


def test_panic_on_replicas_stops_a_read_only_replica(procs, tmp_path):
    outcomes = {}
    for kind in ("redis", "goblin"):
        master, replica = pair(procs, tmp_path, kind)
        replica.client().config_set("propagation-error-behavior", "panic-on-replicas")
        master.client().execute_command("DEBUG", "REPLICATE", "fake-command-1")
        wait_for(lambda: replica.proc.poll() is not None, what=f"the {kind} replica to stop")
        outcomes[kind] = lines_with(
            replica, "This replica panicked sending an error to its master after processing the command '<unknown>'"
        )
    assert outcomes == {"redis": 1, "goblin": 1}, outcomes


@pytest.mark.parametrize("value", ["crash", ""])
def test_bad_values_are_refused_as_redis(procs, tmp_path, value):
    errors = []
    for kind in ("redis", "goblin"):
        c = start(procs, kind, tmp_path / kind).client()
        with pytest.raises(Exception) as e:
            c.config_set("propagation-error-behavior", value)
        errors.append(str(e.value))
    assert errors[0] == errors[1], errors
