"""Limits: proto-max-bulk-len, the 64 KiB inline and header lines, client-query-buffer-limit,
the normal-class client-output-buffer-limit (lowered under a client already over it too),
and --maxclients (on a pair of its own)."""

import socket
import time

import pytest

import harness
from resp import RawConnection, encode

ONE_MB = 1024 * 1024


def test_bulk_over_proto_max_bulk_len_default(raw):
    assert raw.same(b"*1\r\n$536870913\r\n") == b"-ERR Protocol error: invalid bulk length\r\n"
    assert raw.closed() == (True, True)


def test_bulk_at_proto_max_bulk_len_is_accepted_header(raw):
    # A header at exactly the limit is fine: the server waits for the bytes.
    raw.send(b"*2\r\n$4\r\nECHO\r\n$536870912\r\n")
    assert raw.closed(wait=0.5) == (False, False)


def test_proto_max_bulk_len_lowered(both, raw):
    both.config_set("proto-max-bulk-len", ONE_MB)
    both("CONFIG", "GET", "proto-max-bulk-len")
    raw.same(encode("ECHO", b"x" * ONE_MB))
    raw.same(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (ONE_MB + 1))
    assert raw.closed() == (True, True)


def test_proto_max_bulk_len_config_errors(both):
    both("CONFIG", "SET", "proto-max-bulk-len", 1000)  # below Redis's minimum of 1mb
    both("CONFIG", "SET", "proto-max-bulk-len", "abc")
    both("CONFIG", "SET", "proto-max-bulk-len", -1)


def test_inline_line_over_64k_without_newline(raw):
    r = raw.same(b"A" * (64 * 1024 + 100))
    assert r == b"-ERR Protocol error: too big inline request\r\n"
    assert raw.closed() == (True, True)


def test_inline_line_far_over_64k_with_newline(raw):
    # Sent in one write; far past 64 KiB before its newline, so it is refused however the
    # server happens to read the bytes.
    r = raw.same(b"ECHO " + b"A" * (256 * 1024) + b"\r\n")
    assert r == b"-ERR Protocol error: too big inline request\r\n"
    assert raw.closed() == (True, True)


def test_inline_line_under_64k(raw):
    raw.same(b"ECHO " + b"A" * (60 * 1024) + b"\r\n")


def test_multibulk_count_line_too_long(raw):
    r = raw.same(b"*" + b"1" * (64 * 1024 + 100))
    assert r == b"-ERR Protocol error: too big mbulk count string\r\n"
    assert raw.closed() == (True, True)


def test_bulk_count_line_too_long(raw):
    r = raw.same(b"*1\r\n$" + b"1" * (64 * 1024 + 100))
    assert r == b"-ERR Protocol error: too big bulk count string\r\n"
    assert raw.closed() == (True, True)


def test_query_buffer_limit(both, raw):
    """Past client-query-buffer-limit the client is closed (Redis sends no reply)."""
    both.config_set("client-query-buffer-limit", ONE_MB)
    both("CONFIG", "GET", "client-query-buffer-limit")
    bystander = raw.new()
    # One request that never completes and keeps growing the query buffer.
    raw.send(b"*2\r\n$4\r\nECHO\r\n$%d\r\n" % (8 * ONE_MB))
    for _ in range(4):
        try:
            raw.send(b"z" * ONE_MB)
        except OSError:
            break
    assert raw.closed() == (True, True)
    assert raw.redis.buf == raw.goblin.buf == b""
    bystander.same(encode("PING"))


def test_query_buffer_limit_config_errors(both):
    both("CONFIG", "SET", "client-query-buffer-limit", 1000)  # below the 1mb minimum
    both("CONFIG", "SET", "client-query-buffer-limit", "lots")


def client_gone(conn, victim, wait):
    """Whether client `victim` leaves CLIENT LIST (asked on `conn`) within `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        listed = conn.request(encode("CLIENT", "LIST", "ID", str(victim)))
        if listed == b"$0\r\n\r\n":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def flood_until_dropped(conn, bystander, victim, wait):
    """Sends `conn` ECHO requests of 64 KiB, never reading, until the server drops it; whether
    it is gone is asked on `bystander`. The stream is sent whole (a timed-out send resumes
    where it stopped, so no request is cut short), for as long as the server keeps reading,
    within `wait` seconds and 256 batches: a slow server on a loaded machine still reaches its
    limit, and one without a limit is not fed without end."""
    batch = encode("ECHO", b"o" * 65536) * 16  # 1 MiB of requests, 1 MiB of replies
    pending, batches = memoryview(batch), 1
    conn.sock.settimeout(0.5)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and batches <= 256:
        if client_gone(bystander, victim, 0):
            return True
        try:
            pending = pending[conn.sock.send(pending) :]
            if not pending:
                pending, batches = memoryview(batch), batches + 1
        except TimeoutError:
            pass  # the server is not reading just now: ask again
        except OSError:
            break
    return client_gone(bystander, victim, max(deadline - time.monotonic(), 0))


def test_output_buffer_limit_disconnects_non_reader(both, raw):
    """A client that never reads is dropped at the normal-class hard limit. Whether it is
    gone is asked of the server (CLIENT LIST ID), so that the check itself reads nothing."""
    both.config_set("client-output-buffer-limit", "normal 262144 0 0")
    both("CONFIG", "GET", "client-output-buffer-limit")
    bystander = raw.new()
    ids = [int(c.request(encode("CLIENT", "ID"))[1:-2]) for c in raw.conns()]
    for c in raw.conns():
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    gone = [
        flood_until_dropped(c, conn, victim, 60)
        for c, conn, victim in zip(raw.conns(), bystander.conns(), ids)
    ]
    assert gone == [True, True], "(redis, goblin): was the non-reading client dropped?"
    bystander.same(encode("PING"))


def test_lowered_output_limit_closes_a_client_already_over_it(both, raw):
    """A client whose unread replies are already past a limit set afterwards is dropped at
    the server's next check (Redis's clientsCron), although it sends nothing more."""
    bystander = raw.new()
    ids = [int(c.request(encode("CLIENT", "ID"))[1:-2]) for c in raw.conns()]
    for c in raw.conns():
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.send(encode("ECHO", b"o" * 65536) * 256)  # 16 MB of replies nobody reads

    def omem(conn, victim):
        listed = conn.request(encode("CLIENT", "LIST", "ID", str(victim)))
        fields = dict(f.split(b"=", 1) for f in listed.split(b"\r\n")[1].split(b" ") if b"=" in f)
        return int(fields.get(b"omem", b"0"))

    for conn, victim in zip(bystander.conns(), ids):
        deadline = time.monotonic() + 30
        while omem(conn, victim) < 4 * ONE_MB and time.monotonic() < deadline:
            time.sleep(0.1)
    both.config_set("client-output-buffer-limit", "normal 1mb 0 0")
    gone = [client_gone(conn, victim, 10) for conn, victim in zip(bystander.conns(), ids)]
    assert gone == [True, True], "(redis, goblin): was the client over the new limit dropped?"


def test_output_buffer_limit_config(both):
    for value in ("normal 0 0 0", "normal 1mb 512kb 10", "normal 10gb 0 0 replica 256mb 64mb 60",
                  "pubsub 32mb 8mb 60"):
        both.config_set("client-output-buffer-limit", value)
        both("CONFIG", "GET", "client-output-buffer-limit")
    both("CONFIG", "SET", "client-output-buffer-limit", "normal 1 2")
    both("CONFIG", "SET", "client-output-buffer-limit", "bogus 1 2 3")
    both("CONFIG", "SET", "client-output-buffer-limit", "normal x 2 3")


# --- maxclients --------------------------------------------------------------------------------

MAXCLIENTS = 3


@pytest.fixture(scope="module")
def small_servers(tmp_path_factory):
    pair = harness.start_pair(tmp_path_factory, "--maxclients", str(MAXCLIENTS))
    yield pair
    pair.stop()


def wait_clients(server, expected, timeout=5.0):
    """Waits until the server has released connections closed by the harness."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        c = RawConnection(server.port)
        reply = c.request(encode("CLIENT", "LIST"))
        c.close()
        if reply.startswith(b"$") and reply.count(b"\n") - 2 <= expected:
            return
        time.sleep(0.05)


def test_maxclients(small_servers):
    results = []
    for server in small_servers:
        wait_clients(server, 1)
        time.sleep(0.1)
        conns = [RawConnection(server.port) for _ in range(MAXCLIENTS)]
        for c in conns:
            assert c.request(encode("PING")) == b"+PONG\r\n"
        extra = RawConnection(server.port)
        reply = extra.read_replies(1)
        closed = extra.is_closed()
        # Once one leaves, a new client is accepted again.
        conns.pop().close()
        time.sleep(0.2)
        again = RawConnection(server.port)
        after = again.request(encode("PING"))
        for c in conns + [extra, again]:
            c.close()
        results.append((reply, closed, after))
    assert results[0] == results[1]
    assert results[1] == (b"-ERR max number of clients reached\r\n", True, b"+PONG\r\n")


def test_maxclients_config(small_servers):
    out = []
    for server in small_servers:
        time.sleep(0.2)
        c = RawConnection(server.port)
        out.append(c.request(encode("CONFIG", "GET", "maxclients")))
        c.close()
    assert out[0] == out[1]
