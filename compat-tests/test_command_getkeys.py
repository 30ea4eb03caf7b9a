"""COMMAND GETKEYS and GETKEYSANDFLAGS beside Redis: keys found from the key specs (index
and keyword starts, range and key-count walks), Redis's per-command rules for SET,
BITFIELD and SORT, subcommands, and every error."""

import pytest

CASES = [
    ["GET", "k"],
    ["MSET", "a", "1", "b", "2"],
    ["MSET", "a", "1", "b"],
    ["DEL", "a", "b", "c"],
    ["MGET", "a", "b"],
    ["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"],
    ["ZUNIONSTORE", "d", "1", "a"],
    ["ZUNION", "2", "a", "b", "WITHSCORES"],
    ["ZINTERCARD", "2", "a", "b", "LIMIT", "1"],
    ["ZMPOP", "2", "a", "b", "MIN", "COUNT", "2"],
    ["BZMPOP", "0", "2", "a", "b", "MAX"],
    ["BZPOPMIN", "a", "b", "0"],
    ["ZRANGESTORE", "d", "s", "0", "-1"],
    ["SINTERCARD", "2", "a", "b"],
    ["SMOVE", "a", "b", "m"],
    ["SET", "k", "v"],
    ["SET", "k", "v", "GET"],
    ["SET", "k", "v", "EX", "10", "get"],
    ["BITFIELD", "k", "GET", "u8", "0"],
    ["BITFIELD", "k", "GET", "u8", "0", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "1"],
    ["BITFIELD", "k", "SET", "u8", "0", "1"],
    ["BITFIELD_RO", "k", "GET", "u8", "0"],
    ["BITOP", "AND", "d", "a", "b"],
    ["LCS", "a", "b"],
    ["COPY", "a", "b", "DB", "1"],
    ["RENAME", "a", "b"],
    ["OBJECT", "ENCODING", "k"],
    ["MEMORY", "USAGE", "k", "SAMPLES", "5"],
    ["EXPIRE", "k", "10"],
    ["WATCH", "a", "b"],
]

ERRORS = [
    ["NOSUCH", "x"],
    ["PING", "x"],
    ["GET", "k", "x"],
    ["SET", "k"],
    ["ZUNIONSTORE", "d", "3", "a"],
    ["ZUNIONSTORE", "d", "x", "a"],
    ["OBJECT", "ENCODING"],
    ["OBJECT", "HELP"],
    ["OBJECT", "NOSUCH", "k"],
    ["CONFIG", "GET", "x"],
    ["CLIENT", "LIST"],
    # A shard channel is named by a `not_key` spec: no key arguments.
    ["SUBSCRIBE", "ch"],
    ["SPUBLISH", "ch", "m"],
]


@pytest.mark.parametrize("cmd", CASES, ids=lambda c: " ".join(c))
def test_getkeys_and_flags_as_redis(both, cmd):
    both.ok("COMMAND", "GETKEYS", *cmd)
    both.ok("COMMAND", "GETKEYSANDFLAGS", *cmd)


@pytest.mark.parametrize("cmd", ERRORS, ids=lambda c: " ".join(c))
def test_getkeys_errors_as_redis(both, cmd):
    both.err("COMMAND", "GETKEYS", *cmd)
    both.err("COMMAND", "GETKEYSANDFLAGS", *cmd)


def test_getkeys_arity_and_help(both):
    both.err("COMMAND", "GETKEYS")
    both.err("COMMAND", "GETKEYS", "GET")
    r, g = both.run("COMMAND", "HELP")
    assert r[:-1] == g[:-1]  # 7.2 words the last line "Print this help."
    both.ok("COMMAND", "INFO", "COMMAND|GETKEYS", "COMMAND|GETKEYSANDFLAGS")


def test_getkeysandflags_in_resp3(both3):
    both3.ok("COMMAND", "GETKEYSANDFLAGS", "SMOVE", "a", "b", "m")
    both3.ok("COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "GET")


@pytest.mark.parametrize("names", [["script|debug"], ["SCRIPT|FLUSH", "config|get"],
                                   ["script|nosuch", "get", "nosuch|x"]])
def test_command_info_and_docs_of_subcommands(both, names):
    """COMMAND INFO and COMMAND DOCS take "container|sub" names as Redis does (DOCS listed
    nothing for them)."""
    both("COMMAND", "INFO", *names)
    both("COMMAND", "DOCS", *names)
