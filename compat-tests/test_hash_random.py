"""HRANDFIELD (count, WITHVALUES, negative counts, Redis's out-of-range rules, RESP2/RESP3
shapes) and HSCAN (MATCH, COUNT, cursors) on both encodings, against Redis: replies compared
by shape and by membership where they are random."""

import pytest

from hash_helpers import H


@pytest.fixture
def h(both):
    return H(both)


def fill(h, key, n):
    h.exact("HSET", key, *[x for i in range(n) for x in (f"f{i}", f"v{i}")])
    return {f"f{i}".encode(): f"v{i}".encode() for i in range(n)}


@pytest.mark.parametrize("n", [5, 1000])
def test_hrandfield_counts(h, n):
    b = h.both
    pairs = fill(h, "k", n)
    h.enc_both("k", "listpack" if n < 512 else "hashtable")
    for c in b.clients():
        assert c.execute_command("HRANDFIELD", "k") in pairs
        for count in (1, 3, n - 1, n, n + 5):
            got = c.execute_command("HRANDFIELD", "k", count)
            assert len(got) == min(count, n) and len(set(got)) == len(got), count
            assert set(got) <= pairs.keys()
            flat = c.execute_command("HRANDFIELD", "k", count, "WITHVALUES")
            assert len(flat) == 2 * min(count, n)
            assert all(pairs[f] == v for f, v in zip(flat[::2], flat[1::2]))
        for count in (-1, -3, -(n + 20)):
            got = c.execute_command("HRANDFIELD", "k", count)
            assert len(got) == -count and set(got) <= pairs.keys()
            flat = c.execute_command("HRANDFIELD", "k", count, "WITHVALUES")
            assert len(flat) == -2 * count
            assert all(pairs[f] == v for f, v in zip(flat[::2], flat[1::2]))
    if n < 512:
        # the whole listpack in its order, on both
        h.exact("HRANDFIELD", "k", n + 1)
        h.exact("HRANDFIELD", "k", n, "WITHVALUES")
    else:
        h("HRANDFIELD", "k", n + 1, "WITHVALUES")
    # repetition with a negative count: every field is drawn eventually
    seen = set(b.goblin.execute_command("HRANDFIELD", "k", -20 * n))
    assert seen == pairs.keys()


def test_hrandfield_edges_and_errors(h):
    fill(h, "k", 3)
    for cmd in (("HRANDFIELD", "nokey"), ("HRANDFIELD", "nokey", 5), ("HRANDFIELD", "nokey", -5),
                ("HRANDFIELD", "nokey", 0, "WITHVALUES"), ("HRANDFIELD", "k", 0),
                ("HRANDFIELD", "k", 0, "WITHVALUES"), ("HRANDFIELD", "k", 2, "withvalues", "x"),
                ("HRANDFIELD", "k", 2, "WITHSCORES"), ("HRANDFIELD", "nokey", 2, "x"),
                ("HRANDFIELD", "k", "x"), ("HRANDFIELD", "k", "1.5"), ("HRANDFIELD", "k", ""),
                ("HRANDFIELD", "k", -(2 ** 63)), ("HRANDFIELD", "k", 2 ** 63),
                ("HRANDFIELD", "k", -(2 ** 63) + 1, "WITHVALUES"),
                ("HRANDFIELD", "k", 2 ** 62, "WITHVALUES"),
                ("HRANDFIELD", "k", -(2 ** 62), "WITHVALUES"),
                ("HRANDFIELD", "nokey", 2 ** 62, "WITHVALUES"),
                ("HRANDFIELD", "k", 2 ** 62 - 1, "WITHVALUES"), ("HRANDFIELD", "k", 2 ** 63 - 1)):
        h(*cmd)


def test_hrandfield_resp3(both3):
    h = H(both3)
    pairs = fill(h, "k", 4)
    for c in both3.clients():
        got = c.execute_command("HRANDFIELD", "k", -6, "WITHVALUES")
        assert len(got) == 6 and all(isinstance(p, list) and pairs[p[0]] == p[1] for p in got)
        got = c.execute_command("HRANDFIELD", "k", 2, "WITHVALUES")
        assert len(got) == 2 and all(pairs[p[0]] == p[1] for p in got)
    h.exact("HRANDFIELD", "k", 9, "WITHVALUES")
    h.exact("HRANDFIELD", "k", 9)


@pytest.mark.parametrize("n", [20, 3000])
def test_hscan(h, n):
    b = h.both
    pairs = fill(h, "k", n)
    if n < 512:
        h.exact("HSCAN", "k", 0)
        h.exact("HSCAN", "k", 0, "COUNT", 1)
        h.exact("HSCAN", "k", 0, "MATCH", "f1*")
        h.exact("HSCAN", "k", 0, "MATCH", "v*")
        h.exact("HSCAN", "k", -1)  # a listpack answers everything whatever the cursor
    for c in b.clients():
        for opts in ((), ("COUNT", 7), ("MATCH", "f1*", "COUNT", 100)):
            seen, cursor = {}, b"0"
            while True:
                cursor, items = c.execute_command("HSCAN", "k", cursor, *opts)
                seen.update(zip(items[::2], items[1::2]))
                if cursor == b"0":
                    break
            want = {f: v for f, v in pairs.items() if not opts or opts[0] != "MATCH" or f.startswith(b"f1")}
            assert seen == want, opts
    for cmd in (("HSCAN", "nokey", 0), ("HSCAN", "nokey", "x"), ("HSCAN", "k", "x"), ("HSCAN", "k", 0, "COUNT", 0), ("HSCAN", "k", 0, "COUNT", "x"),
                ("HSCAN", "k", 0, "MATCH"), ("HSCAN", "k", 0, "NOVALUES"), ("HSCAN", "k", 0, "TYPE", "hash"),
                ("HSCAN", "nokey", 0, "COUNT", 0), ("HSCAN", "k", "18446744073709551616")):
        h(*cmd)
