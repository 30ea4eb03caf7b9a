"""Scripting behaviours Redis 7.2.4's own suite (unit/scripting) checks, compared with Redis
7.2.4: a table nested past the Lua stack answered element by element up to "ERR reached lua
stack limit"; blocking pops and WAIT run in scripts without blocking; HELLO, AUTH and RESET
served while a script is busy; SORT BY a constant sorts a set for a script; TIME frozen in a
script; DEBUG OBJECT of a key past its time; redis.set_repl sending a script's commands to the
AOF only, to the replicas only, or nowhere; redis.acl_check_cmd answering for the caller's
user; the globals' metatable read-only."""

from __future__ import annotations

import socket
import time

import pytest

from aof_stream import incr_stream
from harness import RawPair
from test_hyperloglog import both72, pair72  # noqa: F401 (the fixtures: Redis 7.2.4 and Goblin)
from test_suite_fixes import aof_on, read_stream_commands, replication_stream


def encode(*args) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def read_until(s: socket.socket, tail: bytes) -> bytes:
    """Reads until the bytes end with `tail`."""
    got = b""
    while not got.endswith(tail):
        chunk = s.recv(1 << 16)
        assert chunk, got[-200:]
        got += chunk
    return got


LIMIT = b"-ERR reached lua stack limit\r\n"


@pytest.mark.parametrize("body", [
    "local a = {}; local b = {a}; a[1] = b; return a",
    "local a = {}; local b = {map={x=a}}; a[1] = b; return a",
    "local a = {}; local b = {set={}}; b.set[a] = true; a[1] = b; return a",
])
@pytest.mark.parametrize("protocol", [2, 3])
def test_recursive_table_is_answered_up_to_the_stack_limit(pair72, body, protocol):
    replies = []
    for server in pair72:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            s.sendall(encode("HELLO", protocol) + encode("PING"))
            read_until(s, b"+PONG\r\n")
            s.sendall(encode("EVAL", body, 0))
            replies.append(read_until(s, LIMIT))
    assert replies[0] == replies[1]
    assert replies[1].count(b"\r\n") > 3000


def test_blocking_commands_and_wait_do_not_block_in_scripts(both72):
    both72("ZADD", "z", 1, "a", 2, "b")
    for cmd in ("bzpopmin", "bzpopmax"):
        both72("EVAL", f"return redis.pcall('{cmd}', KEYS[1], 0)", 1, "z")
        both72("EVAL", f"return redis.pcall('{cmd}', KEYS[1], 0)", 1, "z")
    both72("EVAL", "return redis.pcall('bzmpop', 0, 1, KEYS[1], 'min')", 1, "z")
    both72("EVAL", "return redis.pcall('wait', '1', '0')", 0)
    both72("EVAL", "return redis.pcall('wait', '1', '-1')", 0)
    for cmd in ("bzpopmin", "bzpopmax", "bzmpop", "blpop", "brpop", "blmove", "brpoplpush", "wait",
                "hello", "auth", "reset"):
        flags = [sorted(c.execute_command("COMMAND", "INFO", cmd)[0][2]) for c in both72.clients()]
        assert flags[0] == flags[1], cmd


def test_hello_is_served_while_a_script_is_busy(both72):
    both72.config_set("busy-reply-threshold", 10)
    both72.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1)
    body = """
        while true do
            if string.find(redis.call('client', 'list'), 'abortscript') then break end
        end
        return 'done'"""
    outcomes = []
    try:
        for server in both72.pair:
            runner = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            runner.sendall(encode("EVAL", body, 0))
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as other:
                time.sleep(0.2)
                other.sendall(encode("PING"))
                busy = other.recv(200)
                other.sendall(encode("HELLO", 2, "SETNAME", "abortscript"))
                hello = other.recv(4096)
                outcomes.append((busy[:5], hello[:1], runner.recv(100)))
            runner.close()
    finally:
        both72.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)
        both72.restore_config()
    assert outcomes[0] == outcomes[1] == (b"-BUSY", b"*", b"$4\r\ndone\r\n")


def test_sort_by_a_constant_sorts_a_set_for_a_script(both72):
    both72("SADD", "myset", *"a b c d e f g h i l m n o p q r s t u v z aa aaa azz".split())
    both72("EVAL", "return redis.call('sort', KEYS[1], 'by', '_')", 1, "myset")
    both72("EVAL", "return redis.call('sort', KEYS[1], 'by', '_', 'desc')", 1, "myset")
    both72("EVAL", "return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')", 1,
           "myset")


def test_time_is_frozen_in_a_script(both72):
    body = """local a = redis.call('TIME')
        redis.call('DEBUG', 'SLEEP', 0.01)
        local b = redis.call('TIME')
        return {a[1] == b[1] and a[2] == b[2], #a}"""
    both72.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1)
    try:
        assert both72("EVAL", body, 0) == [1, 2]
    finally:
        both72.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)


def test_debug_object_sees_a_key_past_its_time(both72):
    both72.ok("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        both72.ok("SET", "key", "value", "PX", 1)
        time.sleep(0.01)
        answers = [c.execute_command("DEBUG", "OBJECT", "key") for c in both72.clients()]
        assert all(b"encoding:embstr" in a for a in answers), answers
        both72("EVAL", "return redis.call('EXISTS', KEYS[1])", 1, "key")
        both72("EXISTS", "key")
        both72.err("DEBUG", "OBJECT", "key")
    finally:
        both72.ok("DEBUG", "SET-ACTIVE-EXPIRE", 1)


SELECTIVE = """
    redis.call('set', 'a', '1')
    redis.set_repl(redis.REPL_NONE)
    redis.call('set', 'b', '2')
    redis.set_repl(redis.REPL_AOF)
    redis.call('set', 'c', '3')
    redis.set_repl(redis.REPL_REPLICA)
    redis.call('set', 'r', '5')
    redis.set_repl(redis.REPL_ALL)
    redis.call('set', 'd', '4')"""


def test_set_repl_chooses_where_a_scripts_commands_go(both72):
    both72.config_set("repl-ping-replica-period", 3600)
    aof_on(both72)
    streams = []
    try:
        for server, c in zip(both72.pair, both72.clients()):
            s, f = replication_stream(server.port)
            c.execute_command("EVAL", SELECTIVE, 0)
            c.execute_command("SET", "after", "1")
            replica = read_stream_commands(s, f, 7)
            s.close()
            streams.append(replica)
        both72.ok("CONFIG", "SET", "appendonly", "no")
        aofs = [incr_stream(server.workdir) for server in both72.pair]
    finally:
        both72.restore_config()
    assert streams[0] == streams[1]
    assert [cmd[1] for cmd in streams[1] if cmd[0].lower() == b"set"] == [b"a", b"r", b"d", b"after"]
    assert aofs[0] == aofs[1]
    assert [cmd[1] for cmd in aofs[1] if cmd[0].lower() == b"set"] == [b"a", b"c", b"d", b"after"]


def test_acl_check_cmd_answers_for_the_callers_user(both72):
    both72.ok("ACL", "SETUSER", "bob", "on", ">123", "+@scripting", "+set", "~x*")
    bob = both72.new()
    try:
        bob("AUTH", "bob", "123")
        assert bob("EVAL", "return redis.acl_check_cmd('set', 'xx', 1)", 1, "xx") == 1
        assert bob("EVAL", "return redis.acl_check_cmd('hset', 'xx', 'f', 1)", 1, "xx") is None
        assert bob("EVAL", "return redis.acl_check_cmd('set', 'yy', 1)", 0) is None
        bob.err("EVAL", "return redis.acl_check_cmd('invalid-cmd', 'arg')", 0)
    finally:
        both72("ACL", "DELUSER", "bob")


@pytest.mark.parametrize("body", [
    "local g = getmetatable(_G); g.__index = {}",
    "rawset(getmetatable(_G), '__index', {})",
    "setmetatable(getmetatable(_G), {})",
    "return {type(getmetatable(_G)), type(getmetatable(_G).__index)}",
])
def test_the_globals_metatable_is_read_only(both72, body):
    both72("EVAL", body, 0)


@pytest.mark.parametrize("args", ["", "1, 2", "8", "-1", "2.9", "'x'"])
def test_set_repl_checks_its_argument(both72, args):
    """Redis 7.2's texts ("requires one argument", where 7.0 said "two arguments")."""
    both72("EVAL", f"return redis.set_repl({args})", 0)


@pytest.mark.parametrize("body", [
    "return {err='a\\0b'}",
    "return redis.error_reply('ERR a\\0b')",
    "return {err='x\\r\\ny\\n\\r'}",
    "return {err='\\r\\nx'}",
    "return {err=''}",
    "return {ok='a\\r\\nb\\0c'}",
])
def test_error_and_status_tables_are_read_as_c_strings(both72, body):
    """Up to the first NUL; an error's trailing CR and LF dropped, as Redis 7.2.4 writes them."""
    raw = RawPair(both72.pair)
    try:
        raw.same(encode("EVAL", body, 0))
    finally:
        raw.close()
