"""DEBUG OBJECT against Redis: the same fields in the same order, the same encoding, the
error for a missing key, and the serializedlength where Goblin's RDB writer writes a value as
Redis does (uncompressed strings, integers, intsets, hashtable sets). Goblin's LZF finds other
matches than Redis's, so a compressed string's length is not compared. Sorted sets are written as
ZSET_2 by Goblin and as a listpack by Redis for small ones, so their length is not compared;
a shared small integer's refcount (Redis's 2147483647) neither: Goblin shares no values."""

import re

LINE = re.compile(
    r"Value at:0x[0-9a-f]+ refcount:(\d+) encoding:(\S+) serializedlength:(\d+) "
    r"lru:(\d+) lru_seconds_idle:(\d+)$"
)


def parsed(both, key):
    r, g = both.run("DEBUG", "OBJECT", key)
    out = []
    for reply in (r, g):
        text = reply.decode() if isinstance(reply, bytes) else reply
        m = LINE.match(text)
        assert m, f"{key}: {reply!r}"
        out.append(m.groups())
    return out


def test_fields_and_lengths(both):
    both("SET", "short", "hello")
    both("SET", "long", "x" * 100)
    both("SET", "text", "".join(chr(97 + i % 26) for i in range(300)))
    both("SET", "int", "123456789")
    both("SET", "big", "12345678901234567890")
    both("SADD", "ints", 1, 2, 3, 70000)
    both("SADD", "strs", *[f"member:{i}" for i in range(200)])
    both("ZADD", "z", 1, "a", 2, "b")
    for key in ("short", "int", "big", "ints", "strs"):
        (rref, renc, rlen, _, ridle), (gref, genc, glen, _, gidle) = parsed(both, key)
        assert (renc, rlen) == (genc, glen), key
        assert gref == "1" and rref == "1", key
        assert ridle == gidle == "0", key
    for key in ("z", "long", "text"):
        (_, renc, _, _, _), (_, genc, _, _, _) = parsed(both, key)
        assert renc == genc, key
    both.err("DEBUG", "OBJECT", "nokey")
    both.err("DEBUG", "OBJECT", "a", "b")
