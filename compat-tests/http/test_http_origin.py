"""Misses and the origin: Content-Length, chunked and until-close bodies, streaming while the
fill runs, one fetch for concurrent misses, persistent origin connections, an origin down
(502) or too slow (504), and fills that fail in the middle of the body."""

from __future__ import annotations

import threading
import time

from httpkit import Closed, Conn, body_of, fetch, free_port, request


def test_chunked_origin(front, origin, path):
    body = body_of(100_000, seed=1)
    origin.route(path, body=body, chunked=True, chunk=777)
    a, b = fetch(front, path), fetch(front, path)
    assert (a.status, a.body, a.cache) == (200, body, "MISS")
    assert (b.status, b.body, b.cache) == (200, body, "HIT")
    assert b.header("Content-Length") == str(len(body))
    assert b.header("Transfer-Encoding") is None


def test_until_close_origin(front, origin, path):
    body = body_of(40_000, seed=2)
    origin.route(path, body=body, until_close=True)
    a, b = fetch(front, path), fetch(front, path)
    assert (a.body, b.body, b.cache) == (body, body, "HIT")
    assert b.header("Content-Length") == str(len(body))


def test_empty_body(front, origin, path):
    origin.route(path, body=b"")
    a, b = fetch(front, path), fetch(front, path)
    assert (a.status, a.body, b.body, b.cache) == (200, b"", b"", "HIT")
    assert b.header("Content-Length") == "0"


def test_hop_by_hop_headers_not_forwarded(front, origin, path):
    origin.route(path, body=b"h", headers=[("Connection", "X-Hop"), ("X-Hop", "1"), ("Keep-Alive", "timeout=5")])
    for r in (fetch(front, path), fetch(front, path)):
        assert r.header("X-Hop") is None
        assert r.header("Keep-Alive") is None
        assert r.header("Connection") is None


def test_streams_while_filling(front, origin, path):
    # The origin sends 64 KiB, pauses, then the rest: the client has the first bytes long
    # before the origin finishes.
    body = body_of(300_000)
    origin.route(path, body=body, pause_at=65536, pause=1.0)
    c = Conn(front.port)
    try:
        t0 = time.monotonic()
        c.send(request("GET", path))
        c.sock.settimeout(5)
        while len(c.buf) < 1000:
            assert c._more()
        first = time.monotonic() - t0
        r = c.read()
        total = time.monotonic() - t0
    finally:
        c.close()
    assert r.body == body
    assert first < 0.6, f"first bytes after {first:.2f} s"
    assert total >= 0.9


def test_concurrent_misses_share_one_fetch(front, origin, path):
    body = body_of(500_000, seed=5)
    origin.route(path, body=body, delay=0.5, pause_at=100_000, pause=0.3)
    results: list = [None] * 12
    barrier = threading.Barrier(len(results))

    def get(i):
        barrier.wait()
        try:
            results[i] = fetch(front, path)
        except Exception as e:  # reported below
            results[i] = e

    threads = [threading.Thread(target=get, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for r in results:
        assert not isinstance(r, Exception), r
        assert (r.status, len(r.body)) == (200, len(body))
        assert r.body == body
    assert origin.count(path) == 1


def test_late_joiner_gets_the_whole_body(front, origin, path):
    body = body_of(200_000, seed=6)
    origin.route(path, body=body, pause_at=50_000, pause=0.6)
    first: list = []
    t = threading.Thread(target=lambda: first.append(fetch(front, path)))
    t.start()
    time.sleep(0.3)  # the fill has sent 50 KB
    late = fetch(front, path)
    t.join(10)
    assert first[0].body == body
    assert late.body == body
    assert origin.count(path) == 1


def test_origin_connections_persist(front, origin, path):
    for i in range(8):
        origin.route(f"{path}/{i}", body=b"p")
    before = origin.accepted
    for i in range(8):
        assert fetch(front, f"{path}/{i}").cache == "MISS"
    # One connection per event loop at most, reused from one miss to the next.
    assert origin.accepted - before <= 3


def test_origin_closing_idle_connections(front, origin, path):
    # A pooled connection the origin has closed meanwhile is not an origin failure: the
    # next miss gets its object (on a retry or a new connection), not a 502.
    for i in range(6):
        origin.route(f"{path}/{i}", body=b"i%d" % i)
    for i in range(6):
        r = fetch(front, f"{path}/{i}")
        assert (r.status, r.body) == (200, b"i%d" % i)
        origin.drop_connections()
        time.sleep(0.05)


def test_origin_closing_after_each_response(front, origin, path):
    for i in range(3):
        origin.route(f"{path}/{i}", body=b"c%d" % i, close=True)
    assert [fetch(front, f"{path}/{i}").body for i in range(3)] == [b"c0", b"c1", b"c2"]


def test_origin_down(start_front, path):
    f = start_front("--memory", "16M", "--origin-timeout", "2", origin_url=f"http://127.0.0.1:{free_port()}")
    t0 = time.monotonic()
    r = fetch(f, path)
    assert r.status == 502
    assert time.monotonic() - t0 < 3
    assert fetch(f, path).status == 502


def test_origin_timeout(front, origin, path):
    # --origin-timeout 2; the origin answers after 4 s.
    origin.route(path, body=b"late", delay=4)
    t0 = time.monotonic()
    r = fetch(front, path)
    elapsed = time.monotonic() - t0
    assert r.status == 504
    assert 1.5 <= elapsed < 3.9, elapsed


def test_origin_stalls_mid_body(front, origin, path):
    # Body bytes stop for longer than --origin-timeout: the client's response is cut short
    # and nothing is cached.
    body = body_of(100_000)
    origin.route(path, lambda req, n: {"body": body, "pause_at": 20_000, "pause": 4 if n == 0 else 0})
    try:
        r = fetch(front, path)
        assert len(r.body) < len(body) or r.status >= 500
    except Closed:
        pass
    r = fetch(front, path)
    assert (r.status, r.body, r.cache) == (200, body, "MISS")


def test_fill_failing_mid_body_is_not_cached(front, origin, path):
    body = body_of(120_000, seed=7)
    origin.route(path, lambda req, n: {"body": body, "truncate": 60_000 if n == 0 else None})
    try:
        r = fetch(front, path)
        truncated = len(r.body) < len(body)
    except Closed as e:
        truncated = len(e.partial) < len(body)
    assert truncated, "a truncated origin body reached the client as complete"
    time.sleep(0.2)
    r = fetch(front, path)
    assert (r.status, r.cache) == (200, "MISS")
    assert r.body == body
    assert origin.count(path) == 2
    assert fetch(front, path).cache == "HIT"


def test_chunked_fill_failing_mid_body_is_not_cached(front, origin, path):
    body = body_of(50_000, seed=8)
    origin.route(path, lambda req, n: {"body": body, "chunked": True, "truncate": 20_000 if n == 0 else None})
    try:
        fetch(front, path)
    except Closed:
        pass
    r = fetch(front, path)
    assert (r.status, r.body, r.cache) == (200, body, "MISS")


def test_bad_origin_response(front, origin, path):
    origin.route(path, body=b"x", headers=[("Content-Length", "1"), ("Transfer-Encoding", "chunked")])
    r = fetch(front, path)
    assert r.status == 502


def test_uncacheable_miss_streams_too(front, origin, path):
    body = body_of(80_000)
    origin.route(path, body=body, headers=[("Cache-Control", "no-store")], chunked=True)
    r = fetch(front, path)
    assert (r.status, r.body, r.cache) == (200, body, "MISS")
