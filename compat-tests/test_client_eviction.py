"""Client eviction (`maxmemory-clients`) and the per-client memory CLIENT LIST shows,
compared with Redis: the parameter's values and errors, CLIENT LIST's qbuf / argv-mem /
multi-mem for the running client, a client evicted for its query buffer, its arguments, its
watched keys or its output, a CLIENT NO-EVICT client kept, eviction down to the limit only
(largest first) when the limit is lowered, INFO evicted_clients, CONFIG GET of
replicaof / slaveof, and clients whose output piles up (MGET replies, pubsub messages)
evicted before any key (Redis's unit/maxmemory cases)."""

from __future__ import annotations

import re
import socket
import time

import redis

from harness import info_of, make_client


def field(line: str, name: str) -> str:
    return re.search(rf"(?:^| ){name}=(\S*)", line).group(1)


def named(c: redis.Redis, name: str) -> str | None:
    for line in c.execute_command("CLIENT", "LIST").decode().splitlines():
        if f" name={name} " in line:
            return line
    return None


def wait_until(cond, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def raw_client(server, name: str) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(f"CLIENT SETNAME {name}\r\n".encode())
    assert s.recv(100) == b"+OK\r\n"
    return s


def test_parameter_values_and_errors(both):
    for value in ("7%", "1kb", "0%", "3000000", "0"):
        both.config_set("maxmemory-clients", value)
        both("CONFIG", "GET", "maxmemory-clients")
    for bad in ("101%", "-5", "abc", "-5%"):
        both.err("CONFIG", "SET", "maxmemory-clients", bad)
    both.err("CONFIG", "SET", "maxmemory-clients", "101%", "maxmemory", "1")


def test_client_list_of_the_running_client(both):
    lines = [c.execute_command("CLIENT", "LIST").decode() for c in both.clients()]
    infos = [c.execute_command("CLIENT", "INFO").decode() for c in both.clients()]
    for text in lines + infos:
        assert (field(text, "qbuf"), field(text, "argv-mem"), field(text, "multi-mem")) == \
            ("26", "10", "0"), text
    # multi-mem is the queued commands' arguments (watched keys count in tot-mem only).
    for c in both.clients():
        c.execute_command("WATCH", "somekey")
        assert field(c.execute_command("CLIENT", "INFO").decode(), "multi-mem") == "0"
        c.execute_command("UNWATCH")


def test_config_get_replicaof_and_slaveof(both):
    # Redis answers in its dictionary's order: compared as maps.
    r = both.pairs("CONFIG", "GET", "*of")
    assert sorted(r) == [b"replicaof", b"slaveof"]
    both("CONFIG", "GET", "replicaof")
    both("CONFIG", "GET", "SLAVEOF")


def evicted_for(both, servers, send) -> None:
    """`send(socket)` makes a named client pass a 3 MB limit: it is evicted on both."""
    both.config_set("maxmemory-clients", "3000000")
    for server, c in zip(servers, both.clients()):
        before = info_of(c, "stats")["evicted_clients"]
        s = raw_client(server, "big")
        try:
            send(s)
        except OSError:
            pass
        assert wait_until(lambda: named(c, "big") is None), server
        assert info_of(c, "stats")["evicted_clients"] == before + 1
        s.close()


def test_evicted_for_its_query_buffer(servers, both):
    n = 3_000_000
    evicted_for(both, servers, lambda s: s.sendall(b"*1\r\n$%d\r\n" % n + b"v" * n))


def test_evicted_for_its_arguments(servers, both):
    n = 3_000_000
    cmd = b"*5\r\n$4\r\nMSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nk2\r\n$%d\r\n%s\r\n" % (n, b"v" * n)
    evicted_for(both, servers, lambda s: s.sendall(cmd))
    both("EXISTS", "k2")


def test_evicted_for_its_output(servers, both):
    both.ok("SETRANGE", "k", 1_000_000, "v")

    def pile_up(s: socket.socket) -> None:
        for _ in range(200):
            s.sendall(b"GET k\r\n")
            time.sleep(0.005)
    evicted_for(both, servers, pile_up)


def test_evicted_for_watched_keys(servers, both):
    both.config_set("maxmemory-clients", "200000")
    for server in servers:
        c = make_client(server)
        try:
            for j in range(200_000):
                c.execute_command("WATCH", j)
            raise AssertionError("never evicted")
        except redis.ConnectionError:
            pass
        c.close()


def test_no_evict_client_is_kept(servers, both):
    both.config_set("maxmemory-clients", "3000000")
    n = 3_000_001
    for server, c in zip(servers, both.clients()):
        c.execute_command("CLIENT", "NO-EVICT", "ON")
        s = raw_client(server, "kept")
        s.sendall(b"CLIENT NO-EVICT ON\r\n")
        assert s.recv(100) == b"+OK\r\n"
        s.sendall(b"*1\r\n$%d\r\n" % n + b"v" * n)
        assert wait_until(lambda: field(named(c, "kept") or " qbuf=0", "qbuf") == str(n))
        line = named(c, "kept")
        assert "e" in field(line, "flags") and int(field(line, "tot-mem")) > 3_000_000
        s.close()
        c.execute_command("CLIENT", "NO-EVICT", "OFF")


def test_lowered_limit_evicts_largest_first_down_to_it(servers, both):
    for server, c in zip(servers, both.clients()):
        c.execute_command("CONFIG", "SET", "maxmemory-clients", "0")
        c.execute_command("CLIENT", "NO-EVICT", "ON")
        socks = []
        for name, size in (("small", 100_000), ("small", 100_000), ("large", 1_500_000)):
            s = raw_client(server, name)
            s.sendall(b"*2\r\n$%d\r\n" % size + b"v" * size)
            socks.append(s)
        assert wait_until(lambda: int(field(named(c, "large") or " qbuf=0", "qbuf")) == 1_500_000)
        total = sum(int(field(line, "tot-mem")) for line in
                    c.execute_command("CLIENT", "LIST").decode().splitlines())
        c.execute_command("CONFIG", "SET", "maxmemory-clients", total - 1_000_000)
        left = c.execute_command("CLIENT", "LIST").decode()
        assert (left.count("name=small "), left.count("name=large ")) == (2, 0), server
        c.execute_command("CONFIG", "SET", "maxmemory-clients", "0")
        c.execute_command("CLIENT", "NO-EVICT", "OFF")
        for s in socks:
            s.close()


def evicts_clients_before_keys(server, c, grow, prepare=None) -> tuple[int, int, int]:
    """Redis's unit/maxmemory case: 50 keys of 100 kB under maxmemory 11mb, clients' memory
    limited to 3mb, 20 clients that never read (given to `prepare` first); `grow()` adds
    their output until something is evicted. Returns evicted_clients, evicted_keys and the
    keys left."""
    c.execute_command("CONFIG", "SET", "maxmemory", "11mb")
    c.execute_command("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    c.execute_command("CONFIG", "SET", "maxmemory-clients", "3mb")
    c.execute_command("CLIENT", "NO-EVICT", "ON")
    c.execute_command("CONFIG", "RESETSTAT")
    for j in range(50):
        c.execute_command("SETRANGE", j, 100_000, "x")
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
    for s in socks:
        s.setblocking(False)
    if prepare:
        prepare(socks)

    def evicted() -> tuple[int, int, int]:
        stats = info_of(c, "stats")
        return stats["evicted_clients"], stats["evicted_keys"], c.dbsize()

    deadline = time.monotonic() + 20
    try:
        while evicted()[:2] == (0, 0) and time.monotonic() < deadline:
            grow()
        return evicted()
    finally:
        for s in socks:
            s.close()
        c.execute_command("CLIENT", "NO-EVICT", "OFF")
        c.execute_command("FLUSHALL")
        for name, value in (("maxmemory", 0), ("maxmemory-policy", "noeviction"),
                            ("maxmemory-clients", 0)):
            c.execute_command("CONFIG", "SET", name, value)


def send_all(socks, data: bytes) -> None:
    """Sends `data` on each socket that takes it (an evicted client's fails)."""
    for s in socks:
        try:
            s.send(data)
        except OSError:
            pass


def test_clients_go_before_keys_for_mget_output(servers, both):
    """Replies piling up for clients that do not read are client memory: past
    maxmemory-clients those clients are evicted before maxmemory takes any key (Goblin took
    keys first: the room its output buffers kept once their bytes were sent or moved stayed
    in used memory, and in no client's)."""
    for server, c in zip(servers, both.clients()):
        socks = []
        clients, keys, left = evicts_clients_before_keys(
            server, c, lambda: send_all(socks, b"MGET 1\r\n"), socks.extend)
        assert clients > 0 and keys == 0 and left == 50, (server, clients, keys, left)


def test_clients_go_before_keys_for_pubsub_output(servers, both):
    big = "x" * 100_000

    def subscribe(socks) -> None:
        send_all(socks, b"SUBSCRIBE bla\r\n")
        assert wait_until(lambda: c.execute_command("PUBSUB", "NUMSUB", "bla")[1] == 20)

    for server, c in zip(servers, both.clients()):
        clients, keys, left = evicts_clients_before_keys(
            server, c, lambda: c.execute_command("PUBLISH", "bla", big), subscribe)
        assert clients > 0 and keys == 0 and left == 50, (server, clients, keys, left)
