"""MSETEX (Redis 8.4), pinned on Goblin alone (no Redis 8.4 at hand) from redis.io's MSETEX
page and Redis's unit/type/string.tcl: "invalid numkeys value" outside 1..2^31-1, "wrong number
of key-value pairs" when the pairs run short, syntax errors for unknown or conflicting options.
Replayed with EX / PX / EXAT as PXAT and the absolute time (the rest as given); Redis's own
record of that is not at hand, Valkey's MSETEX tests say the same."""

from __future__ import annotations

import pytest

from harness import make_client
from hfe_scripts import FAR, Err
from pinned import run_pinned, write_aof
from test_hash_field_expire import events, lone_goblin  # noqa: F401 (the fixture)
from test_persistence import procs  # noqa: F401 (the fixture)

SYNTAX = Err("syntax error")

SCRIPT = [
    (("MSETEX", "2", "a", "1", "b", "2", "EX", "100"), 1),
    (("MGET", "a", "b"), [b"1", b"2"]),
    (("TTL", "a"), 100),
    (("TTL", "b"), 100),
    (("MSETEX", "1", "a", "x", "KEEPTTL"), 1),
    (("TTL", "a"), 100),
    (("MSETEX", "1", "a", "y"), 1),
    (("TTL", "a"), -1),
    (("MSETEX", "2", "a", "1", "new", "2", "NX", "PX", "5000"), 0),
    (("EXISTS", "new"), 0),
    (("MSETEX", "2", "new", "1", "new2", "2", "PXAT", FAR, "nx"), 1),
    (("PEXPIRETIME", "new2"), FAR),
    (("MSETEX", "2", "a", "z", "nope", "z", "XX"), 0),
    (("GET", "a"), b"y"),
    (("MSETEX", "2", "a", "z", "b", "z", "EXAT", FAR // 1000, "XX"), 1),
    (("PEXPIRETIME", "b"), FAR),
    (("RPUSH", "l", "x"), 1),
    (("MSETEX", "1", "l", "s"), 1),
    (("GET", "l"), b"s"),
    (("MSETEX",), Err("wrong number of arguments for 'msetex' command")),
    (("MSETEX", "key1", "val1", "ex", "10"), Err("invalid numkeys value")),
    (("MSETEX", "0", "key1", "val1"), Err("invalid numkeys value")),
    (("MSETEX", "2147483648", "key1", "val1", "ex", "10"), Err("invalid numkeys value")),
    (("MSETEX", "2147483647", "key1", "val1", "ex", "10"), Err("wrong number of key-value pairs")),
    (("MSETEX", "2", "key1", "val1", "key2"), Err("wrong number of key-value pairs")),
    (("MSETEX", "1", "key1", "val1", "invalid_flag"), SYNTAX),
    (("MSETEX", "1", "key1", "val1", "GET"), SYNTAX),
    (("MSETEX", "1", "key1", "val1", "IFEQ", "x"), SYNTAX),
    (("MSETEX", "2", "key1", "val1", "key2", "val2", "nx", "xx", "ex", "10"), SYNTAX),
    (("MSETEX", "2", "key1", "val1", "key2", "val2", "ex", "10", "px", "5000"), SYNTAX),
    (("MSETEX", "2", "key1", "val1", "key2", "val2", "keepttl", "ex", "10"), SYNTAX),
    (("MSETEX", "1", "key1", "val1", "ex", "0"), Err("invalid expire time in 'msetex' command")),
    (("MSETEX", "1", "key1", "val1", "ex", "x"), Err("value is not an integer or out of range")),
    (("EXISTS", "key1", "key2"), 0),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_script_pinned_on_goblin(lone_goblin, protocol):
    run_pinned(lone_goblin, SCRIPT, protocol)


def test_events_keys_and_aof(procs, tmp_path, lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    assert events(c, [("MSETEX", "2", "a", "1", "b", "2", "EX", "100"), ("MSETEX", "1", "a", "1", "XX")]) == [
        (b"set", b"a"), (b"expire", b"a"), (b"set", b"b"), (b"expire", b"b"), (b"set", b"a")]
    c.response_callbacks = {}
    assert c.execute_command("COMMAND", "GETKEYS", "MSETEX", "2", "k1", "v1", "k2", "v2", "KEEPTTL") == [b"k1", b"k2"]
    [info] = c.execute_command("COMMAND", "INFO", "msetex")
    assert info[:7] == [b"msetex", -4, [b"write", b"denyoom", b"movablekeys"], 0, 0, 0,
                        [b"@write", b"@string", b"@slow"]]
    c.close()
    script = [("MSETEX", "2", "a", "1", "b", "2", "ex", "100", "NX"), ("MSETEX", "1", "a", "1", "NX"),
              ("MSETEX", "1", "a", "2", "KEEPTTL"), ("MSETEX", "1", "c", "3", "PXAT", FAR)]
    assert write_aof(procs, tmp_path, script) == [
        [b"SELECT", b"0"],
        [b"MSETEX", b"2", b"a", b"1", b"b", b"2", b"PXAT", b"T", b"NX"],
        [b"MSETEX", b"1", b"a", b"2", b"KEEPTTL"],
        [b"MSETEX", b"1", b"c", b"3", b"PXAT", str(FAR).encode()],
    ]
