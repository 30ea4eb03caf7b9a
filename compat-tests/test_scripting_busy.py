"""Busy scripts beside Redis: past busy-reply-threshold other clients get BUSY while the
script runs, SCRIPT KILL stops a script that has not written (UNKILLABLE once it has,
NOTBUSY when none runs), and SHUTDOWN NOSAVE stops a busy server. Each script is bounded:
it loops until killed, or for about a second of server time."""

import threading
import time

import pytest
import redis

import harness
import resp

LOOP = "while true do end"
# Writes, then runs for about a second by the server's clock.
# Spins by counting: TIME inside a script is the script's start time (Redis 7.2).
WRITE_THEN_SPIN = """
redis.call('set', KEYS[1], 'v')
for i = 1, 100000000 do end
return 'done'
"""


def start_script(port, body, *args):
    """Runs EVAL on a new connection in a thread; returns the thread and its outcome box."""
    box = {}

    def go():
        c = redis.Redis(port=port, socket_timeout=20)
        try:
            box["reply"] = c.eval(body, *args)
        except redis.RedisError as e:
            box["reply"] = e
        finally:
            c.close()

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, box


def outcome(fn):
    try:
        return fn()
    except redis.RedisError as e:
        return e


def wait_busy(c, limit=5.0):
    """Polls with PING until the server answers BUSY (the script passed the threshold)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        r = outcome(c.ping)
        if isinstance(r, redis.RedisError):
            return r
        time.sleep(0.02)
    raise AssertionError("the server never became busy")


def on_each(servers, fn):
    """fn(port, other_client) on Redis and on Goblin; returns both results described."""
    results = []
    for server in servers:
        other = redis.Redis(port=server.port, socket_timeout=20)
        other.ping()
        try:
            results.append(fn(server.port, other))
        finally:
            other.close()
    return [[harness.describe(x) for x in r] for r in results]


def test_script_kill_stops_a_busy_loop(both):
    both.config_set("busy-reply-threshold", 100)

    def scenario(port, other):
        t, box = start_script(port, LOOP, 0)
        busy = wait_busy(other)
        before = outcome(lambda: other.execute_command("GET", "k"))
        killed = outcome(other.script_kill)
        t.join(10)
        after = outcome(lambda: other.execute_command("SCRIPT", "KILL"))
        return [busy, before, killed, box["reply"], after, outcome(other.ping)]

    r, g = on_each(both.pair, scenario)
    assert r == g


def test_a_connection_opened_while_busy_is_answered(both):
    """The server keeps accepting while a script is busy: a new connection gets BUSY, and its
    SCRIPT KILL stops the script (an operator's redis-cli must not hang)."""
    both.config_set("busy-reply-threshold", 100)

    def scenario(port, other):
        t, box = start_script(port, LOOP, 0)
        busy = wait_busy(other)
        late = [resp.RawConnection(port, timeout=5) for _ in range(3)]
        try:
            replies = [late[0].request(resp.encode("PING"))]
            replies.append(late[1].request(resp.encode("GET", "k") + resp.encode("PING"), 2))
            replies.append(late[2].request(resp.encode("SCRIPT", "KILL")))
            t.join(10)
            replies.append(late[0].request(resp.encode("PING")))
        finally:
            for c in late:
                c.close()
        return [busy, box["reply"], *replies]

    r, g = on_each(both.pair, scenario)
    assert r == g


def test_a_script_that_wrote_is_unkillable(both):
    both.config_set("busy-reply-threshold", 100)

    def scenario(port, other):
        t, box = start_script(port, WRITE_THEN_SPIN, 1, "k")
        busy = wait_busy(other)
        refused = outcome(other.script_kill)
        t.join(10)
        return [busy, refused, box["reply"], outcome(lambda: other.get("k"))]

    r, g = on_each(both.pair, scenario)
    assert r == g


def test_a_script_under_the_threshold_is_not_busy(both):
    both("EVAL", "for i = 1, 200000 do end return 1", 0)
    both("SCRIPT", "KILL")


@pytest.fixture
def own_pair(tmp_path_factory):
    pair = harness.start_pair(tmp_path_factory, "--busy-reply-threshold", "100")
    yield pair
    pair.stop()


def test_shutdown_nosave_stops_a_busy_server(own_pair):
    def scenario(port, other):
        t, box = start_script(port, LOOP, 0)
        busy = wait_busy(other)
        saving = outcome(lambda: other.execute_command("SHUTDOWN"))
        outcome(lambda: other.execute_command("SHUTDOWN", "NOSAVE"))
        t.join(10)
        return [busy, saving]

    r, g = on_each(own_pair, scenario)
    assert r == g
    for server in own_pair:
        server.proc.wait(10)
        assert not server.alive()
