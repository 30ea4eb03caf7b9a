"""SHUTDOWN and SIGTERM waiting for lagging replicas, beside Debian's redis-server 7.0: a
master whose replica is stopped (SIGSTOP) while writes are pending waits (reads answered,
writes held), SHUTDOWN ABORT cancels the wait (the caller gets Redis's error, writes
resume), the master exits once the resumed replica acknowledged (the replica has every
key), when shutdown-timeout runs out, or at once with NOW / shutdown-on-sigterm "now"; a
failed save after the wait (with and without FORCE), a second SIGINT (exit 1 at once), a
second SHUTDOWN joining the first; shutdown-timeout, shutdown-on-sigterm and
shutdown-on-sigint as CONFIG parameters, flags and config-file directives.

Every scenario runs with each of Goblin and Redis as the master and as the replica, so that
what is asserted is Redis's behaviour and the mixed pairs work both ways (a Redis master
asking a Goblin replica for its acknowledgement, and the reverse). Nothing is decided by a
sleep: the wait shows in the master's log, a held write in CLIENT LIST's `b` flag.
"""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from harness import GOBLIN_BIN, REDIS_BIN, free_port
from resp import RawConnection, encode
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import replicaof, start, wait_for, wait_synced

KINDS = ["redis", "goblin"]
PAIRS = [(m, r) for m in KINDS for r in KINDS]
WAITING = "Waiting for replicas before shutting down."


def master_and_replica(procs, tmp_path: Path, kinds, *master_args: str) -> tuple[Proc, Proc]:
    """A master (with `master_args`) and a replica in sync with it."""
    m = start(procs, kinds[0], tmp_path / "m", *master_args)
    r = start(procs, kinds[1], tmp_path / "r")
    replicaof(r, m)
    m.client().set("before", "1")
    wait_synced(m.client(), r.client())
    return m, r


@contextmanager
def stopped(p: Proc):
    """The process stopped (SIGSTOP) meanwhile, continued after."""
    os.kill(p.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(p.proc.pid, signal.SIGCONT)


def write_pending(m: Proc, n: int = 50) -> None:
    c = m.client()
    for i in range(n):
        c.set(f"k{i}", f"v{i}")


def wait_until_waiting(m: Proc) -> None:
    wait_for(lambda: WAITING in m.output(), 30, "the shutdown to wait for the replica")


def client_flags(m: Proc, cid: int) -> str:
    line = m.client().execute_command("CLIENT", "LIST", "ID", cid).decode()
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    return fields.get("flags", "")


def held_write(m: Proc) -> RawConnection:
    """A SET sent now, which the shutdown's pause holds (CLIENT LIST shows it blocked)."""
    conn = RawConnection(m.port, timeout=30)
    cid = int(conn.request(b"CLIENT ID\r\n")[1:-2])
    conn.send(encode("SET", "during", "1"))
    wait_for(lambda: "b" in client_flags(m, cid), 30, "the write to be held")
    return conn


def raw(p: Proc, *cmd: str) -> bytes:
    """One command's reply as bytes."""
    conn = RawConnection(p.port, timeout=30)
    try:
        return conn.request(encode(*cmd))
    finally:
        conn.sock.close()


def exited(p: Proc, timeout: float = 60.0) -> int:
    return p.wait(timeout)


@pytest.mark.parametrize("kinds", PAIRS, ids=["-".join(k) for k in PAIRS])
def test_shutdown_waits_and_abort_resumes_writes(procs, tmp_path, kinds):
    m, r = master_and_replica(procs, tmp_path, kinds, "--shutdown-timeout", "300")
    with stopped(r):
        write_pending(m)
        caller = RawConnection(m.port, timeout=30)
        caller.send(encode("SHUTDOWN"))
        wait_until_waiting(m)
        assert m.client().get("k49") == b"v49", "reads are answered meanwhile"
        clients = m.client().info("clients")
        assert (clients["blocked_clients"], clients["clients_in_timeout_table"]) == (1, 0)
        writer = held_write(m)
        # A second SHUTDOWN, even with NOW, joins the one in progress.
        second = RawConnection(m.port, timeout=30)
        sid = int(second.request(b"CLIENT ID\r\n")[1:-2])
        second.send(encode("SHUTDOWN", "NOW"))
        wait_for(lambda: "b" in client_flags(m, sid), 30, "the second SHUTDOWN to wait")
        assert m.proc.poll() is None
        assert raw(m, "SHUTDOWN", "ABORT") == b"+OK\r\n"
        for conn in (caller, second):
            assert conn.read_replies(1) == b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
        assert writer.read_replies(1) == b"+OK\r\n", "the held write runs after the abort"
        assert raw(m, "SHUTDOWN", "ABORT") == b"-ERR No shutdown in progress.\r\n"
    assert m.proc.poll() is None
    assert "Shutdown manually aborted." in m.output()
    wait_synced(m.client(), r.client())
    assert r.client().get("during") == b"1"


def test_abort_with_nothing_in_progress_and_bad_combinations(procs, tmp_path):
    replies = []
    for kind in KINDS:
        p = start(procs, kind, tmp_path / kind)
        replies.append([
            raw(p, "SHUTDOWN", "ABORT"),
            raw(p, "SHUTDOWN", "abort"),
            raw(p, "SHUTDOWN", "ABORT", "NOW"),
            raw(p, "SHUTDOWN", "NOSAVE", "ABORT"),
            raw(p, "SHUTDOWN", "SAVE", "NOSAVE", "NOW"),
        ])
    assert replies[0] == replies[1]
    assert replies[1][0] == b"-ERR No shutdown in progress.\r\n"


@pytest.mark.parametrize("how", ["shutdown", "sigterm"])
@pytest.mark.parametrize("kinds", PAIRS, ids=["-".join(k) for k in PAIRS])
def test_master_exits_once_the_replica_acknowledged(procs, tmp_path, kinds, how):
    m, r = master_and_replica(procs, tmp_path, kinds, "--shutdown-timeout", "300")
    caller = None
    with stopped(r):
        write_pending(m, 200)
        if how == "shutdown":
            caller = RawConnection(m.port, timeout=30)
            caller.send(encode("SHUTDOWN"))
        else:
            m.proc.send_signal(signal.SIGTERM)
        wait_until_waiting(m)
        assert m.proc.poll() is None, "it waits for the stopped replica"
        assert m.client().get("k0") == b"v0"
    assert exited(m) == 0, m.output()
    if caller is not None:
        assert caller.is_closed(wait=10) and caller.buf == b"", "no reply: the server exited"
    assert "1 of 1 replicas are in sync when shutting down." in m.output()
    rc = r.client()
    assert [rc.get(f"k{i}") for i in range(200)] == [f"v{i}".encode() for i in range(200)]


@pytest.mark.parametrize("kind", KINDS)
def test_shutdown_timeout_expiring_exits_anyway(procs, tmp_path, kind):
    m, r = master_and_replica(procs, tmp_path, (kind, kind), "--shutdown-timeout", "1")
    with stopped(r):
        write_pending(m)
        caller = RawConnection(m.port, timeout=30)
        caller.send(encode("SHUTDOWN"))
        assert exited(m) == 0, m.output()
    log = m.output()
    assert WAITING in log
    assert "Lagging replica" in log and "behind master" in log, log
    assert "0 of 1 replicas are in sync when shutting down." in log


@pytest.mark.parametrize("how", ["now", "sigterm-now", "sigint-now", "timeout-0"])
@pytest.mark.parametrize("kind", KINDS)
def test_now_skips_the_wait(procs, tmp_path, kind, how):
    m, r = master_and_replica(procs, tmp_path, (kind, kind), "--shutdown-timeout", "300")
    with stopped(r):
        write_pending(m)
        if how == "now":
            caller = RawConnection(m.port, timeout=30)
            caller.send(encode("SHUTDOWN", "NOW"))
        elif how == "sigterm-now":
            assert m.client().config_set("shutdown-on-sigterm", "nosave now")
            m.proc.send_signal(signal.SIGTERM)
        elif how == "sigint-now":
            assert m.client().config_set("shutdown-on-sigint", "now")
            m.proc.send_signal(signal.SIGINT)
        else:
            assert m.client().config_set("shutdown-timeout", "0")
            caller = RawConnection(m.port, timeout=30)
            caller.send(encode("SHUTDOWN"))
        # Far less than the 300 s the wait would take.
        assert exited(m) == 0, m.output()
    log = m.output()
    assert WAITING not in log
    assert "Lagging replica" in log, log


def test_a_signal_during_the_wait_does_not_end_it(procs, tmp_path):
    """SIGTERM while SHUTDOWN waits: the wait goes on (Redis only logs the signal)."""
    outcomes = []
    for kind in KINDS:
        m, r = master_and_replica(procs, tmp_path / kind, (kind, kind), "--shutdown-timeout", "300")
        with stopped(r):
            write_pending(m)
            caller = RawConnection(m.port, timeout=30)
            caller.send(encode("SHUTDOWN"))
            wait_until_waiting(m)
            m.proc.send_signal(signal.SIGTERM)
            wait_for(lambda: "Received SIGTERM" in m.output(), 30, "the signal to be seen")
            alive = m.proc.poll() is None
            aborted = raw(m, "SHUTDOWN", "ABORT")
            outcomes.append((alive, aborted, caller.read_replies(1)))
        assert m.proc.poll() is None
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][0] is True


CONFIG_CASES = [
    ("shutdown-timeout", "0"),
    ("shutdown-timeout", "2147483647"),
    ("shutdown-timeout", "2147483648"),
    ("shutdown-timeout", "-1"),
    ("shutdown-timeout", "ten"),
    ("shutdown-on-sigterm", "nosave now"),
    ("shutdown-on-sigterm", "now NOSAVE force"),
    ("shutdown-on-sigterm", "default save"),
    ("shutdown-on-sigterm", "save nosave"),
    ("shutdown-on-sigterm", "bogus"),
    ("shutdown-on-sigterm", ""),
    ("shutdown-on-sigterm", "save  now"),
    ("shutdown-on-sigint", "force"),
    ("shutdown-on-sigint", "default"),
    ("shutdown-on-sigint", " save"),
]


def test_config_of_the_three_directives(both):
    both.pairs("CONFIG", "GET", "shutdown-*")
    # The defaults, set again after the test.
    for name, default in [("shutdown-timeout", "10"), ("shutdown-on-sigterm", "default"),
                          ("shutdown-on-sigint", "default")]:
        both.config_set(name, default)
    for name, value in CONFIG_CASES:
        both("CONFIG", "SET", name, value)
        both.pairs("CONFIG", "GET", name)


@pytest.mark.parametrize("value", ["nosave now", "save force"])
def test_directives_at_start(procs, tmp_path, value):
    got = []
    for kind in KINDS:
        p = start(procs, kind, tmp_path / kind, "--shutdown-on-sigint", value,
                  "--shutdown-timeout", "7")
        got.append(p.client().config_get("shutdown-*"))
    assert got[0] == got[1]
    assert got[1]["shutdown-on-sigint"] == value


@pytest.mark.parametrize("lines", [
    ["shutdown-on-sigterm nosave now", "shutdown-on-sigint \"save force\"", "shutdown-timeout 3"],
    ["shutdown-on-sigterm now now"],
])
def test_directives_in_a_config_file(tmp_path, lines):
    got = []
    for kind, binary in [("redis", REDIS_BIN), ("goblin", GOBLIN_BIN)]:
        work = tmp_path / kind
        work.mkdir()
        port = free_port()
        conf = work / "x.conf"
        conf.write_text("\n".join([f"port {port}", "bind 127.0.0.1", "save \"\"", *lines]) + "\n")
        p = Proc(binary, work, name=kind)
        p.port = port
        p.proc = subprocess.Popen([binary, str(conf)], cwd=work, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        try:
            def up():
                try:
                    return p.client().ping()
                except redis.ConnectionError:
                    return False
            wait_for(up, 30, f"{kind} to start")
            got.append(p.client().config_get("shutdown-*"))
        finally:
            p.kill9()
    assert got[0] == got[1]
    assert got[1]["shutdown-on-sigterm"] == lines[0].split(" ", 1)[1].replace("now now", "now")


def test_sigterm_follows_shutdown_on_sigterm_save(procs, tmp_path):
    """shutdown-on-sigterm "save": the SIGTERM saves although no save point is set."""
    for kind in KINDS:
        p = start(procs, kind, tmp_path / kind, "--shutdown-on-sigterm", "save")
        p.client().set("saved", "yes")
        p.proc.send_signal(signal.SIGTERM)
        assert exited(p) == 0, p.output()
        assert (tmp_path / kind / "dump.rdb").exists(), kind
        again = start(procs, kind, tmp_path / kind)
        assert again.client().get("saved") == b"yes"
        again.stop()


def test_a_second_sigint_exits_at_once(procs, tmp_path):
    """SIGINT while a SIGINT's shutdown waits: exit 1 at once, as Redis ("You insist")."""
    for kind in KINDS:
        m, r = master_and_replica(procs, tmp_path / kind, (kind, kind), "--shutdown-timeout", "300")
        with stopped(r):
            write_pending(m)
            m.proc.send_signal(signal.SIGINT)
            wait_until_waiting(m)
            m.proc.send_signal(signal.SIGINT)
            assert exited(m) == 1, (kind, m.output())
            assert ":signal-handler (" in m.output() and "You insist... exiting now." in m.output()


def test_client_unblock_leaves_a_shutdown_caller_waiting(procs, tmp_path):
    """Goblin only: Redis 7.0 crashes on CLIENT UNBLOCK of a SHUTDOWN caller. Goblin answers 0
    (nothing unblocked) and the caller keeps waiting for the shutdown's end."""
    m, r = master_and_replica(procs, tmp_path, ("goblin", "goblin"), "--shutdown-timeout", "300")
    with stopped(r):
        write_pending(m)
        caller = RawConnection(m.port, timeout=30)
        cid = int(caller.request(b"CLIENT ID\r\n")[1:-2])
        caller.send(encode("SHUTDOWN"))
        wait_until_waiting(m)
        assert raw(m, "CLIENT", "UNBLOCK", str(cid)) == b":0\r\n"
        assert raw(m, "CLIENT", "UNBLOCK", str(cid), "ERROR") == b":0\r\n"
        assert "b" in client_flags(m, cid)
        assert raw(m, "SHUTDOWN", "ABORT") == b"+OK\r\n"
        assert caller.read_replies(1) == b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_a_failed_save_after_the_wait(procs, tmp_path, kind, force):
    """The replica caught up, then the save fails: the caller gets Redis's error and writes
    resume, or with FORCE the server exits anyway."""
    m, r = master_and_replica(procs, tmp_path, (kind, kind), "--shutdown-timeout", "300",
                              "--enable-protected-configs", "yes")
    doomed = tmp_path / "doomed"
    doomed.mkdir()
    assert m.client().config_set("dir", str(doomed))
    doomed.rmdir()
    with stopped(r):
        write_pending(m)
        caller = RawConnection(m.port, timeout=60)
        caller.send(encode("SHUTDOWN", "SAVE", *(["FORCE"] if force else [])))
        wait_until_waiting(m)
    if force:
        assert exited(m) == 0, m.output()
        assert "Error trying to save the DB. Exit anyway." in m.output()
        return
    assert caller.read_replies(1) == b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
    assert "Errors trying to shut down the server. Check the logs for more information." in m.output()
    assert m.client().set("after", "1") and m.proc.poll() is None
