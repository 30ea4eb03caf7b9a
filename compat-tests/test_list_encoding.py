"""List encodings and their conversions at the thresholds, as Redis 7.2's t_list.c makes
them (Redis 7.0, the reference here, has quicklists only, so the encodings are checked on
Goblin alone and the contents against Redis): a listpack until a write would take its one
node past list-max-listpack-size (-2 = 8 KiB of listpack by default, a positive value an
entry count, with 8 KiB still the cap), a quicklist that turns back into a listpack only at
one node within half the limit; the ziplist alias; CONFIG errors."""

import pytest

from list_helpers import L, lst  # noqa: F401  (fixture)


def lp_entry(s: bytes) -> int:
    """Bytes of `s` in a listpack (encoding, data, back-length)."""
    try:
        v = int(s)
        canonical = str(v).encode() == s and -(2**63) <= v < 2**63
    except ValueError:
        canonical = False
    if canonical:
        enc = next(n for lo, hi, n in [(0, 127, 1), (-4096, 4095, 2), (-32768, 32767, 3),
                                       (-(2**23), 2**23 - 1, 4), (-(2**31), 2**31 - 1, 5)]
                   if lo <= v <= hi) if -(2**31) <= v < 2**31 else 9
    else:
        enc = len(s) + (1 if len(s) < 64 else 2 if len(s) < 4096 else 5)
    return enc + next(n for n, lim in [(1, 127), (2, 16383), (3, 2097151), (4, 268435455)]
                      if enc <= lim)


def test_default_fill_converts_at_8_kib(lst):
    l = lst
    elem = b"e" * 16
    n = 0
    size = 7  # listpack header and end byte
    # The push that would take the listpack's bytes plus the new element's past 8192 converts.
    while size + len(elem) <= 8192:
        l("RPUSH", "k", elem)
        size += lp_entry(elem)
        n += 1
        l.enc72("k", "listpack")
    l("RPUSH", "k", elem)
    l.enc72("k", "quicklist")
    # Shrinking: a quicklist of one node returns to listpack at half the byte limit.
    l("LTRIM", "k", 0, 200)
    l.enc72("k", "listpack" if 7 + 201 * lp_entry(elem) <= 4096 else "quicklist")
    l("LTRIM", "k", 0, 100)
    l.enc72("k", "listpack")
    l.state("k")


def test_count_fill_and_hysteresis(lst):
    l = lst
    l.config_set("list-max-listpack-size", 4)
    l("RPUSH", "k", "a", "b", "c", "d")
    l.enc72("k", "listpack")
    l("RPUSH", "k", "e")
    l.enc72("k", "quicklist")  # nodes [a b c d] [e]
    l("LPOP", "k", 2)
    l.enc72("k", "quicklist")  # two nodes left
    l("RPOP", "k")
    l.enc72("k", "listpack")  # one node of 2 <= 4 / 2
    l("RPUSH", "new", "a", "b", "c", "d", "e")
    l.enc72("new", "quicklist")  # created past the limit by its own push
    l.state("k", "new")


@pytest.mark.parametrize("write", [
    ("RPUSH", "k", "x" * 9000),
    ("LPUSHX", "k", "x" * 9000),
    ("LSET", "k", 0, "x" * 9000),
    ("LINSERT", "k", "BEFORE", "a", "x" * 9000),
    ("LINSERT", "k", "BEFORE", "no-such-pivot", "x" * 9000),  # converts even when not found
])
def test_a_large_element_converts(lst, write):
    l = lst
    l("RPUSH", "k", "a", "b")
    l.enc72("k", "listpack")
    l(*write)
    l.enc72("k", "quicklist")
    l.state("k")


def test_shrinking_writes_convert_back(lst):
    l = lst
    for shrink in [("LSET", "k", 0, "small"), ("LREM", "k", 1, "x" * 9000), ("LPOP", "k"),
                   ("LTRIM", "k", 1, -1), ("LMOVE", "k", "d", "LEFT", "LEFT")]:
        l("DEL", "k", "d")
        l("RPUSH", "k", "x" * 9000, "a", "b")
        l.enc72("k", "quicklist")
        l(*shrink)
        l.enc72("k", "listpack")
        l.state("k", "d")


def test_config_names_and_errors(lst):
    l = lst
    for name in ("list-max-listpack-size", "list-max-ziplist-size"):
        l("CONFIG", "GET", name)
    l.config_set("list-max-ziplist-size", -1)
    l.b.pairs("CONFIG", "GET", "list-max-*-size")  # in any order
    l.config_set("list-max-listpack-size", -2)
    l.errs([
        ("CONFIG", "SET", "list-max-listpack-size", "x"),
        ("CONFIG", "SET", "list-max-listpack-size", "1.5"),
        ("CONFIG", "SET", "list-max-listpack-size", "99999999999"),
    ])
