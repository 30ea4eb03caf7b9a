"""Behaviours Redis's own suite checks (issue 33), compared with Redis: EXEC does not count
as failed for its commands' errors; CLIENT UNBLOCK ... ERROR counts in errorstats and as a
failed call of the blocked command; nothing expires while an AOF loads (an EXPIRE in the past
sets the time, a later write keeps the key); a bad AOF's last log line is Redis's."""

from __future__ import annotations

import threading
import time

import redis

from harness import info_of, make_client
from test_hyperloglog import both72, pair72  # noqa: F401 (the fixtures: Redis 7.2.4 and Goblin)
from test_aof import start
from test_aof_deletions import KINDS
from test_persistence import procs  # noqa: F401 (the fixture)


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


def test_getex_propagates_every_expiry_as_pexpireat(both72):
    """Redis 7.2 writes GETEX with EX, PX, EXAT or PXAT to the AOF as PEXPIREAT (Debian's
    7.0 kept PXAT as given): compared with Redis 7.2.4's AOF."""
    from aof_stream import incr_stream

    both72.ok("CONFIG", "SET", "appendonly", "yes")
    for server, c in zip(both72.pair, both72.clients()):
        deadline = time.monotonic() + 10
        while info_of(c, "persistence")["aof_rewrite_in_progress"] or \
                info_of(c, "persistence")["aof_rewrite_scheduled"]:
            assert time.monotonic() < deadline, server
            time.sleep(0.05)
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
