"""The front's HTTP/1.1 handling over raw sockets: keep-alive, pipelining, connection close,
request targets that try to point the fetch elsewhere, and bad input (400 / 431 / 505 and
close, never a crash)."""

from __future__ import annotations

import pytest

from httpkit import Conn, Origin, fetch, request


def test_keep_alive(front, origin, path):
    origin.route(path, body=b"ka")
    c = Conn(front.port)
    try:
        for expect in ("MISS", "HIT", "HIT"):
            c.send(request("GET", path))
            r = c.read()
            assert (r.status, r.body, r.cache) == (200, b"ka", expect)
            assert r.header("Connection") is None
    finally:
        c.close()


def test_pipelined_requests(front, origin, path):
    paths = [f"{path}/{i}" for i in range(6)]
    for i, p in enumerate(paths):
        origin.route(p, body=f"body {i}".encode() * (i * 3000 + 1), delay=0.05 * (5 - i))
    # Cold paths, one warm repeat, a HEAD and the stats in between: answers in order.
    c = Conn(front.port)
    try:
        reqs = [("GET", p) for p in paths] + [("GET", paths[0]), ("HEAD", paths[1]), ("GET", "/goblin/stats")]
        c.send(b"".join(request(m, p) for m, p in reqs))
        got = [c.read(head_request=m == "HEAD") for m, _ in reqs]
    finally:
        c.close()
    for i, r in enumerate(got[:6]):
        assert (r.status, r.body) == (200, f"body {i}".encode() * (i * 3000 + 1))
    # The repeat joins the fill still under way (labelled HIT or MISS): no second fetch.
    assert got[6].body == b"body 0"
    assert origin.count(paths[0]) == 1
    assert (got[7].status, got[7].body, got[7].header("Content-Length")) == (200, b"", str(len(b"body 1") * 3001))
    assert got[8].status == 200 and got[8].body.startswith(b"{")


def test_pipelined_in_pieces(front, origin, path):
    origin.route(path, body=b"piece")
    wire = request("GET", path) * 3
    c = Conn(front.port)
    try:
        for i in range(0, len(wire), 7):
            c.send(wire[i : i + 7])
        got = [c.read() for _ in range(3)]
    finally:
        c.close()
    assert [r.body for r in got] == [b"piece"] * 3


def test_connection_close(front, origin, path):
    origin.route(path, body=b"bye")
    r = fetch(front, path, {"Connection": "close"}, wait_close=3)
    assert (r.status, r.body) == (200, b"bye")
    assert r.header("Connection") == "close"
    assert r.closed


def test_http_1_0(front, origin, path):
    origin.route(path, body=b"old")
    r = fetch(front, path, raw=request("GET", path, version="1.0"), wait_close=3)
    assert (r.status, r.body) == (200, b"old")
    assert r.closed
    r = fetch(front, path, raw=request("GET", path, {"Connection": "keep-alive"}, version="1.0"), wait_close=0.3)
    assert (r.status, r.body, r.closed) == (200, b"old", False)
    assert (r.header("Connection") or "").lower() == "keep-alive"


def test_leading_empty_lines(front, origin, path):
    origin.route(path, body=b"e")
    r = fetch(front, path, raw=b"\r\n\r\n" + request("GET", path))
    assert (r.status, r.body) == (200, b"e")


def test_absolute_form_cannot_redirect_the_fetch(front, origin, path):
    other = Origin()
    try:
        other.route(path, body=b"WRONG ORIGIN")
        origin.route(path, body=b"right origin")
        where = f"127.0.0.1:{other.port}"
        for raw in [
            f"GET http://{where}{path} HTTP/1.1\r\nHost: {where}\r\n\r\n".encode(),
            f"GET {path} HTTP/1.1\r\nHost: {where}\r\n\r\n".encode(),
            f"GET http://{where}{path} HTTP/1.1\r\nHost: cache.test\r\n\r\n".encode(),
        ]:
            r = fetch(front, path, raw=raw)
            assert (r.status, r.body) == (200, b"right origin")
        assert origin.count(path) == 1
        assert other.accepted == 0 and other.count(path) == 0
    finally:
        other.stop()


def test_absolute_form_shares_the_cache_entry(front, origin, path):
    origin.route(path, body=b"same")
    assert fetch(front, path).cache == "MISS"
    r = fetch(front, path, raw=f"GET http://anything.example{path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert (r.body, r.cache) == (b"same", "HIT")


def bad(front, raw: bytes):
    """Sends raw bytes; returns the response, which must close the connection."""
    r = fetch(front, "", raw=raw, wait_close=3)
    assert r.closed, r
    assert r.header("Connection") == "close"
    return r


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE\r\n\r\n",
        b"GET\r\n\r\n",
        b"GET /\r\n\r\n",
        b"GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n",
        b"GET /a b HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET / HTTQ/1.1\r\nHost: a\r\n\r\n",
        b"G@T / HTTP/1.1\r\nHost: a\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
        b"GET * HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET ftp://x/ HTTP/1.1\r\nHost: a\r\n\r\n",
    ],
)
def test_malformed_request_line(front, raw):
    assert bad(front, raw).status == 400


@pytest.mark.parametrize(
    "fields",
    [
        b"",  # no Host on HTTP/1.1
        b"Host: a\r\nHost: b\r\n",
        b"Host: a\r\nBad Name: x\r\n",
        b"Host: a\r\nX-Space : x\r\n",
        b"Host: a\r\nX: folded\r\n  continuation\r\n",
        b"Host: a\r\nX: nul\x00here\r\n",
        b"Host: a\r\nContent-Length: 1x\r\n",
        b"Host: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n",
    ],
)
def test_malformed_fields(front, fields):
    assert bad(front, b"GET / HTTP/1.1\r\n" + fields + b"\r\n").status == 400


def test_content_length_with_transfer_encoding(front):
    raw = b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    assert bad(front, raw).status == 400


def test_unknown_transfer_encoding(front):
    raw = b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n"
    assert bad(front, raw).status == 501


@pytest.mark.parametrize("body", [b"zz\r\n", b"-1\r\n", b"1ffffffffffffffff\r\n", b"5\r\nhelloX\r\n"])
def test_bad_chunk_size(front, body):
    c = Conn(front.port)
    try:
        c.send(b"GET /goblin/stats HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
        statuses = []
        while True:
            try:
                statuses.append(c.read().status)
            except Exception:
                break
        assert statuses and statuses[-1] == 400, statuses
        assert c.is_closed()
    finally:
        c.close()


def test_request_body_skipped(front, origin, path):
    # A GET with a body: the body is skipped, the next pipelined request is answered.
    origin.route(path, body=b"after body")
    c = Conn(front.port)
    try:
        c.send(
            request("GET", path, {"Content-Length": "11"}) + b"hello world"
            + request("GET", path, {"Transfer-Encoding": "chunked"}) + b"3\r\nabc\r\n0\r\n\r\n"
            + request("GET", path)
        )
        assert [c.read().body for _ in range(3)] == [b"after body"] * 3
    finally:
        c.close()


def test_header_section_too_large(front):
    big = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000) for i in range(70))
    r = bad(front, b"GET / HTTP/1.1\r\nHost: a\r\n" + big + b"\r\n")
    assert r.status == 431


def test_header_section_too_large_without_end(front):
    # The limit applies before the head ends: no waiting for the rest.
    c = Conn(front.port)
    try:
        c.send(b"GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + b"a" * 70_000)
        r = c.read()
        assert r.status == 431
        assert c.is_closed()
    finally:
        c.close()


def test_header_section_just_under_the_limit(front, origin, path):
    origin.route(path, body=b"fits")
    head = request("GET", path, {"X-Pad": "p" * 60_000})
    r = fetch(front, path, raw=head)
    assert (r.status, r.body) == (200, b"fits")


@pytest.mark.parametrize("version", [b"HTTP/2.0", b"HTTP/3.0"])
def test_unsupported_version(front, version):
    assert bad(front, b"GET / " + version + b"\r\nHost: a\r\n\r\n").status == 505


def test_good_request_after_bad_connection(front, origin, path):
    # A bad request closes only its own connection.
    origin.route(path, body=b"fine")
    bad(front, b"BROKEN\r\n\r\n")
    assert fetch(front, path).body == b"fine"
