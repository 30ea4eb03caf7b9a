"""Behaviours Redis 7.2.4's own suite checks (issue 33), each compared with a real Redis
(7.2.4 where 7.0 differs):

- A message a client publishes to a channel it listens to follows the command's whole
  reply (EXEC's, a script's), as 7.2's pending push messages (7.0 pushed it at once).
"""

from __future__ import annotations

import socket

from test_hyperloglog import pair72  # noqa: F401 (the fixture: Redis 7.2.4 and Goblin)


def exchange(port: int, request: bytes, until: bytes) -> bytes:
    """Sends `request` on a new connection and reads until the reply ends with `until`."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    try:
        s.sendall(b"HELLO 3\r\n")
        got = b""
        while not got.endswith(b"$7\r\nmodules\r\n*0\r\n"):
            got += s.recv(4096)
        s.sendall(request)
        got = b""
        while not got.endswith(until):
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
        return got
    finally:
        s.close()


def test_publish_to_self_follows_the_reply(pair72):
    """unit/pubsub's "publish to self inside multi" and "inside script" (RESP3)."""
    script = b"redis.call('ping','abc') redis.call('publish','foo','bar') " \
             b"redis.call('publish','foo','vaz') redis.call('ping','def') return 'bla'"
    request = (
        b"SUBSCRIBE foo\r\n"
        b"MULTI\r\nPING abc\r\nPUBLISH foo bar\r\nPUBLISH foo vaz\r\nPING def\r\nEXEC\r\n"
        + b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(script), script)
        + b"PUBLISH foo last\r\n"
    )
    until = b"$4\r\nlast\r\n"
    replies = [exchange(server.port, request, until) for server in (pair72.redis, pair72.goblin)]
    assert replies[0] == replies[1]
    assert replies[0].endswith(b":1\r\n>3\r\n$7\r\nmessage\r\n$3\r\nfoo\r\n$4\r\nlast\r\n")
