"""What is cached, for how long, and what a hit looks like: X-Cache, Age, Cache-Control,
Expires, --default-ttl, validators (304), single ranges (206/416) from the RAM head and the
SSD tail, Vary: Accept-Encoding, HEAD, and PURGE."""

from __future__ import annotations

import time

import pytest

from httpkit import Conn, body_of, fetch, http_date, request, wait_until


def miss_then_hit(front, origin, path, **kw):
    """GETs path twice: a miss, then a hit; returns both responses."""
    a = fetch(front, path, **kw)
    b = fetch(front, path, **kw)
    assert (a.cache, b.cache) == ("MISS", "HIT"), (a, b)
    assert origin.count(path) == 1
    return a, b


def expires_within(front, origin, path, seconds: float):
    """Asserts that path, just cached, is a hit now and a miss again within `seconds`."""
    assert fetch(front, path).cache == "HIT"
    r = wait_until(lambda: fetch(front, path).cache == "MISS", seconds, 0.2)
    assert r, f"{path} still cached after {seconds} s"


def test_miss_then_hit(front, origin, path):
    origin.route(path, body=b"hello world", headers=[("ETag", '"v1"'), ("X-Custom", "kept")])
    a, b = miss_then_hit(front, origin, path)
    for r in (a, b):
        assert r.status == 200
        assert r.body == b"hello world"
        assert r.header("Content-Length") == "11"
        assert r.header("ETag") == '"v1"'
        assert r.header("X-Custom") == "kept"
        assert r.header("Date")


def test_age_on_hits(front, origin, path):
    origin.route(path, body=b"x")
    miss_then_hit(front, origin, path)
    time.sleep(1.1)
    r = fetch(front, path)
    assert r.cache == "HIT"
    assert int(r.header("Age")) >= 1


def test_age_counts_the_origins_age(front, origin, path):
    origin.route(path, body=b"x", headers=[("Age", "40")])
    _, b = miss_then_hit(front, origin, path)
    assert int(b.header("Age")) >= 40


@pytest.mark.parametrize(
    "cc", ["no-store", "private", "no-cache", "max-age=60, private", 'private="Set-Cookie"']
)
def test_uncacheable_cache_control(front, origin, path, cc):
    origin.route(path, body=b"secret", headers=[("Cache-Control", cc)])
    for _ in range(2):
        r = fetch(front, path)
        assert (r.status, r.body, r.cache) == (200, b"secret", "MISS")
    assert origin.count(path) == 2


def test_set_cookie_not_cached(front, origin, path):
    origin.route(path, body=b"c", headers=[("Set-Cookie", "s=1")])
    assert [fetch(front, path).cache for _ in range(2)] == ["MISS", "MISS"]
    assert origin.count(path) == 2


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_not_cached(front, origin, path, status):
    origin.route(path, status=status, body=b"down")
    for _ in range(2):
        r = fetch(front, path)
        assert (r.status, r.body) == (status, b"down")
        assert r.cache != "HIT"
    assert origin.count(path) == 2


@pytest.mark.parametrize("status", [301, 404, 410])
def test_cacheable_statuses(front, origin, path, status):
    origin.route(path, status=status, body=b"s", headers=[("Location", "/elsewhere")])
    a, b = miss_then_hit(front, origin, path)
    assert a.status == b.status == status


def test_302_needs_explicit_freshness(front, origin, path):
    origin.route(path, status=302, headers=[("Location", "/x"), ("Cache-Control", None)])
    assert [fetch(front, path).cache for _ in range(2)] == ["MISS", "MISS"]
    other = path + "-fresh"
    origin.route(other, status=302, headers=[("Location", "/x"), ("Cache-Control", "max-age=60")])
    miss_then_hit(front, origin, other)


def test_max_age(front, origin, path):
    origin.route(path, body=b"m", headers=[("Cache-Control", "max-age=2")])
    assert fetch(front, path).cache == "MISS"
    expires_within(front, origin, path, 3.5)
    assert origin.count(path) == 2


def test_s_maxage_wins_over_max_age(front, origin, path):
    origin.route(path, body=b"s", headers=[("Cache-Control", "max-age=300, s-maxage=2")])
    assert fetch(front, path).cache == "MISS"
    expires_within(front, origin, path, 3.5)


def test_expires(front, origin, path):
    now = time.time()
    origin.route(
        path,
        body=b"e",
        headers=[("Cache-Control", None), ("Date", http_date(now)), ("Expires", http_date(now + 2))],
    )
    assert fetch(front, path).cache == "MISS"
    expires_within(front, origin, path, 3.5)


def test_max_age_wins_over_expires(front, origin, path):
    origin.route(
        path, body=b"e", headers=[("Cache-Control", "max-age=300"), ("Expires", http_date(time.time() - 60))]
    )
    miss_then_hit(front, origin, path)


@pytest.mark.parametrize("expires", ["past", "0", "garbage"])
def test_expired_or_invalid_expires_not_cached(front, origin, path, expires):
    value = http_date(time.time() - 60) if expires == "past" else expires
    origin.route(path, body=b"e", headers=[("Cache-Control", None), ("Expires", value)])
    assert [fetch(front, path).cache for _ in range(2)] == ["MISS", "MISS"]


def test_expires_counts_from_the_origins_date(front, origin, path):
    # The origin's clock is an hour behind: Expires is 60 s after its Date, so the object
    # is fresh for 60 s although Expires is in our past.
    then = time.time() - 3600
    origin.route(
        path,
        body=b"e",
        headers=[("Cache-Control", None), ("Date", http_date(then)), ("Expires", http_date(then + 60))],
    )
    miss_then_hit(front, origin, path)


def test_default_ttl(front, origin, path):
    # The session front runs with --default-ttl 2.
    origin.route(path, body=b"d", headers=[("Cache-Control", None)])
    assert fetch(front, path).cache == "MISS"
    expires_within(front, origin, path, 3.5)


def test_if_none_match(front, origin, path):
    origin.route(path, body=b"tagged", headers=[("ETag", '"abc"'), ("Last-Modified", http_date(1e9))])
    miss_then_hit(front, origin, path)
    for inm in ['"abc"', 'W/"abc"', '"x", "abc"', "*"]:
        r = fetch(front, path, {"If-None-Match": inm})
        assert (r.status, r.body) == (304, b""), inm
        assert r.header("ETag") == '"abc"'
        assert r.header("Content-Length") in (None, "6")
    r = fetch(front, path, {"If-None-Match": '"other"'})
    assert (r.status, r.body) == (200, b"tagged")
    # If-None-Match decides alone, even when If-Modified-Since would match.
    r = fetch(front, path, {"If-None-Match": '"other"', "If-Modified-Since": http_date()})
    assert r.status == 200
    assert origin.count(path) == 1


def test_if_modified_since(front, origin, path):
    modified = 1_000_000_000
    origin.route(path, body=b"dated", headers=[("Last-Modified", http_date(modified))])
    miss_then_hit(front, origin, path)
    for since in (modified, modified + 3600):
        r = fetch(front, path, {"If-Modified-Since": http_date(since)})
        assert (r.status, r.body) == (304, b"")
        assert r.header("Last-Modified") == http_date(modified)
    for since in [http_date(modified - 1), "not a date"]:
        r = fetch(front, path, {"If-Modified-Since": since})
        assert (r.status, r.body) == (200, b"dated"), since


def test_conditional_on_a_miss(front, origin, path):
    origin.route(path, body=b"first", headers=[("ETag", '"m"')])
    r = fetch(front, path, {"If-None-Match": '"m"'})
    assert r.status in (200, 304)
    assert r.body == (b"first" if r.status == 200 else b"")
    r = fetch(front, path)
    assert (r.status, r.body, r.cache) == (200, b"first", "HIT")


SIZE = 200_000  # a 16 KiB RAM head, then an SSD tail


@pytest.mark.parametrize(
    "spec,start,end",
    [
        ("bytes=0-99", 0, 99),  # in the head
        ("bytes=100-16383", 100, 16383),  # the whole rest of the head
        ("bytes=16000-17000", 16000, 17000),  # across head and tail
        ("bytes=150000-150099", 150000, 150099),  # in the tail
        ("bytes=-100", SIZE - 100, SIZE - 1),  # suffix
        ("bytes=199990-", 199990, SIZE - 1),  # open end
        ("bytes=199990-999999", 199990, SIZE - 1),  # clamped end
        ("bytes=0-", 0, SIZE - 1),
    ],
)
def test_single_range(front, origin, path, spec, start, end):
    body = body_of(SIZE)
    origin.route(path, body=body)
    miss_then_hit(front, origin, path)
    r = fetch(front, path, {"Range": spec})
    assert r.status == 206, r
    assert r.header("Content-Range") == f"bytes {start}-{end}/{SIZE}"
    assert r.header("Content-Length") == str(end - start + 1)
    assert r.body == body[start : end + 1]
    assert r.cache == "HIT"


def test_range_on_a_small_object(front, origin, path):
    origin.route(path, body=b"0123456789")
    miss_then_hit(front, origin, path)
    r = fetch(front, path, {"Range": "bytes=2-4"})
    assert (r.status, r.body, r.header("Content-Range")) == (206, b"234", "bytes 2-4/10")


@pytest.mark.parametrize("spec", ["bytes=10-", "bytes=100-200", "bytes=-0"])
def test_unsatisfiable_range(front, origin, path, spec):
    origin.route(path, body=b"0123456789")
    miss_then_hit(front, origin, path)
    r = fetch(front, path, {"Range": spec})
    assert r.status == 416
    assert r.header("Content-Range") == "bytes */10"


@pytest.mark.parametrize("spec", ["bytes=0-1,5-6", "items=0-1", "bytes=5-1", "bytes=x-"])
def test_ignored_range(front, origin, path, spec):
    origin.route(path, body=b"0123456789")
    miss_then_hit(front, origin, path)
    r = fetch(front, path, {"Range": spec})
    assert (r.status, r.body) == (200, b"0123456789")


def test_range_on_a_miss(front, origin, path):
    body = body_of(50_000)
    origin.route(path, body=body)
    r = fetch(front, path, {"Range": "bytes=20000-20009"})
    # The fill streams the whole object from the origin; the client gets its range (nginx
    # and Varnish both answer 206 here), or the whole body.
    if r.status == 206:
        assert r.body == body[20000:20010]
    else:
        assert (r.status, r.body) == (200, body)
    r = fetch(front, path, {"Range": "bytes=20000-20009"})
    assert (r.status, r.body, r.cache) == (206, body[20000:20010], "HIT")
    assert origin.count(path) == 1


def test_large_object_from_tail(front, origin, path):
    body = body_of(1_500_000, seed=3)
    origin.route(path, body=body)
    a, b = miss_then_hit(front, origin, path)
    assert a.body == body
    assert b.body == body


def test_vary_accept_encoding(front, origin, path):
    def by_encoding(req, n):
        gz = "gzip" in (req.header("Accept-Encoding") or "")
        return {
            "body": b"GZIPPED" if gz else b"identity",
            "headers": [("Vary", "Accept-Encoding")] + ([("Content-Encoding", "gzip")] if gz else []),
        }

    origin.route(path, by_encoding)
    gz = {"Accept-Encoding": "gzip, deflate"}
    ident = {"Accept-Encoding": "identity"}
    first = [fetch(front, path, h) for h in (gz, ident, None)]
    again = [fetch(front, path, h) for h in (gz, ident, None)]
    assert [r.body for r in first] == [b"GZIPPED", b"identity", b"identity"]
    assert [r.body for r in again] == [b"GZIPPED", b"identity", b"identity"]
    assert [r.cache for r in again] == ["HIT", "HIT", "HIT"]
    assert again[0].header("Content-Encoding") == "gzip"
    assert again[1].header("Content-Encoding") is None
    assert again[0].header("Vary") == "Accept-Encoding"
    # The gzip variant and the identity variant, each fetched once (no Accept-Encoding may
    # share the identity variant or have its own).
    assert origin.count(path) in (2, 3)
    assert [fetch(front, path, gz).body for _ in range(2)] == [b"GZIPPED"] * 2


def test_vary_on_another_header_not_cached(front, origin, path):
    origin.route(path, body=b"v", headers=[("Vary", "Cookie")])
    assert [fetch(front, path).cache for _ in range(2)] == ["MISS", "MISS"]


def test_head(front, origin, path):
    origin.route(path, body=b"head body!")
    r = fetch(front, path, method="HEAD", wait_close=0.3)
    assert (r.status, r.header("Content-Length")) == (200, "10")
    assert r.closed is False
    r = fetch(front, path)
    assert (r.status, r.body, r.cache) == (200, b"head body!", "HIT")
    r = fetch(front, path, method="HEAD")
    assert (r.status, r.header("Content-Length"), r.cache) == (200, "10", "HIT")
    assert origin.count(path) == 1
    assert all(req.method == "GET" for req in origin.seen(path))


def test_head_then_get_on_one_connection(front, origin, path):
    origin.route(path, body=b"0123456789" * 100)
    c = Conn(front.port)
    try:
        c.send(request("HEAD", path) + request("GET", path) + request("HEAD", path))
        h1, g, h2 = c.read(head_request=True), c.read(), c.read(head_request=True)
    finally:
        c.close()
    assert (h1.status, h1.body, h1.header("Content-Length")) == (200, b"", "1000")
    assert (g.status, g.body) == (200, b"0123456789" * 100)
    assert (h2.status, h2.header("Content-Length")) == (200, "1000")


def test_purge(front, origin, path):
    origin.route(path, body=b"p")
    miss_then_hit(front, origin, path)
    r = fetch(front, path, method="PURGE")
    assert r.status == 200
    r = fetch(front, path)
    assert (r.cache, r.body) == ("MISS", b"p")
    assert origin.count(path) == 2


def test_purge_removes_every_variant(front, origin, path):
    origin.route(path, body=b"v", headers=[("Vary", "Accept-Encoding")])
    variants = ({"Accept-Encoding": "gzip"}, {"Accept-Encoding": "identity"})
    for h in variants:
        assert [fetch(front, path, h).cache for _ in range(2)] == ["MISS", "HIT"]
    assert fetch(front, path, method="PURGE").status == 200
    assert [fetch(front, path, h).cache for h in variants] == ["MISS", "MISS"]


def test_purge_refused_from_other_addresses(start_front, origin, path):
    f = start_front("--memory", "16M", "--purge-allow", "10.9.9.9")
    origin.route(path, body=b"kept")
    assert [fetch(f, path).cache for _ in range(2)] == ["MISS", "HIT"]
    r = fetch(f, path, method="PURGE")
    assert r.status == 403
    assert fetch(f, path).cache == "HIT"


def test_stats(front, origin, path):
    origin.route(path, body=b"s")
    before = front.stats()
    miss_then_hit(front, origin, path)
    after = front.stats()
    assert after["misses"] >= before["misses"] + 1
    # A hit right after the fill may be answered from the fill before its admission: the
    # front labels it HIT and counts it as joined.
    assert after["hits"] + after["joined"] >= before["hits"] + before["joined"] + 1
    r = fetch(front, "/goblin/stats")
    assert r.header("Content-Type") == "application/json"


def test_origin_sees_its_own_host(front, origin, path):
    origin.route(path, body=b"h")
    fetch(front, path, {"Host": "client.example"})
    (req,) = origin.seen(path)
    assert req.header("Host") == f"127.0.0.1:{origin.port}"
    assert req.method == "GET"



def test_if_range(front, origin, path):
    body = body_of(40_000, seed=5)
    lm = "Sun, 06 Nov 1994 08:49:37 GMT"
    origin.route(path, body=body, headers=[("ETag", '"ir"'), ("Last-Modified", lm)])
    rng = {"Range": "bytes=20000-20009"}
    # On the miss (served from the fill) and on hits (head and SSD tail).
    for if_range, partial in (('"ir"', True), (lm, True), ('"other"', False), ('W/"ir"', False),
                              ("Sun, 06 Nov 1994 08:49:38 GMT", False), ("garbage", False)):
        r = fetch(front, path, {**rng, "If-Range": if_range})
        if partial:
            assert (r.status, r.body) == (206, body[20000:20010]), if_range
            assert r.header("Content-Range") == "bytes 20000-20009/40000"
        else:
            assert (r.status, r.body) == (200, body), if_range
            assert r.header("Content-Range") is None
    assert origin.count(path) == 1
