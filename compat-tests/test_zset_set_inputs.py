"""ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD with plain sets as inputs: each
member scores 1 (times its weight), beside sorted sets, in every encoding of the set, with
Redis's ordering of the inputs (WRONGTYPE for other types: test_set_basic)."""

import itertools

import pytest


@pytest.fixture
def b(both):
    both("ZADD", "z", 1, "a", 2, "b", 3.5, "10", "inf", "big")
    both("ZADD", "z2", -1, "b", 7, "c", 0, "1")
    both("SADD", "ints", 1, 2, 10)
    both("SADD", "strs", "a", "c", "x", "10")
    both("SADD", "bigs", *range(600), "a", "b")
    return both


KEYS = ["z", "z2", "ints", "strs", "bigs", "nokey"]


def test_set_inputs(b):
    for n in (1, 2, 3):
        for keys in itertools.permutations(KEYS, n):
            for op in ("ZUNION", "ZINTER"):
                b(op, n, *keys, "WITHSCORES")
                b(op, n, *keys, "WEIGHTS", *[i + 0.5 for i in range(n)], "WITHSCORES")
                b(op, n, *keys, "AGGREGATE", "MAX", "WITHSCORES")
                b(op, n, *keys, "WEIGHTS", *(["inf"] * n), "AGGREGATE", "MIN", "WITHSCORES")
            b("ZDIFF", n, *keys, "WITHSCORES")
            b("ZINTERCARD", n, *keys)
            b("ZINTERCARD", n, *keys, "LIMIT", 2)
            for op in ("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"):
                b(op, "dst", n, *keys)
                b("ZRANGE", "dst", 0, -1, "WITHSCORES")
                b("OBJECT", "ENCODING", "dst")


def test_set_inputs_resp3(both3):
    both3("SADD", "s", "a", "b")
    both3("ZADD", "z", 2, "a")
    both3("ZUNION", 2, "s", "z", "WITHSCORES")
    both3("ZINTER", 2, "s", "z", "WITHSCORES")
