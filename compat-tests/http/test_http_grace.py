"""Grace and revalidation (RFC 5861, Varnish's grace): stale-while-revalidate served as
HIT-STALE while one background fetch revalidates, conditional revalidation and 304 refreshes,
stale-if-error when the origin dies, times out or answers 5xx, and --grace as the default."""

from __future__ import annotations

import threading
import time

from httpkit import Origin, fetch, wait_until

# The store clock counts whole seconds: max-age=1 is over after at most two.
EXPIRED = 2.2


def test_stale_served_fast_while_one_revalidation_runs(front, origin, path):
    def script(req, n):
        if n == 0:
            return {"body": b"old", "headers": [("Cache-Control", "max-age=1, stale-while-revalidate=30"), ("ETag", '"a"')]}
        return {"body": b"new", "delay": 1.5, "headers": [("Cache-Control", "max-age=300"), ("ETag", '"b"')]}

    origin.route(path, script)
    before = front.stats()
    assert fetch(front, path).cache == "MISS"
    time.sleep(EXPIRED)
    results = []

    def get():
        t0 = time.monotonic()
        results.append((fetch(front, path), time.monotonic() - t0))

    threads = [threading.Thread(target=get) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r, took in results:
        assert (r.status, r.body, r.cache) == (200, b"old", "HIT-STALE"), r
        assert r.header("Warning") is None
        assert int(r.header("Age")) >= 2
        assert took < 1.0, took
    assert wait_until(lambda: fetch(front, path).body == b"new", 5)
    assert origin.count(path) == 2, "one revalidation"
    reval = origin.seen(path)[1]
    assert reval.header("If-None-Match") == '"a"'
    after = front.stats()
    assert after["stale_hits"] >= before["stale_hits"] + 4
    assert after["revalidations"] >= before["revalidations"] + 1


def test_304_refreshes_headers_without_the_body(front, origin, path):
    conditional = []

    def script(req, n):
        if n == 0:
            return {
                "body": b"the body",
                "headers": [
                    ("Cache-Control", "max-age=1, stale-while-revalidate=30"),
                    ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
                    ("X-Version", "1"),
                ],
            }
        if req.header("If-Modified-Since") == "Sun, 06 Nov 1994 08:49:37 GMT":
            conditional.append(req)
            return {"status": 304, "headers": [("Cache-Control", "max-age=300"), ("X-Version", "2")]}
        return {"body": b"refetched"}

    origin.route(path, script)
    before = front.stats()
    assert fetch(front, path).cache == "MISS"
    time.sleep(EXPIRED)
    r = fetch(front, path)
    assert (r.cache, r.body, r.header("X-Version")) == ("HIT-STALE", b"the body", "1")
    assert wait_until(lambda: front.stats()["refreshes"] > before["refreshes"], 5)
    r = fetch(front, path)
    assert (r.status, r.cache, r.body) == (200, "HIT", b"the body")
    assert r.header("X-Version") == "2"
    assert r.header("Cache-Control") == "max-age=300"
    assert r.header("Last-Modified") == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert len(conditional) == 1 and origin.count(path) == 2


def test_waiting_request_gets_refreshed_object(front, origin, path):
    """Past stale-while-revalidate but within stale-if-error the request waits for the
    revalidation; a 304 answers it from the store."""

    def script(req, n):
        if n == 0:
            return {"body": b"kept", "headers": [("Cache-Control", "max-age=1, stale-if-error=60"), ("ETag", '"k"')]}
        assert req.header("If-None-Match") == '"k"'
        return {"status": 304, "headers": [("Cache-Control", "max-age=300")]}

    origin.route(path, script)
    assert fetch(front, path).cache == "MISS"
    time.sleep(EXPIRED)
    r = fetch(front, path)
    assert (r.status, r.cache, r.body) == (200, "HIT", b"kept")
    assert wait_until(lambda: fetch(front, path).cache == "HIT", 3)
    assert origin.count(path) == 2


def test_stale_if_error_when_the_origin_dies(start_front, path):
    o = Origin()
    try:
        f = start_front("--memory", "16M", "--origin-timeout", "1", origin_url=o.url)
        o.route(path, body=b"survivor", headers=[("Cache-Control", "max-age=1, stale-if-error=60")])
        assert fetch(f, path).cache == "MISS"
        o.stop()
        time.sleep(EXPIRED)
        for _ in range(2):
            r = fetch(f, path)
            assert (r.status, r.cache, r.body) == (200, "HIT-STALE", b"survivor"), r
        assert f.stats()["stale_errors"] >= 2
        # Without stale-if-error the same outage is a 502.
        missing = fetch(f, path + "x")
        assert missing.status == 502
    finally:
        o.stop()


def test_stale_if_error_on_5xx_and_timeout(front, origin, path):
    for name, failure in (("5xx", {"status": 503, "body": b"down"}), ("slow", {"delay": 3, "body": b"late"})):
        p = f"{path}/{name}"

        def script(req, n, failure=failure):
            if n == 0:
                return {"body": b"stale one", "headers": [("Cache-Control", "max-age=1, stale-if-error=60")]}
            return failure

        origin.route(p, script)
        assert fetch(front, p).cache == "MISS"
        time.sleep(EXPIRED)
        r = fetch(front, p)
        assert (r.status, r.cache, r.body) == (200, "HIT-STALE", b"stale one"), (name, r)


def test_no_stale_past_the_windows_or_with_must_revalidate(front, origin, path):
    origin.route(path, body=b"m", headers=[("Cache-Control", "max-age=1, stale-while-revalidate=30, must-revalidate")])
    assert fetch(front, path).cache == "MISS"
    time.sleep(EXPIRED)
    assert fetch(front, path).cache == "MISS"
    p2 = path + "/plain"
    origin.route(p2, body=b"p", headers=[("Cache-Control", "max-age=1")])
    assert fetch(front, p2).cache == "MISS"
    time.sleep(EXPIRED)
    assert fetch(front, p2).cache == "MISS"


def test_grace_flag_is_the_default_window(start_front, origin, path):
    f = start_front("--memory", "16M", "--grace", "30")
    origin.route(path, body=b"g", headers=[("Cache-Control", "max-age=1")])
    assert fetch(f, path).cache == "MISS"
    time.sleep(EXPIRED)
    r = fetch(f, path)
    assert (r.cache, r.body) == ("HIT-STALE", b"g")
    assert wait_until(lambda: origin.count(path) == 2, 3)
