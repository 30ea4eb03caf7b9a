"""Behaviours Redis's own suite checks (issue 33), compared with Redis: EXEC does not count
as failed for its commands' errors; CLIENT UNBLOCK ... ERROR counts in errorstats and as a
failed call of the blocked command; nothing expires while an AOF loads (an EXPIRE in the past
sets the time, a later write keeps the key); a bad AOF's last log line is Redis's."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import redis

from harness import Both, free_port, info_of, make_client, start_pair
from test_hyperloglog import both72, pair72  # noqa: F401 (the fixtures: Redis 7.2.4 and Goblin)
from test_aof import start
from test_aof_deletions import KINDS
from test_persistence import procs  # noqa: F401 (the fixture)
from aof_stream import parse_commands


def commandstat(c: redis.Redis, name: str) -> str:
    """calls, rejected_calls and failed_calls of one command (usec are timings)."""
    for line in c.execute_command("INFO", "commandstats").decode().splitlines():
        if line.startswith(f"cmdstat_{name}:"):
            fields = dict(f.split("=") for f in line.split(":", 1)[1].split(","))
            return f"calls={fields['calls']},rejected={fields['rejected_calls']}," \
                   f"failed={fields['failed_calls']}"
    return ""


def errorstats(c: redis.Redis) -> list[str]:
    return c.execute_command("INFO", "errorstats").decode().splitlines()[1:]


def test_exec_is_not_failed_by_its_commands_errors(both):
    both.ok("CONFIG", "RESETSTAT")
    both.ok("MULTI")
    both("SET", "a", "b")
    both("AUTH", "a")
    both("EXEC")
    stats = [[commandstat(c, n) for n in ("set", "auth", "exec")] for c in both.clients()]
    assert stats[0] == stats[1]
    assert stats[1][2] == "calls=1,rejected=0,failed=0"
    # Redis 7.2.4's suite counts the one AUTH error (Debian's 7.0 also counts redis-py's
    # CLIENT SETINFO, a 7.2 command).
    assert errorstats(both.goblin) == ["errorstat_ERR:count=1"]
    both.err("EXEC")
    assert commandstat(both.redis, "exec") == commandstat(both.goblin, "exec")


def test_client_unblock_error_counts_as_an_error(servers, both):
    both.ok("CONFIG", "RESETSTAT")
    seen = []
    for server, c in zip(servers, both.clients()):
        blocked = make_client(server)
        bid = blocked.client_id()
        result = []
        t = threading.Thread(target=lambda: result.append(
            both._outcome(lambda: blocked.execute_command("BLPOP", "list1", 0))))
        t.start()
        deadline = time.monotonic() + 5
        while info_of(c, "clients")["blocked_clients"] != 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert c.execute_command("CLIENT", "UNBLOCK", bid, "ERROR") == 1
        t.join()
        blocked.close()
        unblocked = [line for line in errorstats(c) if "UNBLOCKED" in line]
        seen.append([str(result[0]), commandstat(c, "blpop"), unblocked])
    assert seen[0] == seen[1]
    assert seen[1][1] == "calls=1,rejected=0,failed=1"
    # Debian's 7.0 also counts redis-py's CLIENT SETINFO as errors; 7.2.4 as Goblin.
    assert info_of(both.goblin, "stats")["total_error_replies"] == 1


def write_aof(workdir, commands: list[list[bytes]]) -> None:
    d = workdir / "appendonlydir"
    d.mkdir(parents=True)
    (d / "appendonly.aof.manifest").write_text("file appendonly.aof.1.incr.aof seq 1 type i\n")
    out = bytearray()
    for argv in commands:
        out += b"*%d\r\n" % len(argv)
        for a in argv:
            out += b"$%d\r\n%s\r\n" % (len(a), a)
    (d / "appendonly.aof.1.incr.aof").write_bytes(bytes(out))


def test_nothing_expires_while_an_aof_loads(procs, tmp_path):
    """Redis's integration/aof 'AOF+EXPIRE: List should be empty'."""
    got = {}
    for kind in KINDS:
        write_aof(tmp_path / kind, [[b"RPUSH", b"list", b"foo"], [b"PEXPIREAT", b"list", b"1000"],
                                   [b"RPUSH", b"list", b"bar"]])
        c = start(procs, kind, tmp_path / kind, "--aof-load-truncated", "no").client()
        got[kind] = (c.llen("list"), c.exists("list"))
    assert got["goblin"] == got["redis"] == (0, 0)


def test_a_bad_aof_ends_with_redis_line(procs, tmp_path):
    """Redis's integration/aof 'Bad format: Server should have logged an error': the last
    line before the exit."""
    last = {}
    for kind in KINDS:
        workdir = tmp_path / kind
        write_aof(workdir, [[b"SET", b"foo", b"hello"]])
        with open(workdir / "appendonlydir" / "appendonly.aof.1.incr.aof", "ab") as f:
            f.write(b"!!!*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$5\r\nhello\r\n")
        p = start(procs, kind, workdir, "--aof-load-truncated", "yes", expect_up=False)
        assert p.wait() == 1
        line = p.output().strip().splitlines()[-1]
        last[kind] = line.split(" ", 5)[-1]
    assert last["goblin"] == last["redis"]
    assert last["goblin"].startswith("# Bad file format reading the append only file")


def aof_on(both: Both) -> None:
    """Turns the AOF on for both servers and waits for the rewrite that starts it."""
    both.ok("CONFIG", "SET", "appendonly", "yes")
    for server, c in zip(both.pair, both.clients()):
        deadline = time.monotonic() + 10
        while info_of(c, "persistence")["aof_rewrite_in_progress"] or \
                info_of(c, "persistence")["aof_rewrite_scheduled"]:
            assert time.monotonic() < deadline, server
            time.sleep(0.05)


def test_getex_propagates_every_expiry_as_pexpireat(both72):
    """Redis 7.2 writes GETEX with EX, PX, EXAT or PXAT to the AOF as PEXPIREAT (Debian's
    7.0 kept PXAT as given): compared with Redis 7.2.4's AOF."""
    from aof_stream import incr_stream

    aof_on(both72)
    at = int(time.time() * 1000) + 100_000_000
    both72.ok("SET", "foo", "bar")
    for option, value in (("PXAT", at), ("EXAT", at // 1000), ("PX", 100_000_000)):
        both72("GETEX", "foo", option, value)
    both72.ok("CONFIG", "SET", "appendonly", "no")
    streams = []
    for server in both72.pair:
        cmds = [cmd for cmd in incr_stream(server.workdir) if cmd[0].lower() == b"pexpireat"]
        streams.append([cmd[:2] for cmd in cmds])
    assert streams[0] == streams[1] == [[b"PEXPIREAT", b"foo"]] * 3


@pytest.fixture(scope="module")
def own_pair(tmp_path_factory):
    """A pair of its own: these cases turn the servers into replicas, or pause them."""
    pair = start_pair(tmp_path_factory, "--enable-debug-command", "yes")
    yield pair
    pair.stop()


def test_exec_refused_when_the_server_turned_stale_after_queuing(own_pair):
    """unit/multi: EXEC checks the queued commands' flags against the server's state at EXEC
    (a replica whose link is down refuses GET and PING with replica-serve-stale-data no)."""
    both = Both(own_pair)
    admin = Both(own_pair)
    both.config_set("replica-serve-stale-data", "no")
    try:
        both.ok("SET", "xx", 1)
        for queued in ("GET", "PING"):
            both.ok("MULTI")
            both(queued, *(["xx"] if queued == "GET" else []))
            admin.ok("REPLICAOF", "127.0.0.1", free_port())
            assert "MASTERDOWN" in both.err("EXEC")
            admin.ok("REPLICAOF", "NO", "ONE")
        both.ok("MULTI")
        admin.ok("REPLICAOF", "127.0.0.1", free_port())
        admin.ok("REPLICAOF", "NO", "ONE")
        both("GET", "xx")
        assert both("EXEC") == [b"1"]
    finally:
        admin("REPLICAOF", "NO", "ONE")
        both.restore_config()


def test_paused_clients_count_as_blocked(own_pair):
    """unit/pause: a command held by CLIENT PAUSE counts in INFO blocked_clients (and shows
    the b flag) until it runs; a client that leaves while held is no longer counted."""
    admin = Both(own_pair)
    held = [make_client(s) for s in own_pair]
    readers = [make_client(s) for s in own_pair]
    try:
        admin.ok("CLIENT", "PAUSE", 100000, "WRITE")
        for c in held:
            c.connection.send_command("SET", "foo", "bar")
        for c in readers:
            assert c.get("foo") is None  # reads are not held
        time.sleep(0.3)
        counts = [info_of(c, "clients")["blocked_clients"] for c in admin.clients()]
        assert counts == [1, 1]
        flags = [[line for line in c.execute_command("CLIENT", "LIST").decode().splitlines()
                  if "cmd=set" in line] for c in admin.clients()]
        assert all(len(f) == 1 and "flags=b" in f[0] for f in flags), flags
        for c in held:
            c.connection.disconnect()
        time.sleep(0.3)
        counts = [info_of(c, "clients")["blocked_clients"] for c in admin.clients()]
        assert counts == [0, 0]
        admin.ok("CLIENT", "UNPAUSE")
        admin("GET", "foo")
    finally:
        admin("CLIENT", "UNPAUSE")
        for c in readers:
            c.close()


def test_may_replicate_commands_count_as_writes(own_pair):
    """unit/pause: PUBLISH in a read-only script is refused as a write; PFCOUNT and PUBLISH
    are held by a write pause as writes are."""
    both = Both(own_pair)
    assert "Write commands are not allowed from read-only scripts" in both.err(
        "EVAL_RO", "return redis.call('publish','ch','msg')", 0)
    both.err("EVAL", "#!lua flags=no-writes\nreturn redis.call('publish','ch','msg')", 0)
    both.ok("PFADD", "hll", "a")
    both.ok("CLIENT", "PAUSE", 100000, "WRITE")
    try:
        held = [make_client(s) for s in own_pair]
        for c in held:
            c.connection.send_command("PFCOUNT", "hll")
        time.sleep(0.3)
        assert [info_of(c, "clients")["blocked_clients"] for c in both.clients()] == [1, 1]
        both.ok("CLIENT", "UNPAUSE")
        assert [c.connection.read_response() for c in held] == [1, 1]
    finally:
        both("CLIENT", "UNPAUSE")


def replication_stream(port: int):
    """A socket that asked for SYNC, past the snapshot: what follows is the stream."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"SYNC\r\n")
    f = s.makefile("rb")
    while True:
        line = f.readline()
        if line.strip():
            break
    assert line.startswith(b"$"), line
    f.read(int(line[1:]))
    return s, f


def test_no_ping_when_a_replica_attaches(own_pair):
    """unit/multi and others read the stream right after attaching, having set
    repl-ping-replica-period 3600: the first thing in it is the first write, not a PING."""
    both = Both(own_pair)
    both.config_set("repl-ping-replica-period", 3600)
    firsts = []
    try:
        for server, c in zip(own_pair, both.clients()):
            s, f = replication_stream(server.port)
            time.sleep(1.2)  # a replication cron or two
            c.set("foo", "bar")
            s.settimeout(5)
            lines = [f.readline() for _ in range(3)]
            firsts.append(lines)
            s.close()
    finally:
        both.restore_config()
    assert firsts[0] == firsts[1]
    assert firsts[1] == [b"*2\r\n", b"$6\r\n", b"SELECT\r\n"]


LIBRARY = """#!lua name=stale
redis.register_function{function_name='f1', callback=function() return 'hello' end, flags={'no-writes'}}
redis.register_function{function_name='f2', callback=function() return 'hello' end, flags={'allow-stale', 'no-writes'}}
redis.register_function{function_name='f3', callback=function() return redis.call('get', 'x') end, flags={'allow-stale', 'no-writes'}}
redis.register_function{function_name='f4', callback=function() return redis.call('ping') end, flags={'allow-stale', 'no-writes'}}
"""


def test_no_writes_functions_run_over_maxmemory(both):
    """unit/functions: no-writes implies allow-oom."""
    both("FUNCTION", "LOAD", "REPLACE", LIBRARY)
    try:
        both.config_set("maxmemory", 1)
        assert both("FCALL", "f1", 1, "k") == b"hello"
        both("FCALL_RO", "f1", 1, "k")
        both.err("EVAL", "return redis.call('set', 'k', 'v')", 1, "k")
    finally:
        both.restore_config()
        both.ok("FUNCTION", "FLUSH")


def test_functions_on_a_stale_replica(own_pair):
    """unit/functions: on a replica whose link is down with replica-serve-stale-data no, a
    function runs only with allow-stale, and then only commands flagged stale."""
    both = Both(own_pair)
    admin = Both(own_pair)
    both("FUNCTION", "LOAD", "REPLACE", LIBRARY)
    both.config_set("replica-serve-stale-data", "no")
    try:
        admin.ok("REPLICAOF", "127.0.0.1", free_port())
        assert "Link with MASTER is down" in both.err("FCALL", "f1", 0)
        assert both("FCALL", "f2", 0) == b"hello"
        assert "Can not execute the command on a stale replica" in both.err("FCALL", "f3", 1, "x")
        both("FCALL", "f4", 0)
    finally:
        admin("REPLICAOF", "NO", "ONE")
        both.restore_config()
        both("FUNCTION", "FLUSH")


def read_stream_commands(s: socket.socket, f, count: int) -> list[list[bytes]]:
    """The next `count` commands of a replication stream (PINGs and newlines included)."""
    data = b""
    s.settimeout(5)
    while True:
        try:
            got = parse_commands(data.lstrip(b"\n"))
            if len(got) >= count:
                return got[:count]
        except (AssertionError, ValueError, IndexError):
            pass
        data += f.read1(4096)


def test_scan_deletes_the_expired_keys_it_meets(own_pair):
    """unit/expire: SCAN deletes the expired keys that match, each propagated as its own DEL
    (no MULTI around them, the read itself not propagated)."""
    both = Both(own_pair)
    both.config_set("repl-ping-replica-period", 3600)
    both.ok("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    streams = []
    try:
        both.ok("FLUSHALL")
        both.ok("SET", "foo1", "bar", "PX", 1)
        both.ok("SET", "foo2", "bar", "PX", 1)
        both.ok("SET", "other", "bar", "PX", 1)
        time.sleep(0.01)
        for server, c in zip(own_pair, both.clients()):
            s, f = replication_stream(server.port)
            c.execute_command("SCAN", 0, "MATCH", "foo*")
            c.execute_command("SET", "done", 1)
            got = read_stream_commands(s, f, 4)
            s.close()
            cmds = [[cmd[0].lower(), *cmd[1:]] for cmd in got]
            # The two DELs come in the order of each server's hash table.
            streams.append([cmds[0], sorted(cmds[1:3]), cmds[3]])
        assert streams[0] == streams[1]
        assert streams[1][1] == [[b"del", b"foo1"], [b"del", b"foo2"]]
        assert both("EXISTS", "other") == 0
    finally:
        both.ok("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        both.restore_config()


def test_publish_goes_down_the_replication_stream(own_pair):
    """unit/multi: PUBLISH and SPUBLISH go to the replicas (so a replica's subscribers get
    the master's messages), inside MULTI too, as the command itself."""
    both = Both(own_pair)
    both.config_set("repl-ping-replica-period", 3600)
    streams = []
    try:
        for server, c in zip(own_pair, both.clients()):
            s, f = replication_stream(server.port)
            c.execute_command("PUBLISH", "bla", "bla")
            p = c.pipeline(transaction=True)
            p.execute_command("PUBLISH", "ch", "in multi")
            p.execute()
            c.execute_command("SPUBLISH", "sh", "x")
            c.execute_command("SET", "done", 1)
            streams.append(read_stream_commands(s, f, 5))
            s.close()
    finally:
        both.restore_config()
    assert streams[0] == streams[1], streams
    assert [cmd[0].upper() for cmd in streams[1]] == [b"SELECT", b"PUBLISH", b"PUBLISH", b"SPUBLISH", b"SET"]
