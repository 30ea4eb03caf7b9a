"""ZUNION, ZINTER, ZDIFF, their STORE forms (WEIGHTS, AGGREGATE SUM|MIN|MAX, WITHSCORES) and
ZINTERCARD (LIMIT): results, errors, destination equal to a source, NaN from inf arithmetic,
empty results, result encodings, on both encodings and protocols."""

import itertools

import pytest

from zset_helpers import Z, z, z2enc, zenc  # noqa: F401  (fixtures)


def load(z):
    z("ZADD", "a", 1, "x", 2, "y", 3, "z", "inf", "big", "-inf", "small", 0, "zero")
    z("ZADD", "b", 10, "y", 20, "z", 30, "w", "inf", "big", "inf", "small", 1.5, "zero")
    z("ZADD", "c", 100, "z", 200, "v", 0.1, "x")
    z("ZADD", "one", 7, "z")


KEYSETS = [("a",), ("a", "b"), ("b", "a"), ("a", "b", "c"), ("a", "nokey"), ("nokey", "a"),
           ("a", "a"), ("nokey",), ("c", "one", "a"), ("a", "b", "c", "one")]


def test_union_inter_diff(zenc):
    z = zenc
    load(z)
    cmds = []
    for keys in KEYSETS:
        n = len(keys)
        for op in ("ZUNION", "ZINTER"):
            cmds.append((op, n, *keys))
            cmds.append((op, n, *keys, "WITHSCORES"))
            for agg in ("SUM", "MIN", "MAX", "sum", "Max"):
                cmds.append((op, n, *keys, "AGGREGATE", agg, "WITHSCORES"))
            weightings = [[2] * n, [0] * n, [-1] * n, [0.5 * (i + 1) for i in range(n)], ["1e-300"] * n]
            if op == "ZUNION":  # ZINTER with infinite weights: test_zinter_nan_in_a_later_input
                weightings += [["inf"] * n, ["-inf"] * n]
            for weights in weightings:
                for agg in ("SUM", "MIN", "MAX"):
                    cmds.append((op, n, *keys, "WEIGHTS", *weights, "AGGREGATE", agg, "WITHSCORES"))
            cmds.append((op, n, *keys, "WITHSCORES", "WEIGHTS", *([3] * n)))
        cmds.append(("ZDIFF", n, *keys))
        cmds.append(("ZDIFF", n, *keys, "WITHSCORES"))
        cmds.append(("ZINTERCARD", n, *keys))
        for limit in (0, 1, 2, 100):
            cmds.append(("ZINTERCARD", n, *keys, "LIMIT", limit))
    z.pipe(cmds)


def test_store_forms(zenc):
    z = zenc
    cmds = []
    setup = [("FLUSHDB",)]
    setup += [("ZADD", "a", 1, "x", 2, "y", 3, "z", "inf", "big", "-inf", "small", 0, "zero"),
              ("ZADD", "b", 10, "y", 20, "z", 30, "w", "inf", "big", "inf", "small", 1.5, "zero"),
              ("ZADD", "c", 100, "z", 200, "v", 0.1, "x")]
    for keys in KEYSETS:
        n = len(keys)
        for op in ("ZUNIONSTORE", "ZINTERSTORE"):
            extras = [[], ["AGGREGATE", "MIN"], ["AGGREGATE", "MAX"], ["WEIGHTS", *([2] * n)],
                      ["WEIGHTS", *([0] * n), "AGGREGATE", "MAX"]]
            if op == "ZUNIONSTORE":
                extras.append(["WEIGHTS", *(["-inf"] * n), "AGGREGATE", "SUM"])
            for extra in extras:
                cmds += setup + [(op, "dst", n, *keys, *extra), ("ZRANGE", "dst", 0, -1, "WITHSCORES"),
                                 ("EXISTS", "dst")]
        cmds += setup + [("ZDIFFSTORE", "dst", n, *keys), ("ZRANGE", "dst", 0, -1, "WITHSCORES"),
                         ("EXISTS", "dst")]
    z.pipe(cmds)


def test_destination_is_a_source(zenc):
    z = zenc
    load(z)
    z("ZUNIONSTORE", "a", 2, "a", "b", "WEIGHTS", 1, 2)
    z.state("a")
    z("ZINTERSTORE", "b", 2, "a", "b", "AGGREGATE", "MAX")
    z.state("b")
    z("ZDIFFSTORE", "c", 2, "c", "a")
    z.state("c")
    z("ZUNIONSTORE", "one", 1, "one", "WEIGHTS", 3)
    z.state("one")
    z("ZINTERSTORE", "one", 2, "one", "nokey")  # empty result: the source/destination goes
    z.gone("one")
    z("ZDIFFSTORE", "c", 2, "c", "c")
    z.gone("c")
    z("ZUNIONSTORE", "a", 2, "a", "a")  # the same key twice: scores add up
    z.state("a")


def test_nan_from_inf_arithmetic_becomes_zero(zenc):
    """inf + -inf and inf * 0 are NaN; Redis stores 0 for such a score instead."""
    z = zenc
    z("ZADD", "p", "inf", "m", 1, "n")
    z("ZADD", "q", "-inf", "m", 2, "n")
    z("ZUNION", 2, "p", "q", "WITHSCORES")
    z("ZINTER", 2, "p", "q", "WITHSCORES")
    z("ZUNION", 1, "p", "WEIGHTS", 0, "WITHSCORES")
    z("ZINTER", 2, "p", "q", "WEIGHTS", 0, 0, "AGGREGATE", "MAX", "WITHSCORES")
    z("ZUNIONSTORE", "d", 2, "p", "q")
    z.state("d")
    z("ZUNIONSTORE", "d", 1, "p", "WEIGHTS", 0)
    z.state("d")
    z("ZINTERSTORE", "d", 2, "p", "q", "WEIGHTS", "-inf", "inf", "AGGREGATE", "MIN")
    z.state("d")


def test_zinter_nan_in_a_later_input(z2enc):
    """ZINTER walks the smallest input and only turns a NaN into 0 for that input's weighted
    score and for a SUM; a NaN weighted score from a later input is aggregated as NaN (so MIN
    and MAX keep the other side: NaN comparisons are false)."""
    z = z2enc
    z("ZADD", "p", 1, "m")
    z("ZADD", "q", 0, "m", 1, "n")  # bigger, so p is iterated and q looked up
    for agg in ("SUM", "MIN", "MAX"):
        for w in (("inf", "inf"), ("-inf", "inf"), ("inf", "-inf")):
            z("ZINTER", 2, "p", "q", "WEIGHTS", *w, "AGGREGATE", agg, "WITHSCORES")
            z("ZINTER", 2, "q", "p", "WEIGHTS", *w[::-1], "AGGREGATE", agg, "WITHSCORES")
    z("ZINTERSTORE", "d", 2, "p", "q", "WEIGHTS", "inf", "inf")
    z.state("d")


def test_sum_order_follows_redis(z2enc):
    """Redis adds the weighted scores up input by input from the smallest input to the
    largest (a stable sort by cardinality), and floating-point addition is not associative:
    (0.3 + 0.2) + 0.1 is 0.6, (0.1 + 0.2) + 0.3 is 0.6000000000000001. Same for inf + -inf
    (NaN, stored as 0) met before or after a finite score."""
    z = z2enc
    z("ZADD", "A", 0.1, "m", 1, "x", 2, "y")
    z("ZADD", "B", 0.2, "m", 1, "x")
    z("ZADD", "C", 0.3, "m")
    for keys in itertools.permutations(["A", "B", "C"]):
        z("ZUNION", 3, *keys, "WITHSCORES")
        z("ZINTER", 3, *keys, "WITHSCORES")
    z("ZUNIONSTORE", "d", 3, "A", "B", "C")
    z("ZSCORE", "d", "m")
    z("ZINTERSTORE", "d", 3, "A", "B", "C")
    z("ZSCORE", "d", "m")
    z("ZADD", "P", "inf", "n", 1, "p", 2, "q")
    z("ZADD", "Q", "-inf", "n", 1, "p")
    z("ZADD", "R", 5, "n")
    for keys in itertools.permutations(["P", "Q", "R"]):
        z("ZUNION", 3, *keys, "WITHSCORES")
        z("ZINTER", 3, *keys, "WITHSCORES")


def test_setop_errors(zenc):
    z = zenc
    load(z)
    for op in ("ZUNION", "ZINTER", "ZDIFF"):
        z.errs([
            ((op, 0, "a"), "at least 1 input key is needed"),
            (op, -1, "a"),
            ((op, "x", "a"), "not an integer"),
            ((op, 3, "a", "b"), "syntax error"),
            ((op, 1, "a", "b"), "syntax error"),
            ((op, 1, "a", "WITHSCORES", "x"), "syntax error"),
            (op, "9999999999", "a"),
            (op, 0),
        ])
    for op in ("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"):
        z.errs([
            ((op, "d", 0, "a"), "at least 1 input key is needed"),
            (op, "d", -3, "a"),
            ((op, "d", "x", "a"), "not an integer"),
            ((op, "d", 2, "a"), "syntax error"),
            ((op, "d", 1, "a", "WITHSCORES"), "syntax error"),
            (op, "d", 1, "a", "b"),
        ])
        z.gone("d")
    for op in ("ZUNION", "ZINTER"):
        z.errs([
            ((op, 2, "a", "b", "WEIGHTS", 1), "syntax error"),
            (op, 2, "a", "b", "WEIGHTS", 1, 2, 3),
            ((op, 2, "a", "b", "WEIGHTS", 1, "x"), "weight value is not a float"),
            ((op, 2, "a", "b", "WEIGHTS", 1, "nan"), "weight value is not a float"),
            ((op, 2, "a", "b", "AGGREGATE"), "syntax error"),
            ((op, 2, "a", "b", "AGGREGATE", "AVG"), "syntax error"),
            ((op, 2, "a", "b", "WEIGHTS"), "syntax error"),
        ])
        z(op, 2, "a", "b", "AGGREGATE", "MIN", "AGGREGATE", "MAX", "WITHSCORES")
        z(op, 2, "a", "b", "WEIGHTS", 1, 2, "WEIGHTS", 3, 4, "WITHSCORES")
        z.err(op + "STORE", "d", 2, "a", "b", "WEIGHTS", "1", "y")
    z.errs([
        (("ZDIFF", 2, "a", "b", "WEIGHTS", 1, 2), "syntax error"),
        (("ZDIFF", 2, "a", "b", "AGGREGATE", "SUM"), "syntax error"),
        (("ZDIFFSTORE", "d", 2, "a", "b", "WEIGHTS", 1, 2), "syntax error"),
        (("ZINTERCARD", 0, "a"), "at least 1 input key is needed"),
        ("ZINTERCARD", -1, "a"),
        ("ZINTERCARD", "x", "a"),
        ("ZINTERCARD", 3, "a", "b"),
        ("ZINTERCARD", 1, "a", "b"),
        ("ZINTERCARD", 1, "a", "LIMIT"),
        (("ZINTERCARD", 1, "a", "LIMIT", -1), "LIMIT can't be negative"),
        ("ZINTERCARD", 1, "a", "WITHSCORES"),
        ("ZINTERCARD", 1, "a", "LIMIT", 1, "LIMIT"),
    ])


def test_setops_on_large_sets(z):
    """Inputs past the listpack limit, and results whose size decides their encoding."""
    z.load("big1", [(i, f"m{i}") for i in range(0, 600, 2)])
    z.load("big2", [(i * 0.5, f"m{i}") for i in range(0, 600, 3)])
    z.load("small", [(1, "m0"), (2, "m6"), (3, "m599"), (4, "m300")])
    z.pipe([
        ("ZUNION", 2, "big1", "big2", "WITHSCORES"), ("ZINTER", 2, "big1", "big2", "WITHSCORES"),
        ("ZDIFF", 2, "big1", "big2", "WITHSCORES"), ("ZINTER", 3, "big1", "big2", "small", "WITHSCORES"),
        ("ZINTERCARD", 2, "big1", "big2"), ("ZINTERCARD", 2, "big1", "big2", "LIMIT", 7),
        ("ZUNION", 3, "big1", "big2", "small", "WEIGHTS", 1, -1, 2, "AGGREGATE", "MAX", "WITHSCORES"),
        ("ZDIFF", 2, "small", "big1", "WITHSCORES"),
    ])
    for op, keys in [("ZUNIONSTORE", ("big1", "big2")), ("ZINTERSTORE", ("big1", "big2")),
                     ("ZINTERSTORE", ("big1", "small")), ("ZDIFFSTORE", ("big1", "big2")),
                     ("ZDIFFSTORE", ("small", "big2"))]:
        z(op, "dst", len(keys), *keys)
        z.state("dst")
    # A member longer than zset-max-listpack-value makes the result a skiplist.
    z("ZADD", "long", 1, "x" * 100, 2, "y")
    z("ZUNIONSTORE", "dst", 2, "long", "small")
    z.state("dst")
    z("ZINTERSTORE", "dst", 2, "long", "long")
    z.state("dst")
