"""Streaming tails: hits of objects several times larger than the RAM share of --memory
(which also bounds the hot-tail cache) are sent one io-chunk at a time as the SSD reads
complete, on both tail engines; byte-exact whole bodies and ranges deep in the tail (206);
a client that stops reading holds its bounded read-ahead and its pinned extent only until
it closes, and does not hold up other clients."""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time

import pytest

from httpkit import Conn, body_of, fetch, request, wait_until

SIZE = 24 << 20  # six times --memory


@pytest.fixture(scope="module", params=["uring", "blocking"])
def small_front(request, start_front):
    ssd = tempfile.mkdtemp(prefix="goblin-http-stream-")
    f = start_front(
        "--memory", "4M", "--ram-head", "16K", "--io-chunk", "128K", "--ssd-dir", ssd,
        "--tail-io", request.param,
    )
    yield f
    f.stop()
    shutil.rmtree(ssd, ignore_errors=True)


def stored(front, origin, path, size=SIZE, seed=1):
    """Routes path to a body of `size` bytes and waits until it is stored."""
    body = body_of(size, seed)
    origin.route(path, body=body)
    before = front.stats()["admitted"]
    assert fetch(front, path).body == body
    assert wait_until(lambda: front.stats()["admitted"] > before, 10)
    return body


def test_large_hits_stream_byte_exact(small_front, origin, path):
    body = stored(small_front, origin, path)
    read_before = small_front.stats()["store"]["ssd_bytes_read"]
    for _ in range(3):
        r = fetch(small_front, path)
        assert (r.status, r.cache) == (200, "HIT")
        assert r.body == body
    stats = small_front.stats()
    # Each hit read its tail from the SSD: it is too large for the hot-tail cache.
    assert stats["store"]["ssd_bytes_read"] - read_before >= 3 * (SIZE - (16 << 10))
    assert origin.count(path) == 1


def rss(front) -> int:
    """The front's resident memory in bytes."""
    for line in open(f"/proc/{front.proc.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) << 10
    raise AssertionError("no VmRSS")


@pytest.mark.parametrize(
    "spec, start, end",
    [
        ("bytes=10000000-10300000", 10_000_000, 10_300_001),
        ("bytes=16000-140000", 16_000, 140_001),  # from the head across tail chunks
        ("bytes=-1000", SIZE - 1000, SIZE),
        (f"bytes={SIZE - 5}-", SIZE - 5, SIZE),
    ],
)
def test_ranges_within_the_tail(small_front, origin, path, spec, start, end):
    body = stored(small_front, origin, path, seed=3)
    r = fetch(small_front, path, {"Range": spec})
    assert (r.status, r.cache) == (206, "HIT")
    assert r.header("Content-Range") == f"bytes {start}-{end - 1}/{SIZE}"
    assert r.body == body[start:end]


def test_slow_readers_hold_bounded_memory_and_release_their_extents(small_front, origin, path):
    body = stored(small_front, origin, path, seed=4)
    small = f"{path}/small"
    origin.route(small, body=b"small")
    before = rss(small_front)
    slow = []
    try:
        # Clients that read the head and then stop: each stalls its stream after a bounded
        # read-ahead, whatever the object's size.
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", small_front.port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
            s.sendall(request("GET", path))
            assert s.recv(4096).startswith(b"HTTP/1.1 200")
            slow.append(s)
        time.sleep(0.5)
        assert rss(small_front) - before < 16 << 20
        # Others are served in full meanwhile.
        results: list = [None] * 3

        def get(i):
            results[i] = fetch(small_front, path)

        threads = [threading.Thread(target=get, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert all(r is not None and r.body == body for r in results)
        assert fetch(small_front, small).body == b"small"
        # Purged while the slow clients still stream it: its extent stays pinned, so the
        # object stored anew takes other pages...
        tail_bytes = small_front.stats()["store"]["tail_bytes"]
        assert fetch(small_front, path, method="PURGE").status == 200
        assert small_front.stats()["store"]["tail_bytes"] == tail_bytes
        stored(small_front, origin, path, seed=4)
        assert small_front.stats()["store"]["tail_bytes"] >= tail_bytes + SIZE - (16 << 10)
    finally:
        for s in slow:
            s.close()
    # ... and the pinned pages are freed once the slow clients are gone.
    assert wait_until(lambda: small_front.stats()["store"]["tail_bytes"] <= tail_bytes, 5)
