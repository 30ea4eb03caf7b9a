"""Pub/sub: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB, compared byte for
byte where the shape matters (confirmations, message / pmessage / smessage frames in RESP2
and RESP3, the subscribed-mode errors), plus RESET and disconnects dropping subscriptions,
CLIENT LIST and INFO reflecting them, and a slow subscriber cut off by
client-output-buffer-limit pubsub."""

import time

from resp import encode, parse_all


def resp3(raw):
    """Switches both raw connections to RESP3 (HELLO's reply names different versions)."""
    raw(encode("HELLO", "3"))


def info_fields(text: bytes) -> dict:
    return dict(l.split(":", 1) for l in text.decode().splitlines() if ":" in l)


def sorted_names(both, *cmd) -> list:
    """A reply listing names in hash-table order, the same on both servers once sorted."""
    r, g = both.run(*cmd)
    assert sorted(r) == sorted(g), (r, g)
    return sorted(r)


def test_confirmations_and_subscribed_mode_resp2(raw):
    raw.same(encode("UNSUBSCRIBE"))
    raw.same(encode("PUNSUBSCRIBE"))
    raw.same(encode("SUNSUBSCRIBE"))
    raw.same(encode("SUBSCRIBE", "a", "b", "a"), 3)
    raw.same(encode("PSUBSCRIBE", "p*"))
    raw.same(encode("SSUBSCRIBE", "s"))
    raw.same(encode("PING"))
    raw.same(encode("PING", "hi"))
    raw.same(encode("PING", "a", "b"))
    raw.same(encode("SET", "k", "v"))
    raw.same(encode("HELLO", "3"))
    raw.same(encode("MULTI"))
    raw.same(encode("SUBSCRIBE"))
    raw.same(encode("CLIENT", "LIST"))
    raw.same(encode("PUBLISH", "a", "x"))
    raw.same(encode("PUBSUB", "NUMPAT"))
    raw.same(encode("NOSUCH"))
    raw.same(encode("GET"))
    raw.same(encode("UNSUBSCRIBE", "a", "zz"), 2)
    raw.same(encode("PUNSUBSCRIBE"))
    raw.same(encode("UNSUBSCRIBE"))
    raw.same(encode("UNSUBSCRIBE"))
    raw.same(encode("PING"), 1)
    raw.same(encode("SUNSUBSCRIBE", "s"))
    # Out of subscribed mode: everything runs again.
    raw.same(encode("PING"))
    raw.same(encode("ECHO", "back"))


def test_unsubscribe_all_counts_down(raw):
    for conn in raw.conns():
        conn.request(encode("SUBSCRIBE", "c1", "c2", "c3"), 3)
        conn.request(encode("PSUBSCRIBE", "q*"))
    r, g = (parse_all(x) for x in raw(encode("UNSUBSCRIBE"), 3))
    # The order of an unsubscribe-all is the order of a hash table: compare names as a set.
    assert [x[2] for x in r] == [x[2] for x in g] == [3, 2, 1]
    assert sorted(x[1] for x in r) == sorted(x[1] for x in g) == [b"c1", b"c2", b"c3"]
    raw.same(encode("PUNSUBSCRIBE"))


def test_messages_resp2(raw):
    sub, pub = raw, raw.new()
    sub.same(encode("SUBSCRIBE", "news.tech", "other"), 2)
    sub.same(encode("PSUBSCRIBE", "news.*", "n?ws.[at]*", "NEWS.*", "x\\*"), 4)
    pub.same(encode("PUBLISH", "news.tech", "hello"))
    r, g = sub.read(3)
    assert parse_all(r)[0] == parse_all(g)[0], (r, g)
    # The two pmessages come in pattern-table order: compare them as a set.
    assert sorted(parse_all(r)[1:]) == sorted(parse_all(g)[1:])
    pub.same(encode("PUBLISH", "x*", "star"))
    sub.same(b"", 1)
    pub.same(encode("PUBLISH", "other", b"\x00bin\r\n"))
    sub.same(b"", 1)
    pub.same(encode("PUBLISH", "nobody", "x"))
    sub.same(encode("PING"))


def test_messages_resp3_and_commands_allowed(raw):
    sub, pub = raw, raw.new()
    resp3(sub)
    sub.same(encode("SUBSCRIBE", "ch"))
    sub.same(encode("PSUBSCRIBE", "c*"))
    sub.same(encode("SET", "k", "v"))
    sub.same(encode("GET", "k"))
    sub.same(encode("PING"))
    pub.same(encode("PUBLISH", "ch", "m1"))
    r, g = sub.read(2)
    assert r == g, (r, g)
    # A RESP3 client can publish to itself: Redis 7.2 pushes the messages after PUBLISH's
    # reply (its pending push messages), 7.0 before it.
    r, g = sub(encode("PUBLISH", "ch", "self"), 3)
    reply = r.index(b":2\r\n")
    assert g == r[reply:] + r[:reply], (r, g)
    sub.same(encode("UNSUBSCRIBE"))
    sub.same(encode("UNSUBSCRIBE"))
    sub.same(encode("PUNSUBSCRIBE", "c*", "none"), 2)


def test_shard_channels(raw):
    sub, pub = raw, raw.new()
    sub.same(encode("SUBSCRIBE", "s1"))
    sub.same(encode("SSUBSCRIBE", "s1", "s2", "s1"), 3)
    pub.same(encode("SPUBLISH", "s1", "shard"))
    sub.same(b"", 1)
    pub.same(encode("PUBLISH", "s1", "plain"))
    sub.same(b"", 1)
    pub.same(encode("PUBSUB", "SHARDNUMSUB", "s1", "s2", "s3"))
    pub.same(encode("PUBSUB", "NUMSUB", "s1", "s2"))
    pub.same(encode("PUBSUB", "SHARDCHANNELS", "s1"))
    sub.same(encode("SUNSUBSCRIBE", "s2"))
    sub.same(encode("UNSUBSCRIBE"))
    sub.same(encode("SET", "k", "v"), 1)
    sub.same(encode("SUNSUBSCRIBE"))
    sub.same(encode("SUNSUBSCRIBE"))
    resp3(sub)
    sub.same(encode("SSUBSCRIBE", "s9"))
    pub.same(encode("SPUBLISH", "s9", "three"))
    sub.same(b"", 1)


def test_pubsub_introspection(both, raw):
    for conn in raw.conns():
        conn.request(encode("SUBSCRIBE", "a1", "a2", "b1"), 3)
        conn.request(encode("PSUBSCRIBE", "a*", "b*"), 2)
        conn.request(encode("SSUBSCRIBE", "sa", "sb"), 2)
    other = raw.new()
    for conn in other.conns():
        conn.request(encode("PSUBSCRIBE", "a*"))
    assert sorted_names(both, "PUBSUB", "CHANNELS") == [b"a1", b"a2", b"b1"]
    assert sorted_names(both, "PUBSUB", "CHANNELS", "a*") == [b"a1", b"a2"]
    assert sorted_names(both, "PUBSUB", "CHANNELS", "zz*") == []
    assert sorted_names(both, "PUBSUB", "SHARDCHANNELS") == [b"sa", b"sb"]
    assert sorted_names(both, "PUBSUB", "SHARDCHANNELS", "*b") == [b"sb"]
    both("PUBSUB", "NUMSUB", "a1", "zz", "sa")
    both("PUBSUB", "NUMSUB")
    both("PUBSUB", "SHARDNUMSUB", "sa", "a1")
    both("PUBSUB", "SHARDNUMSUB")
    both("PUBSUB", "NUMPAT")
    both("PUBSUB", "HELP")
    both("PUBSUB", "CHANNELS", "a", "b")
    both("PUBSUB", "SHARDCHANNELS", "a", "b")
    both("PUBSUB", "NUMPAT", "x")
    both("PUBSUB", "HELP", "x")
    both("PUBSUB", "NOSUCH")
    both("PUBSUB")
    both("PUBLISH", "a1", "m")
    both("PUBLISH", "b1")
    both("SPUBLISH", "sa", "m")
    r, g = (info_fields(c.execute_command("INFO", "stats")) for c in both.clients())
    for field in ("pubsub_channels", "pubsub_patterns", "pubsubshard_channels"):
        assert r[field] == g[field], field
    assert (r["pubsub_channels"], r["pubsub_patterns"], r["pubsubshard_channels"]) == ("3", "2", "2")
    both("COMMAND", "INFO", "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe",
         "sunsubscribe", "publish", "spublish")
    both("COMMAND", "DOCS", "subscribe", "ssubscribe", "spublish", "sunsubscribe")
    # PUBSUB's subcommands come in hash-table order.
    r, g = (x[0][:9] + [sorted(x[0][9])] for x in both.run("COMMAND", "INFO", "pubsub"))
    assert r == g
    r, g = both.run("COMMAND", "DOCS", "pubsub")
    assert r[0] == g[0] and r[1][:8] == g[1][:8]
    subs = [dict(zip(x[1][9][::2], x[1][9][1::2])) for x in (r, g)]
    assert subs[0] == subs[1] and len(subs[0]) == 6


def test_client_list_reflects_subscriptions(both, raw):
    ids = []
    for conn in raw.conns():
        ids.append(int(conn.request(encode("CLIENT", "ID"))[1:-2]))
        conn.request(encode("SUBSCRIBE", "x", "y"), 2)
        conn.request(encode("PSUBSCRIBE", "z*"))
        conn.request(encode("SSUBSCRIBE", "s"))
    lines = []
    for c, i in zip(both.clients(), ids):
        line = c.execute_command("CLIENT", "LIST", "ID", i)
        fields = dict(p.split("=", 1) for p in line.decode().split())
        lines.append({k: fields[k] for k in ("flags", "sub", "psub", "ssub", "cmd")})
        assert str(i) in c.execute_command("CLIENT", "LIST", "TYPE", "pubsub").decode()
        assert f"id={i} " not in c.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
    assert lines[0] == lines[1]
    assert lines[0]["flags"] == "P"
    both("CLIENT", "KILL", "TYPE", "pubsub")
    assert raw.closed() == (True, True)


def test_reset_and_disconnect_drop_subscriptions(both, raw):
    raw.same(encode("SUBSCRIBE", "gone"))
    raw.same(encode("PSUBSCRIBE", "go*"))
    raw.same(encode("RESET"))
    raw.same(encode("SET", "k", "v"))
    assert both("PUBLISH", "gone", "m") == 0
    both("PUBSUB", "NUMPAT")
    second = raw.new()
    second.same(encode("SUBSCRIBE", "gone"))
    second.same(encode("SSUBSCRIBE", "sgone"))
    assert both("PUBLISH", "gone", "m") == 1
    second.same(b"", 1)
    for conn in second.conns():
        conn.close()
    deadline = time.monotonic() + 5
    while both.run("PUBSUB", "NUMSUB", "gone") != ([b"gone", 0],) * 2:
        assert time.monotonic() < deadline, "a closed subscriber kept its subscription"
        time.sleep(0.02)
    both("PUBSUB", "SHARDNUMSUB", "sgone")
    assert both("PUBLISH", "gone", "m") == 0


def test_multi_with_publish_and_subscribe(raw):
    raw.same(encode("MULTI"))
    raw.same(encode("SUBSCRIBE", "t"))
    raw.same(encode("PUBLISH", "t", "m"))
    # The message the transaction published to its own client: inside EXEC's reply, before
    # PUBLISH's :1, on 7.0; after the whole reply on 7.2 (its pending push messages).
    r, g = raw(encode("EXEC"), 2)
    message = b"*3\r\n$7\r\nmessage\r\n$1\r\nt\r\n$1\r\nm\r\n"
    assert g == r.replace(message + b":1\r\n", b":1\r\n" + message), (r, g)
    raw.same(encode("MULTI"))


def flood(both, raw, limit: str, channel: str, messages: int) -> list:
    """Subscribes the raw pair (which then never reads) to `channel` under the pubsub output
    `limit`, and publishes `messages` 16 KB messages in one pipeline per server; returns the
    last PUBLISH reply of each."""
    both.config_set("client-output-buffer-limit", "pubsub " + limit)
    for conn in raw.conns():
        conn.request(encode("SUBSCRIBE", channel))
    last = []
    for c in both.clients():
        pipe = c.pipeline(transaction=False)
        for _ in range(messages):
            pipe.execute_command("PUBLISH", channel, b"x" * 16384)
        last.append(pipe.execute()[-1])
    return last


def test_slow_subscriber_is_disconnected(both, raw):
    # Far more than the socket buffers and the limit hold.
    last = flood(both, raw, "256kb 128kb 60", "flood", 2000)
    assert last == [0, 0], "the subscriber outlived the pubsub output limit"
    assert raw.closed() == (True, True)
    both("PUBSUB", "NUMSUB", "flood")
    both("PING")
    assert both("PUBLISH", "flood", "after") == 0


def test_pubsub_replies_resp3(raw):
    resp3(raw)
    raw.same(encode("SUBSCRIBE", "r3"))
    raw.same(encode("SSUBSCRIBE", "s3"))
    raw.same(encode("PUBSUB", "NUMSUB", "r3", "none"))
    raw.same(encode("PUBSUB", "SHARDNUMSUB", "s3"))
    raw.same(encode("PUBSUB", "CHANNELS", "r*"))
    raw.same(encode("PUBSUB", "NUMPAT"))
    raw.same(encode("PING", "x"))
    raw.same(encode("SUNSUBSCRIBE"))
    raw.same(encode("UNSUBSCRIBE"))


def test_slow_subscriber_over_the_soft_limit_for_too_long(both, raw):
    last = flood(both, raw, "0 64kb 1", "slow", 1000)
    assert last == [1, 1], "over the soft limit for less than its seconds"
    time.sleep(2.5)
    for c in both.clients():
        c.execute_command("PUBLISH", "slow", "late")
    assert raw.closed() == (True, True)
    both("PING")
    assert both("PUBSUB", "NUMSUB", "slow") == [b"slow", 0]


def test_quit_in_subscribed_mode(raw):
    raw.same(encode("PSUBSCRIBE", "*"))
    raw.same(encode("QUIT"))
    assert raw.closed() == (True, True)


def test_idle_timeout_spares_subscribers(both, raw):
    both.config_set("timeout", 1)
    idle = raw.new()
    idle.same(encode("PING"))
    raw.same(encode("SUBSCRIBE", "kept"))
    time.sleep(3)
    assert idle.closed() == (True, True)
    publisher = raw.new()
    publisher.same(encode("PUBLISH", "kept", "still here"))
    raw.same(b"", 1)
    publisher.same(encode("CONFIG", "SET", "timeout", "0"))


# --- 7.2: CLIENT REPLY OFF / SKIP do not silence pub/sub pushes (redis#11875; 7.0 drops them) --
def test_client_reply_off_keeps_pushes_7_2(servers):
    from resp import RawConnection

    with RawConnection(servers.goblin.port) as sub, RawConnection(servers.goblin.port) as pub:
        sub.request(encode("HELLO", "3"))
        sub.send(encode("CLIENT", "REPLY", "OFF") + encode("SUBSCRIBE", "quiet") + encode("GET", "k"))
        assert sub.read_replies(1) == b">3\r\n$9\r\nsubscribe\r\n$5\r\nquiet\r\n:1\r\n"
        assert pub.request(encode("PUBLISH", "quiet", "m")) == b":1\r\n"
        assert sub.read_replies(1) == b">3\r\n$7\r\nmessage\r\n$5\r\nquiet\r\n$1\r\nm\r\n"
        assert sub.request(encode("CLIENT", "REPLY", "ON")) == b"+OK\r\n"
        sub.send(encode("CLIENT", "REPLY", "SKIP") + encode("UNSUBSCRIBE") + encode("PING"))
        assert sub.read_replies(2) == b">3\r\n$11\r\nunsubscribe\r\n$5\r\nquiet\r\n:0\r\n+PONG\r\n"
