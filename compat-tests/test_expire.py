"""Expiry: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX|XX|GT|LT), TTL, PTTL, EXPIRETIME,
PEXPIRETIME, PERSIST, lazy expiry on access and active expiry."""

import time

import pytest

FAR = 4102444800  # 2100-01-01, seconds
EXPIRE_CMDS = [
    ("EXPIRE", 1000),
    ("PEXPIRE", 1000000),
    ("EXPIREAT", FAR),
    ("PEXPIREAT", FAR * 1000),
]


def close(a, b, slack):
    return abs(a - b) <= slack


def test_ttl_states(both, keys):
    both("TTL", "nokey")
    both("PTTL", "nokey")
    both("EXPIRETIME", "nokey")
    both("PEXPIRETIME", "nokey")
    keys("k")
    both("TTL", "k")
    both("PTTL", "k")
    both("EXPIRETIME", "k")
    both("PEXPIRETIME", "k")
    both("TTL")
    both("TTL", "a", "b")
    both("PTTL")
    both("EXPIRETIME")
    both("PEXPIRETIME", "a", "b")


@pytest.mark.parametrize("cmd,value", EXPIRE_CMDS)
def test_expire_family_basic(both, keys, cmd, value):
    both(cmd, "nokey", value)
    keys("k")
    both(cmd, "k", value)
    r, g = both.run("PTTL", "k")
    assert close(r, g, 1000), (r, g)
    if cmd.endswith("AT"):
        both("EXPIRETIME", "k")
        both("PEXPIRETIME", "k")
    both(cmd, "k")
    both(cmd, "k", value, "NX", "extra")
    both(cmd)


@pytest.mark.parametrize("cmd,value", EXPIRE_CMDS)
def test_expire_family_errors(both, keys, cmd, value):
    keys("k")
    for bad in ("abc", "1.5", "", " 1", "99999999999999999999"):
        both(cmd, "k", bad)
    both(cmd, "k", value, "FOO")
    both(cmd, "k", value, "NX", "XX")
    both(cmd, "k", value, "NX", "GT")
    both(cmd, "k", value, "NX", "LT")
    both(cmd, "k", value, "XX", "NX")
    both(cmd, "k", value, "GT", "LT")
    both(cmd, "k", value, "LT", "GT")
    both(cmd, "k", value, "gt", "xx", "xx")
    # Overflow of the absolute time.
    both(cmd, "k", 9223372036854775807)
    both(cmd, "k", -9223372036854775808)
    both(cmd, "k", 9223372036854775)
    both(cmd, "k", -9223372036854775)
    both("EXISTS", "k")


@pytest.mark.parametrize("cmd,value", EXPIRE_CMDS)
def test_expire_options(both, keys, cmd, value):
    keys("k")
    # No TTL yet: NX sets, XX does not, GT does not (no TTL = infinite), LT does.
    both(cmd, "k", value, "XX")
    both(cmd, "k", value, "GT")
    both("TTL", "k")
    both(cmd, "k", value, "NX")
    both(cmd, "k", value, "NX")
    both(cmd, "k", value * 2 if "AT" not in cmd else value + 100, "GT")
    both(cmd, "k", value, "GT")
    both(cmd, "k", value, "LT")
    both(cmd, "k", value - 10, "LT")
    both(cmd, "k", value + 10, "LT")
    both(cmd, "k", value + 10, "XX")
    if "AT" in cmd:
        both(cmd, "k", value + 10, "GT")  # the same absolute time is not greater
        both(cmd, "k", value + 10, "LT")
    both(cmd, "k", value + 20, "xx", "gt")
    both(cmd, "k", value - 100, "XX", "LT")
    both("PERSIST", "k")
    both(cmd, "k", value, "LT")
    both("PERSIST", "k")
    both(cmd, "k", value, "XX", "LT")


def test_expire_in_the_past_deletes(both, keys):
    keys("a", "b", "c", "d", "e", "f")
    both("EXPIRE", "a", 0)
    both("PEXPIRE", "b", -100)
    both("EXPIREAT", "c", 1)
    both("PEXPIREAT", "d", 1000)
    both("EXPIRE", "e", -1, "GT")
    both("EXPIRE", "f", -1, "LT")
    both("EXISTS", "a", "b", "c", "d", "e", "f")
    both("DBSIZE")
    both("EXPIRE", "nokey", -1)


def test_ttl_rounding(both, keys):
    keys("k")
    both("PEXPIRE", "k", 1700)
    both("TTL", "k")
    both("PEXPIRE", "k", 2300)
    both("TTL", "k")
    both("EXPIRE", "k", 100)
    both("TTL", "k")
    r, g = both.run("PTTL", "k")
    assert 99000 < r <= 100000 and 99000 < g <= 100000


def test_expiretime_exact(both, keys):
    keys("k")
    both("EXPIREAT", "k", FAR)
    both("EXPIRETIME", "k")
    both("PEXPIRETIME", "k")
    both("PEXPIREAT", "k", FAR * 1000 + 1499)
    both("EXPIRETIME", "k")
    both("PEXPIRETIME", "k")
    both("PEXPIREAT", "k", FAR * 1000 + 1500)
    both("EXPIRETIME", "k")
    both("TTL", "nokey")


def test_persist(both, keys):
    both("PERSIST", "nokey")
    keys("k")
    both("PERSIST", "k")
    both("EXPIRE", "k", 100)
    both("PERSIST", "k")
    both("TTL", "k")
    both("PERSIST", "k")
    both("PERSIST")
    both("PERSIST", "a", "b")


def test_overwrite_with_zadd_keeps_ttl(both, keys):
    keys("k")
    both("EXPIRE", "k", 100)
    both.ok("ZADD", "k", 2, "other")
    both("TTL", "k")


def test_del_and_recreate_clears_ttl(both, keys):
    keys("k")
    both("EXPIRE", "k", 100)
    both("DEL", "k")
    keys("k")
    both("TTL", "k")


def test_lazy_expiry_on_access(both, keys):
    keys("a", "b", "c", "d", "e")
    for k in "abcde":
        both("PEXPIRE", k, 30)
    time.sleep(0.1)
    both("EXISTS", "a")
    both("TYPE", "b")
    both("TTL", "c")
    both("PTTL", "d")
    both("ZCARD", "e")
    both("RENAME", "e", "e2")
    both("EXPIRE", "e", 100)
    both("PERSIST", "e")
    both("DBSIZE")


def test_expired_key_cannot_be_renamed_or_copied(both, keys):
    keys("src")
    both("PEXPIRE", "src", 10)
    both("DEBUG", "SLEEP", "0.05")
    both("RENAME", "src", "dst")
    both("RENAMENX", "src", "dst")
    both("COPY", "src", "dst")
    both("MOVE", "src", 1)
    both("EXISTS", "dst")


def test_active_expiry(both, keys):
    """A key with a 100 ms TTL that nobody touches leaves DBSIZE within about 2 seconds."""
    keys("short", "long")
    both("PEXPIRE", "short", 100)
    deadline = time.monotonic() + 2.5
    sizes = None
    while time.monotonic() < deadline:
        sizes = tuple(c.execute_command("DBSIZE") for c in both.clients())
        if sizes == (1, 1):
            break
        time.sleep(0.05)
    assert sizes == (1, 1), f"DBSIZE (redis, goblin) after 2.5 s: {sizes}"


def test_active_expiry_many_keys_and_dbs(both):
    """500 short-lived keys in two databases all go, with nobody reading them."""
    for c in both.clients():
        for db in (0, 3):
            p = c.pipeline(transaction=False)  # a connection of its own: SELECT in it
            p.execute_command("SELECT", db)
            for i in range(250):
                p.execute_command("ZADD", f"k{i}", i, "m")
                p.execute_command("PEXPIRE", f"k{i}", 100)
            p.execute_command("ZADD", "keeper", 1, "m")
            p.execute()
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        sizes = []
        for c in both.clients():
            for db in (0, 3):
                c.execute_command("SELECT", db)
                sizes.append(c.execute_command("DBSIZE"))
        if sizes == [1, 1, 1, 1]:
            break
        time.sleep(0.1)
    assert sizes == [1, 1, 1, 1], f"DBSIZE per db (redis 0, 3, goblin 0, 3): {sizes}"


def test_expired_keys_counted_in_info(both):
    for c in both.clients():
        c.execute_command("CONFIG", "RESETSTAT")
        c.execute_command("ZADD", "k", 1, "m")
        c.execute_command("PEXPIRE", "k", 20)
    time.sleep(0.1)
    both("EXISTS", "k")
    for c in both.clients():
        info = c.execute_command("INFO", "stats").decode()
        fields = dict(l.split(":", 1) for l in info.split("\r\n") if ":" in l)
        assert int(fields["expired_keys"]) == 1, (c, fields["expired_keys"])


def test_expired_stale_perc_estimates_the_due_keys(both):
    """INFO's expired_stale_perc follows the share of due keys the active cycle samples:
    above zero once it finds 400 of 500 volatile keys due, back to 0.00 at CONFIG
    RESETSTAT."""

    def stale(c):
        info = c.execute_command("INFO", "stats").decode()
        return float(info.split("expired_stale_perc:")[1].split()[0])

    for c in both.clients():
        c.execute_command("CONFIG", "RESETSTAT")
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        p = c.pipeline(transaction=False)
        for i in range(500):
            p.execute_command("SET", f"v{i}", i, "PX", 20 if i < 400 else 100000)
        p.execute()
        assert stale(c) == 0.0
    time.sleep(0.1)
    for c in both.clients():
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not all(stale(c) > 0 for c in both.clients()):
        time.sleep(0.05)
    assert all(0 < stale(c) <= 100 for c in both.clients()), [stale(c) for c in both.clients()]
    for c in both.clients():
        c.execute_command("CONFIG", "RESETSTAT")
        assert "expired_stale_perc:0.00\r\n" in c.execute_command("INFO", "stats").decode()


def test_a_long_active_expiry_cycle_is_a_latency_event(both):
    """unit/latency-monitor: an active expiry cycle that took at least the threshold shows
    in LATENCY LATEST as expire-cycle (100,000 due keys keep each cycle at its time limit)."""
    for c in both.clients():
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
        c.execute_command("LATENCY", "RESET")
        p = c.pipeline(transaction=False)
        for i in range(100000):
            p.execute_command("SET", f"due{i}", i, "PX", 1)
        p.execute()
    time.sleep(0.05)
    try:
        for c in both.clients():
            c.execute_command("CONFIG", "SET", "latency-monitor-threshold", 5)
            c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)

        def events(c):
            return [e[0] for e in c.execute_command("LATENCY", "LATEST")]

        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(b"expire-cycle" in events(c) for c in both.clients()):
            time.sleep(0.05)
        assert [b"expire-cycle" in events(c) for c in both.clients()] == [True, True]
    finally:
        for c in both.clients():
            c.execute_command("CONFIG", "SET", "latency-monitor-threshold", 0)
            c.execute_command("FLUSHALL")
            c.execute_command("LATENCY", "RESET")


def test_info_keyspace_expires(both, keys):
    keys("a", "b", "c")
    both("EXPIRE", "a", 100)
    both("EXPIRE", "b", 100)
    for c in both.clients():
        info = c.execute_command("INFO", "keyspace").decode()
        assert "db0:keys=3,expires=2,avg_ttl=" in info, info


def test_expire_in_multi(both, keys):
    keys("k")
    both("MULTI")
    both("EXPIRE", "k", 100)
    both("TTL", "k")
    both("PERSIST", "k")
    both("PEXPIRE", "k", 0)
    both("EXISTS", "k")
    both("EXEC")


def test_ttl_in_other_db(both, keys):
    both("SELECT", 4)
    keys("k")
    both("EXPIRE", "k", 50)
    both("SELECT", 0)
    both("TTL", "k")
    both("SELECT", 4)
    both("TTL", "k")


async def test_expiry_async(aboth):
    await aboth("ZADD", "k", 1, "m")
    await aboth("PEXPIRE", "k", 10000, "NX")
    await aboth("PEXPIRE", "k", 10000, "NX")
    await aboth("PERSIST", "k")
    await aboth("TTL", "k")


def test_expiry_resp3(both3, keys):
    keys("k")
    both3("EXPIRE", "k", 100)
    both3("TTL", "k")
    both3("EXPIRE", "k", 100, "NX", "XX")
