"""The object size limit of the HTTP mirror without --ssd-dir (issue 34): every object lives
whole in the RAM arena, so one larger than a --block (less the arena's 16-byte header) is
served but not cached, and that is visible (a start-up line, the `too_large` counter, a log
line); the operator raises the limit with --block."""

from __future__ import annotations

from httpkit import body_of, fetch, wait_until


def test_objects_over_the_arena_limit_are_counted_and_logged(start_front, origin, path):
    f = start_front("--memory", "16M", "--block", "64K", "-I", "32K", "--small-memory", "16M")
    assert "HTTP objects up to 65520 bytes with their headers are cached" in f.log_tail(200)
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
    assert "not cached: over the RAM arena's 65520 bytes" in f.log_tail(200)


def test_objects_within_a_block_are_cached_and_the_operator_raises_it(start_front, origin, path):
    # 1.5 MB fits the default 2 MiB block (over -I's 1 MiB, which is memcache's limit).
    for args, size in ((["--memory", "16M"], 1_500_000), (["--memory", "16M", "--block", "4M", "--small-memory", "32M"], 2_500_000)):
        f = start_front(*args)
        body = body_of(size, seed=5)
        origin.route(f"{path}/{size}", body=body)
        assert fetch(f, f"{path}/{size}").body == body
        r = wait_until(lambda: (r := fetch(f, f"{path}/{size}")).cache == "HIT" and r, 3)
        assert r and r.body == body
        assert f.stats()["too_large"] == 0
