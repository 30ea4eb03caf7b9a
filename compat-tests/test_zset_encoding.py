"""Encodings and big sets: OBJECT ENCODING (listpack / skiplist) after the same history as
Redis, zset-max-listpack-entries / -value (and the old ziplist names) through CONFIG SET,
sets past 128 members and one of 100K members loaded with a pipeline; Goblin's own
GOBLIN.MEMORY and GOBLIN.OPTIMIZE; and what Redis 7.2 added (ZRANK / ZREVRANK WITHSCORE, the
shortest round-trip doubles), checked on Goblin alone against 7.2's documented replies, with
the exact reply bytes pinned over raw sockets."""

import random

import pytest

import resp
from zset_helpers import Z, fmt72, z, zenc  # noqa: F401  (fixtures)


# --------------------------------------------------------------------------------------------
# Encodings and conversions
# --------------------------------------------------------------------------------------------


def test_conversion_by_entries(z):
    z.load("k", [(i, f"m{i}") for i in range(128)])
    assert z.enc("k") == "listpack"
    z("ZADD", "k", 128, "m128")
    assert z.enc("k") == "skiplist"
    z("ZREMRANGEBYRANK", "k", 0, -3)  # shrinking does not convert back
    assert z.enc("k") == "skiplist"
    z.state("k")
    z("ZADD", "new", *[x for i in range(200) for x in (i, f"n{i}")])  # created large at once
    z.enc("new")
    z("ZADD", "exact", *[x for i in range(128) for x in (i, f"n{i}")])
    z.enc("exact")


def test_zadd_converts_by_argument_count_72(both):
    """Redis 7.2 (redis/redis#12185) sizes a ZADD by its number of pairs: more pairs than
    zset-max-listpack-entries make a skiplist up front, even when some are duplicates or
    updates, for a new key (zsetTypeCreate) and for an existing listpack (zsetTypeMaybeConvert).
    Redis 7.0 counts members as they are added, so this is checked on Goblin alone."""
    g = Z(both).goblin_only
    g("ZADD", "dups", *[x for i in range(200) for x in (i, f"n{i % 100}")])  # 100 distinct
    assert g("OBJECT", "ENCODING", "dups") == b"skiplist"
    g("ZADD", "few", 1, "a")
    assert g("ZADD", "few", *[x for _ in range(129) for x in (1, "a")]) == 0  # 129 updates
    assert g("OBJECT", "ENCODING", "few") == b"skiplist"
    g("ZADD", "edge", 1, "a")
    g("ZADD", "edge", *[x for _ in range(128) for x in (1, "a")])  # 128 pairs: not more
    assert g("OBJECT", "ENCODING", "edge") == b"listpack"


def test_conversion_by_value_length(z):
    z("ZADD", "k", 1, "x" * 64)
    assert z.enc("k") == "listpack"
    z("ZADD", "k", 2, "y" * 65)
    assert z.enc("k") == "skiplist"
    z("ZINCRBY", "j", 1, "z" * 65)
    z.enc("j")
    z("ZADD", "i", "INCR", 1, "w" * 100)
    z.enc("i")
    z("ZADD", "h", "NX", 1, "short", 2, "v" * 70)
    z.enc("h")
    z("ZADD", "g", "XX", 1, "v" * 70)
    z.gone("g")
    z.state("k", "j", "i", "h")


def test_config_thresholds(z):
    z.config_set("zset-max-listpack-entries", 4)
    z("ZADD", "k", 1, "a", 2, "b", 3, "c", 4, "d")
    assert z.enc("k") == "listpack"
    z("ZADD", "k", 5, "e")
    assert z.enc("k") == "skiplist"
    z.config_set("zset-max-listpack-entries", 128)
    z("ZADD", "k2", 1, "a")
    assert z.enc("k2") == "listpack"
    assert z.enc("k") == "skiplist"  # existing sets keep their encoding
    z.config_set("zset-max-listpack-value", 3)
    z("ZADD", "k2", 2, "abc")
    assert z.enc("k2") == "listpack"
    z("ZADD", "k2", 3, "abcd")
    assert z.enc("k2") == "skiplist"
    # The old names are aliases.
    z.config_set("zset-max-ziplist-entries", 2)
    z("CONFIG", "GET", "zset-max-listpack-entries")
    z("ZADD", "k3", 1, "a", 2, "b")
    assert z.enc("k3") == "listpack"
    z("ZADD", "k3", 3, "c")
    assert z.enc("k3") == "skiplist"
    z.config_set("zset-max-ziplist-value", 10)
    z("CONFIG", "GET", "zset-max-listpack-value")
    # Zero entries: every new set is a skiplist.
    z.config_set("zset-max-listpack-entries", 0)
    z("ZADD", "k4", 1, "a")
    assert z.enc("k4") == "skiplist"
    z.errs([
    ])
    z.state("k", "k2", "k3", "k4")


def test_store_results_and_copies_take_redis_encoding(z):
    z.config_set("zset-max-listpack-entries", 8)
    z.load("big", [(i, f"m{i}") for i in range(20)])
    z.load("small", [(i, f"m{i}") for i in range(5)])
    for cmd in [("ZUNIONSTORE", "d", 1, "small"), ("ZUNIONSTORE", "d", 2, "small", "big"),
                ("ZINTERSTORE", "d", 2, "small", "big"), ("ZDIFFSTORE", "d", 2, "big", "small"),
                ("ZRANGESTORE", "d", "big", 0, 7), ("ZRANGESTORE", "d", "big", 0, 8),
                ("ZRANGESTORE", "d", "big", 0, 3), ("COPY", "big", "d", "REPLACE"),
                ("COPY", "small", "d", "REPLACE"), ("RENAME", "d", "d2")]:
        z(*cmd)
        z.state("d", "d2")
    # Raising the limit after the fact, then storing a big set's range: listpack again.
    z.config_set("zset-max-listpack-entries", 128)
    z("ZUNIONSTORE", "d", 1, "big")
    z.state("d")
    z("ZRANGESTORE", "big", "big", 0, -1)
    z.state("big")


def test_object_encoding_edge_cases(z):
    z("OBJECT", "ENCODING", "nokey")
    z.err("OBJECT", "ENCODING")
    z("ZADD", "k", 1, "a")
    z("OBJECT", "ENCODING", "k")
    z("TYPE", "k")


# --------------------------------------------------------------------------------------------
# Large sets
# --------------------------------------------------------------------------------------------


def big_score(i, rng):
    kind = i % 7
    if kind == 0:
        return i
    if kind == 1:
        return -i / 4
    if kind == 2:
        return rng.choice([0, 1, 2, 3])  # many ties
    if kind == 3:
        return round(rng.uniform(-1e6, 1e6), 3)
    if kind == 4:
        return rng.choice(["inf", "-inf", "1e-300", "-1e-300", 2 ** 53 + 2, 1e300])
    return i * 1000003 % 99991


def test_100k_members(z):
    rng = random.Random(100_000)
    pairs = [(big_score(i, rng), f"member:{i:06d}:{'x' * (i % 13)}") for i in range(100_000)]
    z.load("big", pairs)
    z("ZCARD", "big")
    assert z.enc("big") == "skiplist"
    sample = rng.sample([m for _, m in pairs], 200) + ["missing"]
    cmds = []
    for m in sample:
        cmds += [("ZSCORE", "big", m), ("ZRANK", "big", m), ("ZREVRANK", "big", m)]
    cmds.append(("ZMSCORE", "big", *sample))
    for start, stop in [(0, 99), (-100, -1), (50_000, 50_099), (99_990, 100_010), (-100_500, -99_950)]:
        cmds += [("ZRANGE", "big", start, stop, "WITHSCORES"), ("ZREVRANGE", "big", start, stop)]
    for lo, hi in [("-inf", "+inf"), ("(0", "(3"), ("-1000", "1000"), ("(1e-300", "inf"), ("-inf", "(-inf")]:
        cmds += [("ZCOUNT", "big", lo, hi),
                 ("ZRANGEBYSCORE", "big", lo, hi, "WITHSCORES", "LIMIT", 2000, 50),
                 ("ZREVRANGEBYSCORE", "big", hi, lo, "LIMIT", 40_000, 20),
                 ("ZRANGE", "big", lo, hi, "BYSCORE", "LIMIT", 70_000, 10)]
    cmds += [("ZRANGE", "big", 0, -1, "WITHSCORES")]
    z.pipe(cmds)
    # Full ZSCAN returns each member once, with its score.
    expected = {m.encode() for _, m in pairs}
    for c in (z.redis, z.goblin):
        seen, cursor, rounds = {}, b"0", 0
        while True:
            cursor, items = c.execute_command("ZSCAN", "big", cursor, "COUNT", 1000)
            if isinstance(items[0], list):  # RESP3 nests nothing here, but be tolerant
                items = [x for pair in items for x in pair]
            for i in range(0, len(items), 2):
                seen[items[i]] = items[i + 1]
            rounds += 1
            if cursor in (b"0", 0, "0"):
                break
        assert set(seen) == expected, f"ZSCAN on {c}: {len(seen)} of {len(expected)}"
        assert rounds > 10
    # Writes in the middle of a big set.
    z.pipe([
        ("ZREMRANGEBYRANK", "big", 10_000, 19_999), ("ZREMRANGEBYSCORE", "big", "(0", "(2"),
        ("ZPOPMIN", "big", 5), ("ZPOPMAX", "big", 5), ("ZADD", "big", "GT", "CH", 5, "member:000001:x"),
        ("ZINCRBY", "big", 1.5, "member:050000:xxxxxxxxxxx"), ("ZREM", "big", *sample[:50]),
        ("ZCARD", "big"), ("ZRANGE", "big", 30_000, 30_050, "WITHSCORES"),
    ])
    z("ZADD", "small", 1, sample[60], 2, sample[61], 3, "nothere")
    z.pipe([("ZINTERCARD", 2, "big", "small"), ("ZINTER", 2, "small", "big", "WITHSCORES"),
            ("ZUNIONSTORE", "u", 2, "small", "big", "WEIGHTS", 2, 1), ("ZCARD", "u"),
            ("ZRANGE", "u", 1000, 1010, "WITHSCORES"), ("ZDIFFSTORE", "d", 2, "small", "big"),
            ("ZRANGE", "d", 0, -1, "WITHSCORES")])
    z("DEL", "big", "u")
    z.gone("big")


# --------------------------------------------------------------------------------------------
# Goblin's own commands
# --------------------------------------------------------------------------------------------


def as_map(reply):
    if isinstance(reply, dict):
        return {k.decode() if isinstance(k, bytes) else k: v for k, v in reply.items()}
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def test_goblin_memory(z):
    g = z.goblin_only
    assert g("GOBLIN.MEMORY", "nokey") is None
    summary = as_map(g("GOBLIN.MEMORY"))
    assert summary["sets"] == 0 and summary["members"] == 0 and summary["bytes"] == 0
    z("ZADD", "a", 1, "x", 2, "y")
    z.load("b", [(i, f"m{i}") for i in range(1000)])
    ma, mb = g("GOBLIN.MEMORY", "a"), g("GOBLIN.MEMORY", "b")
    assert isinstance(ma, int) and isinstance(mb, int) and 0 < ma < mb
    summary = as_map(g("GOBLIN.MEMORY"))
    assert set(summary) == {"sets", "members", "bytes", "bytes_per_member"}
    assert summary["sets"] == 2 and summary["members"] == 1002 and summary["bytes"] == ma + mb
    bpm = summary["bytes_per_member"]
    if z.resp3:
        assert isinstance(bpm, float)
    else:
        bpm = float(bpm)
    assert abs(bpm - (ma + mb) / 1002) < 1e-9
    # Tracked, not estimated: removing members gives memory back.
    z("ZREMRANGEBYRANK", "b", 0, 899)
    assert g("GOBLIN.MEMORY", "b") < mb
    assert isinstance(g("GOBLIN.MEMORY", "a", "b"), Exception)


def test_goblin_optimize(z):
    g = z.goblin_only
    z.load("k", [(i % 97, f"member-{i}") for i in range(20_000)])
    before = g("GOBLIN.MEMORY", "k")
    after = g("GOBLIN.OPTIMIZE", "k")
    assert isinstance(after, int) and after == g("GOBLIN.MEMORY", "k")
    loose = g("GOBLIN.OPTIMIZE", "k", "0.5")
    tight = g("GOBLIN.OPTIMIZE", "k", "1")
    assert tight <= after <= loose, (tight, after, loose)
    assert after <= before
    # The set is unchanged and still fully usable, including lookups of missing members at
    # density 1.0 (the full-table-scan case).
    z.state("k")
    z.pipe([("ZSCORE", "k", "member-7"), ("ZSCORE", "k", "absent"), ("ZRANK", "k", "absent"),
            ("ZMSCORE", "k", "absent", "member-19999"), ("ZREM", "k", "absent")])
    z("ZADD", "k", 5, "fresh", 6, "member-3")
    z("ZREM", "k", "member-4")
    z.state("k")
    assert g("GOBLIN.OPTIMIZE", "k", "1.0") > 0
    small = g("GOBLIN.OPTIMIZE", "k", ".97")
    assert small > 0
    z("ZADD", "s", 1, "a")
    assert g("GOBLIN.OPTIMIZE", "s") == g("GOBLIN.MEMORY", "s")
    z.enc("s")
    for bad in ("0", "-1", "1.5", "abc", "nan", "inf", "", "1.0000001"):
        got = g("GOBLIN.OPTIMIZE", "k", bad)
        assert isinstance(got, Exception) and "density must be a number greater than 0 and at most 1" in str(got), (bad, got)
    got = g("GOBLIN.OPTIMIZE", "nokey")
    assert isinstance(got, Exception) and "no such key" in str(got)
    assert isinstance(g("GOBLIN.OPTIMIZE"), Exception)
    assert isinstance(g("GOBLIN.OPTIMIZE", "k", "0.5", "x"), Exception)
    z.state("k", "s")


def test_goblin_commands_are_documented(both):
    """The issue asks for GOBLIN.MEMORY and GOBLIN.OPTIMIZE in COMMAND DOCS, with a summary."""
    z = Z(both)
    for name in ("goblin.memory", "goblin.optimize"):
        docs = z.goblin_only("COMMAND", "DOCS", name)
        assert docs and docs[0].decode().lower() == name, docs
        fields = docs[1]
        fields = {fields[i].decode(): fields[i + 1] for i in range(0, len(fields), 2)}
        assert fields.get("summary"), f"COMMAND DOCS {name} has no summary: {fields}"
        assert z.goblin_only("COMMAND", "INFO", name)[0]


# --------------------------------------------------------------------------------------------
# Redis 7.2 additions, on Goblin alone
# --------------------------------------------------------------------------------------------


def test_zrank_withscore_72(zenc):
    z = zenc
    g = z.goblin_only
    z("ZADD", "k", 1, "a", 3.3, "b", "inf", "c", "-0", "d")
    assert g("ZRANK", "k", "a", "WITHSCORE")[0] == 1
    for member, rank, score in [("d", 0, "-0" if z.encoding == "skiplist" else "0"), ("a", 1, "1"),
                                ("b", 2, "3.3"), ("c", 3, "inf")]:
        got = g("ZRANK", "k", member, "WITHSCORE")
        rev = g("ZREVRANK", "k", member, "withscore")
        if z.resp3:
            assert got == [rank, float(score)] and isinstance(got[1], float), got
            assert str(got[1]) in {"1.0", "3.3", "inf", "0.0", "-0.0"}
            assert rev == [3 - rank, float(score)], rev
        else:
            assert got == [rank, score.encode()], got
            assert rev == [3 - rank, score.encode()], rev
        # Without WITHSCORE the reply is the 7.0 one.
        z("ZRANK", "k", member)
    assert g("ZRANK", "k", "nope", "WITHSCORE") is None
    assert g("ZREVRANK", "k", "nope", "WITHSCORE") is None
    assert g("ZRANK", "nokey", "a", "WITHSCORE") is None
    got = g("ZRANK", "k", "a", "WITHSCORES")
    assert isinstance(got, Exception) and str(got) == "syntax error", got
    got = g("ZRANK", "k", "a", "WITHSCORE", "x")
    assert isinstance(got, Exception) and str(got) == "wrong number of arguments for 'zrank' command", got
    got = g("ZREVRANK", "k", "a", "WITHSCORE", "WITHSCORE")
    assert isinstance(got, Exception) and "wrong number of arguments" in str(got), got


def goblin_raw(raw, data, n=1):
    return raw.goblin.request(data, n)


def E(*args):
    return resp.encode(*args)


def test_zrank_withscore_72_bytes(raw):
    """Missing member with WITHSCORE: a null array (RESP2 *-1), as 7.2's reply_nil does."""
    goblin_raw(raw, E("ZADD", "k", 3.3, "m", 1, "a"))
    assert goblin_raw(raw, E("ZRANK", "k", "m", "WITHSCORE")) == b"*2\r\n:1\r\n$3\r\n3.3\r\n"
    assert goblin_raw(raw, E("ZREVRANK", "k", "m", "WITHSCORE")) == b"*2\r\n:0\r\n$3\r\n3.3\r\n"
    assert goblin_raw(raw, E("ZRANK", "k", "x", "WITHSCORE")) == b"*-1\r\n"
    assert goblin_raw(raw, E("ZRANK", "nokey", "x", "WITHSCORE")) == b"*-1\r\n"
    assert goblin_raw(raw, E("ZRANK", "k", "x")) == b"$-1\r\n"
    goblin_raw(raw, E("HELLO", "3"))
    assert goblin_raw(raw, E("ZRANK", "k", "m", "WITHSCORE")) == b"*2\r\n:1\r\n,3.3\r\n"
    assert goblin_raw(raw, E("ZRANK", "k", "x", "WITHSCORE")) == b"_\r\n"


DOUBLES = ["3.3", "2.1", "0.1", "1e-300", "1e-7", "0.00001", "-2.5e-5", "1e16", "1e17", "1e21",
           "1.5e300", "5e-324", "123456789012345678", "1152921504606846976", "-1e22", "inf",
           "-inf", "1234567.125", "0.30000000000000004", "9007199254740993", "1e15", "123.456",
           "4611686018427387904", "-4611686018427387904", "4611686018427387905000"]


@pytest.mark.parametrize("score", DOUBLES)
def test_double_bytes_72(raw, score):
    """Goblin's exact bytes for doubles are Redis 7.2's (d2string), in RESP2 and RESP3."""
    text = fmt72(float(score)).encode()
    goblin_raw(raw, E("ZADD", "k", score, "m"))
    assert goblin_raw(raw, E("ZSCORE", "k", "m")) == b"$%d\r\n%s\r\n" % (len(text), text)
    assert goblin_raw(raw, E("ZRANGE", "k", 0, -1, "WITHSCORES")) == (
        b"*2\r\n$1\r\nm\r\n$%d\r\n%s\r\n" % (len(text), text))
    goblin_raw(raw, E("HELLO", "3"))
    assert goblin_raw(raw, E("ZSCORE", "k", "m")) == b",%s\r\n" % text
    assert goblin_raw(raw, E("ZRANGE", "k", 0, -1, "WITHSCORES")) == b"*1\r\n*2\r\n$1\r\nm\r\n,%s\r\n" % text


def test_double_bytes_pinned(raw):
    """A few literal 7.2 replies, independent of fmt72."""
    cases = [
        (E("ZADD", "k", 3.3, "m"), None),
        (E("ZSCORE", "k", "m"), b"$3\r\n3.3\r\n"),
        (E("ZINCRBY", "k", "0.1", "n"), b"$3\r\n0.1\r\n"),
        (E("ZINCRBY", "k", "0.2", "n"), b"$19\r\n0.30000000000000004\r\n"),
        (E("ZADD", "k", "INCR", "1e-300", "p"), b"$6\r\n1e-300\r\n"),
        (E("ZMSCORE", "k", "m", "nope"), b"*2\r\n$3\r\n3.3\r\n$-1\r\n"),
        (E("ZADD", "k", "inf", "q"), b":1\r\n"),
        (E("ZPOPMAX", "k"), b"*2\r\n$1\r\nq\r\n$3\r\ninf\r\n"),
        (E("HELLO", "3"), None),
        (E("ZSCORE", "k", "m"), b",3.3\r\n"),
        (E("ZMSCORE", "k", "m", "nope"), b"*2\r\n,3.3\r\n_\r\n"),
        (E("ZINCRBY", "k", "-inf", "r"), b",-inf\r\n"),
        (E("ZPOPMIN", "k"), b"*2\r\n$1\r\nr\r\n,-inf\r\n"),
        (E("ZPOPMIN", "k", 1), b"*1\r\n*2\r\n$1\r\np\r\n,1e-300\r\n"),
    ]
    for data, want in cases:
        got = goblin_raw(raw, data)
        if want is not None:
            assert got == want, f"{data!r}: got {got!r}, want {want!r}"


def test_negative_zero_bytes(raw):
    """-0 in a skiplist prints "-0" (7.0 and 7.2 alike); a listpack keeps integer 0."""
    for data in [E("ZADD", "lp", "-0", "m"), E("ZSCORE", "lp", "m"), E("CONFIG", "SET", "zset-max-listpack-entries", 0),
                 E("ZADD", "sl", "-0", "m"), E("ZSCORE", "sl", "m"), E("ZRANGE", "sl", 0, -1, "WITHSCORES"),
                 E("HELLO", "3"), E("ZSCORE", "sl", "m"), E("ZSCORE", "lp", "m"),
                 E("ZRANGE", "sl", 0, -1, "WITHSCORES"),
                 E("CONFIG", "SET", "zset-max-listpack-entries", 128)]:
        r, g = raw(data)
        if not data.startswith(b"*2\r\n$5\r\nHELLO"):
            assert r == g, f"{data!r}\n  redis:  {r!r}\n  goblin: {g!r}"
    assert raw(E("ZSCORE", "sl", "m")) == (b",-0\r\n", b",-0\r\n")


def test_reply_shapes_resp3(raw):
    """RESP3 reply shapes of every double-bearing command match Redis (doubles by value)."""
    raw(E("HELLO", "3"))
    raw.same(E("ZADD", "k", 1, "a", 2.5, "b", 3, "c", 4, "d"))
    raw.same(E("ZADD", "j", 1, "a", 7, "x"))
    for cmd in [("ZSCORE", "k", "a"), ("ZMSCORE", "k", "a", "x"), ("ZINCRBY", "k", 1, "a"),
                ("ZADD", "k", "INCR", 1, "a"), ("ZADD", "k", "NX", "INCR", 1, "a"),
                ("ZRANGE", "k", 0, -1, "WITHSCORES"), ("ZRANGE", "k", 0, -1),
                ("ZRANGEBYSCORE", "k", "-inf", "+inf", "WITHSCORES"), ("ZREVRANGE", "k", 0, 1, "WITHSCORES"),
                ("ZUNION", 2, "k", "j", "WITHSCORES"), ("ZINTER", 2, "k", "j", "WITHSCORES"),
                ("ZDIFF", 2, "k", "j", "WITHSCORES"),
                ("ZPOPMIN", "k"), ("ZPOPMAX", "k", 1), ("ZPOPMIN", "k", 0), ("ZPOPMIN", "nokey"),
                ("ZMPOP", 1, "k", "MIN"), ("ZMPOP", 1, "nokey", "MIN"), ("BZPOPMIN", "k", 0),
                ("BZMPOP", 0, 1, "j", "MAX", "COUNT", 1), ("ZSCAN", "j", 0), ("ZRANDMEMBER", "nokey"),
                ("ZRANDMEMBER", "nokey", 2), ("ZSCORE", "nokey", "a"), ("ZMSCORE", "nokey", "a"),
                ("ZRANK", "j", "x"), ("ZRANK", "j", "nope"), ("ZRANGE", "nokey", 0, -1)]:
        raw.same(E(*cmd))


def test_reply_shapes_resp2(raw):
    raw.same(E("ZADD", "k", 1, "a", 2.5, "b", 3, "c", 4, "d"))
    raw.same(E("ZADD", "j", 1, "a", 7, "x"))
    for cmd in [("ZSCORE", "k", "a"), ("ZMSCORE", "k", "a", "x"), ("ZINCRBY", "k", 1, "a"),
                ("ZADD", "k", "INCR", 1, "a"), ("ZADD", "k", "NX", "INCR", 1, "a"),
                ("ZRANGE", "k", 0, -1, "WITHSCORES"), ("ZPOPMIN", "k"), ("ZPOPMAX", "k", 1),
                ("ZPOPMIN", "k", 0), ("ZPOPMIN", "nokey"), ("ZMPOP", 1, "k", "MIN"),
                ("ZMPOP", 1, "nokey", "MIN"), ("BZPOPMIN", "k", 0), ("BZPOPMIN", "nokey", "0.01"),
                ("BZMPOP", "0.01", 1, "nokey", "MAX"), ("ZSCAN", "j", 0), ("ZRANDMEMBER", "nokey"),
                ("ZRANDMEMBER", "nokey", 2), ("ZSCORE", "nokey", "a"), ("ZMSCORE", "nokey", "a"),
                ("ZRANK", "j", "nope"), ("ZRANGESTORE", "d", "j", 0, -1), ("ZINTERCARD", 1, "j"),
                ("ZADD", "k", "XX", "INCR", 1, "zz"), ("ZUNIONSTORE", "u", 1, "j")]:
        raw.same(E(*cmd))
