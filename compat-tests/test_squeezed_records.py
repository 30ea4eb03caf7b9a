"""Small sorted sets, lists and listpack sets kept inside their keys' records in squeezed
form (Goblin stores the members' shared prefix once and hex digits two a byte): replies,
encodings, conversions at Redis's thresholds, DEBUG OBJECT's serializedlength, DEBUG RELOAD
and RESTORE of Redis's DUMP, compared with Redis, for members that squeeze (a prefix and
hex or decimal rests, odd digit counts, prefixes past 127 bytes) and that do not (upper-case
hex, binary, the empty member, integers in a list)."""

import random
import re

from set_helpers import S

rng = random.Random(35)
SERIALIZED = re.compile(rb" serializedlength:(\d+) ")


def serialized(both, key):
    """DEBUG OBJECT's serializedlength of `key`, the same on both servers (a small list is a
    quicklist in Redis 7.0, but its serialization is 7.2's listpack's)."""
    r, g = (SERIALIZED.search(reply).group(1) for reply in both.run("DEBUG", "OBJECT", key))
    assert r == g, f"{key}: redis {r} goblin {g}"
    return r


def hexes(n, prefix="m:", width=12):
    return [f"{prefix}{rng.getrandbits(4 * width):0{width}x}" for _ in range(n)]


# Member lists of small collections: each a case of the squeezed form.
MEMBER_SETS = [
    hexes(10),
    hexes(7, "e:", 15),  # odd digit counts
    [f"m{rng.randrange(10000)}" for _ in range(10)],
    ["user:" + str(i) for i in (1, 22, 333, 4444)],
    ["m:ABCDEF", "m:abcdef", "m:0"],  # upper case: no hex packing
    ["", "a", "ab"],  # the empty member: no prefix
    ["p" * 130 + "0f", "p" * 130 + "1", "p" * 131],  # a prefix longer than 127 bytes
    ["\x00\xff", "\x00\xfe\x80", "caf\xe9"],
    ["123", "-7", "0x1f", "007"],
    ["solo:deadbeef"],
]


def scores(n):
    return [rng.choice([rng.randrange(1 << 32), rng.randrange(-300, 300), rng.uniform(-1e9, 1e9), 0])
            for _ in range(n)]


def test_sorted_sets_read_and_write_back(both):
    both.config_set("zset-max-listpack-value", 256)  # the 131-byte members stay listpack
    for i, members in enumerate(MEMBER_SETS):
        key = f"z:{i}"
        args = [x for s, m in zip(scores(len(members)), members) for x in (s, m)]
        both.ok("ZADD", key, *args)
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        for m in members:
            both("ZSCORE", key, m)
            both("ZRANK", key, m)
        both("ZSCORE", key, "m:000000000000")
        assert both("OBJECT", "ENCODING", key) == b"listpack"
        # Writes that change the prefix, remove, rescore.
        both("ZADD", key, 5, "x")
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        both("ZREM", key, "x", members[0])
        both("ZINCRBY", key, 2.5, members[-1])
        both("ZRANGE", key, 0, -1, "WITHSCORES")
        both("ZRANGEBYLEX", key, "-", "+")
        both("ZCARD", key)


def test_sorted_set_conversions_at_redis_thresholds(both):
    both.ok("ZADD", "zlong", 1, "m:" + "a" * 62)
    assert both("OBJECT", "ENCODING", "zlong") == b"listpack"
    both.ok("ZADD", "zlong", 2, "m:" + "a" * 63)  # 65 bytes: past zset-max-listpack-value
    assert both("OBJECT", "ENCODING", "zlong") == b"skiplist"
    members = hexes(128)
    both.ok("ZADD", "zmany", *[x for i, m in enumerate(members) for x in (i, m)])
    assert both("OBJECT", "ENCODING", "zmany") == b"listpack"
    both.ok("ZADD", "zmany", 999, "m:zzz")
    assert both("OBJECT", "ENCODING", "zmany") == b"skiplist"
    both("ZRANGE", "zmany", 0, -1, "WITHSCORES")


def test_lists_read_and_write_back(both):
    for i, members in enumerate(MEMBER_SETS):
        key = f"l:{i}"
        both.ok("RPUSH", key, *members)
        both("LRANGE", key, 0, -1)
        both("LINDEX", key, -1)
        assert both.goblin.execute_command("OBJECT", "ENCODING", key) == b"listpack"  # 7.0: quicklist
        both("LPUSH", key, "e:0", 12345)
        both("LSET", key, 1, "e:ff")
        both("LINSERT", key, "BEFORE", members[0], "zz")
        both("LRANGE", key, 0, -1)
        both("LPOP", key)
        both("RPOP", key, 2)
        both("LRANGE", key, 0, -1)
        both("LPOS", key, members[len(members) // 2])


def test_listpack_sets_read_and_write_back(both):
    s = S(both)
    for i, members in enumerate(MEMBER_SETS):
        key = f"s:{i}"
        s("SADD", key, *members)
        s("SMEMBERS", key)
        for m in members:
            s("SISMEMBER", key, m)
        s("SMISMEMBER", key, "nope", members[0])
        s("SADD", key, "other")
        s("SREM", key, members[0])
        s("SMEMBERS", key)
        s("SCARD", key)
    s.enc72("s:0", "listpack")
    s.enc72("s:8", "listpack")  # "0x1f" and "007" are no integers


def test_serialized_lengths_reload_and_restore(both):
    both.config_set("zset-max-listpack-value", 256)
    for i, members in enumerate(MEMBER_SETS):
        # Integer scores: Redis 7.0 writes other scores' text as %.17g, 7.2 as Goblin does.
        both.ok("ZADD", f"z:{i}", *[x for j, m in enumerate(members) for x in (rng.randrange(-9, 1 << 33), m)])
        both.ok("RPUSH", f"l:{i}", *members)
    for i in range(len(MEMBER_SETS)):
        for key in (f"z:{i}", f"l:{i}"):
            assert serialized(both, key)
    both.ok("DEBUG", "RELOAD")
    for i in range(len(MEMBER_SETS)):
        both("ZRANGE", f"z:{i}", 0, -1, "WITHSCORES")
        both("LRANGE", f"l:{i}", 0, -1)
        for key in (f"z:{i}", f"l:{i}"):
            dump = both.redis.execute_command("DUMP", key)
            both.goblin.execute_command("RESTORE", f"copy:{key}", 0, dump)
            assert both.goblin.execute_command("DUMP", f"copy:{key}") == both.goblin.execute_command("DUMP", key)
            assert serialized(both, key)
