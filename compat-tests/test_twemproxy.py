"""twemproxy (Debian's nutcracker) in front of three Goblins, beside the same proxy in front
of three Redis servers: a command mix sent through each proxy gives the same replies, the
keys spread over the three servers, and a command twemproxy does not support is refused by
the proxy alike (it closes the connection).

The pool: `redis: true`, `hash: fnv1a_64`, `distribution: ketama`, `hash_tag: "{}"`.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.driver_info import DriverInfo
from redis.retry import Retry

from harness import GOBLIN_BIN, REDIS_BIN, Server, free_port, stop_process

NUTCRACKER = shutil.which("nutcracker") or "/usr/sbin/nutcracker"


def proxy_client(port: int) -> redis.Redis:
    """A RESP2 client that sends no HELLO or CLIENT SETINFO (twemproxy refuses both)."""
    return redis.Redis(host="127.0.0.1", port=port, protocol=2,
                       driver_info=DriverInfo(name=None, lib_version=None),
                       socket_timeout=10, retry=Retry(NoBackoff(), 0))

pytestmark = pytest.mark.skipif(not Path(NUTCRACKER).exists(), reason="nutcracker not installed")


class Proxy:
    """A nutcracker process with one pool in front of `servers`."""

    def __init__(self, servers: list[Server], workdir: Path):
        self.servers = servers
        self.workdir = workdir
        self.port = 0
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        for _attempt in range(5):
            self.port, stats = free_port(), free_port()
            conf = self.workdir / "nutcracker.yml"
            conf.write_text(
                "pool:\n"
                f"  listen: 127.0.0.1:{self.port}\n"
                "  hash: fnv1a_64\n"
                "  hash_tag: \"{}\"\n"
                "  distribution: ketama\n"
                "  redis: true\n"
                "  timeout: 5000\n"
                "  auto_eject_hosts: false\n"
                "  servers:\n"
                + "".join(f"   - 127.0.0.1:{s.port}:1 s{i}\n" for i, s in enumerate(self.servers))
            )
            log = open(self.workdir / "nutcracker.log", "ab")
            self.proc = subprocess.Popen(
                [NUTCRACKER, "-c", str(conf), "-s", str(stats), "-a", "127.0.0.1",
                 "-o", str(self.workdir / "nutcracker.log")],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
            log.close()
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    c = proxy_client(self.port)
                    c.set("proxy:ready", 1)
                    c.delete("proxy:ready")
                    c.close()
                    return
                except redis.exceptions.ConnectionError:
                    time.sleep(0.1)
            stop_process(self.proc)
        raise RuntimeError("nutcracker did not start: " + (self.workdir / "nutcracker.log").read_text()[-2000:])

    def stop(self) -> None:
        if self.proc:
            stop_process(self.proc)


@pytest.fixture(scope="module")
def proxies(tmp_path_factory):
    started = []
    try:
        out = {}
        for kind, binary in (("redis", REDIS_BIN), ("goblin", GOBLIN_BIN)):
            servers = []
            for i in range(3):
                s = Server(kind, binary, [], tmp_path_factory.mktemp(f"{kind}{i}"))
                s.start()
                started.append(s)
                servers.append(s)
            p = Proxy(servers, tmp_path_factory.mktemp(f"proxy-{kind}"))
            p.start()
            started.append(p)
            out[kind] = p
        yield out
    finally:
        for s in reversed(started):
            s.stop()


def command_mix(c: redis.Redis) -> list:
    out = []

    def run(*cmd):
        try:
            out.append(c.execute_command(*cmd))
        except redis.exceptions.ResponseError as e:
            out.append(f"error: {e}")

    for i in range(60):
        run("SET", f"s:{i}", i)
        run("INCRBY", f"s:{i}", 5)
        run("GET", f"s:{i}")
        run("APPEND", f"a:{i}", "xy")
        run("STRLEN", f"a:{i}")
    run("MGET", *[f"s:{i}" for i in range(0, 60, 7)], "missing")
    run("MSET", "m:1", "a", "m:2", "b", "m:3", "c")
    run("MGET", "m:1", "m:2", "m:3")
    run("DEL", "m:1", "m:2", "m:3", "m:4")
    run("EXISTS", "s:1", "s:2", "nope")
    run("HSET", "h", "f1", "v1", "f2", "v2")
    run("HGETALL", "h")
    run("HINCRBY", "h", "n", 3)
    run("ZADD", "z", 1, "a", 2.5, "b", -1, "c")
    run("ZRANGE", "z", 0, -1, "WITHSCORES")
    run("ZINCRBY", "z", 2, "c")
    run("ZREVRANK", "z", "c")
    run("RPUSH", "l", "a", "b", "c")
    run("LRANGE", "l", 0, -1)
    run("LPOP", "l")
    run("SADD", "set", "x", "y", "z")
    run("SCARD", "set")
    run("SISMEMBER", "set", "y")
    run("EXPIRE", "s:1", 100)
    run("TTL", "s:1")
    run("PERSIST", "s:1")
    run("TYPE", "z")
    # Multi-key commands other than MGET/MSET/DEL/EXISTS need their keys on one server: a
    # hash tag puts them there.
    run("SADD", "{g}a", "1", "2", "3")
    run("SADD", "{g}b", "2", "3", "4")
    run("SINTER", "{g}a", "{g}b")
    run("SUNIONSTORE", "{g}u", "{g}a", "{g}b")
    run("SCARD", "{g}u")
    run("EVAL", "return redis.call('incrby', KEYS[1], ARGV[1])", 1, "e", 4)
    run("EVAL", "return redis.call('get', KEYS[1])", 1, "e")
    run("SET", "bad", "x")
    run("INCR", "bad")
    return out


def test_command_mix_through_twemproxy(proxies):
    got = {}
    for kind, proxy in proxies.items():
        c = proxy_client(proxy.port)
        try:
            got[kind] = command_mix(c)
        finally:
            c.close()
        sizes = []
        for s in proxy.servers:
            d = redis.Redis(port=s.port)
            sizes.append(d.dbsize())
            d.close()
        # ketama spread the keys over every server.
        assert all(n > 0 for n in sizes), (kind, sizes)
    assert got["redis"] == got["goblin"]


@pytest.mark.parametrize("cmd", [("KEYS", "*"), ("RENAME", "{g}x", "{g}y"), ("MULTI",), ("SCAN", 0),
                                 ("PUBLISH", "ch", "m"), ("INFO",), ("HELLO", 3)])
def test_unsupported_command_refused_by_the_proxy(proxies, cmd):
    outcomes = {}
    for kind, proxy in proxies.items():
        c = proxy_client(proxy.port)
        try:
            c.execute_command(*cmd)
            outcomes[kind] = "served"
        except redis.exceptions.ConnectionError:
            outcomes[kind] = "closed"
        except redis.exceptions.ResponseError as e:
            outcomes[kind] = f"error: {e}"
        finally:
            c.close()
    assert outcomes["redis"] == outcomes["goblin"] == "closed"
