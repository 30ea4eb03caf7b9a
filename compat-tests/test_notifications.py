"""Keyspace and keyevent notifications (notify-keyspace-events): the same command streams run
on Redis and Goblin while a RESP2 and a RESP3 subscriber listen on `__key*__:*`; the frames
each receives (channel, message, in order) must be the same, byte for byte. Covers every
command family (strings, bitmaps, sets, sorted sets, hashes, lists with the blocking pops,
geo, SORT STORE, the generic commands), lazy and active expiry, eviction, keymiss, new keys,
the class letters and their printing by CONFIG GET, and RESP3's deferral of a client's own
notifications after its reply."""

import time

import pytest

from conftest import info_of
from resp import encode, parse_all

PATTERN = "__key*__:*"
END = "zz-notifications-end"


class Listener:
    """A raw subscriber on one server: PSUBSCRIBE to every notification, SUBSCRIBE to END."""

    def __init__(self, conn, resp3: bool):
        self.conn = conn
        if resp3:
            conn.request(encode("HELLO", "3"))
        conn.request(encode("PSUBSCRIBE", PATTERN))
        conn.request(encode("SUBSCRIBE", END))

    def until_end(self) -> list:
        """The raw frames received up to the END message, which is left out."""
        frames = []
        while True:
            raw = self.conn.read_replies(1)
            msg = parse_all(raw)[0]
            if msg[0] == b"message" and msg[1] == END.encode():
                return frames
            frames.append(raw)


def stream(raw, both, commands, flags="KEA", before=(), wait=0.0):
    """Runs `before` unobserved, then `commands` with both kinds of subscriber listening;
    the frames and the replies must match Redis's. Returns Redis's frames, parsed."""
    both.config_set("notify-keyspace-events", "")
    both.run("FLUSHALL")
    for cmd in before:
        both.run(*cmd)
    both.config_set("notify-keyspace-events", flags)
    listeners = []
    for proto in (False, True):
        p = raw.new()
        listeners.append((Listener(p.redis, proto), Listener(p.goblin, proto)))
    for cmd in commands:
        # A command marked "~" replies at random (SPOP): its reply is not compared.
        random_reply = cmd[0] == "~"
        r, g = both.run(*cmd[random_reply:])
        assert random_reply or repr(r) == repr(g), (cmd, r, g)
    if wait:
        time.sleep(wait)
    both.run("PUBLISH", END, "x")
    result = None
    for lr, lg in listeners:
        r, g = lr.until_end(), lg.until_end()
        pr, pg = [parse_all(x)[0] for x in r], [parse_all(x)[0] for x in g]
        assert pr == pg, f"commands {commands}\n  redis:  {pr}\n  goblin: {pg}"
        assert r == g
        result = pr
    both.config_set("notify-keyspace-events", "")
    return result


def test_flags_parse_and_print(both):
    for flags in ["", "KEA", "EKA", "AKE", "nA", "mEgx$", "g$lshzxetdnKEm", "ndK", "Kl", "Ex"]:
        both.config_set("notify-keyspace-events", flags)
        both("CONFIG", "GET", "notify-keyspace-events")
    both.err("CONFIG", "SET", "notify-keyspace-events", "KEq")
    both("CONFIG", "GET", "notify-keyspace-events")


STRINGS = [
    ("SET", "s", "1"),
    ("SET", "s", "2", "EX", "100"),
    ("SET", "s", "3", "NX"),
    ("SET", "s2", "3", "XX"),
    ("SET", "s", "4", "KEEPTTL", "GET"),
    ("SETNX", "s", "x"),
    ("SETNX", "s3", "x"),
    ("SETEX", "s4", "10", "v"),
    ("PSETEX", "s5", "10000", "v"),
    ("GETSET", "s", "5"),
    ("MSET", "m1", "a", "m2", "b", "m1", "c"),
    ("MSETNX", "m3", "a", "m4", "b"),
    ("MSETNX", "m3", "a", "m5", "b"),
    ("APPEND", "s", "xyz"),
    ("APPEND", "a1", "new"),
    ("APPEND", "a1", ""),
    ("SETRANGE", "s", "2", "QQ"),
    ("SETRANGE", "r1", "0", ""),
    ("SETRANGE", "r2", "3", "x"),
    ("SETRANGE", "s", "1", ""),
    ("INCR", "n"),
    ("INCRBY", "n", "5"),
    ("DECR", "n"),
    ("DECRBY", "n2", "3"),
    ("INCRBYFLOAT", "n", "1.5"),
    ("INCR", "s"),
    ("GETDEL", "m1"),
    ("GETDEL", "nokey"),
    ("GETEX", "m2", "EX", "100"),
    ("GETEX", "m2", "PERSIST"),
    ("GETEX", "m2"),
    ("GETEX", "m3", "PX", "0"),
    ("GETEX", "m4", "EXAT", "1"),
    ("GET", "nokey"),
    ("MGET", "s", "nokey", "n"),
    ("STRLEN", "nokey"),
    ("GETRANGE", "nokey", "0", "1"),
    ("LCS", "s", "nokey"),
    ("SET", "s", "v", "PX", "0"),
    ("SET", "s", "v", "EXAT", "1"),
]


def test_strings(raw, both):
    stream(raw, both, STRINGS)
    stream(raw, both, STRINGS, flags="Km$")
    stream(raw, both, STRINGS, flags="Egn")


BITS = [
    ("SETBIT", "b", "7", "1"),
    ("SETBIT", "b", "7", "1"),
    ("SETBIT", "b2", "100", "0"),
    ("GETBIT", "nokey", "1"),
    ("BITCOUNT", "nokey"),
    ("BITPOS", "nokey", "1"),
    ("BITOP", "AND", "dst", "b", "b2"),
    ("BITOP", "OR", "dst", "nokey", "nokey2"),
    ("BITOP", "NOT", "dst2", "b"),
    ("BITFIELD", "bf", "SET", "u8", "0", "255", "GET", "u8", "0"),
    ("BITFIELD", "bf", "GET", "u8", "0"),
    ("BITFIELD", "bf", "INCRBY", "u8", "0", "1"),
    ("BITFIELD", "bf2", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10"),
    ("BITFIELD_RO", "nokey", "GET", "u8", "0"),
]


def test_bitmaps(raw, both):
    stream(raw, both, BITS)
    stream(raw, both, BITS, flags="KEm$n")


SETS = [
    ("SADD", "s1", "a", "b", "c", "1", "2"),
    ("SADD", "s1", "a"),
    ("SADD", "s2", "b", "c", "d"),
    ("SREM", "s1", "zz"),
    ("SREM", "s1", "1", "2"),
    ("SMOVE", "s1", "s2", "a"),
    ("SMOVE", "s1", "s3", "b"),
    ("SMOVE", "s1", "s2", "zz"),
    ("SMOVE", "s1", "s2", "c"),
    ("~", "SPOP", "s2"),
    ("~", "SPOP", "s2", "1"),
    ("SADD", "s7", "only"),
    ("SPOP", "s7"),
    ("SADD", "s8", "a", "b", "c", "d", "e", "f", "g", "h"),
    ("~", "SPOP", "s8", "2"),
    ("~", "SPOP", "s8", "5"),
    ("~", "SPOP", "s8", "0"),
    ("SPOP", "nokey"),
    ("SADD", "s4", "x", "y"),
    ("~", "SPOP", "s4", "5"),
    ("SADD", "s5", "x", "y", "z"),
    ("SADD", "s6", "y", "z", "w"),
    ("SINTERSTORE", "d1", "s5", "s6"),
    ("SUNIONSTORE", "d2", "s5", "s6"),
    ("SDIFFSTORE", "d3", "s5", "s6"),
    ("SINTERSTORE", "d1", "s5", "nokey"),
    ("SDIFFSTORE", "d4", "nokey", "s5"),
    ("SRANDMEMBER", "nokey"),
    ("SMEMBERS", "nokey"),
    ("SCARD", "nokey"),
    ("SISMEMBER", "nokey", "a"),
    ("SINTER", "nokey", "s5"),
    ("SINTERCARD", "1", "nokey"),
    ("SREM", "s6", "y", "z", "w"),
]


def test_sets(raw, both):
    stream(raw, both, SETS)
    stream(raw, both, SETS, flags="Ksmn")


ZSETS = [
    ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"),
    ("ZADD", "z", "1", "a"),
    ("ZADD", "z", "5", "a"),
    ("ZADD", "z", "INCR", "1", "a"),
    ("ZADD", "z", "NX", "1", "a"),
    ("ZINCRBY", "z", "2", "b"),
    ("ZINCRBY", "z2", "2", "b"),
    ("ZREM", "z", "zz"),
    ("ZREM", "z", "c"),
    ("ZREMRANGEBYRANK", "z", "0", "0"),
    ("ZREMRANGEBYSCORE", "z", "100", "200"),
    ("ZREMRANGEBYLEX", "z2", "-", "+"),
    ("ZADD", "z3", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
    ("ZPOPMIN", "z3"),
    ("ZPOPMAX", "z3", "2"),
    ("ZPOPMIN", "nokey"),
    ("ZMPOP", "2", "nokey", "z3", "MIN", "COUNT", "1"),
    ("ZADD", "z4", "1", "x", "2", "y"),
    ("ZUNIONSTORE", "u", "2", "z3", "z4"),
    ("ZINTERSTORE", "i", "2", "z3", "z4"),
    ("ZDIFFSTORE", "df", "2", "z3", "z4"),
    ("ZINTERSTORE", "i", "2", "z3", "nokey"),
    ("ZRANGESTORE", "rs", "z4", "0", "-1"),
    ("ZRANGESTORE", "rs", "nokey", "0", "-1"),
    ("ZSCORE", "nokey", "a"),
    ("ZRANGE", "nokey", "0", "-1"),
    ("ZCARD", "nokey"),
    ("ZRANK", "nokey", "a"),
    ("ZPOPMAX", "z4", "10"),
]


def test_sorted_sets(raw, both):
    stream(raw, both, ZSETS)
    stream(raw, both, ZSETS, flags="Kzmn")


HASHES = [
    ("HSET", "h", "a", "1", "b", "2"),
    ("HSET", "h", "a", "1"),
    ("HMSET", "h", "c", "3"),
    ("HSETNX", "h", "a", "9"),
    ("HSETNX", "h", "d", "4"),
    ("HINCRBY", "h", "a", "5"),
    ("HINCRBYFLOAT", "h", "a", "0.5"),
    ("HINCRBY", "h2", "x", "1"),
    ("HDEL", "h", "zz"),
    ("HDEL", "h", "a", "b"),
    ("HDEL", "h2", "x"),
    ("HGET", "nokey", "a"),
    ("HGETALL", "nokey"),
    ("HLEN", "nokey"),
    ("HRANDFIELD", "nokey"),
    ("HEXISTS", "nokey", "a"),
]


def test_hashes(raw, both):
    stream(raw, both, HASHES)
    stream(raw, both, HASHES, flags="Khmn")


LISTS = [
    ("LPUSH", "l", "a", "b", "c"),
    ("RPUSH", "l", "d"),
    ("LPUSHX", "nokey", "x"),
    ("RPUSHX", "l", "e"),
    ("LINSERT", "l", "BEFORE", "a", "z"),
    ("LINSERT", "l", "BEFORE", "nothere", "z"),
    ("LSET", "l", "0", "first"),
    ("LPOP", "l"),
    ("RPOP", "l", "2"),
    ("LMPOP", "2", "nokey", "l", "LEFT", "COUNT", "1"),
    ("LREM", "l", "0", "zz"),
    ("LREM", "l", "0", "z"),
    ("RPUSH", "l2", "1", "2", "3", "4", "5"),
    ("LTRIM", "l2", "1", "3"),
    ("LTRIM", "l2", "0", "-1"),
    ("LMOVE", "l2", "l3", "LEFT", "RIGHT"),
    ("RPOPLPUSH", "l2", "l2"),
    ("RPOPLPUSH", "l2", "l3"),
    ("LMOVE", "l2", "l4", "RIGHT", "LEFT"),
    ("LTRIM", "l3", "5", "10"),
    ("LRANGE", "nokey", "0", "-1"),
    ("LINDEX", "nokey", "0"),
    ("LLEN", "nokey"),
    ("LPOS", "nokey", "a"),
    ("RPUSH", "l4", "x"),
    ("BLPOP", "l4", "0"),
    ("RPUSH", "l", "y", "z"),
    ("BRPOP", "nokey", "l", "0"),
    ("BLMPOP", "0", "1", "l", "RIGHT"),
    ("RPUSH", "l5", "a"),
    ("BLMOVE", "l5", "l6", "LEFT", "LEFT", "0"),
    ("BRPOPLPUSH", "l6", "l7", "0"),
    ("LPOP", "nokey"),
]


def test_lists(raw, both):
    stream(raw, both, LISTS)
    stream(raw, both, LISTS, flags="Klmn")


def test_blocked_pops_served_by_a_push(raw, both):
    both.config_set("notify-keyspace-events", "KEA")
    listeners = []
    for proto in (False, True):
        p = raw.new()
        listeners.append((Listener(p.redis, proto), Listener(p.goblin, proto)))
    waiters = [raw.new() for _ in range(3)]
    waiters[0].send(encode("BLPOP", "q", "0"))
    waiters[1].send(encode("BLMOVE", "q", "dst", "RIGHT", "LEFT", "0"))
    waiters[2].send(encode("BZPOPMIN", "zq", "0"))
    time.sleep(0.2)
    both("RPUSH", "q", "a", "b", "c")
    both("ZADD", "zq", "1", "m")
    for w in waiters:
        w.same(b"")
    both.run("PUBLISH", END, "x")
    for lr, lg in listeners:
        r, g = lr.until_end(), lg.until_end()
        assert r == g, ([parse_all(x)[0] for x in r], [parse_all(x)[0] for x in g])


GEO = [
    ("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"),
    ("GEOADD", "g", "NX", "13.361389", "38.115556", "Palermo"),
    ("GEOADD", "g", "XX", "CH", "13.0", "38.0", "Palermo"),
    ("GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"),
    ("GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
    ("GEOSEARCHSTORE", "gs2", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"),
    ("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gr"),
    ("GEORADIUSBYMEMBER", "g", "Palermo", "200", "km", "STOREDIST", "gr2"),
    ("GEOPOS", "nokey", "a"),
    ("GEODIST", "nokey", "a", "b"),
    ("GEOSEARCH", "nokey", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
]


def test_geo(raw, both):
    stream(raw, both, GEO)


SORT = [
    ("RPUSH", "sl", "3", "1", "2"),
    ("SORT", "sl", "STORE", "sd"),
    ("SORT", "sl", "LIMIT", "0", "0", "STORE", "sd"),
    ("SORT", "nokey", "STORE", "sd2"),
    ("SORT", "sl"),
]


def test_sort_store(raw, both):
    stream(raw, both, SORT)


GENERIC = [
    ("SET", "k1", "v"),
    ("SET", "k2", "v"),
    ("DEL", "k1", "nokey", "k2"),
    ("SET", "k1", "v"),
    ("UNLINK", "k1"),
    ("SET", "k1", "v"),
    ("EXPIRE", "k1", "100"),
    ("PEXPIRE", "k1", "100000"),
    ("EXPIREAT", "k1", "99999999999"),
    ("PEXPIREAT", "k1", "99999999999999"),
    ("EXPIRE", "k1", "100", "NX"),
    ("EXPIRE", "nokey", "100"),
    ("PERSIST", "k1"),
    ("PERSIST", "k1"),
    ("EXPIRE", "k1", "0"),
    ("SET", "k1", "v"),
    ("PEXPIREAT", "k1", "1"),
    ("SET", "k1", "v"),
    ("EXPIRE", "k1", "-5"),
    ("SET", "k1", "v", "EX", "100"),
    ("RENAME", "k1", "k2"),
    ("SET", "k3", "v"),
    ("RENAME", "k2", "k3"),
    ("RENAMENX", "k3", "k4"),
    ("SET", "k5", "v"),
    ("RENAMENX", "k4", "k5"),
    ("RENAME", "k4", "k4"),
    ("COPY", "k4", "k6"),
    ("COPY", "k4", "k6"),
    ("COPY", "k4", "k6", "REPLACE"),
    ("COPY", "k4", "k7", "DB", "1"),
    ("MOVE", "k6", "1"),
    ("MOVE", "k4", "1"),
    ("MOVE", "nokey", "1"),
    ("TYPE", "nokey"),
    ("EXISTS", "nokey"),
    ("TOUCH", "nokey"),
    ("TTL", "nokey"),
    ("OBJECT", "ENCODING", "nokey"),
    ("SELECT", "1"),
    ("DEL", "k6", "k4", "k7"),
    ("SET", "k8", "v"),
    ("SELECT", "0"),
    ("SWAPDB", "0", "1"),
    ("FLUSHDB",),
    ("FLUSHALL",),
]


def test_generic(raw, both):
    stream(raw, both, GENERIC)
    stream(raw, both, GENERIC, flags="Kgnm")


def test_restore(raw, both):
    both.config_set("notify-keyspace-events", "")
    both.run("SET", "src", "v")
    both.run("RPUSH", "lsrc", "a", "b")
    payload = both.redis.execute_command("DUMP", "src")
    list_payload = both.redis.execute_command("DUMP", "lsrc")
    cmds = [
        ("RESTORE", "r1", "0", payload),
        ("RESTORE", "r1", "0", payload),
        ("RESTORE", "r1", "0", list_payload, "REPLACE"),
        ("RESTORE", "r2", "100000", payload, "IDLETIME", "5"),
        ("RESTORE", "r1", "1", payload, "REPLACE", "ABSTTL"),
        ("RESTORE", "r3", "1", payload, "ABSTTL"),
        ("RESTORE", "r4", "0", b"garbage"),
    ]
    stream(raw, both, cmds)
    stream(raw, both, cmds, flags="Kgn")


@pytest.fixture
def no_active_expiry(both):
    """Active expiry off on both servers (DEBUG SET-ACTIVE-EXPIRE 0), so keys expire lazily."""
    both("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    yield
    both("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_lazy_expiry(raw, both, no_active_expiry):
    before = [("SET", "lazy", "v", "PX", "20"), ("SET", "k", "v", "PX", "20"), ("RPUSH", "l", "a"),
              ("PEXPIRE", "l", "20"), ("SET", "s", "v", "PX", "20"), ("SET", "t", "v", "PX", "20"),
              ("SADD", "set", "m"), ("PEXPIRE", "set", "20")]
    for cmd in before:
        both.run(*cmd)
    time.sleep(0.1)
    cmds = [("GET", "lazy"), ("SET", "k", "v2"), ("RPUSH", "l", "b"), ("APPEND", "s", "x"),
            ("TTL", "t"), ("SISMEMBER", "set", "m")]
    stream(raw, both, cmds, flags="KEA")


def test_active_expiry(raw, both):
    both.config_set("notify-keyspace-events", "KEx")
    listeners = []
    for proto in (False, True):
        p = raw.new()
        listeners.append((Listener(p.redis, proto), Listener(p.goblin, proto)))
    both.run("SET", "active", "v", "PX", "50")
    time.sleep(1.5)
    both.run("PUBLISH", END, "x")
    for lr, lg in listeners:
        r, g = lr.until_end(), lg.until_end()
        assert r == g and len(r) == 2, (r, g)


def test_multi_and_scripts(raw, both):
    cmds = [
        ("MULTI",), ("SET", "a", "1"), ("INCR", "a"), ("DEL", "a"), ("EXEC",),
        ("EVAL", "redis.call('set', KEYS[1], 'x'); redis.call('lpush', KEYS[2], 'y'); return 1",
         "2", "ek", "el"),
    ]
    stream(raw, both, cmds)


def test_eviction(raw, both, servers):
    both.config_set("maxmemory-policy", "allkeys-random")
    for i in range(50):
        both.run("SET", f"big{i}", "x" * 100_000)
    used = [int(info_of(c, "memory")["used_memory"]) for c in both.clients()]
    both.config_set("notify-keyspace-events", "KEe")
    listeners = []
    for proto in (False, True):
        p = raw.new()
        listeners.append((Listener(p.redis, proto), Listener(p.goblin, proto)))
    for c, u in zip(both.clients(), used):
        c.config_set("maxmemory", u - 2_000_000)
    both.run("SET", "trigger", "1")
    both.run("PUBLISH", END, "x")
    for c in both.clients():
        c.config_set("maxmemory", 0)
    for lr, lg in listeners:
        r = [parse_all(x)[0] for x in lr.until_end()]
        g = [parse_all(x)[0] for x in lg.until_end()]
        # Random victims: compare the shape (every frame an eviction, some of them).
        assert r and g
        for frames in (r, g):
            assert all(f[2].endswith(b"evicted") or f[3] == b"evicted" for f in frames), frames


def test_own_notifications_follow_the_reply_in_resp3(raw, both):
    """Redis 7.2 defers the push messages to the client running the command until after
    its reply (after EXEC's whole reply in a transaction); 7.0 wrote them first. Goblin's
    bytes are pinned to 7.2's order."""
    both.config_set("notify-keyspace-events", "KEA")
    raw(encode("HELLO", "3"))
    raw.same(encode("SUBSCRIBE", "__keyevent@0__:set"))
    msg = lambda key: b">3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$%d\r\n%s\r\n" % (
        len(key), key)
    r, g = raw(encode("SET", "k", "v"), 2)
    assert sorted([msg(b"k"), b"+OK\r\n"]) == sorted(parse_split(r))
    assert g == b"+OK\r\n" + msg(b"k")
    raw.same(encode("MULTI"))
    raw.same(encode("SET", "k", "v"))
    raw.same(encode("SET", "k2", "v"))
    # (7.0 writes the two messages inside EXEC's array.)
    _, g = raw(encode("EXEC"), 3)
    assert g == b"*2\r\n+OK\r\n+OK\r\n" + msg(b"k") + msg(b"k2")


def parse_split(raw_bytes):
    from resp import split_replies
    frames, rest = split_replies(raw_bytes)
    assert not rest
    return frames


def test_channels_name_the_database(raw, both):
    stream(raw, both, [("SELECT", "5"), ("SET", "x", "1"), ("DEL", "x"), ("SELECT", "0")])


@pytest.mark.parametrize("flags", ["K", "E", "A", "g", "KE$", "Ex", "Ken"])
def test_class_subsets(raw, both, flags):
    cmds = [("SET", "a", "1"), ("LPUSH", "l", "x"), ("DEL", "a", "l"), ("GET", "a"),
            ("SET", "t", "v", "PX", "1")]
    stream(raw, both, cmds, flags=flags)


READS = [
    ("SET", "nokey-set", "v", "GET"),
    ("SET", "str", "v"),
    ("SET", "str", "w", "GET"),
    ("GETEX", "nokey"),
    ("GETDEL", "nokey"),
    ("LCS", "nokey", "nokey2"),
    ("SINTERCARD", "2", "nokey", "nokey2"),
    ("ZINTERCARD", "2", "nokey", "nokey2"),
    ("ZUNION", "2", "nokey", "nokey2"),
    ("SUNION", "nokey", "nokey2"),
    ("SDIFF", "nokey", "nokey2"),
    ("HRANDFIELD", "nokey"),
    ("ZRANDMEMBER", "nokey"),
    ("SRANDMEMBER", "nokey", "2"),
    ("SMISMEMBER", "nokey", "a"),
    ("ZMSCORE", "nokey", "a"),
    ("HMGET", "nokey", "a"),
    ("HSTRLEN", "nokey", "a"),
    ("HKEYS", "nokey"),
    ("HVALS", "nokey"),
    ("HSCAN", "nokey", "0"),
    ("SSCAN", "nokey", "0"),
    ("ZSCAN", "nokey", "0"),
    ("ZCOUNT", "nokey", "0", "1"),
    ("ZLEXCOUNT", "nokey", "-", "+"),
    ("ZRANGEBYSCORE", "nokey", "0", "1"),
    ("ZREVRANK", "nokey", "a"),
    ("GEOHASH", "nokey", "a"),
    ("GEORADIUS_RO", "nokey", "0", "0", "1", "km"),
    ("RPUSH", "sl", "2", "1"),
    ("SORT", "sl", "BY", "w_*", "GET", "#", "GET", "o_*", "GET", "h_*->f"),
    ("SORT_RO", "nokey"),
    ("BITFIELD_RO", "nokey", "GET", "u8", "0"),
    ("BITPOS", "nokey", "0"),
    ("SUBSTR", "nokey", "0", "1"),
    ("LPOP", "nokey", "2"),
    ("ZPOPMIN", "nokey", "2"),
    ("ZMPOP", "1", "nokey", "MAX"),
    ("LMPOP", "1", "nokey", "LEFT"),
    ("RPOPLPUSH", "nokey", "dst"),
    ("SMOVE", "nokey", "dst", "m"),
    ("RENAME", "str", "str2"),
    ("SET", "str3", "v"),
    ("RENAME", "str2", "str3"),
    ("EVAL", "return redis.call('get', KEYS[1])", "1", "nokey"),
]


def test_reads_and_key_misses(raw, both):
    stream(raw, both, READS)
    stream(raw, both, READS, flags="Km")
