"""MONITOR: the lines Redis and Goblin send their monitors for the same command streams,
compared once the timestamps and client addresses are taken out (both are checked for their
form): which commands are shown (not administrative ones, not refused ones, a blocked
command once), in which order (a script after EVAL, EXEC after its commands), with which
database (SELECT's new one), `[db lua]` for scripts, Redis's quoting of arguments, AUTH and
HELLO's passwords redacted; MONITOR inside MULTI refused, a second MONITOR answered with
nothing, a monitor refused keyspace commands, RESET and QUIT ending the mode."""

import re
import time

import pytest

from resp import encode, parse_all

END = "zz-monitor-end"
LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) (lua|127\.0\.0\.1:\d+)\] (.*)\r\n$", re.S)


def normalized(frame: bytes) -> bytes:
    """A monitor line without its timestamp and address; other replies as they are."""
    m = LINE.match(frame)
    if not m:
        return frame
    origin = b"lua" if m.group(4) == b"lua" else b"addr"
    return b"[%s %s] %s" % (m.group(3), origin, m.group(5))


def until_end(conn) -> list:
    """The frames a monitor connection received up to the line of `ECHO END`."""
    frames = []
    while True:
        frame = conn.read_replies(1)
        if END.encode() in frame and frame.startswith(b"+"):
            return frames
        frames.append(frame)


def check_lines(frames: list, port_of_client=None) -> None:
    now = time.time()
    for f in frames:
        m = LINE.match(f)
        if m:
            assert abs(int(m.group(1)) - now) < 60, f


def monitored(raw, requests, monitor_setup=(), replies=True):
    """Starts a monitor on each server, sends each raw request from a client (comparing
    the replies unless told not to), and compares the monitors' normalized streams."""
    mon = raw.new()
    for setup in monitor_setup:
        mon.same(setup)
    mon.same(encode("MONITOR"))
    client = raw.new()
    for req, count in requests:
        if replies:
            client.same(req, count)
        else:
            client(req, count)
    client.same(encode("ECHO", END))
    r, g = until_end(mon.redis), until_end(mon.goblin)
    check_lines(r)
    check_lines(g)
    nr, ng = [normalized(f) for f in r], [normalized(f) for f in g]
    assert nr == ng, "\n  redis:  " + "\n          ".join(map(repr, nr)) + \
        "\n  goblin: " + "\n          ".join(map(repr, ng))
    return nr


def one(*args, count=1):
    return (encode(*args), count)


def test_commands_shown_and_hidden(raw):
    lines = monitored(raw, [
        one("SET", "k", b"a b\"\\\n\r\t\x07\x08\x00\x7f\xff \xc3\xa9"),
        one("GET", "k"),
        one("get", "k"),
        one("LPUSH", "k", "x"),  # WRONGTYPE: still shown
        one("NOSUCH", "x"),  # unknown: not shown
        one("GET"),  # wrong arity: not shown
        one("PING"),
        one("ECHO", ""),
        one("CONFIG", "GET", "port"),  # admin: hidden
        one("CLIENT", "ID"),
        one("CLIENT", "LIST"),  # admin: hidden
        one("CLIENT", "SETNAME", "mon-test"),
        one("SLOWLOG", "LEN"),  # admin: hidden
        one("DEBUG", "SLEEP", "0"),  # admin: hidden
        one("INFO", "keyspace"),
        one("WATCH", "k"),
        one("UNWATCH"),
        one("SCRIPT", "EXISTS", "abc"),
        one("SELECT", "2"),
        one("SET", "in2", "v"),
        one("SELECT", "0"),
        one("DEL", "in2", "k"),
    ], replies=False)
    assert any(b"[2 addr]" in l for l in lines)


def test_transactions_and_scripts(raw):
    monitored(raw, [
        one("MULTI"),
        one("SET", "a", "1"),
        one("MONITOR"),
        one("INCR", "a"),
        one("SELECT", "3"),
        one("EXEC"),
        one("SELECT", "0"),
        one("MULTI"),
        one("DISCARD"),
        one("EVAL", "redis.call('incr', KEYS[1]); redis.call('select', '4'); "
            "return redis.call('set', 'x', 'y')", "1", "n"),
        one("EVAL", "return redis.pcall('nosuch')", "0"),
        one("EVAL", "return 1", "notanumber"),
        one("EVALSHA", "0000", "0"),
        one("EVAL_RO", "return redis.call('get', 'n')", "0"),
        one("SCRIPT", "LOAD", "return redis.call('ping')"),
        one("EVALSHA", "1b936e3fe509bcbc9cd0664897bbe8fd0ac95a6b", "0"),
    ], replies=False)


def test_function_shown_before_its_commands(raw):
    """Redis's unit/introspection 'MONITOR can log commands issued by functions'."""
    library = "#!lua name=monlib\nredis.register_function('monfn', " \
              "function() return redis.call('set', 'foo', 'bar') end)"
    lines = monitored(raw, [
        one("FUNCTION", "LOAD", "REPLACE", library),
        one("FCALL", "monfn", "0"),
        one("FUNCTION", "DELETE", "monlib"),
    ], replies=False)
    fcall = [i for i, line in enumerate(lines) if "fcall" in str(line).lower()]
    assert fcall and "set" in str(lines[fcall[0] + 1]).lower()


def test_auth_and_hello_redacted(raw):
    monitored(raw, [
        one("AUTH", "secret"),
        one("AUTH", "default", "secret"),
        one("HELLO", "3", "AUTH", "default", "secret", "SETNAME", "n"),
        one("HELLO", "2", "SETNAME", "m", "AUTH", "default", "pw"),
        one("HELLO", "4", "AUTH", "default", "secret"),
        one("HELLO", "2", "AUTH", "default"),
        one("HELLO"),
    ], replies=False)


def test_blocked_command_shown_once(raw):
    mon = raw.new()
    mon.same(encode("MONITOR"))
    waiter, pusher = raw.new(), raw.new()
    waiter.send(encode("BLPOP", "q", "0"))
    time.sleep(0.2)
    pusher.same(encode("RPUSH", "q", "a"))
    waiter.same(b"")
    pusher.same(encode("BLPOP", "nothing", "0.01"))
    pusher.same(encode("ECHO", END))
    r, g = until_end(mon.redis), until_end(mon.goblin)
    assert [normalized(f) for f in r] == [normalized(f) for f in g]
    assert sum(b'"BLPOP" "q"' in f for f in g) == 1


def test_monitor_clients_own_commands(raw):
    mon = raw.new()
    mon(encode("HELLO", "3"))
    mon.same(encode("MONITOR"))
    # A second MONITOR answers nothing: PING's reply comes next.
    mon.send(encode("MONITOR"))

    def same_frames(request, count):
        r, g = mon(request, count)
        nr, ng = ([normalized(f) for f in parse_frames(x)] for x in (r, g))
        assert nr == ng, (nr, ng)
        return ng

    assert same_frames(encode("PING"), 2) == [b"+PONG\r\n", b'[0 addr] "PING"']
    assert same_frames(encode("GET", "k"), 1)[0].startswith(b"-ERR Replica")
    same_frames(encode("SET", "k", "v"), 1)
    same_frames(encode("PUBLISH", "ch", "m"), 1)
    assert same_frames(encode("SELECT", "1"), 2)[1] == b'[1 addr] "SELECT" "1"'
    other = raw.new()
    other.same(encode("SET", "x", "1"))
    r, g = mon.read(1)
    assert normalized(r) == normalized(g) == b'[0 addr] "SET" "x" "1"'
    # RESET ends the mode: nothing more arrives.
    mon.same(encode("RESET"))
    other.same(encode("SET", "x", "2"))
    mon.same(encode("GET", "x"))
    # QUIT from a monitor.
    mon2 = raw.new()
    mon2.same(encode("MONITOR"))
    mon2.same(encode("QUIT"))
    assert mon2.closed() == (True, True)
    other.same(encode("PING"))


def parse_frames(raw_bytes):
    from resp import split_replies
    frames, rest = split_replies(raw_bytes)
    assert not rest
    return frames


def test_two_monitors(raw):
    a, b = raw.new(), raw.new()
    a.same(encode("MONITOR"))
    b.same(encode("MONITOR"))
    c = raw.new()
    c.same(encode("SET", "k", "v"))
    c.same(encode("ECHO", END))
    for m in (a, b):
        r, g = until_end(m.redis), until_end(m.goblin)
        assert [normalized(f) for f in r] == [normalized(f) for f in g] == [b'[0 addr] "SET" "k" "v"']


def test_client_list_shows_the_monitor_flag(raw, both):
    mon = raw.new()
    mon.same(encode("CLIENT", "SETNAME", "watcher"))
    mon.same(encode("MONITOR"))
    r, g = both.run("CLIENT", "LIST")
    flags = lambda text: [l for l in text.decode().splitlines() if "name=watcher" in l][0]
    fr, fg = flags(r), flags(g)
    assert " flags=O " in fr and " flags=O " in fg
    assert " cmd=monitor " in fr and " cmd=monitor " in fg
