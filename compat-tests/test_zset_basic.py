"""Sorted sets, single-key writes and reads: ZADD (NX XX GT LT CH INCR), ZINCRBY, ZREM, ZCARD,
ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT; score parsing (inf, "(" bounds, -0,
1e-300, large integers, NaN refusals); a set emptied by any command leaves the keyspace.

Every case runs in RESP2 and RESP3 and, through `zenc`, on the small form (listpack) and the
large form (skiplist, forced with zset-max-listpack-entries 0 as Redis's own suite does).
"""

import pytest

from zset_helpers import Z, z, zenc  # noqa: F401  (fixtures)

FLOAT_ERR = "value is not a valid float"
NAN_ERR = "resulting score is not a number (NaN)"
MINMAX_ERR = "min or max is not a float"
LEX_ERR = "min or max not valid string range item"


def test_zadd_basics(zenc):
    z = zenc
    z("ZADD", "k", 1, "a")
    z("ZADD", "k", 2, "b", 3, "c", 1, "a")  # one existing member: counts only the new ones
    z("ZADD", "k", 5, "a")  # update: 0
    z("ZADD", "k", 1, "x", 2, "x", 3, "x")  # the same member thrice: the last score wins
    z("ZSCORE", "k", "x")
    z("ZCARD", "k")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    z("TYPE", "k")
    assert z.enc("k") == zenc.encoding
    z("ZADD", "k", "CH", 5, "a", 6, "b", 7, "new")  # changed + added
    z("ZADD", "k", "CH", 5, "a")
    z("ZCARD", "nokey")
    z("ZADD", "k", 1, "")  # the empty member
    z("ZSCORE", "k", "")
    z("ZADD", "bin", 1, b"\x00\xff\r\n", 2, "\u00e9t\u00e9".encode())
    z("ZRANGE", "bin", 0, -1, "WITHSCORES")


def test_zadd_flags(zenc):
    z = zenc
    z("ZADD", "k", 10, "a", 20, "b")
    z("ZADD", "k", "NX", 1, "a", 30, "c")  # a unchanged, c added
    z("ZADD", "k", "XX", 11, "a", 40, "d")  # a updated, d not added
    z("ZADD", "k", "XX", "CH", 12, "a", 40, "d")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    # GT / LT only move a score up / down, and still add new members.
    z("ZADD", "k", "GT", "CH", 5, "a", 25, "b", 1, "e")
    z("ZADD", "k", "LT", "CH", 5, "a", 25, "b", 100, "c")
    z("ZADD", "k", "GT", "XX", "CH", 99, "a", 1, "zz")
    z("ZADD", "k", "LT", "XX", 1, "b")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    # Flags are case-insensitive and may repeat.
    z("ZADD", "k", "nx", "Nx", "ch", 3, "f")
    z("ZADD", "k", "GT", "GT", 200, "f")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    # XX on a missing key creates nothing.
    z("ZADD", "missing", "XX", 1, "a")
    z.gone("missing")
    z("ZADD", "missing", "XX", "INCR", 1, "a")
    z.gone("missing")


def test_zadd_incr(zenc):
    z = zenc
    z("ZADD", "k", "INCR", 1.5, "a")
    z("ZADD", "k", "INCR", 2.1, "a")
    z("ZADD", "k", "INCR", "-inf", "b")
    z("ZADD", "k", "NX", "INCR", 1, "a")  # exists: null
    z("ZADD", "k", "NX", "INCR", 1, "c")
    z("ZADD", "k", "XX", "INCR", 1, "nope")  # missing: null
    z("ZADD", "k", "XX", "INCR", 1, "c")
    z("ZADD", "k", "GT", "INCR", -1, "c")  # would lower: null
    z("ZADD", "k", "GT", "INCR", 1, "c")
    z("ZADD", "k", "LT", "INCR", 1, "c")  # would raise: null
    z("ZADD", "k", "LT", "INCR", -10, "c")
    z("ZADD", "k", "GT", "INCR", 0, "c")  # unchanged is not greater: null
    z("ZADD", "k", "CH", "INCR", 0, "c")
    z("ZADD", "k", "INCR", 0.1, "d")
    z("ZADD", "k", "INCR", 0.2, "d")  # 0.30000000000000004
    z("ZRANGE", "k", 0, -1, "WITHSCORES")


def test_zadd_errors(zenc):
    z = zenc
    z("ZADD", "k", 1, "a")
    z.errs([
        (("ZADD", "k", "NX", "XX", 1, "a"), "XX and NX options at the same time are not compatible"),
        (("ZADD", "k", "GT", "LT", 1, "a"), "GT, LT, and/or NX options"),
        (("ZADD", "k", "GT", "NX", 1, "a"), "GT, LT, and/or NX options"),
        (("ZADD", "k", "LT", "NX", 1, "a"), "GT, LT, and/or NX options"),
        (("ZADD", "k", "INCR", 1, "a", 2, "b"), "INCR option supports a single increment-element pair"),
        ("ZADD", "k", 1, "a", 2),
        ("ZADD", "k", "NX", 1),
        ("ZADD", "k", "CH"),
        ("ZADD", "k", "XX", "NX"),
        ("ZADD", "k", "INCR"),
        ("ZADD", "k", "1"),
        ("ZADD", "k"),
        ("ZADD",),
        (("ZADD", "k", "abc", "a"), FLOAT_ERR),
        ("ZADD", "k", "BOGUS", 1, "a"),
        (("ZADD", "k", 1, "a", "nan", "b"), FLOAT_ERR),
        ("ZADD", "k", "NX", "INCR", "x", "a"),
    ])
    # A refused ZADD changes nothing, even for the pairs before the bad one.
    z("ZADD", "k2", 1, "a", "bad", "b")
    z.gone("k2")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")


@pytest.mark.parametrize(
    "score",
    [
        "inf", "+inf", "-inf", "Inf", "-INF", "infinity", "-Infinity", "1e-300", "-1e-300",
        "0", "-0", "+0", "0.0", "-0.0", "1.5", ".5", "1.", "+.5e1", "0x10", "-0x1p3",
        "1e308", "-1.7976931348623157e308", "4e-320", "5e-324", "9007199254740993",
        "123456789012345678901234567890", "-9223372036854775808", "18446744073709551616",
        "3.3", "2.1", "0.1", "1e16", "1e17", "1e21", "1e-7", "0.00001", "1152921504606846976",
        "000012", "1E5", "  ",
        # refused
        " 1", "1 ", "nan", "NaN", "-nan", "1e400", "-1e400", "1e-400", "abc", "1e", "1_0",
        "0b1", "1f", "--1", "1..2", "inf1",
    ],
)
def test_score_parsing(zenc, score):
    z = zenc
    z("ZADD", "k", score, "m")
    z("ZSCORE", "k", "m")
    z("ZMSCORE", "k", "m", "none")
    z("ZINCRBY", "k", score, "n")
    z("ZADD", "k", "INCR", score, "n")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    z("ZCOUNT", "k", score, score)
    z("ZCOUNT", "k", "(" + score, "+inf")
    z("ZRANGEBYSCORE", "k", score, "+inf", "WITHSCORES")


def test_negative_zero(zenc):
    """Redis 7.0 keeps -0 in a skiplist and prints "-0", while a listpack stores integer 0."""
    z = zenc
    z("ZADD", "k", "-0", "a", "-0.0", "b", 0, "c")
    z("ZSCORE", "k", "a")
    z("ZMSCORE", "k", "a", "b", "c")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    z("ZINCRBY", "k", "-0", "c")
    z("ZINCRBY", "k", "-0", "new")
    z("ZADD", "k", "INCR", 0, "new")
    z("ZADD", "k", 1, "x")
    z("ZINCRBY", "k", -1, "x")  # 1 + -1 is +0
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    z("ZRANGEBYSCORE", "k", "-0", "0", "WITHSCORES")
    z("ZRANGEBYSCORE", "k", "(-0", "(0", "WITHSCORES")
    z("ZCOUNT", "k", "-0", "-0")
    z("ZUNIONSTORE", "u", 1, "k", "WEIGHTS", -1)
    z("ZRANGE", "u", 0, -1, "WITHSCORES")


def test_negative_zero_across_conversions(both):
    """Redis converts a listpack *before* inserting the member that overflows it (so that
    member keeps -0 in the new skiplist), and creates a new key from its first member (so a
    -0 added before a long member in the same ZADD went through the listpack and became 0)."""
    z = Z(both)
    long = "x" * 65
    z("ZADD", "a", "-0", "m", 1, long)
    z("ZSCORE", "a", "m")
    z("ZADD", "b", 1, "x")
    z("ZADD", "b", "-0", long)
    z("ZSCORE", "b", long)
    z("ZADD", "c", 1, "x")
    z("ZINCRBY", "c", "-0", long)
    z("ZSCORE", "c", long)
    z("ZADD", "d", 1, "y", 2, long, "-0", "z")
    z("ZSCORE", "d", "z")
    z.load("e", [(i, f"m{i}") for i in range(128)])
    z("ZADD", "e", "-0", "new")  # the 129th member converts the set first
    z("ZSCORE", "e", "new")
    z("ZADD", "f", "-0", "m")
    z("ZADD", "f", 1, long)  # converted later: the listpack's 0 stays 0
    z("ZSCORE", "f", "m")
    z.state("a", "b", "c", "d", "e", "f")


def test_zincrby(zenc):
    z = zenc
    z("ZINCRBY", "k", 1, "a")  # creates the key
    z("ZINCRBY", "k", 2.5, "a")
    z("ZINCRBY", "k", -10, "a")
    z("ZINCRBY", "k", "1e-300", "a")
    z("ZINCRBY", "k", "+inf", "b")
    z("ZINCRBY", "k", "+inf", "b")
    z.err("ZINCRBY", "k", "-inf", "b", match=NAN_ERR)
    z("ZSCORE", "k", "b")  # unchanged by the refused increment
    z.errs([
        (("ZADD", "k", "INCR", "-inf", "b"), NAN_ERR),
        (("ZINCRBY", "k", "nan", "b"), FLOAT_ERR),
        (("ZINCRBY", "k", "x", "b"), FLOAT_ERR),
        ("ZINCRBY", "k", 1),
        ("ZINCRBY", "k", 1, "a", "b"),
    ])
    z("ZINCRBY", "k", 0.1, "c")
    z("ZINCRBY", "k", 0.2, "c")
    z("ZINCRBY", "k", 9007199254740992, "d")
    z("ZINCRBY", "k", 1, "d")
    z("ZRANGE", "k", 0, -1, "WITHSCORES")
    z("ZINCRBY", "nan-key", "-inf", "x")
    z("ZADD", "nan-key", "inf", "x")
    z.err("ZINCRBY", "nan-key", "-inf", "x", match=NAN_ERR)
    z("ZRANGE", "nan-key", 0, -1, "WITHSCORES")


def test_zrem_and_empty(zenc):
    z = zenc
    z("ZADD", "k", 1, "a", 2, "b", 3, "c")
    z("ZREM", "k", "a", "nope", "a")
    z("ZREM", "k", "nope")
    z("ZREM", "nokey", "a")
    z("ZREM", "k", "b", "c")
    z.gone("k")
    z.err("ZREM", "k")
    z("ZCARD", "k")


def test_zscore_zmscore(zenc):
    z = zenc
    z("ZADD", "k", 1.5, "a", "-inf", "b", 3.3, "c", 10, "d")
    for m in ("a", "b", "c", "d", "nope"):
        z("ZSCORE", "k", m)
    z("ZSCORE", "nokey", "a")
    z("ZMSCORE", "k", "a", "nope", "c", "b", "a")
    z("ZMSCORE", "nokey", "a", "b")
    z.errs([
        ("ZMSCORE", "k"),
        ("ZSCORE", "k"),
        ("ZSCORE", "k", "a", "b"),
    ])


def test_zrank_zrevrank(zenc):
    z = zenc
    z("ZADD", "k", 1, "a", 2, "b", 2, "bb", 3, "c", "-inf", "lo", "+inf", "hi")
    for m in ("a", "b", "bb", "c", "lo", "hi", "nope"):
        z("ZRANK", "k", m)
        z("ZREVRANK", "k", m)
    z("ZRANK", "nokey", "a")
    z("ZREVRANK", "nokey", "a")
    z.errs([
        ("ZRANK", "k"),
        ("ZREVRANK", "k"),
    ])


def test_zcount(zenc):
    z = zenc
    z("ZADD", "k", 1, "a", 2, "b", 2, "c", 3, "d", "-inf", "lo", "inf", "hi")
    bounds = ["-inf", "+inf", "inf", "1", "(1", "2", "(2", "3", "(3", "0", "(-inf", "(+inf", "10", "1.5"]
    cmds = [("ZCOUNT", "k", lo, hi) for lo in bounds for hi in bounds]
    z.pipe(cmds)
    z("ZCOUNT", "nokey", "-inf", "+inf")
    z.errs([
        (("ZCOUNT", "k", "a", "1"), MINMAX_ERR),
        (("ZCOUNT", "k", "1", "(x",), MINMAX_ERR),
        (("ZCOUNT", "k", "nan", "1"), MINMAX_ERR),
        (("ZCOUNT", "k", "(nan", "1"), MINMAX_ERR),
        (("ZCOUNT", "k", "((1", "2"), MINMAX_ERR),
        (("ZCOUNT", "k", "[1", "2"), MINMAX_ERR),
        ("ZCOUNT", "k", "1"),
        ("ZCOUNT", "k", "1", "2", "3"),
    ])


def test_score_range_bound_strtod_quirks(both):
    """Redis parses a score range bound with strtod and only checks that it stopped on a NUL:
    "" and "(" are 0, and "1\\0x" is 1. ZADD's scores (string2d) refuse "" and the NUL."""
    z = Z(both)
    z("ZADD", "k", 0, "a", 1, "b", 2, "c")
    z("ZADD", "k", "", "x")
    z("ZADD", "k", "1\x00x", "x")
    z("ZCOUNT", "k", "", 1)
    z("ZCOUNT", "k", "(", 1)
    z("ZCOUNT", "k", "1\x00x", "inf")
    z("ZCOUNT", "k", "\x00", "inf")
    z("ZRANGEBYSCORE", "k", "", "")
    z("ZRANGE", "k", "(", 5, "BYSCORE")
    z("ZREMRANGEBYSCORE", "k", "(", "(")


def test_zlexcount(zenc):
    z = zenc
    z("ZADD", "k", 0, "a", 0, "b", 0, "c", 0, "d", 0, "", 0, "\xff", 0, "bb")
    bounds = ["-", "+", "[a", "(a", "[b", "(b", "[bb", "(bb", "[", "(", "[z", "(\xff", "[\xff"]
    z.pipe([("ZLEXCOUNT", "k", lo, hi) for lo in bounds for hi in bounds])
    z("ZLEXCOUNT", "nokey", "-", "+")
    for bad in ("a", "", "-a", "+a", "{a", "]a"):
        z.errs([
            (("ZLEXCOUNT", "k", bad, "+"), LEX_ERR),
            (("ZLEXCOUNT", "k", "-", bad), LEX_ERR),
        ])
    z.err("ZLEXCOUNT", "k", "-")


def test_arity_errors(z):
    z("ZADD", "k", 1, "a")
    for cmd in [
        ("ZADD", "k", 1), ("ZINCRBY", "k", 1), ("ZREM", "k"), ("ZCARD",), ("ZCARD", "k", "x"),
        ("ZSCORE", "k"), ("ZMSCORE", "k"), ("ZRANK",), ("ZREVRANK", "k"), ("ZCOUNT", "k", 1),
        ("ZLEXCOUNT", "k", "-"), ("ZRANGE", "k", 0), ("ZRANGESTORE", "d", "k", 0),
        ("ZREVRANGE", "k", 0), ("ZRANGEBYSCORE", "k", 0), ("ZREVRANGEBYSCORE", "k", 0),
        ("ZRANGEBYLEX", "k", "-"), ("ZREVRANGEBYLEX", "k", "+"), ("ZREMRANGEBYRANK", "k", 0),
        ("ZREMRANGEBYSCORE", "k", 0), ("ZREMRANGEBYLEX", "k", "-"), ("ZPOPMIN",), ("ZPOPMAX",),
        ("ZMPOP", 1, "k"), ("BZPOPMIN", "k"), ("BZPOPMAX", "k"), ("BZMPOP", 0, 1, "k"),
        ("ZRANDMEMBER",), ("ZSCAN", "k"), ("ZUNION", 1), ("ZINTER", 1), ("ZDIFF", 1),
        ("ZUNIONSTORE", "d", 1), ("ZINTERSTORE", "d", 1), ("ZDIFFSTORE", "d", 1),
        ("ZINTERCARD", 1), ("ZREMRANGEBYRANK", "k", 0, 1, 2), ("ZCOUNT", "k", 0, 1, 2),
        ("ZINCRBY", "k", 1, "a", "b"), ("ZLEXCOUNT", "k", "-", "+", "x"),
    ]:
        z.err(*cmd)


def test_integer_argument_errors(both):
    """Counts, numkeys and limits that are not integers or out of range: each command has
    its own message in Redis (getRangeLongFromObjectOrReply / getPositiveLong... with a
    message), which it also uses for a value that does not parse at all."""
    z = Z(both)
    z("ZADD", "k", 1, "a", 2, "b")
    z.errs([
        ("ZPOPMIN", "k", "x"), ("ZPOPMAX", "k", "x"), ("ZPOPMIN", "k", -1), ("ZPOPMAX", "k", "1.5"),
        ("ZPOPMIN", "k", "99999999999999999999"), ("ZPOPMIN", "nokey", "x"),
        ("ZMPOP", "x", "k", "MIN"), ("ZMPOP", 0, "k", "MIN"), ("ZMPOP", -1, "k", "MIN"),
        ("ZMPOP", "1.0", "k", "MIN"), ("ZMPOP", 1, "k", "MIN", "COUNT", "x"),
        ("ZMPOP", 1, "k", "MIN", "COUNT", 0), ("ZMPOP", 1, "k", "MIN", "COUNT", -1),
        ("ZMPOP", 1, "k", "MIN", "COUNT", "1.5"),
        ("BZMPOP", 0, "x", "k", "MIN"), ("BZMPOP", 0, 0, "k", "MIN"),
        ("BZMPOP", 0, 1, "k", "MIN", "COUNT", "x"), ("BZMPOP", 0, 1, "k", "MIN", "COUNT", 0),
        ("ZINTERCARD", "x", "k"), ("ZINTERCARD", 0, "k"), ("ZINTERCARD", 1, "k", "LIMIT", "x"),
        ("ZINTERCARD", 1, "k", "LIMIT", -1), ("ZINTERCARD", 1, "k", "LIMIT", "1.5"),
        ("ZUNION", "x", "k"), ("ZINTER", "1.5", "k"), ("ZDIFF", -1, "k"), ("ZUNIONSTORE", "d", "x", "k"),
        ("ZRANDMEMBER", "k", "x"), ("ZRANDMEMBER", "k", "-9223372036854775808"),
        ("ZRANDMEMBER", "k", "-9223372036854775808", "WITHSCORES"),
        ("ZRANDMEMBER", "k", "-9223372036854775807", "WITHSCORES"),
        ("ZRANDMEMBER", "k", "-4611686018427387904", "WITHSCORES"),
        ("ZRANDMEMBER", "k", "9223372036854775808"),
        ("ZRANGE", "k", "x", 1), ("ZRANGE", "k", 0, 1, "BYSCORE", "LIMIT", "x", 1),
        ("ZRANGEBYSCORE", "k", 0, 1, "LIMIT", 0, "x"), ("ZRANGEBYLEX", "k", "-", "+", "LIMIT", "x", 1),
        ("ZREMRANGEBYRANK", "k", "x", 1), ("ZSCAN", "k", 0, "COUNT", "x"), ("ZSCAN", "k", 0, "COUNT", 0),
    ])


def test_config_set_errors(both):
    z = Z(both)
    z.errs([
        ("CONFIG", "SET", "zset-max-listpack-entries", -1),
        ("CONFIG", "SET", "zset-max-listpack-entries", "x"),
        ("CONFIG", "SET", "zset-max-listpack-value", "-5"),
        ("CONFIG", "SET", "zset-max-ziplist-entries", "1.5"),
    ])


def test_emptied_set_leaves_keyspace(z):
    """Every command that can remove the last member deletes the key."""
    def fresh(key="k"):
        z("ZADD", key, 1, "a", 2, "b")

    fresh(); z("ZREM", "k", "a", "b"); z.gone("k")
    fresh(); z("ZREMRANGEBYRANK", "k", 0, -1); z.gone("k")
    fresh(); z("ZREMRANGEBYSCORE", "k", "-inf", "+inf"); z.gone("k")
    z("ZADD", "k", 0, "a", 0, "b"); z("ZREMRANGEBYLEX", "k", "-", "+"); z.gone("k")
    fresh(); z("ZPOPMIN", "k", 5); z.gone("k")
    fresh(); z("ZPOPMAX", "k", 2); z.gone("k")
    fresh(); z("ZPOPMIN", "k"); z("ZPOPMAX", "k"); z.gone("k")
    fresh(); z("ZMPOP", 1, "k", "MIN", "COUNT", 10); z.gone("k")
    fresh(); z("BZPOPMIN", "k", 0); z("BZPOPMAX", "k", 0); z.gone("k")
    fresh(); z("BZMPOP", 0, 1, "k", "MAX", "COUNT", 2); z.gone("k")
    # STORE forms whose result is empty delete the destination.
    fresh("dst"); z("ZRANGESTORE", "dst", "nokey", 0, -1); z.gone("dst")
    fresh("dst"); fresh("src"); z("ZRANGESTORE", "dst", "src", 5, 10); z.gone("dst")
    fresh("dst"); z("ZUNIONSTORE", "dst", 1, "nokey"); z.gone("dst")
    fresh("dst"); fresh("src"); z("ZINTERSTORE", "dst", 2, "src", "nokey"); z.gone("dst")
    fresh("dst"); z("ZDIFFSTORE", "dst", 2, "src", "src"); z.gone("dst")
    fresh("dst"); z("ZDIFFSTORE", "dst", 1, "dst"); z("EXISTS", "dst")
    z("ZDIFFSTORE", "dst", 2, "dst", "dst"); z.gone("dst")
    z("DBSIZE")
