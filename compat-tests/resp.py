"""A small RESP2/RESP3 reply reader for the raw-socket cases.

`reply_end(buf, pos)` finds where one complete reply that starts at `pos` ends, without
allocating; `parse(buf)` turns a whole reply into Python values (for comparisons that must
look inside a reply, such as doubles printed differently by Redis 7.0 and 7.2).

The raw helpers read from a socket until the expected number of complete replies is in the
buffer, so no test depends on a timeout to decide that a reply is over.
"""

from __future__ import annotations

import socket
import time

# Types whose payload is one line: simple string, error, integer, null, double, boolean,
# big number.
_LINE_TYPES = b"+-:_,#("
# Types with a length and a payload: bulk string, blob error, verbatim string.
_BLOB_TYPES = b"$!="
# Aggregates: array, set, push (N elements); map, attribute (2N elements).
_AGG_TYPES = b"*~>"
_PAIR_TYPES = b"%|"


class ProtocolViolation(Exception):
    """The server sent bytes that are not a RESP reply."""


def _line(buf: bytes, pos: int) -> tuple[bytes, int] | None:
    cr = buf.find(b"\r\n", pos)
    if cr < 0:
        return None
    return buf[pos:cr], cr + 2


def reply_end(buf: bytes, pos: int = 0) -> int | None:
    """Offset just past the reply starting at `pos`, or None when it is incomplete."""
    if pos >= len(buf):
        return None
    kind = buf[pos]
    got = _line(buf, pos + 1)
    if got is None:
        return None
    head, nxt = got
    if kind in _LINE_TYPES:
        return nxt
    if kind in _BLOB_TYPES:
        n = int(head)
        if n < 0:
            return nxt
        end = nxt + n + 2
        return end if len(buf) >= end else None
    if kind in _AGG_TYPES or kind in _PAIR_TYPES:
        n = int(head)
        if n < 0:
            return nxt
        if kind in _PAIR_TYPES:
            n *= 2
        for _ in range(n):
            nxt = reply_end(buf, nxt)
            if nxt is None:
                return None
        if kind == ord("|"):
            # An attribute precedes the reply it describes.
            return reply_end(buf, nxt)
        return nxt
    raise ProtocolViolation(f"unexpected reply type byte {bytes([kind])!r} in {buf[pos:pos + 60]!r}")


def split_replies(buf: bytes) -> tuple[list[bytes], bytes]:
    """Splits a buffer into complete replies and the incomplete rest."""
    out, pos = [], 0
    while True:
        end = reply_end(buf, pos)
        if end is None:
            return out, buf[pos:]
        out.append(buf[pos:end])
        pos = end


class Error:
    """A parsed error reply (kept apart from strings so comparisons see the difference)."""

    def __init__(self, message: bytes):
        self.message = message

    def __eq__(self, other):
        return isinstance(other, Error) and other.message == self.message

    def __repr__(self):
        return f"Error({self.message!r})"


class Double(float):
    """A parsed RESP3 double."""


def parse(buf: bytes, pos: int = 0):
    """Parses the reply at `pos`; returns (value, end). Maps and attributes become lists of pairs."""
    kind = buf[pos]
    head, nxt = _line(buf, pos + 1)
    if kind == ord("+"):
        return head, nxt
    if kind == ord("-"):
        return Error(head), nxt
    if kind in b":(":
        return int(head), nxt
    if kind == ord("_"):
        return None, nxt
    if kind == ord(","):
        return Double(float(head)), nxt
    if kind == ord("#"):
        return head == b"t", nxt
    if kind in _BLOB_TYPES:
        n = int(head)
        if n < 0:
            return None, nxt
        body = buf[nxt:nxt + n]
        return (Error(body) if kind == ord("!") else body), nxt + n + 2
    if kind in _AGG_TYPES or kind in _PAIR_TYPES:
        n = int(head)
        if n < 0:
            return None, nxt
        items = []
        for _ in range(n * (2 if kind in _PAIR_TYPES else 1)):
            value, nxt = parse(buf, nxt)
            items.append(value)
        if kind in _PAIR_TYPES:
            items = [(items[i], items[i + 1]) for i in range(0, len(items), 2)]
        return items, nxt
    raise ProtocolViolation(f"unexpected reply type byte {bytes([kind])!r}")


def parse_all(buf: bytes) -> list:
    """Parses every complete reply in `buf` (which must hold nothing else)."""
    replies, rest = split_replies(buf)
    assert rest == b"", f"incomplete trailing reply: {rest[:80]!r}"
    return [parse(r)[0] for r in replies]


class RawConnection:
    """A plain TCP connection that sends bytes and reads whole RESP replies."""

    def __init__(self, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.timeout = timeout

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_replies(self, count: int) -> bytes:
        """Reads until `count` complete replies are buffered; returns their bytes."""
        deadline = time.monotonic() + self.timeout
        found, pos = 0, 0
        while True:
            while found < count:
                end = reply_end(self.buf, pos)
                if end is None:
                    break
                found, pos = found + 1, end
            if found >= count:
                taken = bytes(self.buf[:pos])
                del self.buf[:pos]
                return taken
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"wanted {count} replies, have {found}: {bytes(self.buf[:200])!r}")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError(
                    f"connection closed after {found} of {count} replies: {bytes(self.buf[:200])!r}"
                )
            self.buf += chunk

    def request(self, data: bytes, count: int = 1) -> bytes:
        self.send(data)
        return self.read_replies(count)

    def is_closed(self, wait: float = 5.0) -> bool:
        """Whether the peer closes the connection (EOF or reset) within `wait` seconds,
        once any bytes still in flight are drained."""
        deadline = time.monotonic() + wait
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not chunk:
                return True
            self.buf += chunk

    def close(self) -> None:
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def encode(*args) -> bytes:
    """A request as a RESP multibulk array."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, (int, float)):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)
