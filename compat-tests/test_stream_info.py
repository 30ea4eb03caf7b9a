"""XINFO STREAM [FULL [COUNT]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP against Redis
7.2.4 (its 7.2 fields: active-time, inactive, entries-read, lag, max-deleted-entry-id,
entries-added, recorded-first-entry-id), compared byte for byte in RESP2 and RESP3.

Streams are built by the same commands on both servers (XADD, XDEL, XTRIM, XSETID, XGROUP
with small nodes, so radix-tree-keys / -nodes, the lag and the read counters move), or, for
pending entries and consumers that read, by Redis's XREADGROUP and restored into both from
its DUMP; the times of consumers that only exist on each server (idle, inactive, seen-time)
are compared within a tolerance."""

import random

import pytest

from harness import RawPair, info_of
from resp import encode, parse
from test_hyperloglog import both72, pair72  # noqa: F401 (the fixtures)


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def raw(request, both72):  # noqa: F811
    """Raw connections to Redis 7.2.4 and Goblin speaking RESP2 or RESP3; calling it sends
    one command and asserts the two replies are the same bytes."""
    p = RawPair(both72.pair)
    if request.param == 3:
        p(encode("HELLO", "3"))
    yield lambda *cmd: p.same(encode(*cmd))
    p.same(encode("CONFIG", "SET", "stream-node-max-entries", "100"))
    p.close()


def setup(raw, *cmds):
    for cmd in cmds:
        raw(*cmd)


BUILD = [
    ("CONFIG", "SET", "stream-node-max-entries", "3"),
    *[("XADD", "s", f"{i}-{i % 3}", "f", f"v{i}", "n", str(i)) for i in range(1, 15)],
    ("XADD", "s", "20-0", "other", "fields"),
    ("XDEL", "s", "5-2", "7-1", "8-2", "9-0"),
    ("XGROUP", "CREATE", "s", "g0", "0"),
    ("XGROUP", "CREATE", "s", "glast", "$"),
    ("XGROUP", "CREATE", "s", "gmid", "10-1"),
    ("XGROUP", "CREATE", "s", "gread", "10-1", "ENTRIESREAD", "9"),
    ("XGROUP", "CREATE", "s", "gover", "3-0", "ENTRIESREAD", "100"),
    ("XGROUP", "CREATE", "s", "gfuture", "99-0"),
    ("SET", "str", "x"),
]


def test_xinfo_stream_and_groups(raw):
    setup(raw, *BUILD)
    raw("XINFO", "STREAM", "s")
    for opts in ([], ["COUNT", "0"], ["COUNT", "2"], ["count", "-5"], ["COUNT", "100"]):
        raw("XINFO", "STREAM", "s", "FULL", *opts)
    raw("XINFO", "GROUPS", "s")
    # After trimming the head: the first entry, the lag of groups before it.
    raw("XTRIM", "s", "MINID", "4")
    raw("XINFO", "STREAM", "s")
    raw("XINFO", "GROUPS", "s")
    raw("XTRIM", "s", "MAXLEN", "2")
    raw("XINFO", "STREAM", "s", "full")
    raw("XINFO", "GROUPS", "s")
    raw("XSETID", "s", "50-0", "ENTRIESADDED", "40", "MAXDELETEDID", "30-0")
    raw("XINFO", "GROUPS", "s")
    raw("XINFO", "STREAM", "s")


def test_xinfo_empty_streams(raw):
    setup(
        raw,
        ("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"),
        ("XADD", "gone", "1-1", "f", "v"),
        ("XADD", "gone", "2-1", "f", "v"),
        ("XGROUP", "CREATE", "gone", "g", "1-1"),
        ("XDEL", "gone", "1-1", "2-1"),
    )
    for key in ("new", "gone"):
        raw("XINFO", "STREAM", key)
        raw("XINFO", "STREAM", key, "FULL")
        raw("XINFO", "GROUPS", key)
        raw("XINFO", "CONSUMERS", key, "g")
    raw("XADD", "gone", "3-0", "f", "v")
    raw("XINFO", "GROUPS", "gone")


def test_xinfo_errors(raw):
    setup(raw, ("XADD", "s", "1-1", "f", "v"), ("SET", "str", "x"))
    for cmd in [
        ("XINFO", "STREAM", "nokey"),
        ("XINFO", "STREAM", "nokey", "FULL", "COUNT", "x"),
        ("XINFO", "GROUPS", "nokey"),
        ("XINFO", "CONSUMERS", "nokey", "g"),
        ("XINFO", "STREAM", "str"),
        ("XINFO", "GROUPS", "str"),
        ("XINFO", "CONSUMERS", "str", "g"),
        ("XINFO", "CONSUMERS", "s", "nogroup"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "x"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT"),
        ("XINFO", "STREAM", "s", "FULL", "LIMIT", "1"),
        ("XINFO", "STREAM", "s", "FULL", "COUNT", "1", "extra"),
        ("XINFO", "STREAM", "s", "PARTIAL"),
        ("XINFO", "STREAM"),
        ("XINFO", "GROUPS", "s", "extra"),
        ("XINFO", "CONSUMERS", "s"),
        ("XINFO", "FOO", "s"),
        ("XINFO",),
        ("XINFO", "HELP"),
        ("xinfo", "help"),
        ("XINFO", "HELP", "extra"),
        ("xinfo", "stream", "s", "full", "count", "1"),
    ]:
        raw(*cmd)


def test_xinfo_random_histories(raw):
    """Random XADD / XDEL / XTRIM / XSETID / XGROUP histories over small nodes: every XINFO
    reply agrees after each step (radix-tree-nodes, first ids, read counters, lags)."""
    rng = random.Random(32)
    for _ in range(6):
        raw("DEL", "r")
        raw("CONFIG", "SET", "stream-node-max-entries", str(rng.choice([1, 2, 5, 100])))
        ms, ids = rng.choice([0, 1 << 20, 1 << 40]), []
        for _ in range(60):
            op = rng.random()
            if op < 0.5 or not ids:
                ms += rng.choice([0, 1, 1, 255, 256, 65536, 1 << 33])
                raw("XADD", "r", f"{ms}-*", "f", str(ms))
            elif op < 0.7:
                raw("XDEL", "r", *rng.sample(ids, min(len(ids), rng.randint(1, 3))))
            elif op < 0.75:
                raw("XTRIM", "r", "MAXLEN", rng.choice(["=", "~"]), str(rng.randint(0, len(ids))))
            elif op < 0.8:
                raw("XTRIM", "r", "MINID", rng.choice(ids))
            elif op < 0.9:
                at = rng.choice([*ids, "0", "$", f"{ms + 1}-0"])
                raw("XGROUP", "CREATE", "r", f"g{rng.randint(0, 4)}", at)
            else:
                at = rng.choice([*ids, "0", "$"])
                extra = rng.choice([[], ["ENTRIESREAD", str(rng.randint(-1, 80))]])
                raw("XGROUP", "SETID", "r", f"g{rng.randint(0, 4)}", at, *extra)
            ids = [e[0].decode() for e in parse(raw("XRANGE", "r", "-", "+"))[0]]
            raw("XINFO", "STREAM", "r")
            raw("XINFO", "GROUPS", "r")
        raw("XINFO", "STREAM", "r", "FULL", "COUNT", "0")


def pending_stream(r):
    """A stream with pending entries and consumers that read, made by Redis's XREADGROUP
    (Goblin's is built elsewhere), as a DUMP payload."""
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "4")
    for i in range(1, 21):
        r.execute_command("XADD", "src", f"{i}-0", "f", i)
    r.execute_command("XGROUP", "CREATE", "src", "g", "0")
    r.execute_command("XGROUP", "CREATE", "src", "h", "0")
    r.execute_command("XGROUP", "CREATECONSUMER", "src", "g", "idler")
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", "12", "STREAMS", "src", ">")
    r.execute_command("XREADGROUP", "GROUP", "g", "bob", "COUNT", "3", "STREAMS", "src", ">")
    r.execute_command("XREADGROUP", "GROUP", "h", "carol", "STREAMS", "src", ">")
    r.execute_command("XDEL", "src", "2-0", "19-0")
    r.execute_command("XACK", "src", "h", "1-0", "3-0")
    r.execute_command("CONFIG", "SET", "stream-node-max-entries", "100")
    return r.dump("src")


def test_xinfo_full_with_pending_entries(raw, both72):  # noqa: F811
    payload = pending_stream(both72.redis)
    for c in both72.clients():
        c.restore("s", 0, payload)
    raw("XINFO", "STREAM", "s")
    for opts in ([], ["COUNT", "0"], ["COUNT", "2"], ["COUNT", "11"]):
        raw("XINFO", "STREAM", "s", "FULL", *opts)
    raw("XINFO", "GROUPS", "s")


def test_xinfo_consumers_times(both72):  # noqa: F811
    """idle and inactive count from the command's time: restored consumers (the same stored
    times on both servers) and consumers each server creates agree within a second."""
    payload = pending_stream(both72.redis)
    for c in both72.clients():
        c.restore("s", 0, payload)
    both72("XGROUP", "CREATECONSUMER", "s", "g", "zed")
    r, g = both72.run("XINFO", "CONSUMERS", "s", "g")
    assert [c[:4] for c in r] == [c[:4] for c in g]
    for rc, gc in zip(r, g):
        rd, gd = dict(zip(rc[::2], rc[1::2])), dict(zip(gc[::2], gc[1::2]))
        assert abs(rd[b"idle"] - gd[b"idle"]) < 1000, (rd, gd)
        if rd[b"inactive"] == -1:
            assert gd[b"inactive"] == -1
        else:
            assert abs(rd[b"inactive"] - gd[b"inactive"]) < 1000, (rd, gd)
    r, g = both72.run("XINFO", "STREAM", "s", "FULL")
    rg, gg = dict(zip(r[::2], r[1::2]))[b"groups"], dict(zip(g[::2], g[1::2]))[b"groups"]
    for rgroup, ggroup in zip(rg, gg):
        rcs = dict(zip(rgroup[::2], rgroup[1::2]))[b"consumers"]
        gcs = dict(zip(ggroup[::2], ggroup[1::2]))[b"consumers"]
        assert len(rcs) == len(gcs)
        for rc, gc in zip(rcs, gcs):
            rd, gd = dict(zip(rc[::2], rc[1::2])), dict(zip(gc[::2], gc[1::2]))
            assert abs(rd.pop(b"seen-time") - gd.pop(b"seen-time")) < 1000
            assert rd == gd


def test_xinfo_command_metadata(both):
    """COMMAND INFO and GETKEYS (Redis 7.0's metadata, the session pair); Redis lists the
    subcommands in its hash order, which changes from run to run."""
    r, g = both.run("COMMAND", "INFO", "XINFO")
    assert r[0][:9] == g[0][:9]
    assert sorted(r[0][9]) == sorted(g[0][9])
    for sub in ("STREAM", "GROUPS", "CONSUMERS", "HELP"):
        both("COMMAND", "INFO", f"XINFO|{sub}")
    both("COMMAND", "GETKEYS", "XINFO", "STREAM", "s", "FULL")
    both("COMMAND", "GETKEYS", "XINFO", "CONSUMERS", "s", "g")


def test_debug_object_and_memory_usage(both72):  # noqa: F811
    """DEBUG OBJECT's encoding and serializedlength (what DUMP writes: RDB type 21, consumer
    times included) and OBJECT ENCODING are Redis 7.2.4's. MEMORY USAGE is Goblin's own
    bytes for the stream (nodes, their index, groups, PELs, consumers), as for its other
    types, not Redis's estimate (which counts 244 bytes per rax node and overstates a
    stream with groups several times): it must agree within a quarter with the growth of
    Goblin's used_memory per copy of the stream."""
    both72.redis.restore("pel", 0, pending_stream(both72.redis))
    both72.goblin.restore("pel", 0, both72.redis.dump("pel"))
    for i in range(1, 1001):
        both72("XADD", "big", f"{i}-0", "user", f"u{12345678 + i}", "amount", i % 65536)
    both72("XDEL", "big", "1-0", "500-0")
    both72("XGROUP", "CREATE", "big", "g", "0")
    both72("XGROUP", "CREATECONSUMER", "big", "g", "c")
    both72("XADD", "one", "1-1", "f", "v")
    both72("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")
    for key in ("pel", "big", "one", "empty"):
        (r, g) = both72.run("DEBUG", "OBJECT", key)
        fields = [dict(f.split(":", 1) for f in x.decode().split()[2:]) for x in (r, g)]
        assert [(f["encoding"], f["serializedlength"]) for f in fields] == [
            (fields[0]["encoding"], fields[0]["serializedlength"])] * 2, key
        both72("OBJECT", "ENCODING", key)
    both72("MEMORY", "USAGE", "nokey")
    g = both72.goblin
    for key in ("pel", "big"):
        payload = g.dump(key)
        copies = 300
        before = info_of(g, "memory")["used_memory"]
        for i in range(copies):
            g.restore(f"{key}:{i}", 0, payload)
        grown = (info_of(g, "memory")["used_memory"] - before) / copies
        usage = g.memory_usage(f"{key}:0")
        assert 0.75 * grown <= usage <= 1.25 * grown, (key, usage, grown)
