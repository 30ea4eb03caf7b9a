"""A client that keeps its socket full (redis-cli --pipe) does not starve the others: the
server reads it once per round of events, as Redis reads once per readable event, so
another client's command runs while the pipe is still being loaded. (Goblin used to read
such a client until its socket was empty: a PING waited 3 s behind 1M pipelined SETs.)"""

from __future__ import annotations

import subprocess
import time

import pytest

from test_persistence import procs  # noqa: F401 (the fixture)
from test_replication import start

KEYS = 500_000


@pytest.fixture(scope="module")
def pipe_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipe") / "sets.resp"
    chunks = []
    for i in range(KEYS):
        key = b"key:%d" % i
        chunks.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n" % (len(key), key))
    path.write_bytes(b"".join(chunks))
    return path


@pytest.mark.parametrize("kind", ("redis", "goblin"))
def test_a_pipelining_client_leaves_room_for_the_others(procs, tmp_path, pipe_file, kind):
    server = start(procs, kind, tmp_path / kind)
    probe = server.client()
    with open(pipe_file, "rb") as stdin:
        pipe = subprocess.Popen(["redis-cli", "-p", str(server.port), "--pipe"], stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        # DBSIZE over and over while the pipe loads: between two readings the server ran
        # one round of the pipe's reads, never the rest of the pipe at once.
        deadline = time.monotonic() + 60
        readings = [0]
        while readings[-1] < KEYS and time.monotonic() < deadline:
            readings.append(probe.dbsize())
        largest_step = max(b - a for a, b in zip(readings, readings[1:]))
        assert largest_step < KEYS // 4
        out, _ = pipe.communicate(timeout=120)
    finally:
        pipe.kill()
    assert b"errors: 0, replies: %d" % KEYS in out
    assert probe.dbsize() == KEYS
