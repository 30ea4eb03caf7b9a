"""The keyspace: DEL, UNLINK, EXISTS, TOUCH, TYPE, RENAME, RENAMENX, COPY, MOVE, KEYS,
RANDOMKEY, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB. Keys are sorted sets made with ZADD."""

import pytest


def sorted_reply(reply):
    return sorted(reply) if isinstance(reply, list) else reply


def test_del_unlink(both, keys):
    keys("a", "b", "c")
    both("DEL", "a")
    both("DEL", "a")
    both("DEL", "b", "c", "nokey", "b")
    both("DBSIZE")
    keys("x", "y")
    both("UNLINK", "x", "y", "z")
    both("UNLINK", "x")
    both("DEL")
    both("UNLINK")


def test_exists_touch(both, keys):
    keys("a", "b")
    both("EXISTS", "a")
    both("EXISTS", "a", "a", "b", "nokey")
    both("EXISTS", "nokey")
    both("EXISTS")
    both("TOUCH", "a", "b", "nokey", "a")
    both("TOUCH", "nokey")
    both("TOUCH")


def test_type(both, keys):
    keys("z")
    both("TYPE", "z")
    both("TYPE", "nokey")
    both("TYPE")
    both("TYPE", "a", "b")


def test_rename(both, keys):
    keys("src", "other")
    both.ok("ZADD", "src", 2, "n")
    both("RENAME", "src", "dst")
    both("EXISTS", "src", "dst")
    both("ZRANGE", "dst", 0, -1, "WITHSCORES")
    both("RENAME", "nokey", "x")
    both("RENAME", "dst", "other")  # overwrites
    both("ZCARD", "other")
    both("RENAME", "other", "other")  # same name: OK
    both("EXISTS", "other")
    both("RENAME", "nokey", "nokey")
    both("RENAME", "a")
    both("RENAME", "a", "b", "c")


def test_rename_keeps_ttl(both, keys):
    keys("t")
    both("PEXPIRE", "t", 100000)
    both("RENAME", "t", "t2")
    r, g = both.run("PTTL", "t2")
    assert 90000 < r <= 100000 and 90000 < g <= 100000
    keys("t3")
    both("RENAME", "t3", "t2")  # the destination's TTL goes with the old value
    both("TTL", "t2")


def test_renamenx(both, keys):
    keys("a", "b")
    both("RENAMENX", "a", "b")
    both("RENAMENX", "a", "c")
    both("EXISTS", "a", "c")
    both("RENAMENX", "c", "c")
    both("RENAMENX", "nokey", "d")
    both("RENAMENX", "a")


def test_copy(both, keys):
    both.ok("ZADD", "src", 1, "a", 2, "b", 3, "c")
    both("COPY", "src", "dst")
    both("ZRANGE", "dst", 0, -1, "WITHSCORES")
    both("COPY", "src", "dst")  # exists: 0
    both.ok("ZADD", "src", 9, "z")
    both("COPY", "src", "dst", "REPLACE")
    both("ZRANGE", "dst", 0, -1, "WITHSCORES")
    # The copy is independent.
    both.ok("ZADD", "dst", 10, "only-in-dst")
    both("ZCARD", "src")
    both("COPY", "nokey", "dst2")
    both("COPY", "src", "src")
    both("COPY", "src", "src", "REPLACE")
    both("COPY", "src", "indb3", "DB", 3)
    both("COPY", "src", "indb3", "DB", 3)
    both("COPY", "src", "indb3", "DB", 3, "REPLACE")
    both("COPY", "src", "x", "DB", 16)
    both("COPY", "src", "x", "DB", -1)
    both("COPY", "src", "x", "DB", "abc")
    both("COPY", "src", "x", "DB")
    both("COPY", "src", "x", "FOO")
    both("COPY", "src", "x", "REPLACE", "REPLACE")
    both("COPY", "src")
    both("SELECT", 3)
    both("ZRANGE", "indb3", 0, -1, "WITHSCORES")
    both("COPY", "indb3", "indb3", "DB", 3)
    both("COPY", "indb3", "back", "DB", 0)


def test_copy_keeps_ttl(both):
    both.ok("ZADD", "src", 1, "a")
    both("PEXPIRE", "src", 50000)
    both("COPY", "src", "dst")
    r, g = both.run("PTTL", "dst")
    assert 40000 < r <= 50000 and 40000 < g <= 50000


def test_move(both, keys):
    keys("a", "b")
    both("MOVE", "a", 1)
    both("EXISTS", "a")
    both("MOVE", "a", 1)  # gone from db 0: 0
    both("MOVE", "b", 0)  # same db
    both("MOVE", "b", 16)
    both("MOVE", "b", -1)
    both("MOVE", "b", "x")
    both("MOVE", "b")
    both("SELECT", 1)
    both("EXISTS", "a")
    both.ok("ZADD", "b", 5, "x")
    both("SELECT", 0)
    both("MOVE", "b", 1)  # exists in the target: 0
    both("EXISTS", "b")


def test_move_keeps_ttl(both, keys):
    keys("t")
    both("EXPIRE", "t", 100)
    both("MOVE", "t", 2)
    both("SELECT", 2)
    both("TTL", "t")


def test_keys(both, keys):
    keys("one", "two", "three", "four", "fa", "f*", "f?x", "h[e]llo", "hello", "hallo", "hxllo")
    for pattern in ("*", "f*", "t??", "*o", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "f\\*", "f\\?x",
                    "nomatch", "", "?", "h*llo", "*[", "[", "\\", "h\\[e\\]llo"):
        r, g = both.run("KEYS", pattern)
        assert sorted_reply(r) == sorted_reply(g), pattern
    both("KEYS")
    both("KEYS", "a", "b")


def test_keys_skips_expired(both, keys):
    keys("live", "dying")
    both("PEXPIRE", "dying", 1)
    both("DEBUG", "SLEEP", "0.01")
    both("KEYS", "*")


def test_randomkey(both, keys):
    both("RANDOMKEY")
    keys("only")
    both("RANDOMKEY")
    keys("second")
    r, g = both.run("RANDOMKEY")
    assert r in (b"only", b"second") and g in (b"only", b"second")
    both("RANDOMKEY", "x")


def test_dbsize(both, keys):
    both("DBSIZE")
    keys(*[f"k{i}" for i in range(50)])
    both("DBSIZE")
    both("DBSIZE", "x")


def test_flushdb(both, keys):
    keys("a")
    both("SELECT", 1)
    keys("b")
    both("FLUSHDB")
    both("DBSIZE")
    both("SELECT", 0)
    both("DBSIZE")
    both("FLUSHDB", "ASYNC")
    both("DBSIZE")
    keys("c")
    both("FLUSHDB", "SYNC")
    both("DBSIZE")
    both("FLUSHDB", "LAZY")
    both("FLUSHDB", "ASYNC", "SYNC")


def test_flushall(both, keys):
    keys("a")
    both("SELECT", 7)
    keys("b")
    both("FLUSHALL")
    both("DBSIZE")
    both("SELECT", 0)
    both("DBSIZE")
    keys("c")
    both("FLUSHALL", "ASYNC")
    both("DBSIZE")
    keys("d")
    both("FLUSHALL", "sync")
    both("FLUSHALL", "NOW")
    both("FLUSHALL", "SYNC", "ASYNC")


def test_swapdb(both, keys):
    keys("in0")
    both("SELECT", 1)
    keys("in1a", "in1b")
    both("SWAPDB", 0, 1)
    both("DBSIZE")  # still db 1 selected, now holding what was db 0
    both("KEYS", "*")
    both("SELECT", 0)
    r, g = both.run("KEYS", "*")
    assert sorted(r) == sorted(g)
    both("SWAPDB", 0, 0)
    both("SWAPDB", 0, 16)
    both("SWAPDB", -1, 0)
    both("SWAPDB", "a", 0)
    both("SWAPDB", 0, "b")
    both("SWAPDB", 0)
    both("SWAPDB", 0, 1, 2)


def test_swapdb_carries_ttls(both, keys):
    keys("t")
    both("EXPIRE", "t", 500)
    both("SWAPDB", 0, 5)
    both("TTL", "t")
    both("SELECT", 5)
    both("TTL", "t")


@pytest.mark.parametrize("cmd", ["DEL", "EXISTS", "TYPE", "TOUCH", "UNLINK"])
def test_keys_are_binary_safe(both, cmd):
    key = b"bin\x00key\xff\r\n"
    both.ok("ZADD", key, 1, "m")
    both(cmd, key)


def test_many_keys(both):
    pipes = [c.pipeline(transaction=False) for c in both.clients()]
    for p in pipes:
        for i in range(3000):
            p.execute_command("ZADD", f"key:{i}", i, "m")
        p.execute()
    both("DBSIZE")
    r, g = both.run("KEYS", "key:1??")
    assert sorted(r) == sorted(g)
    both("DEL", *[f"key:{i}" for i in range(0, 3000, 2)])
    both("DBSIZE")
