"""Streams in the append-only file: Goblin propagates XADD with the id it generated (`*`,
`<ms>-*`) and approximate trims (`~`, LIMIT) as the exact trims they came to, as Redis
does, so a restart from the AOF rebuilds every stream byte for byte (DUMP payloads equal:
entries, nodes, last id, entries added, max deleted id); the same after BGREWRITEAOF with
the RDB preamble, and the same entries without it (the command base writes XADD ... and
XSETID, new nodes as in Redis); and
Redis 7.0 loads Goblin's appendonlydir to the same entries.

Each test starts its own servers on free ports in its own temporary directory."""

from __future__ import annotations

import shutil

import pytest
import redis

from test_aof import start, wait_rewrite
from test_persistence import procs  # noqa: F401 (the fixture)


def stream_writes(c, start_ms: int) -> None:
    for i in range(40):
        c.execute_command("XADD", "auto", "*", "n", i, "user", f"u{i:08}")
    c.execute_command("XADD", "auto", "MAXLEN", "~", "12", "*", "f", "v")
    c.execute_command("XTRIM", "auto", "MAXLEN", "~", "8", "LIMIT", "5")
    for i in range(30):
        c.execute_command("XADD", "seq", f"{start_ms + i // 4}-*", "k", i)
    c.execute_command("XADD", "seq", "MINID", "~", f"{start_ms + 3}", "LIMIT", "6", f"{start_ms + 8}-*", "x", "y")
    c.execute_command("XTRIM", "seq", "MINID", "~", f"{start_ms + 5}")
    c.execute_command("XDEL", "seq", f"{start_ms + 7}-0", f"{start_ms + 7}-1")
    c.execute_command("XTRIM", "seq", "MINID", "=", f"{start_ms + 6}-2")
    c.execute_command("XSETID", "seq", f"{start_ms + 100}-0", "ENTRIESADDED", "500",
                      "MAXDELETEDID", f"{start_ms + 50}-0")
    c.execute_command("XADD", "empty", "MAXLEN", "0", "*", "f", "v")
    c.execute_command("XADD", "gone", f"{start_ms}-1", "f", "v")
    c.execute_command("XDEL", "gone", f"{start_ms}-1")


def dumps(c) -> dict:
    return {k: c.dump(k) for k in (b"auto", b"seq", b"empty", b"gone")}


def ranges(c) -> dict:
    return {k: c.xrange(k) for k in (b"auto", b"seq", b"empty", b"gone")}


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_restart_and_rewrite_rebuild_streams_exactly(procs, tmp_path, preamble):
    # Node limits on the command line: a restart must build the same nodes.
    g = start(procs, "goblin", tmp_path / "g", "--aof-use-rdb-preamble", preamble,
              "--stream-node-max-entries", "5")
    c = g.client()
    stream_writes(c, 1_000_000)
    before = dumps(c)
    g.kill9()
    g.start()
    c = g.client()
    assert dumps(c) == before
    assert c.bgrewriteaof() in (True, b"Background append only file rewriting started")
    wait_rewrite(c)
    stream_writes(c, 2_000_000)  # into the new incremental file
    before = dumps(c)
    entries = ranges(c)
    g.kill9()
    g.start()
    c = g.client()
    if preamble == "yes":
        assert dumps(c) == before
    else:
        # A command base rebuilds the nodes from the live entries (as Redis's does), so
        # the trims replayed after it meet other nodes: the entries are the same.
        assert ranges(c) == entries
    g.stop()
    r_dir = tmp_path / "goblin-into-redis"
    r_dir.mkdir()
    shutil.copytree(g.workdir / "appendonlydir", r_dir / "appendonlydir")
    r = start(procs, "redis", r_dir)
    assert ranges(r.client()) == entries
    r.kill9()


def test_groups_survive_a_rewrite_into_commands(procs, tmp_path):
    g = start(procs, "goblin", tmp_path / "g", "--aof-use-rdb-preamble", "no")
    c = g.client()
    c.execute_command("XADD", "s", "1-1", "f", "v")
    c.execute_command("XGROUP", "CREATE", "s", "g1", "0", "ENTRIESREAD", "0")
    c.execute_command("XGROUP", "CREATE", "s", "g2", "$")
    c.execute_command("XGROUP", "CREATECONSUMER", "s", "g1", "alice")
    c.execute_command("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
    assert c.bgrewriteaof() in (True, b"Background append only file rewriting started")
    wait_rewrite(c)
    base = next((g.workdir / "appendonlydir").glob("*.base.aof")).read_bytes()
    assert b"XGROUP\r\n$6\r\nCREATE\r\n$1\r\ns\r\n$2\r\ng1\r\n$3\r\n0-0\r\n$11\r\nENTRIESREAD\r\n$1\r\n0" in base
    g.kill9()
    g.start()
    c = g.client()
    for key, group in (("s", "g1"), ("s", "g2"), ("e", "g")):
        with pytest.raises(redis.ResponseError, match="BUSYGROUP"):
            c.execute_command("XGROUP", "CREATE", key, group, "0")
    assert c.execute_command("XGROUP", "CREATECONSUMER", "s", "g1", "alice") == 0
    assert c.execute_command("XGROUP", "CREATECONSUMER", "s", "g2", "alice") == 1
    assert c.xrange("s") == [(b"1-1", {b"f": b"v"})]
    g.stop()
