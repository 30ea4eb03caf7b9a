"""Strings: SET (NX XX GET EX PX EXAT PXAT KEEPTTL), SETNX, SETEX, PSETEX, GETSET, MSET, MSETNX,
GET, GETDEL, GETEX (EX PX EXAT PXAT PERSIST), MGET, APPEND, SETRANGE, GETRANGE, SUBSTR, STRLEN,
INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT; their errors; OBJECT ENCODING int / embstr / raw and
the moments a string changes encoding; WRONGTYPE between strings and sorted sets both ways;
expiry options; WATCH and MULTI; RDB round trips with real Redis.

Every case of the `s` fixture runs over RESP2 and RESP3.
"""

import random
import time

import pytest

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture(params=[2, 3])
def s(request):
    return request.getfixturevalue("both" if request.param == 2 else "both3")


def enc(s, key):
    """OBJECT ENCODING on both, which must agree; returns it."""
    return s("OBJECT", "ENCODING", key)


def test_set_get_basics(s):
    s("SET", "k", "v")
    s("GET", "k")
    s("GET", "nokey")
    s("SET", "k", "")
    s("GET", "k")
    s("STRLEN", "k")
    s("SET", "bin", b"\x00\xff\r\n")
    s("GET", "bin")
    s("SET", "big", "x" * 100000)
    s("STRLEN", "big")
    s("GET", "big")
    s("TYPE", "k")
    s("EXISTS", "k", "bin", "nokey")
    s("SET", "k")
    s("SET", "k", "v", "BOGUS")
    s("GET")


def test_set_options_and_conflicts(s):
    s("SET", "k", "v", "NX")
    s("SET", "k", "w", "NX")
    s("SET", "k", "w", "XX")
    s("SET", "nokey", "w", "XX")
    s("GET", "k")
    s("SET", "k", "a", "GET")
    s("SET", "nokey2", "a", "GET")
    s("SET", "k", "b", "NX", "GET")
    s("SET", "k2", "b", "XX", "GET")
    s("EXISTS", "k2")
    s("SET", "k", "c", "nx", "Nx")
    s("SET", "k", "c", "XX", "xx")
    for bad in (
        ["NX", "XX"],
        ["XX", "NX"],
        ["EX", "10", "PX", "100"],
        ["EX", "10", "KEEPTTL"],
        ["KEEPTTL", "PX", "5"],
        ["PXAT", "1", "EXAT", "1"],
        ["EX"],
        ["PERSIST"],
        ["EX", "10", "EX"],
    ):
        s("SET", "k", "v", *bad)
    s("SET", "k", "v", "EX", "10", "EX", "20")
    s("TTL", "k")


def test_set_expiry_options(s):
    now = int(time.time())
    s("SET", "k", "v", "EX", 100)
    s("TTL", "k")
    s("SET", "k", "v", "PX", 100000)
    s("TTL", "k")
    s("SET", "k", "v", "EXAT", now + 100)
    s("TTL", "k")
    s("SET", "k", "v", "PXAT", (now + 100) * 1000)
    s("TTL", "k")
    s("SET", "k", "w", "KEEPTTL")
    s("TTL", "k")
    s("SET", "k", "w")
    s("TTL", "k")
    s("SET", "k", "v", "PXAT", 1)
    s("GET", "k")
    for cmd in ("EX", "PX", "EXAT", "PXAT"):
        for bad in (0, -1, "x", "1.5", 2**63):
            s("SET", "k", "v", cmd, bad)
    s("SET", "k", "v", "EX", 2**63 // 1000 + 1)
    s("SET", "k", "v", "PX", 2**63 - 1)
    s("SET", "k", "v", "EX", 2**63 // 1000)
    s("SETEX", "k", 100, "v")
    s("TTL", "k")
    s("PSETEX", "k", 100000, "v")
    s("TTL", "k")
    s("GET", "k")
    for bad in (0, -5, "x"):
        s("SETEX", "k", bad, "v")
        s("PSETEX", "k", bad, "v")


def test_setnx_getset_mset_msetnx(s):
    s("SETNX", "k", "1")
    s("SETNX", "k", "2")
    s("GET", "k")
    s("EXPIRE", "k", 100)
    s("GETSET", "k", "3")
    s("TTL", "k")
    s("GETSET", "nokey", "x")
    s("MSET", "a", "1", "b", "2", "c", "3")
    s("MGET", "a", "b", "c", "nokey")
    s("MSET", "a")
    s("MSET", "a", "1", "b")
    s("MSETNX", "a", "1", "d", "4")
    s("EXISTS", "d")
    s("MSETNX", "d", "4", "e", "5")
    s("MGET", "d", "e")
    s("MSETNX", "x", "1", "x", "2")
    s("GET", "x")
    s("MSETNX", "a")
    s("MSET", "dup", "1", "dup", "2")
    s("GET", "dup")


def test_getdel_getex(s):
    s("SET", "k", "v")
    s("GETDEL", "k")
    s("EXISTS", "k")
    s("GETDEL", "k")
    now = int(time.time())
    s("SET", "k", "v")
    s("GETEX", "k")
    s("GETEX", "k", "EX", 100)
    s("TTL", "k")
    s("GETEX", "k", "PX", 200000)
    s("TTL", "k")
    s("GETEX", "k", "EXAT", now + 300)
    s("TTL", "k")
    s("GETEX", "k", "PXAT", (now + 400) * 1000)
    s("TTL", "k")
    s("GETEX", "k", "PERSIST")
    s("TTL", "k")
    s("GETEX", "nokey", "EX", 100)
    s("GETEX", "nokey", "EX", "bad")
    for bad in (
        ["EX"],
        ["EX", "10", "PX", "10"],
        ["PERSIST", "EX", "10"],
        ["EX", "10", "PERSIST"],
        ["NX"],
        ["XX"],
        ["GET"],
        ["KEEPTTL"],
        ["BOGUS"],
    ):
        s("GETEX", "k", *bad)
    for bad in (0, -1, "x"):
        s("GETEX", "k", "EX", bad)
        s("GETEX", "k", "PXAT", bad)
    s("GETEX", "k", "PXAT", 1)
    s("EXISTS", "k")


def test_append_setrange_getrange_strlen(s):
    s("APPEND", "k", "hello")
    s("APPEND", "k", " world")
    s("GET", "k")
    s("STRLEN", "k")
    s("STRLEN", "nokey")
    for a, b in [(0, 4), (-5, -1), (0, -1), (5, 2), (-100, 100), (3, 3), (-1, -5), (100, 200),
                 (-3, 100), (0, 0), (-2**63, 2**63 - 1), (2**63 - 1, -2**63)]:
        s("GETRANGE", "k", a, b)
        s("SUBSTR", "k", a, b)
    s("GETRANGE", "nokey", 0, -1)
    s("GETRANGE", "k", "x", 1)
    s("GETRANGE", "k", 0, "1.5")
    s("SET", "n", 12345)
    s("GETRANGE", "n", 1, 3)
    s("SETRANGE", "k", 6, "WORLD")
    s("GET", "k")
    s("SETRANGE", "k", 20, "!")
    s("GET", "k")
    s("SETRANGE", "k", 0, "")
    s("SETRANGE", "new", 0, "")
    s("EXISTS", "new")
    s("SETRANGE", "new", 3, "abc")
    s("GET", "new")
    s("SETRANGE", "k", -1, "x")
    s("SETRANGE", "k", "x", "x")
    s("SETRANGE", "k", 536870911, "xx")
    s("SETRANGE", "nokey", 536870912, "x")
    s("SETRANGE", "nokey", 2**63 - 1, "x")
    s("SETRANGE", "n", 0, "9")
    s("GET", "n")


def test_counters(s):
    s("INCR", "c")
    s("INCR", "c")
    s("DECR", "c")
    s("INCRBY", "c", 100)
    s("DECRBY", "c", 1000)
    s("GET", "c")
    s("INCRBY", "c", "1.5")
    s("INCRBY", "c", "x")
    s("DECRBY", "c", -(2**63))
    s("SET", "c", 2**63 - 1)
    s("INCR", "c")
    s("SET", "c", -(2**63))
    s("DECR", "c")
    s("INCRBY", "c", -1)
    s("DECRBY", "c", 2**63 - 1)
    s("GET", "c")
    for bad in ("x", " 1", "1 ", "01", "+1", "-0", "1.0", "", "99999999999999999999"):
        s("SET", "bad", bad)
        s("INCR", "bad")
        s("GET", "bad")
    s("SET", "c", 10, "EX", 100)
    s("INCR", "c")
    s("TTL", "c")
    s("SET", "s", "abc")
    s("APPEND", "s", "1")
    s("INCR", "s")


INCRBYFLOAT_CASES = [
    ("10.5", "0.1"), ("0", "3.0e3"), ("5.0e3", "2.0e2"), ("0.1", "0.2"), ("1", "-1"), ("-0", "0"),
    ("0", "1e-20"), ("1", "1.5"), ("0", "1.23456789012345678"), ("1e20", "1"), ("3", "1e-17"),
    ("1e300", "1"), ("-1e300", "1e299"), ("123456789012345678", "0.5"), ("0", "0.0000001"),
    ("2.5", "-2.5"), ("17179869184", "0.1"), ("1e-5", "1e-5"), ("9.999999999999999999", "0"),
    ("0", ".5"), ("0", "5."), ("0", "+1"), ("0", "1E+2"), ("007", "1"), ("12345", "0.00001"),
]


def test_incrbyfloat_exact_text(both):
    """INCRBYFLOAT's text must be Redis's to the byte (the harness would compare by value)."""
    rng = random.Random(13)
    cases = list(INCRBYFLOAT_CASES)
    for _ in range(300):
        a = rng.choice(["%d", "%.3f", "%.17g", "%g", "%.1e"]) % rng.uniform(-1e6, 1e6)
        b = rng.choice(["%d", "%.3f", "%.17g", "%g", "%.5e"]) % rng.uniform(-1e3, 1e3)
        cases.append((a, b))
    for a, b in cases:
        both("SET", "f", a)
        r, g = both.run("INCRBYFLOAT", "f", b)
        assert r == g, (a, b, r, g)
        assert both.run("GET", "f")[0] == both.run("GET", "f")[1]
        assert both.run("OBJECT", "ENCODING", "f")[0] == both.run("OBJECT", "ENCODING", "f")[1]
    both("INCRBYFLOAT", "new", "1.5")
    both("SET", "f", "1e308")
    r, g = both.run("INCRBYFLOAT", "f", "1e308")
    assert r == g, (r, g)


def test_incrbyfloat_errors(s):
    s("SET", "f", "abc")
    s("INCRBYFLOAT", "f", 1)
    s("SET", "f", "1")
    for bad in ("x", " 1", "1 ", "nan", "", "1e", "1e5000"):
        s("INCRBYFLOAT", "f", bad)
    s("INCRBYFLOAT", "f", "inf")
    s("INCRBYFLOAT", "f", "-inf")
    s("SET", "f", "inf")
    s("INCRBYFLOAT", "f", 1)
    s("SET", "f", "1", "EX", 100)
    s("INCRBYFLOAT", "f", "1")
    s("TTL", "f")
    # A missing key: a bad or infinite increment creates nothing; -0 makes "0".
    for bad in ("x", "inf"):
        s("INCRBYFLOAT", "missing", bad)
        s("EXISTS", "missing")
    s("INCRBYFLOAT", "zero", "-0")
    s("GET", "zero")
    # The key's type is told before the numbers, the value before the increment.
    s("RPUSH", "l", "a")
    for bad in ("x", "inf", "1"):
        s("INCRBYFLOAT", "l", bad)
    s("SET", "f", "abc")
    s("INCRBYFLOAT", "f", "inf")
    s("INCRBYFLOAT", "f", "x")


def test_encodings_and_conversions(s):
    s("SET", "i", 12345)
    assert enc(s, "i") == b"int"
    s("SET", "i", -(2**63))
    enc(s, "i")
    for v in ["007", "+1", "-0", " 1", str(2**63), "1.5", "a"]:
        s("SET", "e", v)
        assert enc(s, "e") == b"embstr", v
    s("SET", "e", "x" * 44)
    assert enc(s, "e") == b"embstr"
    s("SET", "r", "x" * 45)
    assert enc(s, "r") == b"raw"
    s("SET", "a", "abc")
    s("APPEND", "a", "")
    assert enc(s, "a") == b"raw"
    s("APPEND", "na", "123")
    assert enc(s, "na") == b"int"
    s("APPEND", "nb", "abc")
    assert enc(s, "nb") == b"embstr"
    s("SET", "sr", 5)
    s("SETRANGE", "sr", 0, "")
    assert enc(s, "sr") == b"int"
    s("SETRANGE", "sr", 0, "7")
    assert enc(s, "sr") == b"raw"
    s("SETRANGE", "srn", 1, "x")
    assert enc(s, "srn") == b"raw"
    s("SET", "c", "abc")
    s("SET", "c", "5")
    s("INCR", "c")
    assert enc(s, "c") == b"int"
    s("SET", "c", "x" * 30)
    s("SET", "c", 10)
    s("INCRBYFLOAT", "c", 1)
    assert enc(s, "c") == b"embstr"
    s("INCRBYFLOAT", "c", "1e30")
    enc(s, "c")
    s("MSET", "m1", 1, "m2", "x" * 50)
    enc(s, "m1")
    enc(s, "m2")
    s("GETSET", "m1", "abc")
    enc(s, "m1")
    s("COPY", "r", "rcopy")
    enc(s, "rcopy")
    s("COPY", "i", "icopy")
    enc(s, "icopy")
    s("RENAME", "a", "a2")
    enc(s, "a2")


def test_wrongtype_both_ways(s):
    s("SET", "str", "v")
    s("ZADD", "z", 1, "m")
    for cmd in (
        ["ZADD", "str", 1, "a"], ["ZSCORE", "str", "a"], ["ZCARD", "str"], ["ZRANGE", "str", 0, -1],
        ["ZINCRBY", "str", 1, "a"], ["ZREM", "str", "a"], ["ZPOPMIN", "str"], ["ZRANK", "str", "a"],
        ["ZCOUNT", "str", 0, 1], ["ZRANDMEMBER", "str"], ["ZSCAN", "str", 0],
        ["ZUNION", 2, "z", "str"], ["ZINTERSTORE", "d", 2, "z", "str"], ["ZMPOP", 2, "str", "z", "MIN"],
        ["ZRANGESTORE", "d", "str", 0, -1], ["ZMSCORE", "str", "a"], ["ZREMRANGEBYRANK", "str", 0, 1],
        ["GET", "z"], ["SET", "z", "v", "GET"], ["GETSET", "z", "v"], ["GETDEL", "z"], ["GETEX", "z"],
        ["APPEND", "z", "x"], ["SETRANGE", "z", 0, "x"], ["GETRANGE", "z", 0, 1], ["STRLEN", "z"],
        ["INCR", "z"], ["DECRBY", "z", 1], ["INCRBYFLOAT", "z", 1], ["SETRANGE", "z", 0, ""],
    ):
        s(*cmd)
    s("MGET", "z", "str")
    s("TYPE", "z")
    s("TYPE", "str")
    s("SET", "z", "now-a-string")
    s("TYPE", "z")
    s("SETNX", "str", "x")
    s("MSETNX", "z", "x")
    s("BZPOPMIN", "str", 0.01)


def test_expired_keys_and_generic_commands(s):
    s("SET", "k", "v", "PX", 1)
    time.sleep(0.01)
    s("GET", "k")
    s("SET", "k", "v", "PX", 1)
    time.sleep(0.01)
    s("APPEND", "k", "x")
    s("GET", "k")
    s("SET", "k", "v", "PX", 1)
    time.sleep(0.01)
    s("INCR", "k")
    s("SET", "a", "1")
    s("SET", "b", "x" * 100)
    s("RENAME", "a", "c")
    s("MGET", "a", "c")
    s("MOVE", "c", 1)
    s("EXISTS", "c")
    s("ZADD", "z", 1, "m")
    r, g = s.run("SCAN", 0, "TYPE", "string", "COUNT", 100)
    assert r[0] == g[0] == b"0" and sorted(r[1]) == sorted(g[1]) == [b"b", b"k"], (r, g)
    s("SCAN", 0, "TYPE", "zset")
    s("DEL", "k", "z")
    s("RANDOMKEY")
    s("DEL", "b")
    s("DBSIZE")


def test_watch_and_multi_with_strings(both):
    both("SET", "k", 1)
    both("WATCH", "k")
    both("INCR", "k")  # the watching client itself changes it
    both("MULTI")
    both("GET", "k")
    both("EXEC")
    both("WATCH", "k")
    both("MULTI")
    both("SET", "k", "v", "NX")
    both("APPEND", "k", "x")
    both("INCR", "k")
    both("GET", "k")
    both("EXEC")
    both("WATCH", "k")
    both("GET", "k")
    both("MULTI")
    both("GET", "k")
    both("EXEC")
    both("MULTI")
    both("SET", "k")
    both("EXEC")
