"""Behaviours Redis's own suite checks in unit/querybuf, unit/pubsub, unit/info, unit/acl,
unit/functions, unit/introspection and unit/cluster/links (issue 33), each compared with a
real Redis.

- The read buffer is trimmed by the cron as Redis's clientsCronResizeQueryBuffer trims it:
  kept at first, trimmed to the recent peak while the client is active, freed after 2 s
  idle; a big argument arriving gets its room as soon as its header is read.
- A lowered maxmemory evicts at once, without waiting for a command, and the `evicted`
  notification goes out.
- INFO's eventloop_* fields and the INFO debug section (Redis 7.2; run against Redis 7.2.4,
  REDIS72_BIN, skipped without it).
- A blocked command served after its user's rules changed is refused (7.2.4); ACL LOAD
  closes every non-default user's connections; the AOF DEBUG LOADAOF replays on a read-only
  replica is applied; `rename-command`; DEBUG CLUSTERLINK KILL; mem_cluster_links counts
  the messages bound for the links (7.2.4).
"""

from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

import pytest

from harness import Pair, make_client

REDIS72_BIN = os.environ.get("REDIS72_BIN", "/work/redis-7.2.4/src/redis-server")


def plain(server):
    """A client without redis-py's reply parsing (INFO and CLIENT LIST as text)."""
    c = make_client(server)
    c.response_callbacks = {}
    return c


def connect(server) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", server.port))
    s.settimeout(5)
    return s


def read_reply(s: socket.socket, expected: bytes) -> bytes:
    """Reads until `expected` bytes arrived (or the socket times out)."""
    got = b""
    while len(got) < len(expected):
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
    return got


def query_buffer(admin, name: str) -> tuple[int, int]:
    """(qbuf + qbuf-free, idle) of the client called `name` in CLIENT LIST."""
    for line in admin.execute_command("CLIENT", "LIST").decode().splitlines():
        fields = dict(f.split("=", 1) for f in line.split(" "))
        if fields["name"] == name:
            return int(fields["qbuf"]) + int(fields["qbuf-free"]), int(fields["idle"])
    raise AssertionError(f"no client {name}")


def test_query_buffer_kept_then_trimmed_to_peak(clean):
    """unit/querybuf's "resized correctly when not idle": a 400 kB SET leaves a big buffer
    (the cron paused), which later small requests trim to their peak, not to nothing."""
    for server in clean:
        admin = plain(server)
        c = make_client(server)
        c.client_setname("test_client")
        admin.config_set("hz", 100)
        admin.execute_command("DEBUG", "PAUSE-CRON", "1")
        try:
            c.set("x", "A" * 400_000)
            big, _ = query_buffer(admin, "test_client")
            assert big > 32768, server
        finally:
            admin.execute_command("DEBUG", "PAUSE-CRON", "0")
        deadline = time.monotonic() + 2
        size = big
        while size >= big and time.monotonic() < deadline:
            c.set("x", "A" * 100)
            size, _ = query_buffer(admin, "test_client")
            time.sleep(0.01)
        assert 0 < size < big, server
        admin.config_set("hz", 10)
        c.close()
        admin.close()


def test_query_buffer_of_a_big_argument_then_freed_when_idle(clean):
    """unit/querybuf's "resized correctly with fat argv": a 1 MB argument announced gets its
    room at once; after more than 2 s idle the buffer is freed."""
    for server in clean:
        admin = plain(server)
        admin.config_set("hz", 100)
        s = connect(server)
        s.sendall(b"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$11\r\ntest_client\r\n")
        assert read_reply(s, b"+OK\r\n") == b"+OK\r\n"
        s.sendall(b"*3\r\n$3\r\nset\r\n$1\r\na\r\n$1000000\r\n")
        time.sleep(0.05)
        size, _ = query_buffer(admin, "test_client")
        assert size >= 1_000_000, server
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            size, idle = query_buffer(admin, "test_client")
            if idle >= 3 and size < 1_000_000:
                break
            time.sleep(0.05)
        assert size < 1_000_000, server
        s.close()
        admin.config_set("hz", 10)
        admin.close()


def test_lowered_maxmemory_evicts_and_notifies_at_once(clean):
    messages = []
    for server in clean:
        admin = make_client(server)
        admin.config_set("notify-keyspace-events", "Ee")
        admin.config_set("maxmemory-policy", "allkeys-lru")
        sub = make_client(server).pubsub()
        sub.psubscribe("*")
        assert sub.get_message(timeout=2)["type"] == "psubscribe"
        admin.set("foo", "bar")
        try:
            admin.config_set("maxmemory", 1)
            # No further command: the eviction does not wait for one.
            msg = sub.get_message(timeout=3)
        finally:
            admin.config_set("maxmemory", 0)
            admin.config_set("maxmemory-policy", "noeviction")
            admin.config_set("notify-keyspace-events", "")
        messages.append(msg and (msg["channel"], msg["data"]))
        sub.close()
        admin.close()
    assert messages[0] == messages[1] == (b"__keyevent@0__:evicted", b"foo")


@pytest.fixture(scope="module")
def pair72(tmp_path_factory):
    """Redis 7.2.4 and Goblin."""
    if not Path(REDIS72_BIN).exists():
        pytest.skip(f"no Redis 7.2.4 at {REDIS72_BIN}")
    pair = Pair(tmp_path_factory.mktemp("small72"), [])
    pair.redis.binary = REDIS72_BIN
    pair.start()
    yield pair
    pair.stop()


def fields(c, section: str) -> dict:
    out = {}
    for line in c.execute_command("INFO", section).decode().splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = int(v) if v.isdigit() else v
    return out


def test_info_eventloop_fields(pair72):
    """unit/info's eventloop and instantaneous metrics: the same fields, in the same place,
    growing as the loop turns (about 10 rounds a second at hz 10 when idle)."""
    names = [
        "eventloop_cycles",
        "eventloop_duration_sum",
        "eventloop_duration_cmd_sum",
        "instantaneous_eventloop_cycles_per_sec",
        "instantaneous_eventloop_duration_usec",
    ]
    for server in pair72:
        c = plain(server)
        keys = list(fields(c, "stats"))
        at = keys.index("reply_buffer_expands")
        assert keys[at + 1 : at + 6] == names, server
        before = fields(c, "stats")
        time.sleep(0.25)
        after = fields(c, "stats")
        for name in names[:3]:
            assert after[name] > before[name] > 0, (server, name)
        assert after["eventloop_cycles"] < before["eventloop_cycles"] + 10, server
        c.execute_command("CONFIG", "RESETSTAT")
        time.sleep(1.7)
        now = fields(c, "stats")
        assert 0 < now["instantaneous_eventloop_cycles_per_sec"] < 15, server
        assert 0 < now["instantaneous_eventloop_duration_usec"] < 22000, server
        c.close()


def test_info_debug_section(pair72):
    """unit/info's debug metrics: a section only `INFO debug` prints, with these fields."""
    shapes = []
    for server in pair72:
        c = plain(server)
        assert "eventloop_duration_aof_sum" not in fields(c, "default")
        assert "eventloop_duration_aof_sum" not in fields(c, "all")
        assert "eventloop_duration_aof_sum" not in fields(c, "everything")
        first = fields(c, "debug")
        time.sleep(0.15)
        second = fields(c, "debug")
        assert second["eventloop_duration_cron_sum"] > first["eventloop_duration_cron_sum"] > 0
        assert second["eventloop_cmd_per_cycle_max"] >= first["eventloop_cmd_per_cycle_max"] > 0
        assert second["eventloop_duration_max"] >= first["eventloop_duration_max"] > 0
        assert second["eventloop_duration_aof_sum"] >= first["eventloop_duration_aof_sum"] >= 0
        text = c.execute_command("INFO", "debug").decode()
        shapes.append([line.split(":")[0] for line in text.splitlines()])
        c.close()
    assert shapes[0] == shapes[1]


ACL_FILE = "user default on nopass ~* &* +@all\nuser alice on nopass ~* &* +@all\n"


@pytest.fixture(scope="module")
def acl_pair(tmp_path_factory):
    """A pair with an ACL file holding the default user and alice (no password)."""
    pair = Pair(tmp_path_factory.mktemp("small-acl"), ["--aclfile", "users.acl"])
    for server in pair:
        (server.workdir / "users.acl").write_text(ACL_FILE)
    pair.start()
    yield pair
    pair.stop()


def test_acl_load_closes_every_other_users_clients(acl_pair):
    """unit/acl's "ACL load and save": ACL LOAD frees every user but the default one with
    their connections (the running one after its reply), even when the file did not change
    them; the default user's connections stay."""
    outcomes = []
    for server in acl_pair:
        alice, other_alice, default = (make_client(server) for _ in range(3))
        for c in (alice, other_alice):
            c.execute_command("AUTH", "alice", "x")
        assert alice.execute_command("ACL", "LOAD") == b"OK"
        seen = []
        for c in (alice, other_alice, default):
            try:
                seen.append(c.execute_command("PING"))
            except Exception as e:  # the connection was closed
                seen.append(type(e).__name__)
            c.close()
        outcomes.append(seen)
    assert outcomes[0] == outcomes[1] == ["ConnectionError", "ConnectionError", True]


def test_blocked_command_refused_when_reprocessed_after_acl_change(pair72):
    """unit/acl's "blocked command gets rejected when reprocessed after permission change"
    (Redis 7.2 runs a served blocked command through its checks again)."""
    outcomes = []
    for server in pair72:
        admin = plain(server)
        admin.execute_command("CONFIG", "RESETSTAT")
        admin.execute_command("ACL", "SETUSER", "psuser", "reset", "on", "nopass", "+@all", "allkeys")
        s = connect(server)
        s.sendall(b"AUTH psuser pspass\r\nBLPOP list1 0\r\n")
        assert read_reply(s, b"+OK\r\n") == b"+OK\r\n"
        deadline = time.monotonic() + 5
        while b"blocked_clients:1" not in admin.execute_command("INFO", "clients"):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        admin.execute_command("ACL", "SETUSER", "psuser", "resetkeys")
        admin.execute_command("LPUSH", "list1", "foo")
        error = s.recv(4096)
        s.sendall(b"PING\r\n")
        pong = read_reply(s, b"+PONG\r\n")
        stats = admin.execute_command("INFO", "commandstats").decode()
        blpop = next(line for line in stats.splitlines() if line.startswith("cmdstat_blpop:"))
        counts = {k: v for k, v in (f.split("=") for f in blpop.split(":", 1)[1].split(","))}
        outcomes.append((error, pong, counts["calls"], counts["rejected_calls"], counts["failed_calls"],
                         admin.execute_command("LLEN", "list1")))
        s.close()
        admin.execute_command("DEL", "list1")
        admin.execute_command("ACL", "DELUSER", "psuser")
        admin.close()
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][0].startswith(b"-NOPERM")


@pytest.fixture
def lone_pair(tmp_path_factory):
    """A pair of its own, for cases that turn the servers into replicas."""
    pair = Pair(tmp_path_factory.mktemp("small-lone"), [])
    pair.start()
    yield pair
    pair.stop()


def wait_rewrite_done(c) -> None:
    deadline = time.monotonic() + 10
    while True:
        info = c.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            return
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_debug_loadaof_on_a_read_only_replica_applies_function_writes(lone_pair):
    """unit/functions' "FUNCTION can processes create, delete and flush commands in AOF when
    doing debug loadaof in read-only slaves": the AOF's writes are not refused READONLY."""
    code = "#!lua name=test\nredis.register_function('test', function() return 'hello' end)"
    lists = []
    for server in lone_pair:
        c = make_client(server)
        c.config_set("appendonly", "yes")
        wait_rewrite_done(c)
        seen = []
        for step in (["FUNCTION", "LOAD", code], ["FUNCTION", "DELETE", "test"],
                     ["FUNCTION", "LOAD", code], ["FUNCTION", "FLUSH"]):
            c.execute_command(*step)
            if step[1] == "LOAD" and len(seen) == 2:
                continue  # the FLUSH comes before the next load
            c.config_set("replica-read-only", "yes")
            c.execute_command("REPLICAOF", "127.0.0.1", "0")
            c.execute_command("DEBUG", "LOADAOF")
            c.execute_command("REPLICAOF", "NO", "ONE")
            seen.append(c.execute_command("FUNCTION", "LIST"))
        lists.append(seen)
        c.close()
    assert lists[0] == lists[1]
    assert lists[1][0] != [] and lists[1][1:] == [[], []]


@pytest.fixture
def renamed_pair(tmp_path_factory):
    pair = Pair(tmp_path_factory.mktemp("small-rename"),
                ["--rename-command", "flushdb", "badger", "--rename-command", "config", ""])
    pair.start()
    yield pair
    pair.stop()


def test_rename_command(renamed_pair):
    """unit/introspection's "CONFIG REWRITE handles rename-command properly" starts with
    `rename-command flushdb badger`: the old name is unknown, the new one runs it; an empty
    new name removes the command."""
    outcomes = []
    for server in renamed_pair:
        c = make_client(server)
        c.set("k", "v")
        seen = []
        for cmd in (["FLUSHDB"], ["config", "get", "port"], ["BADGER", "x"], ["badger"], ["DBSIZE"]):
            try:
                seen.append(c.execute_command(*cmd))
            except Exception as e:
                seen.append(str(e))
        outcomes.append(seen)
        c.close()
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][3:] == [b"OK", 0]


def test_renamed_commands_in_scripts_and_command(renamed_pair):
    """Scripts and COMMAND look names up in the renamed table, as Redis's lookupCommand: a
    script calls FLUSHDB as `badger`, COMMAND INFO / DOCS / GETKEYS answer to the new name
    and show the command's own, COMMAND / COUNT / LIST leave a removed command out."""
    outcomes = []
    for server in renamed_pair:
        c = make_client(server)
        c.set_response_callback("COMMAND", lambda r, **_: r)  # the replies as sent
        seen = []
        for cmd in (
            ["EVAL", "return redis.call('flushdb')", 0],
            ["EVAL", "return redis.call('badger')", 0],
            ["EVAL", "return redis.pcall('config', 'get', 'port')", 0],
            ["EVAL", "return redis.acl_check_cmd('flushdb')", 0],
            ["EVAL", "return redis.acl_check_cmd('badger')", 0],
            ["COMMAND", "INFO", "flushdb", "badger", "config|get", "BADGER"],
            ["COMMAND", "DOCS", "flushdb", "badger", "config"],
            ["COMMAND", "GETKEYS", "flushdb"],
            ["COMMAND", "GETKEYS", "badger"],
        ):
            try:
                seen.append(c.execute_command(*cmd))
            except Exception as e:
                seen.append(str(e))
        names = c.execute_command("COMMAND", "LIST")
        seen.append([n in names for n in (b"flushdb", b"badger", b"config", b"config|get")])
        entries = c.execute_command("COMMAND")
        seen.append(len(entries) == c.execute_command("COMMAND", "COUNT"))
        seen.append(any(e[0] == b"config" for e in entries))
        outcomes.append(seen)
        c.close()
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][1] == b"OK" and outcomes[1][-3:] == [[True, False, False, False], True, False]


@pytest.mark.parametrize("args, why", [
    (["--rename-command", "nosuch", "x"], "No such command in rename-command"),
    (["--rename-command", "get", "set"], "Target command name already exists"),
    (["--rename-command", "get"], "Bad directive or wrong number of arguments"),
])
def test_rename_command_errors_at_start(tmp_path, args, why):
    from harness import GOBLIN_BIN, REDIS_BIN, free_port
    import subprocess

    texts = []
    for binary in (REDIS_BIN, GOBLIN_BIN):
        proc = subprocess.run([binary, *args, "--port", str(free_port()), "--save", ""],
                              cwd=tmp_path, capture_output=True, text=True, timeout=30)
        assert proc.returncode != 0
        out = proc.stdout + proc.stderr
        texts.append([line for line in out.splitlines() if line.startswith((">>>", "Bad", "No such", "Target"))])
    assert texts[0] == texts[1]
    assert texts[1][-1] == why


# --- unit/cluster/links --------------------------------------------------------------------

from test_cluster import goblins, redises  # noqa: E402,F401 (the fixtures)


def error_text(c, *cmd) -> str:
    try:
        c.execute_command(*cmd)
    except Exception as e:
        return str(e)
    return "no error"


def killed_link_publishes(nodes) -> list:
    """DEBUG CLUSTERLINK KILL TO node 1 then PUBLISH in one EXEC on node 0: node 1 misses
    the message (its link and what it held are gone), node 2 gets it; once the link is back
    both get the next one. Also the command's errors."""
    c0 = nodes[0].client()
    subs = [n.client().pubsub() for n in nodes[1:]]
    try:
        ids = [n.client().execute_command("CLUSTER", "MYID").decode() for n in nodes]
        out = [error_text(c0, "DEBUG", "CLUSTERLINK", "KILL", "TO", "f" * 40)]
        for s in subs:
            s.subscribe("linkch")
            s.get_message(timeout=1)
        pipe = c0.pipeline(transaction=True)
        pipe.execute_command("DEBUG", "CLUSTERLINK", "KILL", "TO", ids[1])
        pipe.execute_command("PUBLISH", "linkch", "hello")
        out.append(pipe.execute())
        deadline = time.monotonic() + 20
        while len(c0.execute_command("CLUSTER", "LINKS")) != 4:
            assert time.monotonic() < deadline, "the links did not come back"
            time.sleep(0.1)
        c0.execute_command("PUBLISH", "linkch", "world")
        for s in subs:
            got = []
            deadline = time.monotonic() + 10
            while b"world" not in got and time.monotonic() < deadline:
                m = s.get_message(timeout=0.5)
                if m and m["type"] == "message":
                    got.append(m["data"])
            out.append(got)
        return out
    finally:
        for s in subs:
            s.close()
        c0.close()


def test_debug_clusterlink_kill_matches_redis(goblins, redises):
    theirs, ours = killed_link_publishes(redises), killed_link_publishes(goblins)
    assert ours == theirs
    assert ours[2:] == [[b"world"], [b"hello", b"world"]]


@pytest.fixture(scope="module")
def redises72(tmp_path_factory):
    """A cluster of three Redis 7.2.4 nodes (7.0 counts link memory otherwise)."""
    if not Path(REDIS72_BIN).exists():
        pytest.skip(f"no Redis 7.2.4 at {REDIS72_BIN}")
    from test_cluster import Node, create, stop_all

    nodes = []
    try:
        for i in range(3):
            n = Node("redis", REDIS72_BIN, [], tmp_path_factory.mktemp(f"redis72-{i}"))
            n.start()
            nodes.append(n)
        create(nodes)
        yield nodes
    finally:
        stop_all(nodes)


def test_cluster_links_memory_grows_with_publishes(goblins, redises72):
    """unit/cluster/links' "Link memory increases with publishes": INFO memory inside the
    same EXEC sees the messages bound for the links (Redis 7.2.4's accounting)."""
    for nodes in (redises72, goblins):
        c = nodes[0].client()
        c.response_callbacks = {}
        pipe = c.pipeline(transaction=True)
        pipe.execute_command("INFO", "memory")
        for _ in range(10):
            pipe.execute_command("PUBLISH", "memch", "x" * 10000)
        pipe.execute_command("INFO", "memory")
        replies = pipe.execute()
        before, after = (
            int(re.search(rb"mem_cluster_links:(\d+)", r).group(1)) for r in (replies[0], replies[-1])
        )
        assert after - before > 100_000, nodes[0]
        c.close()


def test_debug_clusterlink_outside_cluster_mode(both):
    both("DEBUG", "CLUSTERLINK", "KILL", "TO", "f" * 40)
