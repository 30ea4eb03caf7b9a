"""CLIENT: ID, SETNAME, GETNAME, LIST, INFO, KILL, SETINFO, REPLY, NO-EVICT, NO-TOUCH,
UNBLOCK and HELP."""

import time

import pytest

from resp import RawConnection, encode

# Fields Redis 7.2 added to CLIENT LIST / CLIENT INFO (Goblin follows 7.2).
FIELDS_ADDED_IN_72 = {"lib-name", "lib-ver"}
# Fields whose values are compared between the two servers for the calling connection.
STABLE_FIELDS = ("name", "db", "sub", "psub", "multi", "flags", "cmd", "resp", "user", "redir")


def parse_client_line(line: str) -> dict:
    fields = {}
    for part in line.strip().split(" "):
        k, _, v = part.partition("=")
        fields[k] = v
    return fields


def client_lines(text) -> list[dict]:
    if isinstance(text, bytes):
        text = text.decode()
    return [parse_client_line(l) for l in text.strip().split("\n") if l.strip()]


def assert_client_fields_match(r: dict, g: dict):
    assert set(r) | FIELDS_ADDED_IN_72 == set(g) | FIELDS_ADDED_IN_72, (r, g)
    assert FIELDS_ADDED_IN_72 <= set(g), g
    for k in STABLE_FIELDS:
        assert r.get(k) == g.get(k), (k, r, g)


def test_client_arity_and_unknown(both):
    both("CLIENT")
    both("CLIENT", "NOSUCH")
    both("CLIENT", "NOSUCH", "a")
    both("CLIENT", "ID", "extra")
    both("CLIENT", "GETNAME", "extra")
    both("CLIENT", "SETNAME")
    both("CLIENT", "SETNAME", "a", "b")
    both("CLIENT", "INFO", "x")
    both("CLIENT", "REPLY")
    both("CLIENT", "NO-EVICT")
    both("CLIENT", "KILL")
    both("CLIENT", "UNBLOCK")


def test_client_id(both):
    r, g = both.run("CLIENT", "ID")
    assert isinstance(r, int) and isinstance(g, int)
    # Stable for the connection, distinct between connections.
    assert both.goblin.execute_command("CLIENT", "ID") == g
    other = both.new()
    assert other.goblin.execute_command("CLIENT", "ID") != g
    other.close()


def test_setname_getname(both, both3):
    both("CLIENT", "GETNAME")
    both("CLIENT", "SETNAME", "my-conn")
    both("CLIENT", "GETNAME")
    for bad in ("has space", "new\nline", "tab\tx", "\x01", "caf\xe9"):
        both("CLIENT", "SETNAME", bad)
    both("CLIENT", "GETNAME")
    both("CLIENT", "SETNAME", "")
    both("CLIENT", "GETNAME")
    both3("CLIENT", "GETNAME")
    both3("CLIENT", "SETNAME", "three")
    both3("CLIENT", "GETNAME")


def test_client_list_fields(both):
    both("CLIENT", "SETNAME", "lister")
    both("SELECT", 3)
    r, g = both.run("CLIENT", "LIST")
    rl = {c["name"]: c for c in client_lines(r)}
    gl = {c["name"]: c for c in client_lines(g)}
    assert_client_fields_match(rl["lister"], gl["lister"])
    assert gl["lister"]["cmd"] == "client|list"
    assert gl["lister"]["db"] == "3"


def test_client_list_filters(both):
    both("CLIENT", "SETNAME", "filt")
    for args in (("TYPE", "normal"), ("TYPE", "NORMAL"), ("TYPE", "pubsub"), ("TYPE", "master"),
                 ("TYPE", "replica")):
        r, g = both.run("CLIENT", "LIST", *args)
        assert len(client_lines(r)) == len(client_lines(g)), args
    both("CLIENT", "LIST", "TYPE", "bogus")
    both("CLIENT", "LIST", "TYPE")
    both("CLIENT", "LIST", "FOO")
    both("CLIENT", "LIST", "ID")
    both("CLIENT", "LIST", "ID", "abc")
    both("CLIENT", "LIST", "ID", "0")
    both("CLIENT", "LIST", "ID", "-1")
    ids = [c.execute_command("CLIENT", "ID") for c in both.clients()]
    r = both.redis.execute_command("CLIENT", "LIST", "ID", ids[0], 999999)
    g = both.goblin.execute_command("CLIENT", "LIST", "ID", ids[1], 999999)
    assert_client_fields_match(client_lines(r)[0], client_lines(g)[0])
    assert len(client_lines(r)) == len(client_lines(g)) == 1


def test_client_info(both, both3):
    both("CLIENT", "SETNAME", "infoer")
    r, g = both.run("CLIENT", "INFO")
    assert r.endswith(b"\n") and g.endswith(b"\n")
    assert_client_fields_match(client_lines(r)[0], client_lines(g)[0])
    # RESP3: a verbatim string.
    r, g = both3.run("CLIENT", "INFO")
    assert type(r) is type(g)


def test_client_info_raw_resp3_is_verbatim(raw):
    raw(encode("HELLO", "3"))
    r, g = raw(encode("CLIENT", "INFO"))
    assert r.startswith(b"=") and g.startswith(b"=")
    assert b"txt:id=" in r[:20] and b"txt:id=" in g[:20]


def test_client_info_multi_and_flags(both):
    both("MULTI")
    both("CLIENT", "INFO")  # queued
    r, g = both.run("EXEC")
    assert_client_fields_match(client_lines(r[0])[0], client_lines(g[0])[0])


def test_client_kill_legacy(both):
    victim_r = RawConnection(both.pair.redis.port)
    victim_g = RawConnection(both.pair.goblin.port)
    # The victim's own address, as CLIENT INFO reports it.
    addr = []
    for v in (victim_r, victim_g):
        info = v.request(encode("CLIENT", "INFO")).split(b"\r\n")[1].decode()
        addr.append(parse_client_line(info)["addr"])
    assert both.redis.execute_command("CLIENT", "KILL", addr[0]) == b"OK"
    assert both.goblin.execute_command("CLIENT", "KILL", addr[1]) == b"OK"
    assert victim_r.is_closed() and victim_g.is_closed()
    both("CLIENT", "KILL", "127.0.0.1:1")
    both("CLIENT", "KILL", "nonsense")


def test_client_kill_filters(both):
    victims = [RawConnection(s.port) for s in both.pair]
    ids = [v.request(encode("CLIENT", "ID")) for v in victims]
    ids = [int(i[1:-2]) for i in ids]
    assert both.redis.execute_command("CLIENT", "KILL", "ID", ids[0]) == 1
    assert both.goblin.execute_command("CLIENT", "KILL", "ID", ids[1]) == 1
    assert all(v.is_closed() for v in victims)
    both("CLIENT", "KILL", "ID", 99999999)
    both("CLIENT", "KILL", "ID", "abc")
    both("CLIENT", "KILL", "ID", "0")
    both("CLIENT", "KILL", "ID")
    both("CLIENT", "KILL", "TYPE", "bogus")
    both("CLIENT", "KILL", "TYPE", "pubsub")
    both("CLIENT", "KILL", "USER", "nobody")
    both("CLIENT", "KILL", "ADDR", "127.0.0.1:1")
    both("CLIENT", "KILL", "LADDR", "127.0.0.1:1")
    both("CLIENT", "KILL", "SKIPME", "maybe")
    both("CLIENT", "KILL", "SKIPME", "yes")
    both("CLIENT", "KILL", "FOO", "bar")
    both("CLIENT", "KILL", "ID", "1", "SKIPME")


def test_client_kill_type_normal_skipme(both):
    victims = [RawConnection(s.port) for s in both.pair]
    for v in victims:
        v.request(encode("PING"))
    r, g = both.run("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    assert r >= 1 and g >= 1
    assert all(v.is_closed() for v in victims)
    both("PING")  # the caller survives


def test_client_kill_self(both):
    own = [c.execute_command("CLIENT", "ID") for c in both.clients()]
    # SKIPME no: the caller itself is killed after its reply.
    raws = [RawConnection(s.port) for s in both.pair]
    ids = [int(r.request(encode("CLIENT", "ID"))[1:-2]) for r in raws]
    replies = [
        r.request(encode("CLIENT", "KILL", "ID", str(i), "SKIPME", "no")) for r, i in zip(raws, ids)
    ]
    assert replies[0] == replies[1] == b":1\r\n"
    assert all(r.is_closed() for r in raws)
    replies = [
        c.execute_command("CLIENT", "KILL", "ID", i, "SKIPME", "yes")
        for c, i in zip(both.clients(), own)
    ]
    assert replies == [0, 0]


def test_client_kill_laddr_and_maxage(both):
    victims = [RawConnection(s.port) for s in both.pair]
    r = both.redis.execute_command("CLIENT", "KILL", "LADDR", f"127.0.0.1:{both.pair.redis.port}",
                                   "SKIPME", "yes")
    g = both.goblin.execute_command("CLIENT", "KILL", "LADDR", f"127.0.0.1:{both.pair.goblin.port}",
                                    "SKIPME", "yes")
    assert r == g and r >= 1
    assert all(v.is_closed() for v in victims)


def test_client_reply(raw):
    # OFF: no replies at all, until ON (whose +OK is sent).
    raw.send(encode("CLIENT", "REPLY", "OFF") + encode("PING") + encode("ECHO", "hidden"))
    raw.send(encode("CLIENT", "REPLY", "ON") + encode("PING"))
    assert raw.read(2) == (b"+OK\r\n+PONG\r\n",) * 2
    # SKIP: only the next command's reply is dropped.
    raw.send(encode("CLIENT", "REPLY", "SKIP") + encode("ECHO", "a") + encode("ECHO", "b"))
    assert raw.read(1) == (b"$1\r\nb\r\n",) * 2
    # SKIP while OFF stays OFF.
    raw.send(encode("CLIENT", "REPLY", "OFF") + encode("CLIENT", "REPLY", "SKIP") + encode("PING"))
    raw.send(encode("CLIENT", "REPLY", "ON"))
    assert raw.read(1) == (b"+OK\r\n",) * 2
    raw.same(encode("CLIENT", "REPLY", "MAYBE"))
    raw.same(encode("CLIENT", "REPLY", "ON", "x"))
    # Errors are suppressed too while OFF.
    raw.send(encode("CLIENT", "REPLY", "OFF") + encode("NOSUCH") + encode("CLIENT", "REPLY", "ON"))
    assert raw.read(1) == (b"+OK\r\n",) * 2


def test_client_no_evict(both):
    both("CLIENT", "NO-EVICT", "on")
    both("CLIENT", "NO-EVICT", "OFF")
    both("CLIENT", "NO-EVICT", "maybe")
    both("CLIENT", "NO-EVICT", "on", "x")
    r, g = both.run("CLIENT", "INFO")
    assert parse_client_line(r.decode())["flags"] == parse_client_line(g.decode())["flags"]
    both("CLIENT", "NO-EVICT", "on")
    r, g = both.run("CLIENT", "INFO")
    assert parse_client_line(r.decode())["flags"] == parse_client_line(g.decode())["flags"] == "e"


# --- 7.2 additions: Goblin's replies are pinned to what Redis 7.2 documents -------------------


def test_client_setinfo_7_2(raw):
    g = raw.goblin
    assert g.request(encode("CLIENT", "SETINFO", "LIB-NAME", "mylib")) == b"+OK\r\n"
    assert g.request(encode("CLIENT", "SETINFO", "lib-ver", "1.2.3")) == b"+OK\r\n"
    info = g.request(encode("CLIENT", "INFO")).decode()
    fields = parse_client_line(info.split("\r\n")[1])
    assert fields["lib-name"] == "mylib" and fields["lib-ver"] == "1.2.3"
    assert g.request(encode("CLIENT", "SETINFO", "lib-name", "has space")) == (
        b"-ERR lib-name cannot contain spaces, newlines or special characters.\r\n"
    )
    assert g.request(encode("CLIENT", "SETINFO", "color", "red")) == (
        b"-ERR Unrecognized option 'color'\r\n"
    )
    assert g.request(encode("CLIENT", "SETINFO", "lib-name")) == (
        b"-ERR wrong number of arguments for 'client|setinfo' command\r\n"
    )
    # Redis 7.0 has no SETINFO: it answers as to any unknown subcommand.
    assert raw.redis.request(encode("CLIENT", "SETINFO", "lib-name", "x")).startswith(
        b"-ERR unknown subcommand 'SETINFO'"
    )


def test_client_no_touch_7_2(both):
    g = both.goblin
    assert g.execute_command("CLIENT", "NO-TOUCH", "on") == b"OK"
    assert g.execute_command("CLIENT", "NO-TOUCH", "OFF") == b"OK"
    with pytest.raises(Exception, match="^syntax error$"):
        g.execute_command("CLIENT", "NO-TOUCH", "maybe")
    g.execute_command("CLIENT", "NO-TOUCH", "on")
    assert "T" in parse_client_line(g.execute_command("CLIENT", "INFO").decode())["flags"]


def test_client_no_touch_keeps_idle_time(both):
    """With NO-TOUCH on, reading a key does not reset its idle time (7.2)."""
    g = both.goblin
    g.execute_command("ZADD", "idle", 1, "a")
    time.sleep(1.2)
    g.execute_command("CLIENT", "NO-TOUCH", "on")
    g.execute_command("EXISTS", "idle")
    g.execute_command("ZSCORE", "idle", "a")
    assert g.execute_command("OBJECT", "IDLETIME", "idle") >= 1
    # TOUCH always touches.
    g.execute_command("TOUCH", "idle")
    assert g.execute_command("OBJECT", "IDLETIME", "idle") == 0


# --- CLIENT UNBLOCK ---------------------------------------------------------------------------


def test_client_unblock_not_blocked(both):
    r, g = both.run("CLIENT", "ID")
    both("CLIENT", "UNBLOCK", 999999)
    both("CLIENT", "UNBLOCK", "abc")
    both("CLIENT", "UNBLOCK", 1, "MAYBE")
    both("CLIENT", "UNBLOCK", 1, "TIMEOUT")
    both("CLIENT", "UNBLOCK", 1, "ERROR")
    both("CLIENT", "UNBLOCK", 1, "TIMEOUT", "x")


@pytest.mark.parametrize("how", [None, "TIMEOUT", "ERROR"])
def test_client_unblock_blocked_pop(both, how):
    blocked = [RawConnection(s.port) for s in both.pair]
    ids = [int(b.request(encode("CLIENT", "ID"))[1:-2]) for b in blocked]
    for b in blocked:
        b.send(encode("BZPOPMIN", "nokey", "0"))
    time.sleep(0.2)
    extra = [how] if how else []
    r = both.redis.execute_command("CLIENT", "UNBLOCK", ids[0], *extra)
    g = both.goblin.execute_command("CLIENT", "UNBLOCK", ids[1], *extra)
    assert r == g == 1
    assert blocked[0].read_replies(1) == blocked[1].read_replies(1)
    # Not blocked any more.
    assert both.redis.execute_command("CLIENT", "UNBLOCK", ids[0]) == 0
    assert both.goblin.execute_command("CLIENT", "UNBLOCK", ids[1]) == 0


def test_client_help(both):
    r, g = both.run("CLIENT", "HELP")
    assert isinstance(g, list) and len(g) > 10
    assert r[0] == g[0]
    both("CLIENT", "HELP", "extra")
