"""SCRIPT DEBUG, the Lua debugger (LDB), against real Redis: each case drives debugging
sessions over plain sockets to both servers, as redis-cli --ldb does, and compares every
reply byte for byte (the stop lines, listings, printed values, logged commands and replies,
the <endsession> mark, the EVAL's reply, and the connection closed after it). A session in
SYNC mode blocks the server, one in YES mode runs in a forked child whose writes are
rolled back; both are checked from a second connection.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from resp import encode

SCRIPT = "\n".join(
    [
        "local a = {1,2,'x',{y=3}}",
        "local b = 5.5",
        "redis.debug('hi', a, nil, true)",
        "redis.call('set', KEYS[1], ARGV[1])",
        "return redis.call('get', KEYS[1])",
    ]
)

FUNCS = "\n".join(
    [
        "local function f(x)",
        "  local y = x * 2",
        "  redis.breakpoint()",
        "  return y",
        "end",
        "local r = f(3)",
        "redis.call('set', KEYS[1], r)",
        "return {r, redis.call('get', KEYS[1])}",
        "",
    ]
)


def start(raw, mode: str, script: str, *rest) -> bytes:
    """SCRIPT DEBUG `mode`, then the EVAL that starts the session; its first stop."""
    raw.same(encode("SCRIPT", "DEBUG", mode))
    return raw.same(encode("EVAL", script, *rest))


def steps(raw, *commands) -> list[bytes]:
    """Each debugger command (a tuple of words, or one word), its reply compared."""
    out = []
    for c in commands:
        words = c if isinstance(c, tuple) else (c,)
        out.append(raw.same(encode(*words)))
    return out


def finish(raw, command, expect_end: bytes) -> None:
    """The command that ends the session: <endsession>, the EVAL's reply, then EOF."""
    words = command if isinstance(command, tuple) else (command,)
    raw.send(encode(*words))
    r, g = raw.read(2)
    assert r == g, f"redis:  {r!r}\ngoblin: {g!r}"
    assert r.startswith(b"*"), r
    assert expect_end in r, r
    assert raw.closed() == (True, True)


def test_script_debug_arguments(both, raw):
    both.err("SCRIPT", "DEBUG")
    both.err("SCRIPT", "DEBUG", "maybe")
    both.ok("SCRIPT", "DEBUG", "no")
    raw.same(encode("PING") + encode("SCRIPT", "DEBUG", "sync"), 2)
    raw.same(encode("SCRIPT", "DEBUG", "sync"))
    raw.same(encode("EVALSHA", "a" * 40, "0"))
    raw.same(encode("EVALSHA", "abc", "0"))
    raw.same(encode("SCRIPT", "DEBUG", "no"))
    raw.same(encode("EVAL", "return 1", "0"))


def test_step_print_list_trace_and_continue(raw):
    start(raw, "sync", SCRIPT, "1", "key1", "v1")
    steps(
        raw,
        "s",
        "p",
        ("p", "a"),
        ("P", "KEYS"),
        ("print", "ARGV"),
        ("p", "zz"),
        ("p", "a", "b"),
        "next",
        "step",
        "t",
        "l",
        ("list", "0"),
        ("l", "3", "1"),
        ("l", "-1", "0"),
        ("l", "5", "x"),
        "w",
        "whole",
        "h",
        "help",
        "zz",
        ("hello\0world",),
        ("\0s",),
        "r",
        ("m",),
        ("maxlen", "100", "x"),
    )
    finish(raw, "c", b"+<endsession>\r\n$2\r\nv1\r\n")


def test_breakpoints(raw):
    start(raw, "sync", FUNCS, "1", "k")
    steps(
        raw,
        "b",
        ("b", "4", "4", "100", "x", "05", "-0"),
        ("break",),
        ("b", "7"),
        ("b", "-9"),
        ("b", "-4"),
        "b",
        ("b", "0"),
        "b",
        ("b", "2", "6", "7"),
        # Redis's removal moves bytes, not ints: 6, 6 are left.
        ("b", "-2"),
        "b",
        "c",
        "t",
        ("p", "x"),
        "c",
        "t",
        "p",
        ("p", "x"),
        ("e", "y + 1"),
    )
    finish(raw, "c", b"+<endsession>\r\n*2\r\n:6\r\n$1\r\n6\r\n")


def test_eval_and_redis_commands(raw):
    start(raw, "sync", "local n = 1\nreturn n", "0")
    steps(
        raw,
        ("e", "1+1"),
        ("e", "1,", "2"),
        ("eval", "local q = 1"),
        ("e", "x ="),
        ("e", "error('boom')"),
        ("e", "{1.5, 1e300, 'a\\nb\\0\\1\\255\"\\\\', true}"),
        ("e", "n"),
        ("e",),
        ("r", "ping"),
        ("r", "get"),
        ("r", "nosuchcommand", "x"),
        ("r", "set", "k", "v"),
        ("redis", "mget", "k", "k2"),
        ("r", "incr", "k"),
        ("r", "hgetall", "k2"),
        ("r", "rpush", "l", *[str(i) for i in range(12)]),
        ("r", "lrange", "l", "0", "-1"),
        ("r", "hello", "3"),
        ("m", "10"),
        ("r", "set", "k", "v" * 100),
        ("r", "get", "k"),
        ("r", "get", "k"),
        ("m", "0"),
        ("r", "get", "k"),
        ("m", "-5"),
        ("m", "abc"),
        "s",
    )
    finish(raw, "s", b"+<endsession>\r\n:1\r\n")


def test_stepping_logs_commands_replies_and_errors(raw):
    script = "\n".join(
        [
            "redis.call('set', 'n', 'x')",
            "local ok = redis.pcall('incr', 'n')",
            "local e = redis.error_reply('MY own')",
            "redis.pcall('get')",
            "redis.pcall({})",
            "redis.debug(ok, e, {1, nil, 3}, redis.breakpoint())",
            "return redis.call('incr', 'n')",
        ]
    )
    start(raw, "sync", script, "0")
    steps(raw, "s", "s", "s", "s", "s", "s", "p")
    finish(raw, "s", b"+<endsession>\r\n-ERR value is not an integer or out of range")


def test_abort_keeps_changes_in_sync_mode(both, raw):
    start(raw, "sync", "redis.call('set','x','1')\nreturn 1", "0")
    steps(raw, "s")
    finish(raw, "a", b"-ERR script aborted for user request script: ")
    assert both("GET", "x") == b"1"


def test_errors_before_the_script_runs_end_the_session(raw):
    raw.same(encode("SCRIPT", "DEBUG", "sync"))
    finish(raw, ("EVAL", "return 1 +", "0"), b"Error compiling script")
    raw = raw.new()
    raw.same(encode("SCRIPT", "DEBUG", "sync"))
    finish(raw, ("EVAL", "return 1", "-1"), b"-ERR Number of keys can't be negative")
    raw = raw.new()
    raw.same(encode("SCRIPT", "DEBUG", "sync"))
    finish(raw, ("EVAL", "return 1", "5"), b"greater than number of args")


def test_debugger_protocol_errors(raw):
    # Redis's own suite: NUL bytes in a command, and a command of 101 arguments.
    start(raw, "sync", "return 'hello'", "0")
    steps(raw, ("'hello\0world'",), ("'\0hello'",))
    cmd = b"*101\r\n$5\r\nredis\r\n" + b"$4\r\ntest\r\n" * 100
    raw.same(cmd)
    finish(raw, "c", b"$5\r\nhello\r\n")
    raw = raw.new()
    start(raw, "sync", "return 'hello'", "0")
    # Not a multi-bulk: the script fails with a protocol error.
    raw.send(b"step\r\n")
    r, g = raw.read(2)
    assert r == g, (r, g)
    assert b"protocol error" in r


def test_sync_mode_blocks_the_server_and_keeps_writes(both, raw):
    start(raw, "sync", "redis.call('set','s','1')\nreturn redis.call('get','s')", "0")
    other = raw.new()
    other.send(encode("GET", "s"))
    steps(raw, "s")
    finish(raw, "c", b"$1\r\n1\r\n")
    # The other client's command ran only after the session: it sees the write.
    assert other.read() == (b"$1\r\n1\r\n", b"$1\r\n1\r\n")


def test_forked_session_rolls_back_and_server_serves_meanwhile(both, raw):
    both.ok("SET", "x", "1")
    start(raw, "yes", "redis.call('set','y','1')\nredis.call('set','x','2')\nreturn redis.call('get','x')", "0")
    steps(raw, "s")
    # The server answers others while the forked session is stopped.
    assert both("PING") == b"PONG"
    assert both("GET", "y") is None
    steps(raw, "s", ("r", "get", "y"))
    finish(raw, "s", b"+<endsession>\r\n$1\r\n2\r\n")
    assert both("GET", "x") == b"1"
    assert both("GET", "y") is None
    # The forked session's script never reached the parent's cache.
    sha = "5f9a4a6d1e0ff9c9a03a1f9d9f63b3f4c1d4b0ec"
    both("SCRIPT", "EXISTS", sha)


def test_forked_session_abort(both, raw):
    start(raw, "yes", "redis.call('set','y','1')\nreturn 1", "0")
    finish(raw, "a", b"-ERR script aborted for user request")
    assert both("GET", "y") is None


def test_client_gone_lets_the_script_finish(both, raw):
    start(raw, "sync", "redis.call('set','g','1')\nredis.call('set','g','2')\nreturn 1", "0")
    for c in raw.conns():
        c.close()
    assert both("GET", "g") == b"2"


def test_timeout_stops_a_long_script(both, raw):
    both.config_set("busy-reply-threshold", 200)
    start(raw, "sync", "local i = 0\nwhile true do\n  i = i + 1\nend", "0")
    steps(raw, "c")
    finish(raw, "a", b"-ERR script aborted for user request")


LDB_SCRIPT = "local k = KEYS[1]\nredis.call('set', k, ARGV[1])\nredis.debug('set', k)\nreturn redis.call('get', k)\n"


@pytest.mark.parametrize("sync", [False, True])
def test_redis_cli_ldb_session(servers, tmp_path, sync):
    """redis-cli --ldb --eval, the client LDB was made for, fed its commands on stdin."""
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli is not installed")
    script = tmp_path / "s.lua"
    script.write_text(LDB_SCRIPT)
    outputs = []
    for server in servers:
        argv = [cli, "-p", str(server.port), "--ldb", "--eval", str(script), "key1", ",", "val1"]
        if sync:
            argv[3:4] = ["--ldb-sync-mode"]
        done = subprocess.run(
            argv, input="s\np\nl\nr get key1\nc\n", capture_output=True, text=True, timeout=30
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert "<debug> line 3" in outputs[0]
    assert '"val1"' in outputs[0]
