"""Service conventions against Debian's redis-server 7.0: `--version`, `daemonize` and
`pidfile`, `supervised systemd`, `protected-mode` (CONFIG round trip and the DENIED reply to a
non-loopback client), the one start-up line for ignored directives, and the same directives
accepted as flags, in a file and by CONFIG SET.

Each test starts its own servers on free 127.0.0.1 ports in its own temporary directory and
stops them. The DENIED case runs both servers in a network namespace of its own (as root),
where an address outside 127.0.0.0/8 sits on the namespace's loopback device, so no traffic
leaves the namespace.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness import GOBLIN_BIN, REDIS_BIN, free_port

BINARIES = {"redis": REDIS_BIN, "goblin": GOBLIN_BIN}
BASE = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]


def client(port: int) -> redis.Redis:
    return redis.Redis(port=port, socket_timeout=10, retry=Retry(NoBackoff(), 0))


def wait_up(port: int, proc: subprocess.Popen | None = None, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode}")
        try:
            if client(port).ping():
                return
        except redis.ConnectionError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing answers on port {port}")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by init) no longer runs.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return False


def shutdown(port: int) -> None:
    with pytest.raises(redis.ConnectionError):
        client(port).execute_command("SHUTDOWN", "NOSAVE")


@pytest.fixture
def started():
    """Popen objects and daemon pids the test started; whatever still runs is killed."""
    procs: list[subprocess.Popen] = []
    pids: list[int] = []
    yield procs, pids
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


def run_server(started, kind: str, workdir: Path, *args: str, env=None,
               conf: Path | None = None) -> tuple[subprocess.Popen, int]:
    """Starts one server in the foreground on a free port, with `conf` as its configuration
    file and `args` after the harness's flags; returns it and the port."""
    port = free_port()
    log = open(workdir / f"{kind}-{port}.out", "ab")
    first = [str(conf)] if conf else []
    proc = subprocess.Popen(
        [BINARIES[kind], *first, "--port", str(port), *BASE, "--dir", str(workdir), *args],
        cwd=workdir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
    )
    log.close()
    started[0].append(proc)
    wait_up(port, proc)
    return proc, port


# --------------------------------------------------------------------------------------------
# --version
# --------------------------------------------------------------------------------------------

VERSION_LINE = re.compile(
    r"Redis server v=(\d+\.\d+\.\d+) sha=([0-9a-f]{8}):([01]) malloc=(\S+) bits=(32|64) "
    r"build=([0-9a-f]+)\n"
)


@pytest.mark.parametrize("flag", ["-v", "--version"])
def test_version_line_has_redis_servers_shape(flag):
    outputs = {}
    for kind, binary in BINARIES.items():
        done = subprocess.run([binary, flag], capture_output=True, text=True, timeout=10)
        assert done.returncode == 0 and done.stderr == "", (kind, done)
        m = VERSION_LINE.fullmatch(done.stdout)
        assert m, (kind, done.stdout)
        outputs[kind] = m.groups()
    version, sha, dirty, malloc, bits, build = outputs["goblin"]
    assert version.startswith("7.2.")
    assert (sha, dirty, malloc, bits, build) == ("00000000", "0", "libc", "64", "0")
    assert outputs["redis"][4] == bits


# --------------------------------------------------------------------------------------------
# daemonize and pidfile
# --------------------------------------------------------------------------------------------


def read_pid(path: Path, timeout: float = 15.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            text = path.read_text()
            if text.endswith("\n"):
                return int(text)
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    raise AssertionError(f"no pid in {path}")


@pytest.mark.parametrize("kind", ["redis", "goblin"])
def test_daemonize_writes_pidfile_and_shutdown_removes_it(kind, tmp_path, started):
    port = free_port()
    pidfile = tmp_path / "server.pid"
    launcher = subprocess.run(
        [BINARIES[kind], "--port", str(port), *BASE, "--dir", str(tmp_path),
         "--daemonize", "yes", "--pidfile", str(pidfile)],
        cwd=tmp_path, capture_output=True, stdin=subprocess.DEVNULL, timeout=30,
    )
    assert launcher.returncode == 0, launcher
    if kind == "goblin":
        # Goblin's parent exits once the daemon is ready: pid file written, port answering.
        assert pidfile.exists()
        # Logging to standard output while daemonized goes to /dev/null, as Redis's does.
        assert launcher.stdout == b"" and launcher.stderr == b""
    pid = read_pid(pidfile)
    started[1].append(pid)
    wait_up(port)
    assert pid_alive(pid)
    assert os.getsid(pid) == pid  # a session of its own: detached from ours
    assert client(port).info("server")["process_id"] == pid
    assert client(port).config_get("daemonize") == {"daemonize": "yes"}
    assert client(port).config_get("pidfile") == {"pidfile": str(pidfile)}
    shutdown(port)
    assert wait_gone(pid)
    assert not pidfile.exists()


def test_daemon_failing_at_start_makes_its_parent_fail(tmp_path, started):
    (tmp_path / "dump.rdb").write_bytes(b"REDIS0010 this is not a snapshot")
    launcher = subprocess.run(
        [GOBLIN_BIN, "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", str(tmp_path),
         "--daemonize", "yes", "--pidfile", str(tmp_path / "p.pid"),
         "--logfile", str(tmp_path / "log")],
        cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30,
    )
    assert launcher.returncode == 1, launcher
    assert "exited during start-up" in launcher.stderr
    assert "Fatal error loading" in (tmp_path / "log").read_text()


@pytest.mark.parametrize("kind", ["redis", "goblin"])
def test_pidfile_without_daemonize_and_sigterm(kind, tmp_path, started):
    pidfile = tmp_path / "fg.pid"
    proc, port = run_server(started, kind, tmp_path, "--pidfile", str(pidfile))
    assert read_pid(pidfile) == proc.pid
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    assert not pidfile.exists()


def test_daemonize_default_pidfile_is_redis_default(tmp_path, started):
    if os.geteuid() != 0:
        pytest.skip("writing /var/run/redis.pid needs root")
    default = Path("/var/run/redis.pid")
    if default.exists():
        pytest.skip(f"{default} exists: another server may own it")
    port = free_port()
    launcher = subprocess.run(
        [GOBLIN_BIN, "--port", str(port), *BASE, "--dir", str(tmp_path), "--daemonize", "yes"],
        cwd=tmp_path, capture_output=True, stdin=subprocess.DEVNULL, timeout=30,
    )
    assert launcher.returncode == 0, launcher
    pid = read_pid(default)
    started[1].append(pid)
    assert client(port).config_get("pidfile") == {"pidfile": str(default)}
    shutdown(port)
    assert wait_gone(pid)
    assert not default.exists()


# --------------------------------------------------------------------------------------------
# supervised systemd
# --------------------------------------------------------------------------------------------


def notifications(sock: socket.socket, until: bytes, timeout: float = 15.0) -> list[bytes]:
    got: list[bytes] = []
    sock.settimeout(timeout)
    while not any(until in m for m in got):
        got.append(sock.recv(4096))
    return got


@pytest.mark.parametrize("mode", ["systemd", "auto"])
def test_supervised_systemd_notifies_readiness(mode, tmp_path, started):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    env = {**os.environ, "NOTIFY_SOCKET": str(path)}
    env.pop("UPSTART_JOB", None)
    seen = {}
    for kind in ("redis", "goblin"):
        # daemonize yes is overridden by supervision: the process stays in the foreground.
        proc, port = run_server(started, kind, tmp_path, "--supervised", mode,
                                "--daemonize", "yes", env=env)
        ready = notifications(sock, b"READY=1\n")
        assert proc.poll() is None
        assert client(port).info("server")["process_supervised"] == "systemd", kind
        shutdown(port)
        assert proc.wait(15) == 0
        sock.settimeout(0.5)
        try:
            stopping = [sock.recv(4096)]
        except socket.timeout:
            stopping = []
        seen[kind] = (ready, stopping)
        if kind == "goblin":
            assert client_gone(port)
    r_ready, _ = seen["redis"]
    g_ready, g_stopping = seen["goblin"]
    assert g_ready == [b"STATUS=Goblin is loading...\n",
                       b"STATUS=Ready to accept connections\nREADY=1\n"]
    assert b"STOPPING=1\n" in g_stopping
    # Redis sends the same sequence: a loading status, then the ready status and READY=1.
    assert r_ready[0].startswith(b"STATUS=") and r_ready[-1] == b"READY=1\n"
    assert b"STATUS=Ready to accept connections\n" in r_ready


def client_gone(port: int) -> bool:
    try:
        client(port).ping()
    except redis.ConnectionError:
        return True
    return False


def test_supervised_systemd_without_socket_is_not_supervised(tmp_path, started):
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "UPSTART_JOB")}
    log = tmp_path / "g.log"
    proc, port = run_server(started, "goblin", tmp_path, "--supervised", "systemd",
                            "--logfile", str(log), env=env)
    assert client(port).config_get("supervised") == {"supervised": "systemd"}
    assert client(port).info("server")["process_supervised"] == "no"
    assert "systemd supervision error: NOTIFY_SOCKET not found!" in log.read_text()
    shutdown(port)
    proc.wait(15)


# --------------------------------------------------------------------------------------------
# protected-mode
# --------------------------------------------------------------------------------------------


def test_protected_mode_and_service_directives_over_config(both):
    both.pairs("CONFIG", "GET", "protected-mode")
    both.config_set("protected-mode", "no")
    both.pairs("CONFIG", "GET", "protected-mode")
    both.ok("CONFIG", "SET", "protected-mode", "YES")
    both.pairs("CONFIG", "GET", "protected-mode")
    both.err("CONFIG", "SET", "protected-mode", "maybe")
    both.pairs("CONFIG", "GET", "daemonize", "pidfile", "supervised")
    both.err("CONFIG", "SET", "daemonize", "yes")
    both.err("CONFIG", "SET", "pidfile", "/tmp/x.pid")
    both.err("CONFIG", "SET", "supervised", "systemd")


OUTSIDE = "198.51.100.1"  # TEST-NET-2, only ever on the namespace's own loopback device

CLIENT = r"""
import socket, sys
host, port, data = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode().decode("unicode_escape")
s = socket.create_connection((host, port), timeout=10)
s.sendall(data.encode())
out = b""
def complete(out):
    if not data or not out.endswith(b"\r\n"):
        return False
    if not out.startswith(b"$"):
        return True
    header, _, body = out.partition(b"\r\n")
    return len(body) >= int(header[1:]) + 2

# Reads until the server closes, or the reply to the request has come.
while not complete(out):
    chunk = s.recv(65536)
    if not chunk:
        break
    out += chunk
sys.stdout.write(repr(out))
"""


@pytest.fixture
def netns():
    if os.geteuid() != 0:
        pytest.skip("creating a network namespace needs root")
    name = f"goblin-pm-{os.getpid()}"
    try:
        subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"no network namespace: {e}")
    try:
        subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True)
        subprocess.run(["ip", "-n", name, "addr", "add", f"{OUTSIDE}/32", "dev", "lo"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def in_ns(ns: str, host: str, port: int, data: str) -> bytes:
    done = subprocess.run(
        ["ip", "netns", "exec", ns, sys.executable, "-c", CLIENT, host, str(port), data],
        capture_output=True, text=True, timeout=30, check=True,
    )
    return eval(done.stdout)  # the repr of bytes written by CLIENT


def test_protected_mode_denies_non_loopback_clients(netns, tmp_path, started):
    replies = {}
    for kind, port, bind in (("redis", 16379, [OUTSIDE, "127.0.0.1"]),
                             ("goblin", 16380, [f"{OUTSIDE} 127.0.0.1"])):
        argv = [BINARIES[kind], "--port", str(port), "--bind", *bind, "--save", "",
                "--appendonly", "no", "--dir", str(tmp_path)]
        log = open(tmp_path / f"{kind}.out", "ab")
        proc = subprocess.Popen(["ip", "netns", "exec", netns, *argv], cwd=tmp_path,
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        started[0].append(proc)
        deadline = time.monotonic() + 15
        while True:
            try:
                assert in_ns(netns, "127.0.0.1", port, "PING\r\n") == b"+PONG\r\n"
                break
            except subprocess.CalledProcessError:
                assert time.monotonic() < deadline and proc.poll() is None, kind
                time.sleep(0.1)
        # Nothing is sent: the refusal comes unasked, then the server closes.
        denied = in_ns(netns, OUTSIDE, port, "")
        rejected = in_ns(netns, "127.0.0.1", port, "INFO stats\r\n")
        assert b"rejected_connections:1\r\n" in rejected, kind
        # Only the loopback interface may turn it off; then outside clients are served.
        assert in_ns(netns, "127.0.0.1", port,
                     "CONFIG SET protected-mode no\r\n") == b"+OK\r\n"
        assert in_ns(netns, OUTSIDE, port, "PING\r\n") == b"+PONG\r\n"
        in_ns(netns, "127.0.0.1", port, "CONFIG SET protected-mode yes\r\nCONFIG SET requirepass pw\r\n")
        assert in_ns(netns, OUTSIDE, port, "PING\r\n").startswith(b"-NOAUTH")
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
        replies[kind] = denied
    # Redis 7.0 has a typo that 7.2 fixed ("Setup a an"); Goblin sends 7.2's text.
    assert replies["redis"].startswith(b"-DENIED Redis is running in protected mode")
    assert replies["goblin"] == replies["redis"].replace(b"4) Setup a an ", b"4) Set up an ")


# --------------------------------------------------------------------------------------------
# Ignored directives, and the same directives as flag, in a file and by CONFIG SET
# --------------------------------------------------------------------------------------------


def test_ignored_directives_get_one_summary_line(tmp_path, started):
    conf = tmp_path / "goblin.conf"
    conf.write_text("maxmemory 100mb\nio-threads 1\nprotected-mode no\n"
                    "crash-memcheck-enabled yes\nmaxmemory 200mb\nhz 20\n")
    log = tmp_path / "g.log"
    _, port = run_server(started, "goblin", tmp_path, "--logfile", str(log), conf=conf)
    lines = [line for line in log.read_text().splitlines() if "ignored" in line]
    assert len(lines) == 1, lines
    assert lines[0].endswith(" # Configuration directives not supported by Goblin were ignored "
                             "(2): io-threads, crash-memcheck-enabled")
    assert client(port).config_get("protected-mode") == {"protected-mode": "no"}
    assert client(port).config_get("maxmemory") == {"maxmemory": str(200 << 20)}, "the last one wins"
    shutdown(port)


def test_debian_redis_conf_starts_with_one_summary_line(tmp_path, started):
    """Debian's redis.conf starts Goblin with every directive taken; with directives Goblin
    lacks added (I/O threads), one warning names them all, once each."""
    conf = Path("/etc/redis/redis.conf")
    if not conf.exists() or not Path("/var/lib/redis").is_dir():
        pytest.skip("Debian's redis-server package is not installed")
    for extra, ignored in (("", []), ("io-threads 4\nio-threads-do-reads yes\nio-threads 2\n",
                                      ["io-threads", "io-threads-do-reads"])):
        workdir = tmp_path / str(len(ignored))
        workdir.mkdir()
        copy = workdir / "redis.conf"
        copy.write_text(conf.read_text() + extra)
        log = workdir / "g.log"
        _, port = run_server(started, "goblin", workdir, "--logfile", str(log), "--daemonize",
                             "no", "--pidfile", str(workdir / "p.pid"), conf=copy)
        warnings = [line for line in log.read_text().splitlines() if "ignored" in line]
        if not ignored:
            assert warnings == []
        else:
            assert len(warnings) == 1, warnings
            m = re.search(r"were ignored \((\d+)\): (.*)$", warnings[0])
            assert m.group(2).split(", ") == ignored
            assert int(m.group(1)) == len(ignored)
        shutdown(port)


def fatal_start(kind: str, tmp_path: Path, conf_text: str | None, *flags: str) -> list[str]:
    """Starts a server that must refuse its configuration; its output's lines after the
    banner (which names the Redis version)."""
    first = []
    if conf_text is not None:
        conf = tmp_path / f"{kind}.conf"
        conf.write_text(conf_text)
        first = [str(conf)]
    out = subprocess.run([BINARIES[kind], *first, *flags], cwd=tmp_path, capture_output=True,
                         text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 1, (kind, out)
    lines = (out.stdout + out.stderr).strip().splitlines()
    banner = [i for i, line in enumerate(lines) if "*** FATAL CONFIG FILE ERROR (Redis " in line]
    assert banner, (kind, lines)
    return lines[banner[0] + 1:]


@pytest.mark.parametrize("line", ["no-such-directive yes", "maxmemory-policy bogus",
                                  "port 1 2", 'dir "unbalanced'])
def test_bad_configuration_line_is_fatal_as_in_redis(line, tmp_path):
    conf = f"# a comment\nport {free_port()}\n{line}\n"
    assert fatal_start("goblin", tmp_path, conf) == fatal_start("redis", tmp_path, conf)


@pytest.mark.parametrize("flags", [
    ["--invalid"],
    ["--port"],
    ["--port", "6380", "--loglevel"],
    ["--port", "6379", "6380"],
    ["--port", "--loglevel", "verbose"],
    ["--port", "--bla", "--loglevel", "verbose"],
    ["--shutdown-on-sigint"],
    ["--shutdown-on-sigint", "now force", "--shutdown-on-sigterm"],
    ["--replicaof", "127.0.0.1", "abc"],
    ["--replicaof", "--127.0.0.1", "abc"],
    ["--replicaof", "--127.0.0.1", "--abc"],
    ["--save", "--port", "abc"],
    ["--maxmemory 10", "--maxmemory-policy"],
    ["--port", 'a"b\\c\n'],
])
def test_command_line_is_read_as_configuration_lines(flags, tmp_path):
    """Redis's own suite (unit/introspection): each `--name` opens a configuration line, the
    line's first value is taken even if it starts with `--`, values are quoted, and the
    error names the line and its number after the file's."""
    assert fatal_start("goblin", tmp_path, None, *flags) == fatal_start("redis", tmp_path, None, *flags)
    conf = "# a comment\nloglevel notice\n"
    assert fatal_start("goblin", tmp_path, conf, *flags) == fatal_start("redis", tmp_path, conf, *flags)


def test_command_line_forms_that_start(tmp_path, started):
    """A name and value in one argument, and a value that starts with `--`."""
    flags = ["--maxmemory 700mb", "--maxmemory-policy volatile-lru", "--proc-title-template",
             "--my--title--template", "--loglevel verbose"]
    seen = []
    for kind in ("redis", "goblin"):
        _, port = run_server(started, kind, tmp_path, *flags)
        seen.append([client(port).config_get(name) for name in
                     ("maxmemory", "maxmemory-policy", "proc-title-template", "loglevel")])
        shutdown(port)
    assert seen[0] == seen[1]
    assert seen[1][2] == {"proc-title-template": "--my--title--template"}


def test_unknown_flag_is_fatal_and_a_redis_only_flag_is_ignored(tmp_path, started):
    flags = ["--port", str(free_port()), "--no-such-directive", "yes"]
    assert fatal_start("goblin", tmp_path, None, *flags) == fatal_start("redis", tmp_path, None, *flags)
    log = tmp_path / "g.log"
    _, port = run_server(started, "goblin", tmp_path, "--logfile", str(log),
                         "--io-threads", "1")
    assert "were ignored (1): io-threads" in log.read_text()
    shutdown(port)


@pytest.mark.parametrize("line", ["tls-port 6380", "tls-replication yes", "tls-cluster yes"])
def test_a_tls_switch_turned_on_is_fatal(line, tmp_path):
    """Goblin has no TLS: a directive that turns it on stops start-up, as in a Redis built
    without TLS, instead of serving in clear; left off, the TLS directives are ignored."""
    conf = f"port {free_port()}\n{line}\n"
    got = fatal_start("goblin", tmp_path, conf)
    assert got[:2] == ["Reading the configuration file, at line 2", f">>> '{line}'"], got
    assert got[2].startswith("Goblin has no TLS"), got


def test_tls_switches_left_off_are_ignored(tmp_path, started):
    conf = tmp_path / "goblin.conf"
    conf.write_text("tls-port 0\ntls-replication no\ntls-cert-file /nonexistent.pem\n")
    log = tmp_path / "g.log"
    _, port = run_server(started, "goblin", tmp_path, "--logfile", str(log), conf=conf)
    assert "were ignored (3): tls-port, tls-replication, tls-cert-file" in log.read_text()
    shutdown(port)


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_config_set_port_and_bind_move_the_listener(tmp_path, started):
    """CONFIG SET port and bind at run time, beside Redis: the new address answers, the old
    one refuses, the connection that asked stays; a port someone holds gets Redis's error."""
    for kind in ("redis", "goblin"):
        _, port = run_server(started, kind, tmp_path)
        conn = client(port)
        new_port = free_port()
        assert conn.config_set("port", str(new_port))
        assert client(new_port).ping() and refused(port), kind
        assert conn.ping(), "the connection that moved the port stays"
        assert conn.config_get("port") == {"port": str(new_port)}
        assert conn.config_set("bind", "127.0.0.1 -::1")
        assert client(new_port).ping(), kind
        holder = socket.create_server(("127.0.0.1", 0))
        with pytest.raises(redis.ResponseError) as port_error:
            conn.config_set("port", str(holder.getsockname()[1]))
        holder.close()
        # 127.0.0.3 is on loopback too: held there, the port cannot take the new bind list.
        holder = socket.create_server(("127.0.0.3", new_port))
        with pytest.raises(redis.ResponseError) as bind_error:
            conn.config_set("bind", "127.0.0.1 127.0.0.3")
        holder.close()
        assert str(port_error.value) == (
            "CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this "
            "port. Check server logs."), kind
        assert str(bind_error.value) == ("CONFIG SET failed (possibly related to argument "
                                         "'bind') - Failed to bind to specified addresses."), kind
        assert client(new_port).ping(), "a failed change keeps the listener"
        assert conn.config_get("bind") == {"bind": "127.0.0.1 -::1"}
        shutdown(new_port)


# (directive, value as given, CONFIG GET's answer, Redis has it)
DIRECTIVES = [
    ("protected-mode", ["no"], "no", True),
    ("maxclients", ["500"], "500", True),
    ("timeout", ["30"], "30", True),
    ("hz", ["20"], "20", True),
    ("loglevel", ["verbose"], "verbose", True),
    ("slowlog-max-len", ["5"], "5", True),
    ("slowlog-log-slower-than", ["-1"], "-1", True),
    ("zset-max-listpack-entries", ["64"], "64", True),
    ("zset-max-ziplist-value", ["16"], "16", True),
    ("proto-max-bulk-len", ["2mb"], "2097152", True),
    ("client-query-buffer-limit", ["2gb"], "2147483648", True),
    ("client-output-buffer-limit", ["normal", "10mb", "5mb", "60"],
     "normal 10485760 5242880 60 slave 268435456 67108864 60 pubsub 33554432 8388608 60", True),
    ("save", ["100", "10"], "100 10", True),
    ("dbfilename", ["other.rdb"], "other.rdb", True),
    ("databases", ["4"], "4", True),
    ("daemonize", ["no"], "no", True),
    ("supervised", ["no"], "no", True),
    ("enable-debug-command", ["local"], "local", True),
    ("rdb-skip-unsupported-types", ["yes"], "yes", False),
    ("busy-poll-us", ["5"], "5", False),
]


def test_directives_same_as_flag_in_file_and_by_config_set(tmp_path, started):
    pidfile = str(tmp_path / "p.pid")
    directives = DIRECTIVES + [("pidfile", [pidfile], pidfile, True)]
    flags = [w for name, value, _, _ in directives for w in (f"--{name}", *value)]
    conf = tmp_path / "all.conf"
    conf.write_text("".join(f"{name} {' '.join(value)}\n" for name, value, _, _ in directives))
    _, by_flag = run_server(started, "goblin", tmp_path, *flags)
    # BASE's `save ""` follows the file, so the file goes without it here.
    conf_only = [w for w in BASE if w not in ("--save", "")]
    port = free_port()
    p = subprocess.Popen([GOBLIN_BIN, str(conf), "--port", str(port), *conf_only,
                          "--dir", str(tmp_path)], cwd=tmp_path, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL)
    started[0].append(p)
    wait_up(port, p)
    by_file = port
    _, by_set = run_server(started, "goblin", tmp_path)
    _, redis_port = run_server(started, "redis", tmp_path,
                               *[w for name, value, _, has in directives if has
                                 for w in (f"--{name}", *value)])
    setter = client(by_set)
    for name, value, expected, _ in directives:
        reply = None
        try:
            reply = setter.config_set(name, " ".join(value))
        except redis.ResponseError as e:
            # dbfilename is a protected config (enable-protected-configs no), as in Redis 7.
            assert "can't set immutable config" in str(e) or (
                name == "dbfilename" and "can't set protected config" in str(e)), (name, e)
        for port in (by_flag, by_file) + ((by_set,) if reply else ()):
            assert client(port).config_get(name) == {name: expected}, (name, port)
    redis_got = client(redis_port)
    for name, _, expected, has in directives:
        if has:
            assert redis_got.config_get(name) == {name: expected}, name
    for port in (by_flag, by_file, by_set, redis_port):
        shutdown(port)


def test_store_lines_go_through_the_servers_log(tmp_path, started):
    """Goblin Store's start-up lines carry the server's log format and go to --logfile."""
    log = tmp_path / "g.log"
    _, port = run_server(started, "goblin", tmp_path, "--logfile", str(log),
                         "--memcache-port", str(free_port()))
    lines = [line for line in log.read_text().splitlines() if "Goblin Store:" in line]
    assert lines, log.read_text()
    assert all(re.match(r"\d+:M \d\d \w{3} \d{4} [\d:.]+ [*#] Goblin Store: ", line) for line in lines), lines
    assert any("memcache on" in line for line in lines), lines
    shutdown(port)
