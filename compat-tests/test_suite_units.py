"""Behaviours Redis 7.2.4's own suite checks (issue 33), each compared with a real Redis
(7.2.4 where 7.0 differs):

- A message a client publishes to a channel it listens to follows the command's whole
  reply (EXEC's, a script's), as 7.2's pending push messages (7.0 pushed it at once).
- A paused replica reads its master's stream on but applies none of it until the pause
  lifts (slave_read_repl_offset grows, slave_repl_offset stays).
- A script without flags answers MASTERDOWN on a stale replica; ECHO runs there, SAVE,
  BGSAVE and BGREWRITEAOF do not (Redis's `stale` flags).
- New users carry `sanitize-payload`, as 7.2's ACLCreateUser sets it (7.0 showed nothing).
"""

from __future__ import annotations

import socket
import time

import redis

from harness import free_port
from test_hyperloglog import both72, pair72  # noqa: F401 (the fixtures: Redis 7.2.4 and Goblin)
from test_persistence import procs  # noqa: F401 (the fixture)
from test_replication import repl, start, wait_for, wait_synced


def exchange(port: int, request: bytes, until: bytes) -> bytes:
    """Sends `request` on a new connection and reads until the reply ends with `until`."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    try:
        s.sendall(b"HELLO 3\r\n")
        got = b""
        while not got.endswith(b"$7\r\nmodules\r\n*0\r\n"):
            got += s.recv(4096)
        s.sendall(request)
        got = b""
        while not got.endswith(until):
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
        return got
    finally:
        s.close()


def test_publish_to_self_follows_the_reply(pair72):
    """unit/pubsub's "publish to self inside multi" and "inside script" (RESP3)."""
    script = b"redis.call('ping','abc') redis.call('publish','foo','bar') " \
             b"redis.call('publish','foo','vaz') redis.call('ping','def') return 'bla'"
    request = (
        b"SUBSCRIBE foo\r\n"
        b"MULTI\r\nPING abc\r\nPUBLISH foo bar\r\nPUBLISH foo vaz\r\nPING def\r\nEXEC\r\n"
        + b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(script), script)
        + b"PUBLISH foo last\r\n"
    )
    until = b"$4\r\nlast\r\n"
    replies = [exchange(server.port, request, until) for server in (pair72.redis, pair72.goblin)]
    assert replies[0] == replies[1]
    assert replies[0].endswith(b":1\r\n>3\r\n$7\r\nmessage\r\n$3\r\nfoo\r\n$4\r\nlast\r\n")


def test_paused_replica_holds_its_masters_writes(procs, tmp_path):
    """unit/pause's "Test when replica paused, offset would not grow": CLIENT PAUSE WRITE
    on a replica holds its master's writes (read, not applied) until CLIENT UNPAUSE."""
    seen = []
    for kind in ("redis", "goblin"):
        master = start(procs, kind, tmp_path / kind / "m", "--repl-ping-replica-period", "3600")
        replica = start(procs, kind, tmp_path / kind / "r")
        m, r = master.client(), replica.client()
        r.execute_command("REPLICAOF", "127.0.0.1", master.port)
        m.set("foo", "bar")
        wait_synced(m, r)
        before = repl(m)["master_repl_offset"]
        r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
        m.set("foo2", "bar2")
        target = repl(m)["master_repl_offset"]
        wait_for(lambda: repl(r)["slave_read_repl_offset"] == target, what="the stream read")
        time.sleep(0.2)
        held = (repl(r)["slave_repl_offset"] == before, r.get("foo2"))
        r.execute_command("CLIENT", "UNPAUSE")
        wait_for(lambda: repl(r)["slave_repl_offset"] == target, what="the stream applied")
        seen.append((held, r.get("foo2")))
    assert seen[0] == seen[1] == ((True, None), b"bar2")


def test_script_without_flags_on_a_stale_replica(procs, tmp_path):
    """unit/scripting's "allow-stale shebang flag": with replica-serve-stale-data no and
    the link down, a script without flags gets MASTERDOWN (EVAL itself is flagged stale);
    a command it calls runs only if flagged stale (ECHO is)."""
    scripts = [
        ("return redis.call('get','x')", 1, "x"),
        ("return 1", 0),
        ("#!lua flags=no-writes\nreturn 1", 0),
        ("#!lua flags=allow-stale,no-writes\nreturn 1", 0),
        ("#!lua flags=allow-stale,no-writes\nreturn redis.call('get','x')", 1, "x"),
        ("#!lua flags=allow-stale,no-writes\nreturn redis.call('echo','foobar')", 0),
    ]
    outs = []
    for kind in ("redis", "goblin"):
        c = start(procs, kind, tmp_path / kind, "--replica-serve-stale-data", "no").client()
        c.execute_command("REPLICAOF", "127.0.0.1", free_port())
        got = []
        # Beside the scripts, the commands whose `stale` flag differed: ECHO runs, the
        # saves do not.
        for cmd in [("EVAL", *script) for script in scripts] + [
            ("ECHO", "x"), ("SAVE",), ("BGSAVE",), ("BGREWRITEAOF",)
        ]:
            try:
                got.append(c.execute_command(*cmd))
            except redis.ResponseError as e:
                got.append(str(e))
        outs.append(got)
    assert outs[0] == outs[1]
    assert outs[1][0].startswith("Link with MASTER is down")


def test_new_users_carry_sanitize_payload(both72):
    """unit/acl's "Validate subset of channels is prefixed with resetchannels flag" and
    "ACL SETUSER RESET reverting to default newly created user" (7.2.4)."""
    both72.ok("ACL", "SETUSER", "hpuser", "on", "nopass", "resetchannels", "&foo", "+@all")
    both72.ok("ACL", "SETUSER", "example")
    both72("ACL", "LIST")
    both72("ACL", "GETUSER", "example")
    both72.ok("ACL", "SETUSER", "example", "reset")
    both72("ACL", "LIST")
    both72.ok("ACL", "SETUSER", "example", "skip-sanitize-payload")
    both72("ACL", "GETUSER", "example")
    both72("ACL", "GETUSER", "default")
    for user in ("hpuser", "example"):
        both72("ACL", "DELUSER", user)
