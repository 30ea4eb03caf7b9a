"""Invalidation beyond one URL: PURGE by surrogate key (Surrogate-Key / xkey response
headers, `Surrogate-Key` request header), by path prefix (`PURGE /dir/*`), soft purges
(`Goblin-Purge: soft`, `Fastly-Soft-Purge: 1`) after which grace applies, the `purged N`
answer and the counters, and a PURGE that reaches an object still waiting for admission."""

from __future__ import annotations

import pytest
from httpkit import fetch, wait_until


def cached(front, path, headers=None):
    """GETs path until it is a hit (the first GET fills it)."""
    fetch(front, path, headers)
    return wait_until(lambda: fetch(front, path, headers).cache == "HIT", 3)


def purge(front, path, headers=None):
    r = fetch(front, path, headers, method="PURGE")
    return r.status, r.body


def test_purge_by_surrogate_key(front, origin, path):
    t = path.replace("/", "-")  # tags are global: unique to this test
    routes = {
        f"{path}/a": [("Surrogate-Key", f"{t}red {t}blue")],
        f"{path}/b": [("xkey", f"{t}blue")],
        f"{path}/c": [("Surrogate-Key", f"{t}green")],
    }
    for p, h in routes.items():
        origin.route(p, body=p.encode(), headers=h)
        assert cached(front, p)
    before = front.stats()
    assert purge(front, "/", {"Surrogate-Key": f"{t}none"}) == (404, b"purged 0\n")
    assert purge(front, "/", {"Surrogate-Key": f"{t}blue {t}nothing"}) == (200, b"purged 2\n")
    assert [fetch(front, p).cache for p in routes] == ["MISS", "MISS", "HIT"]
    after = front.stats()
    assert after["tag_purges"] == before["tag_purges"] + 2
    assert after["purged_objects"] >= before["purged_objects"] + 2


def test_purge_by_prefix(front, origin, path):
    inside = [f"{path}/img/a.png", f"{path}/img/deep/b.png", f"{path}/img/c?v=1"]
    outside = [f"{path}/imgx", f"{path}/other/img/d"]
    for p in inside + outside:
        origin.route(p, body=b"x")
        assert cached(front, p)
    status, body = purge(front, f"{path}/img/*")
    assert (status, body) == (200, b"purged 3\n")
    assert [fetch(front, p).cache for p in inside] == ["MISS"] * 3
    assert [fetch(front, p).cache for p in outside] == ["HIT"] * 2


def test_soft_purge_then_grace(front, origin, path):
    def script(req, n):
        if n == 0:
            return {"body": b"v1", "headers": [("Cache-Control", "max-age=300, stale-while-revalidate=30"), ("ETag", '"1"'), ("Surrogate-Key", "soft-" + path)]}
        return {"body": b"v2", "headers": [("ETag", '"2"')]}

    origin.route(path, script)
    assert cached(front, path)
    before = front.stats()
    assert purge(front, path, {"Goblin-Purge": "soft"}) == (200, b"purged 1\n")
    r = fetch(front, path)
    assert (r.cache, r.body) == ("HIT-STALE", b"v1")
    assert wait_until(lambda: fetch(front, path).body == b"v2", 3)
    assert origin.count(path) == 2
    assert origin.seen(path)[1].header("If-None-Match") == '"1"'
    assert front.stats()["soft_purges"] == before["soft_purges"] + 1
    # A soft tag purge, Fastly's way.
    p2 = path + "/tagged"
    origin.route(p2, body=b"t", headers=[("Cache-Control", "max-age=300, stale-while-revalidate=30"), ("Surrogate-Key", "soft2-" + path)])
    assert cached(front, p2)
    assert purge(front, "/", {"Surrogate-Key": "soft2-" + path, "Fastly-Soft-Purge": "1"})[0] == 200
    assert fetch(front, p2).cache == "HIT-STALE"


def test_soft_purge_without_grace_drops(front, origin, path):
    origin.route(path, body=b"nograce")
    assert cached(front, path)
    assert purge(front, path, {"Goblin-Purge": "soft"})[0] == 200
    assert fetch(front, path).cache == "MISS"


@pytest.mark.parametrize("soft", [False, True])
def test_purge_reaches_a_pending_admission(front, origin, path, soft):
    """PURGE right after a miss may come before the object is admitted: it must still go.
    A soft purge without grace too: before, the fetch it marked stayed joinable until its
    admission, and a GET in between got the purged object as a HIT."""
    headers = {"Goblin-Purge": "soft"} if soft else None
    for i in range(20):
        p = f"{path}/{i}"
        origin.route(p, body=b"q" * 5000)
        assert fetch(front, p).cache == "MISS"
        status, _ = purge(front, p, headers)
        assert status == 200, i
        assert fetch(front, p).cache == "MISS", i


def test_tag_and_prefix_purges_refused_from_other_addresses(start_front, origin, path):
    f = start_front("--memory", "16M", "--purge-allow", "10.9.9.9")
    origin.route(path, body=b"kept", headers=[("Surrogate-Key", "k")])
    assert cached(f, path)
    assert purge(f, "/", {"Surrogate-Key": "k"})[0] == 403
    assert purge(f, "/*")[0] == 403
    assert fetch(f, path).cache == "HIT"
