"""The front's limits on clients (issue 31): --http-header-timeout (slowloris), the
keep-alive timeout, --http-max-connections, and what a client gets when the origin's chunked
framing breaks (502 while it has had no byte of the response, a close once it has)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from harness import read_until_close
from httpkit import Conn, body_of, fetch, request, wait_until


@pytest.fixture(scope="module")
def limited(start_front):
    """A front with short client timeouts."""
    return start_front(
        "--memory", "16M", "--http-header-timeout", "2", "--http-keepalive-timeout", "1",
    )


def open_partial(port: int, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /slow HTTP/1.1\r\nHost: cache.test\r\n")
        socks.append(s)
    return socks


def closed_with(s: socket.socket, wait: float) -> bytes | None:
    """What `s` received before the front closed it, or None when it stayed open `wait` s."""
    got, closed = read_until_close(s, wait)
    return got if closed else None


def test_slowloris_connections_are_closed_after_the_header_timeout(limited, origin, path):
    origin.route(path, body=b"healthy")
    before = limited.stats()
    socks = open_partial(limited.port, 300)
    stop = threading.Event()

    def trickle():
        # One header line every half second: each read is progress, but no head completes.
        while not stop.wait(0.5):
            for s in socks:
                try:
                    s.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    try:
        t0 = time.monotonic()
        # Healthy clients are served meanwhile.
        assert fetch(limited, path).body == b"healthy"
        replies = [closed_with(s, 6.0 - (time.monotonic() - t0)) for s in socks]
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()
    still_open = sum(r is None for r in replies)
    assert still_open == 0, f"{still_open} of {len(socks)} slowloris connections still open"
    assert elapsed >= 1.5, f"closed after {elapsed:.2f} s, before the 2 s timeout"
    # Each gets a 408 (a close racing a trickled line may reset one before it is read).
    timed_out = [r for r in replies if r.startswith(b"HTTP/1.1 408 Request Timeout\r\n")]
    assert all(r == b"" or r in timed_out for r in replies), [r[:100] for r in replies]
    assert len(timed_out) > len(socks) // 2
    assert all(b"Connection: close\r\n" in r for r in timed_out)
    after = limited.stats()
    assert after["header_timeouts"] - before["header_timeouts"] == len(socks)
    assert wait_until(lambda: limited.stats()["curr_connections"] <= before["curr_connections"], 3)


def test_a_silent_connection_is_closed_after_the_header_timeout(limited):
    s = socket.create_connection(("127.0.0.1", limited.port), timeout=10)
    try:
        t0 = time.monotonic()
        # Nothing sent, nothing to answer: closed without a word, as nginx does.
        assert closed_with(s, 5) == b""
        assert time.monotonic() - t0 >= 1.5
    finally:
        s.close()


def test_idle_keepalive_connection_is_closed(limited, origin, path):
    origin.route(path, body=b"ka")
    before = limited.stats()["idle_timeouts"]
    c = Conn(limited.port)
    try:
        # Requests closer together than the timeout keep the connection.
        for _ in range(4):
            c.send(request("GET", path))
            assert c.read().body == b"ka"
            time.sleep(0.5)
        t0 = time.monotonic()
        assert c.is_closed(4.0)
        assert 0.3 <= time.monotonic() - t0
    finally:
        c.close()
    assert limited.stats()["idle_timeouts"] == before + 1


def test_connection_cap_refuses_with_503(start_front, origin, path):
    f = start_front("--memory", "16M", "--http-max-connections", "4")
    origin.route(path, body=b"capped")

    def served():
        # A connection closed just before (the start-up probe's) may still hold its slot
        # for an instant: a refused one is closed and opened again.
        c = Conn(f.port)
        c.send(request("GET", path))
        if c.read().body == b"capped":
            return c
        c.close()
        return None

    held = [wait_until(served, 3) for _ in range(4)]
    try:
        assert all(held), "four connections under a cap of four are served"
        extra = Conn(f.port)
        try:
            # Refused at once, before any request: nothing it sends is read.
            r = extra.read()
            assert r.status == 503
            assert r.header("Connection") == "close"
            assert extra.is_closed(3)
        finally:
            extra.close()
        held.pop().close()
        # A slot freed is a slot to use.
        r = wait_until(lambda: (r := fetch(f, path)).status == 200 and r, 3)
        assert r and r.body == b"capped"
    finally:
        for c in filter(None, held):
            c.close()
    assert f.stats()["rejected_connections"] >= 1


BAD_CHUNK = b"zz\r\nnot a chunk\r\n"


def test_malformed_chunked_origin_gets_502(front, origin, path):
    origin.route(path, chunked=True, wire=[BAD_CHUNK])
    r = fetch(front, path)
    assert r.status == 502
    assert b"502 Bad Gateway" in r.body
    # Nothing stored: the next request goes to the origin again.
    fetch(front, path)
    assert origin.count(path) == 2


def test_malformed_chunked_origin_gets_502_while_no_byte_was_sent(front, origin, path):
    # An HTTP/1.0 client of a body of unknown length is sent nothing until it is complete:
    # when the framing breaks after some chunks, it still gets a 502.
    origin.route(path, chunked=True, wire=[b"5\r\nhello\r\n", 0.3, BAD_CHUNK])
    r = fetch(front, path, raw=request("GET", path, version="1.0"))
    assert r.status == 502


def test_malformed_chunked_after_the_head_was_sent_closes(front, origin, path):
    # An HTTP/1.1 client was already sent the head and the first chunk: it can only be cut
    # off, without the last chunk, so it sees the body is incomplete.
    origin.route(path, chunked=True, wire=[b"5\r\nhello\r\n", 0.3, BAD_CHUNK])
    c = Conn(front.port)
    try:
        c.send(request("GET", path))
        got = closed_with(c.sock, 5)
    finally:
        c.close()
    assert got is not None, "the connection stayed open"
    assert got.startswith(b"HTTP/1.1 200 ")
    assert b"Transfer-Encoding: chunked\r\n" in got
    assert got.endswith(b"\r\n\r\n5\r\nhello\r\n"), got[-100:]
    good = body_of(3000)
    origin.route(path, body=good)
    r = fetch(front, path)
    assert (r.status, r.cache, r.body) == (200, "MISS", good)
