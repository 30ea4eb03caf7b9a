"""HOTKEYS (Redis 8.6): START / STOP / GET / RESET / HELP, pinned on Goblin alone (no
Redis 8.6 at hand). The pins follow Redis's own sources for the command: src/hotkeys.c and
tests/unit/hotkeys.tcl as of 8.6.x (error texts, the order in which START checks its
arguments, GET's fields and their conditions, an array of one map; selected-slots as ranges),
and redis.io's HOTKEYS pages. With REDIS8_BIN pointing at a redis-server 8.6 or later, every
test also runs against it, checking the pins.

Figures that depend on timing (microseconds, CPU milliseconds) are checked for type and
sense only; bytes are exact: a command counts its request as RESP plus its reply, split
evenly (integer division) among its keys."""

from __future__ import annotations

import os
import time

import pytest
import redis

from harness import GOBLIN_BIN, Server, make_client
from resp import RawConnection, encode, parse
from test_cluster import Node

REDIS8_BIN = os.environ.get("REDIS8_BIN")
KINDS = ["goblin"] + (["redis8"] if REDIS8_BIN else [])


def binary(kind: str) -> str:
    return GOBLIN_BIN if kind == "goblin" else REDIS8_BIN


@pytest.fixture(scope="module", params=KINDS)
def server(request, tmp_path_factory):
    kind = request.param
    s = Server("goblin" if kind == "goblin" else "redis", binary(kind), [], tmp_path_factory.mktemp(kind))
    s.start()
    yield s
    s.stop()


@pytest.fixture
def conn(server):
    with RawConnection(server.port) as c:
        c.request(b"*2\r\n$7\r\nHOTKEYS\r\n$4\r\nSTOP\r\n")
        c.request(b"*2\r\n$7\r\nHOTKEYS\r\n$5\r\nRESET\r\n")
        c.request(b"*1\r\n$8\r\nFLUSHALL\r\n")
        yield c


def raw(c: RawConnection, *args) -> bytes:
    return c.request(encode(*args))


def value(c: RawConnection, *args):
    return parse(raw(c, *args))[0]


def report(c: RawConnection, resp3: bool = False) -> dict:
    """HOTKEYS GET as a dict (checking the array of one map / flat array shape)."""
    reply = raw(c, "HOTKEYS", "GET")
    assert reply.startswith(b"*1\r\n" + (b"%" if resp3 else b"*")), reply[:20]
    inner = parse(reply)[0][0]
    pairs = inner if resp3 else list(zip(inner[::2], inner[1::2]))
    return {k.decode(): v for k, v in pairs}


def err(text: str) -> bytes:
    return b"-ERR " + text.encode() + b"\r\n"


START_ERRORS = [
    (("HOTKEYS",), err("wrong number of arguments for 'hotkeys' command")),
    (("HOTKEYS", "FOO"), err("unknown subcommand 'FOO'. Try HOTKEYS HELP.")),
    (("HOTKEYS", "START"), err("METRICS parameter is required")),
    (("HOTKEYS", "START", "METRICS"), err("METRICS parameter is required")),
    (("HOTKEYS", "START", "COUNT", "1"), err("METRICS parameter is required")),
    (("HOTKEYS", "START", "METRICS", "0"), err("METRICS count must be > 0 and <= 2")),
    (("HOTKEYS", "START", "METRICS", "-1", "CPU"), err("METRICS count must be > 0 and <= 2")),
    (("HOTKEYS", "START", "METRICS", "3", "CPU", "NET"), err("METRICS count must be > 0 and <= 2")),
    (("HOTKEYS", "START", "METRICS", "x", "CPU"), err("METRICS count must be > 0 and <= 2")),
    (("HOTKEYS", "START", "METRICS", "1"), err("METRICS count does not match number of metric types provided")),
    (("HOTKEYS", "START", "METRICS", "2", "CPU"), err("METRICS count does not match number of metric types provided")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "NET"), err("syntax error")),
    (("HOTKEYS", "START", "METRICS", "1", "GPU"), err("METRICS no valid metrics passed. Supported: CPU|NET")),
    (("HOTKEYS", "START", "METRICS", "2", "GPU", "NYET"), err("METRICS no valid metrics passed. Supported: CPU|NET")),
    (("HOTKEYS", "START", "METRICS", "2", "CPU", "cpu"), err("METRICS CPU defined more than once!")),
    (("HOTKEYS", "START", "METRICS", "2", "NET", "NET"), err("METRICS NET defined more than once!")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT", "0"), err("COUNT must be between 1 and 64")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT", "65"), err("COUNT must be between 1 and 64")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT", "ten"), err("COUNT must be between 1 and 64")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "DURATION", "0"), err("DURATION must be between 1 and 1000000")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "DURATION", "1000001"), err("DURATION must be between 1 and 1000000")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "SAMPLE", "0"), err("SAMPLE ratio must be positive")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "SAMPLE", "2147483648"), err("SAMPLE ratio must be positive")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "SLOTS", "1", "0"), err("SLOTS parameter cannot be used in non-cluster mode")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "SLOTS"), err("syntax error")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT"), err("syntax error")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "BOGUS", "1"), err("syntax error")),
    (("HOTKEYS", "START", "METRICS", "1", "CPU", "COUNT", "5", "COUNT", "0"), err("COUNT must be between 1 and 64")),
    (("HOTKEYS", "STOP", "x"), err("wrong number of arguments for 'hotkeys|stop' command")),
    (("HOTKEYS", "GET", "x"), err("wrong number of arguments for 'hotkeys|get' command")),
    (("HOTKEYS", "RESET", "x"), err("wrong number of arguments for 'hotkeys|reset' command")),
    (("HOTKEYS", "HELP", "x"), err("wrong number of arguments for 'hotkeys|help' command")),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_start_errors(conn, protocol):
    raw(conn, "HELLO", protocol)
    for cmd, expected in START_ERRORS:
        assert raw(conn, *cmd) == expected, cmd
    # None of them started a session.
    assert raw(conn, "HOTKEYS", "GET") == (b"_\r\n" if protocol == 3 else b"$-1\r\n")


@pytest.mark.parametrize("protocol", [2, 3])
def test_lifecycle(conn, protocol):
    raw(conn, "HELLO", protocol)
    null = b"_\r\n" if protocol == 3 else b"$-1\r\n"
    assert raw(conn, "HOTKEYS", "GET") == null
    assert raw(conn, "HOTKEYS", "STOP") == null
    assert raw(conn, "HOTKEYS", "RESET") == b"+OK\r\n"
    assert raw(conn, "hotkeys", "start", "metrics", "1", "cpu") == b"+OK\r\n"
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "NET") == err("hotkey tracking session already in progress")
    assert raw(conn, "HOTKEYS", "RESET") == err("hotkey tracking session in progress, stop tracking first")
    assert report(conn, protocol == 3)["tracking-active"] == 1
    assert raw(conn, "HOTKEYS", "STOP") == b"+OK\r\n"
    assert raw(conn, "HOTKEYS", "STOP") == null
    assert report(conn, protocol == 3)["tracking-active"] == 0
    # A stopped session is replaced by a new START.
    assert raw(conn, "HOTKEYS", "START", "METRICS", "2", "GPU", "NET") == b"+OK\r\n"
    r = report(conn, protocol == 3)
    assert "by-net-bytes" in r and "by-cpu-time-us" not in r
    assert raw(conn, "HOTKEYS", "STOP") == b"+OK\r\n"
    assert raw(conn, "HOTKEYS", "RESET") == b"+OK\r\n"
    assert raw(conn, "HOTKEYS", "GET") == null


def set_bytes(key: str, val: str) -> int:
    """What `SET key val` counts: its request as RESP and its +OK."""
    return len(encode("SET", key, val)) + len(b"+OK\r\n")


@pytest.mark.parametrize("protocol", [2, 3])
def test_net_report(conn, protocol):
    raw(conn, "HELLO", protocol)
    before = int(time.time() * 1000)
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "NET") == b"+OK\r\n"
    for _ in range(3):
        raw(conn, "SET", "hot", "x" * 100)
    raw(conn, "SET", "warm", "v")
    raw(conn, "PING")  # no key: not counted
    assert raw(conn, "GET", "hot") == b"$100\r\n" + b"x" * 100 + b"\r\n"
    hot = 3 * set_bytes("hot", "x" * 100) + len(encode("GET", "hot")) + len(b"$100\r\n") + 100 + 2
    warm = set_bytes("warm", "v")
    assert raw(conn, "HOTKEYS", "STOP") == b"+OK\r\n"
    r = report(conn, protocol == 3)
    assert list(r) == ["tracking-active", "sample-ratio", "selected-slots", "all-commands-all-slots-us",
                       "net-bytes-all-commands-all-slots", "collection-start-time-unix-ms",
                       "collection-duration-ms", "total-net-bytes", "by-net-bytes"]
    assert r["tracking-active"] == 0 and r["sample-ratio"] == 1
    assert r["selected-slots"] == [[0, 16383]]
    assert r["net-bytes-all-commands-all-slots"] == hot + warm
    assert r["total-net-bytes"] == hot + warm
    assert r["by-net-bytes"] == [b"hot", hot, b"warm", warm]
    assert isinstance(r["all-commands-all-slots-us"], int) and r["all-commands-all-slots-us"] >= 0
    assert before <= r["collection-start-time-unix-ms"] <= int(time.time() * 1000)
    assert 0 <= r["collection-duration-ms"] < 10_000


def test_cpu_report_and_count(conn):
    raw(conn, "RPUSH", "biglist", *range(2000))
    assert raw(conn, "HOTKEYS", "START", "METRICS", "2", "NET", "CPU", "COUNT", "2") == b"+OK\r\n"
    for _ in range(20):
        raw(conn, "LRANGE", "biglist", 0, -1)
    for key in ("a", "b", "c"):
        raw(conn, "SET", key, "v" * (10 if key == "a" else 1))
    r = report(conn)
    assert r["tracking-active"] == 1
    keys = list(r)
    assert keys.index("total-cpu-time-user-ms") < keys.index("total-cpu-time-sys-ms") < keys.index(
        "total-net-bytes") < keys.index("by-cpu-time-us") < keys.index("by-net-bytes")
    assert r["total-cpu-time-user-ms"] >= 0 and r["total-cpu-time-sys-ms"] >= 0
    cpu = r["by-cpu-time-us"]
    assert cpu[0] == b"biglist" and cpu[1] > 0 and len(cpu) <= 4
    net = r["by-net-bytes"]
    # COUNT 2: the two heaviest by bytes, heaviest first.
    assert len(net) == 4 and net[0] == b"biglist" and net[2] == b"a"
    assert r["all-commands-all-slots-us"] >= cpu[1]
    assert raw(conn, "HOTKEYS", "STOP") == b"+OK\r\n"


def test_keys_share_a_command(conn):
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "NET") == b"+OK\r\n"
    raw(conn, "MSET", "k1", "1", "k2", "2", "k3", "3")
    total = len(encode("MSET", "k1", "1", "k2", "2", "k3", "3")) + 5
    r = report(conn)
    share = total // 3
    assert sorted(zip(r["by-net-bytes"][::2], r["by-net-bytes"][1::2])) == [(b"k1", share), (b"k2", share), (b"k3", share)]
    assert r["total-net-bytes"] == 3 * share
    assert r["net-bytes-all-commands-all-slots"] == total


def test_transactions_and_scripts(conn):
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "NET") == b"+OK\r\n"
    conn.request(encode("MULTI") + encode("SET", "t1", "a") + encode("SET", "t2", "b") + encode("EXEC"), 4)
    # The script's own calls count in the EVAL (its key), not apart.
    raw(conn, "EVAL", "redis.call('set', KEYS[1], 'v'); redis.call('set', 'inner', 'v')", 1, "s1")
    r = report(conn)
    net = dict(zip(r["by-net-bytes"][::2], r["by-net-bytes"][1::2]))
    assert net[b"t1"] == set_bytes("t1", "a") and net[b"t2"] == set_bytes("t2", "b")
    script = encode("EVAL", "redis.call('set', KEYS[1], 'v'); redis.call('set', 'inner', 'v')", 1, "s1")
    assert net[b"s1"] == len(script) + len(b"$-1\r\n")
    assert b"inner" not in net


def test_duration_stops_tracking(conn):
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "CPU", "DURATION", "1") == b"+OK\r\n"
    deadline = time.monotonic() + 10
    while report(conn)["tracking-active"] == 1:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r = report(conn)
    assert r["collection-duration-ms"] == 1000
    assert raw(conn, "HOTKEYS", "STOP") == b"$-1\r\n"
    raw(conn, "SET", "late", "v")
    assert report(conn)["by-cpu-time-us"] == []
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "CPU") == b"+OK\r\n"


def test_sample(conn):
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "NET", "SAMPLE", "1000000000") == b"+OK\r\n"
    for i in range(50):
        raw(conn, "SET", f"s{i}", "v")
    r = report(conn)
    assert r["sample-ratio"] == 1000000000
    # Sampled commands only reach the list; every command counts in the totals, and with no
    # SLOTS there are no selected-slot fields.
    assert r["net-bytes-all-commands-all-slots"] == sum(set_bytes(f"s{i}", "v") for i in range(50))
    assert len(r["by-net-bytes"]) <= 2 and r["total-net-bytes"] <= set_bytes("s10", "v")
    assert "net-bytes-sampled-commands-selected-slots" not in r
    raw(conn, "HOTKEYS", "STOP")
    raw(conn, "HOTKEYS", "RESET")
    assert raw(conn, "HOTKEYS", "START", "METRICS", "1", "NET", "SAMPLE", "1") == b"+OK\r\n"
    raw(conn, "SET", "s", "v")
    assert report(conn)["by-net-bytes"] == [b"s", set_bytes("s", "v")]


def test_help(conn):
    lines = value(conn, "HOTKEYS", "HELP")
    assert lines[0] == b"HOTKEYS <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[1].startswith(b"START <METRICS count [CPU] [NET]> [COUNT k]")
    assert lines[-2:] == [b"HELP", b"    Print this help."] and len(lines) == 24


def test_command_info_and_docs(server):
    c = make_client(server)
    c.response_callbacks = {}
    info = c.execute_command("COMMAND", "INFO", "hotkeys")[0]
    assert info[:7] == [b"hotkeys", -2, [], 0, 0, 0, [b"@slow"]]
    subs = {s[0]: s for s in info[9]}
    assert set(subs) == {b"hotkeys|start", b"hotkeys|stop", b"hotkeys|get", b"hotkeys|reset", b"hotkeys|help"}
    assert subs[b"hotkeys|start"][:7] == [b"hotkeys|start", -2, [b"admin", b"noscript"], 0, 0, 0,
                                          [b"@admin", b"@slow", b"@dangerous"]]
    assert subs[b"hotkeys|get"][1] == 2
    docs = c.execute_command("COMMAND", "DOCS", "hotkeys|start")
    start = dict(zip(docs[1][::2], docs[1][1::2]))
    assert start[b"since"] == b"8.6.0"
    names = [dict(zip(a[::2], a[1::2]))[b"name"] for a in start[b"arguments"]]
    assert names == [b"metrics", b"k", b"seconds", b"ratio", b"slots"]
    c.close()


@pytest.fixture(scope="module", params=KINDS)
def cluster_node(request, tmp_path_factory):
    """One cluster-enabled node serving every slot (cluster state ok)."""
    kind = request.param
    node = Node("goblin" if kind == "goblin" else "redis", binary(kind), [], tmp_path_factory.mktemp("hk-cluster"))
    node.start()
    c = node.client()
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
    deadline = time.monotonic() + 10
    while b"cluster_state:ok" not in c.execute_command("CLUSTER", "INFO"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    c.close()
    yield node
    node.stop()


def test_slots_in_cluster_mode(cluster_node):
    with RawConnection(cluster_node.port) as c:
        c.request(encode("HOTKEYS", "STOP") + encode("HOTKEYS", "RESET"), 2)
        for cmd, expected in [
            (("SLOTS", "2", "0"), "not enough slot numbers provided"),
            (("SLOTS", "2", "0", "0"), "duplicate slot number"),
            (("SLOTS", "1", "0", "SLOTS", "1", "5"), "SLOTS parameter already specified"),
            (("SLOTS", "1", "-1"), "Invalid or out of range slot"),
            (("SLOTS", "1", "16384"), "Invalid or out of range slot"),
            (("SLOTS", "1", "abc"), "Invalid or out of range slot"),
            (("SLOTS", "0", "1"), "SLOTS count must be between 1 and 16384"),
            (("SLOTS", "16385", "1"), "SLOTS count must be between 1 and 16384"),
            # Every slot's range is checked before any duplicate (Redis sorts, then looks).
            (("SLOTS", "3", "0", "0", "16384"), "Invalid or out of range slot"),
            (("SLOTS", "3", "7", "7", "x"), "Invalid or out of range slot"),
        ]:
            assert raw(c, "HOTKEYS", "START", "METRICS", "1", "CPU", *cmd) == err(expected), cmd
        # Unordered slots come back as sorted ranges.
        assert raw(c, "HOTKEYS", "START", "METRICS", "1", "CPU", "SLOTS", "6", "10", "5", "1", "0", "6", "2") == b"+OK\r\n"
        raw(c, "HOTKEYS", "STOP")
        assert report(c)["selected-slots"] == [[0, 2], [5, 6], [10]]
        # Only keys of the selected slots reach the list; the totals count all.
        in_slot = value(c, "CLUSTER", "KEYSLOT", "{06S}key")
        other = value(c, "CLUSTER", "KEYSLOT", "{zzz}key")
        assert in_slot != other
        assert raw(c, "HOTKEYS", "START", "METRICS", "1", "NET", "SLOTS", "1", in_slot) == b"+OK\r\n"
        raw(c, "SET", "{06S}key", "v")
        raw(c, "SET", "{zzz}key", "v")
        r = report(c)
        assert r["selected-slots"] == [[in_slot]]
        assert r["by-net-bytes"] == [b"{06S}key", set_bytes("{06S}key", "v")]
        assert r["net-bytes-all-commands-selected-slots"] == set_bytes("{06S}key", "v")
        assert r["net-bytes-all-commands-all-slots"] == set_bytes("{06S}key", "v") + set_bytes("{zzz}key", "v")
        assert "all-commands-selected-slots-us" in r and "sampled-commands-selected-slots-us" not in r
        raw(c, "HOTKEYS", "STOP")
        # SAMPLE with SLOTS adds the sampled fields.
        assert raw(c, "HOTKEYS", "START", "METRICS", "2", "CPU", "NET", "SAMPLE", "10", "SLOTS", "1", "0") == b"+OK\r\n"
        keys = list(report(c))
        assert keys[3:9] == ["sampled-commands-selected-slots-us", "all-commands-selected-slots-us",
                             "all-commands-all-slots-us", "net-bytes-sampled-commands-selected-slots",
                             "net-bytes-all-commands-selected-slots", "net-bytes-all-commands-all-slots"]
        raw(c, "HOTKEYS", "STOP")
        # Without SLOTS, the node's own slots; a slot it does not serve is refused.
        assert value(c, "CLUSTER", "DELSLOTS", 16383) == b"OK"
        assert raw(c, "HOTKEYS", "START", "METRICS", "1", "CPU", "SLOTS", "1", "16383") == err(
            "slot 16383 not handled by this node")
        assert raw(c, "HOTKEYS", "START", "METRICS", "1", "CPU", "SLOTS", "3", "4", "4", "16383") == err(
            "slot 16383 not handled by this node")
        assert raw(c, "HOTKEYS", "START", "METRICS", "1", "CPU") == b"+OK\r\n"
        assert report(c)["selected-slots"] == [[0, 16382]]
        raw(c, "HOTKEYS", "STOP")


def test_acl_categories(server):
    with RawConnection(server.port) as admin:
        assert raw(admin, "ACL", "SETUSER", "hk", "on", "nopass", "+@all", "-@dangerous") == b"+OK\r\n"
        dangerous = set(value(admin, "ACL", "CAT", "dangerous"))
        assert {b"hotkeys|start", b"hotkeys|stop", b"hotkeys|get", b"hotkeys|reset"} <= dangerous
        assert b"hotkeys|help" not in dangerous
        try:
            with RawConnection(server.port) as c:
                assert raw(c, "AUTH", "hk", "x") == b"+OK\r\n"
                assert raw(c, "HOTKEYS", "GET") == (
                    b"-NOPERM User hk has no permissions to run the 'hotkeys|get' command\r\n")
                assert raw(c, "HOTKEYS", "HELP").startswith(b"*24\r\n")
        finally:
            raw(admin, "ACL", "DELUSER", "hk")
