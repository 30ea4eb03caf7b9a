"""HGETEX, HSETEX and HGETDEL (Redis 8.0), pinned on Goblin alone: no Redis 8 binary is at
hand, so each reply, event and AOF record is the one Redis 8.0's documentation and its
t_hash.c / tests (unit/type/hash-field-expire.tcl) give, over RESP2 and RESP3.

Where Redis leaves a case undefined (HGETEX with an option whose FIELDS has no count:
`HGETEX k EX 10 FIELDS` reads past its arguments), Goblin answers the arity error."""

from __future__ import annotations

import pytest
import redis

from harness import make_client
from hfe_scripts import FAR, LONG, Err
from pinned import run_pinned, write_aof
from test_hash_field_expire import events, lone_goblin  # noqa: F401 (the fixture)
from test_persistence import procs  # noqa: F401 (the fixture)

ARITY = {name: Err(f"wrong number of arguments for '{name}' command") for name in ("hgetex", "hsetex")}
NO_FIELDS = Err("Mandatory argument FIELDS is missing or not at the right position")
COUNT = Err("Number of fields must be a positive integer")
MATCH = Err("The `numfields` parameter must match the number of arguments")
NOT_INT = Err("value is not an integer or out of range")
ONE_TIME = Err("Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified")
ONE_COND = Err("Only one of FXX or FNX arguments can be specified")
WRONGTYPE = Err("WRONGTYPE Operation against a key holding the wrong kind of value")

SCRIPTS: dict[str, list] = {
    "hgetex-errors": [
        (("HGETEX", "h1", "FIELDS", "1"), ARITY["hgetex"]),
        (("HGETEX", "h1", "XFIELDX", "1", "a"), NO_FIELDS),
        (("HGETEX", "h1", "PXAT", "1", "1"), NO_FIELDS),
        (("HGETEX", "h1", "PERSIST", "1", "FIELDS", "1", "a"), NO_FIELDS),
        (("HGETEX", "h1", "FIELDS", "2", "a"), MATCH),
        (("HGETEX", "h1", "FIELDS", "0", "a"), COUNT),
        (("HGETEX", "h1", "FIELDS", "-1", "a"), COUNT),
        (("HGETEX", "h1", "FIELDS", "9223372036854775808", "a"), COUNT),
        (("HGETEX", "h1", "EX", "bla", "FIELDS", "1", "a"), NOT_INT),
        (("HGETEX", "h1", "PX", "-1", "FIELDS", "1", "a"), Err("invalid expire time, must be >= 0")),
        (("HGETEX", "h1", "EXAT", str(1 << 48), "FIELDS", "1", "a"), Err("invalid expire time in 'hgetex' command")),
        (("HGETEX", "h1", "PXAT", str((1 << 46) + 100), "FIELDS", "1", "a"), Err("invalid expire time in 'hgetex' command")),
        (("HGETEX", "h1", "EX", "10", "FIELDS"), ARITY["hgetex"]),
        (("SET", "str", "x"), b"OK"),
        (("HGETEX", "str", "FIELDS", "1", "a"), WRONGTYPE),
        (("HGETEX", "str", "FIELDS", "0", "a"), WRONGTYPE),
        (("HGETEX", "nokey", "EX", "10", "FIELDS", "2", "a", "b"), [None, None]),
    ],
    "hgetex-times": [
        (("HSET", "h", "a", "1", "b", "2", "c", "strval"), 3),
        (("HGETEX", "h", "fields", "3", "a", "b", "c"), [b"1", b"2", b"strval"]),
        (("OBJECT", "ENCODING", "h"), b"listpack"),
        (("HGETEX", "h", "PERSIST", "FIELDS", "1", "a"), [b"1"]),
        (("OBJECT", "ENCODING", "h"), b"listpackex"),
        (("HGETEX", "h", "PXAT", FAR, "FIELDS", "2", "b", "zz"), [b"2", None]),
        (("HPEXPIRETIME", "h", "FIELDS", "3", "a", "b", "c"), [-1, FAR, -1]),
        (("HGETALL", "h"), [b"b", b"2", b"a", b"1", b"c", b"strval"]),
        (("HGETEX", "h", "EX", "100", "FIELDS", "1", "c"), [b"strval"]),
        (("HTTL", "h", "FIELDS", "1", "c"), [100]),
        (("HGETEX", "h", "EXAT", FAR // 1000, "FIELDS", "1", "a"), [b"1"]),
        (("HPEXPIRETIME", "h", "FIELDS", "1", "a"), [FAR]),
        (("HGETEX", "h", "persist", "FIELDS", "3", "a", "b", "zz"), [b"1", b"2", None]),
        (("HTTL", "h", "FIELDS", "3", "a", "b", "c"), [-1, -1, 100]),
        (("HGETEX", "h", "PXAT", "1", "FIELDS", "2", "a", "zz"), [b"1", None]),
        (("HGETALL", "h"), [b"c", b"strval", b"b", b"2"]),
        (("HGETEX", "h", "PX", "0", "FIELDS", "2", "b", "c"), [b"2", b"strval"]),
        (("EXISTS", "h"), 0),
        (("HSET", "t", "long", LONG, "a", "1"), 2),
        (("HGETEX", "t", "PX", "100000", "FIELDS", "1", "a"), [b"1"]),
        (("OBJECT", "ENCODING", "t"), b"hashtable"),
        (("HTTL", "t", "FIELDS", "2", "a", "long"), [100, -1]),
    ],
    "hgetex-lazy-expiry": [
        (("DEBUG", "SET-ACTIVE-EXPIRE", "0"), b"OK"),
        (("HSETEX", "h", "PX", "1", "FIELDS", "2", "f1", "v1", "f2", "v2"), 1),
        (("SLEEP", 0.02), None),
        (("HGETEX", "h", "FIELDS", "2", "f1", "f2"), [None, None]),
        (("EXISTS", "h"), 0),
        (("HSET", "g", "a", "1", "b", "2"), 2),
        (("HPEXPIRE", "g", "1", "FIELDS", "1", "a"), [1]),
        (("SLEEP", 0.02), None),
        (("HGETEX", "g", "EX", "100", "FIELDS", "2", "a", "b"), [None, b"2"]),
        (("HLEN", "g"), 1),
        (("HTTL", "g", "FIELDS", "1", "b"), [100]),
        (("DEBUG", "SET-ACTIVE-EXPIRE", "1"), b"OK"),
    ],
    "hsetex-errors": [
        (("HSETEX", "h", "fields", "1"), ARITY["hsetex"]),
        (("HSETEX", "h", "fields", "2", "a", "b"), ARITY["hsetex"]),
        (("HSETEX", "h", "fields", "2", "a", "b", "c"), ARITY["hsetex"]),
        (("HSETEX", "h", "fields", "3", "a", "b", "c", "d", "e"), ARITY["hsetex"]),
        (("HSETEX", "h", "fields", "1", "a", "b", "unknown"), ARITY["hsetex"]),
        (("HSETEX", "h", "nx", "fields", "1", "a", "b"), Err("unknown argument: nx")),
        (("HSETEX", "h", "1", "fields", "1", "a", "b"), Err("unknown argument: 1")),
        (("HSETEX", "h", "fxx", "fxx", "EX", "100", "fields", "1", "a", "b"), ONE_COND),
        (("HSETEX", "h", "fnx", "fxx", "EX", "100", "fields", "1", "a", "b"), ONE_COND),
        (("HSETEX", "h", "EX", "100", "PX", "1000", "fields", "1", "a", "b"), ONE_TIME),
        (("HSETEX", "h", "KEEPTTL", "EX", "100", "fields", "1", "a", "b"), ONE_TIME),
        (("HSETEX", "h", "KEEPTTL", "KEEPTTL", "fields", "1", "a", "b"), ONE_TIME),
        (("HSETEX", "h", "ex", "fields", "1", "a", "b"), NOT_INT),
        (("HSETEX", "h", "EXAT", str(1 << 48), "1", "a", "b"), Err("invalid expire time in 'hsetex' command")),
        (("HSETEX", "h", "EXAT", "-1", "1", "a", "b"), Err("invalid expire time, must be >= 0")),
        (("HSETEX", "h", "EXAT", "9223372036854775808", "1", "a", "b"), NOT_INT),
        (("HSETEX", "h", "fields", "x", "a", "b"), Err("invalid number of fields")),
        (("HSETEX", "h", "fields", "0", "a", "b"), Err("invalid number of fields")),
        (("HSETEX", "h", "fields", "-1", "a", "b"), Err("invalid number of fields")),
        (("HSETEX", "h", "fields", "2147483648", "a", "b"), Err("invalid number of fields")),
        (("SET", "str", "x"), b"OK"),
        (("HSETEX", "str", "fields", "1", "a", "b"), WRONGTYPE),
        (("HSETEX", "str", "fields", "0", "a", "b"), Err("invalid number of fields")),
    ],
    "hsetex-conditions-and-times": [
        (("HSETEX", "h", "FXX", "FIELDS", "2", "f1", "v1", "f2", "v2"), 0),
        (("EXISTS", "h"), 0),
        (("HSETEX", "h", "FNX", "FIELDS", "1", "f1", "v1"), 1),
        (("HSETEX", "h", "FNX", "FIELDS", "2", "f1", "v1", "f2", "v2"), 0),
        (("HSETEX", "h", "FXX", "FIELDS", "2", "f1", "v1", "f2", "v2"), 0),
        (("HGETALL", "h"), [b"f1", b"v1"]),
        (("HSETEX", "h", "EX", "5000", "FNX", "FIELDS", "2", "f2", "v2", "f3", "v3"), 1),
        (("HTTL", "h", "FIELDS", "3", "f1", "f2", "f3"), [-1, 5000, 5000]),
        (("HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", "2", "f2", "v22", "f1", "v11"), 1),
        (("HTTL", "h", "FIELDS", "2", "f1", "f2"), [-1, 5000]),
        (("HSETEX", "h", "FIELDS", "1", "f2", "v222"), 1),
        (("HPTTL", "h", "FIELDS", "1", "f2"), [-1]),
        (("HSETEX", "h", "EXAT", FAR // 1000, "FIELDS", "1", "f1", "x"), 1),
        (("HPEXPIRETIME", "h", "FIELDS", "1", "f1"), [FAR]),
        (("HGETALL", "h"), [b"f3", b"v3", b"f1", b"x", b"f2", b"v222"]),
        (("HSETEX", "h", "PXAT", "1", "FIELDS", "2", "f1", "y", "new", "z"), 1),
        (("HGETALL", "h"), [b"f3", b"v3", b"f2", b"v222"]),
        (("HSETEX", "e", "EXAT", "1", "FIELDS", "2", "a", "b", "c", "d"), 1),
        (("EXISTS", "e"), 0),
        (("HSETEX", "t", "EX", "100", "FIELDS", "1", "long", LONG), 1),
        (("OBJECT", "ENCODING", "t"), b"hashtable"),
        (("HTTL", "t", "FIELDS", "1", "long"), [100]),
    ],
    "hsetex-lazy-expiry": [
        (("DEBUG", "SET-ACTIVE-EXPIRE", "0"), b"OK"),
        (("HSETEX", "h", "PX", "10", "FIELDS", "1", "f1", "v1"), 1),
        (("SLEEP", 0.03), None),
        (("HSETEX", "h", "FXX", "FIELDS", "1", "f1", "v11"), 0),
        (("EXISTS", "h"), 0),
        (("HSETEX", "g", "PX", "10", "FIELDS", "1", "f1", "v1"), 1),
        (("SLEEP", 0.03), None),
        (("HSETEX", "g", "FNX", "FIELDS", "1", "f1", "v11"), 1),
        (("HGETALL", "g"), [b"f1", b"v11"]),
        (("HTTL", "g", "FIELDS", "1", "f1"), [-1]),
        (("DEBUG", "SET-ACTIVE-EXPIRE", "1"), b"OK"),
    ],
    "hgetdel": [
        (("HGETDEL", "h", "FIELDS", "1", "a"), [None]),
        (("HSET", "h", "field1", "Hello", "field2", "World", "field3", "!"), 3),
        (("HGETDEL", "h", "FIELDS", "2", "field3", "field4"), [b"!", None]),
        (("HGETALL", "h"), [b"field1", b"Hello", b"field2", b"World"]),
        (("HGETDEL", "h", "FIELDS", "2", "field1", "field2"), [b"Hello", b"World"]),
        (("EXISTS", "h"), 0),
        (("HGETDEL", "h", "FIELD", "1", "a"), NO_FIELDS),
        (("HGETDEL", "h", "FIELDS", "0", "a"), COUNT),
        (("HGETDEL", "h", "FIELDS", "x", "a"), COUNT),
        (("HGETDEL", "h", "FIELDS", "2", "a"), MATCH),
        (("HGETDEL", "h", "FIELDS", "1"), Err("wrong number of arguments for 'hgetdel' command")),
        (("SET", "str", "x"), b"OK"),
        (("HGETDEL", "str", "FIELDS", "0", "a"), WRONGTYPE),
        (("DEBUG", "SET-ACTIVE-EXPIRE", "0"), b"OK"),
        (("HSETEX", "g", "FIELDS", "3", "f1", "10", "f2", "20", "f3", "value3"), 1),
        (("HPEXPIRE", "g", "5", "FIELDS", "1", "f2"), [1]),
        (("SLEEP", 0.02), None),
        (("HGETDEL", "g", "FIELDS", "2", "f2", "f3"), [None, b"value3"]),
        (("HGETALL", "g"), [b"f1", b"10"]),
        (("HGETDEL", "g", "FIELDS", "4", "f1", "f2", "f3", "f4"), [b"10", None, None, None]),
        (("EXISTS", "g"), 0),
        (("DEBUG", "SET-ACTIVE-EXPIRE", "1"), b"OK"),
    ],
}


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_pinned_on_goblin(lone_goblin, name, protocol):
    run_pinned(lone_goblin, SCRIPTS[name], protocol)


EVENT_SCRIPT = [
    ("DEBUG", "SET-ACTIVE-EXPIRE", "0"),
    ("HSETEX", "h", "FIELDS", "2", "a", "1", "b", "2"),
    ("HGETEX", "h", "EX", "100", "FIELDS", "2", "a", "zz"),
    ("HGETEX", "h", "FIELDS", "1", "a"),
    ("HGETEX", "h", "PERSIST", "FIELDS", "2", "a", "b"),
    ("HGETEX", "h", "PERSIST", "FIELDS", "1", "a"),
    ("HSETEX", "h", "PX", "1", "FIELDS", "1", "c", "3"),
    ("SLEEP", 0.02),
    ("HGETEX", "h", "EX", "100", "FIELDS", "2", "c", "b"),
    ("HGETEX", "h", "PX", "0", "FIELDS", "1", "b"),
    ("HSETEX", "h", "FNX", "FIELDS", "1", "a", "9"),
    ("HSETEX", "h", "PXAT", "1", "FIELDS", "1", "z", "9"),
    ("HGETDEL", "h", "FIELDS", "2", "a", "nope"),
    ("HSETEX", "g", "PX", "1", "FIELDS", "1", "f", "1"),
    ("SLEEP", 0.02),
    ("HSETEX", "g", "FXX", "FIELDS", "1", "f", "2"),
    ("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
]

PINNED_EVENTS = [
    (b"hset", b"h"), (b"hexpire", b"h"), (b"hpersist", b"h"), (b"hset", b"h"), (b"hexpire", b"h"),
    (b"hexpired", b"h"), (b"hexpire", b"h"), (b"hdel", b"h"), (b"hset", b"h"), (b"hdel", b"h"),
    (b"hdel", b"h"), (b"del", b"h"),
    (b"hset", b"g"), (b"hexpire", b"g"), (b"hexpired", b"g"), (b"del", b"g"),
]


def test_keyspace_events_pinned(lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    assert events(c, EVENT_SCRIPT) == PINNED_EVENTS
    c.close()


AOF_SCRIPT = [
    ("HSETEX", "h3", "FIELDS", "1", "f1", "v1"),
    ("HSETEX", "h3", "FXX", "FIELDS", "1", "f1", "v11"),
    ("HSETEX", "h3", "FNX", "FIELDS", "1", "f2", "v22"),
    ("HSETEX", "h3", "KEEPTTL", "FIELDS", "1", "f2", "v22"),
    ("HSETEX", "h3", "FNX", "FIELDS", "2", "f1", "v1", "f2", "v2"),
    ("HSETEX", "h3", "EX", "100", "FIELDS", "1", "f1", "v111"),
    ("HSETEX", "h3", "FXX", "px", "10000", "FIELDS", "1", "f1", "v111"),
    ("HSETEX", "h3", "PXAT", FAR, "FIELDS", "1", "f1", "v111"),
    ("HSETEX", "h3", "PX", "0", "FIELDS", "1", "f1", "v111"),
    ("HSETEX", "h3", "PX", "0", "FIELDS", "3", "f1", "v2", "f2", "v2", "f3", "v3"),
    ("HSETEX", "h4", "FIELDS", "3", "f1", "v1", "f2", "v2", "f3", "v3"),
    ("HGETEX", "h4", "FIELDS", "1", "f1"),
    ("HGETEX", "h4", "EX", "100", "FIELDS", "1", "f1"),
    ("HGETEX", "h4", "PXAT", FAR, "FIELDS", "2", "f1", "nope"),
    ("HGETEX", "h4", "PX", "0", "FIELDS", "1", "f1"),
    ("HGETEX", "h4", "PX", "0", "FIELDS", "3", "f1", "f2", "f3"),
    ("HSETEX", "h4", "EX", "100", "FIELDS", "1", "f4", "v4"),
    ("HGETEX", "h4", "PERSIST", "FIELDS", "1", "f4"),
    ("HGETEX", "h4", "PERSIST", "FIELDS", "1", "f4"),
    ("HGETDEL", "h4", "FIELDS", "2", "f4", "nope"),
    ("HGETDEL", "h4", "FIELDS", "1", "nope"),
]

# Times relative to the command's clock are replaced by T.
PINNED_AOF = [
    [b"SELECT", b"0"],
    [b"HSETEX", b"h3", b"FIELDS", b"1", b"f1", b"v1"],
    [b"HSETEX", b"h3", b"FXX", b"FIELDS", b"1", b"f1", b"v11"],
    [b"HSETEX", b"h3", b"FNX", b"FIELDS", b"1", b"f2", b"v22"],
    [b"HSETEX", b"h3", b"KEEPTTL", b"FIELDS", b"1", b"f2", b"v22"],
    [b"HSETEX", b"h3", b"PXAT", b"T", b"FIELDS", b"1", b"f1", b"v111"],
    [b"HSETEX", b"h3", b"FXX", b"PXAT", b"T", b"FIELDS", b"1", b"f1", b"v111"],
    [b"HSETEX", b"h3", b"PXAT", str(FAR).encode(), b"FIELDS", b"1", b"f1", b"v111"],
    [b"HDEL", b"h3", b"f1"],
    [b"MULTI"], [b"HDEL", b"h3", b"f1"], [b"HDEL", b"h3", b"f2"], [b"HDEL", b"h3", b"f3"], [b"EXEC"],
    [b"HSETEX", b"h4", b"FIELDS", b"3", b"f1", b"v1", b"f2", b"v2", b"f3", b"v3"],
    [b"HPEXPIREAT", b"h4", b"T", b"FIELDS", b"1", b"f1"],
    [b"HPEXPIREAT", b"h4", str(FAR).encode(), b"FIELDS", b"2", b"f1", b"nope"],
    [b"HDEL", b"h4", b"f1"],
    [b"MULTI"], [b"HDEL", b"h4", b"f2"], [b"HDEL", b"h4", b"f3"], [b"EXEC"],
    [b"HSETEX", b"h4", b"PXAT", b"T", b"FIELDS", b"1", b"f4", b"v4"],
    [b"HPERSIST", b"h4", b"FIELDS", b"1", b"f4"],
    [b"HDEL", b"h4", b"f4", b"nope"],
]


def test_aof_pinned_and_replayed(procs, tmp_path):
    assert write_aof(procs, tmp_path, AOF_SCRIPT) == PINNED_AOF
    g = procs[-1]
    g.kill9()
    g.start()
    c = g.client()
    assert [c.hgetall("h3"), c.hgetall("h4"), c.exists("h4")] == [{}, {}, 0]
    c.close()


def test_command_info_pinned(lone_goblin):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    [hgetex, hsetex, hgetdel] = c.execute_command("COMMAND", "INFO", "hgetex", "hsetex", "hgetdel")
    assert hgetex[:7] == [b"hgetex", -5, [b"write", b"fast"], 1, 1, 1, [b"@write", b"@hash", b"@fast"]]
    assert hsetex[:7] == [b"hsetex", -6, [b"write", b"denyoom", b"fast"], 1, 1, 1,
                          [b"@write", b"@hash", b"@fast"]]
    assert hgetdel[:7] == [b"hgetdel", -5, [b"write", b"fast"], 1, 1, 1, [b"@write", b"@hash", b"@fast"]]
    assert hgetex[8][0][:2] == [b"notes", b"RW and UPDATE because it changes the TTL"]
    assert c.execute_command("COMMAND", "GETKEYSANDFLAGS", "hgetdel", "k", "FIELDS", "1", "f") == \
        [[b"k", [b"RW", b"access", b"delete"]]]
    docs = c.execute_command("COMMAND", "DOCS", "hsetex")
    doc = dict(zip(docs[1][::2], docs[1][1::2]))
    assert doc[b"since"] == b"8.0.0" and doc[b"group"] == b"hash"
    assert [dict(zip(a[::2], a[1::2]))[b"name"] for a in doc[b"arguments"]] == \
        [b"key", b"condition", b"expiration", b"fields"]
    c.close()


def test_acl_categories(lone_goblin):
    c = make_client(lone_goblin)
    for cat in ("hash", "write", "fast"):
        names = set(c.execute_command("ACL", "CAT", cat))
        assert {b"hgetex", b"hsetex", b"hgetdel"} <= names, cat
    assert b"hgetex" not in set(c.execute_command("ACL", "CAT", "read"))
    c.close()


def test_resp3_nulls(lone_goblin):
    c = make_client(lone_goblin, protocol=3)
    c.flushall()
    c.hset("h", "a", "1")
    assert c.execute_command("HGETEX", "h", "FIELDS", 2, "a", "b") == [b"1", None]
    assert c.execute_command("HGETDEL", "h", "FIELDS", 2, "b", "a") == [None, b"1"]
    c.close()


def test_multi_and_replica_read_only(lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    p = c.pipeline(transaction=True)
    p.execute_command("HSETEX", "h", "EX", 100, "FIELDS", 1, "a", "1")
    p.execute_command("HGETEX", "h", "PERSIST", "FIELDS", 1, "a")
    p.execute_command("HGETDEL", "h", "FIELDS", 1, "a")
    assert p.execute() == [1, [b"1"], [b"1"]]
    assert c.exists("h") == 0
    with pytest.raises(redis.ResponseError):
        c.execute_command("HSETEX", "h", "FIELDS", 1)
    c.close()


def test_hincrbyfloat_on_a_timed_field_replays_as_hsetex_keepttl(procs, tmp_path):
    """Redis 8's t_hash.c replays HINCRBYFLOAT as HSETEX key KEEPTTL FIELDS 1 field value,
    so the replay keeps the field's time; Goblin does so for a field with a time and keeps
    Redis 7.2's HSET for one without (a 7.2 reader of the stream understands it)."""
    script = [("HSET", "h", "a", "1", "b", "1"), ("HPEXPIREAT", "h", str(FAR), "FIELDS", "1", "a"),
              ("HINCRBYFLOAT", "h", "a", "0.5"), ("HINCRBYFLOAT", "h", "b", "0.5")]
    assert write_aof(procs, tmp_path, script) == [
        [b"SELECT", b"0"],
        [b"HSET", b"h", b"a", b"1", b"b", b"1"],
        [b"HPEXPIREAT", b"h", str(FAR).encode(), b"FIELDS", b"1", b"a"],
        [b"HSETEX", b"h", b"KEEPTTL", b"FIELDS", b"1", b"a", b"1.5"],
        [b"HSET", b"h", b"b", b"1.5"],
    ]
