"""DEBUG OBJECT against Redis: the same fields in the same order, the same encoding, the
error for a missing key, and the serializedlength, which is the length of what DUMP writes for
the value (LZF-compressed strings included: Goblin's compressor is Redis's). The refcount
(Redis's 2147483647 for a shared small integer) is compared in
test_maxmemory.py::test_object_refcount_of_shared_integers."""

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
    both("ZADD", "zbig", *[x for i in range(200) for x in (i, f"member:{i}" * 3)])
    both("HSET", "hash", "f", "x" * 40, "n", 7)
    keys = ("short", "int", "big", "ints", "strs", "z", "zbig", "long", "text", "hash")
    for key in keys:
        (rref, renc, rlen, _, ridle), (gref, genc, glen, _, gidle) = parsed(both, key)
        assert (renc, rlen) == (genc, glen), key
        assert gref == "1" and rref == "1", key
        # The LRU clock counts whole seconds: a second boundary between the write and the
        # read (the set-up above takes a while on a loaded machine) reads 1.
        assert ridle in ("0", "1") and gidle in ("0", "1"), (key, ridle, gidle)
    both.err("DEBUG", "OBJECT", "nokey")
    both.err("DEBUG", "OBJECT", "a", "b")
