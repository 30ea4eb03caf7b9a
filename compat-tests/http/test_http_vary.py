"""Vary beyond Accept-Encoding: variants keyed by the normalised values of the headers the
origin's Vary names, those headers forwarded to the origin, one fetch per variant, at most 8
variants per path (the oldest dropped), `Vary: *` and Vary on headers never forwarded not
cached, and PURGE (by URL and by prefix) reaching every variant."""

from __future__ import annotations

import threading

from httpkit import fetch, wait_until


def by_header(name: str, delay: float = 0.0, extra=()):
    """A route answering with the value of request header `name` it saw, varying on it."""

    def script(req, n):
        return {
            "body": f"{name}={req.header(name)}".encode(),
            "headers": [("Vary", f"{name}, Accept-Encoding"), *extra],
            "delay": delay,
        }

    return script


def admitted(front, before: int, n: int = 1):
    """Waits until n more objects were admitted than `before`."""
    assert wait_until(lambda: front.stats()["admitted"] >= before + n, 3)


def test_two_values_cached_separately_with_the_header_forwarded(front, origin, path):
    origin.route(path, by_header("Accept-Language"))
    en, fr = {"Accept-Language": "en-US"}, {"Accept-Language": "fr"}
    before = front.stats()["admitted"]
    assert fetch(front, path, en).body == b"Accept-Language=en-us"
    assert fetch(front, path, fr).body == b"Accept-Language=fr"
    admitted(front, before, 2)
    for h, body in ((en, b"Accept-Language=en-us"), (fr, b"Accept-Language=fr")):
        r = fetch(front, path, h)
        assert (r.cache, r.body) == ("HIT", body)
        assert r.header("Vary") == "Accept-Language, Accept-Encoding"
    # Normalised values share the variant: case (Accept-Language compares without case)
    # and whitespace.
    assert fetch(front, path, {"Accept-Language": "  EN-us "}).cache == "HIT"
    assert origin.count(path) == 2
    # The origin saw the normalised values; nothing else of the client's headers that is
    # never forwarded (Host is its own).
    seen = origin.seen(path)
    assert [r.header("Accept-Language") for r in seen] == ["en-us", "fr"]
    assert all(r.header("Host") == f"127.0.0.1:{origin.port}" for r in seen)
    # A request without the header is another variant.
    r = fetch(front, path)
    assert (r.cache, r.body) == ("MISS", b"Accept-Language=None")


def test_requests_for_one_variant_join_one_fetch(front, origin, path):
    origin.route(path, by_header("X-Device", delay=0.5))
    before = front.stats()["admitted"]
    assert fetch(front, path, {"X-Device": "phone"}).cache == "MISS"
    admitted(front, before)
    results: list = [None] * 3
    barrier = threading.Barrier(len(results))

    def get(i):
        barrier.wait()
        results[i] = fetch(front, path, {"X-Device": "tablet", "User-Agent": f"ua{i}"})

    threads = [threading.Thread(target=get, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert [r.body for r in results] == [b"X-Device=tablet"] * 3
    assert sorted(r.cache for r in results) == ["HIT", "HIT", "MISS"]
    # One fetch for the phone, one for the three tablets (whose User-Agents differ, but the
    # Vary names only X-Device, so only X-Device was forwarded).
    assert origin.count(path) == 2
    assert origin.seen(path)[1].header("User-Agent") is None


def test_first_contact_joins_on_identical_headers(front, origin, path):
    origin.route(path, by_header("X-Device", delay=0.5))
    results: list = [None] * 4
    barrier = threading.Barrier(len(results))

    def get(i):
        barrier.wait()
        results[i] = fetch(front, path, {"X-Device": "phone" if i < 3 else "tv"})

    threads = [threading.Thread(target=get, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert [r.body for r in results] == [b"X-Device=phone"] * 3 + [b"X-Device=tv"]
    assert origin.count(path) == 2


def test_at_most_eight_variants_the_oldest_dropped(front, origin, path):
    origin.route(path, by_header("X-V"))
    for i in range(9):
        before = front.stats()["admitted"]
        assert fetch(front, path, {"X-V": str(i)}).cache == "MISS"
        admitted(front, before)
    assert [fetch(front, path, {"X-V": str(i)}).cache for i in range(1, 9)] == ["HIT"] * 8
    r = fetch(front, path, {"X-V": "0"})
    assert (r.cache, r.body) == ("MISS", b"X-V=0")
    assert origin.count(path) == 10


def test_vary_star_and_never_forwarded_headers_not_cached(front, origin, path):
    for i, vary in enumerate(("*", "Cookie", "Accept, Authorization")):
        p = f"{path}/{i}"
        origin.route(p, body=b"v", headers=[("Vary", vary)])
        h = {"Cookie": "a=b", "Authorization": "Basic eA=="}
        assert [fetch(front, p, h).cache for _ in range(2)] == ["MISS", "MISS"]
        assert origin.count(p) == 2
        assert all(r.header("Cookie") is None and r.header("Authorization") is None for r in origin.seen(p))


def test_purge_drops_every_variant(front, origin, path):
    paths = [f"{path}/a", f"{path}/b"]
    for p in paths:
        origin.route(p, by_header("X-V"))
    before = front.stats()["admitted"]
    for p in paths:
        for v in ("1", "2", "3"):
            fetch(front, p, {"X-V": v})
    admitted(front, before, 6)
    r = fetch(front, paths[0], method="PURGE")
    assert (r.status, r.body) == (200, b"purged 3\n")
    assert [fetch(front, paths[0], {"X-V": v}).cache for v in ("1", "2", "3")] == ["MISS"] * 3
    # A prefix purge reaches the variants too.
    r = fetch(front, f"{path}/*", method="PURGE")
    assert r.status == 200
    assert int(r.body.split()[1]) >= 3
    assert [fetch(front, paths[1], {"X-V": v}).cache for v in ("1", "2", "3")] == ["MISS"] * 3
