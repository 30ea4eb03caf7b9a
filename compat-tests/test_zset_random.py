"""ZRANDMEMBER and ZSCAN, whose exact replies may legitimately differ (checked by properties:
counts, distinctness, membership, reply shapes, full iteration), and a seeded randomized
differential test: a few thousand random Z* commands on a few keys, with small listpack
limits so that conversions happen all the time, every reply compared."""

import fnmatch
import random

import pytest

from zset_helpers import Z, zsame, z, zenc  # noqa: F401  (fixtures)


def members_of(z, key):
    flat = z.redis.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
    if flat and isinstance(flat[0], list):
        return {m: float(s) for m, s in flat}
    return {flat[i]: float(flat[i + 1]) for i in range(0, len(flat), 2)}


def pairs(reply, resp3):
    """(member, score) pairs from a WITHSCORES reply (flat in RESP2, nested in RESP3)."""
    if resp3:
        assert all(isinstance(p, list) and len(p) == 2 and isinstance(p[1], float) for p in reply), reply
        return [(m, s) for m, s in reply]
    assert len(reply) % 2 == 0, reply
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]


@pytest.mark.parametrize("size", [5, 100, 1000])
def test_zrandmember(zenc, size):
    z = zenc
    z.load("k", [(i * 0.5, f"m{i}") for i in range(size)])
    z.enc("k")
    content = members_of(z, "k")
    for c in (z.redis, z.goblin):
        one = c.execute_command("ZRANDMEMBER", "k")
        assert one in content
        for count in (1, 3, size - 1, size, size + 1, size * 3, 0):
            got = c.execute_command("ZRANDMEMBER", "k", count)
            assert len(got) == min(count, size), (count, got)
            assert len(set(got)) == len(got), "positive count: distinct members"
            assert set(got) <= set(content)
            ws = pairs(c.execute_command("ZRANDMEMBER", "k", count, "WITHSCORES"), z.resp3)
            assert len(ws) == min(count, size) and len({m for m, _ in ws}) == len(ws)
            assert all(content[m] == s for m, s in ws)
        for count in (-1, -5, -size, -size * 3):
            got = c.execute_command("ZRANDMEMBER", "k", count)
            assert len(got) == -count and set(got) <= set(content)
            ws = pairs(c.execute_command("ZRANDMEMBER", "k", count, "withscores"), z.resp3)
            assert len(ws) == -count and all(content[m] == s for m, s in ws)
        # A full-size positive count returns every member.
        assert set(c.execute_command("ZRANDMEMBER", "k", size)) == set(content)
    # Negative counts do repeat members sometimes on a small set.
    many = z.redis.execute_command("ZRANDMEMBER", "k", -200)
    many_g = z.goblin.execute_command("ZRANDMEMBER", "k", -200)
    if size <= 100:
        assert len(set(many)) < 200 and len(set(many_g)) < 200
    # Replies that do not depend on chance are compared exactly.
    z("ZRANDMEMBER", "nokey")
    z("ZRANDMEMBER", "nokey", 5)
    z("ZRANDMEMBER", "nokey", -5, "WITHSCORES")
    z("ZRANDMEMBER", "k", 0)
    z("ZRANDMEMBER", "k", 0, "WITHSCORES")
    z.errs([
        ("ZRANDMEMBER", "k", "x"),
        ("ZRANDMEMBER", "k", "1.5"),
        ("ZRANDMEMBER", "k", 1, "WITHSCORE"),
        ("ZRANDMEMBER", "k", 1, "WITHSCORES", "x"),
        ("ZRANDMEMBER", "k", "WITHSCORES"),
        ("ZRANDMEMBER", "k", "-9223372036854775807", "WITHSCORES"),
        ("ZRANDMEMBER", "k", "9223372036854775808"),
        ("ZRANDMEMBER", "nokey", "x"),
    ])
    # Distribution: over many single draws every member of a small set shows up.
    if size == 5:
        for c in (z.redis, z.goblin):
            seen = {c.execute_command("ZRANDMEMBER", "k") for _ in range(200)}
            assert seen == set(content)


def scan_all(c, key, *args):
    found, cursor, calls = [], 0, 0
    while True:
        cursor, items = c.execute_command("ZSCAN", key, cursor, *args)
        found += [(items[i], items[i + 1]) for i in range(0, len(items), 2)]
        calls += 1
        if int(cursor) == 0:
            return found, calls
        assert calls < 100_000


@pytest.mark.parametrize("size", [10, 128, 129, 3000])
def test_zscan(z, size):
    z.load("k", [(i if i % 3 else -i / 8, f"{'ab'[i % 2]}:{i}") for i in range(size)])
    enc = z.enc("k")
    content = members_of(z, "k")
    for args in [(), ("COUNT", 1), ("COUNT", 7), ("COUNT", 10_000), ("MATCH", "a:*"),
                 ("MATCH", "*1*", "COUNT", 50), ("MATCH", "b:1?"), ("MATCH", "nothing*")]:
        pattern = args[args.index("MATCH") + 1] if "MATCH" in args else "*"
        want = {m for m in content if fnmatch.fnmatchcase(m.decode(), pattern)}
        for c in (z.redis, z.goblin):
            found, calls = scan_all(c, "k", *args)
            names = [m for m, _ in found]
            assert set(names) == want, (c, args)
            assert all(content[m] == float(s) for m, s in found), "ZSCAN scores"
            if enc == "listpack":
                assert calls == 1 and len(names) == len(set(names))
        if enc == "listpack":
            z("ZSCAN", "k", 0, *args)  # one call returns everything: compared exactly
    z("ZSCAN", "nokey", 0)
    z("ZSCAN", "nokey", 0, "MATCH", "x*", "COUNT", 5)
    z.err("ZSCAN", "k", "x", match="invalid cursor")
    z.errs([
        (("ZSCAN", "k", 0, "COUNT", 0), "syntax error"),
        ("ZSCAN", "k", 0, "COUNT", -1),
        ("ZSCAN", "k", 0, "COUNT", "x"),
        ("ZSCAN", "k", 0, "COUNT"),
        ("ZSCAN", "k", 0, "MATCH"),
        ("ZSCAN", "k", 0, "BOGUS", 1),
        ("ZSCAN", "k", 0, "TYPE", "zset"),
        ("ZSCAN", "k", 0, "NOVALUES"),
    ])


@pytest.mark.parametrize("size", [10, 300])
def test_zscan_negative_cursor(both, size):
    """Redis 7.0 reads the cursor with strtoul, so "-1" is 2^64-1 (test_scan.py pins the
    same for SCAN): a listpack ignores the cursor and replies everything; a hash table scans
    from that bucket (which bucket holds what differs between implementations)."""
    z = Z(both)
    z.load("k", [(i, f"m{i}") for i in range(size)])
    if z.enc("k") == "listpack":
        z("ZSCAN", "k", "-1")
        z("ZSCAN", "k", "-1", "COUNT", 1)
    else:
        for c in (z.redis, z.goblin):
            try:
                cursor, _ = c.execute_command("ZSCAN", "k", "-1")
            except Exception as e:  # noqa: BLE001
                raise AssertionError(f"ZSCAN k -1 on {c}: {e}")
            int(cursor)
    z.err("ZSCAN", "k", "-1x")


def test_zscan_sees_members_present_throughout(z):
    """Members present for the whole iteration are returned, even with writes in between."""
    z.load("k", [(i, f"m{i}") for i in range(2000)])
    for c in (z.redis, z.goblin):
        cursor, seen, step = 0, set(), 0
        while True:
            cursor, items = c.execute_command("ZSCAN", "k", cursor, "COUNT", 50)
            seen |= {items[i] for i in range(0, len(items), 2)}
            step += 1
            c.execute_command("ZADD", "k", 0, f"new{step}")
            c.execute_command("ZREM", "k", f"m{1000 + step}")
            if int(cursor) == 0:
                break
        stable = {f"m{i}".encode() for i in range(2000) if not 1000 < i <= 1000 + step}
        assert stable <= seen


# --------------------------------------------------------------------------------------------
# Randomized differential test
# --------------------------------------------------------------------------------------------

KEYS = ["k1", "k2", "k3"]
LEXKEY = "lx"


class Gen:
    def __init__(self, seed, pool=30):
        self.r = random.Random(seed)
        self.pool = pool

    def score(self):
        """Scores: integers, halves, infinities, awkward doubles. No -0: its sign across
        conversions is checked in test_zset_basic."""
        r = self.r
        return r.choice([
            lambda: r.randint(-5, 5), lambda: r.randint(-5, 5) / 2, lambda: r.choice(["inf", "-inf", "+inf"]),
            lambda: r.choice(["1e-300", "0", "0.1", "3.3", "2.1", "1e17", "123456789"]),
            lambda: round(r.uniform(-10, 10), 2),
        ])()

    def bound(self):
        s = self.score()
        return f"({s}" if self.r.random() < 0.3 else str(s)

    def member(self):
        r = self.r
        if r.random() < 0.03:
            return "long-" + "x" * r.randint(6, 20)  # past the small value limit
        return f"m{r.randint(0, self.pool)}"

    def lexmember(self):
        return self.r.choice("abcdefgh") + self.r.choice(["", "a", "b", "zz"])

    def lexbound(self):
        r = self.r
        x = r.random()
        if x < 0.1:
            return "-"
        if x < 0.2:
            return "+"
        return r.choice("[(") + self.lexmember()

    def index(self):
        return self.r.randint(-40, 40)

    def key(self):
        return self.r.choice(KEYS)

    def keys(self):
        """Inputs of a set operation: at most two distinct sets (and maybe a missing key), so
        that the result does not depend on the order in which scores are added up, which
        test_zset_setops checks on its own."""
        ks = self.r.sample(KEYS, self.r.randint(1, 2))
        if self.r.random() < 0.3:
            ks.insert(self.r.randint(0, len(ks)), "nokey")
        if len(ks) == 1 and self.r.random() < 0.2:
            ks.append(ks[0])  # the same set twice
        return ks

    def limit(self):
        return ["LIMIT", self.r.randint(-1, 6), self.r.randint(-1, 8)] if self.r.random() < 0.4 else []

    def command(self):
        r = self.r
        k = self.key()
        c = r.randint(0, 33)
        if c <= 5:
            flags = r.choice([[], [], ["NX"], ["XX"], ["GT"], ["LT"], ["CH"], ["GT", "CH"], ["XX", "LT"]])
            if r.random() < 0.15:
                return ["ZADD", k, *flags, "INCR", self.score(), self.member()]
            # Distinct members: a ZADD repeating a member past the listpack limit on a new key
            # is where 7.0 and 7.2 differ (see test_zadd_converts_by_argument_count_72).
            members = list(dict.fromkeys(self.member() for _ in range(r.randint(1, 6))))
            args = [x for m in members for x in (self.score(), m)]
            return ["ZADD", k, *flags, *args]
        if c == 6:
            return ["ZINCRBY", k, self.score(), self.member()]
        if c == 7:
            return ["ZREM", k, *[self.member() for _ in range(r.randint(1, 4))]]
        if c == 8:
            return r.choice([["ZCARD", k], ["ZSCORE", k, self.member()],
                             ["ZMSCORE", k, *[self.member() for _ in range(3)]]])
        if c == 9:
            return [r.choice(["ZRANK", "ZREVRANK"]), k, self.member()]
        if c == 10:
            return ["ZCOUNT", k, self.bound(), self.bound()]
        if c == 11:
            return ["ZRANGE", k, self.index(), self.index(), *(["REV"] if r.random() < 0.5 else []),
                    *(["WITHSCORES"] if r.random() < 0.5 else [])]
        if c == 12:
            return ["ZRANGE", k, self.bound(), self.bound(), "BYSCORE", *(["REV"] if r.random() < 0.5 else []),
                    *self.limit(), *(["WITHSCORES"] if r.random() < 0.5 else [])]
        if c == 13:
            return [r.choice(["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]), k, self.bound(), self.bound(),
                    *(["WITHSCORES"] if r.random() < 0.5 else []), *self.limit()]
        if c == 14:
            return ["ZREVRANGE", k, self.index(), self.index(), *(["WITHSCORES"] if r.random() < 0.5 else [])]
        if c == 15:
            return ["ZREMRANGEBYRANK", k, self.index(), self.index()]
        if c == 16:
            return ["ZREMRANGEBYSCORE", k, self.bound(), self.bound()]
        if c == 17:
            return [r.choice(["ZPOPMIN", "ZPOPMAX"]), k, *([r.randint(0, 4)] if r.random() < 0.6 else [])]
        if c == 18:
            ks = self.keys()
            return ["ZMPOP", len(ks), *ks, r.choice(["MIN", "MAX"]), *(["COUNT", r.randint(1, 5)] if r.random() < 0.5 else [])]
        if c in (19, 20):
            ks = self.keys()
            op = r.choice(["ZUNION", "ZINTER", "ZUNIONSTORE", "ZINTERSTORE"])
            extra = []
            if r.random() < 0.5:
                extra += ["WEIGHTS", *[r.choice([1, 2, -1, 0.5, 3]) for _ in ks]]
            if r.random() < 0.5:
                extra += ["AGGREGATE", r.choice(["SUM", "MIN", "MAX"])]
            if op.endswith("STORE"):
                return [op, self.key(), len(ks), *ks, *extra]
            return [op, len(ks), *ks, *extra, *(["WITHSCORES"] if r.random() < 0.5 else [])]
        if c == 21:
            ks = self.keys()
            if r.random() < 0.5:
                return ["ZDIFFSTORE", self.key(), len(ks), *ks]
            return ["ZDIFF", len(ks), *ks, *(["WITHSCORES"] if r.random() < 0.5 else [])]
        if c == 22:
            ks = self.keys()
            return ["ZINTERCARD", len(ks), *ks, *(["LIMIT", r.randint(0, 5)] if r.random() < 0.5 else [])]
        if c == 23:
            src = self.key()
            if r.random() < 0.5:
                return ["ZRANGESTORE", self.key(), src, self.index(), self.index()]
            return ["ZRANGESTORE", self.key(), src, self.bound(), self.bound(), "BYSCORE", *self.limit()]
        if c == 24:
            return ["OBJECT", "ENCODING", k]
        if c == 25:
            return ["ZRANGE", k, 0, -1, "WITHSCORES"]
        # Lex commands on a set whose scores are all 0 (lex order is defined there).
        if c in (26, 27):
            return ["ZADD", LEXKEY, *[x for _ in range(r.randint(1, 4)) for x in (0, self.lexmember())]]
        if c == 28:
            return ["ZRANGE", LEXKEY, self.lexbound(), self.lexbound(), "BYLEX",
                    *(["REV"] if r.random() < 0.5 else []), *self.limit()]
        if c == 29:
            return [r.choice(["ZRANGEBYLEX", "ZREVRANGEBYLEX"]), LEXKEY, self.lexbound(), self.lexbound(), *self.limit()]
        if c == 30:
            return ["ZLEXCOUNT", LEXKEY, self.lexbound(), self.lexbound()]
        if c == 31:
            return ["ZREMRANGEBYLEX", LEXKEY, self.lexbound(), self.lexbound()]
        if c == 32:
            return r.choice([["EXISTS", *KEYS, LEXKEY], ["ZRANGE", LEXKEY, 0, -1], ["OBJECT", "ENCODING", LEXKEY]])
        return r.choice([["RENAME", k, self.key()], ["COPY", k, self.key(), "REPLACE"], ["DEL", k],
                         ["ZRANGE", k, 0, -1, "WITHSCORES"]])


@pytest.mark.parametrize(
    "seed,protocol,entries,value,pool",
    [(1, 2, 16, 12, 30), (2, 3, 16, 12, 30), (3, 2, 16, 12, 30), (4, 3, 16, 12, 30),
     (5, 2, 128, 64, 300), (6, 3, 128, 64, 300), (7, 2, 0, 64, 40), (8, 3, 4, 4, 12)],
)
def test_random_commands(request, seed, protocol, entries, value, pool):
    """Random commands on a few keys, replies compared one by one. On a failure, the message
    names the seed and the command number; Gen(seed, pool).command() replays the stream."""
    from zset_helpers import z_for
    z = z_for(request, protocol)
    z.config_set("zset-max-listpack-entries", entries)
    z.config_set("zset-max-listpack-value", value)
    gen = Gen(seed, pool)
    history = []
    for _batch in range(60):
        cmds = [gen.command() for _ in range(50)]
        replies = []
        for c in (z.redis, z.goblin):
            p = c.pipeline(transaction=False)
            for cmd in cmds:
                p.execute_command(*cmd)
            replies.append(p.execute(raise_on_error=False))
        for cmd, r, g in zip(cmds, *replies):
            history.append(cmd)
            if not zsame(r, g):
                recent = "\n".join(f"    {h!r}" for h in history[-15:])
                pytest.fail(f"seed {seed}, command #{len(history)}: {cmd!r}\n  redis:  {r!r}\n"
                            f"  goblin: {g!r}\n  last commands:\n{recent}")
    for k in KEYS + [LEXKEY]:
        z.state(k)
