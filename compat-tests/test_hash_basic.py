"""Hashes: HSET, HMSET, HSETNX, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL, HEXISTS, HLEN,
HSTRLEN, HINCRBY, HINCRBYFLOAT with their errors, RESP2 and RESP3 reply shapes (HGETALL a
map), WRONGTYPE both ways, the generic commands on hashes (TYPE, EXISTS, DEL, COPY, RENAME,
MOVE, SCAN TYPE, RANDOMKEY, MEMORY USAGE, OBJECT), expiry, WATCH and MULTI."""

import time

import pytest
import redis

from hash_helpers import H

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture
def h(both):
    return H(both)


def test_hset_hget_hdel_in_listpack_order(h):
    assert h.exact("HSET", "k", "name", "Ada", "age", 36, "city", "London") == 3
    assert h.exact("HSET", "k", "age", 37, "email", "ada@example.com", "age", 38) == 1
    assert h.exact("HMSET", "k", "score", 100, "name", "Ada L.") == b"OK"
    h.exact("HGETALL", "k")
    h.exact("HKEYS", "k")
    h.exact("HVALS", "k")
    for f in ("name", "age", "nofield", "", "NAME"):
        h.exact("HGET", "k", f)
        h.exact("HEXISTS", "k", f)
        h.exact("HSTRLEN", "k", f)
    h.exact("HMGET", "k", "name", "nofield", "age", "name")
    h.exact("HLEN", "k")
    for cmd in (("HGET", "nokey", "f"), ("HMGET", "nokey", "a", "b"), ("HGETALL", "nokey"),
                ("HKEYS", "nokey"), ("HVALS", "nokey"), ("HLEN", "nokey"), ("HEXISTS", "nokey", "f"),
                ("HSTRLEN", "nokey", "f"), ("HDEL", "nokey", "f")):
        h.exact(*cmd)
    assert h.exact("HDEL", "k", "age", "nofield", "age") == 1
    h.exact("HGETALL", "k")
    assert h.exact("HDEL", "k", "name", "city", "email", "score", "zz") == 4
    assert h.exact("EXISTS", "k") == 0, "the last HDEL removes the key"


def test_hsetnx(h):
    assert h.exact("HSETNX", "k", "f", "v") == 1
    assert h.exact("HSETNX", "k", "f", "w") == 0
    assert h.exact("HGET", "k", "f") == b"v"
    assert h.exact("HSETNX", "k", "g", "x" * 100) == 1
    h.enc_both("k", "hashtable")
    h.getall("k")


def test_binary_empty_and_integer_like_values(h):
    h.exact("HSET", "b", "", "", "\x00\xff", "\r\n", "01", "1", "-0", "9223372036854775808",
            "i", 12345, "neg", -1, "big", 2 ** 63 - 1)
    h.exact("HGETALL", "b")
    for f in ("", "\x00\xff", "01", "-0", "i", "neg", "big"):
        h.exact("HSTRLEN", "b", f)


def test_hincrby(h):
    assert h.exact("HINCRBY", "c", "n", 5) == 5
    assert h.exact("HINCRBY", "c", "n", -12) == -7
    h.exact("HSET", "c", "s", "abc", "sp", " 1", "max", 2 ** 63 - 1, "min", -(2 ** 63), "f", "1.5")
    for args in (("s", 1), ("sp", 1), ("f", 1), ("max", 1), ("min", -1), ("n", "x"), ("n", "1.0"),
                 ("n", 2 ** 63), ("n", ""), ("max", 0), ("max", -1), ("min", 1), ("new", -3)):
        h.exact("HINCRBY", "c", *args)
    h.exact("HGETALL", "c")
    assert h.both.err("HINCRBY", "c", "s", 1) == "hash value is not an integer"
    assert h.both.err("HINCRBY", "c", "max", 10) == "increment or decrement would overflow"
    assert h.both.err("HINCRBY", "c", "n", "x") == "value is not an integer or out of range"


def test_hincrbyfloat(h):
    for args in (("f", "10.5"), ("f", "0.1"), ("f", "-5"), ("f", "1e3"), ("f", "3.0e-3"),
                 ("g", "1"), ("g", "-0"), ("i", 17), ("f", "abc"), ("f", ""), ("f", "inf"),
                 ("f", "-inf"), ("f", "nan"), ("f", "1e5000"), ("f", " 1"),
                 ("h", "1.7976931348623157e308"), ("h", "1.7976931348623157e308")):
        # (hexadecimal increments, which strtold takes, are refused: see long_double.rs)
        h.exact("HINCRBYFLOAT", "fl", *args)
    h.exact("HSET", "fl", "s", "abc", "inf", "inf", "big", "1e4000", "int", 41)
    for args in (("s", 1), ("inf", 1), ("big", "1"), ("int", "1.5"), ("int", "-41.5")):
        h.exact("HINCRBYFLOAT", "fl", *args)
    h.getall("fl")  # long values made it a hashtable
    assert h.both.err("HINCRBYFLOAT", "fl", "s", 1) == "hash value is not a float"
    assert h.both.err("HINCRBYFLOAT", "fl", "f", "inf") == "value is NaN or Infinity"
    assert h.both.err("HINCRBYFLOAT", "fl", "inf", 1) == "increment would produce NaN or Infinity"
    assert h.both.err("HINCRBYFLOAT", "fl", "f", "x") == "value is not a valid float"
    h.exact("HINCRBYFLOAT", "none", "f", "inf")
    assert h.exact("EXISTS", "none") == 0, "a refused increment creates no key"


def test_arity_and_wrongtype_errors(h):
    b = h.both
    for cmd in (("HSET", "k", "f"), ("HSET", "k", "f", "v", "g"), ("HMSET", "k", "f", "v", "g"),
                ("HMSET", "k"), ("HSETNX", "k", "f"), ("HGET", "k"), ("HMGET", "k"), ("HGETALL",),
                ("HDEL", "k"), ("HEXISTS", "k"), ("HLEN",), ("HSTRLEN", "k"), ("HKEYS",),
                ("HVALS",), ("HINCRBY", "k", "f"), ("HINCRBYFLOAT", "k", "f"), ("HRANDFIELD",),
                ("HSCAN", "k"), ("HGET", "k", "f", "g"), ("HLEN", "k", "x")):
        b.err(*cmd)
    b("ZADD", "z", 1, "a")
    b("SET", "str", "v")
    b("SADD", "set", "a")
    b("HSET", "hash", "f", "v")
    for key in ("z", "str", "set"):
        for cmd in (("HSET", key, "f", "v"), ("HMSET", key, "f", "v"), ("HSETNX", key, "f", "v"),
                    ("HGET", key, "f"), ("HMGET", key, "f"), ("HGETALL", key), ("HDEL", key, "f"),
                    ("HEXISTS", key, "f"), ("HLEN", key), ("HSTRLEN", key, "f"), ("HKEYS", key),
                    ("HVALS", key), ("HINCRBY", key, "f", 1), ("HINCRBYFLOAT", key, "f", 1),
                    ("HRANDFIELD", key), ("HRANDFIELD", key, 2), ("HRANDFIELD", key, -2, "WITHVALUES"),
                    ("HSCAN", key, 0)):
            assert b.err(*cmd) == WRONGTYPE, cmd
    for cmd in (("GET", "hash"), ("INCR", "hash"), ("APPEND", "hash", "x"), ("STRLEN", "hash"),
                ("SADD", "hash", "a"), ("SCARD", "hash"), ("SMEMBERS", "hash"), ("ZADD", "hash", 1, "a"),
                ("ZCARD", "hash"), ("ZRANGE", "hash", 0, -1), ("SINTER", "hash"), ("ZUNION", 1, "hash"),
                ("SETBIT", "hash", 1, 1), ("GETSET", "hash", "x")):
        assert b.err(*cmd) == WRONGTYPE, cmd
    # Errors in the arguments come before the type check where Redis checks them first.
    b("HINCRBY", "z", "f", "x")
    b("HINCRBYFLOAT", "z", "f", "x")
    b("HRANDFIELD", "z", "x")
    b("HSCAN", "z", "x")
    b("MGET", "hash", "str")
    b("SET", "hash", "now-a-string")
    b("TYPE", "hash")
    assert b("HSET", "str2", "f", "v") == 1
    b("TYPE", "str2")


def test_resp3_shapes(both3, raw):
    h = H(both3)
    h.exact("HSET", "k", "a", 1, "b", 2)
    for cmd in (("HGETALL", "k"), ("HGETALL", "nokey"), ("HKEYS", "k"), ("HVALS", "nokey"),
                ("HMGET", "k", "a", "zz"), ("HGET", "k", "zz"), ("HRANDFIELD", "nokey"),
                ("HRANDFIELD", "nokey", 3), ("HSCAN", "k", 0), ("HINCRBYFLOAT", "k", "a", "0.5")):
        h.exact(*cmd)
    raw.send(b"HELLO 3\r\n")
    raw.read(1)
    raw.send(b"HSET k a 1 b 2\r\n")
    raw.read(1)
    for cmd, head in ((b"HGETALL k", b"%2\r\n"), (b"HGETALL nokey", b"%0\r\n"), (b"HKEYS k", b"*2\r\n"),
                      (b"HVALS nokey", b"*0\r\n"), (b"HGET k zz", b"_\r\n"), (b"HMGET k zz", b"*1\r\n_\r\n"),
                      (b"HRANDFIELD nokey", b"_\r\n"), (b"HRANDFIELD k 2 WITHVALUES", b"*2\r\n*2\r\n"),
                      (b"HRANDFIELD k -3 WITHVALUES", b"*3\r\n*2\r\n"), (b"HRANDFIELD k 5", b"*2\r\n$1"),
                      (b"HSCAN k 0", b"*2\r\n$1\r\n0\r\n*4\r\n"), (b"HINCRBYFLOAT k a 1", b"$1\r\n2")):
        raw.send(cmd + b"\r\n")
        r, g = raw.read(1)
        assert r.startswith(head) and g.startswith(head), (cmd, r, g)
    raw.send(b"HELLO 2\r\n")
    raw.read(1)
    for cmd, head in ((b"HGETALL k", b"*4\r\n"), (b"HRANDFIELD k 2 WITHVALUES", b"*4\r\n$1"),
                      (b"HGETALL nokey", b"*0\r\n"), (b"HGET k zz", b"$-1\r\n")):
        raw.send(cmd + b"\r\n")
        r, g = raw.read(1)
        assert r.startswith(head) and g.startswith(head), (cmd, r, g)


def test_generic_commands(h):
    b = h.both
    b("HSET", "k", "a", 1, "b", 2)
    b("HSET", "big", *[x for i in range(600) for x in (f"f{i}", i)])
    assert b("TYPE", "k") == b"hash"
    b("EXISTS", "k", "big", "nokey")
    h.enc_both("k", "listpack")
    h.enc_both("big", "hashtable")
    b("OBJECT", "REFCOUNT", "k")
    assert b("COPY", "k", "k2") == 1
    h.exact("HGETALL", "k2")
    b("COPY", "big", "big2")
    h.enc_both("big2", "hashtable")
    b("HSET", "k2", "c", 3)
    assert b("HLEN", "k") == 2, "a copy is independent"
    b("COPY", "k", "big", "REPLACE")
    h.exact("HGETALL", "big")
    b("RENAME", "k2", "k3")
    h.exact("HGETALL", "k3")
    b("MOVE", "k3", 1)
    b("SELECT", 1)
    h.exact("HGETALL", "k3")
    b("SELECT", 0)
    b("ZADD", "z", 1, "a")
    assert sorted(h("SCAN", 0, "TYPE", "hash", "COUNT", 100)[1]) == [b"big", b"big2", b"k"]
    assert h("SCAN", 0, "TYPE", "zset", "COUNT", 100)[1] == [b"z"]
    b("DEL", "z", "k", "big")
    assert b("RANDOMKEY") == b"big2"
    usage = h.goblin("MEMORY", "USAGE", "big2")
    assert 600 * 8 < usage < 600 * 60, usage
    b("DBSIZE")
    b("UNLINK", "big2")
    b("EXISTS", "big2")


def test_expiry(h):
    b = h.both
    b("HSET", "k", "a", 1)
    b("PEXPIRE", "k", 50)
    time.sleep(0.1)
    assert b("HLEN", "k") == 0
    b("HGET", "k", "a")
    b("EXISTS", "k")
    b("HSET", "k", "a", 1)
    b("EXPIRE", "k", 100)
    b("HSET", "k", "b", 2)
    b("HINCRBY", "k", "a", 1)
    b("HDEL", "k", "b")
    assert b("TTL", "k") == 100, "writes keep the expiry"
    b("HDEL", "k", "a")
    b("TTL", "k")


def test_watch_multi(both):
    b = both
    other = both.new()
    b("HSET", "k", "a", 1)
    b("WATCH", "k")
    other("HSETNX", "k", "a", 2)  # no change: the transaction still runs
    other("HDEL", "k", "zz")
    b("MULTI")
    b("HSET", "k", "b", 2)
    b("HGETALL", "k")
    assert b("EXEC") is not None
    for change in (("HSET", "k", "a", 1), ("HINCRBY", "k", "a", 1), ("HINCRBYFLOAT", "k", "a", 1),
                   ("HDEL", "k", "a"), ("HMSET", "k", "a", 1), ("HSETNX", "k", "new", 1)):
        b("WATCH", "k")
        other(*change)
        b("MULTI")
        b("HLEN", "k")
        assert b("EXEC") is None, change
    b("WATCH", "fresh")
    other("HSET", "fresh", "a", 1)
    b("MULTI")
    b("HLEN", "fresh")
    assert b("EXEC") is None, "creating the key"
    b("MULTI")
    b("HSET", "m", "f")
    assert isinstance(b("EXEC"), redis.ResponseError), "EXECABORT after an arity error"
    other.close()
