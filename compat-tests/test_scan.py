"""SCAN: MATCH, COUNT, TYPE, errors, and the guarantee that a key present for the whole
scan is returned while other keys come and go. Cursor values are the server's own, so
what is compared is the set of keys a full iteration returns."""

import random

import pytest


def full_scan(client, *opts, limit=100000):
    seen, cursor, calls = [], b"0", 0
    while True:
        cursor, batch = client.execute_command("SCAN", cursor, *opts)
        seen.extend(batch)
        calls += 1
        assert calls < limit
        if cursor in (b"0", 0):
            return seen


def scan_both(both, *opts):
    r = full_scan(both.redis, *opts)
    g = full_scan(both.goblin, *opts)
    assert set(r) == set(g), (opts, sorted(set(r) ^ set(g))[:20])
    return set(g)


def fill(both, n, prefix="key:"):
    for c in both.clients():
        p = c.pipeline(transaction=False)
        for i in range(n):
            p.execute_command("ZADD", f"{prefix}{i}", i, "m")
        p.execute()


def test_scan_cursor_parsed_as_strtoul(both):
    """Redis reads the cursor with strtoul(), so "-1" is accepted (as 2^64-1)."""
    both("SCAN", "-1")
    both("SCAN", "")  # an empty cursor reads as 0
    both("SCAN", "-0")
    both("SCAN", "+5")


def test_scan_empty(both):
    both("SCAN", 0)
    both("SCAN", 0, "MATCH", "*", "COUNT", 100, "TYPE", "zset")


def test_scan_small_returns_everything(both, keys):
    keys("a", "b", "c")
    assert scan_both(both) == {b"a", b"b", b"c"}


def test_scan_large(both):
    fill(both, 2000)
    assert len(scan_both(both)) == 2000
    assert len(scan_both(both, "COUNT", 7)) == 2000
    assert len(scan_both(both, "COUNT", 5000)) == 2000


def test_scan_no_duplicates_without_changes(both):
    fill(both, 1000)
    g = full_scan(both.goblin, "COUNT", 13)
    assert len(g) == len(set(g)) == 1000


@pytest.mark.parametrize("pattern", ["key:1*", "key:?", "key:[12]0", "*9", "nomatch*", "key:\\*", "*"])
def test_scan_match(both, pattern):
    fill(both, 300)
    scan_both(both, "MATCH", pattern)
    scan_both(both, "MATCH", pattern, "COUNT", 3)


def test_scan_type(both):
    fill(both, 50)
    assert len(scan_both(both, "TYPE", "zset")) == 50
    assert len(scan_both(both, "TYPE", "ZSET")) == 50
    for t in ("string", "list", "set", "hash", "stream", "none"):
        assert scan_both(both, "TYPE", t) == set()
    scan_both(both, "TYPE", "zset", "MATCH", "key:1*", "COUNT", 10)


def test_scan_type_unknown(both):
    fill(both, 5)
    both("SCAN", 0, "TYPE", "bogus")


def test_scan_errors(both):
    for cursor in ("abc", "1.5", "18446744073709551616", " 0", "0x10"):
        both("SCAN", cursor)
    both("SCAN", "18446744073709551615")
    both("SCAN", 0, "COUNT", 0)
    both("SCAN", 0, "COUNT", -1)
    both("SCAN", 0, "COUNT", "abc")
    both("SCAN", 0, "COUNT")
    both("SCAN", 0, "MATCH")
    both("SCAN", 0, "TYPE")
    both("SCAN", 0, "FOO", "bar")
    both("SCAN", 0, "MATCH", "*", "FOO")
    both("SCAN")


def test_scan_skips_expired(both, keys):
    keys("live", "dead")
    both("PEXPIRE", "dead", 1)
    both("DEBUG", "SLEEP", "0.01")
    assert scan_both(both) == {b"live"}


def test_scan_other_db(both, keys):
    keys("in0")
    both("SELECT", 2)
    keys("in2")
    assert scan_both(both) == {b"in2"}


@pytest.mark.parametrize("seed", [1, 2])
def test_scan_guarantee_under_churn(both, seed):
    """Keys present for the whole scan are all returned, while other keys are added and
    removed between SCAN calls (in numbers large enough to make the table grow and shrink)."""
    rng = random.Random(seed)
    fill(both, 1000, prefix="stable:")
    fill(both, 1000, prefix="churn:")
    for c in both.clients():
        churn_live = set(range(1000))
        next_id = 1000
        seen, cursor = set(), b"0"
        while True:
            cursor, batch = c.execute_command("SCAN", cursor, "COUNT", 20)
            seen.update(batch)
            if cursor in (b"0", 0):
                break
            p = c.pipeline(transaction=False)
            for _ in range(rng.randrange(0, 60)):
                p.execute_command("ZADD", f"churn:{next_id}", 1, "m")
                churn_live.add(next_id)
                next_id += 1
            for victim in rng.sample(sorted(churn_live), min(len(churn_live), rng.randrange(0, 60))):
                p.execute_command("DEL", f"churn:{victim}")
                churn_live.discard(victim)
            p.execute()
        stable = {f"stable:{i}".encode() for i in range(1000)}
        missing = stable - seen
        assert not missing, f"{c}: {len(missing)} stable keys never returned, e.g. {sorted(missing)[:5]}"


def test_scan_guarantee_with_growth(both):
    """The table grows a lot early in the scan: stable keys still all come back."""
    fill(both, 100, prefix="stable:")
    for c in both.clients():
        seen, cursor, n, calls = set(), b"0", 0, 0
        while True:
            cursor, batch = c.execute_command("SCAN", cursor, "COUNT", 5)
            seen.update(batch)
            calls += 1
            assert calls < 100000
            if cursor in (b"0", 0):
                break
            if n >= 4000:
                continue
            p = c.pipeline(transaction=False)
            for _ in range(200):
                p.execute_command("ZADD", f"grow:{n}", 1, "m")
                n += 1
            p.execute()
        assert {f"stable:{i}".encode() for i in range(100)} <= seen, c


def test_scan_iter_redis_py(api):
    for c in api.clients():
        for i in range(120):
            c.zadd(f"it:{i}", {"m": i})
    r = set(api.redis.scan_iter(match="it:1*", count=10))
    g = set(api.goblin.scan_iter(match="it:1*", count=10))
    assert r == g and len(g) == 31
    assert set(api.goblin.scan_iter(_type="zset")) == set(api.redis.scan_iter(_type="zset"))


def test_scan_resp3(both3, keys):
    keys("a")
    both3("SCAN", 0)
    both3("SCAN", "x")
