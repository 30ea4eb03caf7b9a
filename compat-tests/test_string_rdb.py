"""Strings in RDB snapshots, both ways with Debian's redis-server 7.0: Redis's integer and LZF
string encodings on read, LZF on write for values over 20 bytes (rdbcompression yes), plain
bytes with rdbcompression no; values, expiries and OBJECT ENCODING survive each trip."""

from __future__ import annotations

import random

from test_persistence import OK, goblin, procs, redis_server, single  # noqa: F401  (fixture)

LZF_VALUE = b"abc" * 300


def fill_strings(c) -> None:
    rng = random.Random(5)
    values = {
        "i8": "-100", "i16": "30000", "i32": "-2000000000", "i64": str(2**63 - 1), "neg64": str(-(2**63)),
        "zero": "0", "lead0": "007", "empty": "", "short": "hello", "embstr": "e" * 44, "raw": "r" * 45,
        "lzf": LZF_VALUE, "random": bytes(rng.getrandbits(8) for _ in range(200)),
        "binary": b"\x00\xff\r\n" * 10, "float": "3.25",
    }
    for k, v in values.items():
        c.set(k, v)
    c.set("volatile", "v" * 30, px=600_000)
    c.incr("counter")
    c.append("appended", "x" * 10)
    c.append("appended", "y")
    c.execute_command("SELECT", 3)
    c.set("db3", "lzf-too-" * 20, ex=3600)
    c.execute_command("SELECT", 0)


def strings(server) -> dict:
    out = {}
    for db in range(16):
        c = server.client(db)
        for key in c.scan_iter(count=1000):
            out[(db, key)] = (c.type(key), c.get(key), c.pttl(key) > 0, c.object("encoding", key))
    return out


def after_load(d: dict) -> dict:
    """What a load makes of `d`: a raw string of up to 44 bytes comes back embstr (the
    loader's tryObjectEncoding)."""
    out = {}
    for k, (t, v, ttl, enc) in d.items():
        out[k] = (t, v, ttl, b"embstr" if enc == b"raw" and len(v) <= 44 else enc)
    return out


def test_redis_strings_load_in_goblin_and_back(procs, tmp_path):
    r = redis_server(procs, tmp_path, "--save", "")
    fill_strings(single(r))
    expected = after_load(strings(r))
    assert single(r).execute_command("SAVE") in OK
    assert LZF_VALUE not in (tmp_path / "dump.rdb").read_bytes(), "Redis compressed it"
    r.stop()
    g = goblin(procs, tmp_path, "--save", "")
    assert strings(g) == expected
    assert single(g).execute_command("SAVE") in OK
    data = (tmp_path / "dump.rdb").read_bytes()
    assert LZF_VALUE not in data, "Goblin compressed it too"
    g.stop()
    r2 = redis_server(procs, tmp_path, "--save", "")
    assert strings(r2) == expected


def test_goblin_strings_without_compression(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "", "--rdbcompression", "no")
    fill_strings(single(g))
    expected = after_load(strings(g))
    assert single(g).execute_command("SAVE") in OK
    assert LZF_VALUE in (tmp_path / "dump.rdb").read_bytes()
    g.stop()
    r = redis_server(procs, tmp_path, "--save", "")
    assert strings(r) == expected


# Runs of one letter per kind of string: LZF leaves no such run in a compressed string.
RUNS = {"key": b"K" * 30, "set": b"S" * 30, "zset": b"Z" * 30, "hash": b"H" * 30, "list": b"L" * 30}


def fill_long_strings(c) -> None:
    """Keys, set members (big and small sets), sorted-set members, hash fields and values
    and list elements, all over 20 bytes."""
    k, s, z, h, li = (RUNS[n].decode() for n in ("key", "set", "zset", "hash", "list"))
    c.set(f"{k}:string", "v")
    c.sadd(f"{k}:bigset", *[f"{s}-{i}" for i in range(300)])
    c.sadd(f"{k}:smallset", *[f"{s}-small-{i}" for i in range(3)])
    c.zadd(f"{k}:bigzset", {f"{z}-{i}": i for i in range(300)})
    c.zadd(f"{k}:smallzset", {f"{z}-small-{i}": i for i in range(3)})
    c.hset(f"{k}:bighash", mapping={f"{h}-f{i}": f"{h}-v{i}" for i in range(600)})
    c.hset(f"{k}:smallhash", mapping={f"{h}-f{i}": f"{h}-v{i}" for i in range(3)})
    c.rpush(f"{k}:list", *[f"{li}-{i}" for i in range(300)])


def contents(server) -> dict:
    c = server.client(0)
    out = {}
    for key in c.scan_iter(count=1000):
        t = c.type(key)
        if t == b"string":
            v = c.get(key)
        elif t == b"set":
            v = sorted(c.smembers(key))
        elif t == b"zset":
            v = c.zrange(key, 0, -1, withscores=True)
        elif t == b"hash":
            v = sorted(c.hgetall(key).items())
        else:
            v = c.lrange(key, 0, -1)
        out[key] = (t, v)
    return out


def test_every_long_string_compressed_both_ways(procs, tmp_path):
    """With rdbcompression yes, Redis's rdbSaveRawString compresses every string over 20
    bytes, keys and members included: neither file holds one plainly, and each server loads
    the other's file."""
    r = redis_server(procs, tmp_path, "--save", "")
    fill_long_strings(single(r))
    expected = contents(r)
    assert single(r).execute_command("SAVE") in OK
    data = (tmp_path / "dump.rdb").read_bytes()
    assert [n for n, run in RUNS.items() if run in data] == [], "Redis compressed them"
    r.stop()
    g = goblin(procs, tmp_path, "--save", "")
    assert contents(g) == expected
    (tmp_path / "dump.rdb").unlink()
    assert single(g).execute_command("SAVE") in OK
    data = (tmp_path / "dump.rdb").read_bytes()
    assert [n for n, run in RUNS.items() if run in data] == [], "Goblin compressed them too"
    g.stop()
    r2 = redis_server(procs, tmp_path, "--save", "")
    assert contents(r2) == expected


def test_long_strings_plain_without_compression(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "", "--rdbcompression", "no")
    fill_long_strings(single(g))
    expected = contents(g)
    assert single(g).execute_command("SAVE") in OK
    data = (tmp_path / "dump.rdb").read_bytes()
    assert [n for n, run in RUNS.items() if run not in data] == []
    g.stop()
    r = redis_server(procs, tmp_path, "--save", "")
    assert contents(r) == expected
