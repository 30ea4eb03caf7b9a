"""`me` (meta debug) and the stats sub-commands that show memcached's slab classes
(`stats items`, `stats slabs`, `stats sizes`) and its settings and connections.

Goblin has no slabs; it reports the class and item size memcached would give the same key
and value. Fields that only measure time (`la=`, `age`, `secs_since_last_cmd`) or memcached's
LRU segment moves (which its maintainer thread makes within seconds) are masked; the
per-class command counters of `stats slabs` are compared (see test_slab_counters.py).
"""

import re

import pytest


def mask_la(reply):
    return re.sub(rb" la=\d+ ", b" la=* ", reply)


ME_CASES = [
    ("me_miss", b"me mex_missing\r\n"),
    ("me_errors", b"me\r\nme " + b"k" * 251 + b"\r\nme !!!! b\r\nme ab= b\r\n"),
    ("me_small", b"set me1 0 0 3\r\nbar\r\nme me1\r\nme me1 x y z\r\n"),
    ("me_flags_ttl", b"set me2 5 100 10\r\n0123456789\r\nme me2\r\n"),
    ("me_fetched", b"set me3 0 0 1\r\nx\r\nme me3\r\nget me3\r\nme me3\r\nmg me3 u\r\n"),
    ("me_meta_set", b"ms me4 2 T0 F1\r\nhi\r\nme me4\r\nms me4 2 T50\r\nhi\r\nme me4\r\n"),
    ("me_base64", b"ms bWU1 2 b\r\nhi\r\nme me5\r\nme bWU1 b\r\nmg bWU1 b k v\r\nmg me5 k\r\nset me5 0 0 1\r\nx\r\nme me5\r\nmg me5 k\r\n"),
    ("me_key_250", b"set " + b"m" * 250 + b" 0 0 1\r\nx\r\nme " + b"m" * 250 + b"\r\n"),
    ("me_after_delete", b"set me6 0 0 1\r\nx\r\ndelete me6\r\nme me6\r\n"),
    ("me_incr_vivify", b"set me7 0 0 2\r\n99\r\nincr me7 1\r\nme me7\r\nma me8 N0 J7\r\nme me8\r\nmg me9 N30\r\nme me9\r\n"),
]


@pytest.mark.parametrize("data", [c[1] for c in ME_CASES], ids=[c[0] for c in ME_CASES])
def test_me(both, data):
    mc, gb = both(data)
    assert mask_la(gb) == mask_la(mc), f"\nmemcached: {mc!r}\ngoblin:    {gb!r}"


@pytest.mark.parametrize(
    "size", [0, 1, 30, 31, 100, 1000, 4095, 4096, 5000, 100_000, 524_200, 524_230, 600_000, 1_048_000]
)
def test_me_sizes_and_classes(both, size):
    """cls= and size= across class boundaries, the SSD tail path and chunked items."""
    key = b"mesz%d" % size
    value = b"v" * size
    for flags in (b"0", b"7"):
        mc, gb = both(b"set " + key + b" " + flags + b" 0 %d\r\n" % size + value + b"\r\nme " + key + b"\r\n")
        assert mask_la(gb) == mask_la(mc)


def stat_lines(reply):
    """The STAT lines of a reply ending in END, MN; timing fields masked."""
    lines = reply.split(b"\r\n")
    assert lines[-3:] == [b"END", b"MN", b""], reply[-200:]
    out = []
    for line in lines[:-3]:
        m = re.fullmatch(rb"STAT (\S+) (.*)", line)
        assert m, line
        name, value = m.group(1), m.group(2)
        if re.search(rb":(number_hot|number_warm|number_cold|age_hot|age_warm|age|moves_to_cold|moves_to_warm|moves_within_lru|crawler_items_checked)$", name) and b":" in name:
            value = b"*"
        out.append((name.decode(), value.decode()))
    return out


def load(run):
    """Keys and values of many sizes, flags on some, one deleted. (memcached keeps the pages
    that deleted items free; Goblin reports the pages the present items need, so deletes that
    empty a page are left out.)"""
    data = b""
    for i, size in enumerate([0, 1, 10, 40, 41, 100, 200, 500, 1000, 3000, 4096, 8000, 20_000, 100_000, 300_000, 524_000, 600_000, 900_000]):
        for j in range(3):
            key = b"k%d_%d" % (i, j) + b"x" * (j * 17)
            data += b"set %s %d 0 %d\r\n" % (key, j, size) + b"y" * size + b"\r\n"
    data += b"delete k3_1\r\nms bWU1 5 b\r\nhello\r\nma ctr N0 J5\r\n"
    run(data)


def test_stats_items_and_slabs(fresh):
    mc, gb = fresh(b"stats items\r\nstats slabs\r\n")
    assert gb == mc
    load(fresh)
    for cmd in (b"stats items\r\n", b"stats slabs\r\n"):
        mc, gb = fresh(cmd)
        assert stat_lines(gb) == stat_lines(mc), cmd


def test_stats_sizes(fresh):
    mc, gb = fresh(b"stats sizes\r\nstats sizes_disable\r\nstats sizes\r\nstats sizes_enable\r\n")
    assert gb == mc
    fresh(b"set sz1 0 0 10\r\n0123456789\r\nset sz2 0 0 100\r\n" + b"x" * 100 + b"\r\nset sz3 3 0 1000\r\n" + b"z" * 1000 + b"\r\n")
    mc, gb = fresh(b"stats sizes\r\nstats sizes_disable\r\nstats sizes\r\n")
    assert gb == mc


def test_stats_settings_fields(both):
    mc, gb = both(b"stats settings\r\n")
    mcs, gbs = dict(stat_lines(mc)), dict(stat_lines(gb))
    assert list(gbs) == list(mcs)
    for name in ("udpport", "inter", "evictions", "growth_factor", "chunk_size", "cas_enabled", "item_size_max", "slab_chunk_max", "detail_enabled"):
        assert gbs[name] == mcs[name], name


def test_stats_conns_form(both):
    mc, gb = both(b"stats conns\r\n")
    for reply in (mc, gb):
        for name, value in stat_lines(reply):
            assert re.fullmatch(r"\d+:(addr|listen_addr|state|secs_since_last_cmd)", name), name
        assert any(n.endswith(":state") and v == "conn_listening" for n, v in stat_lines(reply))


def test_stats_other_subcommands(same):
    same(
        b"stats detail on\r\nstats detail dump\r\nstats detail off\r\nstats detail x\r\nstats detail\r\n"
        b"stats cachedump\r\nstats cachedump 1\r\nstats cachedump x 1\r\nstats cachedump 64 1\r\n"
        b"stats extstore\r\nstats reset x\r\nstats bogus\r\nstats items_\r\n"
    )
