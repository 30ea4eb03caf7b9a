"""Shared pieces of the benchmark scripts: starting servers pinned to a CPU, reading their
RSS, and a minimal pipelined RESP client fast enough to load millions of members."""

import atexit
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOBLIN_BIN = os.environ.get("GOBLIN_BIN", os.path.join(REPO, "target", "release", "goblin-server"))
REDIS_BIN = os.environ.get("REDIS_BIN", shutil.which("redis-server") or "/usr/bin/redis-server")


def add_peer_option(ap):
    """The `--peer NAME=PATH` option of the benchmarks that measure peers beside Goblin."""
    ap.add_argument("--peer", action="append", default=[], metavar="NAME=PATH",
                    help="a peer measured beside Goblin, repeatable: NAME=a redis-server or valkey-server "
                         "binary, or a source tree (its src/ server, else built with make in a temporary "
                         "copy); default redis-7.0=" + REDIS_BIN)


def peers(args):
    """The (name, server binary) of each peer `--peer` asked for, in order."""
    out = []
    for spec in args.peer or ["redis-7.0=" + REDIS_BIN]:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = os.path.basename(os.path.normpath(spec)), spec
        out.append((name, server_binary(path)))
    return out


class RatioTable:
    """The table the memory benchmarks print: per case and peer, Goblin's RSS and used_memory
    per element and encoding beside the peer's, Goblin's RSS over the peer's and whether it
    meets the case's target. `count` names the elements (fields, members, ...)."""

    def __init__(self, count, shape_width, targets):
        self.count, self.width, self.targets = count, shape_width, targets
        self.rows = []
        print("%-4s %-*s %9s | %8s %8s %-9s | %8s %8s %-9s | %5s %6s" % (
            "case", shape_width, "shape", count, "G rss", "G used", "G enc", "P rss", "P used", "P enc",
            "G/R", "target"))

    def add(self, name, shape, n, goblin, results, after_row=None):
        """Prints a row per peer of `results` ({peer: result}, in --peer order) for case
        `name` of `n` elements, calling `after_row(peer, result)` after each; keeps the row
        for `dump`."""
        self.rows.append({"case": name, "shape": shape, self.count: n, "goblin": goblin, "peers": results,
                          "redis": next(iter(results.values()))})
        for peer, r in results.items():
            ratio = goblin["rss"] / r["rss"]
            print("%-4s %-*s %9d | %8.1f %8.1f %-9s | %8.1f %8.1f %-9s | %5.2f %6s  %s" % (
                name, self.width, shape, n, goblin["rss"], goblin["used"], goblin["encoding"], r["rss"],
                r["used"], r["encoding"], ratio, "ok" if ratio <= self.targets[name] else "MISSED", peer),
                flush=True)
            if after_row:
                after_row(peer, r)

    def dump(self, path):
        """Writes the rows as JSON to `path` (nothing when None)."""
        if path:
            with open(path, "w") as f:
                json.dump(self.rows, f, indent=2)


def server_binary(path):
    """A server binary: `path` itself, or the src/redis-server or src/valkey-server of the
    source tree `path`, built by `make` in a temporary copy (removed at exit) when absent."""
    if os.path.isfile(path):
        return path
    if not os.path.isdir(path):
        raise SystemExit("peer %s: no such binary or source tree" % path)
    built = _tree_server(path)
    if built:
        return built
    copy = tempfile.mkdtemp(prefix="goblin-peer-")
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    shutil.copytree(path, copy, symlinks=True, dirs_exist_ok=True)
    print("building %s in %s ..." % (path, copy), flush=True)
    subprocess.run(["nice", "make", "-j2", "-C", copy], check=True, stdout=subprocess.DEVNULL)
    built = _tree_server(copy)
    if not built:
        raise SystemExit("peer %s: make built no src/redis-server or src/valkey-server" % path)
    return built


def _tree_server(tree):
    for name in ("valkey-server", "redis-server"):
        exe = os.path.join(tree, "src", name)
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def encode(*args):
    """One command as a RESP multibulk."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Client:
    """A blocking RESP client that pipelines: send many commands, then read as many replies."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read_reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b"="):
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b",":
            return float(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self.read_reply() for _ in range(n)]
        if kind == b"%":
            return {self.read_reply(): self.read_reply() for _ in range(int(rest))}
        if kind == b"_":
            return None
        raise RuntimeError("unexpected reply %r" % line)

    def call(self, *args):
        self.sock.sendall(encode(*args))
        return self.read_reply()

    def pipeline(self, encoded_commands, window=64):
        """Sends pre-encoded commands keeping at most `window` unanswered; returns nothing."""
        pending = 0
        batch = []
        for cmd in encoded_commands:
            batch.append(cmd)
            if len(batch) >= window:
                self.sock.sendall(b"".join(batch))
                pending += len(batch)
                batch = []
                while pending > window:
                    self.read_reply()
                    pending -= 1
        if batch:
            self.sock.sendall(b"".join(batch))
            pending += len(batch)
        for _ in range(pending):
            self.read_reply()

    def close(self):
        self.sock.close()


def info(client, section):
    """INFO `section` as a dict of field texts."""
    text = client.call("INFO", section).decode()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def memory_field(client, field):
    """An integer field of INFO memory (used_memory, ...)."""
    return int(info(client, "memory")[field])


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS for pid %d" % pid)


def wait_for_pong(proc, port, what, timeout=None):
    """Returns once the server `proc` started answers PING on `port`; RuntimeError naming
    `what` if it exits first or `timeout` seconds (None: no limit) pass."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            c = Client(port)
            c.call("PING")
            c.close()
            return
        except (OSError, RuntimeError):
            if proc.poll() is not None:
                raise RuntimeError("%s exited at start-up" % what)
            if deadline is not None and time.monotonic() > deadline:
                raise RuntimeError("%s did not answer PING in %s s" % (what, timeout))
            time.sleep(0.005)


class Server:
    """A goblin-server or redis-server on a free port, pinned to `cpu` with taskset; `wrapper`
    runs it under another program (valgrind), `start_timeout` bounds the wait for its PING;
    `binary` replaces REDIS_BIN (another Redis build)."""

    def __init__(self, kind, cpu=None, extra=(), wrapper=(), start_timeout=10, binary=None):
        self.kind = kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="goblin-bench-")
        if kind == "goblin":
            cmd = [GOBLIN_BIN, "--port", str(self.port), "--save", ""]
        else:
            cmd = [binary or REDIS_BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", self.dir]
        cmd = list(wrapper) + cmd + list(extra)
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu)] + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir)
        wait_for_pong(self.proc, self.port, kind, start_timeout)
        self.pid = self.proc.pid

    def rss(self):
        return rss_bytes(self.pid)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
