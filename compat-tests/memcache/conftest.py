"""Differential harness: a real memcached and goblin-store on free ports.

Each test sends the same bytes to both servers on fresh connections and compares the
replies. GOBLIN_STORE_BIN overrides the goblin-store binary (default:
<repo>/target/release/goblin-store); GOBLIN_TAIL_IO picks its tail engine. goblin-store runs with an SSD pool in a temporary
directory and a 4 KiB --ram-head, so values of 4 KiB and more take the SSD tail path.
"""

import contextlib
import os
import shutil
import socket
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from harness import free_port, stop_process

REPO = Path(__file__).resolve().parents[2]
GOBLIN_BIN = os.environ.get("GOBLIN_STORE_BIN", str(REPO / "target" / "release" / "goblin-store"))
# auto, uring or blocking: the tail read engine goblin-store runs with.
TAIL_IO = os.environ.get("GOBLIN_TAIL_IO", "auto")
SENTINEL = b"mn\r\n"


def wait_port(port, proc, name):
    """Waits until the server answers `version`. An answer, not a connect: the kernel
    completes a connection before the server takes it, and memcached counts a connection
    when a worker thread takes it over, so a probe only connected could be counted after
    a later `stats reset` (total_connections one too many, seen on a loaded machine)."""
    deadline = time.time() + 10
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
                probe.sendall(b"version\r\n")
                if probe.recv(64).startswith(b"VERSION "):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{name} did not listen on {port}")


class Server:
    """One server under test."""

    def __init__(self, name, port):
        self.name = name
        self.port = port

    def exchange(self, data, sentinel=True, timeout=3.0, chunks=None):
        """Sends data (then `mn` unless sentinel is False) and returns everything read
        until the MN reply, EOF (marked <CLOSED>) or a quiet timeout."""
        s = socket.create_connection(("127.0.0.1", self.port))
        try:
            if chunks:
                for c in chunks:
                    s.sendall(c)
                    time.sleep(0.05)
            else:
                s.sendall(data)
            if sentinel:
                s.sendall(SENTINEL)
            s.settimeout(timeout if sentinel else 0.5)
            # Stop after the MN of our sentinel, not at an earlier mn of the data itself.
            wanted = 1 + (data or b"".join(chunks or [])).split(b"\r\n").count(b"mn")
            out = b""
            while True:
                try:
                    c = s.recv(1 << 20)
                except socket.timeout:
                    break
                if not c:
                    out += b"<CLOSED>"
                    break
                out += c
                if sentinel and out.endswith(b"MN\r\n") and out.count(b"MN\r\n") >= wanted:
                    break
            return out
        finally:
            s.close()


@contextlib.contextmanager
def server_pair():
    """Starts memcached and goblin-store on free ports; yields their Server objects."""
    mc_port, gb_port = free_port(), free_port()
    pool = tempfile.mkdtemp(prefix="goblin-compat-")
    procs = []
    try:
        mc = subprocess.Popen(["memcached", "-l", "127.0.0.1", "-p", str(mc_port), "-U", "0", "-u", "root"])
        procs.append(mc)
        gb = subprocess.Popen(
            [
                GOBLIN_BIN,
                "--listen-address", "127.0.0.1",
                "--memcache-port", str(gb_port),
                "--cores", "2",
                "--small-memory", "32M",
                "--memory", "16M",
                "--ram-head", "4K",
                "--ssd-dir", pool,
                "--tail-io", TAIL_IO,
            ]
        )
        procs.append(gb)
        wait_port(mc_port, mc, "memcached")
        wait_port(gb_port, gb, "goblin-store")
        yield Server("memcached", mc_port), Server("goblin", gb_port)
    finally:
        for p in procs:
            stop_process(p)
        shutil.rmtree(pool, ignore_errors=True)


@pytest.fixture(scope="session")
def servers():
    with server_pair() as pair:
        yield pair


@pytest.fixture
def fresh():
    """A pair of servers of its own, for replies that depend on everything stored (stats
    items, stats slabs): run(data) sends to both and returns (memcached, goblin)."""
    with server_pair() as (mc, gb):
        yield lambda data, **kw: (mc.exchange(data, **kw), gb.exchange(data, **kw))


@pytest.fixture
def fresh_pair():
    """A pair of servers of its own, as (memcached, goblin) Server objects, for cases that
    talk to each server separately."""
    with server_pair() as pair:
        yield pair


def ignore_sigint():
    """In a child before exec: SIGINT ignored, as a shell's background job has it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture
def launch():
    """launch(kind, *args) starts a server of its own with extra flags on a free port:
    kind "memcached" or "goblin" (a RAM-only goblin-store of 8 MiB unless args give
    --small-memory). Returns (port, process);
    every one is stopped after the test. `launch.server(port)` is a Server for the port."""
    procs = []

    def start(kind, *args):
        port = free_port()
        if kind == "memcached":
            argv = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-u", "root"]
        else:
            argv = [GOBLIN_BIN, "--listen-address", "127.0.0.1", "--memcache-port", str(port), "--cores", "1"]
            if "--small-memory" not in args:
                argv += ["--small-memory", "8M"]
        # Started with SIGINT ignored, as a shell's background job or nohup starts it: the
        # `shutdown` command must stop the server all the same.
        proc = subprocess.Popen(argv + list(args), preexec_fn=ignore_sigint)
        procs.append(proc)
        wait_port(port, proc, kind)
        return port, proc

    start.server = lambda port: Server("launched", port)
    yield start
    for p in procs:
        stop_process(p)


@pytest.fixture
def both(servers):
    """Sends the same bytes to both servers and returns (memcached reply, goblin reply)."""

    def run(data, **kw):
        return servers[0].exchange(data, **kw), servers[1].exchange(data, **kw)

    return run


@pytest.fixture
def same(both):
    """Asserts that both servers reply with the same bytes and returns the reply."""

    def check(data, **kw):
        mc, gb = both(data, **kw)
        assert gb == mc, f"\nmemcached: {mc!r}\ngoblin:    {gb!r}"
        return mc

    return check
