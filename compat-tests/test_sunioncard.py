"""SUNIONCARD (Redis 8.10), pinned on Goblin alone (no Redis 8.10 at hand) from redis.io's
SUNIONCARD page: the number of distinct members of the union, missing keys as empty sets,
LIMIT stopping the count (0: none), APPROX the HyperLogLog estimate. The page gives no error
texts: they are taken to be SINTERCARD's, as for SDIFFCARD. APPROX is pinned as what
Redis 7.2's PFADD of every member then PFCOUNT answers (same registers, same 0.81% error),
capped by LIMIT like the exact count; the estimate is checked against the Redis at hand."""

from __future__ import annotations

import pytest

from harness import make_client
from hfe_scripts import Err
from pinned import run_pinned
from test_hash_field_expire import lone_goblin  # noqa: F401 (the fixture)

SCRIPT = [
    (("SADD", "key1", "a", "b", "c"), 3),
    (("SADD", "key2", "c", "d", "e"), 3),
    (("SUNIONCARD", "2", "key1", "key2"), 5),
    (("SUNIONCARD", "2", "key1", "key2", "LIMIT", "3"), 3),
    (("SUNIONCARD", "2", "key1", "key2", "limit", "0"), 5),
    (("SUNIONCARD", "2", "key1", "key2", "LIMIT", "9"), 5),
    (("SUNIONCARD", "2", "key1", "key2", "APPROX"), 5),
    (("SUNIONCARD", "2", "key1", "key2", "approx", "LIMIT", "2"), 2),
    (("SUNIONCARD", "2", "key1", "key2", "LIMIT", "2", "APPROX"), 2),
    (("SUNIONCARD", "1", "key1"), 3),
    (("SUNIONCARD", "3", "nokey", "key1", "key1"), 3),
    (("SUNIONCARD", "1", "nokey"), 0),
    (("SUNIONCARD", "1", "nokey", "APPROX"), 0),
    (("SADD", "ints", "1", "2", "3"), 3),
    (("SADD", "mixed", "2", "x"), 2),
    (("SUNIONCARD", "2", "ints", "mixed"), 4),
    (("SUNIONCARD", "2", "ints", "mixed", "APPROX"), 4),
    (("SUNIONCARD", "0", "key1"), Err("numkeys should be greater than 0")),
    (("SUNIONCARD", "x", "key1"), Err("numkeys should be greater than 0")),
    (("SUNIONCARD", "3", "key1", "key2"), Err("Number of keys can't be greater than number of args")),
    (("SUNIONCARD", "2", "key1", "key2", "LIMIT", "-1"), Err("LIMIT can't be negative")),
    (("SUNIONCARD", "2", "key1", "key2", "LIMIT"), Err("syntax error")),
    (("SUNIONCARD", "1", "key1", "EXACT"), Err("syntax error")),
    (("SET", "str", "x"), b"OK"),
    (("SUNIONCARD", "2", "key1", "str"), Err("WRONGTYPE Operation against a key holding the wrong kind of value")),
    (("SUNIONCARD", "2", "nokey", "str", "APPROX"), Err("WRONGTYPE Operation against a key holding the wrong kind of value")),
    (("SUNIONCARD", "1"), Err("wrong number of arguments for 'sunioncard' command")),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_script_pinned_on_goblin(lone_goblin, protocol):
    run_pinned(lone_goblin, SCRIPT, protocol)


def big_sets(c):
    """Two overlapping sets of 30000 members (an intset and a hashtable) and the HLL of
    their members."""
    c.delete("s1", "s2", "h")
    for start in range(0, 20000, 1000):
        members = [str(i) for i in range(start, start + 1000)]
        c.sadd("s1", *members)
        c.pfadd("h", *members)
    for start in range(10000, 30000, 1000):
        members = ["m%d" % i if i >= 20000 else str(i) for i in range(start, start + 1000)]
        c.sadd("s2", *members)
        c.pfadd("h", *members)


# What Redis 7.2.4's PFCOUNT answers for the members big_sets adds (30000 distinct).
PFCOUNT_OF_BIG_SETS = 29805


def test_approx_is_the_hll_estimate(lone_goblin):
    c = make_client(lone_goblin)
    big_sets(c)
    assert c.execute_command("SUNIONCARD", "2", "s1", "s2") == 30000
    assert c.execute_command("SUNIONCARD", "2", "s1", "s2", "LIMIT", "12345") == 12345
    approx = c.execute_command("SUNIONCARD", "2", "s1", "s2", "APPROX")
    assert approx == c.pfcount("h") == PFCOUNT_OF_BIG_SETS
    assert c.execute_command("SUNIONCARD", "2", "s1", "s2", "APPROX", "LIMIT", "100") == 100
    c.close()


def test_approx_matches_redis_pfcount(tmp_path):
    """PFCOUNT_OF_BIG_SETS is what the Redis at hand answers (7.x: the same HLL)."""
    from harness import Pair
    redis_server = Pair(tmp_path, []).redis
    redis_server.start()
    try:
        r = make_client(redis_server)
        big_sets(r)
        assert r.pfcount("h") == PFCOUNT_OF_BIG_SETS
        r.close()
    finally:
        redis_server.stop()


def test_command_info_getkeys_and_acl(lone_goblin):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    [info] = c.execute_command("COMMAND", "INFO", "sunioncard")
    assert info[:7] == [b"sunioncard", -3, [b"readonly", b"movablekeys"], 0, 0, 0, [b"@read", b"@set", b"@slow"]]
    assert c.execute_command("COMMAND", "GETKEYS", "SUNIONCARD", "2", "a", "b", "APPROX") == [b"a", b"b"]
    assert b"sunioncard" in set(c.execute_command("ACL", "CAT", "set"))
    c.close()
