"""ZPOPMIN, ZPOPMAX, ZMPOP and the blocking pops BZPOPMIN, BZPOPMAX, BZMPOP.

The blocking cases drive several raw connections per server (zset_helpers.Blocked): the same
bytes go to Redis and to Goblin, each step waits for INFO's blocked_clients to reach the
expected count on both servers, and the replies that come back are compared byte for byte
(doubles by value). They cover FIFO order among clients blocked on one key, clients blocked
on several keys, wake-ups by ZADD, ZINCRBY, ZUNIONSTORE, ZINTERSTORE, ZRANGESTORE, RENAME,
COPY, MOVE, SWAPDB and MULTI/EXEC, no blocking inside MULTI, fractional timeouts, timeout 0,
CLIENT UNBLOCK TIMEOUT / ERROR, and disconnects of blocked clients.
"""

import time

import pytest

from zset_helpers import Z, Blocked, settle, unblock, wait_blocked, z, zenc  # noqa: F401  (fixtures)


def test_zpopmin_zpopmax(zenc):
    z = zenc
    z("ZADD", "k", 1, "a", 2, "b", 2, "bb", 3, "c", "-inf", "lo", "inf", "hi", 1.5, "x")
    z("ZPOPMIN", "k")
    z("ZPOPMAX", "k")
    z("ZPOPMIN", "k", 2)
    z("ZPOPMAX", "k", 1)
    z("ZPOPMIN", "k", 0)
    z("ZPOPMAX", "k", 0)
    z.errs([
        ("ZPOPMIN", "k", -1),
        ("ZPOPMIN", "k", 1, 2),
    ])
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    z("ZPOPMAX", "k", 100)
    z.gone("k")
    z("ZPOPMIN", "nokey")
    z("ZPOPMIN", "nokey", 3)
    z("ZPOPMAX", "nokey", 0)
    z.err("ZPOPMAX", "nokey", -2)


def test_zmpop(zenc):
    z = zenc
    z("ZADD", "a", 1, "a1", 2, "a2", 3, "a3")
    z("ZADD", "b", 10, "b1", 20, "b2")
    z("ZMPOP", 1, "a", "MIN")
    z("ZMPOP", 2, "nokey", "b", "MAX")
    z("ZMPOP", 3, "nokey", "a", "b", "min", "COUNT", 10)
    z.gone("a")
    z("ZMPOP", 2, "a", "b", "MAX", "count", 1)
    z.gone("b")
    z("ZMPOP", 2, "a", "b", "MIN")  # both gone: null
    z("ZADD", "a", 1, "x")
    z.errs([
        (("ZMPOP", 0, "a", "MIN"), "numkeys"),
        ("ZMPOP", -1, "a", "MIN"),
        ("ZMPOP", 2, "a", "MIN"),
        ("ZMPOP", 1, "a", "MIDDLE"),
        ("ZMPOP", 1, "a"),
        ("ZMPOP", 1, "a", "MIN", "COUNT"),
        (("ZMPOP", 1, "a", "MIN", "COUNT", 0), "count"),
        ("ZMPOP", 1, "a", "MIN", "COUNT", -5),
        ("ZMPOP", 1, "a", "MIN", "COUNT", 1, "COUNT", 2),
        ("ZMPOP", 1, "a", "MIN", "BOGUS"),
        ("ZMPOP", 1, "a", "MIN", "MAX"),
    ])
    z("ZRANGE", "a", 0, -1, "WITHSCORES")


def test_blocking_pops_served_at_once(zenc):
    """With a non-empty key the blocking forms reply immediately, like the plain ones."""
    z = zenc
    z("ZADD", "a", 1, "a1", 2, "a2", 3, "a3")
    z("ZADD", "b", 10, "b1")
    z("BZPOPMIN", "a", 0)
    z("BZPOPMAX", "nokey", "a", 0)
    z("BZPOPMIN", "nokey", "b", "a", "0.5")
    z.gone("b")
    z("BZMPOP", 0, 2, "b", "a", "MAX", "COUNT", 5)
    z.gone("a")
    z("ZADD", "a", 1, "a1")
    z("BZMPOP", "0.1", 1, "a", "MIN")
    z.errs([
        (("BZMPOP", 0, 0, "a", "MIN"), "numkeys"),
        (("BZMPOP", 0, 1, "a", "MIN", "COUNT", 0), "count"),
        ("BZMPOP", 0, 2, "a", "MIN"),
        ("BZMPOP", 0, 1, "a", "AVG"),
        ("BZMPOP", "x", 1, "a", "MIN"),
        ("BZMPOP", -1, 1, "a", "MIN"),
    ])


@pytest.mark.parametrize("timeout", ["-1", "-0.1", "x", "nan", "", "1s", "0x10", "1e-3"])
def test_blocking_timeout_parsing(z, timeout):
    z("ZADD", "a", 1, "m", 2, "n")
    z("BZPOPMAX", "a", timeout)  # served at once when valid, else the error
    z("BZMPOP", timeout, 1, "a", "MIN")
    if timeout not in ("0x10", "1e-3"):
        z("BZPOPMIN", "nokey", timeout)


@pytest.mark.parametrize("timeout", ["inf", "1e20", "9223372036854775807", "9223372036854775.807",
                                     "9223372036854775"])
def test_blocking_timeout_out_of_range_72(both, timeout):
    """Redis 7.2 refuses a timeout that is out of range once in milliseconds (as a long
    double) or whose deadline (now + timeout) would overflow; 7.0 wraps some into "negative".
    Goblin follows 7.2, so this is checked on Goblin alone."""
    z = Z(both)
    for cmd in (("BZPOPMIN", "nokey", timeout), ("BZMPOP", timeout, 1, "nokey", "MAX")):
        got = z.goblin_only(*cmd, timeout=2)
        assert isinstance(got, Exception) and str(got) == "timeout is out of range", (cmd, got)


def test_no_blocking_inside_multi(z):
    z("MULTI")
    z("BZPOPMIN", "nokey", 0)
    z("BZPOPMAX", "nokey", "nokey2", 0)
    z("BZMPOP", 0, 1, "nokey", "MIN", "COUNT", 2)
    z("ZADD", "k", 1, "a")
    z("BZPOPMIN", "k", 0)
    z("BZPOPMIN", "k", 0)
    z("EXEC")
    z.gone("k")


def block(raw, z, *cmd, n):
    """A new client that sends `cmd` and is then the n-th blocked client on both servers."""
    c = Blocked(raw, 3 if z.resp3 else 2)
    c.send(*cmd)
    wait_blocked(z, n)
    return c


def assert_silent(*clients):
    for c in clients:
        r, g = c.pending()
        assert r == b"" and g == b"", f"a blocked client got a reply: redis {r!r}, goblin {g!r}"


def test_fifo_among_clients_blocked_on_one_key(z, raw):
    c1 = block(raw, z, "BZPOPMIN", "k", 0, n=1)
    c2 = block(raw, z, "BZPOPMAX", "k", 0, n=2)
    c3 = block(raw, z, "BZMPOP", 0, 1, "k", "MIN", "COUNT", 2, n=3)
    c4 = block(raw, z, "BZPOPMIN", "k", 0, n=4)
    z("ZADD", "k", 1, "a", 2, "b", 3, "c", 4, "d")
    c1.same()  # a
    c2.same()  # d
    c3.same()  # b, c
    wait_blocked(z, 1)
    assert_silent(c4)
    z.gone("k")
    z("ZADD", "k", 5, "e", 6, "f")
    c4.same()
    wait_blocked(z, 0)
    z("ZRANGE", "k", 0, -1, "WITHSCORES")


def test_clients_blocked_on_several_keys(z, raw):
    c1 = block(raw, z, "BZPOPMIN", "a", "b", "c", 0, n=1)
    c2 = block(raw, z, "BZPOPMAX", "c", "b", 0, n=2)
    c3 = block(raw, z, "BZMPOP", 0, 3, "c", "x", "a", "MAX", "COUNT", 5, n=3)
    z("ZADD", "c", 1, "c1", 2, "c2")
    c1.same()  # the first client blocked on c gets c1
    c2.same()  # then c2
    wait_blocked(z, 1)
    # Two keys become ready in one transaction: the first key signalled serves first.
    z("MULTI")
    z("ZADD", "x", 1, "x1")
    z("ZADD", "a", 1, "a1", 2, "a2")
    z("EXEC")
    c3.same()
    wait_blocked(z, 0)
    z.state("a", "x", "c")


def test_same_key_twice_and_key_served_once(z, raw):
    c1 = block(raw, z, "BZPOPMIN", "k", "k", 0, n=1)
    c2 = block(raw, z, "BZPOPMIN", "k", 0, n=2)
    z("ZADD", "k", 1, "only")
    c1.same()
    wait_blocked(z, 1)
    assert_silent(c2)
    z("ZADD", "k", 2, "next")
    c2.same()
    wait_blocked(z, 0)


@pytest.mark.parametrize(
    "wake",
    [
        [("ZADD", "k", 1, "m", 2, "n")],
        [("ZINCRBY", "k", 5, "m")],
        [("ZADD", "src", 1, "m", 2, "n"), ("ZUNIONSTORE", "k", 1, "src")],
        [("ZADD", "src", 1, "m"), ("ZINTERSTORE", "k", 2, "src", "src")],
        [("ZADD", "src", 1, "m", 2, "n"), ("ZDIFFSTORE", "k", 1, "src")],
        [("ZADD", "src", 1, "m", 2, "n", 3, "o"), ("ZRANGESTORE", "k", "src", 1, 2)],
        [("ZADD", "src", 1, "m"), ("RENAME", "src", "k")],
        [("ZADD", "src", 1, "m"), ("RENAMENX", "src", "k")],
        [("ZADD", "src", 1, "m"), ("COPY", "src", "k")],
        [("SELECT", 1), ("ZADD", "k", 1, "m"), ("MOVE", "k", 0), ("SELECT", 0)],
        [("SELECT", 1), ("ZADD", "k", 1, "m"), ("SELECT", 0), ("SWAPDB", 0, 1)],
        [("MULTI",), ("ZADD", "k", 1, "m"), ("ZADD", "k", 2, "n"), ("EXEC",)],
    ],
    ids=["zadd", "zincrby", "zunionstore", "zinterstore", "zdiffstore", "zrangestore", "rename",
         "renamenx", "copy", "move", "swapdb", "multi"],
)
def test_wakeups(z, raw, wake):
    c1 = block(raw, z, "BZPOPMIN", "k", 0, n=1)
    c2 = block(raw, z, "BZMPOP", 0, 1, "k", "MAX", "COUNT", 10, n=2)
    for cmd in wake:
        z(*cmd)
    c1.same()
    # The second client gets the rest when there is a rest; either way, as on Redis.
    left = settle(z)
    if left == 0:
        c2.same()
    else:
        assert_silent(c2)
    z.state("k", "src")


def test_writes_that_leave_the_key_empty_do_not_serve(z, raw):
    c1 = block(raw, z, "BZPOPMIN", "k", 0, n=1)
    z("MULTI")
    z("ZADD", "k", 1, "m")
    z("ZREM", "k", "m")
    z("EXEC")
    z("MULTI")
    z("ZADD", "k", 1, "m")
    z("DEL", "k")
    z("EXEC")
    z("ZADD", "k", "XX", 1, "m")
    z("ZUNIONSTORE", "k", 1, "nokey")
    z("ZADD", "other", 1, "m")
    z("SELECT", 1)
    z("ZADD", "k", 1, "in-db-1")  # the same name in another database
    z("SELECT", 0)
    wait_blocked(z, 1)
    assert_silent(c1)
    z("ZADD", "k", 7, "late")
    c1.same()
    wait_blocked(z, 0)


def test_fractional_timeout(z, raw):
    c1 = Blocked(raw, 3 if z.resp3 else 2)
    start = time.monotonic()
    c1.send("BZPOPMIN", "k", "0.2")
    c1.same()  # null array (RESP2) / null (RESP3) on both
    elapsed = time.monotonic() - start
    assert 0.15 <= elapsed < 3, elapsed
    c1.send("BZMPOP", "0.05", 2, "k", "j", "MIN")
    c1.same()
    c1.send("BZPOPMAX", "k", "j", ".1")
    c1.same()
    wait_blocked(z, 0)


def test_timeout_zero_waits_until_served(z, raw):
    c1 = block(raw, z, "BZPOPMAX", "k", 0, n=1)
    c2 = block(raw, z, "BZMPOP", "0.0", 1, "k", "MIN", n=2)
    time.sleep(0.5)
    assert_silent(c1, c2)
    wait_blocked(z, 2)
    z("ZADD", "k", 1, "a", 2, "b")
    c1.same()
    c2.same()
    wait_blocked(z, 0)


def test_client_unblock(z, raw):
    c1 = block(raw, z, "BZPOPMIN", "k", 0, n=1)
    c2 = block(raw, z, "BZMPOP", 0, 1, "k", "MIN", n=2)
    c3 = block(raw, z, "BZPOPMAX", "k", "j", 0, n=3)
    assert unblock(z, c1, "TIMEOUT") == 1
    c1.same()  # as if it had timed out
    assert unblock(z, c2, "ERROR") == 1
    c2.same()  # -UNBLOCKED client unblocked via CLIENT UNBLOCK
    assert unblock(z, c3) == 1  # TIMEOUT is the default
    c3.same()
    wait_blocked(z, 0)
    assert unblock(z, c1) == 0  # not blocked any more
    c1.send("PING")
    c1.same()
    r, g = z.run("CLIENT", "UNBLOCK", 999999999)
    assert r == g == 0
    z.errs([
        ("CLIENT", "UNBLOCK", "x"),
        ("CLIENT", "UNBLOCK", 1, "SOMETIMES"),
    ])


def test_blocked_client_disconnects(z, raw):
    c1 = block(raw, z, "BZPOPMIN", "k", 0, n=1)
    c2 = block(raw, z, "BZPOPMIN", "k", 0, n=2)
    for c in c1.p.conns():
        c.close()
    wait_blocked(z, 1)
    z("ZADD", "k", 1, "a")
    c2.same()
    wait_blocked(z, 0)
    z.gone("k")


def test_blocked_clients_counted_in_info(z, raw):
    assert wait_blocked(z, 0) is None
    c1 = block(raw, z, "BZPOPMIN", "k", 5, n=1)
    c2 = block(raw, z, "BZMPOP", 5, 1, "j", "MAX", n=2)
    c3 = block(raw, z, "BZPOPMAX", "k", "j", 5, n=3)
    z("ZADD", "j", 1, "a")
    c2.same()
    wait_blocked(z, 2)
    z("ZADD", "k", 1, "a")
    c1.same()
    wait_blocked(z, 1)
    unblock(z, c3, "TIMEOUT")
    c3.same()
    wait_blocked(z, 0)


def test_blocking_pop_from_large_set(z, raw):
    c1 = block(raw, z, "BZMPOP", 0, 1, "k", "MAX", "COUNT", 150, n=1)
    z.load("k", [(i, f"m{i:03d}") for i in range(300)])
    # The ZADD pipeline may serve the client after the first batch already.
    c1.same()
    z.state("k")
