"""ACL against a real Redis: users, the permission matrix (allowed replies and NOPERM errors),
GETUSER / LIST shapes, ACL LOG entries, DRYRUN, CAT, GENPASS, the ACL file and `user`
directives, AUTH / HELLO AUTH, CLIENT LIST user= and CLIENT KILL USER, scripts under the
caller's ACL.

Goblin follows Redis 7.2, CI's Redis is 7.0. Where 7.2 changed a text, Redis's 7.0 reply is
translated to 7.2's wording (`to_72` below: 7.2 names the user in command refusals and says
"No permissions to access a key / channel"; see 7.2's getAclErrorMessage) and then compared
byte for byte. Where 7.2 changed a shape (GETUSER's `commands` keep the rules in the order
given, ACL LOG's entry-id / timestamp fields), the cases are chosen so 7.0 and 7.2 agree, and
the 7.2-only parts are pinned to 7.2's documented replies on Goblin alone.
"""

from __future__ import annotations

import re
import subprocess
import time

import pytest
import redis

import harness
from resp import RawConnection, encode
from test_server_cmds import ADDED_IN_74

# lib_name=None (no CLIENT SETINFO at connect) is deprecated in redis-py, still honoured.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def acl_servers(tmp_path_factory):
    pair = harness.start_pair(tmp_path_factory)
    yield pair
    pair.stop()


def _reset_acl(pair):
    for server in pair:
        c = pair.admin(server)
        try:
            for name in c.execute_command("ACL", "USERS"):
                if name != b"default":
                    c.execute_command("ACL", "DELUSER", name)
            c.execute_command(
                "ACL", "SETUSER", "default", "on", "nopass", "allkeys", "allchannels",
                "+@all", "clearselectors",
            )
            c.execute_command("ACL", "LOG", "RESET")
            c.execute_command("FLUSHALL")
        finally:
            c.close()


@pytest.fixture
def both(acl_servers):
    harness._clean(acl_servers)
    _reset_acl(acl_servers)
    b = harness.Both(acl_servers)
    yield b
    b.close()
    b.restore_config()
    _reset_acl(acl_servers)
    harness._after(acl_servers)


class AsUser:
    """Connections to both servers logged in as `user`."""

    def __init__(self, pair, user: str, password: str = "pw", protocol: int = 2):
        self.user = user
        # No CLIENT SETINFO at connect: Redis 7.0 has no such subcommand, so only 7.2 would
        # refuse (and log) it for a user without it.
        kw = dict(username=user, lib_name=None, lib_version=None)
        self.redis = harness.make_client(pair.redis, protocol, password, **kw)
        self.goblin = harness.make_client(pair.goblin, protocol, password, **kw)
        for c in (self.redis, self.goblin):
            c.response_callbacks = {}

    def run(self, *cmd):
        out = []
        for c in (self.redis, self.goblin):
            try:
                out.append(c.execute_command(*cmd))
            except redis.RedisError as e:
                out.append(e)
        return tuple(out)

    def __call__(self, *cmd):
        r, g = self.run(*cmd)
        assert_same_72(r, g, self.user, f"{self.user}: {cmd!r}")
        return g

    def close(self):
        for c in (self.redis, self.goblin):
            c.close()


def to_72(message: str, user: str) -> str:
    """Redis 7.0's ACL texts in Redis 7.2's words."""
    message = re.sub(
        r"^this user has no permissions to run the '(.*)' command$",
        rf"User {user} has no permissions to run the '\1' command",
        message,
    )
    message = message.replace(
        "this user has no permissions to access one of the keys used as arguments",
        "No permissions to access a key",
    )
    message = message.replace(
        "this user has no permissions to access one of the channels used as arguments",
        "No permissions to access a channel",
    )
    return re.sub(r"^This user has", f"User {user} has", message)


def assert_same_72(r, g, user, what=""):
    if isinstance(r, BaseException):
        assert type(g) is type(r), f"{what}\n  redis:  {r!r}\n  goblin: {g!r}"
        assert str(g) == to_72(str(r), user), f"{what}\n  redis:  {r!r}\n  goblin: {g!r}"
    elif isinstance(r, bytes) and r.startswith(b"This user has"):
        assert g == to_72(r.decode(), user).encode(), f"{what}\n  redis:  {r!r}\n  goblin: {g!r}"
    else:
        harness.assert_same(r, g, what)


def setuser(both, name, *rules):
    both.ok("ACL", "SETUSER", name, "on", ">pw", *rules)


# --- Permission matrices ----------------------------------------------------------------------

USERS = {
    "reader": ["+@read", "~r*"],
    "rw": ["+@all", "-@dangerous", "%R~r*", "%W~w*", "~rw*"],
    "zs": ["+@sortedset", "+@string", "allkeys", "-zadd"],
    "sel": ["+get", "+set", "~k*", "(+@hash ~h*)", "(+get ~r*)"],
    "sub": ["+config|get", "+select|0", "+client|getname", "-@all", "+config|get"],
    "pub": ["+@pubsub", "&news.*", "resetkeys", "+get"],
    "none": ["nocommands", "+ping"],
    "all": ["allcommands", "allkeys", "allchannels", "-keys", "-flushall", "-debug"],
}

MATRIX = [
    ("GET", "r1"),
    ("GET", "w1"),
    ("GET", "k1"),
    ("GET", "h1"),
    ("SET", "w1", "v"),
    ("SET", "r1", "v"),
    ("SET", "rw1", "v", "GET"),
    ("SET", "k1", "v"),
    ("MGET", "r1", "rw1", "x"),
    ("MSET", "w1", "a", "r1", "b"),
    ("DEL", "w1"),
    ("EXISTS", "w1"),
    ("STRLEN", "r1"),
    ("APPEND", "w2", "x"),
    ("INCR", "wcount"),
    ("ZADD", "z", "1", "a"),
    ("ZSCORE", "z", "a"),
    ("ZRANGE", "r1", "0", "-1"),
    ("ZUNIONSTORE", "w3", "2", "r1", "rw1"),
    ("HSET", "h1", "f", "v"),
    ("HGET", "h1", "f"),
    ("HGET", "k1", "f"),
    ("LPUSH", "wl", "a"),
    ("SADD", "rs", "a"),
    ("COPY", "r1", "w9"),
    ("RENAME", "rw1", "w5"),
    ("SORT", "rl", "STORE", "w6"),
    ("CONFIG", "GET", "hz"),
    ("CONFIG", "SET", "hz", "10"),
    ("SELECT", "0"),
    ("SELECT", "1"),
    ("CLIENT", "GETNAME"),
    ("PUBLISH", "news.a", "m"),
    ("PUBLISH", "other", "m"),
    ("SPUBLISH", "news.b", "m"),
    ("PUBSUB", "NUMSUB", "x"),
    ("KEYS", "nomatch*"),
    ("DBSIZE",),
    ("PING",),
    ("ECHO", "e"),
    ("ACL", "WHOAMI"),
    ("ACL", "USERS"),
    ("EVAL", "return 1", "0"),
    ("EVAL", "return 1", "1", "r1"),
    ("TYPE", "w1"),
    ("OBJECT", "ENCODING", "r1"),
    ("EXPIRE", "w1", "100"),
    ("TTL", "r1"),
]


@pytest.mark.parametrize("user", sorted(USERS))
def test_permission_matrix(both, user):
    setuser(both, user, *USERS[user])
    for key in ("r1", "rw1", "w1", "k1"):
        both.ok("SET", key, "1")
    both.ok("RPUSH", "rl", "3", "1", "2")
    u = AsUser(both.pair, user)
    try:
        for cmd in MATRIX:
            u(*cmd)
        # Each refusal was logged the same way.
        log_r, log_g = both.run("ACL", "LOG", "100")
        assert [_log_core(e) for e in log_r] == [_log_core(e) for e in log_g]
    finally:
        u.close()


def test_matrix_over_resp3(both):
    setuser(both, "rw", *USERS["rw"])
    u = AsUser(both.pair, "rw", protocol=3)
    try:
        for cmd in MATRIX[:14]:
            u(*cmd)
    finally:
        u.close()


def test_noperm_exact_bytes(both):
    setuser(both, "u", "+get", "~a*", "&c*", "+publish")
    conns = []
    for server in both.pair:
        c = RawConnection(server.port)
        c.request(encode("AUTH", "u", "pw"))
        conns.append(c)
    try:
        r, g = (c.request(encode("SET", "a", "1")) for c in conns)
        assert r == b"-NOPERM this user has no permissions to run the 'set' command\r\n"
        assert g == b"-NOPERM User u has no permissions to run the 'set' command\r\n"
        r, g = (c.request(encode("GET", "b")) for c in conns)
        assert g == b"-NOPERM No permissions to access a key\r\n"
        r, g = (c.request(encode("PUBLISH", "d", "m")) for c in conns)
        assert g == b"-NOPERM No permissions to access a channel\r\n"
        r, g = (c.request(encode("CONFIG", "GET", "x")) for c in conns)
        assert g == b"-NOPERM User u has no permissions to run the 'config|get' command\r\n"
        # Refused before arity and after unknown-command checks, as Redis.
        r, g = (c.request(encode("GET")) for c in conns)
        assert r == g
        r, g = (c.request(encode("NOSUCH")) for c in conns)
        assert r == g
    finally:
        for c in conns:
            c.close()


def test_multi_queue_and_exec_recheck(both):
    setuser(both, "u", "+@all", "~a*", "-zadd")
    u = AsUser(both.pair, "u")
    try:
        u("MULTI")
        u("SET", "a1", "v")
        u("ZADD", "a2", "1", "m")
        u("EXEC")
        u("MULTI")
        u("SET", "a1", "v")
        u("GET", "b")
        u("EXEC")
        # Rules changed between queuing and EXEC: the command fails inside EXEC.
        u("MULTI")
        u("SET", "a1", "v")
        u("GET", "a1")
        both.ok("ACL", "SETUSER", "u", "-get")
        u("EXEC")
        log_r, log_g = both.run("ACL", "LOG")
        assert [_log_core(e) for e in log_r] == [_log_core(e) for e in log_g]
    finally:
        u.close()


# --- SETUSER errors, GETUSER / LIST shapes -------------------------------------------------------

BAD_RULES = [
    ["+nosuchcommand"],
    ["+@nosuchcategory"],
    ["bogus"],
    ["allkeys", "~a*"],
    ["allchannels", "&a"],
    ["<notapassword"],
    ["#abc"],
    ["!abc"],
    ["+config|get|x"],
    ["+get|"],
    ["%X~a"],
    ["%~a"],
    ["~a b"],
    ["(+get", "~a"],
    ["(+nosuch)"],
    ["(bogus)"],
    ["on", "+get", "-nosuch"],
    ["+"],
    ["-"],
    ["+@"],
]


@pytest.mark.parametrize("rules", BAD_RULES, ids=lambda r: " ".join(r))
def test_setuser_errors(both, rules):
    both("ACL", "SETUSER", "bad", *rules)
    both("ACL", "USERS")


def test_setuser_name_and_deluser_errors(both):
    both("ACL", "SETUSER", "a b")
    both("ACL", "SETUSER", "a\x00b")
    both("ACL", "DELUSER", "default")
    both("ACL", "DELUSER", "nosuch", "default")
    setuser(both, "x")
    both("ACL", "DELUSER", "x", "nosuch", "x")
    both("ACL", "GETUSER", "x")


# Rule sets on which 7.0's and 7.2's GETUSER / LIST agree.
SHAPES = [
    [],
    ["on", "nopass", "~*", "&*", "+@all"],
    ["on", ">p1", ">p2", "<p1", "#" + "a" * 64, "~a*", "%R~b*", "%W~c*", "%RW~d*", "&ch1", "&ch2"],
    ["+@read", "~*"],
    ["+get", "~k", "(+set ~s*)", "(~x* &x*)"],
    ["allcommands", "-get"],
    ["off", "resetpass", "skip-sanitize-payload"],
    ["on", "sanitize-payload", "allchannels", "resetchannels", "&z"],
    ["+@all", "~a", "(+get ~sel*)", "reset"],
    ["+@all", "(+get ~sel*)", "clearselectors"],
]


@pytest.mark.parametrize("rules", SHAPES, ids=lambda r: " ".join(r) or "fresh")
@pytest.mark.parametrize("protocol", [2, 3])
def test_getuser_and_list_shapes(both, rules, protocol):
    both.ok("ACL", "SETUSER", "shape", *rules)
    b = both.new(protocol=protocol)
    try:
        b("ACL", "GETUSER", "shape")
        b("ACL", "GETUSER", "nosuch")
        b("ACL", "LIST")
        b("ACL", "USERS")
    finally:
        b.close()


def test_getuser_keeps_rule_order_as_7_2(both):
    """7.2 shows the command rules in the order given (7.0 rebuilt them from the bitmap)."""
    g = both.goblin
    g.execute_command("ACL", "SETUSER", "o", "+@all", "-get", "+config|get", "-config", "+get")
    assert g.execute_command("ACL", "GETUSER", "o")[5] == b"+@all -config +get"
    g.execute_command(
        "ACL", "SETUSER", "p", "+config|get", "+config|set", "-config|get", "+select|0"
    )
    assert g.execute_command("ACL", "GETUSER", "p")[5] == (
        b"-@all +config|set -config|get +select|0"
    )
    assert g.execute_command("ACL", "LIST")[1] == (
        b"user o off sanitize-payload resetchannels +@all -config +get"
    )


def test_requirepass_mirrors_into_the_default_user(both):
    both.config_set("requirepass", "s3cret")
    both("ACL", "LIST")
    both("ACL", "GETUSER", "default")
    both.config_set("requirepass", "")
    both("ACL", "LIST")


# --- CAT, GENPASS, WHOAMI, DRYRUN, HELP -------------------------------------------------------


def test_cat(both):
    both("ACL", "CAT")
    both("ACL", "CAT", "nosuch")
    # The name shows as %.128s prints it: to its first NUL, at most 128 bytes (not characters).
    both("ACL", "CAT", "\u00e9" * 100)
    both("ACL", "CAT", "ab\x00cd" * 40)
    both("ACL", "CAT", "a", "b")
    goblin_commands = {c.lower() for c in both.goblin.execute_command("COMMAND", "LIST")}
    for top in list(goblin_commands):
        info = both.goblin.execute_command("COMMAND", "INFO", top)[0]
        goblin_commands |= {sub[0] for sub in info[9]}
    for category in both.redis.execute_command("ACL", "CAT"):
        r = set(both.redis.execute_command("ACL", "CAT", category))
        g = set(both.goblin.execute_command("ACL", "CAT", category.upper()))
        # Goblin's own commands, the commands 7.4 added and the subcommands 7.2 added
        # (7.0 lacks them).
        g = {c for c in g if not c.startswith(b"goblin.") and c not in ADDED_IN_74}
        new_in_7_2 = {b"client|setinfo", b"client|no-touch", b"cluster|myshardid"}
        # Goblin has a subset of Redis's commands: the same ones in each category.
        assert g - new_in_7_2 == {c for c in r if c in goblin_commands} - new_in_7_2, category


def test_genpass_whoami_help(both):
    for bits in (None, 1, 4, 5, 255, 256, 4096):
        args = () if bits is None else (bits,)
        r, g = both.run("ACL", "GENPASS", *args)
        assert len(r) == len(g) and re.fullmatch(rb"[0-9a-f]*", g)
    both("ACL", "GENPASS", 0)
    both("ACL", "GENPASS", 4097)
    both("ACL", "GENPASS", "x")
    both("ACL", "GENPASS", 1, 2)
    assert both.goblin.execute_command("ACL", "GENPASS") != both.goblin.execute_command(
        "ACL", "GENPASS"
    )
    both("ACL", "WHOAMI")
    both("ACL", "WHOAMI", "x")
    r, g = both.run("ACL", "HELP")
    # 7.2 words the last line "Print this help." (7.0: "Prints").
    assert g == r[:-1] + [b"    Print this help."]
    both("ACL", "NOSUCH")
    both("ACL")
    both("ACL", "LIST", "x")


def test_dryrun(both):
    setuser(both, "d", "+get", "~a*", "+publish", "&c")
    u = AsUser(both.pair, "default", password=None)
    try:
        for cmd in [
            ("d", "get", "a1"),
            ("d", "get", "b1"),
            ("d", "set", "a1", "v"),
            ("d", "publish", "c", "m"),
            ("d", "publish", "e", "m"),
            ("d", "config", "get", "x"),
            ("d", "get"),
            ("d", "nosuch"),
            ("nosuch", "get", "a"),
            ("d", "auth", "x", "y"),
        ]:
            r, g = u.run("ACL", "DRYRUN", *cmd)
            assert_same_72(r, g, "d", repr(cmd))
    finally:
        u.close()


# --- ACL LOG --------------------------------------------------------------------------------------


def _fields(entry):
    if isinstance(entry, dict):
        return entry
    return dict(zip(entry[::2], entry[1::2]))


def _client_info(text: bytes) -> dict:
    return dict(part.split(b"=", 1) for part in text.split(b" "))


def _log_core(entry):
    """An entry's fields that do not depend on timing or on the connection."""
    f = _fields(entry)
    info = _client_info(f[b"client-info"])
    return (
        f[b"count"], f[b"reason"], f[b"context"], f[b"object"], f[b"username"],
        info[b"cmd"], info[b"user"], info[b"db"], info[b"multi"],
    )


def test_log_entries(both):
    setuser(both, "u", "+get", "+select", "~a*", "+publish", "&c", "+multi", "+exec", "+eval")
    u = AsUser(both.pair, "u")
    try:
        u("SET", "a", "1")
        u("SET", "a", "1")  # grouped with the previous one
        u("GET", "b")
        u("PUBLISH", "d", "m")
        u("SELECT", "1")
        u("GET", "b")
        u("MULTI")
        u("DEL", "a")
        u("EXEC")
    finally:
        u.close()
    both("AUTH", "u", "wrong")
    both("AUTH", "nosuch", "pw")
    both("HELLO", "2", "AUTH", "u", "wrong")
    for count in (None, 0, 1, 3, -1):
        args = () if count is None else (count,)
        r, g = both.run("ACL", "LOG", *args)
        assert len(r) == len(g)
        assert [_log_core(e) for e in r] == [_log_core(e) for e in g], count
    both("ACL", "LOG", "x")
    both("ACL", "LOG", "1", "2")
    b3 = both.new(protocol=3)
    try:
        r, g = b3.run("ACL", "LOG", "2")
        assert [_log_core(e) for e in r] == [_log_core(e) for e in g]
        assert all(isinstance(_fields(e)[b"age-seconds"], float) for e in g)
    finally:
        b3.close()
    both("ACL", "LOG", "RESET")
    both("ACL", "LOG")


def test_log_7_2_fields(both):
    """entry-id, timestamp-created and timestamp-last-updated (added in 7.2)."""
    g = both.goblin
    g.execute_command("ACL", "SETUSER", "u", "on", "nopass")
    c = harness.make_client(
        both.pair.goblin, username="u", password="x", lib_name=None, lib_version=None
    )
    before = int(time.time() * 1000)
    for key in ("a", "a", "b"):
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.execute_command("GET", key)
    c.close()
    after = int(time.time() * 1000)
    entries = [_fields(e) for e in g.execute_command("ACL", "LOG")]
    assert len(entries) == 1  # the command is refused, not the keys: one grouped entry
    e = entries[0]
    assert list(e) == [
        b"count", b"reason", b"context", b"object", b"username", b"age-seconds",
        b"client-info", b"entry-id", b"timestamp-created", b"timestamp-last-updated",
    ]
    assert e[b"count"] == 3
    assert before <= e[b"timestamp-created"] <= e[b"timestamp-last-updated"] <= after
    g.execute_command("ACL", "SETUSER", "u", "+get", "~a")
    c = harness.make_client(
        both.pair.goblin, username="u", password="x", lib_name=None, lib_version=None
    )
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.execute_command("GET", "b")
    c.close()
    first = e[b"entry-id"]
    e = _fields(g.execute_command("ACL", "LOG", "1")[0])
    assert (e[b"entry-id"], e[b"reason"], e[b"object"]) == (first + 1, b"key", b"b")
    both.config_set("acllog-max-len", 0)
    c = harness.make_client(
        both.pair.goblin, username="u", password="x", lib_name=None, lib_version=None
    )
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.execute_command("GET", "c")
    c.close()
    assert g.execute_command("ACL", "LOG") == []


# --- AUTH, HELLO, connections ---------------------------------------------------------------------


def test_auth_and_hello_as_users(both):
    setuser(both, "u", "+@all", "allkeys")
    both.ok("ACL", "SETUSER", "off_user", "off", ">pw", "+@all")
    both.ok("ACL", "SETUSER", "np", "on", "nopass", "+acl|whoami")
    b = both.new()
    try:
        b("AUTH", "u", "pw")
        b("ACL", "WHOAMI")
        b("AUTH", "u", "nope")
        b("ACL", "WHOAMI")
        b("AUTH", "off_user", "pw")
        b("AUTH", "np", "anything")
        b("ACL", "WHOAMI")
        r, g = b.run("HELLO", "2", "AUTH", "u", "pw")
        assert r[4:6] == g[4:6] == [b"proto", 2]
        b("ACL", "WHOAMI")
        b("HELLO", "2", "AUTH", "nosuch", "pw")
        b("AUTH", "onlypassword")
        b("RESET")
        b("ACL", "WHOAMI")
    finally:
        b.close()


def test_default_user_with_password_needs_auth(both):
    both.ok("ACL", "SETUSER", "default", ">pw")
    raw = harness.RawPair(both.pair)
    try:
        raw.same(encode("GET", "a"))
        raw.same(encode("AUTH", "pw"))
        raw.same(encode("GET", "a"))
    finally:
        raw.close()
        for s in both.pair:
            c = harness.make_client(s, password="pw")
            c.execute_command("ACL", "SETUSER", "default", "nopass")
            c.close()


def test_client_list_user_and_kill_user(both):
    setuser(both, "u", "+@all", "allkeys")
    conns = [AsUser(both.pair, "u") for _ in range(2)]
    try:
        r, g = both.run("CLIENT", "LIST")
        for text in (r, g):
            users = sorted(_client_info(line)[b"user"] for line in text.splitlines())
            assert users == [b"default", b"u", b"u"]
        both("CLIENT", "KILL", "USER", "nosuch")
        both("CLIENT", "KILL", "USER", "u")
        for c in conns:
            with pytest.raises(redis.exceptions.ConnectionError):
                c.goblin.execute_command("PING")
    finally:
        for c in conns:
            c.close()


def test_deluser_closes_its_connections(both):
    setuser(both, "u", "+@all", "allkeys")
    u = AsUser(both.pair, "u")
    try:
        u("PING")
        both("ACL", "DELUSER", "u")
        for c in (u.redis, u.goblin):
            with pytest.raises(redis.exceptions.ConnectionError):
                c.execute_command("PING")
    finally:
        u.close()
    # A user deleting itself gets its reply, then the connection closes.
    setuser(both, "v", "+@all")
    raws = []
    for s in both.pair:
        c = RawConnection(s.port)
        c.request(encode("AUTH", "v", "pw"))
        raws.append(c)
    replies = [c.request(encode("ACL", "DELUSER", "v")) for c in raws]
    assert replies == [b":1\r\n", b":1\r\n"]
    assert all(c.is_closed() for c in raws)


# --- Scripts --------------------------------------------------------------------------------------


def test_scripts_obey_the_callers_acl(both):
    setuser(both, "u", "+eval", "+get", "~a*")
    u = AsUser(both.pair, "u")
    try:
        u("EVAL", "return redis.call('get', KEYS[1])", "1", "a1")
        u("EVAL", "return redis.call('get', 'a2')", "0")
        r, g = u.run("EVAL", "return redis.call('set', 'a1', 'v')", "0")
        assert isinstance(r, redis.ResponseError)
        assert str(g).startswith(
            "ACL failure in script: User u has no permissions to run the 'set' command"
        ), g
        r, g = u.run("EVAL", "return redis.call('get', 'b')", "0")
        assert str(g).startswith("ACL failure in script: No permissions to access a key"), g
        r, g = u.run("EVAL", "return redis.pcall('set', 'a1', 'v')", "0")
        assert isinstance(g, redis.ResponseError)
        log_r, log_g = both.run("ACL", "LOG")
        assert [_log_core(e) for e in log_r] == [_log_core(e) for e in log_g]
        assert _fields(log_g[0])[b"context"] == b"lua"
    finally:
        u.close()


# --- The ACL file and `user` directives -----------------------------------------------------------

ACL_FILE = (
    "user default on nopass ~* &* +@all\n"
    "user alice on #" + "c" * 64 + " ~a* &news +@read +@write -del\n"
    "user bob off resetchannels -@all +get\n"
)


@pytest.fixture(scope="module")
def file_pair(tmp_path_factory):
    pair = harness.Pair(tmp_path_factory.mktemp("aclfile"), ["--aclfile", "users.acl"])
    for server in pair:
        (server.workdir / "users.acl").write_text(ACL_FILE)
    pair.start()
    yield pair
    pair.stop()


def test_aclfile_load_save_round_trip(file_pair):
    b = harness.Both(file_pair)
    try:
        b("ACL", "LIST")
        b("CONFIG", "GET", "aclfile")
        b.ok("ACL", "SETUSER", "carol", "on", ">pw", "~c*", "+@hash", "(+get ~x*)")
        b.ok("ACL", "SAVE")
        texts = [(s.workdir / "users.acl").read_bytes().splitlines() for s in file_pair]
        assert harness.acl_users_as_72(("ACL", "LIST"), texts[0]) == texts[1]
        b.ok("ACL", "SETUSER", "dave", "on")
        b.ok("ACL", "LOAD")
        b("ACL", "USERS")
        b("ACL", "LIST")
        # A broken file changes nothing and says why, line by line.
        for s in file_pair:
            (s.workdir / "users.acl").write_text(
                "user default on nopass ~* &* +@all\nnotuser x\nuser e +nosuch foo bar\n"
                "user e on\nuser f (+get\nuser g #abc\n"
            )
        b("ACL", "LOAD")
        b("ACL", "USERS")
        for s in file_pair:
            (s.workdir / "users.acl").unlink()
        b("ACL", "LOAD")
        for s in file_pair:
            (s.workdir / "users.acl").write_text(ACL_FILE)
        b.ok("ACL", "LOAD")
        b("ACL", "LIST")
    finally:
        b.close()


def test_load_and_save_without_aclfile(both):
    both("ACL", "LOAD")
    both("ACL", "SAVE")


def _start_fails(binary, args, cwd):
    proc = subprocess.run(
        [binary, *args, "--port", str(harness.free_port()), "--save", ""],
        cwd=cwd, capture_output=True, text=True, timeout=30,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_user_directives_and_their_errors(tmp_path):
    conf = tmp_path / "u.conf"
    conf.write_text("user alice on >pw ~* +@all\nuser bob on nopass +get ~k*\n")
    pair = harness.Pair(tmp_path / "pair", [])
    for server in pair:
        # The configuration file comes first, as redis-server wants it.
        server.argv = lambda s=server, base=server.argv: [s.binary, str(conf), *base()[1:]]
    pair.start()
    try:
        b = harness.Both(pair)
        b("ACL", "LIST")
        u = AsUser(pair, "alice")
        u("ACL", "WHOAMI")
        u.close()
        b.close()
    finally:
        pair.stop()
    for text, reason in [
        ("user alice on foo\n", "Error in user declaration 'alice': Syntax error"),
        ("user a on\nuser a off\n", "Duplicate user found"),
        ("user a on #abc\n", "The password hash must be exactly 64 characters"),
    ]:
        conf.write_text(text)
        for binary in (harness.REDIS_BIN, harness.GOBLIN_BIN):
            code, out = _start_fails(binary, [str(conf)], tmp_path)
            assert code != 0 and reason in out and "FATAL CONFIG FILE ERROR" in out, (binary, out)
    # Users in the configuration and an ACL file at once: refused at start.
    conf.write_text("user alice on\naclfile users.acl\n")
    (tmp_path / "users.acl").write_text(ACL_FILE)
    for binary in (harness.REDIS_BIN, harness.GOBLIN_BIN):
        code, out = _start_fails(binary, [str(conf)], tmp_path)
        assert code != 0 and "declare users directly in your redis.conf, but not both" in out
    # A broken ACL file stops the start.
    conf.write_text("aclfile users.acl\n")
    (tmp_path / "users.acl").write_text("user x +nosuch\n")
    for binary in (harness.REDIS_BIN, harness.GOBLIN_BIN):
        code, out = _start_fails(binary, [str(conf)], tmp_path)
        assert code != 0 and "Aborting Redis startup because of ACL errors" in out, out


def test_revoked_channels_close_subscribers(both):
    setuser(both, "s", "+@all", "&news.*", "&other")
    subs = []
    for s in both.pair:
        c = RawConnection(s.port)
        c.request(encode("AUTH", "s", "pw"))
        c.request(encode("SUBSCRIBE", "news.a"))
        subs.append(c)
    pats = []
    for s in both.pair:
        c = RawConnection(s.port)
        c.request(encode("AUTH", "s", "pw"))
        c.request(encode("PSUBSCRIBE", "other"))
        pats.append(c)
    try:
        # Widening keeps every subscriber.
        both.ok("ACL", "SETUSER", "s", "&more")
        assert [c.request(encode("PING")) for c in subs] == [b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"] * 2
        # Taking news.* away closes the channel's subscribers, not the pattern's.
        both.ok("ACL", "SETUSER", "s", "resetchannels", "&other")
        assert all(c.is_closed() for c in subs)
        assert [c.request(encode("PING")) for c in pats] == [b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"] * 2
        both.ok("ACL", "SETUSER", "s", "resetchannels", "&oth*")
        assert all(c.is_closed() for c in pats)
    finally:
        for c in subs + pats:
            c.close()


def test_slowlog_redacts_secrets(both):
    setuser(both, "u", "+@all")
    both.config_set("slowlog-log-slower-than", 0)
    both("SLOWLOG", "RESET")
    both("AUTH", "u", "pw")
    both("AUTH", "default", "nopass-anything")
    both.run("HELLO", "2", "AUTH", "u", "pw", "SETNAME", "n")
    both("ACL", "SETUSER", "v", "on", ">secret")
    both("ACL", "GETUSER", "v")
    both("ACL", "DELUSER", "v")
    both("CONFIG", "SET", "requirepass", "")
    r, g = both.run("SLOWLOG", "GET", "20")
    # Arguments only: ids, times and client addresses differ. 7.2 also redacts the user
    # names of ACL GETUSER and DELUSER (redis#12082), which 7.0 shows.
    def as_72(args):
        if args[:2] in ([b"ACL", b"GETUSER"], [b"ACL", b"DELUSER"]):
            return args[:2] + [b"(redacted)"] * (len(args) - 2)
        return args

    assert [as_72(e[3]) for e in r] == [e[3] for e in g]
    assert any(b"(redacted)" in e[3] for e in g)


@pytest.mark.parametrize("rules", [["~k*"], ["%R~*", "~k*"], ["allkeys"], ["~k*", "(%R~* +sort)"]])
def test_sort_by_and_get_need_every_key(both, rules):
    setuser(both, "u", "+@all", *rules)
    both.ok("RPUSH", "kl", "2", "1", "3")
    both.ok("SET", "w_1", "5")
    u = AsUser(both.pair, "u")
    try:
        u("SORT", "kl")
        u("SORT", "kl", "BY", "nosort")
        u("SORT", "kl", "BY", "w_*")
        u("SORT", "kl", "GET", "#")
        u("SORT", "kl", "GET", "w_*", "BY", "w_*")
        u("SORT_RO", "kl", "GET", "w_*")
        u("SORT", "kl", "BY", "w_*", "STORE", "kdst")
    finally:
        u.close()


def test_acl_parameters(both):
    both.pairs("CONFIG", "GET", "acl*")
    both("CONFIG", "SET", "aclfile", "x.acl")
    both("CONFIG", "SET", "acl-pubsub-default", "maybe")
    both("CONFIG", "SET", "acllog-max-len", "-1")
    both.config_set("acl-pubsub-default", "allchannels")
    both.ok("ACL", "SETUSER", "fresh")
    both("ACL", "GETUSER", "fresh")
    both.ok("ACL", "SETUSER", "fresh", "reset", "(+get)")
    both("ACL", "LIST")
    both.config_set("acl-pubsub-default", "resetchannels")
    both.ok("ACL", "SETUSER", "fresh2", "(+get)")
    both("ACL", "LIST")


def test_auth_inside_multi_is_logged_as_multi(both):
    setuser(both, "u", "+@all")
    b = both.new()
    try:
        b("MULTI")
        b("AUTH", "u", "wrong")
        b("EXEC")
        r, g = both.run("ACL", "LOG")
        assert [_log_core(e) for e in r] == [_log_core(e) for e in g]
    finally:
        b.close()


def test_relative_aclfile_is_in_dir(tmp_path):
    sub = tmp_path / "data"
    sub.mkdir()
    (sub / "users.acl").write_text(ACL_FILE)
    pair = harness.Pair(tmp_path / "pair", ["--dir", str(sub), "--aclfile", "users.acl"])
    pair.start()
    try:
        b = harness.Both(pair)
        b("ACL", "LIST")
        b.ok("ACL", "LOAD")
        b.close()
    finally:
        pair.stop()
