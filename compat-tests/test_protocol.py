"""The wire protocol: error wording, malformed requests (exact "-ERR Protocol error: ..." bytes
and the connection closed), inline commands, RESP2 / RESP3 reply types, and pipelining."""

import socket
import time

import pytest

from resp import RawConnection, encode, split_replies

# --- Error wording ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_",
    [
        encode("NOSUCH"),
        encode("NOSUCH", "a", "b"),
        encode("nosuch", "with space", "x"),
        encode("NOSUCH", "line\r\nbreak"),
        encode("NOSUCH", "a" * 200),
        encode("N" * 300, "b"),
        encode("NOSUCH", *["arg%d" % i for i in range(40)]),
        encode("NOSUCH", "x" * 120, "y" * 20, "z"),
        encode(""),
        encode("", "a"),
        encode("NO\x00SUCH", "\x00"),
        encode("pInG", "mixed"),
        encode("ECHO"),
        encode("echo", "a", "b"),
        encode("SELECT"),
        encode("ExPiRe", "k"),
        encode("CONFIG"),
        encode("CONFIG", "NOSUB"),
        encode("config", "nosub", "x"),
        encode("CONFIG", "GET"),
        encode("CLIENT", "SETNAME"),
        encode("CLIENT", "no-such-sub"),
        encode("COMMAND", "NOSUB"),
        encode("OBJECT", "NOSUB", "k"),
        encode("OBJECT"),
        encode("SLOWLOG", "NOSUB"),
        encode("MEMORY", "NOSUB"),
        encode("DEBUG", "NOSUB"),
    ],
    ids=lambda b: b[:40].decode("latin-1").replace("\r\n", " "),
)
def test_error_wording(raw, request_):
    raw.same(request_)


def test_unknown_command_inline(raw):
    raw.same(b"NOSUCH a b\r\n")
    raw.same(b"$3\r\n")  # a bulk header at top level is an inline command named "$3"
    raw.same(b"+PING\r\n")


# --- Malformed requests: the reply bytes, then the connection is closed -------------------------

PROTOCOL_ERRORS = [
    b"*abc\r\n",
    b"*1\r\nfoo\r\n",
    b"*2\r\n$4\r\nECHO\r\n:1\r\n",
    b"*1\r\n$abc\r\n",
    b"*1\r\n$-1\r\n",
    b"*1\r\n$-5\r\n",
    b"*1\r\n$1.5\r\n",
    b"*1\r\n$\r\n",
    b"*\r\n",
    b"*3000000000\r\n",
    b"*1\r\n$536870913\r\n",  # proto-max-bulk-len + 1
    b"*1\r\n$9223372036854775808\r\n",
    b'ECHO "unbalanced\r\n',
    b"ECHO 'unbalanced\r\n",
    b'ECHO "a"b\r\n',  # a closing quote must be followed by a space
    b"ECHO 'a'b\r\n",
]


@pytest.mark.parametrize("bad", PROTOCOL_ERRORS, ids=lambda b: repr(b)[2:30])
def test_protocol_error_closes(raw, bad):
    r = raw.same(bad)
    assert r.startswith(b"-ERR Protocol error: "), r
    assert raw.closed() == (True, True)


@pytest.mark.parametrize("bad", PROTOCOL_ERRORS[:4] + PROTOCOL_ERRORS[12:13], ids=repr)
def test_protocol_error_after_good_requests(raw, bad):
    """Requests before the malformed one are answered, in order, then the error."""
    raw.same(encode("PING") + encode("ECHO", "ok") + bad, 3)
    assert raw.closed() == (True, True)


def test_protocol_error_does_not_disturb_others(raw):
    bystander = raw.new()
    bystander.same(encode("PING"))
    raw.same(b"*1\r\n$x\r\n")
    assert raw.closed() == (True, True)
    bystander.same(encode("ECHO", "still here"))


def test_empty_and_negative_multibulk_ignored(raw):
    raw.same(b"*0\r\n*-1\r\n*-10\r\n" + encode("PING"))


def test_bulk_terminator_not_checked(raw):
    # Redis skips the two bytes after a bulk without checking they are CRLF.
    raw.same(b"*1\r\n$4\r\nPINGxx" + encode("ECHO", "after"), 2)


def test_byte_by_byte(raw):
    data = encode("ECHO", "split into bytes") + b"PING\r\n" + encode("PING")
    for i in range(len(data)):
        raw.send(data[i:i + 1])
        if i % 16 == 0:
            time.sleep(0.001)
    r, g = raw.read(3)
    assert r == g == b"$16\r\nsplit into bytes\r\n+PONG\r\n+PONG\r\n"


def test_request_stopped_between_arguments(raw):
    # The read ends right where the next argument's header starts (a pipelining client's
    # write boundary): Goblin's query-buffer accounting once read past the buffer there.
    request = encode("ECHO", "rest")
    for head in (len(b"*2\r\n"), len(b"*2\r\n$4\r\nECHO\r\n")):
        raw.send(request[:head])
        time.sleep(0.05)
        assert raw.new().same(encode("PING")) == b"+PONG\r\n"
        assert raw.same(request[head:]) == b"$4\r\nrest\r\n"


def test_big_argument_in_pieces(raw):
    body = bytes(range(256)) * 4096  # 1 MiB
    req = encode("ECHO", body)
    for i in range(0, len(req), 100000):
        raw.send(req[i:i + 100000])
        time.sleep(0.002)
    r, g = raw.read(1)
    assert r == g and len(g) > len(body)


# --- Inline commands --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        b"PING\r\n",
        b"PING\n",
        b"ping hello\r\n",
        b"ECHO   spaced    out  \r\n",
        b'ECHO "hello world"\r\n',
        b"ECHO 'single quoted'\r\n",
        b'ECHO "esc\\x41\\n\\t\\"q\\""\r\n',
        b"ECHO 'it\\'s'\r\n",
        b'ECHO ""\r\n',
        b"ECHO ''\r\n",
        b"ECHO a\tb\r\n",
        b'ECHO "\\xzz"\r\n',
        b"   \r\n" + b"PING\r\n",
        b"\r\n\r\n\n" + b"PING\r\n",
        b"DBSIZE\r\n",
        b"nosuch a b\r\n",
    ],
    ids=repr,
)
def test_inline(raw, line):
    raw.same(line)


def test_inline_pipeline(raw):
    raw.same(b"PING\r\nECHO a\r\nPING b\r\n" + encode("PING") + b"DBSIZE\n", 5)


def test_inline_creates_keys(raw):
    raw.same(b"ZADD inl 1 one 2 two\r\n")
    raw.same(b'ZRANGE inl 0 -1 WITHSCORES\r\n')


# --- RESP2 and RESP3 reply types --------------------------------------------------------------


@pytest.mark.parametrize("proto", ["2", "3"])
def test_reply_types(raw, proto):
    raw(encode("HELLO", proto))
    raw.same(encode("ZADD", "k", "1.5", "a", "2", "b"))
    for req in (
        encode("PING"),
        encode("ECHO", "x"),
        encode("CLIENT", "GETNAME"),
        encode("EXISTS", "k"),
        encode("KEYS", "*"),
        encode("KEYS", "nomatch"),
        encode("CONFIG", "GET", "maxclients"),
        encode("CONFIG", "GET", "nosuchparam"),
        encode("TYPE", "k"),
        encode("TTL", "k"),
        encode("RANDOMKEY"),
        encode("SCAN", "0"),
        encode("MULTI"),
        encode("EXISTS", "k"),
        encode("EXEC"),
        encode("OBJECT", "ENCODING", "k"),
        encode("OBJECT", "ENCODING", "nokey"),
        encode("OBJECT", "FREQ", "k"),
        encode("ZSCORE", "k", "a"),
        encode("ZRANGE", "k", "0", "-1", "WITHSCORES"),
        encode("NOSUCH"),
    ):
        raw.same(req)


def test_resp3_via_redis_py(both3):
    both3.ok("ZADD", "k", 1, "a")
    both3("CONFIG", "GET", "maxclients")
    both3("CLIENT", "GETNAME")
    both3("EXISTS", "k")
    both3("TYPE", "k")
    both3("SCAN", 0)
    both3("KEYS", "*")


async def test_resp3_async(aboth3):
    await aboth3("ZADD", "k", 1, "a")
    await aboth3("CONFIG", "GET", "timeout")
    await aboth3("TTL", "k")
    await aboth3("NOSUCH")


# --- Pipelining -------------------------------------------------------------------------------


def test_raw_pipeline_10000_pings(raw):
    data = encode("PING") * 10000
    r, g = raw(data, 10000)
    assert r == g == b"+PONG\r\n" * 10000


def test_raw_pipeline_mixed(raw):
    reqs = []
    for i in range(3000):
        reqs.append(encode("ZADD", f"k{i % 100}", str(i), f"m{i}"))
        reqs.append(encode("EXISTS", f"k{i % 7}"))
        reqs.append(b"PING\r\n")
    raw.same(b"".join(reqs), len(reqs))
    raw.same(encode("DBSIZE"))


def test_pipeline_large_replies(raw):
    """Replies far bigger than the socket buffers: written as the socket drains."""
    payload = b"v" * 65536
    n = 400  # ~26 MB of replies
    raw.send(encode("ECHO", payload) * n)
    r, g = raw.read(n)
    assert r == g and len(g) == n * (len(payload) + 10)


def test_slow_reader_does_not_block_others(raw):
    """A client that does not read its big replies must not stall the server for others."""
    slow = RawConnection(raw.pair.goblin.port)
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.send(encode("ECHO", b"x" * 65536) * 100)
    time.sleep(0.2)
    t0 = time.monotonic()
    assert raw.goblin.request(encode("PING")) == b"+PONG\r\n"
    assert time.monotonic() - t0 < 1.0
    slow.close()


def test_redis_py_pipeline_thousands(api):
    results = []
    for c in api.clients():
        p = c.pipeline(transaction=False)
        for i in range(5000):
            p.zadd(f"p{i % 50}", {f"m{i}": i})
            p.exists(f"p{i % 60}")
            p.ttl(f"p{i % 50}")
        p.execute_command("NOSUCH")
        results.append(p.execute(raise_on_error=False))
    r, g = results
    assert r[:-1] == g[:-1]
    assert str(r[-1]) == str(g[-1])


async def test_async_pipeline_thousands(clean):
    import harness

    out = []
    for s in clean:
        c = harness.make_async_client(s)
        p = c.pipeline(transaction=False)
        for i in range(3000):
            p.zadd(f"a{i % 10}", {f"m{i}": i})
            p.zcard(f"a{i % 10}")
        out.append(await p.execute())
        await c.aclose()
    assert out[0] == out[1]


async def test_async_concurrent_clients(clean):
    import asyncio

    import harness

    async def worker(server, n):
        c = harness.make_async_client(server)
        res = []
        for i in range(200):
            res.append(await c.zadd(f"w{n}", {f"m{i}": i}))
        res.append(await c.zcard(f"w{n}"))
        await c.aclose()
        return res

    outs = []
    for s in clean:
        outs.append(await asyncio.gather(*(worker(s, n) for n in range(20))))
    assert outs[0] == outs[1]


def test_replies_split_correctly(raw):
    """split_replies sanity: the reader never merges or drops replies."""
    data, _ = raw(encode("PING") * 3 + encode("ECHO", "a\r\nb"), 4)
    replies, rest = split_replies(data)
    assert len(replies) == 4 and rest == b""
