"""DUMP, RESTORE and MIGRATE against Debian's Redis 7.0.

Goblin's DUMP is Redis 7.2's: RDB version 11 in the footer, and listpack sets as SET_LISTPACK
(type 20), which 7.0 does not have. So payload bodies (sans the 10-byte footer) are compared
with Redis 7.0's where 7.0 and 7.2 write the same bytes; where they differ (SET_LISTPACK, and
listpack sorted sets whose scores 7.0 prints with %.17g), the expected listpack is taken from
Redis's own DUMP of a list holding the same items, which Redis writes with the same listpack
and string encoders. Redis 7.0 refuses every version-11 payload, as it refuses 7.2's; MIGRATE
sends RDB-10 payloads, which 7.0 loads.
"""

from __future__ import annotations

import random
import socket
import threading

import pytest
import redis

from harness import make_client, start_pair

CRC_POLY = 0x95AC9329AC4BC9B5  # CRC-64/Jones, reflected


def crc64(data: bytes) -> int:
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ CRC_POLY if crc & 1 else crc >> 1
    return crc


def footer(body: bytes, version: int) -> bytes:
    """`body` with an RDB version and its CRC64, as DUMP ends a payload."""
    p = body + version.to_bytes(2, "little")
    return p + crc64(p).to_bytes(8, "little")


def body(payload: bytes) -> bytes:
    return payload[:-10]


def version(payload: bytes) -> int:
    return int.from_bytes(payload[-10:-8], "little")


def test_crc64_is_redis_jones():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


# Each case: a name and the commands that build key "k" the same way on both servers.
LONG = "x" * 30 + "yz" * 20
MID = "x" * 25 + "yz" * 5  # compresses, and fits a listpack entry
CASES = {
    "string-short": [("SET", "k", "hello")],
    "string-int8": [("SET", "k", "-12")],
    "string-int16": [("SET", "k", "3000")],
    "string-int32": [("SET", "k", "-2147483648")],
    "string-int-too-long": [("SET", "k", "12345678901")],
    "string-lzf": [("SET", "k", LONG)],
    "string-incompressible": [("SET", "k", "abcdefghijklmnopqrstuvwxyz0123456789")],
    "string-big": [("SET", "k", "0123456789abcdef" * 5000)],
    "intset-16": [("SADD", "k", 1, 2, -3)],
    "intset-32": [("SADD", "k", 1, 100000)],
    "intset-64": [("SADD", "k", 1, 2**40, -(2**50))],
    "hash-listpack": [("HSET", "k", "f", "v", "n", "5", "big", "-70000", "long", MID)],
    "list-small": [("RPUSH", "k", "a", "b", 1, -300, 70000, 2**40, LONG)],
    "list-nodes": [("RPUSH", "k", *[f"element-{i}" for i in range(2000)])],
    "list-ints": [("RPUSH", "k", *range(-600, 600))],
    "zset-listpack-int": [("ZADD", "k", 1, "a", 2, "b", -7, "c", 100000, "d", 5, 12)],
    "zset-skiplist": [("ZADD", "k", *[x for i in range(200) for x in (i * 1.5, f"m{i}-{LONG}")])],
    "zset-skiplist-long-member": [("ZADD", "k", 1, "a" * 100, 2, "b")],
}

# Sets and hashes in their hashtable forms: Redis writes them in its dict's order.
UNORDERED = {
    "set-hashtable": [("SADD", "k", *[f"member-{i}" for i in range(300)])],
    "set-listpack-then-hashtable": [("SADD", "k", "a", "b", "c" * 100)],
    "hash-hashtable": [("HSET", "k", *[x for i in range(300) for x in (f"f{i}", f"v{i}" * 5)])],
    "hash-long-value": [("HSET", "k", "f", "v" * 100)],
    "set-listpack": [("SADD", "k", "x", "y", 7, "long member of a set", -5)],
}


def build(both, cmds):
    for cmd in cmds:
        both.ok(*cmd)


def contents(c: redis.Redis, key="k"):
    t = c.execute_command("TYPE", key)
    if t == b"string":
        return t, c.execute_command("GET", key)
    if t == b"list":
        return t, c.execute_command("LRANGE", key, 0, -1)
    if t == b"set":
        return t, sorted(c.execute_command("SMEMBERS", key))
    if t == b"hash":
        return t, sorted(c.execute_command("HGETALL", key))
    if t == b"zset":
        return t, c.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
    return t, None


@pytest.mark.parametrize("name", sorted(CASES))
def test_dump_bytes_equal_redis(both, name):
    build(both, CASES[name])
    r, g = both.run("DUMP", "k")
    assert version(r) == 10 and version(g) == 11
    assert body(g) == body(r), name
    assert g[-8:] == crc64(g[:-8]).to_bytes(8, "little")


def test_dump_bytes_without_compression(both):
    both.config_set("rdbcompression", "no")
    build(both, CASES["string-lzf"] + [("RPUSH", "l", *[LONG] * 5), ("HSET", "h", "f", LONG)])
    for key in ("k", "l", "h"):
        r, g = both.run("DUMP", key)
        assert body(g) == body(r)


def test_lzf_bytes_equal_redis_on_random_strings(both):
    """Goblin's LZF is Redis's lzf_compress: the same bytes, and the same strings left
    uncompressed (when it would not save 4 bytes)."""
    rng = random.Random(7)
    alphabets = [b"ab", b"abcdefgh", bytes(range(256)), b"a", b"0123456789 key:"]
    pipe_r, pipe_g = both.redis.pipeline(transaction=False), both.goblin.pipeline(transaction=False)
    n = 400
    for i in range(n):
        size = rng.choice([rng.randint(21, 100), rng.randint(21, 3000), rng.randint(3000, 20000)])
        alphabet = rng.choice(alphabets)
        v = bytes(rng.choice(alphabet) for _ in range(size))
        if rng.random() < 0.5:
            v = (v[: rng.randint(1, 50)] * (size // 2 + 1))[:size]
        for p in (pipe_r, pipe_g):
            p.set(f"s{i}", v)
            p.dump(f"s{i}")
    r, g = pipe_r.execute(), pipe_g.execute()
    for i in range(n):
        assert body(r[2 * i + 1]) == body(g[2 * i + 1]), i


def list_listpack_blob(both, items) -> bytes:
    """The listpack string (encoded as a value string) Redis writes for `items`."""
    both.redis.execute_command("DEL", "tmp-list")
    both.redis.execute_command("RPUSH", "tmp-list", *items)
    p = both.redis.execute_command("DUMP", "tmp-list")
    both.redis.execute_command("DEL", "tmp-list")
    assert p[:3] == b"\x12\x01\x02", "one packed node"
    return body(p)[3:]


def test_set_listpack_is_redis_72_bytes(both):
    members = ["x", "y", 7, "a longer member to be compressed, compressed", -5, "x2"]
    both.ok("SADD", "k", *members)
    g = both.goblin.execute_command("DUMP", "k")
    assert version(g) == 11
    assert body(g) == b"\x14" + list_listpack_blob(both, members)
    # An intset that takes a string becomes a listpack in the intset's (sorted) order, then
    # the string; removals keep the order of the rest.
    both.ok("SADD", "conv", 30, -2, 7, 1000)
    both.ok("SADD", "conv", "str")
    both.ok("SREM", "conv", 7)
    g2 = both.goblin.execute_command("DUMP", "conv")
    assert body(g2) == b"\x14" + list_listpack_blob(both, [-2, 30, 1000, "str"])
    # Goblin reads it back identically; Redis 7.0 cannot (no type 20).
    both.goblin.execute_command("RESTORE", "k2", 0, g)
    assert contents(both.goblin, "k2") == contents(both.redis, "k")
    assert both.goblin.execute_command("OBJECT", "ENCODING", "k2") == b"listpack"


def test_zset_listpack_scores_as_72_prints_them(both):
    pairs = [(0.1, "a"), (1.5, "b"), (-2.25, "c"), (1e20, "d"), (3, "e"), (float("inf"), "f")]
    both.ok("ZADD", "k", *[x for s, m in pairs for x in (s, m)])
    g = both.goblin.execute_command("DUMP", "k")
    texts = {0.1: "0.1", 1.5: "1.5", -2.25: "-2.25", 1e20: "1e+20", 3: "3", float("inf"): "inf"}
    items = [x for s, m in sorted(pairs) for x in (m, texts[s])]
    assert body(g) == b"\x11" + list_listpack_blob(both, items)


@pytest.mark.parametrize("name", sorted(CASES) + sorted(UNORDERED))
def test_restore_redis_payload_into_goblin(both, name):
    cmds = {**CASES, **UNORDERED}[name]
    build(both, cmds)
    payload = both.redis.execute_command("DUMP", "k")
    both.ok("RESTORE", "k2", 0, payload)
    assert contents(both.goblin, "k2") == contents(both.redis, "k2")
    # Encoded as each server encodes the same data built by commands (Redis 7.0 has no
    # listpack lists, and no listpack sets of strings).
    for c in both.clients():
        assert c.execute_command("OBJECT", "ENCODING", "k2") == c.execute_command(
            "OBJECT", "ENCODING", "k"
        )


@pytest.mark.parametrize("name", sorted(CASES) + sorted(UNORDERED))
def test_goblin_payload_into_redis(both, name):
    cmds = {**CASES, **UNORDERED}[name]
    build(both, cmds)
    g = both.goblin.execute_command("DUMP", "k")
    # Redis 7.0 refuses version 11, as it refuses Redis 7.2's payloads.
    with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
        both.redis.execute_command("RESTORE", "k2", 0, g)
    if g[0] == 20:
        return  # SET_LISTPACK: Redis 7.0 has no such type
    # The same bytes stamped with version 10 load in Redis 7.0 to the same value.
    both.redis.execute_command("RESTORE", "k2", 0, footer(body(g), 10))
    assert contents(both.redis, "k2") == contents(both.goblin, "k")
    # And Goblin's own payload round-trips in Goblin.
    both.goblin.execute_command("RESTORE", "k2", 0, g)
    assert contents(both.goblin, "k2") == contents(both.goblin, "k")


def test_dump_missing_key_and_arity(both):
    assert both("DUMP", "nokey") is None
    both.err("DUMP")
    both.err("DUMP", "a", "b")
    both.err("RESTORE", "k", 0)
    both.err("MIGRATE", "127.0.0.1", 1, "k", 0)


def test_restore_errors(both):
    good = footer(b"\x00\x05hello", 10)
    both.ok("SET", "taken", "x")
    for args in [
        ("k", 0, good, "IDLETIME", -1),
        ("k", 0, good, "FREQ", 256),
        ("k", 0, good, "FREQ", -1),
        ("k", 0, good, "IDLETIME", "x"),
        ("k", 0, good, "FREQ", 1.5),
        ("k", 0, good, "IDLETIME", 10, "FREQ", 10),
        ("k", 0, good, "FREQ", 10, "IDLETIME", 10),
        ("k", 0, good, "IDLETIME"),
        ("k", 0, good, "NOPE"),
        ("taken", 0, good),
        ("taken", -1, good),
        ("taken", "x", good, "REPLACE", "NOPE"),
        ("k", -1, good),
        ("k", "1.5", good),
        ("k", "abc", good),
        ("k", 0, b""),
        ("k", 0, b"123456789"),
        ("k", 0, good[:-1] + bytes([good[-1] ^ 1])),
        ("k", 0, footer(b"\x00\x05hello", 13)),
        ("k", 0, footer(b"\x00\x05hello", 0xFFFF)),
        ("k", 0, footer(b"\x63\x05hello", 10)),
        ("k", 0, footer(b"\x02\x00", 10)),
        ("k", 0, footer(b"\x04\x00", 10)),
        ("k", 0, footer(b"\x00\x85", 10)),
        ("k", 0, footer(b"\x0b\x03abc", 10)),
        ("k", 0, footer(b"\x10\x03abc", 10)),
    ]:
        both.err("RESTORE", *args)
    assert both("GET", "taken") == b"x"
    assert both("EXISTS", "k") == 0
    # Version 12, Redis 7.4's (hashes with field times), restores as in 7.4 (7.0 and 7.2
    # refuse it); see test_hash_field_expire.py for payloads of Redis 7.4 itself.
    both.goblin.execute_command("RESTORE", "k", 0, footer(b"\x00\x05hello", 12))
    assert both.goblin.execute_command("GET", "k") == b"hello"


def test_restore_reads_into_the_footer_like_redis(both):
    # A string whose stated length runs into the footer: Redis reads the footer's bytes.
    both("RESTORE", "k", 0, footer(b"\x00\x05ab", 10))
    assert both("STRLEN", "k") == 5
    both("GET", "k")


def test_restore_ttl_replace_absttl(both):
    p = footer(b"\x00\x05hello", 10)
    both.ok("RESTORE", "k", 5000, p)
    r, g = both.run("PTTL", "k")
    assert 4000 < r <= 5000 and 4000 < g <= 5000
    both.err("RESTORE", "k", 0, p)
    both.ok("RESTORE", "k", 0, p, "REPLACE")
    assert both("TTL", "k") == -1
    # An absolute TTL in the past: OK, and the key is gone (deleted under REPLACE).
    both.ok("RESTORE", "k", 1000, p, "REPLACE", "ABSTTL")
    assert both("EXISTS", "k") == 0
    both.ok("RESTORE", "k2", 1, p, "ABSTTL")
    assert both("EXISTS", "k2") == 0
    far = 4102444800000  # 2100-01-01
    both.ok("RESTORE", "k3", far, p, "ABSTTL")
    assert both("PEXPIRETIME", "k3") == far
    both.ok("RESTORE-ASKING", "k4", 0, p)
    assert both("GET", "k4") == b"hello"


def test_restore_idletime_and_freq(both):
    p = footer(b"\x00\x05hello", 10)
    both.ok("RESTORE", "k", 0, p, "IDLETIME", 1000)
    assert both("OBJECT", "IDLETIME", "k") == 1000
    both.ok("RESTORE", "k2", 0, p, "FREQ", 100)  # ignored under an LRU policy
    both.config_set("maxmemory-policy", "allkeys-lfu")
    both.ok("RESTORE", "k3", 0, p, "FREQ", 100)
    assert both("OBJECT", "FREQ", "k3") == 100
    both.ok("RESTORE", "k4", 0, p, "IDLETIME", 100)  # ignored under LFU
    assert both("OBJECT", "FREQ", "k4") == 5


# ---------------------------------------------------------------------------------------------
# MIGRATE
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def targets(tmp_path_factory):
    """Another Redis / Goblin pair (the destinations), and one with a password."""
    plain = start_pair(tmp_path_factory)
    locked = start_pair(tmp_path_factory, "--requirepass", "s3cret")
    yield plain, locked
    plain.stop()
    locked.stop()


def client(server, password=None):
    c = make_client(server, password=password)
    c.response_callbacks = {}
    return c


def migrate_both(both, dest_pair, *args, dest_of=None):
    """MIGRATE from the Redis source to dest_pair.redis and from the Goblin source to
    dest_pair.goblin (or, with dest_of, to the server it picks), same arguments."""
    outs = []
    for src, dst in ((both.redis, dest_pair.redis), (both.goblin, dest_pair.goblin)):
        if dest_of is not None:
            dst = dest_of(src)
        try:
            outs.append(src.execute_command("MIGRATE", "127.0.0.1", dst.port, *args))
        except redis.ResponseError as e:
            outs.append(e)
    return outs


def same_outcome(outs):
    r, g = outs
    if isinstance(r, Exception):
        assert type(r) is type(g) and str(r) == str(g), (r, g)
    else:
        assert r == g, (r, g)
    return r


def connected(server) -> int:
    """Connections a server has, this one's included."""
    c = client(server)
    n = c.execute_command("CLIENT", "LIST").decode().count("\n")
    c.close()
    return n


def flush(pair):
    for s in pair:
        c = client(s, pair.password)
        c.execute_command("FLUSHALL")
        c.close()


ALL_TYPES = [
    ("SET", "s", "value"),
    ("SET", "s2", LONG),
    ("RPUSH", "l", *range(100), LONG),
    ("SADD", "i", 1, 2, 3),
    ("SADD", "st", "a", "b", "c"),
    ("SADD", "sh", *[f"m{i}" for i in range(200)]),
    ("HSET", "h", "f", "v", "g", LONG),
    ("ZADD", "z", 1, "a", 2.5, "b"),
    ("ZADD", "zb", *[x for i in range(200) for x in (i, f"m{i}")]),
]
ALL_KEYS = ["s", "s2", "l", "i", "st", "sh", "h", "z", "zb"]


@pytest.mark.parametrize("direction", ["goblin->redis", "redis->goblin", "goblin->goblin"])
def test_migrate_every_type(both, targets, direction):
    plain, _ = targets
    flush(plain)
    src = both.goblin if direction.startswith("goblin") else both.redis
    dst = plain.redis if direction.endswith("redis") else plain.goblin
    ref = both.redis if src is both.goblin else both.goblin  # holds the same data, stays put
    for cmd in ALL_TYPES:
        src.execute_command(*cmd)
        ref.execute_command(*cmd)
    src.execute_command("PEXPIRE", "s", 100000)
    out = src.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 3, 5000, "KEYS", *ALL_KEYS)
    assert out == b"OK"
    assert src.execute_command("DBSIZE") == 0
    d = client(dst)
    d.execute_command("SELECT", 3)
    for key in ALL_KEYS:
        assert contents(d, key) == contents(ref, key), key
        if direction != "goblin->goblin":  # else ref is Redis 7.0, encoded otherwise
            assert d.execute_command("OBJECT", "ENCODING", key) == ref.execute_command(
                "OBJECT", "ENCODING", key
            ), key
    assert 90000 < d.execute_command("PTTL", "s") <= 100000
    d.close()


def test_migrate_replies_like_redis(both, targets):
    plain, locked = targets
    flush(plain)
    flush(locked)
    both.ok("SET", "a", "1")
    both.ok("SET", "b", "2")
    both.ok("SET", "c", "3")
    # Nothing to move.
    assert same_outcome(migrate_both(both, plain, "nokey", 0, 1000)) == b"NOKEY"
    assert same_outcome(migrate_both(both, plain, "", 0, 1000, "KEYS", "x", "y")) == b"NOKEY"
    # Argument errors.
    for args in [
        ("a", 0, 1000, "NOPE"),
        ("a", 0, 1000, "AUTH"),
        ("a", 0, 1000, "AUTH2", "u"),
        ("a", 0, 1000, "KEYS", "b"),
        ("a", "x", 1000),
        ("a", 0, "x"),
    ]:
        same_outcome(migrate_both(both, plain, *args))
    # COPY keeps the key here; a second MIGRATE meets it there: BUSYKEY from the target.
    assert same_outcome(migrate_both(both, plain, "a", 0, 1000, "COPY")) == b"OK"
    assert both("GET", "a") == b"1"
    err = same_outcome(migrate_both(both, plain, "a", 0, 1000, "COPY"))
    assert "Target instance replied with error: BUSYKEY" in str(err)
    # REPLACE moves it over the target's copy; without COPY the key leaves.
    both.ok("SET", "a", "new")
    assert same_outcome(migrate_both(both, plain, "a", 0, 1000, "REPLACE")) == b"OK"
    assert both("EXISTS", "a") == 0
    for s in plain:
        assert client(s).execute_command("GET", "a") == b"new"
    # AUTH and AUTH2 against a target with a password; a wrong one is the target's error.
    assert same_outcome(migrate_both(both, locked, "b", 0, 1000, "AUTH", "s3cret")) == b"OK"
    assert both("EXISTS", "b") == 0
    err = same_outcome(migrate_both(both, locked, "c", 0, 1000, "AUTH", "wrong"))
    assert "Target instance replied with error" in str(err)
    assert both("EXISTS", "c") == 1
    # The target ran that RESTORE on a connection authenticated before: "c" is there.
    err = same_outcome(migrate_both(both, locked, "c", 0, 1000, "AUTH2", "default", "s3cret"))
    assert "BUSYKEY" in str(err)
    out = migrate_both(both, locked, "c", 0, 1000, "AUTH2", "default", "s3cret", "REPLACE")
    assert same_outcome(out) == b"OK"
    # No password now: the cached connection is still authenticated, as in Redis.
    both.ok("SET", "d", "4")
    assert same_outcome(migrate_both(both, locked, "d", 5, 1000)) == b"OK"
    for s in locked:
        c = client(s, "s3cret")
        assert c.execute_command("MGET", "b", "c") == [b"2", b"3"]
        c.close()


def test_migrate_io_errors(both):
    both.ok("SET", "a", "1")
    # Nobody listens.
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    r, g = both.run("MIGRATE", "127.0.0.1", port, "a", 0, 500)
    assert str(r) == str(g) and "IOERR" in str(r), (r, g)
    for host, port in [("127.0.0.1", "notaport"), ("127.0.0.1", "-1"), ("127.0.0.1", "0"),
                       ("", "1"), ("host.invalid", "6379")]:
        r, g = both.run("MIGRATE", host, port, "a", 0, 500)
        assert str(r) == str(g), (host, port, r, g)
    # A listener that never answers: the read times out.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    conns = []
    stop = threading.Event()

    def accept():
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(silent.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        r, g = both.run("MIGRATE", "127.0.0.1", silent.getsockname()[1], "a", 0, 300)
        assert str(r) == str(g) and "IOERR error or timeout reading" in str(r), (r, g)
    finally:
        stop.set()
        t.join()
        for c in conns:
            c.close()
        silent.close()
    assert both("GET", "a") == b"1"


def test_migrate_reuses_the_connection(both, targets):
    plain, _ = targets
    flush(plain)
    for i in range(5):
        both.goblin.execute_command("SET", f"k{i}", i)
    counts = []
    for i in range(5):
        out = both.goblin.execute_command(
            "MIGRATE", "127.0.0.1", plain.goblin.port, f"k{i}", i % 2, 1000
        )
        assert out == b"OK"
        counts.append(connected(plain.goblin))
    assert len(set(counts)) == 1, counts  # one cached connection, reused
    c = client(plain.goblin)
    assert c.execute_command("MGET", "k0", "k2", "k4") == [b"0", b"2", b"4"]
    c.execute_command("SELECT", 1)
    assert c.execute_command("MGET", "k1", "k3") == [b"1", b"3"]
    c.close()


def test_info_counts_the_cached_migrate_connections(tmp_path_factory):
    """INFO's migrate_cached_sockets is the cache's size: one more for each new target,
    none more for another MIGRATE to a cached one (fresh servers, so nothing is cached
    before and nothing times out meanwhile)."""
    pairs = [start_pair(tmp_path_factory) for _ in range(3)]
    source, first, second = pairs
    try:
        counts = []
        for i, target in enumerate((first, first, second)):
            for src, dst in ((source.redis, target.redis), (source.goblin, target.goblin)):
                c = client(src)
                c.execute_command("SET", f"k{i}", i)
                assert c.execute_command("MIGRATE", "127.0.0.1", dst.port, f"k{i}", 0, 1000) == b"OK"
                stats = c.execute_command("INFO", "stats").decode()
                counts.append(int(stats.split("migrate_cached_sockets:")[1].split()[0]))
                c.close()
        assert counts == [1, 1, 1, 1, 2, 2], counts
    finally:
        for p in pairs:
            p.stop()


def test_command_info_and_getkeys(both):
    for name in ("dump", "restore", "restore-asking", "migrate"):
        both("COMMAND", "INFO", name)
        both("COMMAND", "DOCS", name)
    for args in [
        ("RESTORE", "k", 0, "x"),
        ("RESTORE-ASKING", "k", 0, "x", "REPLACE"),
        ("DUMP", "k"),
        ("MIGRATE", "h", 1, "k", 0, 0),
        ("MIGRATE", "h", 1, "", 0, 0, "COPY", "REPLACE", "KEYS", "a", "b"),
        ("MIGRATE", "h", 1, "", 0, 0, "AUTH", "KEYS", "KEYS", "a"),
        ("MIGRATE", "h", 1, "", 0, 0, "AUTH2", "u", "KEYS", "KEYS", "a"),
        ("MIGRATE", "h", 1, "k", 0, 0, "KEYS", "a"),
    ]:
        both("COMMAND", "GETKEYS", *args)
        both("COMMAND", "GETKEYSANDFLAGS", *args)


def test_migrate_passwords_are_redacted_in_the_slowlog(both, targets):
    _, locked = targets
    flush(locked)
    both.config_set("slowlog-log-slower-than", 0)
    both.ok("SET", "r", "1")
    for args in [("r", 0, 1000, "COPY", "AUTH", "s3cret"),
                 ("r", 0, 1000, "COPY", "REPLACE", "AUTH2", "default", "s3cret")]:
        both.ok("SLOWLOG", "RESET")
        same_outcome(migrate_both(both, locked, *args))
        r, g = both.run("SLOWLOG", "GET", 1)
        assert r[0][3][3:] == g[0][3][3:], (r, g)  # after MIGRATE host port
        assert b"s3cret" not in g[0][3]
