"""The pieces of a switch-over, compared with Debian's redis-server 7.0: CLIENT PAUSE / UNPAUSE
(which commands a write pause holds, held commands run when it lifts, expiry held meanwhile),
FAILOVER between a Goblin master and a Redis replica and the reverse (success, ABORT, TIMEOUT,
TO with FORCE), SHUTDOWN waiting for lagging replicas (and ABORT), and the replica-announce
settings as INFO replication and ROLE show them.

A held command is recognised by the server itself: CLIENT LIST shows its client with the `b`
flag (Redis's blocked-by-pause), so no test decides by a sleep.
"""

from __future__ import annotations

import socket
import time

import pytest

import resp
from harness import make_client


def wait_for(cond, timeout: float = 20.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def client_flags(admin, client_id: int) -> str:
    for line in admin.execute_command("CLIENT", "LIST", "ID", client_id).decode().splitlines():
        fields = dict(f.split("=", 1) for f in line.split(" ") if "=" in f)
        return fields.get("flags", "")
    return ""


def take_available(conn: resp.RawConnection) -> list:
    """The replies already received (waiting at most a moment for bytes in flight)."""
    conn.sock.settimeout(0.05)
    try:
        while True:
            chunk = conn.sock.recv(1 << 16)
            if not chunk:
                break
            conn.buf += chunk
    except (socket.timeout, BlockingIOError):
        pass
    replies, rest = resp.split_replies(bytes(conn.buf))
    conn.buf = bytearray(rest)
    return replies


def outcome_under_pause(server, mode: str, request: bytes, replies: int) -> tuple:
    """Sends `request` (expecting `replies` replies) under CLIENT PAUSE `mode`: the replies
    that came while paused, whether the client was held, and the replies after UNPAUSE."""
    admin = make_client(server)
    with resp.RawConnection(server.port) as conn:
        cid = int(conn.request(b"CLIENT ID\r\n")[1:-2])
        assert admin.execute_command("CLIENT", "PAUSE", 100000, mode) == b"OK"
        try:
            conn.send(request)
            before: list = []

            def settled():
                before.extend(take_available(conn))
                return len(before) >= replies or "b" in client_flags(admin, cid)

            wait_for(settled, what="the reply or the hold")
            held = len(before) < replies
            before.extend(take_available(conn))
        finally:
            admin.execute_command("CLIENT", "UNPAUSE")
        after = resp.split_replies(conn.read_replies(replies - len(before)))[0] if held else []
    admin.close()
    return before, held, after


def command(*args: bytes) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


WRITE_PAUSE_CASES = [
    (b"GET k\r\n", 1),
    (b"SET k v\r\n", 1),
    (b"SET k\r\n", 1),  # arity errors are answered at once
    (b"NOSUCHCOMMAND\r\n", 1),
    (b"PUBLISH ch m\r\n", 1),
    (b"EVAL \"return 1\" 0\r\n", 1),
    (command(b"EVAL", b"#!lua flags=no-writes\nreturn 1", b"0"), 1),
    (command(b"EVAL", b"#!lua\nreturn 1", b"0"), 1),
    (command(b"EVAL_RO", b"#!lua\nreturn 1", b"0"), 1),
    (b"EVAL_RO \"return 1\" 0\r\n", 1),
    (b"EVALSHA e0e1f9fabfc9d4800c877a703b823ac0578ff8db 0\r\n", 1),
    (b"MULTI\r\nGET k\r\nEXEC\r\n", 3),
    (b"MULTI\r\nSET k v\r\nEXEC\r\n", 3),
    (b"INCR n\r\nGET n\r\n", 2),
    (b"PING\r\n", 1),
]


@pytest.mark.parametrize("request_bytes,replies", WRITE_PAUSE_CASES)
def test_a_write_pause_holds_what_redis_holds(clean, request_bytes, replies):
    r, g = (outcome_under_pause(s, "WRITE", request_bytes, replies) for s in clean)
    assert r == g


def held_for(server, setup: list, request: bytes) -> tuple[bytes, float]:
    """Runs the `setup` commands in one transaction (a pause of everything holds the
    connection that asked for it too), then `request` on another connection: its reply and
    how long it took."""
    admin = make_client(server)
    with resp.RawConnection(server.port) as conn:
        pipe = admin.pipeline(transaction=True)
        for cmd in setup:
            pipe.execute_command(*cmd)
        pipe.execute()
        started = time.monotonic()
        reply = conn.request(request)
        took = time.monotonic() - started
    admin.close()
    return reply, took


@pytest.mark.parametrize("request_bytes", [b"GET k\r\n", b"PING\r\n"])
def test_a_pause_of_everything_holds_reads_too(clean, request_bytes):
    r, g = (held_for(s, [("CLIENT", "PAUSE", 400, "ALL")], request_bytes) for s in clean)
    assert r[0] == g[0]
    assert r[1] >= 0.3 and g[1] >= 0.3


def test_pause_all_is_not_lightened_by_a_later_write_pause(clean):
    setup = [("CLIENT", "PAUSE", 400, "ALL"), ("CLIENT", "PAUSE", 50, "WRITE")]
    r, g = (held_for(s, setup, b"GET k\r\n") for s in clean)
    assert r[0] == g[0] == b"$-1\r\n"
    assert r[1] >= 0.3 and g[1] >= 0.3


def test_client_pause_errors_as_redis(both):
    both.err("CLIENT", "PAUSE", 100, "READ")
    both.err("CLIENT", "PAUSE", -1)
    both.err("CLIENT", "PAUSE", "abc")
    both.err("CLIENT", "PAUSE", "abc", "NOPE")
    both.err("CLIENT", "PAUSE", 100, "WRITE", "extra")
    both.err("CLIENT", "PAUSE")
    both.err("CLIENT", "UNPAUSE", "extra")
    assert both("CLIENT", "PAUSE", 0) == b"OK"
    assert both("CLIENT", "UNPAUSE") == b"OK"


def test_the_pause_ends_by_itself_and_held_commands_run_in_order(clean):
    for server in clean:
        admin = make_client(server)
        conns = [resp.RawConnection(server.port) for _ in range(3)]
        ids = [int(c.request(b"CLIENT ID\r\n")[1:-2]) for c in conns]
        assert admin.execute_command("CLIENT", "PAUSE", 400, "WRITE") == b"OK"
        started = time.monotonic()
        for i, c in enumerate(conns):
            c.send(b"RPUSH order %d\r\n" % i)
            wait_for(lambda: "b" in client_flags(admin, ids[i]), what="the hold")
        for i, c in enumerate(conns):
            assert c.read_replies(1) == b":%d\r\n" % (i + 1)
        assert time.monotonic() - started >= 0.35, server
        assert admin.lrange("order", 0, -1) == [b"0", b"1", b"2"]
        for c in conns:
            c.close()
        admin.close()


def test_a_write_pause_holds_expiry(clean):
    seen = []
    for server in clean:
        admin = make_client(server)
        admin.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        admin.set("gone", "v", px=100)
        admin.set("kept", "v")
        admin.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
        try:
            time.sleep(0.2)
            # Expired: it reads as missing, but stays while the pause holds expiry.
            got = (admin.get("gone"), admin.exists("gone"), admin.dbsize())
        finally:
            admin.execute_command("CLIENT", "UNPAUSE")
        admin.get("gone")
        seen.append((got, admin.dbsize()))
        admin.close()
    assert seen[0] == seen[1] == ((None, 0, 2), 1)
