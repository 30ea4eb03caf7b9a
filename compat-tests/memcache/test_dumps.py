"""The key dumps against memcached 1.6: `lru_crawler metadump` (all, hash, class lists, the
bad-class and wrong-arity errors; lines compared with the clock fields checked for form and
nearness, as the two servers started at other times) and `stats cachedump`, and
libmemcached's `memcdump` (which reads cachedump) listing the same keys from both.

memcached's cachedump walks a class's COLD segment only, where its maintainer moves idle
items after a while (a fetched one goes to WARM); Goblin reports every item in COLD, so it
lists them all and memcached's lines must be among its own.
memcached's crawler misbehaves once asked for a class without items (later metadumps
answer "ERROR an unknown error happened"), so the cases ask only for populated classes.
"""

import re
import shutil
import subprocess
import time

import pytest

pytestmark = pytest.mark.skipif(shutil.which("memcdump") is None,
                                reason="libmemcached-tools (memcdump) is not installed")

KEYS = [b"alpha", b"beta", b"g%20x", b"sp.c-e_~", b"k" * 250]
LINE = re.compile(rb"key=(\S+) exp=(-1|\d+) la=(\d+) cas=(\d+) fetch=(yes|no) cls=(\d+) size=(\d+)\n")


def load(server):
    data = b""
    for i, key in enumerate(KEYS):
        value = b"v" * (i * 300)
        data += b"set %s %d %d %d\r\n" % (key, i, 0 if i % 2 else 1000, len(value)) + value + b"\r\n"
    data += b"ms Zm9v 2 b\r\nhi\r\nset big 0 0 5000\r\n" + b"b" * 5000 + b"\r\n"
    data += b"set gone 0 0 1\r\nx\r\ndelete gone\r\nget alpha\r\n"
    server.exchange(data)


def metadump(server, which):
    reply = server.exchange(b"lru_crawler metadump " + which + b"\r\n", sentinel=False)
    assert reply.endswith(b"END\r\n"), reply[-100:]
    lines = reply[:-5].split(b"\n")[:-1] if reply != b"END\r\n" else []
    return sorted(lines)


def masked(lines):
    """The lines with the clock fields (exp, la: absolute times) checked and masked."""
    now = time.time()
    out = []
    for line in lines:
        m = LINE.fullmatch(line + b"\n")
        assert m, line
        exp, la = int(m.group(2)), int(m.group(3))
        assert exp == -1 or abs(exp - (now + 1000)) < 30, line
        assert abs(la - now) < 30, line
        out.append(line.replace(b"exp=%d" % exp, b"exp=T" if exp != -1 else b"exp=-1")
                   .replace(b"la=%d" % la, b"la=T"))
    return out


@pytest.fixture
def loaded(fresh_pair):
    for server in fresh_pair:
        load(server)
    return fresh_pair


def test_metadump_lists_every_live_item(loaded):
    mc, gb = loaded
    for which in (b"all", b"hash", b"1", b"1,4", b",1,", b"4,1"):
        assert masked(metadump(gb, which)) == masked(metadump(mc, which)), which
    assert len(metadump(gb, b"all")) == len(KEYS) + 2


@pytest.mark.parametrize("which", [b"0", b"64", b"99", b"-1", b"x", b"1,x", b"ALL"])
def test_metadump_refuses_bad_classes(loaded, which):
    mc, gb = loaded
    request = b"lru_crawler metadump " + which + b"\r\n"
    assert gb.exchange(request, sentinel=False) == mc.exchange(request, sentinel=False)
    assert gb.exchange(request, sentinel=False) == b"BADCLASS invalid class id\r\n"


def test_wrong_arity_is_an_error(loaded):
    mc, gb = loaded
    for request in (b"lru_crawler metadump\r\n", b"lru_crawler metadump all extra\r\n",
                    b"lru_crawler\r\n", b"lru_crawler bogus\r\n"):
        assert gb.exchange(request) == mc.exchange(request) == b"ERROR\r\nMN\r\n", request


def cachedump(server, cls, limit=0):
    return server.exchange(b"stats cachedump %d %d\r\n" % (cls, limit))


ITEM = re.compile(rb"ITEM (\S+) \[(\d+) b; (\d+) s\]")


def items(reply):
    """The ITEM lines of a cachedump reply (ending in END, MN), the absolute expiry checked
    for nearness and masked."""
    lines = reply.split(b"\r\n")
    assert lines[-3:] == [b"END", b"MN", b""], reply[-100:]
    out = set()
    for line in lines[:-3]:
        m = ITEM.fullmatch(line)
        assert m, line
        exp = int(m.group(3))
        assert exp == 0 or abs(exp - (time.time() + 1000)) < 30, line
        out.add((m.group(1), int(m.group(2)), exp != 0))
    return out


def test_cachedump_and_memcdump_list_the_keys(loaded):
    """memcached lists the items its maintainer moved to COLD, Goblin every item: memcached's
    lines are among Goblin's, and Goblin's are every key with its value size."""
    mc, gb = loaded
    classes = sorted({int(LINE.fullmatch(line + b"\n").group(6)) for line in metadump(gb, b"all")})
    deadline = time.monotonic() + 15
    while not any(items(cachedump(mc, c)) for c in classes) and time.monotonic() < deadline:
        time.sleep(0.2)
    listed = {s.name: set().union(*(items(cachedump(s, c)) for c in classes)) for s in (mc, gb)}
    assert listed["memcached"] and listed["memcached"] <= listed["goblin"]
    assert {key for key, _, _ in listed["goblin"]} == set(KEYS) | {b"foo", b"big"}
    assert dict((k, n) for k, n, _ in listed["goblin"])[b"big"] == 5000
    assert items(cachedump(gb, classes[0], 1)) and len(items(cachedump(gb, classes[0], 1))) == 1
    dumped = {s.name: set(subprocess.run(["memcdump", "-s", f"127.0.0.1:{s.port}"],
                                         capture_output=True, timeout=30, check=True).stdout.split())
              for s in (mc, gb)}
    assert dumped["memcached"] <= dumped["goblin"] == set(KEYS) | {b"foo", b"big"}
