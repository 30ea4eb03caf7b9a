"""SDIFFCARD (Redis 8.10), pinned on Goblin alone (no Redis 8.10 at hand) from redis.io's
SDIFFCARD page: the size of SDIFF's result, missing keys as empty sets, LIMIT stopping the
count (0: no limit). Its argument errors are taken to be SINTERCARD's, whose parsing it
shares in form (the page gives no error texts); SINTERCARD stays compared with Redis in
test_set_algebra.py."""

from __future__ import annotations

from harness import make_client
from hfe_scripts import Err
from pinned import run_pinned
from test_hash_field_expire import lone_goblin  # noqa: F401 (the fixture)

SCRIPT = [
    (("SADD", "key1", "a", "b", "c"), 3),
    (("SADD", "key2", "c", "d", "e"), 3),
    (("SDIFFCARD", "2", "key1", "key2"), 2),
    (("SDIFFCARD", "2", "key1", "key2", "LIMIT", "1"), 1),
    (("SDIFFCARD", "2", "key1", "key2", "limit", "0"), 2),
    (("SDIFFCARD", "2", "key1", "key2", "LIMIT", "5"), 2),
    (("SDIFFCARD", "1", "key1"), 3),
    (("SDIFFCARD", "1", "key1", "LIMIT", "2"), 2),
    (("SDIFFCARD", "2", "nokey", "key1"), 0),
    (("SDIFFCARD", "2", "key1", "nokey"), 3),
    (("SADD", "ints", "1", "2", "3"), 3),
    (("SADD", "mixed", "2", "x"), 2),
    (("SDIFFCARD", "2", "ints", "mixed"), 2),
    (("SDIFFCARD", "0", "key1"), Err("numkeys should be greater than 0")),
    (("SDIFFCARD", "x", "key1"), Err("numkeys should be greater than 0")),
    (("SDIFFCARD", "3", "key1", "key2"), Err("Number of keys can't be greater than number of args")),
    (("SDIFFCARD", "2", "key1", "key2", "LIMIT", "-1"), Err("LIMIT can't be negative")),
    (("SDIFFCARD", "2", "key1", "key2", "LIMIT"), Err("syntax error")),
    (("SDIFFCARD", "1", "key1", "APPROX"), Err("syntax error")),
    (("SET", "str", "x"), b"OK"),
    (("SDIFFCARD", "2", "key1", "str"), Err("WRONGTYPE Operation against a key holding the wrong kind of value")),
    (("SDIFFCARD",), Err("wrong number of arguments for 'sdiffcard' command")),
]


def test_script_pinned_on_goblin(lone_goblin):
    run_pinned(lone_goblin, SCRIPT)


def test_command_info_getkeys_and_acl(lone_goblin):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    [info] = c.execute_command("COMMAND", "INFO", "sdiffcard")
    assert info[:7] == [b"sdiffcard", -3, [b"readonly", b"movablekeys"], 0, 0, 0, [b"@read", b"@set", b"@slow"]]
    assert c.execute_command("COMMAND", "GETKEYS", "SDIFFCARD", "2", "a", "b", "LIMIT", "1") == [b"a", b"b"]
    assert b"sdiffcard" in set(c.execute_command("ACL", "CAT", "set"))
    c.close()
