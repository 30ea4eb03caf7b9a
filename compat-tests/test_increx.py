"""INCREX (Redis 8.8), pinned on Goblin alone (no Redis 8.8 at hand) from redis.io's INCREX
page and Redis's unit/type/increx.tcl (its cases are run here: replies, bounds, SATURATE,
type limits, expiry options, ENX, events, and the SET / DEL / UNLINK it replays as). That
test matches errors by a fragment only ("*Increment is not an integer*", "*applied increment
would overflow*", ...); the full texts pinned here are Goblin's reading of those fragments.
A bound that does not parse gets "value is not an integer or out of range" (BYINT) or
"value is not a valid float" (BYFLOAT); neither source says. INCRBY and INCRBYFLOAT, whose
arithmetic INCREX shares, stay compared with Redis in the string tests."""

from __future__ import annotations

import socket
import time

import pytest

from harness import make_client
from hfe_scripts import FAR, Err
from pinned import run_pinned, write_aof
from test_hash_field_expire import events, lone_goblin  # noqa: F401 (the fixture)
from test_persistence import procs  # noqa: F401 (the fixture)

SYNTAX = Err("syntax error")
MAX, MIN = "9223372036854775807", "-9223372036854775808"

# Replies in integer mode (the same in RESP2 and RESP3).
SCRIPT = [
    (("INCREX", "mykey"), [1, 1]),
    (("INCREX", "mykey"), [2, 1]),
    (("SET", "mykey", "100"), b"OK"),
    (("INCREX", "mykey", "BYINT", "5"), [105, 5]),
    (("INCREX", "mykey", "BYINT", "-10"), [95, -10]),
    (("INCREX", "mykey", "BYINT", "0"), [95, 0]),
    (("SET", "mykey", "50"), b"OK"),
    (("INCREX", "mykey", "BYINT", "100", "UBOUND", "80", "SATURATE"), [80, 30]),
    (("GET", "mykey"), b"80"),
    (("SET", "mykey", "10"), b"OK"),
    (("INCREX", "mykey", "BYINT", "-100", "LBOUND", "0", "SATURATE"), [0, -10]),
    (("SET", "mykey", "5"), b"OK"),
    (("INCREX", "mykey", "BYINT", "2", "LBOUND", "0", "UBOUND", "10"), [7, 2]),
    (("INCREX", "mykey", "BYINT", "10", "LBOUND", "0", "UBOUND", "10"), [7, 0]),
    (("INCREX", "mykey", "BYINT", "-20", "LBOUND", "0", "UBOUND", "10"), [7, 0]),
    (("INCREX", "mykey", "BYINT", "10", "LBOUND", "0", "UBOUND", "10", "SATURATE"), [10, 3]),
    (("INCREX", "mykey", "BYINT", "-20", "LBOUND", "0", "UBOUND", "10", "SATURATE"), [0, -10]),
    (("INCREX", "mykey", "BYINT", "10", "UBOUND", "10"), [10, 10]),
    (("SET", "mykey", "50"), b"OK"),
    (("INCREX", "mykey", "BYINT", "5", "UBOUND", "30"), [50, 0]),
    (("INCREX", "mykey", "BYINT", "5", "UBOUND", "30", "SATURATE"), [30, -20]),
    (("SET", "mykey", "-50"), b"OK"),
    (("INCREX", "mykey", "BYINT", "-5", "LBOUND", "-30", "SATURATE"), [-30, 20]),
    (("SET", "mykey", "50"), b"OK"),
    (("INCREX", "mykey", "BYINT", "-25", "UBOUND", "30"), [25, -25]),
    (("SET", "mykey", "9223372036854775800"), b"OK"),
    (("INCREX", "mykey", "BYINT", "9223372036854775800"), [9223372036854775800, 0]),
    (("INCREX", "mykey", "BYINT", "9223372036854775800", "SATURATE"), [9223372036854775807, 7]),
    (("SET", "mykey", "-9223372036854775800"), b"OK"),
    (("INCREX", "mykey", "BYINT", "-9223372036854775800", "LBOUND", MIN, "SATURATE"), [-9223372036854775808, -8]),
    (("SET", "mykey", "9223372036854775800"), b"OK"),
    (("INCREX", "mykey", "BYINT", "1", "SATURATE", "UBOUND", MIN), Err("applied increment would overflow")),
    (("DEL", "mykey"), 1),
    (("INCREX", "mykey", "BYINT", "5", "LBOUND", "10"), [0, 0]),
    (("INCREX", "mykey", "BYINT", "15", "UBOUND", "10"), [0, 0]),
    (("EXISTS", "mykey"), 0),
    (("INCREX", "mykey", "LBOUND", "0", "BYINT", "100", "UBOUND", "10", "SATURATE"), [10, 10]),
    (("OBJECT", "ENCODING", "mykey"), b"int"),
    # Expiry options.
    (("SET", "mykey", "10"), b"OK"),
    (("INCREX", "mykey", "BYINT", "100", "UBOUND", "15", "EX", "100"), [10, 0]),
    (("TTL", "mykey"), -1),
    (("INCREX", "mykey", "BYINT", "3", "UBOUND", "20", "EX", "200"), [13, 3]),
    (("TTL", "mykey"), 200),
    (("INCREX", "mykey"), [14, 1]),
    (("TTL", "mykey"), 200),
    (("INCREX", "mykey", "PX", "100000"), [15, 1]),
    (("TTL", "mykey"), 100),
    (("INCREX", "mykey", "PXAT", FAR), [16, 1]),
    (("PEXPIRETIME", "mykey"), FAR),
    (("INCREX", "mykey", "EXAT", FAR // 1000 + 10), [17, 1]),
    (("PEXPIRETIME", "mykey"), FAR + 10000),
    (("INCREX", "mykey", "EX", "10", "ENX"), [18, 1]),
    (("PEXPIRETIME", "mykey"), FAR + 10000),
    (("INCREX", "mykey", "EXAT", "1", "ENX"), [19, 1]),
    (("PEXPIRETIME", "mykey"), FAR + 10000),
    (("INCREX", "mykey", "PERSIST"), [20, 1]),
    (("TTL", "mykey"), -1),
    (("INCREX", "mykey", "PERSIST"), [21, 1]),
    (("INCREX", "mykey", "EX", "100", "ENX"), [22, 1]),
    (("TTL", "mykey"), 100),
    (("INCREX", "mykey", "EXAT", "1"), [23, 1]),
    (("EXISTS", "mykey"), 0),
    (("INCREX", "mykey", "PXAT", "1"), [1, 1]),
    (("EXISTS", "mykey"), 0),
    (("INCREX", "newkey", "BYINT", "5", "EX", "100", "ENX"), [5, 5]),
    (("TTL", "newkey"), 100),
    # Errors.
    (("INCREX",), Err("wrong number of arguments for 'increx' command")),
    (("INCREX", "k", "FOO"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "FOO"), SYNTAX),
    (("INCREX", "k", "BYINT"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "BYFLOAT", "1.5"), SYNTAX),
    (("INCREX", "k", "BYFLOAT", "1.5", "BYINT", "1"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "EX", "10", "PX", "5000"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "EX", "10", "PERSIST"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "PERSIST", "EX", "10"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "PERSIST", "ENX"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "ENX", "PERSIST"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "BYINT", "2"), SYNTAX),
    (("INCREX", "k", "LBOUND", "0", "LBOUND", "1"), SYNTAX),
    (("INCREX", "k", "UBOUND", "9", "UBOUND", "8"), SYNTAX),
    (("INCREX", "k", "SATURATE", "SATURATE", "LBOUND", "0"), SYNTAX),
    (("INCREX", "k", "SAT", "LBOUND", "0"), SYNTAX),
    (("INCREX", "k", "ENX", "ENX", "EX", "10"), SYNTAX),
    (("INCREX", "k", "PERSIST", "PERSIST"), SYNTAX),
    (("INCREX", "k", "EX", "10", "EX", "20"), SYNTAX),
    (("INCREX", "k", "BYINT", "1", "ENX"), Err("ENX flag requires an expiration")),
    (("INCREX", "k", "ENX"), Err("ENX flag requires an expiration")),
    (("INCREX", "k", "BYINT", "abc"), Err("Increment is not an integer or out of range")),
    (("INCREX", "k", "BYINT", "1.5"), Err("Increment is not an integer or out of range")),
    (("INCREX", "k", "BYFLOAT", "abc"), Err("Increment is not a valid float")),
    (("INCREX", "k", "BYFLOAT", "+inf"), Err("BYFLOAT increment cannot be Infinity")),
    (("INCREX", "k", "BYINT", "1", "LBOUND", "10", "UBOUND", "5"), Err("LBOUND can't be greater than UBOUND")),
    (("INCREX", "k", "BYFLOAT", "0.5", "LBOUND", "10.5", "UBOUND", "1.5"), Err("LBOUND can't be greater than UBOUND")),
    (("INCREX", "k", "BYINT", "1", "LBOUND", "x"), Err("value is not an integer or out of range")),
    (("INCREX", "k", "BYFLOAT", "1", "UBOUND", "x"), Err("value is not a valid float")),
    (("INCREX", "k", "BYINT", "1", "EX", "0"), Err("invalid expire time in 'increx' command")),
    (("INCREX", "k", "BYINT", "1", "PX", "0"), Err("invalid expire time in 'increx' command")),
    (("INCREX", "k", "BYINT", "1", "EX", "-1"), Err("invalid expire time in 'increx' command")),
    (("RPUSH", "mylist", "a"), 1),
    (("INCREX", "mylist"), Err("WRONGTYPE Operation against a key holding the wrong kind of value")),
    (("INCREX", "mylist", "BYFLOAT", "1.5"), Err("WRONGTYPE Operation against a key holding the wrong kind of value")),
    (("SET", "s", "hello"), b"OK"),
    (("INCREX", "s", "BYFLOAT", "1.5"), Err("value is not a valid float")),
    (("INCREX", "s", "BYINT", "1"), Err("value is not an integer or out of range")),
    (("SET", "s", "1.5"), b"OK"),
    (("INCREX", "s"), Err("value is not an integer or out of range")),
    (("SET", "s", "inf"), b"OK"),
    (("INCREX", "s", "BYFLOAT", "1"), Err("value cannot be Infinity")),
    (("GET", "s"), b"inf"),
    (("EXISTS", "k"), 0),
]

# BYFLOAT replies: bulk strings in RESP2 (doubles in RESP3, below).
FLOAT_SCRIPT = [
    (("SET", "f", "1.5"), b"OK"),
    (("INCREX", "f", "BYFLOAT", "0.25"), [b"1.75", b"0.25"]),
    (("INCREX", "f", "BYFLOAT", "1"), [b"2.75", b"1"]),
    (("SET", "f", "10"), b"OK"),
    (("INCREX", "f", "BYFLOAT", "100", "UBOUND", "42.5", "SATURATE"), [b"42.5", b"32.5"]),
    (("SET", "f", "0"), b"OK"),
    (("INCREX", "f", "BYFLOAT", "-100", "LBOUND", "-5.5", "SATURATE"), [b"-5.5", b"-5.5"]),
    (("SET", "f", "50.5"), b"OK"),
    (("INCREX", "f", "BYFLOAT", "5.5", "UBOUND", "30"), [b"50.5", b"0"]),
    (("INCREX", "f", "BYFLOAT", "5.5", "UBOUND", "30", "SATURATE"), [b"30", b"-20.5"]),
    (("SET", "f", "10.0"), b"OK"),
    (("INCREX", "f", "BYFLOAT", "10.0", "UBOUND", "15.5"), [b"10", b"0"]),
    (("GET", "f"), b"10.0"),
    (("INCREX", "f", "BYFLOAT", "0.1"), [b"10.1", b"0.1"]),
    (("DEL", "f"), 1),
    (("INCREX", "f", "BYFLOAT", "15.5", "UBOUND", "10"), [b"0", b"0"]),
    (("INCREX", "f", "BYFLOAT", "-0.5", "UBOUND", "-1.5"), [b"0", b"0"]),
    (("EXISTS", "f"), 0),
    (("INCREX", "f", "BYFLOAT", "5.5", "UBOUND", "10"), [b"5.5", b"5.5"]),
    (("INCREX", "f", "BYINT", "1"), Err("value is not an integer or out of range")),
    (("SET", "f", "-inf"), b"OK"),
    (("INCREX", "f", "BYFLOAT", "0", "LBOUND", "-100"), Err("value cannot be Infinity")),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_script_pinned_on_goblin(lone_goblin, protocol):
    run_pinned(lone_goblin, SCRIPT, protocol)


def test_float_replies_pinned_on_goblin(lone_goblin):
    run_pinned(lone_goblin, FLOAT_SCRIPT)


def test_float_replies_are_doubles_in_resp3(lone_goblin):
    c = make_client(lone_goblin)
    c.set("f", "1.5")
    c.close()
    with socket.create_connection(("127.0.0.1", lone_goblin.port)) as s:
        s.sendall(b"HELLO 3\r\n")
        time.sleep(0.2)
        s.recv(4096)
        s.sendall(b"INCREX f BYFLOAT 0.25\r\n")
        time.sleep(0.2)
        assert s.recv(4096) == b"*2\r\n,1.75\r\n,0.25\r\n"


def test_events_and_aof(procs, tmp_path, lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    assert events(c, [("INCREX", "k", "BYINT", "5"), ("INCREX", "k", "BYFLOAT", "0.5"),
                      ("SET", "k", "10", "EX", "100"), ("INCREX", "k", "BYINT", "1", "PERSIST"),
                      ("INCREX", "k", "BYINT", "1", "EX", "100"), ("INCREX", "k", "BYINT", "1", "EX", "200", "ENX"),
                      ("INCREX", "k", "UBOUND", "0"), ("INCREX", "k", "BYINT", "1", "EXAT", "1"),
                      ("INCREX", "k", "BYINT", "1", "EXAT", "1")]) == [
        (b"incrby", b"k"), (b"incrbyfloat", b"k"), (b"set", b"k"), (b"expire", b"k"),
        (b"incrby", b"k"), (b"persist", b"k"), (b"incrby", b"k"), (b"expire", b"k"), (b"incrby", b"k"),
        (b"del", b"k")]
    c.response_callbacks = {}
    [info] = c.execute_command("COMMAND", "INFO", "increx")
    assert info[:7] == [b"increx", -2, [b"write", b"denyoom", b"fast"], 1, 1, 1,
                        [b"@write", b"@string", b"@fast"]]
    assert b"increx" in set(c.execute_command("ACL", "CAT", "string"))
    c.close()
    script = [("SET", "k", "10"), ("INCREX", "k", "BYINT", "5"), ("INCREX", "k", "BYFLOAT", "0.5"),
              ("SET", "k", "10", "EX", "500"), ("INCREX", "k", "BYINT", "1", "EX", "10", "ENX"),
              ("INCREX", "k", "BYINT", "1", "PERSIST"), ("INCREX", "k", "BYINT", "1", "PXAT", FAR),
              ("INCREX", "k", "BYINT", "100", "UBOUND", "15"), ("INCREX", "k", "BYINT", "100", "UBOUND", "80", "SATURATE"),
              ("INCREX", "k", "EXAT", "1"), ("INCREX", "k", "EXAT", "1"), ("CONFIG", "SET", "lazyfree-lazy-expire", "yes"),
              ("INCREX", "j"), ("INCREX", "j", "PXAT", "1")]
    assert write_aof(procs, tmp_path, script) == [
        [b"SELECT", b"0"],
        [b"SET", b"k", b"10"],
        [b"SET", b"k", b"15", b"KEEPTTL"],
        [b"SET", b"k", b"15.5", b"KEEPTTL"],
        [b"SET", b"k", b"10", b"PXAT", b"T"],
        [b"SET", b"k", b"11", b"KEEPTTL"],
        [b"SET", b"k", b"12"],
        [b"SET", b"k", b"13", b"PXAT", str(FAR).encode()],
        [b"SET", b"k", b"80", b"KEEPTTL"],
        [b"DEL", b"k"],
        [b"SET", b"j", b"1", b"KEEPTTL"],
        [b"UNLINK", b"j"],
    ]
