"""Day-two operations beside Debian's redis-server 7.0: the replica-priority / announce
settings (CONFIG, the replica's INFO, what its master lists in INFO and ROLE), SIGHUP
ignored, a log file renamed by logrotate followed by a new one of the same name,
tcp-keepalive on accepted sockets and tcp-backlog on the listening ones (as `ss` shows them).

Each test starts its own servers on free ports in its own temporary directory.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

import resp

from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import repl, replicaof, start, wait_for


@pytest.mark.parametrize(
    "name,value",
    [
        ("replica-priority", "0"),
        ("slave-priority", "7"),
        ("replica-announce-ip", "10.1.2.3"),
        ("slave-announce-ip", "host.example"),
        ("replica-announce-port", "1234"),
        ("replica-announced", "no"),
        ("tcp-keepalive", "60"),
    ],
)
def test_settings_set_and_read_back_as_redis(both, name, value):
    both.config_set(name, value)
    both("CONFIG", "GET", name)


@pytest.mark.parametrize(
    "name,value",
    [
        ("replica-priority", "-1"),
        ("replica-announce-port", "70000"),
        ("replica-announced", "maybe"),
        ("tcp-keepalive", "x"),
        ("tcp-backlog", "100"),
    ],
)
def test_bad_settings_error_as_redis(both, name, value):
    both.err("CONFIG", "SET", name, value)


def test_the_defaults_are_redis_defaults(both):
    for name in ("replica-priority", "replica-announce-*", "replica-announced", "tcp-*"):
        both.pairs("CONFIG", "GET", name)


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_announced_replica_as_its_master_and_sentinel_see_it(procs, tmp_path, kind):
    # A Goblin replica of a Redis master, and the reverse: each side's part.
    master_kind = "redis" if kind == "goblin" else "goblin"
    m = start(procs, master_kind, tmp_path / "m")
    r = start(procs, kind, tmp_path / "r", "--replica-priority", "0",
              "--replica-announce-ip", "10.1.2.3", "--replica-announce-port", "1234",
              "--replica-announced", "no")
    replicaof(r, m)
    mc, rc = m.client(), r.client()
    wait_for(lambda: repl(mc).get("slave0", {}).get("state") == "online", what="online")
    info = repl(rc)
    assert (info["slave_priority"], info["replica_announced"]) == (0, 0)
    slave = repl(mc)["slave0"]
    assert (slave["ip"], slave["port"]) == ("10.1.2.3", 1234)
    assert mc.execute_command("ROLE")[2][0][:2] == [b"10.1.2.3", b"1234"]


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_sighup_is_ignored(procs, tmp_path, kind):
    p = start(procs, kind, tmp_path / kind, "--pidfile", str(tmp_path / "s.pid"))
    os.kill(p.proc.pid, signal.SIGHUP)
    time.sleep(0.2)
    assert p.proc.poll() is None
    assert p.client().ping()
    assert (tmp_path / "s.pid").exists()


def test_a_rotated_log_is_followed_by_a_new_file(procs, tmp_path):
    log = tmp_path / "g" / "goblin.log"
    p = start(procs, "goblin", tmp_path / "g", "--logfile", str(log))
    c = p.client()
    c.save()
    os.rename(log, tmp_path / "g" / "goblin.log.1")  # logrotate without copytruncate
    c.save()
    wait_for(lambda: log.exists() and "DB saved on disk" in log.read_text(), what="a new log")
    assert "DB saved on disk" in (tmp_path / "g" / "goblin.log.1").read_text()


def keepalive_timers(port: int) -> int:
    """How many of the server's sockets of connections to `port` show a keepalive timer in
    `ss` (a socket with unacknowledged output shows its retransmission timer instead, so
    callers poll)."""
    out = subprocess.run(["ss", "-tnoH", "state", "established", f"( sport = :{port} )"],
                         capture_output=True, text=True, check=True).stdout
    return len(re.findall(r"timer:\(keepalive,", out))


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_tcp_keepalive_probes_accepted_sockets(procs, tmp_path, kind):
    p = start(procs, kind, tmp_path / kind, "--tcp-keepalive", "120")
    c = p.client()
    c.ping()
    wait_for(lambda: keepalive_timers(p.port) == 1, 5, "a keepalive timer")
    # Connections accepted after tcp-keepalive 0 have none.
    c.config_set("tcp-keepalive", "0")
    c2 = p.client()
    c2.ping()
    time.sleep(0.5)
    assert keepalive_timers(p.port) == 1


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_tcp_backlog_is_the_listen_backlog(procs, tmp_path, kind):
    p = start(procs, kind, tmp_path / kind, "--tcp-backlog", "77")
    out = subprocess.run(["ss", "-ltnH", f"( sport = :{p.port} )"], capture_output=True,
                         text=True, check=True).stdout
    # For a listening socket, Send-Q is its backlog.
    assert out.split()[2] == "77", out


@pytest.mark.parametrize("value", ["", "functions", "FUNCTIONS", "keys", "functions keys",
                                   '"unbalanced'])
def test_replconf_rdb_filter_only_as_redis(both, value):
    both("REPLCONF", "rdb-filter-only", value)


def test_a_filtered_sync_needs_the_eof_capability(servers):
    replies = []
    for s in servers:
        with resp.RawConnection(s.port) as c:
            assert c.request(b"REPLCONF rdb-filter-only functions\r\n") == b"+OK\r\n"
            replies.append(c.request(b"SYNC\r\n"))
    assert replies[0] == replies[1] == b"-ERR Filtered replica requires EOF capability\r\n"


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_redis_cli_replica_and_functions_rdb_get_filtered_snapshots(procs, tmp_path, kind):
    p = start(procs, kind, tmp_path / kind)
    c = p.client()
    for i in range(2000):
        c.set(f"key:{i}", "x" * 100)
    c.execute_command("FUNCTION", "LOAD",
                      "#!lua name=ops\nredis.register_function('ops_f', function() return 1 end)")
    # --replica: no error about the filter, and a snapshot without the keys (Redis's is
    # its aux fields only, a few hundred bytes; the keys alone are over 200 kB).
    cli = subprocess.Popen(["redis-cli", "-p", str(p.port), "--replica"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    try:
        first = b""
        while b"SYNC done" not in first:
            first += cli.stdout.readline()
        assert b"error" not in first.lower(), first
        size = int(re.search(rb"SYNC done after (\d+) bytes", first).group(1))
        assert size < 2000, first
    finally:
        cli.kill()
        cli.wait()
    # --functions-rdb: the libraries and no key, loadable by Redis.
    dump = tmp_path / "functions.rdb"
    out = subprocess.run(["redis-cli", "-p", str(p.port), "--functions-rdb", str(dump)],
                         capture_output=True, timeout=30)
    assert out.returncode == 0, out
    (tmp_path / "load").mkdir()
    (tmp_path / "load" / "dump.rdb").write_bytes(dump.read_bytes())
    loaded = start(procs, "redis", tmp_path / "load", "--dbfilename", "dump.rdb").client()
    assert loaded.dbsize() == 0
    assert loaded.fcall("ops_f", 0) == 1


def test_syslog_settings_as_redis(both):
    both.pairs("CONFIG", "GET", "syslog-*")
    for name, value in (("syslog-enabled", "yes"), ("syslog-ident", "x"),
                        ("syslog-facility", "local3")):
        both.err("CONFIG", "SET", name, value)


@pytest.mark.parametrize("args", [["--syslog-facility", "bogus"], ["--syslog-enabled", "maybe"]])
def test_bad_syslog_directives_stop_start_up_as_redis(tmp_path, args):
    from harness import GOBLIN_BIN, REDIS_BIN, free_port

    outs = []
    for binary in (REDIS_BIN, GOBLIN_BIN):
        out = subprocess.run([binary, "--port", str(free_port()), *args], capture_output=True,
                             text=True, timeout=20, cwd=tmp_path)
        assert out.returncode != 0
        outs.append((out.stdout + out.stderr).strip().splitlines()[-2:])
    assert outs[0] == outs[1]
