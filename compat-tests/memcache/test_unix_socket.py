"""The memcache front on a Unix-domain socket (issue 34): goblin-store's --memcache-socket
and --memcache-socket-perm beside memcached's -s and -a. The socket file's mode, the same
replies over the socket, `stats settings` and `stats conns` naming it, no TCP listener
(memcached's -s disables its network support), and libmemcached's tools (memccp, memccat,
memcstat, memcdump) as a client over the socket."""

import contextlib
import os
import socket
import stat
import subprocess
import tempfile
import time

from pathlib import Path

import pytest

from harness import stop_process
from test_memcache import stats_of


# As the memcache conftest's (its module name is shadowed by compat-tests/conftest.py).
GOBLIN_BIN = os.environ.get("GOBLIN_STORE_BIN", str(Path(__file__).resolve().parents[2] / "target" / "release" / "goblin-store"))


class UnixServer:
    def __init__(self, path):
        self.path = path

    def exchange(self, data):
        """Sends data then `mn` over the socket; everything read until the MN reply."""
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(self.path)
        try:
            s.sendall(data + b"mn\r\n")
            out = b""
            while not out.endswith(b"MN\r\n"):
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                out += chunk
            return out
        finally:
            s.close()


def wait_socket(path, proc, name):
    deadline = time.time() + 10
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}")
        with contextlib.suppress(OSError):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.close()
            return
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not listen on {path}")


def tcp_listeners(pid):
    """Inodes of the listening TCP sockets the process holds."""
    mine = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                mine.add(target[8:-1])
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in list(f)[1:]:
                fields = line.split()
                if fields[3] == "0A":  # TCP_LISTEN
                    listening.add(fields[9])
    return mine & listening


@pytest.fixture
def unix_pair():
    """memcached -s -a 755 and goblin-store --memcache-socket --memcache-socket-perm 755."""
    tmp = tempfile.mkdtemp(prefix="goblin-mcsock-")
    mc_path, gb_path = os.path.join(tmp, "mc.sock"), os.path.join(tmp, "gb.sock")
    procs = []
    try:
        mc = subprocess.Popen(["memcached", "-s", mc_path, "-a", "755", "-U", "0", "-u", "root"])
        procs.append(mc)
        gb = subprocess.Popen([GOBLIN_BIN, "--memcache-socket", gb_path, "--memcache-socket-perm", "755",
                               "--cores", "2", "--small-memory", "8M"])
        procs.append(gb)
        wait_socket(mc_path, mc, "memcached")
        wait_socket(gb_path, gb, "goblin-store")
        yield (UnixServer(mc_path), mc), (UnixServer(gb_path), gb)
    finally:
        for p in procs:
            stop_process(p)
        for path in (mc_path, gb_path):
            with contextlib.suppress(OSError):
                os.unlink(path)
        os.rmdir(tmp)


def test_socket_mode_and_no_tcp_listener(unix_pair):
    (mc, mc_proc), (gb, gb_proc) = unix_pair
    modes = [stat.S_IMODE(os.stat(s.path).st_mode) for s in (mc, gb)]
    assert modes == [0o755, 0o755]
    assert stat.S_ISSOCK(os.stat(gb.path).st_mode)
    assert tcp_listeners(mc_proc.pid) == set() and tcp_listeners(gb_proc.pid) == set()


def test_same_replies_over_the_socket(unix_pair):
    (mc, _), (gb, _) = unix_pair
    data = (
        b"set k 5 0 3\r\nabc\r\nget k nokey\r\nappend k 0 0 2\r\nde\r\ngets k\r\n"
        b"incr n 1\r\nset n 0 0 1\r\n7\r\nincr n 5\r\ndelete k\r\nget k\r\n"
        b"ms m 2 T0\r\nhi\r\nmg m v f t\r\nmd m q\r\nmg m v\r\nbogus\r\n"
    )
    assert gb.exchange(data) == mc.exchange(data)


def test_settings_and_conns_name_the_socket(unix_pair):
    (mc, _), (gb, _) = unix_pair
    settings = [stats_of(s.exchange(b"stats settings\r\n")) for s in (mc, gb)]
    for name in ("domain_socket", "umask", "tcpport", "udpport"):
        assert settings[1][name].replace(gb.path, "PATH") == settings[0][name].replace(mc.path, "PATH"), name
    assert settings[1]["umask"] == "755"
    conns = stats_of(gb.exchange(b"stats conns\r\n"))
    assert f"unix:{gb.path}" in conns.values()
    assert [v for k, v in conns.items() if k.endswith(":addr")] == [f"unix:{gb.path}"]


def test_libmemcached_tools_over_the_socket(unix_pair, tmp_path):
    (mc, _), (gb, _) = unix_pair
    src = tmp_path / "greeting.txt"
    src.write_bytes(b"hello over a unix socket\n")
    for server in (mc, gb):
        servers = f"--servers={server.path}"
        subprocess.run(["memccp", servers, str(src)], check=True, cwd=tmp_path, timeout=10)
        got = subprocess.run(["memccat", servers, "greeting.txt"], check=True, capture_output=True, timeout=10)
        assert got.stdout.startswith(b"hello over a unix socket\n")
        listed = subprocess.run(["memcdump", servers], check=True, capture_output=True, timeout=10)
        assert listed.stdout.split() == [b"greeting.txt"]
        stats = subprocess.run(["memcstat", servers], check=True, capture_output=True, timeout=10)
        assert f"Server: {server.path} (0)".encode() in stats.stdout
        assert b"curr_items: 1" in stats.stdout


def test_a_bad_mode_stops_start_up(tmp_path):
    r = subprocess.run([GOBLIN_BIN, "--memcache-socket", str(tmp_path / "s"), "--memcache-socket-perm", "9"],
                       capture_output=True, timeout=10)
    assert r.returncode != 0 and b"octal" in r.stderr
