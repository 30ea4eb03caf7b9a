"""Redis directives Goblin once logged as ignored at start-up and now has as parameters:
rdbchecksum, set-proc-title, activerehashing, active-expire-effort, crash-log-enabled, the
CPU lists (server_cpulist, bio_cpulist, aof_rewrite_cpulist, bgsave_cpulist), and the
allocator's (activedefrag, active-defrag-*, jemalloc-bg-thread, kept as Redis built with
libc malloc keeps them). Their defaults, values and errors beside Debian's redis-server
7.0, and what each does: the checksum a save writes and a load checks, the process title
left alone, the CPUs of the main thread, the lazy-free thread and a BGSAVE child, a full
sync's socket without TCP_NODELAY (repl-disable-tcp-nodelay), the listener's SO_MARK
(socket-mark-id).
"""

from __future__ import annotations

import os
import re

import pytest
import redis

from test_persistence import procs  # noqa: F401 (the fixture)
from test_replication import repl, replicaof, start, wait_for

PARAMETERS = (
    "rdbchecksum", "set-proc-title", "activerehashing", "active-expire-effort", "crash-log-enabled",
    "rdb-save-incremental-fsync", "aof-rewrite-incremental-fsync", "disable-thp", "ignore-warnings",
    "rdb-del-sync-files", "replica-ignore-disk-write-errors", "repl-disable-tcp-nodelay",
    "active-defrag-cycle-min", "active-defrag-cycle-max", "active-defrag-threshold-lower",
    "active-defrag-threshold-upper", "active-defrag-max-scan-fields",
    "active-defrag-ignore-bytes", "jemalloc-bg-thread",
)


def test_the_defaults_are_redis_defaults(both):
    for name in PARAMETERS:
        both.pairs("CONFIG", "GET", name)


@pytest.mark.parametrize("name,good,bad", [
    ("activerehashing", "no", "maybe"),
    ("active-expire-effort", "10", "11"),
    ("active-expire-effort", "1", "0"),
    ("active-defrag-cycle-max", "99", "100"),
    ("active-defrag-threshold-upper", "1000", "-1"),
    ("active-defrag-max-scan-fields", "1", "0"),
    ("active-defrag-ignore-bytes", "1mb", "0"),
    ("jemalloc-bg-thread", "no", "2"),
    ("rdb-save-incremental-fsync", "no", "1"),
    ("aof-rewrite-incremental-fsync", "no", "x"),
    ("repl-disable-tcp-nodelay", "yes", "1"),
])
def test_set_read_back_and_errors_as_redis(both, name, good, bad):
    both.config_set(name, good)
    both.pairs("CONFIG", "GET", name)
    both.err("CONFIG", "SET", name, bad)


@pytest.mark.parametrize("name", ["rdbchecksum", "set-proc-title", "disable-thp"])
def test_start_only_parameters_are_refused_at_run_time(both, name):
    both.err("CONFIG", "SET", name, "no")


def test_activedefrag_cannot_be_enabled_without_jemalloc(both):
    """Debian's Redis is built with Jemalloc and takes `activedefrag yes`; Goblin reports
    libc as its allocator and answers as Redis built with libc does (config.c's
    isValidActiveDefrag)."""
    both("CONFIG", "SET", "activedefrag", "no")
    both.pairs("CONFIG", "GET", "activedefrag")
    assert b"mem_allocator:libc" in both.goblin.execute_command("INFO", "memory")
    with pytest.raises(Exception) as refused:
        both.goblin.execute_command("CONFIG", "SET", "activedefrag", "yes")
    assert str(refused.value) == (
        "CONFIG SET failed (possibly related to argument 'activedefrag') - Active "
        "defragmentation cannot be enabled: it requires a Redis server compiled with a "
        "modified Jemalloc like the one shipped by default with the Redis source distribution")
    assert both.goblin.execute_command("CONFIG", "GET", "activedefrag") == [b"activedefrag", b"no"]


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_rdbchecksum_no_writes_a_zero_checksum_and_loads_a_wrong_one(procs, tmp_path, kind):
    p = start(procs, kind, tmp_path / "a", "--rdbchecksum", "no")
    c = p.client()
    c.set("k", "v")
    c.save()
    rdb = (tmp_path / "a" / "dump.rdb").read_bytes()
    assert rdb[-8:] == bytes(8)
    # A file whose checksum is wrong: refused when checked, loaded when not.
    c.shutdown(nosave=True)
    p.proc.wait(10)
    p2 = start(procs, kind, tmp_path / "b", "--rdbchecksum", "yes")
    p2.client().set("k", "v")
    p2.client().save()
    good = (tmp_path / "b" / "dump.rdb").read_bytes()
    assert good[-8:] != bytes(8)
    p2.client().shutdown(nosave=True)
    p2.proc.wait(10)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "dump.rdb").write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    trusting = start(procs, kind, tmp_path / "c", "--rdbchecksum", "no")
    assert trusting.client().get("k") == b"v"


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_set_proc_title_no_leaves_the_command_line(procs, tmp_path, kind):
    p = start(procs, kind, tmp_path, "--set-proc-title", "no")
    cmdline = open(f"/proc/{p.proc.pid}/cmdline", "rb").read()
    assert cmdline.split(b"\0")[0] == p.binary.encode()
    assert b"--set-proc-title" in cmdline


def cpus_allowed(pid: int, tid: int | None = None) -> str:
    path = f"/proc/{pid}/task/{tid}/status" if tid else f"/proc/{pid}/status"
    for line in open(path):
        if line.startswith("Cpus_allowed_list:"):
            return line.split()[1]
    raise AssertionError(path)


@pytest.mark.skipif(os.cpu_count() < 2, reason="needs two CPUs")
@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_cpulists_pin_the_main_thread_the_lazyfree_thread_and_a_bgsave_child(procs, tmp_path,
                                                                           kind):
    p = start(procs, kind, tmp_path, "--server_cpulist", "0", "--bio_cpulist", "1",
              "--bgsave_cpulist", "1", "--aof_rewrite_cpulist", "0-1:2",
              "--rdb-key-save-delay", "100000")
    pid = p.proc.pid
    assert cpus_allowed(pid, pid) == "0"
    lazy = [int(t) for t in os.listdir(f"/proc/{pid}/task")
            if "lazy" in open(f"/proc/{pid}/task/{t}/comm").read()]
    assert lazy and all(cpus_allowed(pid, t) == "1" for t in lazy), lazy
    c = p.client()
    c.set("k", "v")
    c.bgsave()
    children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    assert len(children) == 1
    # The child pins itself just after the fork.
    wait_for(lambda: cpus_allowed(int(children[0])) == "1", 5, "the child on CPU 1")
    c.config_set("rdb-key-save-delay", "0")
    assert c.config_get("*cpulist") == {
        "server_cpulist": "0", "bio_cpulist": "1", "bgsave_cpulist": "1",
        "aof_rewrite_cpulist": "0-1:2"}


def test_cpulists_are_start_only_and_empty_by_default(both):
    both.pairs("CONFIG", "GET", "*cpulist")
    both.err("CONFIG", "SET", "server_cpulist", "0")


def status_field(pid: int, name: str) -> str | None:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(name + ":"):
            return line.split()[1]
    return None


def test_start_up_memory_warnings_and_disable_thp_as_redis(procs, tmp_path):
    """The overcommit warning (vm.overcommit_memory not 1) and the THP one (THP `always`
    and disable-thp no) are logged alike; disable-thp leaves the process's THP flag as
    Redis's."""
    for disable_thp in ("yes", "no"):
        seen = []
        for kind in ("redis", "goblin"):
            p = start(procs, kind, tmp_path / f"{kind}-{disable_thp}", "--disable-thp", disable_thp)
            out = p.output()
            seen.append(("WARNING Memory overcommit must be enabled!" in out,
                         "WARNING You have Transparent Huge Pages" in out,
                         status_field(p.proc.pid, "THP_enabled")))
        assert seen[0] == seen[1], seen


@pytest.mark.parametrize("delete", ["yes", "no"])
@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_rdb_del_sync_files_removes_the_files_of_a_disk_sync(procs, tmp_path, kind, delete):
    """A master and its replica without persistence, a disk-based sync loaded from disk:
    with rdb-del-sync-files yes the master removes the snapshot once the replica is online
    and the replica removes the one it received; with no, both stay."""
    args = ("--rdb-del-sync-files", delete, "--repl-diskless-sync", "no",
            "--repl-diskless-load", "disabled")
    m = start(procs, kind, tmp_path / "m", *args)
    r = start(procs, kind, tmp_path / "r", *args)
    m.client().set("k", "v")
    replicaof(r, m)
    wait_for(lambda: repl(m.client()).get("slave0", {}).get("state") == "online", what="online")
    wait_for(lambda: r.client().get("k") == b"v", what="the data")
    files = lambda: [(d / "dump.rdb").exists() for d in (tmp_path / "m", tmp_path / "r")]  # noqa: E731
    if delete == "yes":
        wait_for(lambda: files() == [False, False], 5, "the files removed")
        assert "Removing the RDB file used to feed replicas" in m.output()
        assert "Removing the RDB file obtained from the master" in r.output()
    else:
        import time
        time.sleep(1.5)
        assert files() == [True, True]


@pytest.mark.parametrize("ignore", ["no", "yes"])
@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_a_replica_that_cannot_save_stops_on_its_masters_write(procs, tmp_path, kind, ignore):
    """A replica whose last BGSAVE failed (its directory removed) with save points and
    stop-writes-on-bgsave-error: its master's next write stops it (a panic) unless
    replica-ignore-disk-write-errors, which applies it with a warning."""
    import shutil
    data = tmp_path / "r" / "data"
    data.mkdir(parents=True)
    m = start(procs, kind, tmp_path / "m")
    r = start(procs, kind, tmp_path / "r", "--dir", str(data), "--save", "3600 1",
              "--replica-ignore-disk-write-errors", ignore)
    replicaof(r, m)
    wait_for(lambda: repl(r.client())["master_link_status"] == "up", what="the link up")
    shutil.rmtree(data)
    rc = r.client()
    rc.bgsave()
    wait_for(lambda: rc.info("persistence")["rdb_last_bgsave_status"] == "err", what="a failed save")
    m.client().set("k", "v")
    if ignore == "no":
        assert r.proc.wait(10) != 0
        assert "Replica was unable to write command to disk." in r.output()
    else:
        wait_for(lambda: rc.get("k") == b"v", what="the write applied")
        assert "Replica is applying a command even though it is unable to write to disk." in r.output()


def socket_option(pid: int, local_port: int, peer_port: int, level: int, option: int) -> int:
    """An option of process `pid`'s TCP socket from `local_port` to `peer_port`, read on a
    copy of the socket taken with pidfd_getfd (ss names its descriptor)."""
    import ctypes
    import socket
    import subprocess
    listed = subprocess.check_output(["ss", "-tnpH", "state", "established"]).decode()
    line = next(l for l in listed.splitlines()
                if f"127.0.0.1:{local_port} " in l and f"127.0.0.1:{peer_port} " in l + " "
                and f"pid={pid}," in l)
    fd = int(re.search(rf"pid={pid},fd=(\d+)", line).group(1))
    pidfd = os.pidfd_open(pid)
    try:
        copy = ctypes.CDLL(None, use_errno=True).syscall(438, pidfd, fd, 0)  # pidfd_getfd
        assert copy >= 0, os.strerror(ctypes.get_errno())
        s = socket.socket(fileno=copy)
        try:
            return s.getsockopt(level, option)
        finally:
            s.close()
    finally:
        os.close(pidfd)


@pytest.mark.parametrize("disable", ["yes", "no"])
def test_repl_disable_tcp_nodelay_turns_nodelay_off_for_a_full_sync(procs, tmp_path, disable):
    """repl-disable-tcp-nodelay yes: the master turns TCP_NODELAY off on the socket of a
    replica that asks for a full sync (every client socket has it on). Read on the
    master's own socket, the same on both; replication works either way. Before, Goblin
    ignored the directive."""
    import socket
    seen = []
    for kind in ("redis", "goblin"):
        m = start(procs, kind, tmp_path / kind / "m", "--repl-disable-tcp-nodelay", disable)
        r = start(procs, kind, tmp_path / kind / "r")
        m.client().set("k", "v")
        replicaof(r, m)
        wait_for(lambda: repl(m.client()).get("slave0", {}).get("state") == "online",
                 what="online")
        wait_for(lambda: r.client().get("k") == b"v", what="the data")
        listed = m.client().execute_command("CLIENT", "LIST", "TYPE", "replica").decode()
        peer = int(re.search(r"addr=127\.0\.0\.1:(\d+)", listed).group(1))
        nodelay = socket_option(m.proc.pid, m.port, peer, socket.IPPROTO_TCP,
                                socket.TCP_NODELAY)
        seen.append((m.client().config_get("repl-disable-tcp-nodelay"), nodelay))
    assert seen[0] == seen[1]
    assert seen[1][1] == (0 if disable == "yes" else 1)


def test_socket_mark_id_marks_the_listener_and_its_connections(procs, tmp_path):
    """socket-mark-id: SO_MARK on the listening socket, which the connections it accepts
    inherit (ss shows it as fwmark); start-only. The same on both. Before, Goblin ignored
    the directive."""
    import socket
    import subprocess
    seen = []
    for kind in ("redis", "goblin"):
        p = start(procs, kind, tmp_path / kind, "--socket-mark-id", "1234")
        held = socket.create_connection(("127.0.0.1", p.port))
        held.sendall(b"PING\r\n")
        assert held.recv(64) == b"+PONG\r\n"
        marks = []
        for state in ("listening", "established"):
            listed = subprocess.check_output(["ss", "-tnpeH", "state", state]).decode()
            marks += sorted(re.findall(r"fwmark:(0x[0-9a-f]+)", line)[0] if "fwmark" in line
                            else "none" for line in listed.splitlines()
                            if f"127.0.0.1:{p.port} " in line and f"pid={p.proc.pid}," in line)
        held.close()
        c = p.client()
        try:
            c.config_set("socket-mark-id", "5")
        except redis.ResponseError as e:
            refused = str(e)
        seen.append((marks, c.config_get("socket-mark-id"), refused))
    assert seen[0] == seen[1]
    assert seen[1][0] == ["0x4d2", "0x4d2"], "the listener and the accepted connection"
