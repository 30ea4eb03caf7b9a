"""PING, ECHO, QUIT, RESET, AUTH (no password configured), HELLO and SELECT."""

import pytest

import resp
from resp import encode


# --- PING / ECHO ----------------------------------------------------------------------------


def test_ping(both, both3):
    both("PING")
    both("PING", "hello")
    both("PING", "")
    both("PING", "a", "b")  # wrong number of arguments
    both3("PING")
    both3("PING", "hello")


def test_ping_raw(raw):
    raw.same(encode("PING"))
    raw.same(encode("PING", "x y"))
    raw.same(encode("ping", "a", "b"))
    raw.same(b"PING\r\n")
    raw.same(b"ping\n")


def test_echo(both, raw):
    both("ECHO", "hello")
    both("ECHO", "")
    both("ECHO", b"\x00\xff\r\n")
    both("ECHO")
    both("ECHO", "a", "b")
    raw.same(encode("ECHO", "x" * 100000))
    raw.same(encode("ECHO"))


async def test_ping_echo_async(aboth, aboth3):
    await aboth("PING")
    await aboth("ECHO", "async")
    await aboth3("ECHO", "async")
    await aboth("ECHO")


# --- QUIT -----------------------------------------------------------------------------------


def test_quit_replies_ok_and_closes(raw):
    assert raw.same(encode("QUIT")) == b"+OK\r\n"
    assert raw.closed() == (True, True)


def test_quit_discards_pipelined_rest(raw):
    r, g = raw(encode("PING") + encode("QUIT") + encode("PING") + encode("PING"), 2)
    assert r == g == b"+PONG\r\n+OK\r\n"
    assert raw.closed() == (True, True)
    assert raw.redis.buf == raw.goblin.buf == b""


def test_quit_inline(raw):
    raw.same(b"QUIT\r\n")
    assert raw.closed() == (True, True)


def test_quit_with_args(raw):
    # QUIT has arity -1 and ignores its arguments.
    raw.same(encode("QUIT", "now"))
    assert raw.closed() == (True, True)


# --- RESET ----------------------------------------------------------------------------------


def test_reset_state(both, raw):
    both.ok("ZADD", "k0", 1, "a")
    raw.same(encode("SELECT", "3") + encode("CLIENT", "SETNAME", "named") + encode("MULTI"), 3)
    raw.same(encode("PING"))  # QUEUED
    raw.same(encode("RESET"))
    raw.same(encode("CLIENT", "GETNAME"))
    raw.same(encode("EXISTS", "k0"))  # back in db 0
    raw.same(encode("EXEC"))  # no MULTI any more
    raw.same(encode("RESET", "extra"))


def test_reset_returns_to_resp2(raw):
    r, g = raw(encode("HELLO", "3"))
    assert r.startswith(b"%") and g.startswith(b"%")
    raw.same(encode("CLIENT", "GETNAME"))  # RESP3 null
    raw.same(encode("RESET"))
    raw.same(encode("CLIENT", "GETNAME"))  # RESP2 null bulk again


def test_reset_client_reply_and_watch(both, raw):
    both.ok("ZADD", "w", 1, "a")
    raw.send(encode("WATCH", "w") + encode("CLIENT", "REPLY", "OFF") + encode("RESET") + encode("PING"))
    assert raw.read(3) == (b"+OK\r\n+RESET\r\n+PONG\r\n",) * 2
    # The WATCH was dropped by RESET: a change to w no longer aborts the next transaction.
    both.ok("ZADD", "w", 2, "b")
    raw.same(encode("MULTI") + encode("PING") + encode("EXEC"), 3)


# --- AUTH without a password ----------------------------------------------------------------


def test_auth_without_password(both, raw):
    both("AUTH", "secret")
    both("AUTH", "default", "secret")  # the default user has nopass: any password works
    both("AUTH", "nobody", "secret")
    both("AUTH")
    both("AUTH", "a", "b", "c")
    raw.same(encode("AUTH", "secret"))
    raw.same(encode("AUTH", "nobody", "x"))


# --- HELLO ----------------------------------------------------------------------------------


def _hello_fields(reply: bytes):
    """HELLO's reply with the fields that legitimately differ (version, id) blanked."""
    value = resp.parse(reply)[0]
    if isinstance(value, resp.Error):
        return value
    if reply.startswith(b"%"):
        pairs = value
    else:
        pairs = [(value[i], value[i + 1]) for i in range(0, len(value), 2)]
    return [(k, "*" if k in (b"version", b"id") else v) for k, v in pairs]


def test_hello_versions(raw):
    for req in (
        encode("HELLO"),
        encode("HELLO", "2"),
        encode("HELLO", "3"),
        encode("HELLO", "2"),
        encode("HELLO", "3", "SETNAME", "conn-a"),
        encode("HELLO", "3", "AUTH", "default", "whatever"),
        encode("HELLO", "3", "AUTH", "nobody", "whatever"),
    ):
        r, g = raw(req)
        assert _hello_fields(r) == _hello_fields(g), (req, r, g)
    raw.same(encode("CLIENT", "GETNAME"))


def test_hello_version_field_is_7_2(raw):
    _, g = raw(encode("HELLO", "3"))
    fields = dict(_hello_fields_raw(g))
    assert fields[b"server"] == b"redis"
    assert fields[b"version"] == b"7.2.4"
    assert fields[b"proto"] == 3


def _hello_fields_raw(reply: bytes):
    return resp.parse(reply)[0]


@pytest.mark.parametrize(
    "args",
    [
        ["4"],
        ["1"],
        ["0"],
        ["-1"],
        ["abc"],
        ["3.0"],
        ["3", "SETNAME"],
        ["3", "SETNAME", "bad name"],
        ["3", "AUTH", "default"],
        ["3", "AUTH"],
        ["3", "FOO"],
        ["3", "SETNAME", "x", "FOO"],
        ["2", "AUTH", "default", "x", "SETNAME", "ok-name"],
    ],
)
def test_hello_errors(raw, args):
    r, g = raw(encode("HELLO", *args))
    assert _hello_fields(r) == _hello_fields(g), (args, r, g)


def test_hello_changes_null_encoding(raw):
    raw(encode("HELLO", "3"))
    raw.same(encode("CLIENT", "GETNAME"))
    raw.same(encode("PING"))
    raw.same(encode("EXISTS", "nokey"))
    raw(encode("HELLO", "2"))
    raw.same(encode("CLIENT", "GETNAME"))


def test_hello_resp3_through_redis_py(both3):
    r, g = both3.run("HELLO", 3)
    assert set(r) == set(g)
    assert r[b"proto"] == g[b"proto"] == 3


# --- SELECT ---------------------------------------------------------------------------------


def test_select(both):
    for db in range(16):
        both("SELECT", db)
    for bad in (16, 100, -1, "abc", "1.5", "", "99999999999999999999"):
        both("SELECT", bad)
    both("SELECT")
    both("SELECT", 1, 2)


def test_select_isolates_databases(both):
    both.ok("ZADD", "k", 1, "a")
    both("SELECT", 5)
    both("EXISTS", "k")
    both("DBSIZE")
    both.ok("ZADD", "k5", 1, "a")
    both("KEYS", "*")
    both("SELECT", 0)
    both("KEYS", "*")


def test_select_in_multi(both):
    both("MULTI")
    both("SELECT", 2)
    both("ZADD", "in2", 1, "a")
    both("SELECT", 99)
    both("EXEC")
    both("DBSIZE")
    both("SELECT", 2)
    both("DBSIZE")
