"""Small hashes that share a field list (Goblin keeps the field names once, in a dictionary
of shapes, and each key's values alone, integers in binary): replies in insertion order,
values with integer-looking text kept byte for byte, writes that change or keep the field
list, DEBUG RELOAD and DUMP/RESTORE, compared with Redis."""

import pytest

from hash_helpers import H

# Texts near the integer widths and the non-canonical ones that must stay text.
VALUES = ["0", "-0", "00", "07", "-1", "127", "-128", "128", "32767", "-32769", "8388607",
          "-8388609", "2147483647", "-2147483648", "2147483648", "99999999999", "+5", " 1",
          "1.5", "", "x" * 64, "grace17@example.com"]


@pytest.fixture
def h(both):
    return H(both)


def profiles(h, n):
    for i in range(n):
        h.exact("HSET", f"user:{i}", "name", "Grace", "email", f"grace{i}@example.com",
                "age", 18 + i % 70, "city", "Oslo", "score", VALUES[i % len(VALUES)])


def test_shared_field_lists_read_back_in_order(h):
    profiles(h, 200)
    for i in range(200):
        h.exact("HGETALL", f"user:{i}")
        h.exact("HGET", f"user:{i}", "score")
        h.exact("HSTRLEN", f"user:{i}", "score")
        h.enc_both(f"user:{i}", "listpack")
    h.exact("HMGET", "user:5", "age", "nope", "name")
    h("HRANDFIELD", "user:3", 5)  # every field, in any order


def test_writes_that_change_or_keep_the_field_list(h):
    profiles(h, 60)
    h.exact("HSET", "user:1", "score", "2147483648")  # past 4 bytes: a string again
    h.exact("HINCRBY", "user:2", "age", 1_000_000)
    h.exact("HINCRBY", "user:3", "age", -200)
    h.exact("HINCRBYFLOAT", "user:4", "age", "0.5")
    h.exact("HSET", "user:5", "phone", "555")  # a sixth field: another list
    h.exact("HDEL", "user:6", "email")
    h.exact("HDEL", "user:7", "name", "email", "age", "city")
    h.exact("HSET", "user:8", "email", "y" * 65)  # a hashtable
    h.exact("HSETNX", "user:9", "name", "Ada")
    for i in range(12):
        if i != 8:
            h.exact("HGETALL", f"user:{i}")
        h.exact("HLEN", f"user:{i}")
    h.enc_both("user:8", "hashtable")
    h.getall("user:8")
    h.exact("DEL", "user:10")
    h.exact("EXISTS", "user:10")


def test_reload_and_restore(h):
    profiles(h, 100)
    h.both.ok("DEBUG", "RELOAD")
    for i in range(100):
        h.exact("HGETALL", f"user:{i}")
    for i in range(0, 100, 7):
        dump = h.goblin("DUMP", f"user:{i}")
        h.goblin("RESTORE", f"copy:{i}", 0, dump)
        assert h.goblin("HGETALL", f"copy:{i}") == h.goblin("HGETALL", f"user:{i}")
        h.redis("RESTORE", f"copy:{i}", 0, h.redis("DUMP", f"user:{i}"))
        h.exact("HGETALL", f"copy:{i}")


def test_values_rewritten_under_the_same_field_list(h):
    """A write to a shaped hash that keeps its field list re-encodes it under its shape;
    one that keeps the count but renames a field must not."""
    profiles(h, 40)
    h.exact("HSET", "user:1", "name", "Grace")  # the same value
    h.exact("HSET", "user:2", "name", "Grack")  # same length
    h.exact("HSET", "user:3", "name", "G", "city", "Llanfairpwllgwyngyll")
    h.exact("HSET", "user:4", "score", "12", "age", "x")  # text <-> integer
    h.exact("HDEL", "user:5", "city")
    h.exact("HSET", "user:5", "town", "Oslo")  # five fields, another list
    h.exact("HDEL", "user:6", "age")
    h.exact("HSET", "user:6", "age", "9")  # the same names, in another order
    for _ in range(3):  # consecutive writes to one key
        h.exact("HINCRBY", "user:7", "age", 100)
    for i in range(9):
        h.exact("HGETALL", f"user:{i}")
        h.exact("HGET", f"user:{i}", "name")
        h.enc_both(f"user:{i}", "listpack")
