"""Sets: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER, SMEMBERS, SMOVE with their errors, RESP2
and RESP3 reply shapes (sets as `~`), WRONGTYPE both ways between sets and sorted sets and
between sets and strings, the
generic commands on sets (TYPE, EXISTS, DEL, COPY, RENAME, MOVE, SCAN TYPE, RANDOMKEY,
MEMORY USAGE, OBJECT), expiry, WATCH and MULTI."""

import time

import pytest
import redis

from set_helpers import S

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture
def s(both):
    return S(both)


def test_sadd_srem_scard_sismember(s):
    assert s("SADD", "k", "a", "b", "a", "1") == 3
    assert s("SADD", "k", "b", "c") == 1
    assert s("SCARD", "k") == 4
    assert s("SCARD", "nokey") == 0
    for m in ("a", "b", "c", "1", "x", "01", ""):
        s("SISMEMBER", "k", m)
    s("SISMEMBER", "nokey", "a")
    s.exact("SMISMEMBER", "k", "a", "x", "1", "c", "zz")
    s.exact("SMISMEMBER", "nokey", "a", "b")
    assert s("SREM", "k", "a", "x", "a") == 1
    s("SREM", "nokey", "a")
    assert s("SREM", "k", "b", "c", "1", "zz") == 3
    assert s("EXISTS", "k") == 0, "the last SREM removes the key"
    s("SMEMBERS", "k")
    s("SMEMBERS", "nokey")


def test_integer_members_keep_their_text(s):
    s("SADD", "i", "1", "-1", "01", "+1", "1.0", " 1", "9223372036854775807",
      "9223372036854775808", "-9223372036854775808", "-0", "0")
    s.members("i")
    for m in ("1", "01", "+1", "-0", "0", "9223372036854775808"):
        s("SISMEMBER", "i", m)
    s("SADD", "ints", 3, 1, 2, -5, 70000, -2147483649)
    assert s.exact("SMEMBERS", "ints")  # an intset replies in ascending order on both
    s.enc72("ints", "intset")


def test_arity_and_wrongtype_errors(s):
    for cmd in (("SADD", "k"), ("SREM", "k"), ("SCARD",), ("SISMEMBER", "k"), ("SMISMEMBER", "k"),
                ("SMEMBERS",), ("SMOVE", "a", "b"), ("SPOP",), ("SRANDMEMBER",), ("SINTER",),
                ("SINTERSTORE", "d"), ("SUNION",), ("SDIFF",), ("SSCAN", "k"), ("SINTERCARD", 1)):
        s.both.err(*cmd)
    s.both("ZADD", "z", 1, "a")
    s.both("SADD", "set", "a")
    for cmd in (("SADD", "z", "a"), ("SREM", "z", "a"), ("SCARD", "z"), ("SISMEMBER", "z", "a"),
                ("SMISMEMBER", "z", "a"), ("SMEMBERS", "z"), ("SPOP", "z"), ("SPOP", "z", 2),
                ("SRANDMEMBER", "z"), ("SRANDMEMBER", "z", 2), ("SINTER", "set", "z"),
                ("SINTER", "nokey", "z"), ("SUNION", "set", "z"), ("SDIFF", "z"),
                ("SDIFF", "nokey", "z"), ("SINTERSTORE", "d", "z"), ("SUNIONSTORE", "d", "z"),
                ("SDIFFSTORE", "d", "set", "z"), ("SINTERCARD", 2, "set", "z"), ("SSCAN", "z", 0),
                ("SMOVE", "z", "set", "a"), ("SMOVE", "set", "z", "a")):
        assert s.both.err(*cmd) == WRONGTYPE, cmd
    for cmd in (("ZADD", "set", 1, "a"), ("ZCARD", "set"), ("ZSCORE", "set", "a"),
                ("ZRANGE", "set", 0, -1), ("ZRANK", "set", "a"), ("ZREM", "set", "a"),
                ("ZINCRBY", "set", 1, "a"), ("ZPOPMIN", "set"), ("ZMPOP", 1, "set", "MIN"),
                ("BZPOPMIN", "set", 0), ("ZRANDMEMBER", "set"), ("ZSCAN", "set", 0),
                ("ZRANGESTORE", "d", "set", 0, -1), ("ZREMRANGEBYRANK", "set", 0, 1),
                ("ZADD", "set", "XX", 1, "a"), ("ZMSCORE", "set", "a"), ("ZCOUNT", "set", 0, 1),
                ("ZLEXCOUNT", "set", "-", "+"), ("ZREVRANGE", "set", 0, 1)):
        assert s.both.err(*cmd) == WRONGTYPE, cmd
    s("SMOVE", "nokey", "z", "a")  # a missing source answers 0 before the type of the other
    assert s("SMEMBERS", "set") == [b"a"]



def test_wrongtype_between_strings_and_sets(s):
    s.both("SET", "str", "v")
    s.both("SET", "num", 12)
    s.both("SADD", "set", "a", "1")
    for cmd in (("SADD", "str", "a"), ("SREM", "str", "v"), ("SCARD", "str"),
                ("SISMEMBER", "num", "12"), ("SMISMEMBER", "str", "v"), ("SMEMBERS", "num"),
                ("SPOP", "str"), ("SRANDMEMBER", "str", 2), ("SSCAN", "str", 0),
                ("SINTER", "set", "str"), ("SUNIONSTORE", "d", "set", "num"),
                ("SDIFF", "str", "set"), ("SINTERCARD", 2, "set", "str"),
                ("SMOVE", "set", "str", "a"), ("SMOVE", "str", "set", "v"),
                ("GET", "set"), ("GETSET", "set", "v"), ("GETDEL", "set"), ("GETEX", "set"),
                ("APPEND", "set", "x"), ("STRLEN", "set"), ("INCR", "set"),
                ("INCRBYFLOAT", "set", 1), ("SETRANGE", "set", 0, "x"), ("GETRANGE", "set", 0, 1),
                ("SETBIT", "set", 1, 1), ("GETBIT", "set", 0), ("BITCOUNT", "set"),
                ("SET", "set", "v", "GET")):
        assert s.both.err(*cmd) == WRONGTYPE, cmd
    s("LCS", "set", "str")  # LCS has its own error for a key of another type
    s("MGET", "set", "str", "num")  # MGET answers nil for a key of another type
    s("TYPE", "set")
    s("SETNX", "set", "x")
    s("SET", "set", "now-a-string")  # SET replaces a value of any type
    s("TYPE", "set")
    s("GET", "set")
    s("SADD", "str", "x")
    s("SMEMBERS", "str")
    s("DEL", "str")
    assert s("SADD", "str", "x") == 1, "the string is gone: SADD makes a set"
    s("TYPE", "str")

def test_resp3_shapes(both3, raw):
    b = S(both3)
    b("SADD", "k", "a", "b", "c")
    b("SADD", "i", 3, 1, 2)
    for cmd in (("SMEMBERS", "k"), ("SMEMBERS", "i"), ("SMEMBERS", "nokey"), ("SINTER", "k", "nokey"),
                ("SUNION", "k", "i"), ("SDIFF", "k", "i"), ("SPOP", "nokey", 3), ("SPOP", "k", 0),
                ("SMISMEMBER", "k", "a", "z"), ("SRANDMEMBER", "nokey", 2), ("SRANDMEMBER", "i", 5),
                ("SSCAN", "k", 0, "MATCH", "nothing"), ("SINTERCARD", 1, "k"), ("SPOP", "i", 10)):
        b(*cmd)
    # The reply types, byte for byte: sets are RESP3 sets, SRANDMEMBER's an array.
    raw.send(b"HELLO 3\r\n")
    raw.read(1)
    raw.send(b"SADD k a b c\r\nSADD i 1 2\r\n")
    raw.read(2)
    for cmd, head in ((b"SMEMBERS k", b"~3\r\n"), (b"SUNION i", b"~2\r\n"), (b"SDIFF k", b"~3\r\n"),
                      (b"SINTER k nokey", b"~0\r\n"), (b"SPOP nokey 2", b"~0\r\n"),
                      (b"SPOP i 1", b"~1\r\n"), (b"SRANDMEMBER k 2", b"*2\r\n"),
                      (b"SRANDMEMBER nokey 2", b"*0\r\n"), (b"SPOP nokey", b"_\r\n"),
                      (b"SRANDMEMBER nokey", b"_\r\n"), (b"SMISMEMBER k a", b"*1\r\n:1\r\n")):
        raw.send(cmd + b"\r\n")
        r, g = raw.read(1)
        assert r.startswith(head) and g.startswith(head), (cmd, r, g)


def test_smove(s):
    s("SADD", "src", "a", "b", "1")
    s("SADD", "dst", "x")
    assert s("SMOVE", "src", "dst", "a") == 1
    assert s("SMOVE", "src", "dst", "a") == 0
    assert s("SMOVE", "src", "src", "b") == 1
    assert s("SMOVE", "src", "src", "zz") == 0
    assert s("SMOVE", "src", "new", "1") == 1
    s.enc72("new", "intset")
    assert s("SMOVE", "src", "new2", "b") == 1
    s.enc72("new2", "listpack")
    assert s("EXISTS", "src") == 0
    s.members("dst")
    s("SADD", "dst2", "a")
    assert s("SMOVE", "dst", "dst2", "a") == 1, "already a member of the destination"
    s.members("dst2")


def test_generic_commands(s):
    b = s.both
    b("SADD", "k", "a", "b", "c")
    b("SADD", "i", 1, 2, 3)
    assert b("TYPE", "k") == b"set"
    b("EXISTS", "k", "i", "nokey")
    b("OBJECT", "ENCODING", "i")
    b("OBJECT", "REFCOUNT", "k")
    assert b("COPY", "k", "k2") == 1
    s.members("k2")
    b("COPY", "i", "i2")
    assert b.goblin.execute_command("OBJECT", "ENCODING", "i2") == b"intset"
    b("SADD", "k2", "d")
    assert s("SCARD", "k") == 3, "a copy is independent"
    b("COPY", "k", "i", "REPLACE")
    s.members("i")
    b("RENAME", "k2", "k3")
    s.members("k3")
    b("MOVE", "k3", 1)
    b("SELECT", 1)
    s.members("k3")
    b("SELECT", 0)
    b("ZADD", "z", 1, "a")
    assert sorted(s("SCAN", 0, "TYPE", "set", "COUNT", 100)[1]) == [b"i", b"i2", b"k"]
    assert s("SCAN", 0, "TYPE", "zset", "COUNT", 100)[1] == [b"z"]
    b("DEL", "z")
    b("DEL", "k", "i")
    assert b("RANDOMKEY") == b"i2"
    assert b.goblin.execute_command("MEMORY", "USAGE", "i2") > 0
    b("DBSIZE")
    b("UNLINK", "i2")


def test_big_set_lazy_free_and_memory(s):
    b = s.both
    for start in range(0, 5000, 1000):
        b("SADD", "big", *[f"member:{i}" for i in range(start, start + 1000)])
    s.enc72("big", "hashtable")
    assert s("SCARD", "big") == 5000
    usage = b.goblin.execute_command("MEMORY", "USAGE", "big")
    assert 5000 * 10 < usage < 5000 * 40, usage
    b("DEL", "big")
    b("EXISTS", "big")


def test_expiry(s):
    b = s.both
    b("SADD", "k", "a", "b")
    b("PEXPIRE", "k", 50)
    b("TTL", "k")
    time.sleep(0.1)
    assert s("SCARD", "k") == 0
    b("EXISTS", "k")
    b("SADD", "k", "a")
    b("EXPIRE", "k", 100)
    b("SADD", "k", "b")
    assert b("TTL", "k") == 100, "writes keep the expiry"
    b("SINTERSTORE", "k", "k")
    assert b("TTL", "k") == -1, "a STORE replaces the key and its expiry"


def test_watch_multi(both):
    b = both
    other = both.new()
    b("SADD", "k", "a")
    b("WATCH", "k")
    other("SADD", "k", "a")  # no change: the transaction still runs
    b("MULTI")
    b("SADD", "k", "b")
    b("SMEMBERS", "k")
    assert S(b)("EXEC") is not None
    b("WATCH", "k")
    other("SREM", "k", "a")
    b("MULTI")
    b("SCARD", "k")
    assert b("EXEC") is None
    b("WATCH", "k")
    other("SPOP", "k")
    b("MULTI")
    b("SCARD", "k")
    assert b("EXEC") is None
    b("MULTI")
    b("SADD", "m", 1, 2)
    b("SCARD", "m")
    b("SMEMBERS", "m")
    b("SADD", "z")
    assert isinstance(b("EXEC"), redis.ResponseError), "EXECABORT after an arity error"
    b("MULTI")
    b("SADD", "m", 1, 2)
    b("SCARD", "m")
    b("SMEMBERS", "m")
    S(b)("EXEC")
    other.close()
