"""`unixsocket` and `unixsocketperm` against Redis: a pair listens on a Unix socket beside
TCP (a relative path, so each server's socket sits in its own directory and both show the same
text); the same clients over it (redis-py's UnixDomainSocketConnection, redis-cli -s,
redis-benchmark -s) get the same replies: plain commands, blocking pops, pub/sub, MULTI,
MONITOR's `unix:` origin, CLIENT LIST/INFO's `addr=path:0 laddr=path:0` and flag `U`,
connected_clients; CONFIG GET and the refused CONFIG SET, the file's mode, bad values at
start, and the file removed at shutdown."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis

from harness import free_port, start_pair, stop_process
from test_service import fatal_start

SOCK = "s.sock"
REDIS_SRC = Path("/work/redis-7.2.4/src")
ARGS = ("--unixsocket", SOCK, "--unixsocketperm", "700")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    p = start_pair(tmp_path_factory, *ARGS)
    yield p
    p.stop()


def path_of(server) -> Path:
    return server.workdir / SOCK


def unix_client(server, **kw) -> redis.Redis:
    return redis.Redis(unix_socket_path=str(path_of(server)), socket_timeout=10,
                       single_connection_client=True, **kw)


def on_both(pair, f):
    """f(client over the Unix socket, server) on each server: (Redis's, Goblin's) outcome."""
    out = []
    for server in pair:
        c = unix_client(server)
        try:
            out.append(f(c, server))
        finally:
            c.close()
    return tuple(out)


def same(pair, f):
    r, g = on_both(pair, f)
    assert r == g
    return r


def fields(line: str) -> dict:
    return dict(kv.split("=", 1) for kv in line.split(" "))


def test_config_get_and_immutable(pair):
    got = same(pair, lambda c, _: c.config_get("unixsocket*"))
    assert got == {"unixsocket": SOCK, "unixsocketperm": "700"}
    for name, value in (("unixsocket", "/tmp/other.sock"), ("unixsocketperm", "755")):
        def refused(c, _):
            with pytest.raises(redis.ResponseError) as e:
                c.config_set(name, value)
            return str(e.value)
        assert "can't set immutable config" in same(pair, refused)


def test_socket_file_mode(pair):
    for server in pair:
        st = os.stat(path_of(server))
        assert stat.S_ISSOCK(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o700, server


def test_commands_over_the_socket(pair):
    def run(c, _):
        c.flushall()
        return [c.ping(), c.set("k", "v"), c.get("k"), c.incr("n"), c.lpush("l", "a", "b"),
                c.lrange("l", 0, -1), c.execute_command("ECHO", "x" * 100000) == b"x" * 100000]
    same(pair, run)


def test_client_list_and_info_show_the_socket(pair):
    def shown(c, _):
        c.client_setname("u1")
        mine = [fields(line) for line in c.execute_command("CLIENT", "LIST").decode().splitlines()
                if "name=u1" in line]
        info = fields(c.execute_command("CLIENT", "INFO").decode().strip())
        return [(m["addr"], m["laddr"], m["flags"]) for m in mine], \
            (info["addr"], info["laddr"], info["flags"])
    shown_as = (f"{SOCK}:0", f"{SOCK}:0", "U")
    assert same(pair, shown) == ([shown_as], shown_as)
    # CLIENT KILL ADDR takes the socket's form too.
    def kill(c, server):
        other = unix_client(server)
        other.ping()
        n = c.execute_command("CLIENT", "KILL", "ADDR", f"{SOCK}:0", "SKIPME", "yes")
        other.close()
        return n
    assert same(pair, kill) == 1


def test_connected_clients_counts_unix_clients(pair):
    def grown(c, server):
        before = c.info("clients")["connected_clients"]
        extra = [unix_client(server) for _ in range(3)]
        for e in extra:
            e.ping()
        after = c.info("clients")["connected_clients"]
        for e in extra:
            e.close()
        return after - before
    assert same(pair, grown) == 3


def test_blocking_pop_and_pubsub_over_the_socket(pair):
    def blocked(c, server):
        c.delete("q")
        got = {}
        t = threading.Thread(target=lambda: got.setdefault("r", c.blpop(["q"], timeout=10)))
        t.start()
        pusher = unix_client(server)
        deadline = time.monotonic() + 10
        while pusher.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        pusher.rpush("q", "item")
        t.join()
        pusher.close()
        return got["r"]
    assert same(pair, blocked) == (b"q", b"item")

    def pubsub(c, server):
        ps = unix_client(server).pubsub()
        ps.subscribe("ch")
        first = ps.get_message(timeout=5)
        n = c.publish("ch", "hello")
        msg = ps.get_message(timeout=5)
        ps.close()
        return first, n, msg
    same(pair, pubsub)


def test_multi_exec_over_the_socket(pair):
    def tx(c, _):
        c.delete("t")
        p = c.pipeline(transaction=True)
        p.incr("t").incr("t").get("t")
        return p.execute()
    assert same(pair, tx) == [1, 2, b"2"]


def test_monitor_names_the_socket(pair):
    def monitored(c, server):
        c.execute_command("MONITOR")
        other = unix_client(server)
        other.set("mk", "1")
        line = c.connection.read_response()
        while b'"SET"' not in line:  # the new client's handshake comes first
            line = c.connection.read_response()
        other.close()
        return re.sub(rb"^\d+\.\d+ ", b"", line)
    assert same(pair, monitored) == f'[0 unix:{SOCK}] "SET" "mk" "1"'.encode()


def test_redis_cli_and_benchmark_over_the_socket(pair):
    def cli(*args, server):
        return subprocess.run([str(REDIS_SRC / "redis-cli"), "-s", str(path_of(server)), *args],
                              capture_output=True, text=True, timeout=30)
    for args in (("ping",), ("set", "cli", "1"), ("get", "cli"), ("config", "get", "unixsocket")):
        r, g = (cli(*args, server=s) for s in pair)
        assert (r.returncode, r.stdout) == (g.returncode, g.stdout), args
    for server in pair:
        out = subprocess.run([str(REDIS_SRC / "redis-benchmark"), "-s", str(path_of(server)),
                              "-n", "2000", "-c", "4", "-t", "set,get,lpush", "-q"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out
        tests = [line.split(":")[0] for line in out.stdout.replace("\r", "\n").splitlines()
                 if "requests per second" in line]
        assert tests == ["SET", "GET", "LPUSH"], out.stdout


def test_socket_file_removed_at_shutdown(tmp_path_factory):
    p = start_pair(tmp_path_factory, *ARGS)
    try:
        for server in p:
            assert path_of(server).exists()
            stop_process(server.proc)
            server.proc = None
            assert not path_of(server).exists(), server
    finally:
        p.stop()


@pytest.mark.parametrize("value", ["800", "1000", "-1", "abc", "7x"])
def test_bad_permissions_are_fatal_as_in_redis(value, tmp_path):
    conf = f"port {free_port()}\nunixsocket {SOCK}\nunixsocketperm {value}\n"
    assert fatal_start("goblin", tmp_path, conf) == fatal_start("redis", tmp_path, conf)


@pytest.mark.parametrize("value", ["0777", "+5", " 17", ""])
def test_octal_forms_redis_accepts(value, tmp_path_factory):
    p = start_pair(tmp_path_factory, "--unixsocket", SOCK, "--unixsocketperm", value)
    try:
        r, g = (p.admin(s).config_get("unixsocketperm") for s in p)
        assert r == g
    finally:
        p.stop()
