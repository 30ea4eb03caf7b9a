"""Bitmaps and LCS: SETBIT, GETBIT, BITCOUNT (BYTE|BIT), BITPOS, BITOP (AND OR XOR NOT), LCS (LEN
IDX MINMATCHLEN WITHMATCHLEN), with their errors, encodings and WRONGTYPE; RESP2 and RESP3."""

import random

import pytest


@pytest.fixture(params=[2, 3])
def s(request):
    return request.getfixturevalue("both" if request.param == 2 else "both3")


def test_setbit_getbit(s):
    s("SETBIT", "b", 7, 1)
    s("SETBIT", "b", 7, 1)
    s("SETBIT", "b", 7, 0)
    s("SETBIT", "b", 100, 1)
    s("GET", "b")
    s("STRLEN", "b")
    s("OBJECT", "ENCODING", "b")
    for off in (0, 7, 100, 101, 1000, 2**32):
        s("GETBIT", "b", off)
    s("GETBIT", "nokey", 5)
    for bad in (-1, "x", 2**32 * 8 * 16, "1.5", "#1"):
        s("SETBIT", "b", bad, 1)
        s("GETBIT", "b", bad)
    for bad in (2, -1, "x", ""):
        s("SETBIT", "b", 1, bad)
    s("SET", "i", 12)
    s("GETBIT", "i", 2)
    s("SETBIT", "i", 2, 0)
    s("GET", "i")
    s("OBJECT", "ENCODING", "i")
    s("SET", "e", "abc")
    s("SETBIT", "e", 0, 0)
    s("OBJECT", "ENCODING", "e")
    s("ZADD", "z", 1, "m")
    s("SETBIT", "z", 1, 1)
    s("GETBIT", "z", 1)


def test_bitcount(s):
    s("SET", "k", "foobar")
    s("BITCOUNT", "k")
    for a, b in [(0, 0), (1, 1), (1, -1), (-2, -1), (-1, -2), (5, 100), (100, 200), (-100, -50),
                 (0, -100), (2, 1)]:
        s("BITCOUNT", "k", a, b)
        s("BITCOUNT", "k", a, b, "BYTE")
        s("BITCOUNT", "k", a, b, "bit")
    for a, b in [(5, 30), (1, 6), (7, 8), (0, 47), (-5, -1), (3, 3), (9, 9)]:
        s("BITCOUNT", "k", a, b, "BIT")
    s("BITCOUNT", "nokey")
    s("BITCOUNT", "nokey", 0, -1, "BIT")
    s("BITCOUNT", "k", 0)
    s("BITCOUNT", "k", 0, 1, "WORD")
    s("BITCOUNT", "k", 0, 1, "BIT", "x")
    s("BITCOUNT", "k", "x", 1)
    s("SET", "n", 1234567)
    s("BITCOUNT", "n")
    s("SET", "empty", "")
    s("BITCOUNT", "empty", 0, -1)
    s("ZADD", "z", 1, "m")
    s("BITCOUNT", "z")
    s("BITCOUNT", "z", 0, 1)


def test_bitpos(s):
    s("SET", "k", b"\xff\xf0\x00")
    for bit in (0, 1):
        s("BITPOS", "k", bit)
        for args in [(0,), (1,), (-1,), (2,), (5,), (0, 0), (0, -1), (1, 1), (2, 1), (-3, -2),
                     (0, 0, "BYTE"), (0, 7, "BIT"), (3, 12, "BIT"), (12, 15, "bit"), (16, 23, "BIT"),
                     (-8, -1, "BIT"), (7, 7, "BIT"), (0, 100, "BIT")]:
            s("BITPOS", "k", bit, *args)
    s("SET", "ones", b"\xff\xff")
    s("BITPOS", "ones", 0)
    s("BITPOS", "ones", 0, 0)
    s("BITPOS", "ones", 0, 0, -1)
    s("BITPOS", "ones", 0, 0, -1, "BIT")
    s("BITPOS", "nokey", 0)
    s("BITPOS", "nokey", 1)
    s("SET", "zeros", b"\x00\x00")
    s("BITPOS", "zeros", 1)
    s("BITPOS", "zeros", 0, 1)
    s("SET", "empty", "")
    s("BITPOS", "empty", 0)
    s("BITPOS", "empty", 1)
    s("BITPOS", "k", 2)
    s("BITPOS", "k", "x")
    s("BITPOS", "k", 1, "x")
    s("BITPOS", "k", 1, 0, "x")
    s("BITPOS", "k", 1, 0, 1, "WORD")
    s("BITPOS", "k", 1, 0, 1, "BIT", 5)
    s("SET", "n", 10)
    s("BITPOS", "n", 1)
    s("ZADD", "z", 1, "m")
    s("BITPOS", "z", 1)


def test_bitpos_and_bitcount_random(both):
    rng = random.Random(3)
    for _ in range(60):
        data = bytes(rng.choice([0, 0xff, rng.getrandbits(8)]) for _ in range(rng.randrange(1, 12)))
        both("SET", "r", data)
        unit = rng.choice(["BYTE", "BIT"])
        span = len(data) * (8 if unit == "BIT" else 1)
        a, b = rng.randrange(-span - 2, span + 2), rng.randrange(-span - 2, span + 2)
        both("BITCOUNT", "r", a, b, unit)
        both("BITPOS", "r", rng.randrange(2), a, b, unit)
        both("BITPOS", "r", rng.randrange(2), a)


def test_bitop(s):
    s("SET", "a", "foobar")
    s("SET", "b", "abcdef")
    s("SET", "c", "x")
    for op in ("AND", "OR", "XOR", "and"):
        s("BITOP", op, "dest", "a", "b", "c", "nokey")
        s("GET", "dest")
    s("BITOP", "NOT", "dest", "a")
    s("GET", "dest")
    s("OBJECT", "ENCODING", "dest")
    s("BITOP", "NOT", "dest", "a", "b")
    s("BITOP", "NOPE", "dest", "a")
    s("EXPIRE", "dest", 100)
    s("BITOP", "OR", "dest", "a")
    s("TTL", "dest")
    s("BITOP", "OR", "dest", "nokey", "nokey2")
    s("EXISTS", "dest")
    s("BITOP", "NOT", "dest", "nokey")
    s("SET", "n", 123)
    s("BITOP", "AND", "dest", "n", "a")
    s("GET", "dest")
    s("ZADD", "z", 1, "m")
    s("BITOP", "AND", "dest", "a", "z")
    s("BITOP", "AND", "z", "a")
    s("TYPE", "z")


def test_lcs(s):
    s("SET", "a", "ohmytext")
    s("SET", "b", "mynewtext")
    s("LCS", "a", "b")
    s("LCS", "a", "b", "LEN")
    s("LCS", "a", "b", "IDX")
    s("LCS", "a", "b", "IDX", "WITHMATCHLEN")
    s("LCS", "a", "b", "IDX", "MINMATCHLEN", 4)
    s("LCS", "a", "b", "IDX", "MINMATCHLEN", 4, "WITHMATCHLEN")
    s("LCS", "a", "b", "IDX", "MINMATCHLEN", -5)
    s("LCS", "a", "b", "LEN", "IDX")
    s("LCS", "a", "b", "MINMATCHLEN")
    s("LCS", "a", "b", "MINMATCHLEN", "x")
    s("LCS", "a", "b", "BOGUS")
    s("LCS", "a", "nokey")
    s("LCS", "a", "nokey", "IDX")
    s("LCS", "nokey", "nokey2", "LEN")
    s("SET", "n1", 123456)
    s("SET", "n2", 2345)
    s("LCS", "n1", "n2", "IDX", "WITHMATCHLEN")
    s("ZADD", "z", 1, "m")
    s("LCS", "a", "z")
    s("LCS", "z", "a", "LEN")
    rng = random.Random(9)
    for _ in range(20):
        x = "".join(rng.choice("abc") for _ in range(rng.randrange(0, 30)))
        y = "".join(rng.choice("abc") for _ in range(rng.randrange(0, 30)))
        s("SET", "x", x)
        s("SET", "y", y)
        s("LCS", "x", "y")
        s("LCS", "x", "y", "IDX", "WITHMATCHLEN")
        s("LCS", "x", "y", "IDX", "MINMATCHLEN", 2)


def test_bitfield(s):
    s("BITFIELD", "bf", "SET", "i8", 0, 100, "GET", "i8", 0, "GET", "u4", 0, "GET", "i4", 4)
    s("BITFIELD", "bf", "INCRBY", "i8", 0, 100)
    s("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i8", 0, 100, "INCRBY", "i8", 0, -1000)
    s("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "i8", 0, 1000, "GET", "i8", 0)
    s("BITFIELD", "bf", "OVERFLOW", "WRAP", "INCRBY", "u2", 100, 1, "INCRBY", "u2", 100, 5)
    s("BITFIELD", "bf", "SET", "u8", "#2", 255, "GET", "u8", "#2", "GET", "i16", "#1")
    s("BITFIELD", "bf", "SET", "i64", 0, -(2**63), "GET", "i64", 0, "INCRBY", "i64", 0, -1)
    s("BITFIELD", "bf", "OVERFLOW", "SAT", "INCRBY", "i64", 0, -1, "INCRBY", "i64", 0, 2**63 - 1)
    s("BITFIELD", "bf", "OVERFLOW", "SAT", "SET", "i8", 0, -(2**63), "SET", "u8", 0, -1, "SET", "u8", 0, 300)
    s("BITFIELD", "bf", "OVERFLOW", "FAIL", "SET", "u8", 0, 256, "SET", "i8", 0, 128, "SET", "i8", 0, -128)
    s("BITFIELD", "bf", "SET", "u63", 3, 2**63 - 1, "GET", "u63", 3, "INCRBY", "u63", 3, 1)
    s("GET", "bf")
    s("OBJECT", "ENCODING", "bf")
    s("BITFIELD", "bf")
    s("BITFIELD", "nokey", "GET", "u8", 0)
    s("EXISTS", "nokey")
    s("BITFIELD", "new", "OVERFLOW", "FAIL", "INCRBY", "u8", 16, 300)
    s("GET", "new")
    for bad in (
        ["GET", "u64", 0], ["GET", "i65", 0], ["GET", "i0", 0], ["GET", "U8", 0], ["GET", "x8", 0],
        ["GET", "i8", -1], ["GET", "i8", "#x"], ["GET", "i8"], ["SET", "i8", 0], ["SET", "i8", 0, "x"],
        ["INCRBY", "i8", 0, "1.5"], ["OVERFLOW", "NOPE"], ["OVERFLOW"], ["BOGUS", "i8", 0],
        ["GET", "i8", 2**40], ["GET", "i8", "#-1"],
    ):
        s("BITFIELD", "bf", *bad)
    s("BITFIELD_RO", "bf", "GET", "i8", 0, "GET", "u16", "#1")
    s("BITFIELD_RO", "bf", "SET", "i8", 0, 1)
    s("BITFIELD_RO", "bf", "INCRBY", "i8", 0, 1)
    s("BITFIELD_RO", "nokey", "GET", "i8", 0)
    s("BITFIELD_RO", "bf")
    s("SET", "n", 99)
    s("BITFIELD", "n", "GET", "u8", 0, "SET", "u8", 0, 65)
    s("GET", "n")
    s("ZADD", "z", 1, "m")
    s("BITFIELD", "z", "GET", "i8", 0)
    s("BITFIELD_RO", "z", "GET", "i8", 0)
    s("BITFIELD", "z", "SET", "i8", 0, 1)


def test_bitfield_random(both):
    rng = random.Random(21)
    for _ in range(300):
        signed = rng.random() < 0.5
        bits = rng.randrange(1, 65 if signed else 64)
        t = ("i" if signed else "u") + str(bits)
        off = rng.randrange(0, 80)
        op = rng.choice(["SET", "INCRBY", "GET"])
        ow = rng.choice(["WRAP", "SAT", "FAIL"])
        v = rng.choice([rng.randrange(-(2**63), 2**63), rng.randrange(-300, 300), 2**63 - 1, -(2**63)])
        args = ["OVERFLOW", ow, op, t, off] + ([] if op == "GET" else [v])
        both("BITFIELD", "r", *args)
    both("GET", "r")
