"""Keys the server removes on its own propagate to the AOF as DEL or UNLINK exactly as
lazyfree-lazy-expire and lazyfree-lazy-eviction say (Redis's propagateDeletion): expired keys
found by a lookup and by the active expiry cycle, and keys maxmemory evicts. Both servers run
the same steps with appendonly yes; their incremental files are compared by command stream.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

from aof_stream import incr_stream
from test_aof import start
from test_persistence import procs  # noqa: F401 (the fixture)

KINDS = ("redis", "goblin")


def deletions(workdir: Path) -> list[tuple[int, bytes, bytes]]:
    """(db, verb, key) of every DEL and UNLINK in the stream, in order."""
    db, out = 0, []
    for argv in incr_stream(workdir):
        verb = argv[0].upper()
        if verb == b"SELECT":
            db = int(argv[1])
        elif verb in (b"DEL", b"UNLINK"):
            out += [(db, verb, key) for key in argv[1:]]
    return out


def poll(check, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.02)


def test_the_lazyfree_directives_exist_with_redis_defaults(procs, tmp_path):
    for kind in KINDS:
        c = start(procs, kind, tmp_path / kind).client()
        for name in ("lazyfree-lazy-expire", "lazyfree-lazy-eviction"):
            assert c.config_get(name) == {name: "no"}, kind
            assert c.config_set(name, "yes")
            assert c.config_get(name) == {name: "yes"}, kind
            with pytest.raises(Exception, match="argument must be 'yes' or 'no'"):
                c.config_set(name, "maybe")


@pytest.mark.parametrize("lazy", ["no", "yes"])
def test_expired_keys_propagate_per_lazyfree_lazy_expire(procs, tmp_path, lazy):
    got = {}
    for kind in KINDS:
        w = tmp_path / kind
        p = start(procs, kind, w, "--appendfsync", "always", "--enable-debug-command", "yes",
                  "--lazyfree-lazy-expire", lazy, "--lazyfree-lazy-eviction",
                  "no" if lazy == "yes" else "yes")
        c = p.client()
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        for i in range(5):
            c.set(f"looked:{i}", "v", px=30)
        c3 = p.client(db=3)
        c3.set("looked:db3", "v", px=30)
        c3.sadd("active:set", "a", "b")
        c3.pexpire("active:set", 30)
        for i in range(8):
            c.set(f"active:{i}", "v", px=30)
        c.set("stays", "1")
        time.sleep(0.1)
        # Found expired by a lookup: a read command deletes and propagates.
        for i in range(5):
            assert c.get(f"looked:{i}") is None
        assert c3.exists("looked:db3") == 0
        # The rest by the active expiry cycle.
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        poll(lambda: c.dbsize() == 1 and c3.dbsize() == 0, f"{kind}: active expiry")
        c.set("fence", "1")  # the cycle's deletions are in the file before this
        got[kind] = deletions(w)
    verb = b"UNLINK" if lazy == "yes" else b"DEL"
    looked = [(0, verb, f"looked:{i}".encode()) for i in range(5)] + [(3, verb, b"looked:db3")]
    for kind in KINDS:
        assert got[kind][:6] == looked, kind
        assert sorted(got[kind][6:]) == sorted(
            [(0, verb, f"active:{i}".encode()) for i in range(8)] + [(3, verb, b"active:set")]
        ), kind
    assert got["goblin"][:6] == got["redis"][:6]


@pytest.mark.parametrize("lazy", ["no", "yes"])
def test_times_in_the_past_propagate_per_lazyfree_lazy_expire(procs, tmp_path, lazy):
    # EXPIRE and GETEX PXAT with a time already past delete the key and replay as UNLINK
    # under lazyfree-lazy-expire (set at run time), DEL otherwise; Goblin always wrote DEL.
    got = {}
    for kind in KINDS:
        w = tmp_path / kind
        c = start(procs, kind, w, "--appendfsync", "always").client()
        c.config_set("lazyfree-lazy-expire", lazy)
        c.set("by:expire", "v")
        c.set("by:getex", "v")
        assert c.expire("by:expire", -1)
        assert c.execute_command("GETEX", "by:getex", "PXAT", 1) == b"v"
        c.set("fence", "1")
        got[kind] = deletions(w)
    verb = b"UNLINK" if lazy == "yes" else b"DEL"
    expected = [(0, verb, b"by:expire"), (0, verb, b"by:getex")]
    assert got["redis"] == expected
    assert got["goblin"] == expected


@pytest.mark.parametrize("lazy", ["no", "yes"])
def test_evicted_keys_propagate_per_lazyfree_lazy_eviction(procs, tmp_path, lazy):
    got = {}
    for kind in KINDS:
        w = tmp_path / kind
        p = start(procs, kind, w, "--appendfsync", "always", "--maxmemory-policy",
                  "allkeys-random", "--lazyfree-lazy-eviction", lazy, "--lazyfree-lazy-expire",
                  "no" if lazy == "yes" else "yes")
        c = p.client()
        c2 = p.client(db=2)
        for i in range(50):
            c.set(f"ev:{i}", "x" * 1000)
            c2.set(f"ev2:{i}", "y" * 1000)
        c.config_set("maxmemory", 1)
        # Every write evicts all it can; the keys go whatever the reply (OOM at the end).
        poll(lambda: _evicting_write(c) and c.dbsize() == 0 and c2.dbsize() == 0,
             f"{kind}: eviction")
        c.config_set("maxmemory", 0)
        c.set("fence", "1")
        got[kind] = sorted(d for d in deletions(w) if d[2] != b"probe")
    verb = b"UNLINK" if lazy == "yes" else b"DEL"
    expected = sorted([(0, verb, f"ev:{i}".encode()) for i in range(50)]
                      + [(2, verb, f"ev2:{i}".encode()) for i in range(50)])
    assert got["redis"] == expected
    assert got["goblin"] == expected


def _evicting_write(c) -> bool:
    try:
        c.set("probe", "1")
        c.delete("probe")
    except redis.exceptions.OutOfMemoryError:
        pass  # once nothing is left to evict
    return True
