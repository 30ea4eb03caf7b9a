"""SINTER, SINTERCARD (LIMIT), SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE: results
over intsets, small and large string sets, missing keys and repeated keys, their errors, and
the encodings of stored results (Redis 7.2's, pinned on Goblin)."""

import itertools

import pytest

from set_helpers import S


@pytest.fixture
def s(both):
    s = S(both)
    s("SADD", "i1", *range(0, 20))
    s("SADD", "i2", *range(10, 40, 2))
    s("SADD", "str", "a", "b", "c", "10", "12")
    s("SADD", "str2", "b", "c", "d")
    s("SADD", "big", *range(0, 600))  # a hashtable of integers
    s("SADD", "bigstr", *[f"m{i}" for i in range(300)], "a", "b", "10")
    return s


KEYS = ["i1", "i2", "str", "str2", "big", "bigstr", "nokey"]


def test_every_pair_and_triple(s):
    for n in (1, 2, 3):
        for keys in itertools.permutations(KEYS, n):
            for op in ("SINTER", "SUNION", "SDIFF"):
                s(op, *keys)
            s("SINTERCARD", n, *keys)
            s("SINTERCARD", n, *keys, "LIMIT", 3)
            s("SINTERCARD", n, *keys, "LIMIT", 0)
    for keys in (("i1", "i1"), ("str", "str", "i1"), ("i1", "nokey", "i1")):
        for op in ("SINTER", "SUNION", "SDIFF"):
            s(op, *keys)


def test_store_forms_and_encodings(s):
    for op in ("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"):
        for keys in itertools.permutations(KEYS, 2):
            s(op, "dst", *keys)
            s.members("dst")
            s("TYPE", "dst")
    s("SINTERSTORE", "d", "i1", "i2")
    s.enc72("d", "intset")
    s("SINTERSTORE", "d", "str", "i1")  # smallest first: str (listpack); all integers: intset
    s.enc72("d", "intset")
    s("SINTERSTORE", "d", "bigstr", "big")
    s.enc72("d", "intset")
    s("SINTERSTORE", "d", "bigstr", "bigstr")
    s.enc72("d", "hashtable")
    s("SUNIONSTORE", "d", "i1", "i2")
    s.enc72("d", "intset")
    s("SUNIONSTORE", "d", "i1", "str")
    s.enc72("d", "listpack")
    s("SUNIONSTORE", "d", "big", "i1")
    s.enc72("d", "hashtable")
    s("SDIFFSTORE", "d", "bigstr", "big")
    s.enc72("d", "hashtable")
    s("SDIFFSTORE", "d", "big", "i1")
    s.enc72("d", "hashtable")
    s("SDIFFSTORE", "d", "str", "str2")
    s.enc72("d", "listpack")
    s("SDIFFSTORE", "d", "str", "str2", "big")
    s.enc72("d", "listpack")
    s("SDIFFSTORE", "d", "i1", "str")
    s.enc72("d", "intset")
    assert s("SDIFFSTORE", "d", "str", "str") == 0
    assert s("EXISTS", "d") == 0, "an empty result deletes the destination"
    s("ZADD", "z", 1, "a")
    assert s("SINTERSTORE", "z", "i1") == 20, "the destination's old type does not matter"
    assert s("TYPE", "z") == b"set"
    assert s("SUNIONSTORE", "i1", "i1", "str") == 23, "a source can be the destination"
    s.members("i1")


def test_listpack_orders(s):
    """Goblin keeps Redis 7.2's listpack order (SINTER walks the smallest set, SUNION adds
    to a fresh intset that turns into a listpack); 7.0 has no listpack sets, so the order
    is pinned here on Goblin."""
    g = s.goblin
    g("SADD", "l1", "z", "3", "y", "1")
    g("SADD", "l2", "1", "y", "z", "q", "r")
    assert g("SINTER", "l2", "l1") == [b"z", b"y", b"1"]
    assert g("SUNION", "l1", "l2") == [b"z", b"3", b"y", b"1", b"q", b"r"]
    g("SADD", "n", "5", "2", "x")
    assert g("SMEMBERS", "n") == [b"2", b"5", b"x"], "the intset was sorted before x came"
    assert g("SMEMBERS", "l1") == [b"z", b"3", b"y", b"1"]
    assert g("SDIFF", "l2", "l1") == [b"q", b"r"]


def test_errors(s):
    b = s.both
    for cmd in (("SINTERCARD", 0, "a"), ("SINTERCARD", -1, "a"), ("SINTERCARD", "x", "a"),
                ("SINTERCARD", 3, "a", "b"), ("SINTERCARD", 1, "a", "LIMIT"),
                ("SINTERCARD", 1, "a", "LIMIT", -1), ("SINTERCARD", 1, "a", "LIMIT", "x"),
                ("SINTERCARD", 1, "a", "FOO", 1), ("SINTERCARD", 1, "a", "LIMIT", 1, "LIMIT")):
        b.err(*cmd)
    b("SINTERCARD", 1, "i1", "LIMIT", 1, "LIMIT", 2)
    b("SINTERCARD", 2, "i1", "limit")
