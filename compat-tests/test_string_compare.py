"""SET's IFEQ / IFNE / IFDEQ / IFDNE, DIGEST and DELEX (Redis 8.4), pinned on Goblin alone
(no Redis 8.4 at hand) from redis.io's SET, DELEX and DIGEST pages and redis/redis#14502
(digests are 16 hex digits with leading zeros, compared in either case; another length is
"must be exactly 16 hexadecimal characters", checked only when there is a string to compare
with) and Redis's unit/type/string.tcl cases. Everything SET did before is left to the
differential cases of test_string.py.

Left open by what is at hand: the rest of DELEX's text for an unknown condition (the tests pin
only "Invalid condition"; Goblin says "Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE"),
and DELEX with a condition on a non-string: WRONGTYPE, as delex.json's reply schema says."""

from __future__ import annotations

import re

import pytest

from harness import make_client
from hfe_scripts import Err
from pinned import run_pinned, write_aof
from test_hash_field_expire import events, lone_goblin  # noqa: F401 (the fixture)
from test_persistence import procs  # noqa: F401 (the fixture)

HELLO = b"b6acb9d84a38ff74"  # redis.io's DIGEST page: the digest of "Hello world"
SYNTAX = Err("syntax error")
BAD_DIGEST = Err("must be exactly 16 hexadecimal characters")
WRONGTYPE = Err("WRONGTYPE Operation against a key holding the wrong kind of value")
DELEX_ARITY = Err("wrong number of arguments for 'delex' command")
LEADING_ZEROS = "v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd"

SCRIPTS: dict[str, list] = {
    "digest": [
        (("DIGEST", "key1"), None),
        (("SET", "key1", "Hello world"), b"OK"),
        (("DIGEST", "key1"), HELLO),
        (("SET", "z", LEADING_ZEROS), b"OK"),
        (("DIGEST", "z"), b"00006c38adf31777"),
        (("DELEX", "z", "IFDEQ", "00006C38ADF31777"), 1),
        (("SET", "n", "12345"), b"OK"),
        (("OBJECT", "ENCODING", "n"), b"int"),
        (("SET", "s", "12345"), b"OK"),
        (("APPEND", "s", ""), 5),
        (("RPUSH", "l", "a"), 1),
        (("DIGEST", "l"), WRONGTYPE),
        (("DIGEST",), Err("wrong number of arguments for 'digest' command")),
        (("DIGEST", "a", "b"), Err("wrong number of arguments for 'digest' command")),
    ],
    "set-conditions": [
        (("SET", "k", "v", "IFEQ", "x"), None),
        (("EXISTS", "k"), 0),
        (("SET", "k", "v", "IFDEQ", HELLO), None),
        (("SET", "k", "v", "IFDEQ", "1234567890"), None),
        (("SET", "k", "v", "IFEQ", "x", "GET"), None),
        (("EXISTS", "k"), 0),
        (("SET", "k2", "v", "IFDNE", "1234567890"), b"OK"),
        (("SET", "k3", "v", "IFNE", "x", "GET"), None),
        (("GET", "k3"), b"v"),
        (("SET", "k", "Hello world", "IFNE", "x"), b"OK"),
        (("SET", "k", "v2", "IFEQ", "wrong"), None),
        (("SET", "k", "v2", "IFNE", "Hello world"), None),
        (("SET", "k", "v2", "IFDNE", HELLO), None),
        (("SET", "k", "v2", "ifdeq", HELLO.upper()), b"OK"),
        (("GET", "k"), b"v2"),
        (("SET", "k", "v3", "IFEQ", "v2", "GET"), b"v2"),
        (("SET", "k", "v4", "IFEQ", "v2", "GET"), b"v3"),
        (("GET", "k"), b"v3"),
        (("SET", "k", "v4", "IFNE", "zz", "EX", "100"), b"OK"),
        (("TTL", "k"), 100),
        (("SET", "k", "v5", "IFEQ", "v4", "KEEPTTL"), b"OK"),
        (("TTL", "k"), 100),
        (("SET", "k", "v6", "IFEQ", "v5"), b"OK"),
        (("TTL", "k"), -1),
        (("SET", "d", "v", "IFDNE", "0000000000000000"), b"OK"),
        (("RPUSH", "l", "a"), 1),
        (("SET", "l", "v", "IFNE", "x"), WRONGTYPE),
        (("SET", "l", "v", "IFEQ", "x", "GET"), WRONGTYPE),
        (("SET", "l", "v", "IFDEQ", "1234567890"), WRONGTYPE),
        (("SET", "l", "v"), b"OK"),
    ],
    "set-condition-errors": [
        (("SET", "k", "v", "IFEQ"), SYNTAX),
        (("SET", "k", "v", "IFEQ", "a", "NX"), SYNTAX),
        (("SET", "k", "v", "XX", "IFNE", "a"), SYNTAX),
        (("SET", "k", "v", "IFEQ", "a", "IFNE", "b"), SYNTAX),
        (("SET", "k", "v", "IFDEQ", "abc"), None),
        (("SET", "k", "v"), b"OK"),
        (("SET", "k", "w", "IFDEQ", "abc"), BAD_DIGEST),
        (("SET", "k", "w", "IFDNE", "b6acb9d84a38ff7g"), BAD_DIGEST),
        (("SET", "k", "w", "IFDNE", "00b6acb9d84a38ff74"), BAD_DIGEST),
        (("SET", "k", "w", "IFDEQ", ""), BAD_DIGEST),
        (("GET", "k"), b"v"),
    ],
    "delex": [
        (("DELEX", "k"), 0),
        (("DELEX", "k", "IFNE", "x"), 0),
        (("RPUSH", "l", "a"), 1),
        (("DELEX", "l", "IFEQ", "a"), WRONGTYPE),
        (("DELEX", "l"), 1),
        (("EXISTS", "l"), 0),
        (("SET", "k", "Hello world"), b"OK"),
        (("DELEX", "k", "IFEQ", "hello world"), 0),
        (("DELEX", "k", "IFNE", "Hello world"), 0),
        (("DELEX", "k", "IFDNE", HELLO), 0),
        (("DELEX", "k", "IFDEQ", HELLO.upper()), 1),
        (("EXISTS", "k"), 0),
        (("SET", "k", "v"), b"OK"),
        (("DELEX", "k", "IFNE", "w"), 1),
        (("SET", "k", "v"), b"OK"),
        (("DELEX", "k", "IFEQ"), DELEX_ARITY),
        (("DELEX", "k", "IFEQ", "v", "x"), DELEX_ARITY),
        (("DELEX", "k", "IF", "v"), Err("Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE")),
        (("DELEX", "k", "IFDEQ", "v"), BAD_DIGEST),
        (("DELEX", "nokey", "IFDEQ", "1234567890"), 0),
        (("DELEX", "nokey", "IFDNE", "1234567890"), 0),
        (("DELEX", "k", "ifeq", "v"), 1),
        (("SET", "n", "12345"), b"OK"),
        (("DELEX", "n", "IFEQ", "12345"), 1),
        (("DELEX",), DELEX_ARITY),
    ],
}


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_pinned_on_goblin(lone_goblin, name, protocol):
    run_pinned(lone_goblin, SCRIPTS[name], protocol)


def test_digests_agree_across_encodings(lone_goblin):
    """An int-encoded value, its raw form and a SET IFDEQ with the digest all agree."""
    c = make_client(lone_goblin)
    c.flushall()
    c.set("n", "12345")
    c.set("s", "12345")
    c.append("s", "")
    d = c.execute_command("DIGEST", "n")
    assert re.fullmatch(rb"[0-9a-f]{16}", d)
    assert c.execute_command("DIGEST", "s") == d
    assert c.execute_command("SET", "n", "x", "IFDEQ", d) is True
    c.close()


EVENT_SCRIPT = [
    ("SET", "k", "v", "IFEQ", "x"),
    ("SET", "k", "v", "IFNE", "x"),
    ("SET", "k", "w", "IFEQ", "v", "PX", "100000"),
    ("DELEX", "k", "IFEQ", "nope"),
    ("DELEX", "k", "IFDNE", "0000000000000000"),
]

PINNED_EVENTS = [(b"set", b"k"), (b"set", b"k"), (b"expire", b"k"), (b"del", b"k")]


def test_keyspace_events_pinned(lone_goblin):
    c = make_client(lone_goblin)
    c.flushall()
    assert events(c, EVENT_SCRIPT) == PINNED_EVENTS
    c.close()


def test_aof_pinned(procs, tmp_path):
    script = [("SET", "k", "v", "IFEQ", "x"), ("SET", "k", "v", "IFNE", "x"),
              ("SET", "k", "w", "IFEQ", "v", "EX", "100"), ("DELEX", "k", "IFEQ", "nope"),
              ("DELEX", "k", "IFEQ", "w"), ("SET", "k", "v"), ("DELEX", "k")]
    assert write_aof(procs, tmp_path, script) == [
        [b"SELECT", b"0"],
        [b"SET", b"k", b"v", b"IFNE", b"x"],
        [b"SET", b"k", b"w", b"PXAT", b"T"],
        [b"DEL", b"k"],
        [b"SET", b"k", b"v"],
        [b"DEL", b"k"],
    ]


def test_command_info_and_acl(lone_goblin):
    c = make_client(lone_goblin)
    c.response_callbacks = {}
    [digest, delex] = c.execute_command("COMMAND", "INFO", "digest", "delex")
    assert digest[:7] == [b"digest", 2, [b"readonly", b"fast"], 1, 1, 1, [b"@read", b"@string", b"@fast"]]
    assert delex[:7] == [b"delex", -2, [b"write", b"fast", b"movablekeys"], 1, 1, 1,
                         [b"@write", b"@string", b"@fast"]]
    assert c.execute_command("COMMAND", "GETKEYS", "delex", "k", "IFEQ", "v") == [b"k"]
    docs = c.execute_command("COMMAND", "DOCS", "set")
    doc = dict(zip(docs[1][::2], docs[1][1::2]))
    assert [b"8.4.0", b"Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."] in doc[b"history"]
    assert {b"digest", b"delex"} <= set(c.execute_command("ACL", "CAT", "string"))
    c.close()
