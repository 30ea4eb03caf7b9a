"""XREAD against Redis over RESP2 and RESP3: served at once (several keys, COUNT, `$`,
missing keys, the map reply of RESP3), every error, and BLOCK over raw sockets
(zset_helpers.Blocked: the same bytes to both servers, replies compared byte for byte):
woken by XADD with what was added after `$` or the given id, several keys, several
clients, timeouts, no wake-up for entries at or before the id (a DEL and XADD in MULTI) nor
by a key of another type,
no blocking inside MULTI, CLIENT UNBLOCK, and BLOCK refused inside scripts."""

import pytest
import redis

from zset_helpers import Blocked, unblock, wait_blocked


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def x(request):
    return request.getfixturevalue("both3" if request.param == 3 else "both")


def blocked(raw, x, *cmd, n):
    """A new client that sends `cmd` and is then the n-th blocked client on both servers."""
    c = Blocked(raw, x.protocol)
    c.send(*cmd)
    wait_blocked(x, n)
    return c


def silent(*clients):
    for c in clients:
        r, g = c.pending()
        assert r == b"" and g == b"", f"a blocked client got a reply: redis {r!r}, goblin {g!r}"


def only_72(x, cmd, error):
    """`cmd` on Goblin alone fails with Redis 7.2.4's `error` (where 7.0 differs)."""
    try:
        x.goblin.execute_command(*cmd)
    except redis.ResponseError as e:
        assert str(e) == error, cmd
    else:
        raise AssertionError(f"{cmd!r} did not fail")


def test_served_at_once(x):
    for i in range(1, 8):
        x("XADD", "a", f"{i}-0", "f", f"a{i}")
    x("XADD", "b", "5-5", "g", "b", "h", "12")
    x("XDEL", "a", "7-0")
    x("XREAD", "STREAMS", "a", "0")
    x("XREAD", "STREAMS", "a", "b", "3", "0-0")
    x("XREAD", "COUNT", "2", "STREAMS", "a", "b", "nokey", "3", "0-0", "0")
    x("XREAD", "count", "-5", "STREAMS", "a", "2-0")
    x("XREAD", "STREAMS", "a", "6-0")
    x("XREAD", "STREAMS", "a", "$")
    x("XREAD", "STREAMS", "nokey", "$")
    x("XREAD", "STREAMS", "a", "b", "$", "5-4")
    x("XREAD", "BLOCK", "10", "STREAMS", "a", "1")
    x("XREAD", "COUNT", "1", "COUNT", "3", "STREAMS", "a", "0")
    x("XREAD", "STREAMS", "a", "STREAMS")
    x("XADD", "empty", "MAXLEN", "0", "1-1", "f", "v")
    x("XREAD", "STREAMS", "empty", "0")
    x("XREAD", "BLOCK", "0", "STREAMS", "a", "b", "0", "0")


def test_errors(x):
    x("XADD", "a", "1-0", "f", "v")
    x("SET", "str", "v")
    for bad in [
        ("XREAD", "STREAMS", "a"),
        ("XREAD", "COUNT", "1", "a", "0"),
        ("XREAD", "COUNT", "x", "STREAMS", "a", "0"),
        ("XREAD", "BLOCK", "x", "STREAMS", "a", "0"),
        ("XREAD", "BLOCK", "-1", "STREAMS", "a", "0"),
        ("XREAD", "BLOCK", "1.5", "STREAMS", "a", "0"),
        ("XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"),
        ("XREAD", "NOACK", "STREAMS", "a", "0"),
        ("XREAD", "STREAMS", "a", ">"),
        ("XREAD", "STREAMS", "a", "x"),
        ("XREAD", "STREAMS", "a", "-"),
        ("XREAD", "STREAMS", "a", "+"),
        ("XREAD", "STREAMS", "str", "0"),
        ("XREAD", "STREAMS", "a", "str", "x", "0"),
        ("XREAD", "STREAMS", "a", "str", "0", "x"),
        ("XREAD", "FOO", "STREAMS", "a", "0"),
        ("xread", "streams"),
    ]:
        x.err(*bad)
    # Redis 7.2 names the command as its table does ('xread'), 7.0 (the reference here) as
    # typed; 7.2 refuses a BLOCK that would overflow the clock, 7.0 takes it. Goblin answers
    # as 7.2.4 does, alone.
    unbalanced = "Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified."
    only_72(x, ("XREAD", "STREAMS", "a", "b", "0"), unbalanced)
    only_72(x, ("xread", "STREAMS", "a", "b", "0"), unbalanced)
    only_72(x, ("XREAD", "BLOCK", "9223372036854775807", "STREAMS", "a", "0"), "timeout is out of range")
    x("EVAL", "return redis.pcall('XREAD', 'BLOCK', '0', 'STREAMS', KEYS[1], '0')", 1, "a")
    x("EVAL", "return redis.pcall('xread', 'block', '0', 'STREAMS', KEYS[1], '$')", 1, "a")
    x("EVAL", "return redis.pcall('XREAD', 'STREAMS', KEYS[1], '0')", 1, "a")


def test_block_woken_by_xadd(x, raw):
    x("XADD", "a", "1-0", "f", "v")
    c1 = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "a", "$", n=1)
    c2 = blocked(raw, x, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "nokey", "a", "0", "1-0", n=2)
    c3 = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "a", "5-0", n=3)
    x("XADD", "a", "2-0", "g", "w")
    c1.same()
    c2.same()
    wait_blocked(x, 1)
    silent(c3)
    x("XADD", "a", "5-1", "h", "x")
    c3.same()
    wait_blocked(x, 0)
    c4 = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "nokey", "$", n=1)
    x("XADD", "nokey", "1-1", "first", "1")
    c4.same()
    c5 = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$", n=1)
    x("XADD", "b", "3-3", "f", "v")
    c5.same()
    wait_blocked(x, 0)


def test_block_not_woken_by_older_entries_or_other_keys(x, raw):
    x("XADD", "a", "10-0", "f", "v")
    c = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "a", "$", n=1)
    x("MULTI")
    x("DEL", "a")
    x("XADD", "a", "5-0", "f", "v")
    x("EXEC")
    x("XADD", "other", "20-0", "f", "v")
    x("LPUSH", "l", "x")
    wait_blocked(x, 1)
    silent(c)
    x("XADD", "a", "11-0", "f", "v")
    c.same()


def test_block_woken_only_by_its_type(x, raw):
    """A key made ready holding another type leaves its clients waiting (Redis's blocking
    types): XREAD through a MULTI that ends with a list, BLPOP and BZPOPMIN on keys that
    become streams; each is served once its key holds its own type."""
    c = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "s1", "$", n=1)
    x("MULTI")
    x("XADD", "s1", "5-0", "old", "abcd1234")
    x("DEL", "s1")
    x("LPUSH", "s1", "foo", "bar")
    x("EXEC")
    l = blocked(raw, x, "BLPOP", "k", "0", n=2)
    z = blocked(raw, x, "BZPOPMIN", "k", "0", n=3)
    x("XADD", "k", "1-0", "f", "v")
    wait_blocked(x, 3)
    silent(c, l, z)
    x("DEL", "s1")
    x("XADD", "s1", "6-0", "new", "abcd1234")
    c.same()
    x("DEL", "k")
    x("RPUSH", "k", "a")
    l.same()
    x("DEL", "k")
    x("ZADD", "k", "1", "m")
    z.same()


def test_block_timeouts_multi_and_unblock(x, raw):
    x("XADD", "a", "1-0", "f", "v")
    c = blocked(raw, x, "XREAD", "BLOCK", "50", "STREAMS", "a", "$", n=1)
    c.same()
    wait_blocked(x, 0)
    x("MULTI")
    x("XREAD", "BLOCK", "0", "STREAMS", "a", "$")
    x("XREAD", "BLOCK", "0", "STREAMS", "a", "0")
    x("EXEC")
    c = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "a", "$", n=1)
    unblock(x, c)
    c.same()
    c = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "a", "$", n=1)
    unblock(x, c, "ERROR")
    c.same()
    wait_blocked(x, 0)
