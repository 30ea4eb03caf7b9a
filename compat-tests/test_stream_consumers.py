"""The consumer side of stream groups against Redis 7.2.4 (REDIS72_BIN, default the source
tree's /work/redis-7.2.4/src/redis-server; skipped without it), over RESP2 and RESP3:
XREADGROUP (`>`, history with deleted entries, COUNT, NOACK, several keys, consumers created
on first use), XPENDING (summary, extended, IDLE, consumer), XCLAIM (IDLE, TIME, RETRYCOUNT,
FORCE, JUSTID, LASTID, deleted entries), XAUTOCLAIM (COUNT, JUSTID, the cursor, deleted ids),
every error in Redis's order; blocking XREADGROUP over raw sockets (woken by XADD, not by
another type for XREAD, NOGROUP after DEL / FLUSHALL / XGROUP DESTROY, WRONGTYPE after SET,
timeouts, MULTI); what XREADGROUP, XCLAIM and XAUTOCLAIM write to the AOF (Redis's XCLAIM /
XGROUP SETID / CREATECONSUMER forms, compared command by command) and a restart from an AOF
without preamble holding pending entries; and a replica following XREADGROUP and XCLAIM.

Idle times (milliseconds since a delivery) differ by the servers' timing: XPENDING's are
compared as "small" or not; the AOF's TIME arguments as present."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from aof_stream import incr_stream
from harness import GOBLIN_BIN, Both, RawPair, make_client
from test_aof import AOF_ARGS
from test_hyperloglog import REDIS72_BIN, pair72  # noqa: F401 (the fixture: Redis 7.2.4 and Goblin)
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from zset_helpers import Blocked, unblock, wait_blocked

@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def x(request, pair72):
    pair72.flushall()
    b = Both(pair72, request.param)
    yield b
    b.close()
    b.restore_config()
    assert not pair72.check_alive()


@pytest.fixture
def raw(pair72):
    p = RawPair(pair72)
    yield p
    p.close()


def blocked(raw, x, *cmd, n):
    """A new client that sends `cmd` and is then the n-th blocked client on both servers."""
    c = Blocked(raw, x.protocol)
    c.send(*cmd)
    wait_blocked(x, n)
    return c


def blocking_keys(server):
    """INFO's total_blocking_keys and total_blocking_keys_on_nokey."""
    c = make_client(server)
    info = c.info("clients")
    c.close()
    return info["total_blocking_keys"], info["total_blocking_keys_on_nokey"]


def same_cmdstats(x, *names):
    """INFO commandstats' calls and failed_calls of `names` agree (a call that blocked counts
    once, when its wait ends)."""
    seen = []
    for server in (x.pair.redis, x.pair.goblin):
        c = make_client(server)
        info = c.info("commandstats")
        c.close()
        seen.append({n: (info.get(f"cmdstat_{n}", {}).get("calls"), info.get(f"cmdstat_{n}", {}).get("failed_calls"))
                     for n in names})
    assert seen[0] == seen[1], seen


def idle_masked(reply):
    """XPENDING's extended reply with each idle time as whether it is under a second."""
    if not isinstance(reply, list) or not all(isinstance(r, list) for r in reply):
        return reply
    return [[r[0], r[1], r[2] < 1000, r[3]] for r in reply]


def pending(x, *args):
    r, g = x.run("XPENDING", *args)
    assert idle_masked(r) == idle_masked(g), (args, r, g)


def setup(x):
    for i in range(1, 7):
        x("XADD", "s", f"{i}-0", "f", f"v{i}")
    x("XGROUP", "CREATE", "s", "g", "0")


def test_xreadgroup_and_xpending(x):
    setup(x)
    x("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">")
    x("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", ">")
    x("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    x("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", "1")
    x("XDEL", "s", "2-0")
    x("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0-0")
    x("XREADGROUP", "GROUP", "g", "nobody", "STREAMS", "s", "0")
    x("XREADGROUP", "GROUP", "g", "carol", "NOACK", "COUNT", "1", "STREAMS", "s", ">")
    pending(x, "s", "g")
    pending(x, "s", "g", "-", "+", "10")
    pending(x, "s", "g", "-", "+", "10", "alice")
    pending(x, "s", "g", "(1-0", "+", "1")
    pending(x, "s", "g", "-", "(3", "10")
    pending(x, "s", "g", "IDLE", "100000", "-", "+", "10")
    pending(x, "s", "g", "IDLE", "0", "-", "+", "10", "bob")
    pending(x, "s", "g", "-", "+", "-3")
    pending(x, "s", "g", "-", "+", "10", "nobody")
    pending(x, "s", "g", "-", "+", "10", "alice", "extra")
    x("XGROUP", "CREATE", "s", "empty", "$")
    x("XPENDING", "s", "empty")
    x("XPENDING", "s", "empty", "-", "+", "5")
    # Two keys, one with nothing new; the same key twice.
    x("XADD", "t", "1-1", "a", "b")
    x("XGROUP", "CREATE", "t", "g", "$")
    x("XREADGROUP", "GROUP", "g", "dan", "STREAMS", "s", "t", ">", ">")
    x("XREADGROUP", "GROUP", "g", "dan", "STREAMS", "s", "t", ">", ">")
    x("XREADGROUP", "GROUP", "g", "dan", "STREAMS", "s", "t", "0", ">")
    x("XREADGROUP", "GROUP", "g", "dan", "STREAMS", "s", "s", "0", "0")
    x("XADD", "t", "2-2", "c", "d")
    x("XGROUP", "SETID", "s", "g", "0")
    x("XREADGROUP", "GROUP", "g", "erin", "COUNT", "2", "STREAMS", "t", "s", ">", ">")
    pending(x, "s", "g", "-", "+", "10")
    x("XREADGROUP", "GROUP", "g", "erin", "BLOCK", "10", "STREAMS", "s", ">")
    x("XREADGROUP", "GROUP", "g", "erin", "BLOCK", "0", "STREAMS", "s", "0")
    x("XGROUP", "DELCONSUMER", "s", "g", "erin")
    x("XGROUP", "DELCONSUMER", "s", "g", "dan")
    x("XGROUP", "DELCONSUMER", "s", "g", "nobody")
    for cmd in ("XREADGROUP", "XPENDING", "XCLAIM", "XAUTOCLAIM"):
        x("COMMAND", "INFO", cmd)
    x("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">", ">")
    x("COMMAND", "GETKEYS", "XCLAIM", "s", "g", "c", "0", "1-0")


def consumer_counts(x, key, group):
    """XINFO CONSUMERS' names and pending counts (its idle times differ by timing)."""
    timing = {"idle", "inactive", b"idle", b"inactive"}

    def counts(consumer):
        pairs = consumer.items() if isinstance(consumer, dict) else zip(consumer[::2], consumer[1::2])
        return [(k, v) for k, v in pairs if k not in timing]

    r, g = x.run("XINFO", "CONSUMERS", key, group)
    assert [counts(c) for c in r] == [counts(c) for c in g], (r, g)


def test_many_acks_and_moves_keep_each_consumer_pel(x):
    """Hundreds of acknowledgements and claims out of two consumers' PELs (past the point
    where Goblin compacts a consumer's set of ids), then every reply that lists a consumer's
    pending entries, before and after a reload."""
    for i in range(1, 401):
        x("XADD", "s", f"{i}-0", "f", f"v{i}")
    x("XGROUP", "CREATE", "s", "g", "0")
    x("XREADGROUP", "GROUP", "g", "alice", "COUNT", "300", "STREAMS", "s", ">")
    x("XREADGROUP", "GROUP", "g", "bob", "COUNT", "100", "STREAMS", "s", ">")
    x("XACK", "s", "g", *[f"{i}-0" for i in range(1, 300, 2)])
    x("XACK", "s", "g", *[f"{i}-0" for i in range(2, 120, 2)], "999-0", "301-0")
    x("XCLAIM", "s", "g", "bob", "0", *[f"{i}-0" for i in range(120, 200, 2)], "JUSTID")
    x("XCLAIM", "s", "g", "alice", "0", *[f"{i}-0" for i in range(302, 340, 2)], "JUSTID")
    x("XACK", "s", "g", *[f"{i}-0" for i in range(1, 8)])
    for _ in range(2):
        pending(x, "s", "g")
        for consumer in ("alice", "bob"):
            pending(x, "s", "g", "-", "+", "500", consumer)
            pending(x, "s", "g", "(150-0", "+", "7", consumer)
            x("XREADGROUP", "GROUP", "g", consumer, "COUNT", "5", "STREAMS", "s", "0")
            x("XREADGROUP", "GROUP", "g", consumer, "COUNT", "5", "STREAMS", "s", "250-0")
        pending(x, "s", "g", "-", "+", "500")
        consumer_counts(x, "s", "g")
        x("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0")
        x("XGROUP", "DELCONSUMER", "s", "g", "alice")
        x("XCLAIM", "s", "g", "alice", "0", "390-0", "FORCE", "JUSTID")
        x("DEBUG", "RELOAD")


def test_command_docs_as_the_other_commands(both):
    """COMMAND DOCS as Goblin's other commands give it: Redis 7.0's text (the reference)."""
    for cmd in ("XREADGROUP", "XPENDING", "XCLAIM", "XAUTOCLAIM"):
        both("COMMAND", "DOCS", cmd)
        both("COMMAND", "INFO", cmd)


def test_read_errors(x):
    setup(x)
    x("SET", "str", "v")
    for bad in [
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "x"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "-"),
        ("XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "str", ">", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "nokey", "x", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "s", ">"),
        ("XREADGROUP", "COUNT", "1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "FOO", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"),
        ("XREADGROUP", "GROUP", "g", "c", "s", ">"),
        ("XPENDING", "s"),
        ("XPENDING", "s", "g", "-"),
        ("XPENDING", "s", "g", "-", "+"),
        ("XPENDING", "s", "g", "-", "+", "x"),
        ("XPENDING", "s", "g", "x", "+", "1"),
        ("XPENDING", "s", "g", "-", "x", "1"),
        ("XPENDING", "s", "g", "x", "+", "y"),
        ("XPENDING", "s", "g", "(18446744073709551615-18446744073709551615", "+", "1"),
        ("XPENDING", "s", "g", "-", "(0-0", "1"),
        ("XPENDING", "s", "g", "IDLE", "x", "-", "+", "1"),
        ("XPENDING", "s", "g", "IDLE", "1", "-", "+"),
        ("XPENDING", "s", "g", "IDLE", "1", "-", "+", "1", "c", "extra"),
        ("XPENDING", "s", "nog"),
        ("XPENDING", "nokey", "g", "-", "+", "1"),
        ("XPENDING", "str", "g"),
    ]:
        x.err(*bad)
    x("EVAL", "return redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'BLOCK', '0', 'STREAMS', KEYS[1], '>')", 1, "s")
    x("EVAL", "return redis.pcall('XREADGROUP', 'GROUP', 'g', 'c', 'STREAMS', KEYS[1], '>')", 1, "s")


def test_xclaim(x):
    setup(x)
    x("XREADGROUP", "GROUP", "g", "alice", "COUNT", "4", "STREAMS", "s", ">")
    x("XCLAIM", "s", "g", "bob", "0", "1-0", "2", "JUSTID")
    x("XCLAIM", "s", "g", "bob", "3600000", "3-0")
    x("XCLAIM", "s", "g", "bob", "0", "3-0", "RETRYCOUNT", "7", "IDLE", "5000000")
    pending(x, "s", "g", "-", "+", "10")
    x("XCLAIM", "s", "g", "carol", "1000000", "3-0", "JUSTID")
    x("XCLAIM", "s", "g", "carol", "0", "5-0", "6-0")
    x("XCLAIM", "s", "g", "carol", "0", "5-0", "FORCE", "TIME", "1", "RETRYCOUNT", "3")
    x("XCLAIM", "s", "g", "carol", "0", "6-0", "FORCE", "JUSTID", "TIME", "99999999999999")
    x("XCLAIM", "s", "g", "carol", "0", "99-0", "FORCE")
    x("XCLAIM", "s", "g", "carol", "-5", "4-0", "IDLE", "-3", "RETRYCOUNT", "-1")
    pending(x, "s", "g", "-", "+", "10")
    x("XDEL", "s", "1-0", "3-0")
    x("XCLAIM", "s", "g", "dave", "0", "1-0", "2-0", "3-0", "JUSTID")
    x("XCLAIM", "s", "g", "dave", "0", "2-0", "LASTID", "10-0")
    x("XCLAIM", "s", "g", "dave", "0", "77-0", "LASTID", "20-0")
    x("XCLAIM", "s", "g", "dave", "0", "77-0", "LASTID", "5-0")
    pending(x, "s", "g")
    x("XREADGROUP", "GROUP", "g", "erin", "STREAMS", "s", ">")
    x("SET", "str", "v")
    for bad in [
        ("XCLAIM", "s", "nog", "c", "0", "1-0"),
        ("XCLAIM", "nokey", "g", "c", "0", "1-0"),
        ("XCLAIM", "str", "g", "c", "0", "1-0"),
        ("XCLAIM", "s", "g", "c", "x", "1-0"),
        ("XCLAIM", "s", "g", "c", "0", "1-0", "FOO"),
        ("XCLAIM", "s", "g", "c", "0", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-0", "TIME", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-0", "RETRYCOUNT", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-0", "LASTID", "x"),
        ("XCLAIM", "s", "g", "c", "0", "1-0", "IDLE"),
        ("XCLAIM", "s", "g", "c", "0", "1-0", "JUSTID", "2-0"),
        ("XCLAIM", "s", "g", "c", "0"),
    ]:
        x.err(*bad)


def test_xautoclaim(x):
    for i in range(1, 13):
        x("XADD", "s", f"{i}-0", "f", f"v{i}")
    x("XGROUP", "CREATE", "s", "g", "0")
    x("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    x("XCLAIM", "s", "g", "alice", "0", "1-0", "2-0", "3-0", "IDLE", "100000", "JUSTID")
    x("XAUTOCLAIM", "s", "g", "bob", "50000", "0")
    x("XAUTOCLAIM", "s", "g", "bob", "50000", "0", "COUNT", "2")
    x("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "3")
    x("XAUTOCLAIM", "s", "g", "carol", "0", "(4-0", "COUNT", "3", "JUSTID")
    x("XDEL", "s", "8-0", "9-0")
    x("XAUTOCLAIM", "s", "g", "dave", "0", "7-0", "COUNT", "2")
    x("XAUTOCLAIM", "s", "g", "dave", "0", "7-0", "COUNT", "2", "JUSTID")
    x("XAUTOCLAIM", "s", "g", "dave", "0", "-", "COUNT", "1")
    x("XAUTOCLAIM", "s", "g", "dave", "0", "+")
    # A min idle time no entry reaches: every attempt is spent, the cursor stops there.
    x("XAUTOCLAIM", "s", "g", "erin", "100000000", "0", "COUNT", "1")
    pending(x, "s", "g", "-", "+", "20")
    x("SET", "str", "v")
    for bad in [
        ("XAUTOCLAIM", "s", "nog", "c", "0", "0"),
        ("XAUTOCLAIM", "nokey", "g", "c", "0", "0"),
        ("XAUTOCLAIM", "str", "g", "c", "0", "0"),
        ("XAUTOCLAIM", "s", "g", "c", "x", "0"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "x"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "(18446744073709551615-18446744073709551615"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "x"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "576460752303423488"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT"),
        ("XAUTOCLAIM", "s", "g", "c", "0", "0", "FOO"),
        ("XAUTOCLAIM", "nokey", "g", "c", "0", "0", "FOO"),
        ("XAUTOCLAIM", "s", "g", "c", "0"),
    ]:
        x.err(*bad)


def test_consumer_created_events(x):
    setup(x)
    x.config_set("notify-keyspace-events", "KEt")
    subs = []
    for c in x.clients():
        p = c.pubsub()
        p.psubscribe("__keyspace@0__:*")
        p.get_message(timeout=1)
        subs.append(p)
    x("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">")
    x("XCLAIM", "s", "g", "bob", "0", "1-0")
    x("XAUTOCLAIM", "s", "g", "carol", "0", "0")
    x("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">")
    seen = []
    for p in subs:
        got = []
        while (m := p.get_message(timeout=0.2)) is not None:
            got.append(m["data"])
        seen.append(got)
        p.close()
    assert seen[0] == seen[1] == [b"xgroup-createconsumer"] * 3


def test_block_woken_by_xadd(x, raw):
    x("CONFIG", "RESETSTAT")
    x("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    x("XGROUP", "CREATE", "t", "g", "$", "MKSTREAM")
    c1 = blocked(raw, x, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    c2 = blocked(raw, x, "XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "BLOCK", "0",
                 "STREAMS", "t", "s", ">", ">", n=2)
    b = blocked(raw, x, "BLPOP", "l", "0", n=3)
    assert blocking_keys(x.pair.redis) == blocking_keys(x.pair.goblin) == (3, 2)
    x("XADD", "s", "1-0", "f", "v")
    c1.same()
    wait_blocked(x, 2)
    unblock(x, b)
    b.same()
    wait_blocked(x, 1)
    x("XADD", "s", "2-0", "f", "v")
    c2.same()
    wait_blocked(x, 0)
    pending(x, "s", "g", "-", "+", "10")
    c3 = blocked(raw, x, "XREADGROUP", "GROUP", "g", "carol", "NOACK", "BLOCK", "0", "STREAMS", "t", ">", n=1)
    x("XADD", "t", "1-0", "a", "b", "c", "d")
    c3.same()
    pending(x, "t", "g")
    c4 = blocked(raw, x, "XREADGROUP", "GROUP", "g", "carol", "BLOCK", "50", "STREAMS", "t", ">", n=1)
    c4.same()
    c5 = blocked(raw, x, "XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "t", ">", n=1)
    unblock(x, c5)
    c5.same()
    c6 = blocked(raw, x, "XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "t", ">", n=1)
    unblock(x, c6, "ERROR")
    c6.same()
    x("MULTI")
    x("XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "t", ">")
    x("EXEC")
    same_cmdstats(x, "xreadgroup", "blpop")


@pytest.mark.parametrize("change", [
    [("DEL", "s")],
    [("FLUSHALL",)],
    [("XGROUP", "DESTROY", "s", "g")],
    [("SET", "s", "v")],
    [("MULTI",), ("DEL", "s"), ("SADD", "s", "m"), ("EXEC",)],
    [("XADD", "s2", "100-0", "f", "v"), ("RENAME", "s2", "s")],
])
def test_block_ends_with_the_error_redis_gives(x, raw, change):
    x("CONFIG", "RESETSTAT")
    x("XADD", "s", "666-0", "f", "v")
    x("XGROUP", "CREATE", "s", "g", "$")
    c = blocked(raw, x, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">", n=1)
    for cmd in change:
        x(*cmd)
    c.same()
    wait_blocked(x, 0)
    same_cmdstats(x, "xreadgroup")


def test_xread_keeps_waiting_across_another_type(x, raw):
    x("XADD", "s", "666-0", "f", "v")
    c = blocked(raw, x, "XREAD", "BLOCK", "0", "STREAMS", "s", "$", n=1)
    x("SET", "s", "v")
    x("DEL", "s")
    wait_blocked(x, 1)
    x("XADD", "s", "667-0", "f", "v")
    c.same()
    b = blocked(raw, x, "BLPOP", "l", "0", n=1)
    x("SET", "l", "v")
    x("DEL", "l")
    wait_blocked(x, 1)
    x("RPUSH", "l", "a")
    b.same()


# --- propagation -----------------------------------------------------------------------------

PROPAGATED = [
    ("XADD", "s", "1-0", "f", "v1"),
    ("XADD", "s", "2-0", "f", "v2"),
    ("XADD", "s", "3-0", "f", "v3"),
    ("XADD", "s", "4-0", "f", "v4"),
    ("XGROUP", "CREATE", "s", "g", "0"),
    ("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"),
    ("XREADGROUP", "GROUP", "g", "bob", "NOACK", "COUNT", "1", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "carol", "NOACK", "STREAMS", "s", ">"),
    ("XREADGROUP", "GROUP", "g", "dave", "STREAMS", "s", ">"),
    ("XCLAIM", "s", "g", "erin", "0", "1", "RETRYCOUNT", "5"),
    ("XDEL", "s", "2-0"),
    ("XCLAIM", "s", "g", "erin", "0", "2-0", "JUSTID"),
    ("XCLAIM", "s", "g", "erin", "0", "9-0", "LASTID", "9-0"),
    ("XADD", "s", "5-0", "f", "v5"),
    ("XADD", "s", "6-0", "f", "v6"),
    ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"),
    ("XDEL", "s", "5-0"),
    ("XAUTOCLAIM", "s", "g", "frank", "0", "0", "COUNT", "10"),
    ("XGROUP", "CREATE", "s", "h", "0"),
    ("XREADGROUP", "GROUP", "h", "gina", "COUNT", "1", "STREAMS", "s", ">"),
    ("XGROUP", "CREATECONSUMER", "s", "h", "idle"),
]


def masked(cmds):
    """The AOF's commands with XCLAIM's TIME value (the delivery time) blanked."""
    out = []
    for argv in cmds:
        argv = list(argv)
        if argv[0].upper() == b"XCLAIM" and b"TIME" in argv:
            argv[argv.index(b"TIME") + 1] = b"<time>"
        out.append(argv)
    return out


def start72(procs, workdir, *args):
    workdir.mkdir(parents=True, exist_ok=True)
    p = Proc(REDIS72_BIN, workdir, "--dir", str(workdir), *AOF_ARGS, *args, name="redis")
    procs.append(p)
    return p.start()


def startg(procs, workdir, *args):
    workdir.mkdir(parents=True, exist_ok=True)
    p = Proc(GOBLIN_BIN, workdir, "--dir", str(workdir), *AOF_ARGS, *args, name="goblin")
    procs.append(p)
    return p.start()


def group_state(c):
    """What a restart must keep: per group the pending entries (id, owner, count) and the
    summary (count, first, last, consumers with pending entries)."""
    c.response_callbacks = {}
    out = {}
    for g in (b"g", b"h"):
        rows = c.execute_command("XPENDING", "s", g, "-", "+", "100")
        out[g] = ([(r[0], r[1], r[3]) for r in rows], c.execute_command("XPENDING", "s", g))
    return out


@pytest.mark.skipif(not Path(REDIS72_BIN).exists(), reason="no Redis 7.2.4")
def test_aof_propagation_and_replay(procs, tmp_path):
    r = start72(procs, tmp_path / "r")
    g = startg(procs, tmp_path / "g", "--aof-use-rdb-preamble", "no")
    for p in (r, g):
        c = p.client()
        for cmd in PROPAGATED:
            c.execute_command(*cmd)
    time.sleep(1.2)  # appendfsync everysec
    assert masked(incr_stream(g.workdir)) == masked(incr_stream(r.workdir))
    # Goblin restarts from its AOF; then from a rewrite without preamble (XCLAIM ... FORCE
    # per pending entry, CREATECONSUMER for those without); Redis 7.2.4 loads both.
    before = group_state(g.client())
    assert before == group_state(r.client())
    g.kill9()
    g.start()
    assert group_state(g.client()) == before
    c = g.client()
    assert c.bgrewriteaof()
    deadline = time.monotonic() + 20
    while c.info("persistence")["aof_rewrite_in_progress"] and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    base = next((g.workdir / "appendonlydir").glob("*.base.aof")).read_bytes()
    assert b"XCLAIM" in base and base.startswith(b"*")
    g.kill9()
    g.start()
    assert group_state(g.client()) == before
    g.stop()
    (tmp_path / "r2").mkdir()
    shutil.copytree(g.workdir / "appendonlydir", tmp_path / "r2" / "appendonlydir")
    r2 = start72(procs, tmp_path / "r2")
    assert group_state(r2.client()) == before


@pytest.mark.skipif(not Path(REDIS72_BIN).exists(), reason="no Redis 7.2.4")
def test_replica_follows_reads_and_claims(procs, tmp_path):
    m = startg(procs, tmp_path / "m")
    rep = startg(procs, tmp_path / "rep")
    rc = rep.client()
    rc.execute_command("REPLICAOF", "127.0.0.1", m.port)
    deadline = time.monotonic() + 20
    while rc.info("replication").get("master_link_status") != "up":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    mc = m.client()
    for cmd in PROPAGATED:
        mc.execute_command(*cmd)
    deadline = time.monotonic() + 20
    while rc.info("replication")["master_repl_offset"] != mc.info("replication")["master_repl_offset"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    mc, rc = m.client(), rep.client()
    mc.response_callbacks = rc.response_callbacks = {}
    want = mc.execute_command("XPENDING", "s", "g", "-", "+", "100")
    got = rc.execute_command("XPENDING", "s", "g", "-", "+", "100")
    assert [(w[0], w[1], w[3]) for w in want] == [(x[0], x[1], x[3]) for x in got]
    assert mc.execute_command("XPENDING", "s", "h") == rc.execute_command("XPENDING", "s", "h")
