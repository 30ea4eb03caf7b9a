"""packaging/: the systemd unit passes `systemd-analyze verify` (pointed at the built binary
and the generated man page), Goblin started as the unit starts it tells systemd READY=1 on
$NOTIFY_SOCKET (Type=notify), and logrotate run with the logrotate snippet's options rotates
Goblin's log by renaming it while Goblin goes on logging into a new file of the same name.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from harness import GOBLIN_BIN, REPO, free_port
from test_replication import wait_for

PACKAGING = REPO / "packaging"
LOGROTATE = shutil.which("logrotate") or "/usr/sbin/logrotate"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_the_unit_verifies(tmp_path):
    unit = (PACKAGING / "goblin-server.service").read_text()
    (tmp_path / "goblin-server.service").write_text(unit.replace("/usr/bin/goblin-server",
                                                                 GOBLIN_BIN))
    (tmp_path / "man" / "man1").mkdir(parents=True)
    shutil.copy(PACKAGING / "goblin-server.1", tmp_path / "man" / "man1")
    out = subprocess.run(["systemd-analyze", "verify", "./goblin-server.service"], cwd=tmp_path,
                         capture_output=True, text=True, env={**os.environ,
                                                              "MANPATH": str(tmp_path / "man")})
    assert (out.returncode, out.stdout + out.stderr) == (0, "")


def test_started_as_the_unit_starts_it_goblin_notifies_readiness(tmp_path):
    notify = tmp_path / "notify"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(notify))
    listener.settimeout(20)
    conf = tmp_path / "goblin.conf"
    conf.write_text(f"port {free_port()}\nbind 127.0.0.1\nsave \"\"\n")
    proc = subprocess.Popen([GOBLIN_BIN, str(conf), "--supervised", "systemd", "--daemonize", "no"],
                            cwd=tmp_path, env={**os.environ, "NOTIFY_SOCKET": str(notify)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        messages = b""
        while b"READY=1" not in messages:
            messages += listener.recv(4096) + b"\n"
    finally:
        proc.terminate()
        proc.wait(20)
        listener.close()


@pytest.mark.skipif(not os.path.exists(LOGROTATE), reason="no logrotate")
def test_logrotate_with_the_snippet_rotates_the_live_log(tmp_path):
    log = tmp_path / "goblin-server.log"
    snippet = (PACKAGING / "goblin-server.logrotate").read_text()
    conf = tmp_path / "logrotate.conf"
    conf.write_text(snippet.replace("/var/log/goblin/goblin-server*.log", str(log)))
    port = free_port()
    proc = subprocess.Popen([GOBLIN_BIN, "--port", str(port), "--logfile", str(log),
                             "--save", ""], cwd=tmp_path)
    try:
        import redis

        c = redis.Redis(port=port)
        wait_for(lambda: _pings(c), 20, "goblin to start")
        c.save()
        subprocess.run([LOGROTATE, "-f", "-s", str(tmp_path / "state"), str(conf)], check=True)
        rotated = tmp_path / "goblin-server.log.1"
        assert "DB saved on disk" in rotated.read_text()
        c.save()
        wait_for(lambda: log.exists() and "DB saved on disk" in log.read_text(), 10,
                 "the next line in a new log")
    finally:
        proc.terminate()
        proc.wait(20)


def _pings(c) -> bool:
    try:
        return c.ping()
    except Exception:
        return False
