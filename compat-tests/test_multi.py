"""MULTI / EXEC / DISCARD / WATCH / UNWATCH, EXECABORT, and redis-py's pipeline()."""

import time

import pytest
import redis

from resp import encode


def test_multi_exec_raw(raw):
    raw.same(encode("MULTI"))
    raw.same(encode("ZADD", "k", "1", "a"))
    raw.same(encode("ZADD", "k", "2", "b"))
    raw.same(encode("EXPIRE", "k", "100"))
    raw.same(encode("TTL", "k"))
    raw.same(encode("EXEC"))


def test_multi_exec_resp3(raw):
    raw(encode("HELLO", "3"))
    raw.same(encode("MULTI") + encode("PING") + encode("CLIENT", "GETNAME") + encode("EXEC"), 4)


def test_multi_errors(both):
    both("EXEC")
    both("DISCARD")
    both("MULTI")
    both("MULTI")  # nested
    both("WATCH", "k")  # inside MULTI
    both("PING")
    both("EXEC")
    both("MULTI", "x")
    both("DISCARD", "x")
    both("WATCH")
    both("UNWATCH", "x")


def test_rejected_exec_is_execabort(raw):
    """Redis answers an EXEC that is rejected before running (here: wrong arity) with
    EXECABORT, inside MULTI or not, and discards the transaction."""
    raw.same(encode("EXEC", "x"))
    raw.same(encode("MULTI") + encode("ZADD", "k", "1", "a") + encode("EXEC", "x"), 3)
    raw.same(encode("EXEC"))  # the transaction is gone
    raw.same(encode("EXISTS", "k"))


def test_discard(both):
    both("MULTI")
    both("ZADD", "k", 1, "a")
    both("DISCARD")
    both("EXISTS", "k")
    both("EXEC")


def test_execabort_unknown_command(raw):
    raw.same(encode("MULTI"))
    raw.same(encode("ZADD", "k", "1", "a"))
    raw.same(encode("NOSUCHCOMMAND", "x"))
    r = raw.same(encode("EXEC"))
    assert r == b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    raw.same(encode("EXISTS", "k"))


def test_execabort_arity(raw):
    raw.same(encode("MULTI") + encode("ZADD", "k") + encode("PING") + encode("EXEC"), 4)
    raw.same(encode("EXISTS", "k"))


def test_execabort_bad_select_is_runtime(raw):
    # SELECT's range check happens at run time: no EXECABORT.
    raw.same(encode("MULTI") + encode("SELECT", "99") + encode("PING") + encode("EXEC"), 4)


def test_runtime_errors_inside_exec(raw):
    raw.same(
        encode("MULTI")
        + encode("ZADD", "k", "1", "a")
        + encode("EXPIRE", "k", "notanumber")
        + encode("ZADD", "k", "notafloat", "b")
        + encode("ZCARD", "k")
        + encode("EXEC"),
        6,
    )


def test_multi_inline(raw):
    raw.same(b"MULTI\r\nPING\r\nECHO hi\r\nEXEC\r\n", 4)


def watch_pair(both, *keys_):
    for c in both.clients():
        c.execute_command("WATCH", *keys_)


def other(both):
    return both.new()


def test_watch_untouched_key_execs(both, keys):
    keys("w")
    watch_pair(both, "w")
    both("ZCARD", "w")  # reads do not invalidate
    both("MULTI")
    both("ZADD", "w", 2, "b")
    both("EXEC")


def test_watch_changed_by_other_client(both, keys):
    keys("w")
    watch_pair(both, "w")
    o = other(both)
    o.ok("ZADD", "w", 5, "changed")
    both("MULTI")
    both("ZADD", "w", 2, "b")
    assert both("EXEC") is None
    both("ZRANGE", "w", 0, -1)
    o.close()


def test_watch_null_reply_bytes(raw, both, keys):
    keys("w")
    raw.same(encode("WATCH", "w"))
    both.ok("ZADD", "w", 9, "x")
    assert raw.same(encode("MULTI") + encode("PING") + encode("EXEC"), 3).endswith(b"*-1\r\n")
    # RESP3: the null type.
    raw(encode("HELLO", "3"))
    raw.same(encode("WATCH", "w"))
    both.ok("ZADD", "w", 10, "y")
    assert raw.same(encode("MULTI") + encode("PING") + encode("EXEC"), 3).endswith(b"_\r\n")


def test_watch_changed_by_same_client(both, keys):
    keys("w")
    watch_pair(both, "w")
    both("ZADD", "w", 3, "c")
    both("MULTI")
    both("PING")
    both("EXEC")


@pytest.mark.parametrize(
    "change",
    [
        ("DEL", "w"),
        ("UNLINK", "w"),
        ("EXPIRE", "w", 100),
        ("PEXPIRE", "w", 0),
        ("PERSIST", "w"),
        ("RENAME", "w", "w2"),
        ("RENAME", "src", "w"),
        ("COPY", "src", "w", "REPLACE"),
        ("MOVE", "w", 1),
        ("ZADD", "w", 1, "m"),  # ZADD that changes nothing (same score)
        ("ZREM", "w", "m"),
        ("ZREM", "w", "absent"),
        ("FLUSHALL",),
        ("FLUSHDB",),
        ("SWAPDB", 0, 1),
        ("TOUCH", "w"),
        ("EXISTS", "w"),
    ],
    ids=lambda c: " ".join(map(str, c)),
)
def test_watch_invalidation(both, keys, change):
    keys("w", "src")
    if change == ("PERSIST", "w"):
        both("EXPIRE", "w", 100)
    watch_pair(both, "w")
    o = other(both)
    o(*change)
    both("MULTI")
    both("ZCARD", "w")
    both("EXEC")
    o.close()


def test_watch_missing_key_created(both):
    watch_pair(both, "new")
    o = other(both)
    o.ok("ZADD", "new", 1, "a")
    both("MULTI")
    both("PING")
    assert both("EXEC") is None
    o.close()


@pytest.mark.parametrize("before", [None, 41, "x"], ids=["created", "in its record", "not an integer"])
def test_watch_incr(both, before):
    """INCR signals a watched key whether it creates it, adds to the integer in its record
    or fails on text (which changes nothing: EXEC runs)."""
    if before is not None:
        both("SET", "n", before)
    watch_pair(both, "n")
    o = other(both)
    o("INCR", "n")
    both("MULTI")
    both("GET", "n")
    both("EXEC")
    o.close()


def test_watch_missing_key_flushall(both):
    """FLUSHALL of a database where the watched key does not exist."""
    watch_pair(both, "absent")
    o = other(both)
    o("FLUSHALL")
    both("MULTI")
    both("PING")
    both("EXEC")
    o.close()


def test_watch_expired_key(both, keys):
    keys("w")
    both("PEXPIRE", "w", 50)
    watch_pair(both, "w")
    time.sleep(0.2)
    both("MULTI")
    both("PING")
    assert both("EXEC") is None


def test_watch_key_already_expired_when_watched(both, keys):
    keys("w")
    both("PEXPIRE", "w", 10)
    time.sleep(0.05)
    watch_pair(both, "w")
    both("MULTI")
    both("PING")
    both("EXEC")


def stale(both, db: int) -> None:
    """Key x of database `db` expired but still there (active expiry is off)."""
    both("SELECT", db)
    both("SET", "x", "foo", "PX", 1)
    time.sleep(0.01)


def watch_stale_then(both, setup, change, watched_db: int = 0) -> None:
    """Redis's suite (unit/multi): a key that had expired when WATCHed changes only if it
    comes back alive; its deletion, a flush, or a swap bringing another expired key or no key
    is no change."""
    both.ok("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        setup()
        both("SELECT", watched_db)
        watch_pair(both, "x")
        change()
        both("MULTI")
        both("PING")
        both("EXEC")
    finally:
        both.ok("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        both("SELECT", 0)


@pytest.mark.parametrize("case", ["read", "flushdb", "swap-none", "swap-in-stale",
                                  "swap-stale-stale", "set", "swap-live-for-stale"])
def test_watch_stale_keys(both, case):
    setup, change, db = {
        "read": (lambda: stale(both, 0), lambda: both("EXISTS", "x"), 0),
        "flushdb": (lambda: stale(both, 0), lambda: both("FLUSHDB"), 0),
        "swap-none": (lambda: stale(both, 1), lambda: both("SWAPDB", 0, 1), 1),
        "swap-in-stale": (lambda: stale(both, 0), lambda: both("SWAPDB", 0, 1), 1),
        "swap-stale-stale": (lambda: (stale(both, 1), stale(both, 0)),
                             lambda: both("SWAPDB", 0, 1), 1),
        "set": (lambda: stale(both, 0), lambda: both("SET", "x", "bar"), 0),
        "swap-live-for-stale": (lambda: (stale(both, 0), both("SELECT", 1), both("SET", "x", 1)),
                                lambda: both("SWAPDB", 0, 1), 1),
    }[case]
    watch_stale_then(both, setup, change, db)


def test_watch_in_other_db(both, keys):
    keys("w")
    watch_pair(both, "w")
    o = other(both)
    o("SELECT", 1)
    o.ok("ZADD", "w", 1, "other-db")  # same name, other database: no effect
    both("MULTI")
    both("PING")
    both("EXEC")
    o.close()


def test_unwatch(both, keys):
    keys("w")
    watch_pair(both, "w")
    both("UNWATCH")
    o = other(both)
    o.ok("ZADD", "w", 5, "x")
    both("MULTI")
    both("PING")
    both("EXEC")
    o.close()


def test_exec_and_discard_clear_watches(both, keys):
    keys("w")
    watch_pair(both, "w")
    both("MULTI")
    both("DISCARD")
    o = other(both)
    o.ok("ZADD", "w", 5, "x")
    both("MULTI")
    both("PING")
    both("EXEC")
    watch_pair(both, "w")
    both("MULTI")
    both("EXEC")
    o.ok("ZADD", "w", 6, "y")
    both("MULTI")
    both("PING")
    both("EXEC")
    o.close()


def test_watch_multiple_keys(both, keys):
    keys("a", "b", "c")
    watch_pair(both, "a", "b")
    for c in both.clients():
        c.execute_command("WATCH", "c")
    o = other(both)
    o.ok("ZADD", "c", 2, "x")
    both("MULTI")
    both("PING")
    both("EXEC")
    o.close()


def test_big_transaction(both):
    both("MULTI")
    for c in both.clients():
        for i in range(500):
            assert c.execute_command("ZADD", f"t{i}", i, "m") == b"QUEUED"
    r, g = both.run("EXEC")
    assert r == g and len(g) == 500
    both("DBSIZE")


# --- redis-py pipeline() (MULTI/EXEC under the hood) -------------------------------------------


def test_pipeline_transaction(api):
    out = []
    for c in api.clients():
        with c.pipeline() as p:  # transaction=True by default
            p.zadd("p", {"a": 1, "b": 2})
            p.zcard("p")
            p.expire("p", 100)
            p.ttl("p")
            p.exists("p", "nokey")
            p.delete("p")
            out.append(p.execute())
    assert out[0] == out[1]


def test_pipeline_transaction_error(api):
    out = []
    for c in api.clients():
        with c.pipeline() as p:
            p.zadd("p", {"a": 1})
            p.execute_command("EXPIRE", "p", "bad")
            p.zcard("p")
            try:
                out.append(p.execute(raise_on_error=False))
            except redis.RedisError as e:  # noqa: PERF203
                out.append(e)
    assert [type(x).__name__ for x in out[0]] == [type(x).__name__ for x in out[1]]
    assert str(out[0][1]) == str(out[1][1])


def test_pipeline_execabort(api):
    errors = []
    for c in api.clients():
        with c.pipeline() as p:
            p.execute_command("NOSUCHCOMMAND")
            p.zadd("p", {"a": 1})
            with pytest.raises(redis.RedisError) as e:
                p.execute()
            errors.append((type(e.value).__name__, str(e.value)))
    assert errors[0] == errors[1]


def test_pipeline_watch_error(api):
    results = []
    for c in api.clients():
        c.zadd("w", {"a": 1})
        with c.pipeline() as p:
            p.watch("w")
            c2 = c.__class__(connection_pool=c.connection_pool.__class__(
                **c.connection_pool.connection_kwargs))
            c2.zadd("w", {"b": 2})
            c2.close()
            p.multi()
            p.zadd("w", {"c": 3})
            try:
                p.execute()
                results.append("executed")
            except redis.WatchError:
                results.append("watch-error")
    assert results == ["watch-error", "watch-error"]


def test_pipeline_transaction_helper(api):
    """redis-py's transaction() retries a WATCHed function until EXEC succeeds."""
    for c in api.clients():
        c.zadd("counter", {"m": 1})

        def bump(pipe):
            score = pipe.zscore("counter", "m")
            pipe.multi()
            pipe.zadd("counter", {"m": score + 1})

        c.transaction(bump, "counter")
    api("ZSCORE", "counter", "m")


async def test_async_pipeline_transaction(clean):
    import harness

    out = []
    for s in clean:
        c = harness.make_async_client(s)
        async with c.pipeline(transaction=True) as p:
            p.zadd("ap", {"a": 1})
            p.zcard("ap")
            p.execute_command("EXPIRE", "ap", "x")
            out.append(await p.execute(raise_on_error=False))
        await c.aclose()
    assert out[0][:2] == out[1][:2] and str(out[0][2]) == str(out[1][2])
