"""An old single-file AOF (Redis 6's appendonly.aof in dir, with or without an RDB preamble,
no appendonlydir) is upgraded at start-up as Redis 7 does (aofUpgradePrepare): moved into the
directory as its base, the manifest written, the same log lines; then each server loads the
other's upgraded directory. Also the upgrade interrupted after the manifest was written and
before the file moved."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from test_aof import keyspace, restart, start
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from harness import REDIS_BIN

KINDS = ("redis", "goblin")
COMMANDS = (b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
            b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"
            b"*4\r\n$4\r\nSADD\r\n$1\r\ns\r\n$1\r\nx\r\n$1\r\ny\r\n"
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n5\r\n"
            b"*4\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\np\r\n$1\r\nq\r\n")
MIGRATED = ("Successfully migrated an old-style AOF file (appendonly.aof) into the AOF "
            "directory (appendonlydir).")
UPGRADED_MANIFEST = ("file appendonly.aof seq 1 type b\n"
                     "file appendonly.aof.1.incr.aof seq 1 type i\n")


def aof_log_lines(text: str) -> list[str]:
    """The messages of the log lines about the AOF, in order, without pid and time."""
    out = []
    for line in text.splitlines():
        m = re.match(r"\d+:[A-Z] .*? [*#.-] (.*)$", line)
        if m and re.search(r"AOF|append only|appendonly", m.group(1)):
            out.append(re.sub(r"\d+\.\d+ seconds", "<t> seconds", m.group(1)))
    return out


@pytest.fixture
def rdb_preamble(procs, tmp_path) -> bytes:
    """An RDB file made by Redis holding a hash and a sorted set (the preamble of an old AOF)."""
    w = tmp_path / "rdb-maker"
    w.mkdir()
    p = Proc(REDIS_BIN, w, "--dir", str(w), "--save", "", name="redis")
    procs.append(p)
    c = p.start().client()
    c.hset("h", mapping={"f": "1", "g": "2"})
    c.zadd("z", {"m": 1.5, "n": 2})
    c.save()
    p.stop()
    return (w / "dump.rdb").read_bytes()


@pytest.mark.parametrize("preamble", [False, True], ids=["commands", "rdb-preamble"])
def test_an_old_single_file_aof_is_upgraded_as_redis_does(procs, tmp_path, preamble, request):
    old = (request.getfixturevalue("rdb_preamble") if preamble else b"") + COMMANDS
    servers, logs, spaces = {}, {}, {}
    for kind in KINDS:
        w = tmp_path / kind
        w.mkdir()
        (w / "appendonly.aof").write_bytes(old)
        p = start(procs, kind, w)
        servers[kind] = p
        logs[kind] = aof_log_lines(p.output())
        assert MIGRATED in logs[kind], (kind, p.output())
        assert not (w / "appendonly.aof").exists(), kind
        assert (w / "appendonlydir" / "appendonly.aof").read_bytes() == old, kind
        assert (w / "appendonlydir" / "appendonly.aof.manifest").read_text() == \
            UPGRADED_MANIFEST, kind
        spaces[kind] = keyspace(p.client())
        assert p.client(db=5).lrange("l", 0, -1) == [b"p", b"q"], kind
        if preamble:
            assert p.client().zrange("z", 0, -1, withscores=True) == [(b"m", 1.5), (b"n", 2.0)]
    assert logs["goblin"] == logs["redis"]
    assert spaces["goblin"] == spaces["redis"]
    # Written after the upgrade, then each loads the other's directory.
    for kind, p in servers.items():
        p.client().set("later", kind)
        p.stop()
    for kind, other in (("goblin", "redis"), ("redis", "goblin")):
        w = tmp_path / f"{kind}-loads-{other}"
        w.mkdir()
        shutil.copytree(tmp_path / other / "appendonlydir", w / "appendonlydir")
        c = start(procs, kind, w).client()
        assert c.get("later") == other.encode(), kind
        c.delete("later")
        assert keyspace(c) == spaces[other], kind


def test_an_interrupted_upgrade_is_finished(procs, tmp_path):
    """The manifest names the old file as its only base but the file is still in dir (the
    upgrade stopped between the two steps): it is moved, as Redis does."""
    logs = {}
    for kind in KINDS:
        w = tmp_path / kind
        (w / "appendonlydir").mkdir(parents=True)
        (w / "appendonlydir" / "appendonly.aof.manifest").write_text(
            "file appendonly.aof seq 1 type b\n")
        (w / "appendonly.aof").write_bytes(COMMANDS)
        p = start(procs, kind, w)
        logs[kind] = aof_log_lines(p.output())
        assert MIGRATED in logs[kind], kind
        assert p.client().get("a") == b"1"
        restart(p)
        assert p.client().smembers("s") == {b"x", b"y"}
    assert logs["goblin"] == logs["redis"]


def test_an_old_file_beside_a_real_directory_is_left_alone(procs, tmp_path):
    """appendonly.aof in dir while the directory's manifest has its own files: no upgrade,
    the directory loads (Redis's three upgrade conditions all fail)."""
    for kind in KINDS:
        w = tmp_path / kind
        d = w / "appendonlydir"
        d.mkdir(parents=True)
        (d / "appendonly.aof.manifest").write_text(
            "file appendonly.aof.1.base.aof seq 1 type b\n"
            "file appendonly.aof.1.incr.aof seq 1 type i\n")
        (d / "appendonly.aof.1.base.aof").write_bytes(
            b"*3\r\n$3\r\nSET\r\n$3\r\nnew\r\n$1\r\n1\r\n")
        (d / "appendonly.aof.1.incr.aof").write_bytes(b"")
        (w / "appendonly.aof").write_bytes(COMMANDS)
        p = start(procs, kind, w)
        assert MIGRATED not in p.output(), kind
        assert (w / "appendonly.aof").exists(), kind
        c = p.client()
        assert (c.get("new"), c.get("a")) == (b"1", None), kind
