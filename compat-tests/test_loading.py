"""Persistence edges against Redis: -LOADING while a big RDB loads at start-up (the port
accepts during the load, INFO shows the loading_* fields), MISCONF after a failed BGSAVE
under stop-writes-on-bgsave-error, and the failure in INFO (rdb_last_bgsave_status:err).
"""

from __future__ import annotations

import os
import shutil
import socket
import time

import pytest

from harness import GOBLIN_BIN, REDIS_BIN, free_port
from test_persistence import Proc


def big_rdb(workdir):
    """A snapshot of a few million members, written by Redis."""
    src = workdir / "src"
    src.mkdir()
    r = Proc(REDIS_BIN, src, "--save", "", "--dir", str(src), name="writer").start()
    c = r.client()
    for k in range(40):
        for start in range(0, 50000, 10000):
            c.execute_command("ZADD", f"set:{k}", *[x for m in range(start, start + 10000) for x in (m, f"member:{k}:{m}")])
    c.save()
    c.shutdown(nosave=True)
    r.wait()
    return src / "dump.rdb"


def first_reply(port, timeout=20.0):
    """The first reply to PING on a fresh connection, as soon as the port accepts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"PING\r\nINFO persistence\r\n")
                time.sleep(0.05)
                return s.recv(65536)
        except OSError:
            time.sleep(0.005)
    raise RuntimeError("never accepted")


def small_rdb(workdir):
    """A snapshot of 3,000 keys of 100 bytes (about 330 KB), written by Redis."""
    src = workdir / "src"
    src.mkdir()
    writer = Proc(REDIS_BIN, src, "--save", "", "--dir", str(src), name="writer").start()
    c = writer.client()
    for k in range(0, 3000, 500):
        c.mset({f"key:{i}": "v" * 100 for i in range(k, k + 500)})
    c.save()
    c.shutdown(nosave=True)
    writer.wait()
    return src / "dump.rdb"


@pytest.mark.parametrize("kind", ["redis", "goblin"])
def test_clients_of_a_load_under_the_events_interval_wait_for_its_end(tmp_path, kind):
    """Redis serves its clients during a load only each time another
    loading-process-events-interval-bytes (2 MB by default) were read: a client of a
    330 KB snapshot, slowed to about 1.5 s by key-load-delay, gets its reply after the load,
    never -LOADING (Goblin answered -LOADING from its loading thread)."""
    work = tmp_path / kind
    work.mkdir()
    shutil.copy(small_rdb(tmp_path), work / "dump.rdb")
    binary = REDIS_BIN if kind == "redis" else GOBLIN_BIN
    p = Proc(binary, work, "--save", "", "--dir", str(work), "--key-load-delay", "500",
             name=kind)
    p.start(expect_up=False)
    try:
        reply = first_reply(p.port)
        assert reply.startswith(b"+PONG\r\n"), reply[:200]
        assert p.client().info("persistence")["loading"] == 0
        assert p.client().dbsize() == 3000
    finally:
        p.kill9()


@pytest.mark.parametrize("kind", ["redis", "goblin"])
def test_clients_get_loading_while_a_big_rdb_loads(tmp_path, kind):
    rdb = big_rdb(tmp_path)
    work = tmp_path / kind
    work.mkdir()
    shutil.copy(rdb, work / "dump.rdb")
    binary = REDIS_BIN if kind == "redis" else GOBLIN_BIN
    p = Proc(binary, work, "--save", "", "--dir", str(work))
    p.start(expect_up=False)
    p.port = p.port or free_port()
    try:
        reply = first_reply(p.port)
        assert reply.startswith(b"-LOADING Redis is loading the dataset in memory\r\n"), reply[:200]
        assert b"loading:1" in reply and b"loading_total_bytes:%d" % os.path.getsize(rdb) in reply, reply
        assert b"loading_loaded_perc:" in reply and b"loading_eta_seconds:" in reply
        deadline = time.monotonic() + 60
        while True:
            try:
                if p.client().ping():
                    break
            except Exception:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        c = p.client()
        assert c.dbsize() == 40
        assert c.zcard("set:7") == 50000
        assert c.info("persistence")["loading"] == 0
    finally:
        p.kill9()


def test_misconf_after_a_failed_bgsave(tmp_path):
    """BGSAVE into a directory removed under the server fails; writes (and PING) then get
    MISCONF until stop-writes-on-bgsave-error is off or a save succeeds."""
    procs = []
    for kind, binary in (("redis", REDIS_BIN), ("goblin", GOBLIN_BIN)):
        work = tmp_path / kind
        work.mkdir()
        procs.append(Proc(binary, work, "--save", "3600 1", "--dir", str(work)).start())
    clients = [p.client() for p in procs]
    for c in clients:
        c.response_callbacks = {}

    def both(*cmd):
        out = []
        for c in clients:
            try:
                out.append(c.execute_command(*cmd))
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
        assert out[0] == out[1], (cmd, out)
        return out[0]

    def status(c):
        return c.execute_command("INFO", "persistence").decode()

    try:
        for p in procs:
            shutil.rmtree(p.workdir)
        both("ZADD", "k", 1, "a")
        for c in clients:
            c.execute_command("BGSAVE")
        deadline = time.time() + 10
        while any("rdb_last_bgsave_status:err" not in status(c) or "rdb_bgsave_in_progress:0" not in status(c)
                  for c in clients):
            assert time.time() < deadline, "BGSAVE did not fail"
            time.sleep(0.05)
        assert both("ZADD", "k", 2, "b")[0] == "ResponseError"
        both("PING")
        both("ZSCORE", "k", "a")
        both("DEL", "k")
        both("MULTI")
        both("ZSCORE", "k", "a")
        both("EXEC")
        both("CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
        both("ZADD", "k", 2, "b")
        both("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
        both("ZADD", "k", 3, "c")
        both("CONFIG", "GET", "stop-writes-on-bgsave-error")
        both("CONFIG", "SET", "save", "")
        both("ZADD", "k", 3, "c")
    finally:
        for p in procs:
            p.kill9()


def test_config_set_during_loading(tmp_path):
    """unit/introspection: while a snapshot loads (slowed by key-load-delay), CONFIG SET
    changes loglevel but refuses dir, appendonly and repl-diskless-load with -LOADING."""
    rdb = small_rdb(tmp_path)
    replies = {}
    for kind, binary in (("redis", REDIS_BIN), ("goblin", GOBLIN_BIN)):
        work = tmp_path / kind
        work.mkdir()
        shutil.copy(rdb, work / "dump.rdb")
        p = Proc(binary, work, "--save", "", "--dir", str(work), "--key-load-delay", "2000", "--enable-protected-configs", "yes",
                 "--loading-process-events-interval-bytes", "1024", name=kind)
        p.start(expect_up=False)
        try:
            assert first_reply(p.port).startswith(b"-LOADING")
            got = []
            with socket.create_connection(("127.0.0.1", p.port), timeout=5) as s:
                for cmd in (b"CONFIG SET loglevel debug", b"CONFIG SET dir /tmp",
                            b"CONFIG SET appendonly yes", b"CONFIG SET repl-diskless-load swapdb",
                            b"CONFIG SET maxmemory 10 dir /tmp", b"CONFIG SET nosuch 1 dir /tmp"):
                    s.sendall(cmd + b"\r\n")
                    time.sleep(0.05)
                    got.append(s.recv(4096))
                s.sendall(b"INFO persistence\r\n")
                time.sleep(0.05)
                assert b"loading:1" in s.recv(65536)
            replies[kind] = got
        finally:
            p.kill9()
    assert replies["goblin"] == replies["redis"]
    assert replies["goblin"][1].startswith(b"-LOADING")
