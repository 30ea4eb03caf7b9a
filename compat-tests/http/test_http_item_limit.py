"""The item size limit of the HTTP mirror without --ssd-dir (issue 34): objects over
--max-item-size are served but not cached, and that is visible (a start-up line, the `too_large` counter, a log line);
the operator raises the limit with -I and --block."""

from __future__ import annotations

from httpkit import body_of, fetch, wait_until


def test_objects_over_the_item_limit_are_counted_and_logged(start_front, origin, path):
    f = start_front("--memory", "16M", "--max-item-size", "64K")
    assert "larger ones are served uncached" in f.log_tail(200)
    big, small = body_of(100_000, seed=3), body_of(30_000, seed=4)
    origin.route(path + "/big", body=big)
    origin.route(path + "/small", body=small)
    before = f.stats()["too_large"]
    for n in (1, 2):
        r = fetch(f, path + "/big")
        assert (r.status, r.body, r.cache) == (200, big, "MISS")
        # Admission runs after the response: the next request must not join this fill.
        assert wait_until(lambda: f.stats()["too_large"] == before + n, 3)
    assert fetch(f, path + "/small").body == small
    assert wait_until(lambda: fetch(f, path + "/small").cache == "HIT", 3)
    assert f.stats()["not_admitted"] >= 2
    assert "not cached: over --max-item-size (65536 bytes)" in f.log_tail(200)


def test_the_operator_raises_the_ram_item_limit(start_front, origin, path):
    f = start_front("--memory", "16M", "--max-item-size", "3M", "--block", "4M", "--small-memory", "32M")
    body = body_of(2_500_000, seed=5)
    origin.route(path, body=body)
    assert fetch(f, path).body == body
    r = wait_until(lambda: (r := fetch(f, path)).cache == "HIT" and r, 3)
    assert r and r.body == body
    assert f.stats()["too_large"] == 0
