"""Lists in RDB snapshots, both ways with Debian's redis-server 7.0: Redis writes every list
as QUICKLIST_2 (its nodes' listpacks, LZF-compressed inner nodes under list-compress-depth),
Goblin writes QUICKLIST_2 of PACKED nodes; elements, order, expiries survive each trip, and
Goblin settles a loaded list in Redis 7.2's encoding."""

from __future__ import annotations

from test_persistence import OK, goblin, procs, redis_server, single  # noqa: F401  (fixture)


def fill_lists(c) -> None:
    c.rpush("small", "a", "-5", "", "9223372036854775807", "01", "x" * 300)
    c.rpush("ints", *range(-200, 200, 7))
    c.rpush("big", *[f"element:{i}" for i in range(5000)])
    c.rpush("huge-elements", "h" * 20000, "tail", "j" * 9000)
    c.lpush("volatile", "v1", "v2")
    c.pexpire("volatile", 600_000)
    c.execute_command("SELECT", 5)
    c.rpush("db5", *[str(i) * 40 for i in range(300)])
    c.execute_command("SELECT", 0)


def lists(server) -> dict:
    out = {}
    for db in range(16):
        c = server.client(db)
        for key in c.scan_iter(count=1000):
            out[(db, key)] = (c.type(key), c.lrange(key, 0, -1), c.pttl(key) > 0)
    return out


def encodings(server) -> dict:
    c = server.client(0)
    return {k: c.object("encoding", k) for k in (b"small", b"ints", b"big", b"huge-elements")}


# Redis 7.2's forms: one small node is a listpack; many nodes, or one past 8 KiB, a quicklist.
ENCODINGS_72 = {b"small": b"listpack", b"ints": b"listpack", b"big": b"quicklist",
                b"huge-elements": b"quicklist"}


def test_redis_lists_load_in_goblin_and_back(procs, tmp_path):
    r = redis_server(procs, tmp_path, "--save", "", "--list-compress-depth", "1")
    fill_lists(single(r))
    expected = lists(r)
    assert single(r).execute_command("SAVE") in OK
    r.stop()
    g = goblin(procs, tmp_path, "--save", "")
    assert lists(g) == expected
    assert encodings(g) == ENCODINGS_72
    assert single(g).execute_command("SAVE") in OK
    g.stop()
    r2 = redis_server(procs, tmp_path, "--save", "")
    assert lists(r2) == expected


def test_goblin_lists_load_in_redis(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "", "--list-max-listpack-size", "5")
    fill_lists(single(g))
    expected = lists(g)
    assert single(g).execute_command("SAVE") in OK
    g.stop()
    r = redis_server(procs, tmp_path, "--save", "")
    assert lists(r) == expected
    g2 = goblin(procs, tmp_path, "--save", "")
    assert lists(g2) == expected
    assert encodings(g2) == ENCODINGS_72
