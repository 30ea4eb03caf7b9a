"""HyperLogLog: PFADD, PFCOUNT (one key with the cached cardinality, several keys), PFMERGE,
PFDEBUG (GETREG DECODE ENCODING TODENSE), PFSELFTEST and hll-sparse-max-bytes, against Redis:
replies and errors in RESP2 and RESP3, and the HLL's bytes (GET) after every change, sparse,
dense and across the promotion, so an HLL moves between the two servers by GET/SET and
DUMP/RESTORE and counts the same. Corrupt HLL strings get Redis's errors; the changes count,
notify and propagate to the AOF as in Redis.

The corrupt-HLL cases run against Redis 7.2.4 (REDIS72_BIN, default the source tree's
/work/redis-7.2.4/src/redis-server; skipped without it): Debian's 7.0.15 carries the fix of
CVE-2025-32023, which rejects some sparse strings 7.2.4 reads (a VAL past the 16384th
register), so only 7.2.4 is the reference for them. Goblin reads them as 7.2.4 does, with
no out-of-bounds access (its register indexes cannot overflow)."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
import redis

from aof_stream import incr_stream
from harness import Both, Pair
from test_aof import start
from test_dump_restore import body, footer
from test_notifications import stream
from test_persistence import procs  # noqa: F401 (the fixture)


REDIS72_BIN = os.environ.get("REDIS72_BIN", "/work/redis-7.2.4/src/redis-server")


@pytest.fixture(scope="module")
def pair72(tmp_path_factory):
    """Redis 7.2.4 and Goblin."""
    if not Path(REDIS72_BIN).exists():
        pytest.skip(f"no Redis 7.2.4 at {REDIS72_BIN}")
    pair = Pair(tmp_path_factory.mktemp("hll72"), [])
    pair.redis.binary = REDIS72_BIN
    pair.start()
    yield pair
    pair.stop()


@pytest.fixture
def both72(pair72):
    pair72.flushall()
    b = Both(pair72)
    yield b
    b.close()
    b.restore_config()
    assert not pair72.check_alive()


@pytest.fixture(params=[2, 3])
def s(request):
    return request.getfixturevalue("both" if request.param == 2 else "both3")


def same_value(both, key):
    """GET and OBJECT ENCODING of `key` agree (the HLL's bytes are Redis's)."""
    both("GET", key)
    both("OBJECT", "ENCODING", key)


def elements(rng, n, prefix="e"):
    return [f"{prefix}{rng.random()}" for _ in range(n)]


def test_pfadd_pfcount_basics(s):
    s("PFADD", "h")
    same_value(s, "h")
    s("PFCOUNT", "h")
    same_value(s, "h")
    s("PFADD", "h", "a", "b", "c")
    s("PFADD", "h", "a", "b", "c")
    s("PFADD", "h", "")
    s("PFADD", "h")
    same_value(s, "h")
    s("PFCOUNT", "h")
    same_value(s, "h")
    s("PFCOUNT", "h")
    s("PFCOUNT", "nokey")
    s("PFADD", "new", "x", "y")
    same_value(s, "new")
    s("EXISTS", "h", "new")
    s("TYPE", "h")
    s("STRLEN", "h")


def test_cached_cardinality_bytes(both):
    both("PFADD", "h", "a", "b", "c")
    both("GETRANGE", "h", 8, 15)
    both("PFCOUNT", "h")
    both("GETRANGE", "h", 8, 15)
    both("PFADD", "h", "a", "b", "c")
    both("GETRANGE", "h", 15, 15)
    both("PFADD", "h", "1", "2", "3")
    both("GETRANGE", "h", 8, 15)
    # An HLL SET as embstr: PFCOUNT makes it raw even when the cache is valid.
    both("PFCOUNT", "h")
    value = both.redis.get("h")
    both("SET", "copy", value)
    both("OBJECT", "ENCODING", "copy")
    both("PFCOUNT", "copy")
    both("OBJECT", "ENCODING", "copy")


@pytest.mark.parametrize("max_bytes", [3000, 500, 100, 30, 0, 1])
def test_sparse_to_dense_promotion_bytes(both, max_bytes):
    rng = random.Random(max_bytes)
    both.config_set("hll-sparse-max-bytes", max_bytes)
    both("PFADD", "h")
    for batch in (1, 2, 5, 10, 20, 50, 100, 200, 400, 800):
        both("PFADD", "h", *elements(rng, batch))
        both("GET", "h")
        both("PFDEBUG", "ENCODING", "h")
        both("PFCOUNT", "h")
        both("PFDEBUG", "DECODE", "h")
    both("PFDEBUG", "ENCODING", "h")


def test_large_registers_promote(both):
    # Enough distinct elements that some register is set above 32 (a VAL cannot hold it).
    rng = random.Random(7)
    both("PFADD", "h", *elements(rng, 10))
    for _ in range(30):
        both("PFADD", "h", *elements(rng, 3))
        both("GET", "h")
    both("PFDEBUG", "ENCODING", "h")


def test_lowering_the_limit_promotes_on_the_next_growth(both):
    both("PFADD", "h", *"abcdedghijk")
    both("PFDEBUG", "ENCODING", "h")
    both.config_set("hll-sparse-max-bytes", 30)
    both("PFADD", "h", "a")
    both("PFDEBUG", "ENCODING", "h")
    both("PFADD", "h", "new_element")
    both("PFDEBUG", "ENCODING", "h")
    both("GET", "h")


def test_config(both):
    both("CONFIG", "GET", "hll-sparse-max-bytes")
    both.config_set("hll-sparse-max-bytes", "1kb")
    both("CONFIG", "GET", "hll-sparse-max-bytes")
    for bad in ("-1", "x", "1.5"):
        both("CONFIG", "SET", "hll-sparse-max-bytes", bad)
    both("CONFIG", "GET", "hll*")


def test_pfmerge(s):
    rng = random.Random(3)
    s("PFADD", "a", *elements(rng, 30))
    s("PFADD", "b", *elements(rng, 30))
    s("PFADD", "big", *elements(rng, 3000))
    s("PFDEBUG", "ENCODING", "big")
    s("PFMERGE", "dst", "a", "b")
    same_value(s, "dst")
    s("PFCOUNT", "dst")
    s("PFMERGE", "dst2", "a", "big")
    same_value(s, "dst2")
    s("PFDEBUG", "ENCODING", "dst2")
    s("PFMERGE", "a", "b")
    same_value(s, "a")
    s("PFMERGE", "only")
    same_value(s, "only")
    s("PFMERGE", "m", "nokey", "nokey2")
    same_value(s, "m")
    s("PFMERGE", "b")
    same_value(s, "b")
    s("PFCOUNT", "a", "b", "big", "nokey")
    s("PFCOUNT", "a", "a")
    # A sparse destination that outgrows hll-sparse-max-bytes while merging.
    s.config_set("hll-sparse-max-bytes", 60)
    s("PFMERGE", "c", "a", "b")
    same_value(s, "c")
    s("PFDEBUG", "ENCODING", "c")


def test_multi_key_count_of_union(both):
    for x in range(1, 300):
        both("PFADD", "h1", f"foo-{x}")
        both("PFADD", "h2", f"bar-{x}")
        both("PFADD", "h3", f"zap-{x}")
        if x % 37 == 0:
            both("PFCOUNT", "h1", "h2", "h3")
    both("GET", "h1")


def test_pfdebug(s):
    s("PFADD", "h", "1", "2", "3")
    s("PFDEBUG", "DECODE", "h")
    s("PFDEBUG", "ENCODING", "h")
    s("PFDEBUG", "decode", "h")
    s("PFDEBUG", "GETREG", "h")
    same_value(s, "h")
    s("PFDEBUG", "ENCODING", "h")
    s("PFDEBUG", "DECODE", "h")
    s("PFDEBUG", "TODENSE", "h")
    s("PFADD", "h2", "x")
    s("PFDEBUG", "TODENSE", "h2")
    same_value(s, "h2")
    s("PFDEBUG", "TODENSE", "h2")
    s("PFDEBUG", "NOPE", "h")
    s("PFDEBUG", "NOPE", "nokey")
    s("PFDEBUG", "GETREG", "nokey")
    s("PFDEBUG", "GETREG")
    s("PFDEBUG", "GETREG", "h", "x")
    s("SET", "str", "hello")
    s("PFDEBUG", "ENCODING", "str")
    s("SET", "e", "embstr")
    s("PFADD", "emb", "a")
    s("SET", "emb2", s.redis.get("emb"))
    s("OBJECT", "ENCODING", "emb2")
    s("PFDEBUG", "ENCODING", "emb2")
    s("OBJECT", "ENCODING", "emb2")


def test_pfselftest(both):
    both("PFSELFTEST")
    both("PFSELFTEST", "x")


def test_type_errors(s):
    s("SET", "foo", "bar")
    s("PFADD", "foo", "1")
    s("PFCOUNT", "foo")
    s("PFCOUNT", "foo", "nokey")
    s("PFMERGE", "bar", "foo")
    s("PFMERGE", "foo", "bar")
    s("RPUSH", "list", "a")
    s("PFADD", "list", "1")
    s("PFCOUNT", "list")
    s("PFCOUNT", "nokey", "list")
    s("PFMERGE", "dst", "list")
    s("PFDEBUG", "GETREG", "list")
    s("SET", "int", "-9223372036854775808")
    s("PFADD", "int", "x")
    s("SET", "short", "HYLL")
    s("PFCOUNT", "short")
    s("PFADD")
    s("PFCOUNT")
    s("PFMERGE")
    s("EXISTS", "bar", "dst")


CORRUPT = {
    "tail": [("APPEND", "k", "hello")],
    "magic": [("SETRANGE", "k", 0, "0123")],
    "encoding": [("SETRANGE", "k", 4, "x")],
    "dense-length": [("SETRANGE", "k", 4, "\x00")],
    "short-body": [("SETRANGE", "k", 16, "\x00\x00")],
    "truncated-xzero": [("SET", "k", b"HYLL\x01" + b"\x00" * 11 + b"\x7f")],
    "zero-body": [("SET", "k", b"HYLL\x01" + b"\x00" * 11)],
    "xzero-over": [("SET", "k", b"HYLL\x01" + b"\x00" * 11 + b"\x7f\xff\x80")],
    "val-over": [("SET", "k", b"HYLL\x01" + b"\x00" * 11 + b"\x7f\xfe\x83")],
    "dense-high-registers": [("SET", "k", b"HYLL\x00" + b"\x00" * 11 + b"\xff" * 12288)],
}
"""Corrupt HLLs: SETRANGE / APPEND / SET steps applied to a copy of a small sparse HLL."""


@pytest.mark.parametrize("name", sorted(CORRUPT))
def test_corrupt_hll(both72, name):
    both = both72
    both("PFADD", "sparse", "a", "b", "c")
    both("COPY", "sparse", "k")
    for step in CORRUPT[name]:
        both(*step)
    for cmd in (("PFCOUNT", "k"), ("PFCOUNT", "k", "sparse"), ("PFCOUNT", "sparse", "k"),
                ("PFMERGE", "dst", "k"), ("PFADD", "k", "x", "y"), ("PFCOUNT", "k"),
                ("PFDEBUG", "DECODE", "k"), ("PFDEBUG", "ENCODING", "k"),
                ("PFDEBUG", "GETREG", "k"), ("PFDEBUG", "TODENSE", "k"), ("PFADD", "k", "z")):
        both(*cmd)
        both("GET", "k")
    both("EXISTS", "dst")


def test_corrupt_fuzz(both72):
    """Redis's fuzz: random bytes over an HLL; every command answers as Redis does."""
    both = both72
    rng = random.Random(11)
    for round_ in range(150):
        both("DEL", "h")
        both("PFADD", "h", *elements(rng, rng.randrange(1, 1500)))
        length = both.redis.strlen("h")
        for _ in range(5):
            pos = rng.randrange(length)
            both("SETRANGE", "h", pos, bytes([rng.randrange(256)]))
            if rng.random() < 0.5:
                break
        cmd = rng.choice([("PFCOUNT", "h"), ("PFADD", "h", "x", "y", "z"), ("PFMERGE", "d", "h"),
                          ("PFCOUNT", "h", "nokey"), ("PFDEBUG", "GETREG", "h"),
                          ("PFDEBUG", "DECODE", "h")])
        both(*cmd)
        both("GET", "h")


def test_hll_moves_between_servers_by_get_set(both):
    rng = random.Random(5)
    for n in (0, 3, 100, 2000):
        both("DEL", "h")
        both.redis.execute_command("PFADD", "h", *elements(rng, n))
        value = both.redis.get("h")
        both.goblin.set("h", value)
        both("PFCOUNT", "h")
        more = elements(rng, 50)
        both("PFADD", "h", *more)
        both("GET", "h")
        both("PFCOUNT", "h")
        # And back: Goblin's bytes set into Redis.
        both.redis.set("h", both.goblin.get("h"))
        both("PFADD", "h", "z")
        both("GET", "h")


@pytest.mark.parametrize("n", [0, 5, 3000])
def test_dump_restore_both_ways(both, n):
    rng = random.Random(n)
    both("PFADD", "h", *elements(rng, n))
    r = both.redis.execute_command("DUMP", "h")
    both.goblin.execute_command("RESTORE", "from-redis", 0, r)
    both.redis.execute_command("RESTORE", "from-redis", 0, r)
    both("PFCOUNT", "from-redis")
    both("GET", "from-redis")
    g = both.goblin.execute_command("DUMP", "h")
    assert body(g) == body(r)
    # Redis 7.0 takes the payload with its own RDB version (Goblin writes 7.2's).
    both.redis.execute_command("RESTORE", "from-goblin", 0, footer(body(g), 10))
    both.goblin.execute_command("RESTORE", "from-goblin", 0, g)
    both("PFCOUNT", "from-goblin")
    both("GET", "from-goblin")


def test_notifications(raw, both):
    cmds = [
        ("PFADD", "h", "a"),
        ("PFADD", "h", "a"),
        ("PFADD", "new"),
        ("PFCOUNT", "h"),
        ("PFCOUNT", "h", "new", "nokey"),
        ("PFMERGE", "m", "h", "new"),
        ("PFMERGE", "m2"),
        ("PFDEBUG", "TODENSE", "h"),
        ("PFDEBUG", "GETREG", "m"),
        ("SET", "s", "x"),
        ("PFADD", "s", "a"),
    ]
    stream(raw, both, cmds)
    stream(raw, both, cmds, flags="Km$n")


def test_changes_counted_as_redis(both):
    def changes(c):
        return int(c.execute_command("INFO", "persistence")
                   .decode().split("rdb_changes_since_last_save:")[1].split("\r\n")[0])

    both("SAVE")
    for cmd in [("PFADD", "h", "a", "b", "c"), ("PFADD", "h", "a"), ("PFADD", "h2"),
                ("PFCOUNT", "h"), ("PFCOUNT", "h"), ("PFMERGE", "m", "h"),
                ("PFDEBUG", "GETREG", "h"), ("PFDEBUG", "GETREG", "h"),
                ("PFDEBUG", "TODENSE", "m"), ("PFDEBUG", "TODENSE", "m")]:
        both(*cmd)
        r, g = (changes(c) for c in both.clients())
        assert r == g, (cmd, r, g)


def test_propagation_to_the_aof(procs, tmp_path):
    """What PFADD, PFCOUNT (caching), PFMERGE and PFDEBUG write to the AOF is what Redis
    writes."""
    cmds = [
        ("PFADD", "h", "a", "b"),
        ("PFADD", "h", "a"),
        ("PFCOUNT", "h"),
        ("PFCOUNT", "h"),
        ("PFCOUNT", "h", "nokey"),
        ("PFMERGE", "m", "h"),
        ("PFDEBUG", "ENCODING", "m"),
        ("PFDEBUG", "TODENSE", "m"),
        ("PFDEBUG", "TODENSE", "m"),
        ("PFDEBUG", "GETREG", "h"),
        ("MULTI",),
        ("PFADD", "t", "x"),
        ("PFCOUNT", "t"),
        ("EXEC",),
    ]
    streams = {}
    for kind in ("redis", "goblin"):
        w = tmp_path / kind
        p = start(procs, kind, w, "--appendfsync", "always", "--enable-debug-command", "yes")
        c = p.client()
        for cmd in cmds:
            c.execute_command(*cmd)
        streams[kind] = incr_stream(w)
    assert streams["goblin"] == streams["redis"]


def test_command_metadata(both3):
    for name in ("pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest"):
        both3("COMMAND", "INFO", name)
    both3("COMMAND", "GETKEYS", "PFCOUNT", "a", "b", "c")
    both3("COMMAND", "GETKEYS", "PFMERGE", "d", "a", "b")
    both3("COMMAND", "GETKEYS", "PFDEBUG", "GETREG", "k")
    both3("COMMAND", "GETKEYSANDFLAGS", "PFADD", "k", "e")
    # In the order of Redis's command dict: compared as sets.
    r, g = both3.run("COMMAND", "LIST", "FILTERBY", "ACLCAT", "hyperloglog")
    assert sorted(r) == sorted(g) == [b"pfadd", b"pfcount", b"pfdebug", b"pfmerge", b"pfselftest"]


def test_acl_category(both):
    both("ACL", "SETUSER", "pf", "on", "nopass", "+@hyperloglog", "~*")
    r, g = both.run("ACL", "CAT", "hyperloglog")
    assert sorted(r) == sorted(g)
    for c in both.clients():
        c.execute_command("AUTH", "pf", "x")
    both("PFADD", "h", "a")
    both("PFCOUNT", "h")
    both("PFMERGE", "m", "h")
    # Outside the category (7.0 and 7.2 word the refusal differently).
    for c in both.clients():
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command("GET", "h")
        c.execute_command("AUTH", "default", "")
    both("ACL", "DELUSER", "pf")


def test_tracking_invalidation(both3):
    both3("CLIENT", "TRACKING", "on")
    both3("PFADD", "h", "a")
    both3("PFCOUNT", "h")
    both3("PFADD", "h", "b")
    both3("PING")
    both3("PFCOUNT", "h")
    both3("PING")
    both3("CLIENT", "TRACKING", "off")


def test_script_and_multi(both):
    both("EVAL", "redis.call('PFADD', KEYS[1], 'a', 'b'); return redis.call('PFCOUNT', KEYS[1])",
         1, "h")
    both("MULTI")
    both("PFADD", "h", "c")
    both("PFCOUNT", "h")
    both("PFMERGE", "m", "h")
    both("EXEC")
    both("GET", "m")


def test_expired_key_counts_as_missing(both):
    both("PFADD", "h", "a")
    both("PEXPIRE", "h", 1)
    time.sleep(0.01)
    both("PFCOUNT", "h")
    both("PFADD", "h", "b")
    both("GET", "h")
    both("TTL", "h")


def test_pfadd_keeps_ttl(both):
    both("PFADD", "h", "a")
    both("EXPIRE", "h", 100)
    both("PFADD", "h", "b")
    both("PFCOUNT", "h")
    both("TTL", "h")


def test_goblin_handles_a_redis_hll_over_many_adds(both):
    rng = random.Random(9)
    both("PFADD", "h")
    for _ in range(40):
        both("PFADD", "h", *elements(rng, rng.randrange(1, 60)))
        if rng.random() < 0.3:
            both("PFCOUNT", "h")
        both("GET", "h")
