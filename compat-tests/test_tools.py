"""redis-cli and redis-benchmark (Debian's redis-tools) against both servers."""

import os
import pty
import select
import shutil
import subprocess
import time

import pytest

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"


def run(*argv, timeout=120, input_=None):
    stdin = {} if input_ is not None else {"stdin": subprocess.DEVNULL}
    return subprocess.run(argv, capture_output=True, timeout=timeout, input=input_, check=False, **stdin)


def test_redis_benchmark_ping(clean):
    for s in clean:
        p = run(REDIS_BENCHMARK, "-p", str(s.port), "-t", "ping", "-n", "20000", "-P", "16", "-q")
        out = p.stdout.decode()
        assert p.returncode == 0, (s, out, p.stderr.decode())
        # One line per test: PING_INLINE and PING_MBULK, each with a requests-per-second figure.
        assert "PING_INLINE:" in out and "PING_MBULK:" in out, (s, out)
        assert out.count("requests per second") == 2, (s, out)


def test_redis_benchmark_zadd(clean):
    """redis-benchmark's own ZADD test (and the CONFIG GET it sends at start)."""
    for s in clean:
        p = run(REDIS_BENCHMARK, "-p", str(s.port), "-t", "zadd", "-n", "5000", "-P", "16", "-q")
        assert p.returncode == 0 and "ZADD:" in p.stdout.decode(), (s, p.stdout, p.stderr)


def test_redis_cli_scan(both):
    for c in both.clients():
        for i in range(300):
            c.execute_command("ZADD", f"cli:{i}", i, "m")
    outs = []
    for s in both.pair:
        p = run(REDIS_CLI, "-p", str(s.port), "--scan")
        assert p.returncode == 0, p.stderr
        outs.append(sorted(p.stdout.decode().split()))
    assert outs[0] == outs[1] and len(outs[1]) == 300
    outs = []
    for s in both.pair:
        p = run(REDIS_CLI, "-p", str(s.port), "--scan", "--pattern", "cli:1*")
        outs.append(sorted(p.stdout.decode().split()))
    assert outs[0] == outs[1] and len(outs[1]) == 111


def test_redis_cli_info(clean):
    for s in clean:
        p = run(REDIS_CLI, "-p", str(s.port), "INFO")
        out = p.stdout.decode()
        assert p.returncode == 0 and "# Server" in out and "redis_version:" in out, (s, out)
        p = run(REDIS_CLI, "-p", str(s.port), "INFO", "keyspace")
        assert p.returncode == 0 and "# Keyspace" in p.stdout.decode()


@pytest.mark.parametrize(
    "args",
    [
        ("PING",),
        ("ECHO", "hello world"),
        ("DBSIZE",),
        ("NOSUCH", "x"),
        ("CONFIG", "GET", "maxclients"),
        ("ZADD", "k", "1", "a"),
        ("TYPE", "k"),
        ("SELECT", "99"),
    ],
)
def test_redis_cli_commands(clean, args):
    outs = []
    for s in clean:
        p = run(REDIS_CLI, "-p", str(s.port), *args)
        outs.append((p.returncode, p.stdout, p.stderr))
    assert outs[0] == outs[1]


def test_redis_cli_stdin_pipe(clean):
    """Commands on standard input (no TTY), as scripts use redis-cli."""
    script = b"PING\nZADD s 1 a 2 b\nZCARD s\nECHO done\n"
    outs = [run(REDIS_CLI, "-p", str(s.port), input_=script).stdout for s in clean]
    assert outs[0] == outs[1]


def test_redis_cli_pipe_mode(clean):
    """redis-cli --pipe (mass insertion) reads replies and counts them."""
    data = b"".join(b"ZADD pipe:%d 1 m\r\n" % i for i in range(1000))
    for s in clean:
        p = run(REDIS_CLI, "-p", str(s.port), "--pipe", input_=data)
        assert p.returncode == 0, (s, p.stdout, p.stderr)
        assert b"errors: 0, replies: 1000" in p.stdout, (s, p.stdout)


def test_redis_cli_stat(clean):
    """redis-cli --stat polls INFO; a few samples are enough. It writes to a terminal, so it
    gets a pseudo-terminal (through a pipe its output would sit in the stdio buffer)."""
    for s in clean:
        master, slave = pty.openpty()
        p = subprocess.Popen([REDIS_CLI, "-p", str(s.port), "--stat", "-i", "0.2"],
                             stdout=slave, stderr=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        text, deadline = b"", time.monotonic() + 10
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([master], [], [], 0.2)
                if ready:
                    try:
                        text += os.read(master, 65536)
                    except OSError:
                        break
                rows = [l for l in text.decode(errors="replace").splitlines() if l[:1].isdigit()]
                if len(rows) >= 3:
                    break
        finally:
            p.kill()
            p.wait()
            os.close(master)
        out = text.decode(errors="replace")
        assert "keys" in out and "clients" in out and "requests" in out, (s, out)
        assert len(rows) >= 3, (s, out)
