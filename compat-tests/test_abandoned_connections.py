"""Peers that go away: a client that sends part of a command and closes its socket is freed
(Redis frees it when its read returns 0), and one that sends a whole command and then
half-closes (shutdown(SHUT_WR)) gets its reply before the server closes, as in Redis.
Thousands of abandoned partial requests leave `connected_clients` and the server's
descriptor count where they were."""

import os
import socket
import time

import harness

# A SET whose last argument never arrives.
PARTIAL = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nval"
ROUNDS, BATCH = 10, 200


def connected_clients(server):
    c = harness.make_client(server)
    try:
        return c.info("clients")["connected_clients"]
    finally:
        c.close()


def open_fds(server):
    return len(os.listdir(f"/proc/{server.proc.pid}/fd"))


def settle(server, clients, fds, limit=20.0):
    """Polls until the server is back at `clients` connected clients and `fds` descriptors;
    returns what it saw last."""
    deadline = time.monotonic() + limit
    while True:
        seen = (connected_clients(server), open_fds(server))
        if seen == (clients, fds) or time.monotonic() > deadline:
            return seen
        time.sleep(0.05)


def abandon_partial_requests(port):
    """Opens BATCH connections at once, sends each a partial request, closes them all;
    ROUNDS times."""
    for _ in range(ROUNDS):
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(BATCH)]
        for s in socks:
            s.sendall(PARTIAL)
        for s in socks:
            s.close()


def test_abandoned_partial_requests_are_freed(servers):
    for server in servers:
        baseline = (connected_clients(server), open_fds(server))
        abandon_partial_requests(server.port)
        assert settle(server, *baseline) == baseline, server.kind


def half_closed(port, request):
    """Sends `request`, half-closes, and reads until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return got
            got += chunk


def test_half_closed_clients_get_their_replies_then_are_closed(servers):
    requests = [
        b"PING\r\n",
        harness.resp.encode("ECHO", "x" * 200000),
        harness.resp.encode("PING") * 3,
        PARTIAL,
    ]
    for request in requests:
        r, g = (half_closed(s.port, request) for s in servers)
        assert r == g, request[:40]
