"""Differential harness: every case runs against a real redis-server and goblin-server.

Servers
    `servers` (session) starts one redis-server (Debian's 7.0) and one goblin-server, each on a
    free 127.0.0.1 port, with `--save "" --appendonly no --enable-debug-command yes`, and stops
    them at the end of the session. `start_pair(*args)` starts another pair with extra
    arguments (a password, a small maxclients, ...) for the cases that need one; module-scoped
    fixtures built on it stop their pair when the module ends. GOBLIN_BIN overrides the path
    of goblin-server (default: <repo>/target/release/goblin-server), REDIS_BIN that of
    redis-server.

Clients
    `both` runs a command on both servers through redis-py (RESP2) and asserts that the
    replies are identical, errors included (same exception class, same message); it returns
    Redis's reply. `both3` does the same over RESP3 (`protocol=3`), `aboth` with the asyncio
    client. `both.run(...)` returns the two outcomes without asserting, for the few replies
    whose values legitimately differ (INFO fields, HELLO's version, ...). Each uses one
    connection per server (single_connection_client), so SELECT, MULTI and CLIENT state
    behave as on a single connection.

Raw bytes
    `raw(data, n)` sends the same bytes to both servers over plain sockets and returns both
    raw replies, read until `n` complete RESP replies are parsed (see resp.py: no timeouts
    decide where a reply ends). `raw.same(data, n)` also asserts that they are equal.

Isolation
    Every fixture above flushes both servers before the test and restores any parameter a
    test changed with `both.config_set`. After each test the harness checks that neither
    server died; a dead server fails that test with the tail of its log and is restarted.

Doubles
    Redis 7.0 prints doubles with %.17g, Goblin (like 7.2) in the shortest form that
    round-trips; `same()` treats two numeric strings of equal value as equal, so only that
    difference is tolerated.
"""

from __future__ import annotations

import math
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.retry import Retry

sys.path.insert(0, str(Path(__file__).resolve().parent))
import resp  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
GOBLIN_BIN = os.environ.get("GOBLIN_BIN", str(REPO / "target" / "release" / "goblin-server"))
REDIS_BIN = os.environ.get("REDIS_BIN", shutil.which("redis-server") or "/usr/bin/redis-server")

COMMON_ARGS = ["--save", "", "--appendonly", "no", "--enable-debug-command", "yes"]


# --------------------------------------------------------------------------------------------
# Servers
# --------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_until_close(sock: socket.socket, wait: float) -> tuple[bytes, bool]:
    """Reads `sock` until the peer closes it (a reset counts) or it stays quiet for `wait`
    seconds: the bytes read, and whether it closed."""
    sock.settimeout(wait)
    got = b""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return got, True
            got += data
    except socket.timeout:
        return got, False
    except ConnectionResetError:
        return got, True


def stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s; waits for the exit (shared by every suite)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Server:
    """One server process (redis-server or goblin-server) on a loopback port."""

    def __init__(self, kind: str, binary: str, args: list[str], workdir: Path):
        self.kind = kind
        self.binary = binary
        self.args = list(args)
        self.workdir = workdir
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.log_path = workdir / f"{kind}.log"

    def argv(self) -> list[str]:
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", *COMMON_ARGS]
        if self.kind == "redis":
            argv += ["--dir", str(self.workdir), "--daemonize", "no"]
        return argv + self.args

    def start(self) -> None:
        if not Path(self.binary).exists():
            raise RuntimeError(f"{self.kind} binary not found: {self.binary}")
        for _attempt in range(5):
            self.port = free_port()
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(
                self.argv(), cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            log.close()
            if self._wait_ready():
                return
            self.stop()
        raise RuntimeError(f"{self.kind} did not start; log:\n{self.log_tail()}")

    def _wait_ready(self, timeout: float = 15.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False  # e.g. the port was taken between free_port() and bind()
            try:
                with resp.RawConnection(self.port, timeout=2) as c:
                    # +PONG, or -NOAUTH: either means it is up; -LOADING (a snapshot or AOF
                    # still loading at start-up) means not yet.
                    if not c.request(b"PING\r\n").startswith(b"-LOADING"):
                        return True
                time.sleep(0.05)
            except OSError:
                time.sleep(0.05)
        return False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is None:
            return
        stop_process(self.proc)
        self.proc = None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __repr__(self):
        return f"<{self.kind} :{self.port}>"


class Pair:
    """A redis-server and a goblin-server started with the same extra arguments."""

    def __init__(self, workdir: Path, args: list[str]):
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "redis").mkdir(exist_ok=True)
        (workdir / "goblin").mkdir(exist_ok=True)
        self.redis = Server("redis", REDIS_BIN, args, workdir / "redis")
        self.goblin = Server("goblin", GOBLIN_BIN, args, workdir / "goblin")
        self.password: str | None = None
        if "--requirepass" in args:
            self.password = args[args.index("--requirepass") + 1]

    def start(self) -> "Pair":
        self.redis.start()
        try:
            self.goblin.start()
        except Exception:
            self.redis.stop()
            raise
        return self

    def stop(self) -> None:
        self.redis.stop()
        self.goblin.stop()

    def __iter__(self):
        return iter((self.redis, self.goblin))

    def check_alive(self) -> list[str]:
        """Restarts a server that died; returns a description of each death."""
        deaths = []
        for s in self:
            if not s.alive():
                code = s.proc.returncode if s.proc else None
                deaths.append(f"{s.kind} exited (code {code}); log tail:\n{s.log_tail()}")
                s.stop()
                s.start()
        return deaths

    def admin(self, server: Server) -> redis.Redis:
        return make_client(server, password=self.password)

    def flushall(self) -> None:
        for s in self:
            c = self.admin(s)
            try:
                c.execute_command("FLUSHALL")
            finally:
                c.close()


_pair_counter = 0


def start_pair(tmp_factory, *args: str) -> Pair:
    """Starts a redis-server / goblin-server pair with extra command-line arguments."""
    global _pair_counter
    _pair_counter += 1
    return Pair(tmp_factory.mktemp(f"pair{_pair_counter}"), list(args)).start()


def make_client(server: Server, protocol: int = 2, password: str | None = None, **kw) -> redis.Redis:
    return redis.Redis(
        host="127.0.0.1", port=server.port, protocol=protocol, password=password,
        single_connection_client=True, retry=Retry(NoBackoff(), 0), socket_timeout=30, **kw,
    )


def make_async_client(server: Server, protocol: int = 2, password: str | None = None, **kw):
    return redis.asyncio.Redis(
        host="127.0.0.1", port=server.port, protocol=protocol, password=password,
        single_connection_client=True, retry=Retry(NoBackoff(), 0), socket_timeout=30, **kw,
    )


# --------------------------------------------------------------------------------------------
# Comparing replies
# --------------------------------------------------------------------------------------------


def info_of(c: redis.Redis, section: str) -> dict:
    """INFO `section` from a client without reply callbacks, as a dict of numbers or texts."""
    out = {}
    for line in c.execute_command("INFO", section).decode().splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            for kind in (int, float, str):
                try:
                    out[k] = kind(v)
                    break
                except ValueError:
                    pass
    return out


def _as_float(v):
    if isinstance(v, bytes):
        try:
            v = v.decode()
        except UnicodeDecodeError:
            return None
    if isinstance(v, str):
        s = v.strip().lower()
        if not s or not any(ch in s for ch in ".einf"):
            return None
        try:
            return float(s)
        except ValueError:
            return None
    if isinstance(v, float):
        return v
    return None


def same(a, b) -> bool:
    """Equality of two replies, where doubles printed differently but equal in value match."""
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if isinstance(a, (bytes, str)) and isinstance(b, (bytes, str)):
            fa, fb = _as_float(a), _as_float(b)
            return fa is not None and fb is not None and (fa == fb or math.isnan(fa) and math.isnan(fb))
        return False
    if a == b:
        return True
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, BaseException):
        return describe(a) == describe(b)
    fa, fb = _as_float(a), _as_float(b)
    if fa is not None and fb is not None:
        return fa == fb or (math.isnan(fa) and math.isnan(fb))
    return False


def describe(outcome):
    """An outcome for comparison and display: errors become (class name, message)."""
    if isinstance(outcome, BaseException):
        return ("error", type(outcome).__name__, str(outcome))
    return outcome


def assert_same(r, g, what=""):
    if isinstance(r, BaseException) or isinstance(g, BaseException):
        ok = describe(r) == describe(g)
    else:
        ok = same(r, g)
    assert ok, f"{what}\n  redis:  {describe(r)!r}\n  goblin: {describe(g)!r}"


def same_raw(r: bytes, g: bytes) -> bool:
    """Raw replies equal byte for byte, or equal once parsed with doubles compared by value."""
    if r == g:
        return True
    try:
        return same(resp.parse_all(r), resp.parse_all(g))
    except Exception:
        return False


SANITIZE_FLAGS = (b"sanitize-payload", b"skip-sanitize-payload")


def acl_line_as_72(line: bytes) -> bytes:
    """One `user ...` line of Redis 7.0 (ACL LIST, CONFIG REWRITE) as 7.2 writes it: with
    `sanitize-payload` after on/off and nopass when it has neither sanitize flag."""
    words = line.split(b" ")
    if not any(w in SANITIZE_FLAGS for w in words):
        at = 4 if words[3:4] == [b"nopass"] else 3
        words.insert(at, b"sanitize-payload")
    return b" ".join(words)


def acl_users_as_72(cmd, reply):
    """Redis 7.0's ACL LIST / ACL GETUSER reply as 7.2 gives it: 7.2 creates every user
    with `sanitize-payload` (ACLCreateUser), 7.0 only set it on ACL SETUSER reset and the
    ACL file's users. A 7.2 reply comes back as it is (its users have one of the flags)."""
    name = [c.upper() if isinstance(c, bytes) else str(c).upper().encode() for c in cmd[:2]]
    if name == [b"ACL", b"LIST"] and isinstance(reply, list):
        return [acl_line_as_72(line) for line in reply]
    if name == [b"ACL", b"GETUSER"]:
        fields = reply if isinstance(reply, dict) else None
        if isinstance(reply, list):
            fields = dict(zip(reply[::2], reply[1::2]))
        flags = (fields or {}).get(b"flags")
        if isinstance(flags, (list, set)) and not any(f in SANITIZE_FLAGS for f in flags):
            if isinstance(flags, set):
                flags.add(b"sanitize-payload")
            else:
                flags.append(b"sanitize-payload")
    return reply


class Both:
    """Runs each command on both servers through redis-py and compares the outcomes."""

    def __init__(self, pair: Pair, protocol: int = 2, callbacks: bool = False, **kw):
        self.pair = pair
        self.protocol = protocol
        self.callbacks = callbacks
        self.kw = kw
        self.redis = make_client(pair.redis, protocol, pair.password, **kw)
        self.goblin = make_client(pair.goblin, protocol, pair.password, **kw)
        if not callbacks:
            # Compare what the servers sent, as the protocol parser decoded it, not redis-py's
            # per-command post-processing (which also misreads QUEUED inside MULTI).
            for c in self.clients():
                c.response_callbacks = {}
        self._restore: dict[str, tuple] = {}

    def clients(self):
        return (self.redis, self.goblin)

    @staticmethod
    def _outcome(fn):
        try:
            return fn()
        except redis.RedisError as e:
            return e

    def run(self, *cmd, **opts):
        """The two outcomes (reply or exception), without comparing them."""
        return (
            acl_users_as_72(cmd, self._outcome(lambda: self.redis.execute_command(*cmd, **opts))),
            self._outcome(lambda: self.goblin.execute_command(*cmd, **opts)),
        )

    def __call__(self, *cmd, **opts):
        """Runs `cmd` on both, asserts equal outcomes, returns Redis's (an exception is returned, not raised)."""
        r, g = self.run(*cmd, **opts)
        assert_same(r, g, f"command {cmd!r}")
        return r

    def pairs(self, *cmd, **opts):
        """Like calling, for a reply of field/value pairs in no defined order (CONFIG GET):
        compared as a mapping. Returns Redis's reply as a dict (or its error)."""

        def as_map(x):
            if isinstance(x, list) and len(x) % 2 == 0:
                return dict(zip(x[::2], x[1::2]))
            return x

        r, g = self.run(*cmd, **opts)
        r, g = as_map(r), as_map(g)
        assert_same(r, g, f"command {cmd!r}")
        return r

    def ok(self, *cmd, **opts):
        """Like calling, and the reply must not be an error."""
        r = self(*cmd, **opts)
        assert not isinstance(r, BaseException), f"{cmd!r} failed on both: {r}"
        return r

    def err(self, *cmd, **opts) -> str:
        """Like calling, and the reply must be an error; returns its message."""
        r = self(*cmd, **opts)
        assert isinstance(r, BaseException), f"{cmd!r} did not fail: {r!r}"
        return str(r)

    def each(self, fn):
        """Applies fn(client) to both clients; asserts equal outcomes; returns Redis's."""
        r = self._outcome(lambda: fn(self.redis))
        g = self._outcome(lambda: fn(self.goblin))
        assert_same(r, g, "each()")
        return r

    def config_set(self, name: str, value) -> None:
        """CONFIG SET on both; the old values come back after the test."""
        if name not in self._restore:
            old = []
            for c in self.clients():
                pairs = c.execute_command("CONFIG", "GET", name)
                if isinstance(pairs, list):
                    pairs = dict(zip(pairs[::2], pairs[1::2]))
                old.append(pairs.get(name.encode()))
            self._restore[name] = tuple(old)
        self.ok("CONFIG", "SET", name, value)

    def new(self, protocol: int | None = None, callbacks: bool | None = None, **kw) -> "Both":
        """Another pair of connections to the same servers."""
        return Both(
            self.pair,
            self.protocol if protocol is None else protocol,
            self.callbacks if callbacks is None else callbacks,
            **{**self.kw, **kw},
        )

    def restore_config(self) -> None:
        for name, old in self._restore.items():
            for server, value in zip(self.pair, old):
                if value is None:
                    continue
                c = self.pair.admin(server)
                try:
                    c.config_set(name, value)
                finally:
                    c.close()
        self._restore.clear()

    def close(self) -> None:
        for c in self.clients():
            try:
                c.close()
            except Exception:
                pass


class AsyncBoth:
    """The asyncio counterpart of Both."""

    def __init__(self, pair: Pair, protocol: int = 2):
        self.pair = pair
        self.redis = make_async_client(pair.redis, protocol, pair.password)
        self.goblin = make_async_client(pair.goblin, protocol, pair.password)
        for c in (self.redis, self.goblin):
            c.response_callbacks = {}

    async def run(self, *cmd, **opts):
        out = []
        for c in (self.redis, self.goblin):
            try:
                out.append(await c.execute_command(*cmd, **opts))
            except redis.RedisError as e:
                out.append(e)
        return tuple(out)

    async def __call__(self, *cmd, **opts):
        r, g = await self.run(*cmd, **opts)
        assert_same(r, g, f"command {cmd!r}")
        return r

    async def close(self):
        for c in (self.redis, self.goblin):
            await c.aclose()


class RawPair:
    """Plain sockets to both servers; the same bytes go to each."""

    def __init__(self, pair: Pair, timeout: float = 10.0):
        self.pair = pair
        self.timeout = timeout
        self.redis = resp.RawConnection(pair.redis.port, timeout)
        self.goblin = resp.RawConnection(pair.goblin.port, timeout)
        self.opened = [self]

    def conns(self):
        return (self.redis, self.goblin)

    def send(self, data: bytes) -> None:
        for c in self.conns():
            c.send(data)

    def read(self, count: int = 1) -> tuple[bytes, bytes]:
        return tuple(c.read_replies(count) for c in self.conns())

    def __call__(self, data: bytes, count: int = 1) -> tuple[bytes, bytes]:
        """Sends `data` to both and reads `count` complete replies from each."""
        self.send(data)
        return self.read(count)

    def same(self, data: bytes, count: int = 1) -> bytes:
        """Like calling, and the two raw replies must be equal (doubles by value); returns Redis's."""
        r, g = self(data, count)
        assert same_raw(r, g), f"raw {data[:200]!r}\n  redis:  {r!r}\n  goblin: {g!r}"
        return r

    def closed(self, wait: float = 5.0) -> tuple[bool, bool]:
        return tuple(c.is_closed(wait) for c in self.conns())

    def new(self) -> "RawPair":
        p = RawPair(self.pair, self.timeout)
        self.opened.append(p)
        return p

    def close(self) -> None:
        for p in self.opened:
            for c in p.conns():
                c.close()


def _clean(pair: Pair):
    deaths = pair.check_alive()
    assert not deaths, "a server died before this test:\n" + "\n".join(deaths)
    pair.flushall()


def _after(pair: Pair):
    deaths = pair.check_alive()
    if deaths:
        pytest.fail("a server died during this test:\n" + "\n".join(deaths), pytrace=False)


def zadd_keys(both: Both, *keys: str) -> None:
    """Creates each key as a one-member sorted set on both servers (the only key type Goblin has)."""
    for k in keys:
        both.ok("ZADD", k, 1, "m")
