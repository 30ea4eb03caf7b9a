"""Helpers shared by the sorted-set compat tests (test_zset_*.py).

Comparing doubles
    Debian's redis-server is 7.0 and prints doubles with "%.17g"; Goblin prints them as Redis
    7.2 does (`d2string`: integers up to 2^62 as integers, otherwise the shortest digits that
    round-trip, laid out by fpconv's rules). `zsame` walks two replies and accepts a difference
    in a bulk string only when Redis's text is exactly the 7.0 form of a double and Goblin's is
    exactly the 7.2 form of the same double, so a wrong digit, a lost "-0" or a different
    layout ("1e+16" for "10000000000000000") still fails. RESP3 doubles are compared as values,
    with the sign of zero. Everything else must be equal.

`Z` wraps a conftest `Both` (one connection per server, RESP2 or RESP3) with that comparison
and adds helpers to load sets through pipelines, compare whole sets and encodings, and run a
command on Goblin alone (for what Redis 7.2 added and 7.0 lacks).

`Blocked` drives blocking commands over raw sockets (conftest's RawPair): the same bytes go to
both servers, and the tests wait for INFO's blocked_clients instead of sleeping.
"""

from __future__ import annotations

import math
import time
from decimal import Decimal

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

import resp
from conftest import Both, RawPair, describe

# --------------------------------------------------------------------------------------------
# Doubles as Redis 7.0 and 7.2 print them
# --------------------------------------------------------------------------------------------

_LLONG_HALF = float((2**63 - 1) // 2)  # (double)(LLONG_MAX/2): d2string's integer fast path


def fmt70(v: float) -> str:
    """A double as Redis 7.0 replies it (addReplyDouble: "%.17g", inf spelled out)."""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "%.17g" % v


def fmt72(v: float) -> str:
    """A double as Redis 7.2 replies it (d2string + fpconv_dtoa's layout)."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    if -_LLONG_HALF <= v <= _LLONG_HALF and v == int(v):
        return str(int(v))
    neg = v < 0
    t = Decimal(repr(abs(v))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    k = t.exponent
    nd = len(digits)
    exp = abs(k + nd - 1)
    sign = "-" if neg else ""
    if k >= 0 and exp < nd + 7:
        return sign + digits + "0" * k
    if k < 0 and (k > -7 or exp < 4):
        offset = nd - abs(k)
        if offset <= 0:
            return sign + "0." + "0" * (-offset) + digits
        return sign + digits[:offset] + "." + digits[offset:]
    nd = min(nd, 18 - neg)
    body = digits[0] + ("." + digits[1:nd] if nd > 1 else "")
    return f"{sign}{body}e{'-' if k + nd - 1 < 0 else '+'}{exp}"


def _float_of(b):
    try:
        s = b.decode() if isinstance(b, bytes) else b
        return float(s)
    except (ValueError, UnicodeDecodeError, AttributeError):
        return None


def _same_double_text(r, g) -> bool:
    """r is Redis 7.0's text of a double and g is Redis 7.2's text of the same double."""
    v = _float_of(r)
    if v is None or math.isnan(v):
        return False
    rs = r.decode() if isinstance(r, bytes) else r
    gs = g.decode() if isinstance(g, bytes) else g
    return rs == fmt70(v) and gs == fmt72(v)


def zsame(r, g) -> bool:
    """Replies equal, except doubles that only differ by 7.0's and 7.2's printing (see top)."""
    if isinstance(r, BaseException) or isinstance(g, BaseException):
        return describe(r) == describe(g)
    if isinstance(r, float) and isinstance(g, float):
        if math.isnan(r) or math.isnan(g):
            return math.isnan(r) and math.isnan(g)
        return r == g and math.copysign(1.0, r) == math.copysign(1.0, g)
    if type(r) is not type(g):
        return False
    if isinstance(r, (bytes, str)):
        return r == g or _same_double_text(r, g)
    if isinstance(r, (list, tuple)):
        return len(r) == len(g) and all(zsame(a, b) for a, b in zip(r, g))
    if isinstance(r, set):
        return r == g
    if isinstance(r, dict):
        if r.keys() != g.keys():
            return False
        return all(zsame(r[k], g[k]) for k in r)
    return r == g


def assert_zsame(r, g, what=""):
    assert zsame(r, g), f"{what}\n  redis:  {describe(r)!r}\n  goblin: {describe(g)!r}"


def raw_same(r: bytes, g: bytes) -> bool:
    """Two raw replies: equal bytes, or equal once parsed under `zsame`'s rule."""
    if r == g:
        return True
    try:
        pr, pg = resp.parse_all(r), resp.parse_all(g)
    except Exception:
        return False
    return _raw_same(pr, pg)


def _raw_same(r, g) -> bool:
    if isinstance(r, resp.Double) and isinstance(g, resp.Double):
        return zsame(float(r), float(g))
    if isinstance(r, resp.Error) or isinstance(g, resp.Error):
        return r == g
    if isinstance(r, list) and isinstance(g, list):
        return len(r) == len(g) and all(_raw_same(a, b) for a, b in zip(r, g))
    if isinstance(r, tuple) and isinstance(g, tuple):
        return all(_raw_same(a, b) for a, b in zip(r, g))
    return zsame(r, g)


# --------------------------------------------------------------------------------------------
# Paired clients with the strict comparison
# --------------------------------------------------------------------------------------------


class Z:
    """A conftest `Both` whose comparisons follow `zsame`."""

    def __init__(self, both: Both):
        self.b = both
        self.redis = both.redis
        self.goblin = both.goblin
        self.resp3 = both.protocol == 3
        self._restore = {}

    def run(self, *cmd):
        return self.b.run(*cmd)

    def __call__(self, *cmd):
        r, g = self.b.run(*cmd)
        assert_zsame(r, g, f"command {cmd!r} (RESP{3 if self.resp3 else 2})")
        return r

    def ok(self, *cmd):
        r = self(*cmd)
        assert not isinstance(r, BaseException), f"{cmd!r} failed on both: {r}"
        return r

    def err(self, *cmd, match: str | None = None) -> str:
        r = self(*cmd)
        assert isinstance(r, BaseException), f"{cmd!r} did not fail: {r!r}"
        if match is not None:
            assert match in str(r), f"{cmd!r}: expected {match!r} in {r}"
        return str(r)

    def errs(self, cases):
        """Many commands that must fail on both servers with the same error, run as one
        pipeline so that every mismatch is reported, not only the first. Each case is a
        command tuple, or (command tuple, text the error must contain)."""
        cases = [c if isinstance(c[0], tuple) else (c, None) for c in cases]
        replies = self.pipe_raw([cmd for cmd, _ in cases])
        bad = []
        for (cmd, match), (r, g) in zip(cases, replies):
            if not zsame(r, g):
                bad.append(f"  {cmd!r}\n    redis:  {describe(r)!r}\n    goblin: {describe(g)!r}")
            elif not isinstance(r, BaseException):
                bad.append(f"  {cmd!r} did not fail: {r!r}")
            elif match is not None and match not in str(r):
                bad.append(f"  {cmd!r}: {match!r} not in {str(r)!r}")
        assert not bad, f"{len(bad)} of {len(cases)} error cases differ:\n" + "\n".join(bad)

    def pipe_raw(self, cmds):
        """(redis, goblin) reply pairs of `cmds` sent as one pipeline to each server."""
        out = []
        for c in (self.redis, self.goblin):
            p = c.pipeline(transaction=False)
            for cmd in cmds:
                p.execute_command(*cmd)
            out.append(p.execute(raise_on_error=False))
        return list(zip(*out))

    def goblin_only(self, *cmd, timeout: float | None = None):
        """`cmd` on Goblin alone (reply or exception); with `timeout`, on a fresh connection
        that gives up after that many seconds (for commands that might block)."""
        client = self.goblin
        if timeout is not None:
            client = redis.Redis(host="127.0.0.1", port=self.b.pair.goblin.port,
                                 protocol=3 if self.resp3 else 2, password=self.b.pair.password,
                                 single_connection_client=True, socket_timeout=timeout,
                                 retry=Retry(NoBackoff(), 0))
            client.response_callbacks = {}
        try:
            return client.execute_command(*cmd)
        except redis.RedisError as e:
            return e
        finally:
            if timeout is not None:
                client.close()

    def config_set(self, name, value):
        """CONFIG SET on both; the old values come back when the test ends (see `z_for`).

        (conftest's Both.config_set reads CONFIG GET through redis-py's callbacks, which the
        differential clients switch off, so it cannot be used on a RESP2 `both`.)"""
        for c in (self.redis, self.goblin):
            if (c, name) not in self._restore:
                got = c.execute_command("CONFIG", "GET", name)
                if isinstance(got, dict):
                    old = next(iter(got.values()))
                else:
                    old = got[1]
                self._restore[(c, name)] = old
        self.ok("CONFIG", "SET", name, value)

    def restore(self):
        # Newest first, so that aliases (zset-max-ziplist-* / zset-max-listpack-*) end with
        # the value from before the test.
        for (c, name), old in reversed(list(self._restore.items())):
            c.execute_command("CONFIG", "SET", name, old)
        self._restore.clear()

    # Loading and comparing whole sets -------------------------------------------------------

    def load(self, key, pairs, batch: int = 1000):
        """ZADD (score, member) pairs to `key` on both servers through pipelines."""
        pairs = list(pairs)
        for c in (self.redis, self.goblin):
            p = c.pipeline(transaction=False)
            for i in range(0, len(pairs), batch):
                args = []
                for score, member in pairs[i:i + batch]:
                    args += [score, member]
                p.execute_command("ZADD", key, *args)
            p.execute()

    def pipe(self, cmds):
        """Runs a list of commands as one pipeline on each server; compares every reply and
        reports every mismatch. Returns Redis's replies."""
        pairs = self.pipe_raw(cmds)
        bad = [(cmd, r, g) for cmd, (r, g) in zip(cmds, pairs) if not zsame(r, g)]
        assert not bad, f"{len(bad)} of {len(cmds)} pipelined replies differ:\n" + "\n".join(
            f"  {cmd!r}\n    redis:  {describe(r)!r}\n    goblin: {describe(g)!r}" for cmd, r, g in bad[:12]
        )
        return [r for r, _ in pairs]

    def enc(self, key):
        """OBJECT ENCODING must agree; returns it (as str, or None for a missing key)."""
        r = self("OBJECT", "ENCODING", key)
        return r.decode() if isinstance(r, bytes) else r

    def state(self, *keys):
        """The whole content, existence and encoding of each key must agree."""
        for k in keys:
            self("EXISTS", k)
            self("ZCARD", k)
            self("ZRANGE", k, 0, -1, "WITHSCORES")
            if self("EXISTS", k):
                self.enc(k)

    def gone(self, key):
        """The key must not exist on either server."""
        assert self("EXISTS", key) == 0, f"{key!r} still exists"


def z_for(request, protocol: int) -> Z:
    fixture = "both3" if protocol == 3 else "both"
    z = Z(request.getfixturevalue(fixture))
    request.addfinalizer(z.restore)
    return z


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def z(request):
    """A `Z` over RESP2, then over RESP3."""
    return z_for(request, request.param)


@pytest.fixture(params=["listpack", "skiplist"])
def zenc(request, z):
    """`z`, with new sets in the small form, then (zset-max-listpack-entries 0) the large one."""
    if request.param == "skiplist":
        z.config_set("zset-max-listpack-entries", 0)
    z.encoding = request.param
    return z


@pytest.fixture(params=["listpack", "skiplist"])
def z2enc(request):
    """Like `zenc`, over RESP2 only: for cases whose replies hold no doubles worth a RESP3
    run, and for known discrepancies that would otherwise fail four times."""
    z = z_for(request, 2)
    if request.param == "skiplist":
        z.config_set("zset-max-listpack-entries", 0)
    z.encoding = request.param
    return z


# --------------------------------------------------------------------------------------------
# Blocking commands over raw sockets
# --------------------------------------------------------------------------------------------


def info_field(reply, field: str):
    text = reply.decode() if isinstance(reply, bytes) else str(reply)
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError(f"{field} not in INFO reply")


def blocked_counts(z: Z) -> tuple[int, int]:
    r, g = z.run("INFO", "clients")
    return info_field(r, "blocked_clients"), info_field(g, "blocked_clients")


def wait_blocked(z: Z, n: int, timeout: float = 5.0) -> None:
    """Waits until each server reports `n` blocked clients (fails after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        counts = blocked_counts(z)
        if counts == (n, n):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"blocked_clients (redis, goblin) = {counts}, wanted {n}")
        time.sleep(0.01)


def settle(z: Z, timeout: float = 5.0) -> int:
    """Waits until both servers report the same blocked-client count for 100 ms; returns it."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        counts = blocked_counts(z)
        if counts != last:
            last, since = counts, time.monotonic()
        elif counts[0] == counts[1] and time.monotonic() - since > 0.1:
            return counts[0]
        time.sleep(0.01)
    raise AssertionError(f"blocked_clients (redis, goblin) = {last}")


class Blocked:
    """One raw connection to each server, for a client that blocks."""

    def __init__(self, raw: RawPair, protocol: int = 2):
        self.p = raw.new()
        if protocol == 3:
            self.p.send(resp.encode("HELLO", "3"))
            self.p.read(1)
        r, g = self.p(resp.encode("CLIENT", "ID"))
        self.ids = (resp.parse(r)[0], resp.parse(g)[0])

    def send(self, *cmd) -> None:
        self.p.send(resp.encode(*cmd))

    def read(self, n: int = 1) -> tuple[bytes, bytes]:
        return self.p.read(n)

    def same(self, n: int = 1) -> bytes:
        """Reads `n` replies from each server; they must agree; returns Redis's bytes."""
        r, g = self.p.read(n)
        assert raw_same(r, g), f"blocked reply\n  redis:  {r!r}\n  goblin: {g!r}"
        return r

    def pending(self, wait: float = 0.05) -> tuple[bytes, bytes]:
        """Whatever each server has sent within `wait` seconds (b"" when nothing)."""
        out = []
        for c in self.p.conns():
            c.sock.settimeout(wait)
            try:
                chunk = c.sock.recv(1 << 16)
            except OSError:
                chunk = b""
            c.buf += chunk
            out.append(c.buf)
        return tuple(out)


def unblock(z: Z, client: Blocked, how: str | None = None):
    """CLIENT UNBLOCK with each server's own id for `client`; the replies must agree."""
    args = [how] if how else []
    r = z.redis.execute_command("CLIENT", "UNBLOCK", client.ids[0], *args)
    g = z.goblin.execute_command("CLIENT", "UNBLOCK", client.ids[1], *args)
    assert r == g, f"CLIENT UNBLOCK {how}: redis {r!r}, goblin {g!r}"
    return r
