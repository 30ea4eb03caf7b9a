"""Set encodings and their conversions at Redis 7.2's moments (t_set.c setTypeCreate,
setTypeMaybeConvert, setTypeAdd): intset while every member is an integer and there are at
most set-max-intset-entries, listpack while at most set-max-listpack-entries members of at
most set-max-listpack-value bytes, else hashtable; nothing converts back. The parameters
by CONFIG SET (set-max-intset-entries on both; the listpack ones are 7.2's, on Goblin)."""

import pytest

from set_helpers import S


@pytest.fixture
def s(both):
    return S(both)


def test_intset_limits(s):
    s("SADD", "k", *range(512))
    s.enc72("k", "intset")
    s("SADD", "k", 512)
    s.enc72("k", "hashtable")
    s("SREM", "k", *range(500))
    s.enc72("k", "hashtable")
    s("SADD", "big", *range(513))  # created at once past the limit
    s.enc72("big", "hashtable")
    s("SADD", "m", 1)
    s("SADD", "m", *range(2, 600))  # converted up front by the count
    s.enc72("m", "hashtable")
    s("SADD", "w", 1, 2)
    s("SADD", "w", 2 ** 40, -(2 ** 40))
    s.enc72("w", "intset")
    s.exact("SMEMBERS", "w")


def test_intset_gains_a_string(s):
    s("SADD", "k", 1, 2, 3)
    s("SADD", "k", "a")
    s.enc72("k", "listpack")
    s("SADD", "k2", *range(128))
    s("SADD", "k2", "a")
    s.enc72("k2", "hashtable")
    s("SADD", "k3", *range(127))
    s("SADD", "k3", "a")
    s.enc72("k3", "listpack")
    s("SADD", "k4", 1)
    s("SADD", "k4", "x" * 65)
    s.enc72("k4", "hashtable")
    s("SADD", "k5", "01")
    s.enc72("k5", "listpack")


def test_listpack_limits(s):
    s("SADD", "k", *[f"m{i}" for i in range(128)])
    s.enc72("k", "listpack")
    s("SADD", "k", "m128")
    s.enc72("k", "hashtable")
    s("SADD", "k2", "a")
    s("SADD", "k2", "x" * 64)
    s.enc72("k2", "listpack")
    s("SADD", "k2", "x" * 65)
    s.enc72("k2", "hashtable")
    s("SADD", "k3", *[f"m{i}" for i in range(129)])
    s.enc72("k3", "hashtable")
    s("SADD", "k4", "a")
    s("SADD", "k4", *[f"m{i}" for i in range(128)])  # 128 arguments: fits the count, not the set
    s.enc72("k4", "hashtable")


def test_config_set(s):
    b = s.both
    b.config_set("set-max-intset-entries", 4)
    b("CONFIG", "GET", "set-max-intset-entries")
    s("SADD", "k", 1, 2, 3, 4)
    s.enc72("k", "intset")
    s("SADD", "k", 5)
    s.enc72("k", "hashtable")
    g = s.goblin
    for name, value in (("set-max-listpack-entries", "3"), ("set-max-listpack-value", "4")):
        old = g("CONFIG", "GET", name)[1]
        try:
            assert g("CONFIG", "SET", name, value) == b"OK"
            assert g("CONFIG", "GET", name) == [name.encode(), value.encode()]
        finally:
            pass
        s.both._restore.setdefault(name, (None, old))
    g("SADD", "l", "a", "b", "c")
    assert s.enc("l") == "listpack"
    g("SADD", "l", "d")
    assert s.enc("l") == "hashtable"
    g("SADD", "l2", "abcd")
    assert s.enc("l2") == "listpack"
    g("SADD", "l2", "abcde")
    assert s.enc("l2") == "hashtable"
    b.err("CONFIG", "SET", "set-max-intset-entries", "x")
    b.err("CONFIG", "SET", "set-max-intset-entries", "-1")
