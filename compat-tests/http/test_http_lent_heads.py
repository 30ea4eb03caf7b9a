"""RAM bytes sent by reference: with a page-multiple --ram-head (64 KiB here) a hit's RAM
bytes (a split object's head, a smaller object's whole value in the arena) go to the socket
from where the store keeps them (vmsplice), so the kernel may still hold them after the
response left the loop. Head slots and arena blocks are rewritten only on fresh pages: a
response the client has not read yet keeps its bytes while its object is purged, its slot
or block is refilled by other objects (evictions, arena compactions) and the path stored
again with other content."""

from __future__ import annotations

import shutil
import socket
import tempfile
import time

import pytest

from httpkit import Conn, body_of, fetch, request, wait_until

SIZE = 200_000  # a 64 KiB head and an SSD tail
WHOLE = 40_000  # kept whole in the arena


@pytest.fixture(scope="module")
def lent_front(start_front):
    ssd = tempfile.mkdtemp(prefix="goblin-http-lent-")
    # 16 head slots and a 2 MiB arena in all: a few dozen objects reuse every one of them.
    f = start_front("--memory", "1M", "--small-memory", "2M", "--block", "256K", "--ram-head", "64K", "--ssd-dir", ssd)
    yield f
    f.stop()
    shutil.rmtree(ssd, ignore_errors=True)


def store(front, origin, path, body):
    origin.route(path, body=body)
    before = front.stats()["admitted"]
    assert fetch(front, path).body == body
    assert wait_until(lambda: front.stats()["admitted"] > before, 10)


def read_response(sock: socket.socket) -> tuple[bytes, bytes]:
    """The head and body of the only response on `sock` (one with a Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "closed before the head"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed inside the body"
        body += chunk
    return head, body


@pytest.mark.parametrize("size", [SIZE, WHOLE])
def test_unread_response_keeps_its_bytes_while_its_memory_is_reused(lent_front, origin, path, size):
    first = body_of(size, 1)
    store(lent_front, origin, path, first)
    slow = socket.socket()
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.settimeout(10)
    slow.connect(("127.0.0.1", lent_front.port))
    try:
        slow.sendall(request("GET", path))
        time.sleep(0.3)  # the response is in the kernel's hands, unread
        assert fetch(lent_front, path, method="PURGE").status == 200
        before = lent_front.stats()["store"]
        for i in range(80):
            store(lent_front, origin, f"{path}/other{i}", body_of(size, 3 + i % 10))
        second = body_of(size, 2)
        store(lent_front, origin, path, second)
        after = lent_front.stats()["store"]
        reused = ("evictions", "arena_compactions") if size == WHOLE else ("evictions",)
        assert all(after[k] > before[k] for k in reused), (before, after)
        head, body = read_response(slow)
        assert b"X-Cache: HIT" in head
        assert body == first
    finally:
        slow.close()
    r = fetch(lent_front, path)
    assert (r.cache, r.body) == ("HIT", second)


@pytest.mark.parametrize("spec, start, end", [("bytes=100-40000", 100, 40001), ("bytes=30000-90000", 30000, 90001)])
def test_ranges_from_a_lent_head(lent_front, origin, path, spec, start, end):
    body = body_of(SIZE, 4)
    store(lent_front, origin, path, body)
    for _ in range(3):
        r = fetch(lent_front, path, {"Range": spec})
        assert (r.status, r.cache) == (206, "HIT")
        assert r.body == body[start:end]
    r = fetch(lent_front, path)
    assert (r.status, r.cache, r.body) == (200, "HIT", body)


def test_pipelined_hits_keep_their_order(lent_front, origin, path):
    bodies = [body_of(SIZE - i * 1000, 5 + i) for i in range(6)]
    for i, b in enumerate(bodies):
        store(lent_front, origin, f"{path}/{i}", b)
    c = Conn(lent_front.port)
    try:
        c.send(b"".join(request("GET", f"{path}/{i}") for i in range(len(bodies))) * 2)
        for b in bodies * 2:
            r = c.read()
            assert (r.cache, r.body) == ("HIT", b)
    finally:
        c.close()
