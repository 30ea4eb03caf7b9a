"""Lists: every command with its options and errors, against Redis, over RESP2 and RESP3,
with small lists and with two-element nodes; WRONGTYPE both ways; the generic commands on
lists (TYPE, COPY, RENAME, MOVE, SCAN TYPE, RANDOMKEY, OBJECT, expiry, MULTI)."""

import pytest

from list_helpers import L, lenc, lst  # noqa: F401  (fixtures)

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def test_push_len_range(lenc):
    l = lenc
    l("LPUSH", "k", "a", "b", "c")
    l("RPUSH", "k", "1", "-2", "", "x" * 300, "9223372036854775807", "01", "1.5")
    l("LPUSHX", "k", "front")
    l("RPUSHX", "k", "back", "back2")
    l("LPUSHX", "nokey", "a")
    l("RPUSHX", "nokey", "a", "b")
    l.gone("nokey")
    l("LLEN", "k")
    l("LLEN", "nokey")
    for start, stop in [(0, -1), (0, 0), (-3, -1), (2, 5), (-100, 100), (5, 2), (100, 200),
                        (-1, -2), (0, -100), (3, 3), (-5, 4)]:
        l("LRANGE", "k", start, stop)
    l("LRANGE", "nokey", 0, -1)


def test_lindex_lset(lenc):
    l = lenc
    l("RPUSH", "k", "a", "b", "c", "4", "5")
    for i in (0, 1, 4, 5, -1, -5, -6, 100, -100):
        l("LINDEX", "k", i)
    l("LINDEX", "nokey", 0)
    l("LSET", "k", 0, "A")
    l("LSET", "k", -1, "E" * 100)
    l("LSET", "k", 2, "33")
    l("LRANGE", "k", 0, -1)
    l.errs([
        ("LSET", "k", 5, "x"),
        ("LSET", "k", -6, "x"),
        ("LSET", "nokey", 0, "x"),
        ("LSET", "k", "x", "x"),
        ("LSET", "nokey", "x", "x"),
        ("LINDEX", "k", "x"),
        ("LINDEX", "k", "1.0"),
        ("LRANGE", "k", "a", 1),
        ("LRANGE", "k", 0, "b"),
        ("LRANGE", "nokey", "a", 1),
    ])


def test_pop_shapes(lenc):
    l = lenc
    l("RPUSH", "k", "a", "b", "c", "d", "e", "f")
    l("LPOP", "k")
    l("RPOP", "k")
    l("LPOP", "k", 2)
    l("RPOP", "k", 1)
    l("LPOP", "k", 0)
    l("RPOP", "k", 0)
    l("RPOP", "k", 10)
    l.gone("k")
    l("LPOP", "nokey")
    l("RPOP", "nokey")
    l("LPOP", "nokey", 2)
    l("RPOP", "nokey", 0)
    l("RPUSH", "k", "a")
    l.errs([
        ("LPOP", "k", -1),
        ("RPOP", "k", "x"),
        ("LPOP", "k", 1, 2),
        ("RPOP", "nokey", -1),
        ("LPOP",),
    ])


def test_ltrim(lenc):
    l = lenc
    for start, stop in [(0, -1), (1, -2), (-3, -1), (2, 1), (0, 0), (-100, 100), (100, 200)]:
        l("DEL", "k")
        l("RPUSH", "k", *[f"e{i}" for i in range(9)])
        l("LTRIM", "k", start, stop)
        l.state("k")
    l("LTRIM", "nokey", 0, 1)
    l.errs([("LTRIM", "k", "a", 1), ("LTRIM", "k", 0, "1.5")])


def test_lrem(lenc):
    l = lenc
    l("RPUSH", "k", "a", "b", "a", "1", "a", "c", "1", "a")
    l("LREM", "k", 2, "a")
    l("LRANGE", "k", 0, -1)
    l("LREM", "k", -1, "a")
    l("LRANGE", "k", 0, -1)
    l("LREM", "k", 0, "1")
    l("LREM", "k", 0, "01")
    l("LREM", "k", 1, "zz")
    l("LREM", "nokey", 0, "a")
    l("LRANGE", "k", 0, -1)
    l("LREM", "k", 0, "a")
    l("LREM", "k", -5, "b")
    l("LREM", "k", 5, "c")
    l.gone("k")
    l.err("LREM", "k", "x", "a")


def test_linsert(lenc):
    l = lenc
    l("RPUSH", "k", "a", "b", "c", "b")
    l("LINSERT", "k", "BEFORE", "b", "x")
    l("LINSERT", "k", "after", "b", "y")
    l("LINSERT", "k", "AFTER", "c", "z" * 200)
    l("LINSERT", "k", "before", "a", "0")
    l("LINSERT", "k", "BEFORE", "nope", "q")
    l("LINSERT", "nokey", "BEFORE", "a", "q")
    l("LRANGE", "k", 0, -1)
    l.errs([
        ("LINSERT", "k", "MIDDLE", "a", "q"),
        ("LINSERT", "nokey", "MIDDLE", "a", "q"),
        ("LINSERT", "k", "BEFORE", "a"),
    ])


def test_lpos(lenc):
    l = lenc
    l("RPUSH", "k", "a", "b", "c", "1", "2", "3", "c", "c", "a")
    for opts in [(), ("RANK", 1), ("RANK", 2), ("RANK", -1), ("RANK", -3), ("RANK", 5),
                 ("COUNT", 0), ("COUNT", 2), ("COUNT", 10), ("RANK", 2, "COUNT", 0),
                 ("RANK", -1, "COUNT", 2), ("MAXLEN", 3), ("MAXLEN", 7, "COUNT", 0),
                 ("RANK", -2, "MAXLEN", 2, "COUNT", 0), ("MAXLEN", 0), ("count", 1, "rank", 1),
                 ("RANK", 1, "RANK", 2)]:
        for elem in ("c", "a", "1", "zz"):
            l("LPOS", "k", elem, *opts)
    l("LPOS", "nokey", "a")
    l("LPOS", "nokey", "a", "COUNT", 1)
    l.errs([
        ("LPOS", "k", "a", "RANK", 0),
        ("LPOS", "k", "a", "RANK", "x"),
        ("LPOS", "k", "a", "COUNT", -1),
        ("LPOS", "k", "a", "COUNT", "x"),
        ("LPOS", "k", "a", "MAXLEN", -1),
        ("LPOS", "k", "a", "MAXLEN", "1.5"),
        ("LPOS", "k", "a", "RANK"),
        ("LPOS", "k", "a", "BOGUS", 1),
        ("LPOS", "nokey", "a", "RANK", 0),
    ])
    # Redis 7.2 bounds RANK to +-LONG_MAX (7.0 took LONG_MIN and overflowed): Goblin alone.
    got = l.goblin_only("LPOS", "k", "a", "RANK", -9223372036854775808)
    assert str(got) == ("value is out of range, value must between -9223372036854775807 and "
                        "9223372036854775807"), got


def test_lmove_rpoplpush(lenc):
    l = lenc
    l("RPUSH", "src", "a", "b", "c", "d")
    l("LMOVE", "src", "dst", "LEFT", "RIGHT")
    l("LMOVE", "src", "dst", "right", "left")
    l("RPOPLPUSH", "src", "dst")
    l("LMOVE", "src", "src", "LEFT", "RIGHT")  # one element rotated onto itself
    l("RPUSH", "src", "e", "f")
    l("LMOVE", "src", "src", "LEFT", "RIGHT")
    l("RPOPLPUSH", "src", "src")
    l.state("src", "dst")
    l("LMOVE", "nokey", "dst", "LEFT", "LEFT")
    l("RPOPLPUSH", "nokey", "dst")
    l("LMOVE", "src", "dst", "LEFT", "LEFT")
    l("LMOVE", "src", "dst", "LEFT", "LEFT")
    l("LMOVE", "src", "dst", "LEFT", "LEFT")
    l.gone("src")
    l.state("dst")
    l.errs([
        ("LMOVE", "dst", "x", "UP", "LEFT"),
        ("LMOVE", "dst", "x", "LEFT", "DOWN"),
        ("LMOVE", "nokey", "x", "UP", "LEFT"),
    ])


def test_lmpop(lenc):
    l = lenc
    l("RPUSH", "a", "a1", "a2", "a3")
    l("RPUSH", "b", "b1", "b2")
    l("LMPOP", 1, "a", "LEFT")
    l("LMPOP", 2, "nokey", "b", "RIGHT")
    l("LMPOP", 3, "nokey", "a", "b", "left", "COUNT", 10)
    l.gone("a")
    l("LMPOP", 2, "a", "b", "RIGHT", "count", 1)
    l.gone("b")
    l("LMPOP", 2, "a", "b", "LEFT")
    l("RPUSH", "a", "x")
    l.errs([
        (("LMPOP", 0, "a", "LEFT"), "numkeys"),
        ("LMPOP", -1, "a", "LEFT"),
        ("LMPOP", 2, "a", "LEFT"),
        ("LMPOP", 1, "a", "MIDDLE"),
        ("LMPOP", 1, "a"),
        ("LMPOP", 1, "a", "LEFT", "COUNT"),
        (("LMPOP", 1, "a", "LEFT", "COUNT", 0), "count"),
        ("LMPOP", 1, "a", "LEFT", "COUNT", -5),
        ("LMPOP", 1, "a", "LEFT", "COUNT", 1, "COUNT", 2),
        ("LMPOP", 1, "a", "LEFT", "BOGUS"),
    ])


def test_arity_and_wrongtype(lst):
    l = lst
    l.errs([(c,) if isinstance(c, str) else c for c in [
        ("LPUSH", "k"), ("RPUSH", "k"), ("LPUSHX", "k"), ("RPUSHX", "k"), ("LLEN",),
        ("LINDEX", "k"), ("LSET", "k", 0), ("LRANGE", "k", 0), ("LTRIM", "k", 0),
        ("LREM", "k", 0), ("LINSERT", "k", "BEFORE", "a"), ("LPOS", "k"), ("LMOVE", "a", "b", "LEFT"),
        ("RPOPLPUSH", "a"), ("LMPOP", 1), ("BLPOP", "k"), ("BRPOP", "k"), ("BLMOVE", "a", "b", "LEFT", "LEFT"),
        ("BRPOPLPUSH", "a", "b"), ("BLMPOP", 0, 1), ("RPOP",),
    ]])
    l("SET", "str", "v")
    l("RPUSH", "list", "a")
    cases = [("LPUSH", "str", "a"), ("RPUSH", "str", "a"), ("LPUSHX", "str", "a"),
             ("RPUSHX", "str", "a"), ("LLEN", "str"), ("LINDEX", "str", 0), ("LSET", "str", 0, "a"),
             ("LRANGE", "str", 0, -1), ("LTRIM", "str", 0, 1), ("LREM", "str", 0, "a"),
             ("LINSERT", "str", "BEFORE", "a", "b"), ("LPOS", "str", "a"), ("LPOP", "str"),
             ("RPOP", "str", 2), ("LMOVE", "str", "list", "LEFT", "LEFT"),
             ("LMOVE", "list", "str", "LEFT", "LEFT"), ("RPOPLPUSH", "list", "str"),
             ("LMPOP", 2, "nokey", "str", "LEFT"), ("BLPOP", "nokey", "str", 0),
             ("BRPOP", "str", 0), ("BLMOVE", "str", "list", "LEFT", "LEFT", 0),
             ("BLMOVE", "list", "str", "LEFT", "LEFT", 0), ("BRPOPLPUSH", "str", "x", 0),
             ("BLMPOP", 0, 1, "str", "LEFT"),
             ("GET", "list"), ("SADD", "list", "a"), ("ZADD", "list", 1, "a"), ("INCR", "list")]
    l.errs([(c, WRONGTYPE) for c in cases])
    l.state("list")
    l("GET", "str")


def test_generic_commands_on_lists(lst):
    l = lst
    l("RPUSH", "k", "a", "b", "1")
    l("TYPE", "k")
    l("COPY", "k", "copy")
    l("RPUSH", "copy", "more")
    l.state("k", "copy")
    l("RENAME", "copy", "renamed")
    l("MOVE", "renamed", 1)
    l("SELECT", 1)
    l.state("renamed")
    l("SELECT", 0)
    l("SCAN", 0, "TYPE", "list")
    l("RANDOMKEY")
    l("OBJECT", "REFCOUNT", "k")
    l("EXPIRE", "k", 100)
    l("TTL", "k")
    l("RPUSH", "k", "c")
    l("TTL", "k")
    l("PEXPIRE", "k", 1)
    import time
    time.sleep(0.05)
    l.gone("k")
    l("LRANGE", "k", 0, -1)
    assert l.goblin.execute_command("MEMORY", "USAGE", "renamed") is None  # moved to db 1
    l("RPUSH", "m", *[f"element:{i}" for i in range(1000)])
    assert l.goblin.execute_command("MEMORY", "USAGE", "m") > 10000


def test_multi_and_watch(lst):
    l = lst
    l("RPUSH", "k", "a")
    l("MULTI")
    l("RPUSH", "k", "b")
    l("LPOP", "k")
    l("LRANGE", "k", 0, -1)
    l("EXEC")
    l("WATCH", "k")
    l.goblin.execute_command("RPUSH", "k", "x")  # a write by the same client: still dirty
    l.redis.execute_command("RPUSH", "k", "x")
    l("MULTI")
    l("LLEN", "k")
    l("EXEC")


@pytest.mark.parametrize("n", [1, 50, 2000])
def test_long_lists_match(lst, n):
    l = lst
    elems = [f"v{i}" if i % 3 else str(i * 7) for i in range(n)]
    for i in range(0, n, 500):
        l("RPUSH", "k", *elems[i:i + 500])
    l("LPUSH", "k", *elems[: min(n, 300)])
    for idx in (0, n // 2, n - 1, -1, -n):
        l("LINDEX", "k", idx)
    l("LRANGE", "k", n // 3, n // 3 + 100)
    l("LSET", "k", n // 2, "mid")
    l("LINSERT", "k", "AFTER", "mid", "after-mid")
    l("LREM", "k", -2, "v1")
    l("LTRIM", "k", 3, -4)
    l("LPOS", "k", "mid")
    l.state("k")
