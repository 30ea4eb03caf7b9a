"""SPOP [count] and SRANDMEMBER [count] by Redis's rules (sizes, uniqueness and membership,
never a distribution), over every encoding, and SSCAN (MATCH, COUNT, cursors that hold
while the set changes)."""

import time

import pytest

import resp
from harness import RawPair, info_of
from set_helpers import S

SETS = {
    "ints": [str(i) for i in range(50)],
    "strs": [f"s{i}" for i in range(50)],
    "bigints": [str(i) for i in range(1000)],
    "bigstrs": [f"member:{i}" for i in range(1000)],
}


@pytest.fixture
def s(both):
    s = S(both)
    for k, members in SETS.items():
        s("SADD", k, *members)
    return s


def each(s, *cmd):
    return [c.execute_command(*cmd) for c in s.both.clients()]


def test_srandmember_counts(s):
    for key, members in SETS.items():
        size = len(members)
        for _ in range(3):
            for r in each(s, "SRANDMEMBER", key):
                assert r.decode() in members
            for count in (1, 2, 10, size // 3, size // 2, size - 1, size, size + 5, 5000):
                for r in each(s, "SRANDMEMBER", key, count):
                    assert len(r) == min(count, size)
                    assert len(set(r)) == len(r), "a positive count gives distinct members"
                    assert {m.decode() for m in r} <= set(members)
            for count in (-1, -5, -size, -3 * size):
                for r in each(s, "SRANDMEMBER", key, count):
                    assert len(r) == -count
                    assert {m.decode() for m in r} <= set(members)
        assert s("SCARD", key) == size, "SRANDMEMBER changes nothing"
    s.exact("SRANDMEMBER", "ints", 0)
    s.exact("SRANDMEMBER", "nokey", 5)
    s.exact("SRANDMEMBER", "nokey", -5)
    s.exact("SRANDMEMBER", "nokey")
    for bad in ("x", "1.5", "-9223372036854775808", "9223372036854775808"):
        s.both.err("SRANDMEMBER", "ints", bad)
    s.both.err("SRANDMEMBER", "ints", 1, 2)


def test_random_counts_at_the_edges_of_the_range(both):
    """Counts beyond a long, and (with values or scores) beyond half of one, are refused with
    Redis 7.2's words; SRANDMEMBER has no such half-range check."""
    both("SADD", "set", "a")
    both("HSET", "hash", "a", "1")
    both("ZADD", "zset", 1, "a")
    for cmd in (("SRANDMEMBER", "set"), ("HRANDFIELD", "hash"), ("ZRANDMEMBER", "zset")):
        both.err(*cmd, "-9223372036854775808")
        both.err(*cmd, "9223372036854775808")
    for cmd in (("HRANDFIELD", "hash"), ("ZRANDMEMBER", "zset")):
        opt = "WITHVALUES" if cmd[0] == "HRANDFIELD" else "WITHSCORES"
        for count in ("-9223372036854770000", "9223372036854770000", "-4611686018427387904"):
            both.err(*cmd, count, opt)


@pytest.mark.parametrize("encoding_size", [1, 300])
def test_huge_negative_count_stops_at_the_output_limit(both, encoding_size):
    """A negative count far beyond what can be sent writes until the client passes its
    output buffer limit, then the connection is closed (Redis's CLIENT_CLOSE_ASAP check),
    neither hanging nor building the whole reply; the server keeps serving."""
    both.config_set("client-output-buffer-limit", "normal 100000 0 0")
    both("SADD", "set", *[f"m{i}" for i in range(encoding_size)])
    both("HSET", "hash", *[x for i in range(encoding_size) for x in (f"f{i}", "v")])
    both("ZADD", "zset", *[x for i in range(encoding_size) for x in (i, f"m{i}")])
    huge = "-4611686018427387903"
    cmds = [
        ("SRANDMEMBER", "set", "-9223372036854775807"),
        ("HRANDFIELD", "hash", "-9223372036854775807"),
        ("HRANDFIELD", "hash", huge, "WITHVALUES"),
        ("ZRANDMEMBER", "zset", "-9223372036854775807"),
        ("ZRANDMEMBER", "zset", huge, "WITHSCORES"),
    ]
    for cmd in cmds:
        raw = RawPair(both.pair)
        try:
            raw.send(resp.encode(*cmd))
            assert raw.closed(10.0) == (True, True), cmd
        finally:
            raw.close()
        assert both("SCARD", "set") == encoding_size


def lazyfreed(c) -> int:
    """INFO's lazyfreed_objects once nothing waits for the lazy-free thread."""
    deadline = time.monotonic() + 10
    while True:
        mem = info_of(c, "memory")
        if mem["lazyfree_pending_objects"] == 0 or time.monotonic() > deadline:
            return mem["lazyfreed_objects"]
        time.sleep(0.01)


@pytest.mark.parametrize("members", [[f"member:{i}" for i in range(2000)], list(range(2000))])
def test_spop_near_the_whole_set_frees_the_old_table_lazily(both, members):
    """SPOP of most of a big set moves the members that stay to a new set and frees the
    old table as lazyfree-lazy-server-del says: on the lazy-free thread (one lazyfreed
    object) under yes, at once under no."""
    for lazy, freed in (("yes", 1), ("no", 0)):
        both.config_set("lazyfree-lazy-server-del", lazy)
        both("SADD", "big", *members)
        before = [lazyfreed(c) for c in both.clients()]
        popped = both.each(lambda c: len(c.execute_command("SPOP", "big", 1990)))
        assert popped == 1990
        after = [lazyfreed(c) for c in both.clients()]
        assert [a - b for a, b in zip(after, before)] == [freed, freed]
        assert both("SCARD", "big") == 10
        both("DEL", "big")


def test_srandmember_whole_set_of_intset_in_order(s):
    s.exact("SRANDMEMBER", "ints", 100)


def test_spop_counts(s):
    for c in s.both.clients():
        for key, members in SETS.items():
            size = len(members)
            left = set(members)
            for count in (1, 3, size // 10):
                r = {m.decode() for m in c.execute_command("SPOP", key, count)}
                assert len(r) == count and r <= left
                left -= r
                size -= count
                assert {m.decode() for m in c.execute_command("SMEMBERS", key)} == left
            assert c.execute_command("SPOP", key).decode() in left
            size -= 1
            # Most of what is left: the "move the rest to a new set" strategy.
            count = size - size // 6
            r = c.execute_command("SPOP", key, count)
            assert len(r) == count and len(set(r)) == count
            size -= count
            assert c.execute_command("SCARD", key) == size
            assert len(c.execute_command("SPOP", key, size + 10)) == size
            assert c.execute_command("EXISTS", key) == 0
    s.exact("SPOP", "nokey")
    s.exact("SPOP", "nokey", 3)
    s("SADD", "k", "a")
    s.exact("SPOP", "k", 0)
    for bad in ("x", "-1", "1.5"):
        s.both.err("SPOP", "k", bad)
    s.both.err("SPOP", "k", 1, 2)
    s.exact("SPOP", "k")
    s.exact("EXISTS", "k")


def test_spop_leaves_redis_encodings(s):
    s.goblin("SPOP", "bigints", 900)  # the rest moves to a new set: a listpack in 7.2
    assert s.enc("bigints") == "listpack"
    s.goblin("SPOP", "bigstrs", 900)
    assert s.enc("bigstrs") == "listpack"
    s.goblin("SPOP", "ints", 45)
    assert s.enc("ints") == "intset"
    s.goblin("SPOP", "strs", 10)
    assert s.enc("strs") == "listpack"


def test_sscan(s):
    b = s.both
    for cmd in (("SSCAN", "ints", 0), ("SSCAN", "ints", 0, "COUNT", 2),
                ("SSCAN", "ints", 0, "MATCH", "*1*")):  # an intset: everything at once
        s.exact(*cmd)
    # A listpack (7.2; a hashtable in 7.0) also answers everything at once, in its order.
    assert s.goblin("SSCAN", "strs", 0, "COUNT", 2) == [b"0", [m.encode() for m in SETS["strs"]]]
    assert s.goblin("SSCAN", "strs", 0, "MATCH", "s1*")[1] == [b"s1"] + [
        f"s{i}".encode() for i in range(10, 20)]
    s.exact("SSCAN", "nokey", 0)
    s.exact("SSCAN", "nokey", 0, "COUNT", 0)  # a missing key answers before the options
    for bad in (("SSCAN", "ints", "x"), ("SSCAN", "ints", 0, "COUNT", 0),
                ("SSCAN", "ints", 0, "MATCH"), ("SSCAN", "ints", 0, "TYPE", "set"),
                ("SSCAN", "ints", 0, "COUNT", "x")):
        b.err(*bad)
    for key in ("bigints", "bigstrs"):
        for c in b.clients():
            seen, cursor, steps = [], 0, 0
            while True:
                cursor, items = c.execute_command("SSCAN", key, cursor, "COUNT", 50)
                seen += items
                steps += 1
                if steps == 3:
                    c.execute_command("SADD", key, *[f"new{i}" for i in range(500)])
                if steps == 5:
                    c.execute_command("SREM", key, *[f"new{i}" for i in range(500)])
                if int(cursor) == 0:
                    break
            originals = {m.decode() for m in seen} & set(SETS[key])
            assert originals == set(SETS[key]), "every member present throughout is returned"
            assert steps > 3
        for c in b.clients():
            cursor, items = c.execute_command("SSCAN", key, 0, "MATCH", "*99*", "COUNT", 5000)
            assert int(cursor) == 0
            assert sorted(items) == sorted(m.encode() for m in SETS[key] if "99" in m)
