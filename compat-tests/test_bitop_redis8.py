"""BITOP's DIFF, DIFF1, ANDOR and ONE (Redis 8.2), pinned on Goblin alone (no Redis 8.2 at
hand) from redis.io's BITOP page and Redis's bitops.c: DIFF = X & !(Y1 | Y2 ...), DIFF1 =
!X & (Y1 | ...), ANDOR = X & (Y1 | ...), ONE = the bits set in exactly one key; the first
three need two source keys ("BITOP <OP> must be called with at least two source keys.").
AND, OR, XOR and NOT stay compared with Redis in test_string_bits.py."""

from __future__ import annotations

import random
from functools import reduce

import pytest

from harness import make_client
from hfe_scripts import Err
from pinned import run_pinned
from test_hash_field_expire import lone_goblin  # noqa: F401 (the fixture)


def model(op: str, inputs: list[bytes]) -> bytes:
    """The result Redis documents, byte by byte, short inputs padded with zeros."""
    n = max(map(len, inputs), default=0)
    cols = [[x[i] if i < len(x) else 0 for x in inputs] for i in range(n)]

    def one(col):
        return reduce(lambda acc, bit: acc | bit, (1 << b for b in range(8) if sum(v >> b & 1 for v in col) == 1), 0)

    def union(col):
        return reduce(lambda a, b: a | b, col[1:], 0)

    f = {
        "DIFF": lambda col: col[0] & ~union(col) & 0xFF,
        "DIFF1": lambda col: ~col[0] & union(col) & 0xFF,
        "ANDOR": lambda col: col[0] & union(col),
        "ONE": one,
    }[op]
    return bytes(f(col) for col in cols)


SCRIPT = [
    (("SET", "a", b"\xff\x0f"), b"OK"),
    (("SET", "b", b"\xf0"), b"OK"),
    (("SET", "c", b"\x0f\x0f\x01"), b"OK"),
    (("BITOP", "DIFF", "d", "a", "b", "c"), 3),
    (("GET", "d"), b"\x00\x00\x00"),
    (("BITOP", "DIFF", "d", "a", "b"), 2),
    (("GET", "d"), b"\x0f\x0f"),
    (("BITOP", "diff1", "d", "a", "b", "c"), 3),
    (("GET", "d"), b"\x00\x00\x01"),
    (("BITOP", "AndOr", "d", "a", "b", "c"), 3),
    (("GET", "d"), b"\xff\x0f\x00"),
    (("BITOP", "ONE", "d", "a", "b", "c"), 3),
    (("GET", "d"), b"\x00\x00\x01"),
    (("BITOP", "ONE", "d", "a", "b"), 2),
    (("GET", "d"), b"\x0f\x0f"),
    (("BITOP", "ONE", "d", "c"), 3),
    (("GET", "d"), b"\x0f\x0f\x01"),
    (("BITOP", "ANDOR", "d", "nope", "a"), 2),
    (("GET", "d"), b"\x00\x00"),
    (("BITOP", "ONE", "d", "nope", "nope2"), 0),
    (("EXISTS", "d"), 0),
    (("BITOP", "DIFF", "d", "a"), Err("BITOP DIFF must be called with at least two source keys.")),
    (("BITOP", "diff1", "d", "a"), Err("BITOP DIFF1 must be called with at least two source keys.")),
    (("BITOP", "andor", "d", "a"), Err("BITOP ANDOR must be called with at least two source keys.")),
    (("BITOP", "ONES", "d", "a", "b"), Err("syntax error")),
    (("RPUSH", "l", "x"), 1),
    (("BITOP", "ONE", "d", "a", "l"), Err("WRONGTYPE Operation against a key holding the wrong kind of value")),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_script_pinned_on_goblin(lone_goblin, protocol):
    run_pinned(lone_goblin, SCRIPT, protocol)


@pytest.mark.parametrize("op", ["DIFF", "DIFF1", "ANDOR", "ONE"])
def test_random_inputs_against_the_model(lone_goblin, op):
    rng = random.Random(op)
    c = make_client(lone_goblin)
    c.flushall()
    for _ in range(50):
        inputs = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
                  for _ in range(rng.randrange(2, 6))]
        keys = [f"k{i}" for i in range(len(inputs))]
        for k, v in zip(keys, inputs):
            c.delete(k)
            if v:
                c.set(k, v)
        want = model(op, inputs)
        assert c.execute_command("BITOP", op, "dest", *keys) == len(want)
        assert (c.get("dest") or b"") == want, (op, inputs)
    c.close()
