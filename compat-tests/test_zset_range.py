"""Sorted-set ranges: ZRANGE (by index, BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZREVRANGE,
ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZRANGESTORE and
ZREMRANGEBYRANK / BYSCORE / BYLEX, with their errors, on both encodings and protocols.

Most cases are grids of bounds sent as one pipeline per server, every reply compared.
"""

import itertools

import pytest

from zset_helpers import Z, z, z2enc, zenc  # noqa: F401  (fixtures)

LEX_ERR = "min or max not valid string range item"
MINMAX_ERR = "min or max is not a float"

# Ties on 2 and on 5 so that member order within a score matters.
SCORED = [(1, "a"), (2, "b"), (2, "c"), (3, "d"), (5, "e"), (5, "f"), (8.5, "g"), ("-inf", "lo"),
          ("+inf", "hi"), (-2, "neg"), (0.1, "tenth")]
LEX = ["", "a", "aa", "ab", "b", "ba", "c", "d", "e", "z", "\xff", "zz"]

INDEXES = [-100, -12, -11, -5, -1, 0, 1, 2, 5, 10, 11, 100]
SCORE_BOUNDS = ["-inf", "(-inf", "+inf", "(+inf", "inf", "-2", "(-2", "0", "(0.1", "0.1", "2",
                "(2", "2.5", "5", "(5", "8.5", "(8.5", "100"]
LEX_BOUNDS = ["-", "+", "[", "(", "[a", "(a", "[aa", "(ab", "[b", "(b", "[bz", "[z", "(zz",
              "[zz", "[\xff", "(\xff"]
LIMITS = [(0, -1), (0, 0), (0, 1), (1, 2), (2, -1), (3, 100), (-1, 5), (100, 1), (-5, -1)]


def load_scored(z, key="k"):
    args = []
    for score, member in SCORED:
        args += [score, member]
    z("ZADD", key, *args)


def load_lex(z, key="l"):
    args = []
    for member in LEX:
        args += [0, member]
    z("ZADD", key, *args)


def test_zrange_by_index(zenc):
    z = zenc
    load_scored(z)
    cmds = []
    for start, stop in itertools.product(INDEXES, INDEXES):
        cmds.append(("ZRANGE", "k", start, stop))
        cmds.append(("ZRANGE", "k", start, stop, "REV", "WITHSCORES"))
        cmds.append(("ZREVRANGE", "k", start, stop, "WITHSCORES"))
    for start, stop in [(0, -1), (1, 3), (-3, -1)]:
        cmds.append(("ZRANGE", "k", start, stop, "WITHSCORES"))
        cmds.append(("ZRANGE", "k", start, stop, "REV"))
        cmds.append(("ZREVRANGE", "k", start, stop))
        cmds.append(("ZRANGE", "nokey", start, stop))
        cmds.append(("ZREVRANGE", "nokey", start, stop, "WITHSCORES"))
    z.pipe(cmds)
    assert z.enc("k") == z.encoding


def test_zrange_by_score(zenc):
    z = zenc
    load_scored(z)
    cmds = []
    for lo, hi in itertools.product(SCORE_BOUNDS, SCORE_BOUNDS):
        cmds.append(("ZRANGE", "k", lo, hi, "BYSCORE"))
        cmds.append(("ZRANGE", "k", hi, lo, "BYSCORE", "REV", "WITHSCORES"))
        cmds.append(("ZRANGEBYSCORE", "k", lo, hi, "WITHSCORES"))
        cmds.append(("ZREVRANGEBYSCORE", "k", hi, lo))
    for (lo, hi), (off, cnt) in itertools.product([("-inf", "+inf"), ("(2", "5"), ("2", "(8.5")], LIMITS):
        cmds.append(("ZRANGE", "k", lo, hi, "BYSCORE", "LIMIT", off, cnt, "WITHSCORES"))
        cmds.append(("ZRANGE", "k", hi, lo, "BYSCORE", "REV", "LIMIT", off, cnt))
        cmds.append(("ZRANGEBYSCORE", "k", lo, hi, "LIMIT", off, cnt))
        cmds.append(("ZREVRANGEBYSCORE", "k", hi, lo, "WITHSCORES", "LIMIT", off, cnt))
        cmds.append(("ZRANGEBYSCORE", "nokey", lo, hi, "LIMIT", off, cnt))
    # Options in any order, any case, repeated.
    cmds += [
        ("ZRANGE", "k", "-inf", "+inf", "withscores", "byscore", "limit", 1, 3),
        ("ZRANGE", "k", "+inf", "-inf", "LIMIT", 0, 2, "REV", "BYSCORE"),
        ("ZRANGEBYSCORE", "k", "-inf", "+inf", "LIMIT", 0, 2, "WITHSCORES", "LIMIT", 1, 1),
        ("ZRANGE", "k", "-inf", "+inf", "BYSCORE", "WITHSCORES", "WITHSCORES"),
        ("ZRANGE", "k", "-inf", "+inf", "BYSCORE", "REV", "REV"),
    ]
    z.pipe(cmds)


def test_zrange_by_lex(zenc):
    z = zenc
    load_lex(z)
    cmds = []
    for lo, hi in itertools.product(LEX_BOUNDS, LEX_BOUNDS):
        cmds.append(("ZRANGE", "l", lo, hi, "BYLEX"))
        cmds.append(("ZRANGE", "l", hi, lo, "BYLEX", "REV"))
        cmds.append(("ZRANGEBYLEX", "l", lo, hi))
        cmds.append(("ZREVRANGEBYLEX", "l", hi, lo))
        cmds.append(("ZLEXCOUNT", "l", lo, hi))
    for (lo, hi), (off, cnt) in itertools.product([("-", "+"), ("(a", "[d"), ("[b", "(zz")], LIMITS):
        cmds.append(("ZRANGE", "l", lo, hi, "BYLEX", "LIMIT", off, cnt))
        cmds.append(("ZRANGE", "l", hi, lo, "BYLEX", "REV", "LIMIT", off, cnt))
        cmds.append(("ZRANGEBYLEX", "l", lo, hi, "LIMIT", off, cnt))
        cmds.append(("ZREVRANGEBYLEX", "l", hi, lo, "LIMIT", off, cnt))
    z.pipe(cmds)


def test_range_errors(zenc):
    z = zenc
    load_scored(z)
    load_lex(z)
    syntax = "syntax error"
    z.errs([
        (("ZRANGE", "k", 0, -1, "LIMIT", 0, 1), "LIMIT is only supported in combination with either BYSCORE or BYLEX"),
        (("ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES"), "WITHSCORES not supported in combination with BYLEX"),
        ("ZRANGE", "k", 0, -1, "BYSCORE", "BYLEX"),
        ("ZRANGE", "k", 0, -1, "BYLEX", "BYSCORE"),
        (("ZRANGE", "k", 0, -1, "BOGUS"), syntax),
        (("ZRANGE", "k", 0, -1, "WITHSCORES", "x"), syntax),
        (("ZRANGE", "k", 0, -1, "BYSCORE", "LIMIT"), syntax),
        (("ZRANGE", "k", 0, -1, "BYSCORE", "LIMIT", 1), syntax),
        ("ZRANGE", "k", 0, -1, "BYSCORE", "LIMIT", "a", 1),
        ("ZRANGE", "k", 0, -1, "BYSCORE", "LIMIT", 1, "1.5"),
        (("ZRANGE", "k", "a", -1), "not an integer"),
        (("ZRANGE", "k", 0, "1.0"), "not an integer"),
        (("ZRANGE", "k", 0, "99999999999999999999"), "not an integer"),
        ("ZRANGE", "k", "(1", 2),
        (("ZRANGE", "k", "x", 2, "BYSCORE"), MINMAX_ERR),
        (("ZRANGE", "k", "nan", 2, "BYSCORE"), MINMAX_ERR),
        (("ZRANGE", "k", "1", "(nan", "BYSCORE", "REV"), MINMAX_ERR),
        (("ZRANGE", "l", "a", "+", "BYLEX"), LEX_ERR),
        (("ZRANGE", "l", "-", "z", "BYLEX", "REV"), LEX_ERR),
        (("ZREVRANGE", "k", 0, -1, "BYSCORE"), syntax),
        (("ZREVRANGE", "k", 0, -1, "WITHSCORES", "REV"), syntax),
        ("ZREVRANGE", "k", "x", 1),
        (("ZRANGEBYSCORE", "k", "x", 1), MINMAX_ERR),
        (("ZRANGEBYSCORE", "k", 1, 2, "LIMIT", 0), syntax),
        ("ZRANGEBYSCORE", "k", 1, 2, "LIMIT", 0, "x"),
        (("ZRANGEBYSCORE", "k", 1, 2, "REV"), syntax),
        (("ZRANGEBYSCORE", "k", 1, 2, "BYSCORE"), syntax),
        (("ZREVRANGEBYSCORE", "k", 1, "(y",), MINMAX_ERR),
        (("ZREVRANGEBYSCORE", "k", 1, 2, "FOO"), syntax),
        (("ZRANGEBYLEX", "l", "a", "b"), LEX_ERR),
        (("ZRANGEBYLEX", "l", "[a", "[b", "WITHSCORES"), syntax),
        (("ZRANGEBYLEX", "l", "[a", "[b", "LIMIT", 1), syntax),
        (("ZREVRANGEBYLEX", "l", "+", "a"), LEX_ERR),
        ("ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", "x", 1),
    ])
    # Errors on a missing key: argument checks still come first where Redis does them first.
    z("ZRANGE", "nokey", "x", 2, "BYSCORE")
    z("ZRANGEBYLEX", "nokey", "a", "b")
    z("ZRANGE", "nokey", 0, -1, "LIMIT", 0, 1)
    z("ZRANGE", "nokey", "a", 1)
    z("ZRANGEBYSCORE", "nokey", "(x", 1)
    z("ZRANGE", "nokey", "-", "+", "BYLEX", "WITHSCORES")


def test_zrangestore(zenc):
    z = zenc
    load_scored(z)
    load_lex(z)
    z("ZRANGESTORE", "d", "k", 0, -1)
    z.state("d")
    z("ZRANGESTORE", "d", "k", 1, 3, "REV")
    z.state("d")
    z("ZRANGESTORE", "d", "k", "(2", "+inf", "BYSCORE", "LIMIT", 1, 3)
    z.state("d")
    z("ZRANGESTORE", "d", "k", "+inf", "(2", "BYSCORE", "REV", "LIMIT", 0, 2)
    z.state("d")
    z("ZRANGESTORE", "d", "l", "[b", "+", "BYLEX")
    z.state("d")
    z("ZRANGESTORE", "d", "l", "+", "(b", "BYLEX", "REV", "LIMIT", 1, 2)
    z.state("d")
    # Destination equal to the source.
    z("ZRANGESTORE", "k", "k", 2, 5)
    z.state("k")
    z("ZRANGESTORE", "k", "k", 1, 1, "REV")
    z.state("k")
    # Empty results delete the destination; a missing source too.
    z("ZRANGESTORE", "d", "k", 10, 20)
    z.gone("d")
    z("ZRANGESTORE", "d", "l", "[zzz", "+", "BYLEX")
    z("ZRANGESTORE", "k", "nokey", 0, -1)
    z.gone("k")
    z.errs([
        ("ZRANGESTORE", "d", "l", 0, -1, "WITHSCORES"),
        ("ZRANGESTORE", "d", "l", "-", "+", "BYLEX", "WITHSCORES"),
        ("ZRANGESTORE", "d", "l", 0, -1, "LIMIT", 0, 1),
        (("ZRANGESTORE", "d", "l", "a", "b", "BYLEX"), LEX_ERR),
        (("ZRANGESTORE", "d", "l", "a", "b", "BYSCORE"), MINMAX_ERR),
    ])


def test_zrangestore_result_encoding(z):
    """The stored set takes the encoding Redis gives a set of that size and member length."""
    z.load("big", [(i, f"m{i:04d}") for i in range(300)])
    assert z.enc("big") == "skiplist"
    z("ZRANGESTORE", "d", "big", 0, 127)
    z.enc("d")
    z("ZRANGESTORE", "d", "big", 0, 128)
    z.enc("d")
    z("ZRANGESTORE", "d", "big", 0, -1)
    z.enc("d")
    z("ZADD", "long", 1, "x" * 65, 2, "y")
    z("ZRANGESTORE", "d", "long", 0, -1)
    z.enc("d")
    z("ZRANGESTORE", "d", "long", 1, 1)
    z.enc("d")
    z("ZRANGESTORE", "big", "big", 0, 9)
    z.state("big", "d")


def fresh_then(key, load_args, cmd):
    return [("DEL", key), ("ZADD", key, *load_args), cmd, ("ZRANGE", key, 0, -1, "WITHSCORES"),
            ("EXISTS", key)]


def test_zremrange(zenc):
    z = zenc
    scored = [x for score, member in SCORED for x in (score, member)]
    lex = [x for member in LEX for x in (0, member)]
    cmds = []
    for start, stop in itertools.product(INDEXES, INDEXES):
        cmds += fresh_then("k", scored, ("ZREMRANGEBYRANK", "k", start, stop))
    for lo, hi in itertools.product(SCORE_BOUNDS, SCORE_BOUNDS):
        cmds += fresh_then("k", scored, ("ZREMRANGEBYSCORE", "k", lo, hi))
    for lo, hi in itertools.product(LEX_BOUNDS, LEX_BOUNDS):
        cmds += fresh_then("l", lex, ("ZREMRANGEBYLEX", "l", lo, hi))
    z.pipe(cmds)
    load_scored(z)
    load_lex(z)
    z("ZREMRANGEBYRANK", "nokey", 0, -1)
    z("ZREMRANGEBYSCORE", "nokey", "-inf", "+inf")
    z("ZREMRANGEBYLEX", "nokey", "-", "+")
    z.errs([
        (("ZREMRANGEBYRANK", "k", "a", 1), "not an integer"),
        (("ZREMRANGEBYRANK", "k", 0, "1.5"), "not an integer"),
        (("ZREMRANGEBYSCORE", "k", "a", 1), MINMAX_ERR),
        (("ZREMRANGEBYSCORE", "k", 1, "nan"), MINMAX_ERR),
        (("ZREMRANGEBYLEX", "l", "a", "+"), LEX_ERR),
        ("ZREMRANGEBYLEX", "l", "-", "[", "x"),
    ])
    z.state("k", "l")
    z("ZREMRANGEBYRANK", "k", 0, -1)
    z.gone("k")


def test_ranges_on_large_set(z):
    """Past 128 members (skiplist in Redis): index, score and lex ranges and removals."""
    members = [(i // 3, f"m{i:04d}") for i in range(400)] + [("-inf", "lo"), ("inf", "hi")]
    z.load("k", members)
    z.load("l", [(0, f"w{i:05d}") for i in range(300)])
    assert z.enc("k") == "skiplist" and z.enc("l") == "skiplist"
    cmds = []
    for start, stop in [(0, 9), (-10, -1), (100, 120), (-300, 5), (390, 1000), (200, 199)]:
        cmds.append(("ZRANGE", "k", start, stop, "WITHSCORES"))
        cmds.append(("ZRANGE", "k", start, stop, "REV"))
    for lo, hi in [("10", "20"), ("(10", "(20"), ("-inf", "(1"), ("(130", "+inf"), ("50", "40")]:
        cmds.append(("ZRANGEBYSCORE", "k", lo, hi, "WITHSCORES"))
        cmds.append(("ZREVRANGEBYSCORE", "k", hi, lo, "LIMIT", 2, 5))
        cmds.append(("ZRANGE", "k", lo, hi, "BYSCORE", "LIMIT", 3, 4))
        cmds.append(("ZCOUNT", "k", lo, hi))
    for lo, hi in [("[w00010", "(w00020"), ("-", "[w00005"), ("(w00290", "+"), ("[w00100", "[w00099")]:
        cmds.append(("ZRANGEBYLEX", "l", lo, hi))
        cmds.append(("ZREVRANGEBYLEX", "l", hi, lo, "LIMIT", 1, 3))
        cmds.append(("ZLEXCOUNT", "l", lo, hi))
    for m in ("m0000", "m0200", "m0399", "lo", "hi", "nope"):
        cmds.append(("ZRANK", "k", m))
        cmds.append(("ZREVRANK", "k", m))
    cmds += [
        ("ZREMRANGEBYRANK", "k", 10, 19), ("ZREMRANGEBYSCORE", "k", "(50", 60),
        ("ZREMRANGEBYLEX", "l", "[w00100", "(w00200"), ("ZCARD", "k"), ("ZCARD", "l"),
        ("ZRANGE", "k", 0, -1, "WITHSCORES"), ("ZRANGE", "l", 0, -1),
    ]
    z.pipe(cmds)
    # Shrinking a skiplist never converts it back (Redis only converts on growth).
    z("ZREMRANGEBYRANK", "k", 5, -1)
    assert z.enc("k") == "skiplist"
    z("ZRANGESTORE", "small", "k", 0, -1)
    z.enc("small")
