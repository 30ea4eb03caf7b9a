"""AGGREGATE COUNT of ZUNION, ZINTER, ZUNIONSTORE and ZINTERSTORE (Redis 8.8, redis/redis#14892),
pinned on Goblin alone (no Redis 8.8 at hand) from the PR's and the client libraries' examples:
scores are ignored, each input holding a member adds its weight (default 1). SUM, MIN and MAX
stay compared with Redis in the sorted-set suite."""

from __future__ import annotations

from harness import make_client
from hfe_scripts import Err
from pinned import run_pinned
from test_hash_field_expire import lone_goblin  # noqa: F401 (the fixture)

SCRIPT = [
    (("ZADD", "s1", "1", "foo", "1", "bar"), 2),
    (("ZADD", "s2", "2", "foo", "2", "bar"), 2),
    (("ZADD", "s3", "3", "foo"), 1),
    (("ZUNIONSTORE", "out", "3", "s1", "s2", "s3", "AGGREGATE", "COUNT"), 2),
    (("ZRANGE", "out", "0", "-1", "WITHSCORES"), [b"bar", b"2", b"foo", b"3"]),
    (("ZADD", "set1", "1", "one", "2", "two"), 2),
    (("ZADD", "set2", "99", "one", "50", "three"), 2),
    (("ZUNION", "2", "set1", "set2", "AGGREGATE", "count", "WITHSCORES"),
     [b"three", b"1", b"two", b"1", b"one", b"2"]),
    (("ZUNION", "2", "set1", "set2", "WEIGHTS", "2", "3", "AGGREGATE", "COUNT", "WITHSCORES"),
     [b"two", b"2", b"three", b"3", b"one", b"5"]),
    (("ZINTER", "2", "set1", "set2", "AGGREGATE", "COUNT", "WITHSCORES"), [b"one", b"2"]),
    (("ZINTERSTORE", "i", "3", "s1", "s2", "s3", "WEIGHTS", "1", "10", "100", "AGGREGATE", "COUNT"), 1),
    (("ZSCORE", "i", "foo"), b"111"),
    (("SADD", "plain", "one", "x"), 2),
    (("ZUNION", "2", "plain", "set1", "AGGREGATE", "COUNT", "WITHSCORES"),
     [b"two", b"1", b"x", b"1", b"one", b"2"]),
    (("ZUNION", "2", "set1", "set2", "AGGREGATE", "COUNTS"), Err("syntax error")),
    (("ZUNION", "2", "set1", "set2", "AGGREGATE", "SUM", "WITHSCORES"),
     [b"two", b"2", b"three", b"50", b"one", b"100"]),
]


def test_script_pinned_on_goblin(lone_goblin):
    run_pinned(lone_goblin, SCRIPT)


def test_resp3_scores_are_doubles(lone_goblin):
    c = make_client(lone_goblin, protocol=3)
    c.flushall()
    c.zadd("a", {"m": 5})
    c.zadd("b", {"m": 7})
    c.response_callbacks = {}
    assert c.execute_command("ZUNION", 2, "a", "b", "AGGREGATE", "COUNT", "WITHSCORES") == [[b"m", 2.0]]
    c.close()
