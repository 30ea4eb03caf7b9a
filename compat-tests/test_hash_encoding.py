"""Hash encodings and their conversions at Redis's moments (t_hash.c hashTypeSet): listpack
while at most hash-max-listpack-entries pairs whose fields and values are at most
hash-max-listpack-value bytes, else hashtable; nothing converts back. The parameters by
CONFIG SET and their ziplist names, and as start-up flags, on both; replies of a listpack
hash compared in order."""

import pytest

from harness import Both, start_pair
from hash_helpers import H


@pytest.fixture
def h(both):
    return H(both)


def test_entry_limit(h):
    h.exact("HSET", "k", *[x for i in range(512) for x in (f"f{i}", i)])
    h.enc_both("k", "listpack")
    h.exact("HGETALL", "k")
    h.exact("HSET", "k", "f0", "updated")  # an update never converts
    h.enc_both("k", "listpack")
    h.exact("HSET", "k", "f512", 512)
    h.enc_both("k", "hashtable")
    h.getall("k")
    h.exact("HDEL", "k", *[f"f{i}" for i in range(510)])
    h.enc_both("k", "hashtable")
    h.getall("k")
    h.exact("HSET", "once", *[x for i in range(513) for x in (f"f{i}", i)])
    h.enc_both("once", "hashtable")
    for i in range(513):
        h.exact("HSETNX", "one-by-one", f"f{i}", i)
    h.enc_both("one-by-one", "hashtable")
    for i in range(513):
        h.exact("HINCRBY", "counters", f"c{i}", i)
    h.enc_both("counters", "hashtable")


def test_value_limit(h):
    for key, pair in (("f64", ("x" * 64, "v")), ("v64", ("f", "y" * 64)),
                      ("f65", ("x" * 65, "v")), ("v65", ("f", "y" * 65))):
        h.exact("HSET", key, "a", 1)
        h.exact("HSET", key, *pair)
    for key in ("f64", "v64"):
        h.enc_both(key, "listpack")
    for key in ("f65", "v65"):
        h.enc_both(key, "hashtable")
    h.exact("HSET", "upd", "a", 1, "b", 2)
    h.exact("HSET", "upd", "a", "z" * 65)  # an update with a long value converts
    h.enc_both("upd", "hashtable")
    h.exact("HSETNX", "nx", "f" * 65, 1)
    h.enc_both("nx", "hashtable")
    h.exact("HSET", "fl", "a", "1")
    h.exact("HINCRBYFLOAT", "fl", "a", "0.1")
    h.exact("HINCRBYFLOAT", "fl", "a", "1e40")  # 42 bytes of text: still listpack
    h.enc_both("fl", "listpack")
    h.exact("HINCRBYFLOAT", "fl", "a", "1e70")
    h.enc_both("fl", "hashtable")


def test_config_set_of_the_parameters(h):
    b = h.both
    for name in ("hash-max-listpack-entries", "hash-max-ziplist-entries", "hash-max-listpack-value",
                 "hash-max-ziplist-value"):
        b.pairs("CONFIG", "GET", name)
    b.pairs("CONFIG", "GET", "hash-max-*")
    b.config_set("hash-max-ziplist-entries", 4)
    b.pairs("CONFIG", "GET", "hash-max-*-entries")
    b.config_set("hash-max-listpack-value", "1kb")
    b.pairs("CONFIG", "GET", "hash-max-*-value")
    h.exact("HSET", "k", "a", 1, "b", 2, "c", 3, "d", "x" * 1000)
    h.enc_both("k", "listpack")
    h.exact("HSET", "k", "e", 5)
    h.enc_both("k", "hashtable")
    b.config_set("hash-max-ziplist-entries", 0)
    h.exact("HSET", "zero", "a", 1)
    h.enc_both("zero", "hashtable")
    b.config_set("hash-max-ziplist-entries", 512)
    b.config_set("hash-max-listpack-value", 0)
    h.exact("HSET", "empty", "", "")
    h.enc_both("empty", "listpack")
    h.exact("HSET", "empty", "a", "")
    h.enc_both("empty", "hashtable")
    for bad in ("-1", "x", "1.5"):
        b.err("CONFIG", "SET", "hash-max-listpack-entries", bad)
    b.err("CONFIG", "SET", "hash-max-listpack-value", "-1")


def test_many_pairs_convert_up_front_as_7_2(h):
    """Redis 7.2's hashTypeTryConversion converts before the write when a command brings
    more pairs than a listpack holds, duplicates or not (7.0 does not: pinned on Goblin)."""
    h.goblin("HSET", "dups", *["same", "v"] * 513)
    assert h.goblin("HLEN", "dups") == 1
    assert h.goblin("OBJECT", "ENCODING", "dups") == b"hashtable"
    h.goblin("HSET", "fits", *["same", "v"] * 512)
    assert h.goblin("OBJECT", "ENCODING", "fits") == b"listpack"


def test_parameters_as_start_up_flags(tmp_path_factory):
    pair = start_pair(tmp_path_factory, "--hash-max-ziplist-entries", "2", "--hash-max-listpack-value", "8")
    b = Both(pair)
    try:
        h = H(b)
        b.pairs("CONFIG", "GET", "hash-max-*")
        h.exact("HSET", "two", "a", 1, "b", 2)
        h.enc_both("two", "listpack")
        h.exact("HSET", "three", "a", 1, "b", 2, "c", 3)
        h.enc_both("three", "hashtable")
        h.exact("HSET", "long", "a", "123456789")
        h.enc_both("long", "hashtable")
    finally:
        b.close()
        pair.stop()
