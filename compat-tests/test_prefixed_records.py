"""Small sorted sets kept inside their keys' records with their members' shared prefix
stored once (Goblin's record form when it is smaller): replies, encodings, conversions at
Redis's thresholds, DEBUG OBJECT's serializedlength, DEBUG RELOAD and RESTORE of Redis's
DUMP, compared with Redis, for members that share a prefix (short, long, up to and past
255 bytes, a whole member) and that do not (the empty member, binary, one member)."""

import random
import re

rng = random.Random(35)
SERIALIZED = re.compile(rb" serializedlength:(\d+) ")


def serialized(both, key):
    """DEBUG OBJECT's serializedlength of `key`, the same on both servers."""
    r, g = (SERIALIZED.search(reply).group(1) for reply in both.run("DEBUG", "OBJECT", key))
    assert r == g, f"{key}: redis {r} goblin {g}"
    return r


def hexes(n, prefix="m:", width=12):
    return [f"{prefix}{rng.getrandbits(4 * width):0{width}x}" for _ in range(n)]


# Member lists of small sorted sets: each a case of the prefixed form.
MEMBER_SETS = [
    hexes(10),
    hexes(7, "e:", 15),
    [f"m{rng.randrange(10000)}" for _ in range(10)],
    ["user:" + str(i) for i in (1, 22, 333, 4444)],
    ["user:1", "user:12", "user:123"],  # one member is the whole prefix
    ["ab", "ac"],  # one shared byte: no saving, plain form
    ["", "a", "ab"],  # the empty member: no prefix
    ["p" * 250 + "0f", "p" * 250 + "1"],  # a prefix of 250 bytes (past the record: slab)
    ["q" * 40 + "0f", "q" * 40 + "1", "q" * 41],
    ["\x00\xff", "\x00\xfe\x80", "\x00\xfe"],
    ["solo:deadbeef"],
]


def scores(n):
    return [rng.choice([rng.randrange(1 << 32), rng.randrange(-300, 300), rng.uniform(-1e9, 1e9), 0])
            for _ in range(n)]


def test_sorted_sets_read_and_write_back(both):
    both.config_set("zset-max-listpack-value", 256)  # the 252-byte members stay listpack
    for i, members in enumerate(MEMBER_SETS):
        key = f"z:{i}"
        args = [x for s, m in zip(scores(len(members)), members) for x in (s, m)]
        both.ok("ZADD", key, *args)
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        for m in members:
            both("ZSCORE", key, m)
            both("ZRANK", key, m)
        both("ZSCORE", key, "m:000000000000")
        both("ZMSCORE", key, members[0], "absent", members[-1])
        assert both("OBJECT", "ENCODING", key) == b"listpack"
        # Writes that shorten the prefix, remove, rescore.
        both("ZADD", key, 5, members[0][:1] + "x")
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        both("ZADD", key, 6, "x")
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        both("ZREM", key, "x", members[0])
        both("ZINCRBY", key, 2.5, members[-1])
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        both("ZRANGEBYLEX", key, "-", "+")
        both("ZCARD", key)
        both("ZPOPMIN", key)
        both("ZRANGE", key, 0, -1, "WITHSCORES")


def test_sorted_set_conversions_at_redis_thresholds(both):
    both.ok("ZADD", "zlong", 1, "m:" + "a" * 62, 2, "m:" + "a" * 61)
    assert both("OBJECT", "ENCODING", "zlong") == b"listpack"
    both.ok("ZADD", "zlong", 3, "m:" + "a" * 63)  # 65 bytes: past zset-max-listpack-value
    assert both("OBJECT", "ENCODING", "zlong") == b"skiplist"
    members = hexes(128)
    both.ok("ZADD", "zmany", *[x for i, m in enumerate(members) for x in (i, m)])
    assert both("OBJECT", "ENCODING", "zmany") == b"listpack"
    both.ok("ZADD", "zmany", 999, "m:zzz")
    assert both("OBJECT", "ENCODING", "zmany") == b"skiplist"
    both("ZRANGE", "zmany", 0, -1, "WITHSCORES")


def test_serialized_lengths_reload_and_restore(both):
    both.config_set("zset-max-listpack-value", 256)
    for i, members in enumerate(MEMBER_SETS):
        # Integer scores: Redis 7.0 writes other scores' text as %.17g, 7.2 as Goblin does.
        both.ok("ZADD", f"z:{i}", *[x for m in members for x in (rng.randrange(-9, 1 << 33), m)])
    for i in range(len(MEMBER_SETS)):
        assert serialized(both, f"z:{i}")
    both.ok("DEBUG", "RELOAD")
    for i in range(len(MEMBER_SETS)):
        key = f"z:{i}"
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        dump = both.redis.execute_command("DUMP", key)
        both.ok("RESTORE", f"copy:{key}", 0, dump)
        assert both.goblin.execute_command("DUMP", f"copy:{key}") == both.goblin.execute_command("DUMP", key)
        both("ZRANGE", f"copy:{key}", 0, -1, "WITHSCORES")
        both("ZSCORE", f"copy:{key}", MEMBER_SETS[i][0])
        assert serialized(both, key)
