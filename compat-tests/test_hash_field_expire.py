"""Hash-field expiry (Redis 7.4's HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL,
HEXPIRETIME, HPEXPIRETIME, HPERSIST) against Redis 7.4 (REDIS74_BIN, default the source
tree at /work/redis-unstable/src/redis-server; those cases are skipped without it), and the
same scripts pinned on Goblin alone so CI guards them without the peer (see hfe_scripts.py).

Against the peer, over RESP2 and RESP3: every option and error, the listpackex order,
hashtables, lazy expiry on reads and writes (DEBUG SET-ACTIVE-EXPIRE 0 keeps active expiry
out of the way), active expiry removing fields and the key, keyspace events, what is
written to the AOF (HPEXPIREAT with the absolute time, HDEL for fields removed), DEBUG
RELOAD, DUMP / RESTORE both ways, and each server loading the other's snapshot file."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
import redis

from aof_stream import incr_stream
from harness import Both, Pair, assert_same, make_client
from hfe_scripts import FAR, LONG, NEAR, SCRIPTS, Err
from test_persistence import Proc, goblin, procs  # noqa: F401 (the fixture)

REDIS74_BIN = os.environ.get("REDIS74_BIN", "/work/redis-unstable/src/redis-server")
HAVE_PEER = Path(REDIS74_BIN).exists()
needs_peer = pytest.mark.skipif(not HAVE_PEER, reason=f"no Redis 7.4 at {REDIS74_BIN}")


@pytest.fixture(scope="module")
def pair74(tmp_path_factory):
    """Redis 7.4 (unstable) and Goblin."""
    if not HAVE_PEER:
        pytest.skip(f"no Redis 7.4 at {REDIS74_BIN}")
    pair = Pair(tmp_path_factory.mktemp("hfe74"), [])
    pair.redis.binary = REDIS74_BIN
    pair.start()
    yield pair
    pair.stop()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def b74(request, pair74):
    pair74.flushall()
    b = Both(pair74, request.param)
    yield b
    b.close()
    assert not pair74.check_alive()


@pytest.fixture(scope="module")
def lone_goblin(tmp_path_factory):
    """Goblin alone, for the pinned cases."""
    pair = Pair(tmp_path_factory.mktemp("hfe-goblin"), [])
    pair.goblin.start()
    yield pair.goblin
    pair.goblin.stop()


def outcome(c: redis.Redis, cmd):
    try:
        return c.execute_command(*cmd)
    except redis.ResponseError as e:
        return Err(str(e))


@needs_peer
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_against_redis74(b74, name):
    for cmd, pinned in SCRIPTS[name]:
        if cmd[0] == "SLEEP":
            time.sleep(cmd[1])
            continue
        r, g = b74.run(*cmd)
        assert_same(r, g, f"{name}: {cmd!r}")
        if b74.protocol == 2:
            got = Err(str(r)) if isinstance(r, redis.ResponseError) else r
            assert got == pinned, f"{name}: the pin of {cmd!r} is not Redis 7.4's reply"


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_pinned_on_goblin(lone_goblin, name):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    c.execute_command("FLUSHALL")
    try:
        for cmd, pinned in SCRIPTS[name]:
            if cmd[0] == "SLEEP":
                time.sleep(cmd[1])
                continue
            assert outcome(c, cmd) == pinned, f"{name}: {cmd!r}"
    finally:
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.close()


def wait_gone(c: redis.Redis, key: str, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not c.exists(key):
            return True
        time.sleep(0.02)
    return False


def test_active_expiry_removes_fields_then_the_key(lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    c.hset("h", mapping={"a": 1, "b": 2, "keep": 3})
    c.hset("t", mapping={"long": LONG, **{f"f{i}": i for i in range(600)}})
    assert c.execute_command("HPEXPIRE", "h", 1, "FIELDS", 2, "a", "b") == [1, 1]
    assert c.execute_command("HPEXPIRE", "t", 1, "FIELDS", 600, *[f"f{i}" for i in range(600)]) == [1] * 600
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (c.hlen("h"), c.hlen("t")) != (1, 1):
        time.sleep(0.02)
    assert (c.hlen("h"), c.hlen("t")) == (1, 1), "HLEN counts fields until they are removed"
    c.execute_command("HPEXPIRE", "h", 1, "FIELDS", 1, "keep")
    assert wait_gone(c, "h"), "the key goes with its last field"
    c.close()


@needs_peer
def test_active_expiry_against_redis74(b74):
    b74("HSET", "h", "a", 1, "b", 2)
    b74("HPEXPIRE", "h", 1, "FIELDS", 1, "a")
    for c in b74.clients():
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and c.execute_command("HLEN", "h") != 1:
            time.sleep(0.02)
    b74("HLEN", "h")
    b74("HPEXPIRE", "h", 1, "FIELDS", 1, "b")
    assert all(wait_gone(c, "h") for c in b74.clients())


def events(c: redis.Redis, script) -> list:
    """The keyspace events `script` fires, in order."""
    c.config_set("notify-keyspace-events", "KEA")
    sub = c.pubsub()
    sub.psubscribe("__keyevent@0__:*")
    sub.get_message(timeout=1)
    for cmd in script:
        if cmd[0] == "SLEEP":
            time.sleep(cmd[1])
        else:
            outcome(c, cmd)
    c.execute_command("PUBLISH", "__keyevent@0__:end", "h")
    seen = []
    while True:
        m = sub.get_message(timeout=5)
        if m is None or m["channel"] == b"__keyevent@0__:end":
            break
        if m["type"] == "pmessage":
            seen.append((m["channel"].split(b":", 1)[1], m["data"]))
    sub.close()
    c.config_set("notify-keyspace-events", "")
    return seen


EVENT_SCRIPT = [
    ("DEBUG", "SET-ACTIVE-EXPIRE", "0"),
    ("HSET", "h", "a", "1", "b", "2", "c", "3"),
    ("HEXPIRE", "h", "100", "FIELDS", "2", "a", "zz"),
    ("HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"),
    ("HPERSIST", "h", "FIELDS", "2", "a", "b"),
    ("HPERSIST", "h", "FIELDS", "1", "a"),
    ("HEXPIRE", "h", "0", "FIELDS", "1", "a"),
    ("HPEXPIRE", "h", "1", "FIELDS", "1", "b"),
    ("SLEEP", 0.02),
    ("HGET", "h", "b"),
    ("HPEXPIRE", "h", "1", "FIELDS", "1", "c"),
    ("SLEEP", 0.02),
    ("HINCRBY", "h", "c", "1"),
    ("HEXPIRE", "h", "0", "FIELDS", "1", "c"),
    ("HSET", "m", "a", "1", "b", "2"),
    ("HPEXPIRE", "m", "1", "FIELDS", "2", "a", "b"),
    ("SLEEP", 0.02),
    ("HMGET", "m", "a", "b", "c"),
    ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
]

PINNED_EVENTS = [
    (b"hset", b"h"), (b"hexpire", b"h"), (b"hpersist", b"h"), (b"hdel", b"h"),
    (b"hexpire", b"h"), (b"hexpired", b"h"), (b"hexpire", b"h"), (b"hexpired", b"h"),
    (b"del", b"h"), (b"hincrby", b"h"), (b"hdel", b"h"), (b"del", b"h"),
    (b"hset", b"m"), (b"hexpire", b"m"), (b"hexpired", b"m"), (b"del", b"m"),
]


@needs_peer
def test_keyspace_events_against_redis74(pair74):
    pair74.flushall()
    r, g = (make_client(s) for s in pair74)
    assert events(g, EVENT_SCRIPT) == events(r, EVENT_SCRIPT) == PINNED_EVENTS


def test_keyspace_events_pinned(lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    assert events(c, EVENT_SCRIPT) == PINNED_EVENTS
    c.close()


AOF_SCRIPT = [
    ("HSET", "h", "a", "1", "b", "2", "c", "3"),
    ("HEXPIRE", "h", "100", "FIELDS", "3", "a", "b", "x"),
    ("HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"),
    ("HPEXPIRE", "h", "5000", "XX", "FIELDS", "2", "a", "c"),
    ("HEXPIREAT", "h", "1", "FIELDS", "2", "c", "x"),
    ("HPEXPIREAT", "h", FAR, "FIELDS", "1", "b"),
    ("HPERSIST", "h", "FIELDS", "1", "b"),
    ("HPERSIST", "h", "FIELDS", "1", "b"),
    ("HTTL", "h", "FIELDS", "1", "a"),
    ("HPEXPIRE", "h", "1", "FIELDS", "1", "a"),
    ("SLEEP", 0.05),
    ("HGET", "h", "a"),
    ("HSET", "g", "f", "1"),
    ("HEXPIRE", "g", "0", "FIELDS", "1", "f"),
]

# Times relative to the command's clock are replaced by T.
PINNED_AOF = [
    [b"SELECT", b"0"],
    [b"HSET", b"h", b"a", b"1", b"b", b"2", b"c", b"3"],
    [b"HPEXPIREAT", b"h", b"T", b"FIELDS", b"2", b"a", b"b"],
    [b"HPEXPIREAT", b"h", b"T", b"XX", b"FIELDS", b"1", b"a"],
    [b"HDEL", b"h", b"c"],
    [b"HPEXPIREAT", b"h", str(FAR).encode(), b"FIELDS", b"1", b"b"],
    [b"HPERSIST", b"h", b"FIELDS", b"1", b"b"],
    [b"HPEXPIREAT", b"h", b"T", b"FIELDS", b"1", b"a"],
    [b"HDEL", b"h", b"a"],
    [b"HSET", b"g", b"f", b"1"],
    [b"HDEL", b"g", b"f"],
]


def aof_of(p: Proc) -> list:
    c = p.client()
    c.config_set("appendfsync", "always")
    for cmd in AOF_SCRIPT:
        if cmd[0] == "SLEEP":
            time.sleep(cmd[1])
        else:
            outcome(c, cmd)
    c.close()
    stream = incr_stream(p.workdir)
    now = time.time() * 1000
    return [[b"T" if re.fullmatch(rb"\d{13}", a) and abs(int(a) - now) < 600_000 else a for a in cmd]
            for cmd in stream]


AOF_ARGS = ("--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--save", "")


@needs_peer
def test_aof_against_redis74(procs, tmp_path):
    (tmp_path / "r").mkdir()
    r = Proc(REDIS74_BIN, tmp_path / "r", "--dir", str(tmp_path / "r"), *AOF_ARGS, name="redis")
    procs.append(r)
    r.start()
    assert aof_of(r) == PINNED_AOF


def test_aof_pinned_and_replayed(procs, tmp_path):
    g = goblin(procs, tmp_path, *AOF_ARGS)
    assert aof_of(g) == PINNED_AOF
    c = g.client()
    before = c.execute_command("HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "c")
    g.kill9()
    g.start()
    c = g.client()
    assert c.execute_command("HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "c") == before == [-2, -1, -2]
    assert c.hgetall("h") == {b"b": b"2"}
    c.execute_command("HPEXPIREAT", "h", NEAR, "FIELDS", 1, "b")
    c.execute_command("BGREWRITEAOF")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and c.info("persistence")["aof_rewrite_in_progress"]:
        time.sleep(0.05)
    time.sleep(0.2)
    g.kill9()
    g.start()
    c = g.client()
    assert c.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "b") == [NEAR]


def build_timed(c: redis.Redis) -> None:
    c.hset("h", mapping={"a": 1, "b": 2, "c": 3})
    c.execute_command("HPEXPIREAT", "h", FAR, "FIELDS", 1, "b")
    c.execute_command("HPEXPIREAT", "h", NEAR, "FIELDS", 1, "c")
    c.hset("t", mapping={"long": LONG, "a": 1})
    c.execute_command("HPEXPIREAT", "t", FAR, "FIELDS", 1, "a")


def timed_state(c: redis.Redis) -> list:
    return [
        c.object("encoding", "h"), c.hgetall("h"),
        c.execute_command("HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "c"),
        c.object("encoding", "t"), c.execute_command("HPEXPIRETIME", "t", "FIELDS", 2, "a", "long"),
    ]


PINNED_STATE = [
    b"listpackex", {b"c": b"3", b"b": b"2", b"a": b"1"}, [-1, FAR, NEAR],
    b"hashtable", [FAR, -1],
]


@needs_peer
def test_dump_restore_both_ways(pair74):
    pair74.flushall()
    r, g = (make_client(s) for s in pair74)
    for src, dst in ((r, g), (g, r)):
        build_timed(src)
        for key in ("h", "t"):
            dst.restore(key, 0, src.dump(key), replace=True)
        assert timed_state(dst) == timed_state(src) == PINNED_STATE
        src.flushall()
        dst.flushall()


def test_dump_restore_pinned(lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    build_timed(c)
    payload = c.dump("h")
    assert payload[0] == 25, "HASH_LISTPACK_EX"
    assert c.dump("t")[0] == 24, "HASH_METADATA"
    c.hset("plain", "a", 1)
    assert c.dump("plain")[0] == 16, "a hash without times keeps 7.2's type"
    for key in ("h", "t"):
        c.restore(key, 0, c.dump(key), replace=True)
    assert timed_state(c) == PINNED_STATE
    c.close()


@needs_peer
def test_each_loads_the_others_snapshot(procs, tmp_path):
    """A file Goblin saves loads in Redis 7.4 and the reverse (RDB 12 files)."""
    for writer, reader in ((GOBLIN, REDIS74_BIN), (REDIS74_BIN, GOBLIN)):
        work = tmp_path / f"{Path(writer).name}-{Path(reader).name}"
        work.mkdir()
        w = Proc(writer, work, "--dir", str(work), "--save", "", name="writer")
        procs.append(w)
        w.start()
        c = w.client()
        build_timed(c)
        c.save()
        c.close()
        w.kill9()
        rd = Proc(reader, work, "--dir", str(work), "--save", "", name="reader")
        procs.append(rd)
        rd.start()
        c = rd.client()
        assert timed_state(c) == PINNED_STATE, (writer, reader)
        c.close()
        rd.kill9()


GOBLIN = os.environ.get("GOBLIN_BIN", str(Path(__file__).resolve().parent.parent / "target" / "release" / "goblin-server"))

HFE_COMMANDS = ["hexpire", "hpexpire", "hexpireat", "hpexpireat", "httl", "hpttl",
                "hexpiretime", "hpexpiretime", "hpersist"]


@needs_peer
def test_command_info_and_docs_against_redis74(b74):
    for name in HFE_COMMANDS:
        b74("COMMAND", "INFO", name)
        b74("COMMAND", "DOCS", name)
        b74("COMMAND", "GETKEYS", name, "k", "1", "FIELDS", "1", "f")


def test_command_info_pinned(lone_goblin):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    [info] = c.execute_command("COMMAND", "INFO", "hexpire")
    assert info[:6] == [b"hexpire", -6, [b"write", b"denyoom", b"fast"], 1, 1, 1]
    assert info[6] == [b"@write", b"@hash", b"@fast"]
    assert c.execute_command("COMMAND", "GETKEYS", "httl", "k", "FIELDS", "1", "f") == [b"k"]
    c.close()
