"""Hashes in RDB snapshots, both ways with Debian's redis-server 7.0: HASH_LISTPACK for a
listpack hash (integers in the listpack's integer encodings), HASH for a hashtable, LZF
where strings compress; pairs, expiries and OBJECT ENCODING survive each trip."""

from __future__ import annotations

from test_persistence import OK, goblin, procs, redis_server, single  # noqa: F401  (fixture)


def fill_hashes(c) -> None:
    c.hset("profile", mapping={"name": "Ada", "email": "ada@example.com", "age": 36, "city": "London",
                               "score": -1234567890123})
    c.hset("ints", mapping={str(i): i * 1000 for i in range(-5, 5)})
    c.hset("binary", mapping={b"\x00\xff": b"\r\n", b"": b"", b"lzf": b"abc" * 20})
    c.hset("big", mapping={f"field:{i}": f"value:{i}" for i in range(2000)})
    c.hset("long-value", mapping={"a": "1", "b": "x" * 100})
    c.hset("compressible", mapping={f"f{i}": "y" * 200 for i in range(3)})
    c.hset("volatile", "f", "v")
    c.pexpire("volatile", 600_000)
    c.execute_command("SELECT", 3)
    c.hset("db3", mapping={"k": "v"})
    c.execute_command("SELECT", 0)


def hashes(server) -> dict:
    out = {}
    for db in range(16):
        c = server.client(db)
        for key in c.scan_iter(count=1000):
            enc = c.object("encoding", key)
            fields = c.execute_command("HGETALL", key)
            if enc == b"hashtable":
                fields = sorted(fields.items())
            else:
                fields = list(fields.items())  # a listpack keeps its order through a snapshot
            out[(db, key)] = (c.type(key), enc, fields, c.pttl(key) > 0)
    return out


def test_redis_hashes_load_in_goblin_and_back(procs, tmp_path):
    r = redis_server(procs, tmp_path, "--save", "")
    fill_hashes(single(r))
    expected = hashes(r)
    assert expected[(0, b"profile")][1] == b"listpack"
    assert expected[(0, b"big")][1] == b"hashtable"
    assert single(r).execute_command("SAVE") in OK
    r.stop()
    g = goblin(procs, tmp_path, "--save", "")
    assert hashes(g) == expected
    assert single(g).execute_command("SAVE") in OK
    assert b"y" * 200 not in (tmp_path / "dump.rdb").read_bytes(), "Goblin compressed it"
    g.stop()
    r2 = redis_server(procs, tmp_path, "--save", "")
    assert hashes(r2) == expected


def test_goblin_hashes_load_in_redis(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "")
    fill_hashes(single(g))
    single(g).hincrbyfloat("profile", "score", "0.5")
    single(g).hdel("big", *[f"field:{i}" for i in range(0, 2000, 2)])
    expected = hashes(g)
    assert single(g).execute_command("SAVE") in OK
    g.stop()
    r = redis_server(procs, tmp_path, "--save", "")
    assert hashes(r) == expected
