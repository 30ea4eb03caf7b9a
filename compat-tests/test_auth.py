"""AUTH, NOAUTH and HELLO AUTH on a pair of servers started with --requirepass."""

import pytest

import harness
from resp import encode

PASSWORD = "s3cret-pass"


@pytest.fixture(scope="module")
def auth_servers(tmp_path_factory):
    pair = harness.start_pair(tmp_path_factory, "--requirepass", PASSWORD)
    yield pair
    pair.stop()


@pytest.fixture
def araw(auth_servers):
    """Raw, unauthenticated sockets to the password-protected pair."""
    harness._clean(auth_servers)
    p = harness.RawPair(auth_servers)
    yield p
    p.close()
    harness._after(auth_servers)


@pytest.fixture
def aboth_auth(auth_servers):
    b = harness.Both(auth_servers)
    yield b
    b.close()


def test_noauth_exact_bytes(araw):
    assert araw.same(encode("PING")) == b"-NOAUTH Authentication required.\r\n"
    araw.same(b"PING\r\n")  # inline
    araw.same(encode("DBSIZE"))
    araw.same(encode("ZADD", "k", "1", "a"))
    araw.same(encode("SELECT", "1"))
    araw.same(encode("CLIENT", "ID"))
    araw.same(encode("MULTI"))
    # The connection stays open after NOAUTH.
    araw.same(encode("ECHO", "x"))


def test_exec_before_auth(araw):
    """A rejected EXEC is answered with EXECABORT and the reason."""
    araw.same(encode("EXEC"))


def test_unknown_command_and_arity_before_auth(araw):
    araw.same(encode("NOSUCHCOMMAND", "a"))
    araw.same(encode("ECHO"))
    araw.same(encode("DEL"))


def test_auth_wrong_password(araw):
    assert araw.same(encode("AUTH", "nope")) == (
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
    )
    araw.same(encode("AUTH", "default", "nope"))
    araw.same(encode("AUTH", "nobody", PASSWORD))
    araw.same(encode("AUTH"))
    araw.same(encode("AUTH", "a", "b", "c"))
    araw.same(encode("PING"))


def test_auth_right_password(araw):
    assert araw.same(encode("AUTH", PASSWORD)) == b"+OK\r\n"
    araw.same(encode("PING"))
    araw.same(encode("DBSIZE"))
    # A wrong AUTH after a right one: the connection stays as Redis leaves it.
    araw.same(encode("AUTH", "wrong"))
    araw.same(encode("PING"))


def test_auth_with_username(araw):
    araw.same(encode("AUTH", "default", PASSWORD))
    araw.same(encode("PING"))


HELLO_NOAUTH_70 = (
    b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO"
    b" AUTH <user> <pass> option can be used to authenticate the client and select the RESP"
    b" protocol version at the same time\r\n"
)
# Redis 7.2 names the protocol argument in this message.
HELLO_NOAUTH_72 = HELLO_NOAUTH_70.replace(b"HELLO AUTH", b"HELLO <proto> AUTH")


def test_hello_requires_auth(araw):
    for req in (encode("HELLO", "3"), encode("HELLO")):
        r, g = araw(req)
        assert r == HELLO_NOAUTH_70
        assert g == HELLO_NOAUTH_72
    araw.same(encode("HELLO", "2", "AUTH", "default", "wrong"))
    araw.same(encode("HELLO", "3", "AUTH", "nobody", PASSWORD))
    araw.same(encode("PING"))


def test_hello_auth(araw):
    r, g = araw(encode("HELLO", "3", "AUTH", "default", PASSWORD, "SETNAME", "authed"))
    assert r.startswith(b"%7\r\n") and g.startswith(b"%7\r\n")
    araw.same(encode("PING"))
    araw.same(encode("CLIENT", "GETNAME"))


def test_reset_deauthenticates(araw):
    araw.same(encode("AUTH", PASSWORD))
    araw.same(encode("RESET"))
    araw.same(encode("PING"))


def test_quit_before_auth(araw):
    araw.same(encode("QUIT"))
    assert araw.closed() == (True, True)


def test_unauthenticated_multibulk_limit(araw):
    """Before AUTH a request may carry at most 10 arguments (Redis's DoS guard)."""
    r = araw.same(b"*11\r\n")
    assert r == b"-ERR Protocol error: unauthenticated multibulk length\r\n"
    assert araw.closed() == (True, True)


def test_unauthenticated_bulk_limit(araw):
    r = araw.same(b"*1\r\n$16385\r\n")
    assert r == b"-ERR Protocol error: unauthenticated bulk length\r\n"
    assert araw.closed() == (True, True)


def test_unauthenticated_limits_lifted_after_auth(araw):
    araw.same(encode("AUTH", PASSWORD))
    araw.same(encode("ECHO", "x" * 20000))
    araw.same(encode("DEL", *[f"k{i}" for i in range(20)]))


def test_redis_py_with_password(aboth_auth):
    aboth_auth("PING")
    aboth_auth.ok("ZADD", "k", 1, "a")
    aboth_auth("DBSIZE")
    aboth_auth("CONFIG", "GET", "requirepass")


def test_redis_py_without_password(auth_servers):
    """redis-py without a password fails with AuthenticationError on both. (With 7.2, as with
    Goblin, already at connect: its CLIENT SETINFO gets NOAUTH, where 7.0 has no SETINFO.)"""

    def outcome(server, *cmd):
        try:
            client = harness.make_client(server)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return e
        try:
            return client.execute_command(*cmd)
        except Exception as e:  # noqa: BLE001
            return e
        finally:
            client.close()

    for cmd in (("PING",), ("DBSIZE",)):
        harness.assert_same(outcome(auth_servers.redis, *cmd), outcome(auth_servers.goblin, *cmd), cmd)
