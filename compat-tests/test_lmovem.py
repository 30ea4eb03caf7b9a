"""LMOVEM and BLMOVEM (Redis 8.10), pinned on Goblin alone (no Redis 8.10 at hand) from
redis.io's LMOVEM and BLMOVEM pages: COUNT moves up to count, EXACTLY all or nothing (nil);
OBO pushes each element as it was popped (all popped first: a list moved onto itself OBO has
them reversed in place), BULK keeps their source order; the reply lists the moved elements
in destination order; a missing source gives the empty array (nil with EXACTLY). BLMOVEM
waits while the source is empty (COUNT) or shorter than EXACTLY's number, a push that
lengthens the list waking it; it replays as LMOVEM ... EXACTLY <moved> (redis/redis#15405).
The pages give no error texts: a how-many block of another shape is a syntax error, and a
count that is not positive gets LMPOP's "count should be greater than 0". LMOVE, whose
code LMOVEM shares, stays compared with Redis in test_list_basic.py and
test_list_blocking.py."""

from __future__ import annotations

import time

import pytest

from harness import make_client
from hfe_scripts import Err
from pinned import run_pinned, write_aof
from test_hash_field_expire import events, lone_goblin  # noqa: F401 (the fixture)
from test_persistence import procs  # noqa: F401 (the fixture)

SYNTAX = Err("syntax error")
WRONGTYPE = Err("WRONGTYPE Operation against a key holding the wrong kind of value")

SCRIPT = [
    # redis.io's example.
    (("RPUSH", "mylist", "1", "2", "3", "4"), 4),
    (("LMOVEM", "mylist", "myotherlist", "LEFT", "LEFT", "COUNT", "2", "OBO"), [b"2", b"1"]),
    (("LRANGE", "mylist", "0", "-1"), [b"3", b"4"]),
    (("LRANGE", "myotherlist", "0", "-1"), [b"2", b"1"]),
    (("LMOVEM", "mylist", "myotherlist", "LEFT", "LEFT", "EXACTLY", "5", "BULK"), None),
    (("RPUSH", "somelist", "a", "b", "c"), 3),
    (("LMOVEM", "somelist", "somelist", "LEFT", "LEFT", "EXACTLY", "2", "OBO"), [b"b", b"a"]),
    (("LRANGE", "somelist", "0", "-1"), [b"b", b"a", b"c"]),
    (("LMOVEM", "somelist", "somelist", "LEFT", "LEFT", "EXACTLY", "2", "BULK"), [b"b", b"a"]),
    (("LRANGE", "somelist", "0", "-1"), [b"b", b"a", b"c"]),
    # Each pair of ends, OBO and BULK, from s = 1..6 to d = x y.
    (("DEL", "mylist", "myotherlist", "somelist"), 3),
    (("RPUSH", "s", "1", "2", "3", "4", "5", "6"), 6),
    (("RPUSH", "d", "x", "y"), 2),
    (("LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", "2", "OBO"), [b"1", b"2"]),
    (("LMOVEM", "s", "d", "RIGHT", "RIGHT", "COUNT", "2", "obo"), [b"6", b"5"]),
    (("LRANGE", "d", "0", "-1"), [b"x", b"y", b"1", b"2", b"6", b"5"]),
    (("LMOVEM", "s", "d", "RIGHT", "LEFT", "count", "1", "BULK"), [b"4"]),
    (("LRANGE", "s", "0", "-1"), [b"3"]),
    (("RPUSH", "s", "a", "b", "c"), 4),
    (("LMOVEM", "s", "d", "RIGHT", "LEFT", "COUNT", "2", "OBO"), [b"b", b"c"]),
    (("LMOVEM", "s", "d", "RIGHT", "RIGHT", "COUNT", "2", "BULK"), [b"3", b"a"]),
    (("EXISTS", "s"), 0),
    (("LRANGE", "d", "0", "-1"), [b"b", b"c", b"4", b"x", b"y", b"1", b"2", b"6", b"5", b"3", b"a"]),
    (("RPUSH", "s", "1", "2", "3"), 3),
    (("LMOVEM", "s", "e", "LEFT", "LEFT", "COUNT", "10", "BULK"), [b"1", b"2", b"3"]),
    (("LRANGE", "e", "0", "-1"), [b"1", b"2", b"3"]),
    (("EXISTS", "s"), 0),
    # Without the block: one element, as LMOVE, in an array.
    (("LMOVEM", "e", "f", "RIGHT", "LEFT"), [b"3"]),
    (("LMOVEM", "nokey", "f", "RIGHT", "LEFT"), []),
    (("LMOVEM", "nokey", "f", "RIGHT", "LEFT", "COUNT", "3", "OBO"), []),
    (("LMOVEM", "nokey", "f", "RIGHT", "LEFT", "EXACTLY", "3", "OBO"), None),
    (("LMOVEM", "e", "f", "LEFT", "LEFT", "EXACTLY", "3", "OBO"), None),
    (("LRANGE", "e", "0", "-1"), [b"1", b"2"]),
    (("LMOVEM", "e", "f", "LEFT", "LEFT", "EXACTLY", "2", "OBO"), [b"2", b"1"]),
    (("LRANGE", "f", "0", "-1"), [b"2", b"1", b"3"]),
    (("EXISTS", "e"), 0),
    # Outside MULTI's reach BLMOVEM with enough elements is LMOVEM.
    (("BLMOVEM", "f", "g", "LEFT", "RIGHT", "0", "EXACTLY", "2", "BULK"), [b"2", b"1"]),
    (("BLMOVEM", "f", "g", "LEFT", "RIGHT", "0"), [b"3"]),
    (("MULTI",), b"OK"),
    (("BLMOVEM", "f", "g", "LEFT", "RIGHT", "0"), b"QUEUED"),
    (("BLMOVEM", "g", "f", "LEFT", "RIGHT", "0", "EXACTLY", "4", "OBO"), b"QUEUED"),
    (("BLMOVEM", "g", "f", "LEFT", "RIGHT", "0", "COUNT", "4", "OBO"), b"QUEUED"),
    (("EXEC",), [None, None, [b"2", b"1", b"3"]]),
    # Errors.
    (("SET", "str", "v"), b"OK"),
    (("LMOVEM", "str", "f", "LEFT", "LEFT"), WRONGTYPE),
    (("LMOVEM", "f", "str", "LEFT", "LEFT", "COUNT", "2", "OBO"), WRONGTYPE),
    (("LRANGE", "f", "0", "-1"), [b"2", b"1", b"3"]),
    (("LMOVEM", "nokey", "str", "LEFT", "LEFT"), []),
    (("LMOVEM", "f", "g", "UP", "LEFT"), SYNTAX),
    (("LMOVEM", "f", "g", "LEFT", "DOWN"), SYNTAX),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "COUNT"), SYNTAX),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "COUNT", "2"), SYNTAX),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "COUNT", "2", "OBO", "X"), SYNTAX),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "MANY", "2", "OBO"), SYNTAX),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "COUNT", "2", "ONE"), SYNTAX),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "COUNT", "0", "OBO"), Err("count should be greater than 0")),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "EXACTLY", "-1", "BULK"), Err("count should be greater than 0")),
    (("LMOVEM", "f", "g", "LEFT", "LEFT", "EXACTLY", "x", "BULK"), Err("count should be greater than 0")),
    (("LMOVEM", "f", "g", "LEFT"), Err("wrong number of arguments for 'lmovem' command")),
    (("BLMOVEM", "f", "g", "LEFT", "LEFT"), Err("wrong number of arguments for 'blmovem' command")),
    (("BLMOVEM", "f", "g", "LEFT", "LEFT", "x"), Err("timeout is not a float or out of range")),
    (("BLMOVEM", "f", "g", "LEFT", "LEFT", "-1"), Err("timeout is negative")),
    (("BLMOVEM", "f", "g", "LEFT", "LEFT", "0", "COUNT", "2"), SYNTAX),
    (("BLMOVEM", "f", "g", "LEFT", "LEFT", "0", "EXACTLY", "0", "BULK"), Err("count should be greater than 0")),
    (("LRANGE", "f", "0", "-1"), [b"2", b"1", b"3"]),
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_script_pinned_on_goblin(lone_goblin, protocol):
    run_pinned(lone_goblin, SCRIPT, protocol)


def blocked_clients(c) -> int:
    info = c.execute_command("INFO", "clients")
    return int(info.split(b"blocked_clients:")[1].split(b"\r\n")[0])


def wait_blocked(c, n: int) -> None:
    deadline = time.monotonic() + 5
    while blocked_clients(c) != n:
        assert time.monotonic() < deadline, f"blocked_clients = {blocked_clients(c)}, wanted {n}"
        time.sleep(0.01)


def start_blocked(server, *cmd):
    """A client that sent `cmd` and waits for its reply."""
    c = make_client(server)
    c.response_callbacks = {}
    conn = c.connection_pool.get_connection()
    conn.send_command(*cmd)
    return c, conn


def test_blmovem_waits_for_enough_elements(lone_goblin):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    c.execute_command("FLUSHALL")
    w1, exact = start_blocked(lone_goblin, "BLMOVEM", "src", "dst", "LEFT", "RIGHT", "0", "EXACTLY", "3", "BULK")
    wait_blocked(c, 1)
    w2, count = start_blocked(lone_goblin, "BLMOVEM", "other", "dst", "RIGHT", "LEFT", "0", "COUNT", "5", "OBO")
    wait_blocked(c, 2)
    assert c.execute_command("RPUSH", "src", "a") == 1
    assert c.execute_command("RPUSH", "src", "b") == 2
    time.sleep(0.05)
    assert blocked_clients(c) == 2
    assert not exact.can_read(timeout=0)
    # A push onto the existing list that makes it long enough wakes the EXACTLY wait.
    assert c.execute_command("RPUSH", "src", "c", "d") == 4
    assert exact.read_response() == [b"a", b"b", b"c"]
    assert c.execute_command("LRANGE", "src", "0", "-1") == [b"d"]
    # COUNT wakes on the first element.
    assert c.execute_command("RPUSH", "other", "1", "2") == 2
    assert count.read_response() == [b"1", b"2"]
    assert c.execute_command("LRANGE", "dst", "0", "-1") == [b"1", b"2", b"a", b"b", b"c"]
    assert c.execute_command("EXISTS", "other") == 0
    wait_blocked(c, 0)
    for w, conn in ((w1, exact), (w2, count)):
        w.connection_pool.release(conn)
        w.close()
    c.close()


def test_blmovem_times_out(lone_goblin):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    c.execute_command("FLUSHALL")
    c.execute_command("RPUSH", "src", "a")
    start = time.monotonic()
    assert c.execute_command("BLMOVEM", "src", "dst", "LEFT", "LEFT", "0.2", "EXACTLY", "2", "OBO") is None
    assert time.monotonic() - start >= 0.19
    assert c.execute_command("LRANGE", "src", "0", "-1") == [b"a"]
    assert c.execute_command("EXISTS", "dst") == 0
    c.close()


def test_events_keys_and_aof(procs, tmp_path, lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    c.rpush("s", "1", "2", "3")
    assert events(c, [("LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", "2", "OBO"),
                      ("LMOVEM", "s", "d", "LEFT", "RIGHT", "EXACTLY", "5", "OBO"),
                      ("LMOVEM", "s", "d", "RIGHT", "LEFT")]) == [
        (b"rpush", b"d"), (b"lpop", b"s"), (b"lpush", b"d"), (b"rpop", b"s"), (b"del", b"s")]
    c.response_callbacks = {}
    assert c.execute_command("COMMAND", "GETKEYS", "LMOVEM", "a", "b", "LEFT", "LEFT", "COUNT", "2", "BULK") == [b"a", b"b"]
    assert c.execute_command("COMMAND", "GETKEYS", "BLMOVEM", "a", "b", "LEFT", "LEFT", "0") == [b"a", b"b"]
    [info] = c.execute_command("COMMAND", "INFO", "lmovem")
    assert info[:7] == [b"lmovem", -5, [b"write", b"denyoom"], 1, 2, 1, [b"@write", b"@list", b"@slow"]]
    [info] = c.execute_command("COMMAND", "INFO", "blmovem")
    assert info[:7] == [b"blmovem", -6, [b"write", b"denyoom", b"blocking"], 1, 2, 1,
                        [b"@write", b"@list", b"@slow", b"@blocking"]]
    assert {b"lmovem", b"blmovem"} <= set(c.execute_command("ACL", "CAT", "list"))
    c.close()
    script = [("RPUSH", "s", "1", "2", "3", "4"),
              ("LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", "2", "OBO"),
              ("LMOVEM", "s", "d", "LEFT", "RIGHT", "EXACTLY", "5", "OBO"),
              ("BLMOVEM", "s", "d", "RIGHT", "LEFT", "0", "COUNT", "9", "BULK"),
              ("BLMOVEM", "d", "s", "RIGHT", "LEFT", "0")]
    assert write_aof(procs, tmp_path, script) == [
        [b"SELECT", b"0"],
        [b"RPUSH", b"s", b"1", b"2", b"3", b"4"],
        [b"LMOVEM", b"s", b"d", b"LEFT", b"RIGHT", b"COUNT", b"2", b"OBO"],
        [b"LMOVEM", b"s", b"d", b"RIGHT", b"LEFT", b"EXACTLY", b"2", b"BULK"],
        [b"LMOVEM", b"d", b"s", b"RIGHT", b"LEFT", b"EXACTLY", b"1", b"OBO"],
    ]
