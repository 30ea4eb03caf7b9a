"""The machinery of the HTTP mirror-cache tests: a scriptable origin, goblin-server fronts,
and a raw HTTP/1.1 client. conftest.py turns them into fixtures.

Origin
    `Origin` is a threaded HTTP/1.1 server on a free 127.0.0.1 port. Each path is scripted
    with `origin.route(path, **spec)` (or a function of the request returning a spec):
    status, headers, body, chunked or until-close framing, a delay before the head, a pause
    in the middle of the body, a truncated body (the connection closes early). It keeps
    connections alive, counts the requests of each path (`origin.count(path)`), logs every
    request (`origin.requests`) and counts the connections it accepted (`origin.accepted`).
    Paths without a route answer 404 "no route".

Fronts
    `Front(origin_url, args).start()` runs goblin-server with its HTTP front mirroring
    origin_url, RESP on another free port, memcache off, in a temporary working directory.
    GOBLIN_BIN overrides the binary (default: <repo>/target/release/goblin-server),
    GOBLIN_MIRROR_CLIENT the origin client (plain, the default, or uring).

Client
    `fetch(front, path, ...)` sends one request on a new connection and returns a `Response`
    (status, headers with case-insensitive `header()`, body, and on request whether the front
    closed the connection). `Conn` keeps one connection for keep-alive, pipelining and raw bytes.

"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from email.utils import formatdate
from pathlib import Path

from harness import free_port, stop_process

REPO = Path(__file__).resolve().parents[2]
GOBLIN_BIN = os.environ.get("GOBLIN_BIN", str(REPO / "target" / "release" / "goblin-server"))
# plain or uring: how the fronts under test talk to the origin.
MIRROR_CLIENT = os.environ.get("GOBLIN_MIRROR_CLIENT", "plain")

# Cache-Control the origin sends unless a route says otherwise, so that objects stay cached
# for the whole test whatever --default-ttl is.
LONG = "max-age=300"


def http_date(t: float | None = None) -> str:
    """IMF-fixdate of Unix time t (now by default)."""
    return formatdate(time.time() if t is None else t, usegmt=True)


# --------------------------------------------------------------------------------------------
# Origin
# --------------------------------------------------------------------------------------------


class Request:
    """A request the origin received."""

    def __init__(self, method: str, target: str, version: str, headers: list[tuple[str, str]]):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return f"<{self.method} {self.target}>"


class Origin:
    """A scriptable HTTP/1.1 origin server (see the module docstring)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.routes: dict = {}
        self.counts: dict[str, int] = {}
        self.requests: list[Request] = []
        self.accepted = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.conns: list[socket.socket] = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def route(self, path: str, spec=None, **kw) -> None:
        """Scripts `path`: a spec dict (or keywords), or a function (Request, n) -> spec
        called with the request and how many requests of this path came before it.

        Spec keys: status (200), reason, headers (list of pairs; Cache-Control defaults to
        LONG, set it to None to send none), body (bytes), chunked (bool), chunk (bytes per
        chunk, 1000), until_close (no length, close after the body), close (Connection:
        close), delay (seconds before the head), pause_at/pause (stop after pause_at body
        bytes for pause seconds), truncate (close after this many body bytes), wire (the
        bytes after the head verbatim, framing and all, instead of the framed body: a list
        of bytes to send, the first with the head, and seconds to pause; the connection
        closes after it)."""
        self.routes[path] = spec if spec is not None else kw

    def count(self, path: str) -> int:
        with self.lock:
            return self.counts.get(path, 0)

    def seen(self, path: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.target == path]

    def drop_connections(self) -> None:
        """Closes every open connection, as an origin does with idle keep-alive connections."""
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass

    def stop(self) -> None:
        self.stopped = True
        try:
            # Wakes the accept thread (closing alone leaves it accepting on Linux).
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.drop_connections()

    def _accept(self) -> None:
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.accepted += 1
                self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = c.recv(65536)
                    if not data:
                        return
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                method, target, version = lines[0].split(" ", 2)
                headers = [tuple(x.strip() for x in l.split(":", 1)) for l in lines[1:] if ":" in l]
                req = Request(method, target, version, headers)
                with self.lock:
                    n = self.counts.get(target, 0)
                    self.counts[target] = n + 1
                    self.requests.append(req)
                    spec = self.routes.get(target)
                if callable(spec):
                    spec = spec(req, n)
                if spec is None:
                    spec = {"status": 404, "body": b"no route\n"}
                if not self._respond(c, req, spec):
                    return
        except OSError:
            return
        finally:
            c.close()

    def _respond(self, c: socket.socket, req: Request, spec: dict) -> bool:
        """Sends one response; false when the connection is to be closed."""
        status = spec.get("status", 200)
        body = spec.get("body", b"")
        headers = list(spec.get("headers", []))
        if not any(k.lower() == "cache-control" for k, _ in headers):
            headers.append(("Cache-Control", LONG))
        headers = [(k, v) for k, v in headers if v is not None]
        chunked = spec.get("chunked", False)
        until_close = spec.get("until_close", False)
        close = spec.get("close", False) or until_close
        no_body = req.method == "HEAD" or status in (204, 304) or status < 200
        if chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        elif not until_close:
            headers.append(("Content-Length", str(len(body))))
        if close:
            headers.append(("Connection", "close"))
        time.sleep(spec.get("delay", 0))
        reason = spec.get("reason", "Whatever")
        head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
        head = head.encode("latin-1") + b"\r\n"
        if "wire" in spec:
            for item in spec["wire"]:
                if isinstance(item, bytes):
                    c.sendall(head + item)
                    head = b""
                else:
                    time.sleep(item)
            c.sendall(head)
            time.sleep(0.05)
            return False
        c.sendall(head)
        if no_body:
            return not close
        wire = b""
        if chunked:
            step = spec.get("chunk", 1000)
            for i in range(0, len(body), step):
                part = body[i : i + step]
                wire += b"%x\r\n" % len(part) + part + b"\r\n"
        else:
            wire = body
        truncate = spec.get("truncate")
        if truncate is not None:
            c.sendall(wire[:truncate])
            time.sleep(0.05)
            return False
        pause_at = spec.get("pause_at")
        if pause_at is not None:
            c.sendall(wire[:pause_at])
            time.sleep(spec.get("pause", 0))
            wire = wire[pause_at:]
        c.sendall(wire)
        if chunked:
            c.sendall(b"0\r\n\r\n")
        return not close


# --------------------------------------------------------------------------------------------
# Client
# --------------------------------------------------------------------------------------------


class Response:
    """One response read from the front."""

    def __init__(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.closed: bool | None = None  # fetch(..., wait_close=s): the front closed after it

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def cache(self) -> str | None:
        """The X-Cache header: HIT or MISS."""
        return self.header("X-Cache")

    def __repr__(self):
        return f"<{self.status} {self.cache} {len(self.body)} bytes {self.headers}>"


class Closed(Exception):
    """The front closed the connection before a complete response."""

    def __init__(self, partial: bytes):
        super().__init__(f"connection closed after {len(partial)} bytes: {partial[:300]!r}")
        self.partial = partial


class Conn:
    """One client connection to a front."""

    def __init__(self, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""
        self.eof = False

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _more(self) -> bool:
        if self.eof:
            return False
        data = self.sock.recv(1 << 20)
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._more():
                raise Closed(self.buf)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            if not self._more():
                raise Closed(self.buf)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self, head_request: bool = False) -> Response:
        """Reads one response (a HEAD request's when `head_request`)."""
        line = self._line().decode("latin-1")
        version, status, *reason = line.split(" ", 2)
        assert version.startswith("HTTP/1."), line
        headers = []
        while True:
            l = self._line().decode("latin-1")
            if not l:
                break
            k, v = l.split(":", 1)
            headers.append((k.strip(), v.strip()))
        r = Response(int(status), reason[0] if reason else "", headers, b"")
        if head_request or r.status in (204, 304) or r.status < 200:
            return r
        if (r.header("Transfer-Encoding") or "").lower() == "chunked":
            body = b""
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    while self._line():
                        pass
                    break
                body += self._take(size)
                assert self._take(2) == b"\r\n"
            r.body = body
        elif r.header("Content-Length") is not None:
            r.body = self._take(int(r.header("Content-Length")))
        else:
            while self._more():
                pass
            r.body, self.buf = self.buf, b""
        return r

    def is_closed(self, wait: float = 3.0) -> bool:
        """True when the front closes the connection within `wait` seconds with no more bytes
        (bytes that do arrive are kept)."""
        if self.buf:
            return False
        self.sock.settimeout(wait)
        try:
            return not self._more()
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


def request(method: str, path: str, headers: dict | list | None = None, version: str = "1.1") -> bytes:
    """The bytes of a request with a Host header unless `headers` has one."""
    hs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
    if not any(k.lower() == "host" for k, _ in hs):
        hs.insert(0, ("Host", "cache.test"))
    return (f"{method} {path} HTTP/{version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hs) + "\r\n").encode()


def fetch(
    front: "Front",
    path: str,
    headers: dict | None = None,
    method: str = "GET",
    raw: bytes | None = None,
    wait_close: float = 0.0,
) -> Response:
    """Sends one request on a new connection and reads the response; `raw` replaces the
    request bytes. With `wait_close`, `Response.closed` tells whether the front closed the
    connection within that many seconds after the response."""
    c = Conn(front.port)
    try:
        c.send(raw if raw is not None else request(method, path, headers))
        r = c.read(head_request=method == "HEAD")
        if wait_close:
            r.closed = c.is_closed(wait_close)
        return r
    finally:
        c.close()


# --------------------------------------------------------------------------------------------
# Fronts
# --------------------------------------------------------------------------------------------


def has_http_front() -> bool:
    """Whether the goblin-server binary has the HTTP front (built before it, it has not)."""
    if not Path(GOBLIN_BIN).exists():
        return True  # Front.start() says what is missing
    out = subprocess.run([GOBLIN_BIN, "--help"], capture_output=True, text=True, timeout=30)
    return "--http-port" in out.stdout


class Front:
    """A goblin-server with its HTTP front."""

    def __init__(self, origin_url: str, args: list[str]):
        self.dir = tempfile.mkdtemp(prefix="goblin-http-")
        self.args = list(args)
        self.origin_url = origin_url
        self.log_path = Path(self.dir) / "server.log"
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> "Front":
        if not Path(GOBLIN_BIN).exists():
            raise RuntimeError(f"goblin-server not found: {GOBLIN_BIN} (cargo build --release)")
        for _attempt in range(5):
            resp_port, self.port = free_port(), free_port()
            argv = [
                GOBLIN_BIN, "--port", str(resp_port), "--save", "", "--appendonly", "no",
                "--http-port", str(self.port), "--mirror", self.origin_url,
                "--mirror-client", MIRROR_CLIENT, "--no-memcache", *self.args,
            ]
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(
                    argv, cwd=self.dir, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            if self._wait_ready():
                return self
            self.stop(remove=False)
        raise RuntimeError(f"goblin-server did not start; log:\n{self.log_tail()}")

    def _wait_ready(self, timeout: float = 15.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                r = fetch(self, "/goblin/stats")
                if r.status == 200:
                    return True
            except (OSError, Closed):
                time.sleep(0.05)
        return False

    def stats(self) -> dict:
        r = fetch(self, "/goblin/stats")
        assert r.status == 200, r
        return json.loads(r.body)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, remove: bool = True) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None
        if remove:
            shutil.rmtree(self.dir, ignore_errors=True)


def wait_until(cond, timeout: float, step: float = 0.1):
    """Polls cond() until it returns a true value (returned) or `timeout` seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


def body_of(n: int, seed: int = 0) -> bytes:
    """n bytes of a recognisable pattern: any misplaced slice shows."""
    return b"".join(b"%08d%x\n" % (i, seed % 16) for i in range(n // 10 + 1))[:n]
