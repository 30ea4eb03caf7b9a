"""Client-side caching (CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO) beside Redis:
invalidation pushes in RESP3, redirected messages on __redis__:invalidate in RESP2, OPTIN,
OPTOUT, NOLOOP, BCAST with prefixes, flushes, expiry, a broken redirect, INFO and CLIENT
LIST, and every error. Frames are compared byte for byte on raw connections.

Redis 7.2 sends a client's invalidation of a key it changed itself after that command's
reply; Debian's 7.0 sends it before. Those cases check 7.2's order on Goblin and the same
frames on both."""

import time

import pytest

from resp import encode, parse_all


def resp3(*conns):
    for c in conns:
        c(encode("HELLO", "3"))


def ids(raw) -> tuple[int, int]:
    """The CLIENT ID of each side of a raw pair (the servers number clients apart)."""
    r, g = raw(encode("CLIENT", "ID"))
    return int(r[1:-2]), int(g[1:-2])


def each(raw, make):
    """Sends each server its own bytes (`make(side_index)`) and reads one reply from each."""
    for i, conn in enumerate(raw.conns()):
        conn.send(make(i))
    return raw.read(1)


def test_default_mode_resp3(raw):
    reader, writer = raw, raw.new()
    resp3(reader)
    reader.same(encode("CLIENT", "TRACKING", "ON"))
    reader.same(encode("GET", "k"))
    reader.same(encode("MGET", "a", "b"))
    writer.same(encode("SET", "k", "v"))
    reader.same(b"", 1)
    writer.same(encode("MSET", "a", "1", "b", "2"), 1)
    reader.same(b"", 2)
    # Told once: the key is forgotten until read again.
    writer.same(encode("SET", "k", "w"))
    reader.same(encode("PING"))


def test_own_change_is_told_after_the_reply_as_7_2(raw):
    me = raw
    resp3(me)
    me.same(encode("CLIENT", "TRACKING", "ON"))
    me.same(encode("GET", "k"))
    r, g = me(encode("SET", "k", "v"), 2)
    assert sorted(map(repr, parse_all(r))) == sorted(map(repr, parse_all(g))), (r, g)
    assert g.startswith(b"+OK\r\n>2\r\n$10\r\ninvalidate\r\n"), g


def test_noloop_skips_own_changes(raw):
    me, other = raw, raw.new()
    resp3(me)
    me.same(encode("CLIENT", "TRACKING", "ON", "NOLOOP"))
    me.same(encode("GET", "k"))
    me.same(encode("SET", "k", "v"))
    me.same(encode("GET", "k"))
    other.same(encode("SET", "k", "w"))
    me.same(b"", 1)


def test_optin_and_optout(raw):
    a, b, writer = raw, raw.new(), raw.new()
    resp3(a, b)
    a.same(encode("CLIENT", "TRACKING", "ON", "OPTIN"))
    a.same(encode("GET", "untracked"))
    a.same(encode("CLIENT", "CACHING", "YES"))
    a.same(encode("GET", "tracked"))
    b.same(encode("CLIENT", "TRACKING", "ON", "OPTOUT"))
    b.same(encode("CLIENT", "CACHING", "NO"))
    b.same(encode("GET", "untracked"))
    b.same(encode("GET", "tracked"))
    writer.same(encode("SET", "untracked", "1"))
    writer.same(encode("SET", "tracked", "1"))
    a.same(b"", 1)
    b.same(b"", 1)
    a.same(encode("CLIENT", "TRACKINGINFO"))
    b.same(encode("CLIENT", "CACHING", "NO"))
    b.same(encode("CLIENT", "TRACKINGINFO"))


def test_bcast_prefixes(raw):
    sub, writer = raw, raw.new()
    resp3(sub)
    sub.same(encode("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "user:", "PREFIX", "job:"))
    writer.same(encode("MSET", "user:2", "a", "user:1", "b", "other", "c"))
    sub.same(b"", 1)
    writer.same(encode("SET", "job:9", "x"))
    sub.same(b"", 1)
    sub.same(encode("CLIENT", "TRACKINGINFO"))
    sub.same(encode("CLIENT", "GETREDIR"))


def test_resp2_redirect_to_a_subscriber(raw):
    listener, tracker, writer = raw, raw.new(), raw.new()
    listener_ids = ids(listener)
    listener.same(encode("SUBSCRIBE", "__redis__:invalidate"))
    r, g = each(tracker, lambda i: encode("CLIENT", "TRACKING", "ON", "REDIRECT",
                                          listener_ids[i]))
    assert r == g == b"+OK\r\n"
    tracker.same(encode("GET", "k"))
    r, g = tracker(encode("CLIENT", "GETREDIR"))
    assert (int(r[1:-2]), int(g[1:-2])) == listener_ids
    writer.same(encode("SET", "k", "v"))
    listener.same(b"", 1)
    writer.same(encode("FLUSHALL"))
    listener.same(b"", 1)


def test_flush_tells_every_tracking_client_with_a_null(raw):
    a, b = raw, raw.new()
    resp3(a, b)
    a.same(encode("CLIENT", "TRACKING", "ON"))
    b.same(encode("CLIENT", "TRACKING", "ON", "BCAST"))
    a.same(encode("GET", "k"))
    raw.new().same(encode("FLUSHDB"))
    a.same(b"", 1)
    b.same(b"", 1)


def test_expired_key_is_invalidated(raw):
    reader, writer = raw, raw.new()
    resp3(reader)
    writer.same(encode("SET", "k", "v", "PX", "50"))
    reader.same(encode("CLIENT", "TRACKING", "ON"))
    reader.same(encode("GET", "k"))
    time.sleep(0.15)
    writer.same(encode("GET", "k"))
    reader.same(b"", 1)


def test_broken_redirect(raw):
    gone, tracker, writer = raw.new(), raw, raw.new()
    resp3(tracker)
    gone_ids = ids(gone)
    each(tracker, lambda i: encode("CLIENT", "TRACKING", "ON", "REDIRECT", gone_ids[i]))
    tracker.same(encode("GET", "k"))
    for conn in gone.conns():
        conn.close()
    time.sleep(0.2)
    writer.same(encode("SET", "k", "v"))
    r, g = tracker.read(1)
    assert parse_all(r)[0][0] == parse_all(g)[0][0] == b"tracking-redir-broken"
    r, g = tracker(encode("CLIENT", "TRACKINGINFO"))
    assert dict(parse_all(r)[0])[b"flags"] == dict(parse_all(g)[0])[b"flags"]


def info_field(text: bytes, name: str) -> str:
    fields = dict(line.split(":", 1) for line in text.decode().splitlines() if ":" in line)
    return fields[name]


def test_info_and_client_list(both):
    watcher = both.new(protocol=3)
    watcher.ok("CLIENT", "TRACKING", "ON")
    watcher.ok("GET", "a")
    watcher.ok("MGET", "a", "b", "c")
    bcast = both.new(protocol=3)
    bcast.ok("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "p:", "PREFIX", "q:")
    for field, section in (("tracking_clients", "clients"), ("tracking_total_keys", "stats"),
                           ("tracking_total_items", "stats"),
                           ("tracking_total_prefixes", "stats")):
        r, g = (info_field(c.execute_command("INFO", section), field) for c in both.clients())
        assert r == g, field
    for c in (watcher, bcast):
        r, g = c.run("CLIENT", "INFO")
        flags = lambda line: [f for f in line.split() if f.startswith((b"flags=", b"redir="))]  # noqa: E731
        assert flags(r) == flags(g)
    watcher.ok("CLIENT", "TRACKING", "OFF")
    watcher("CLIENT", "TRACKINGINFO")
    watcher("CLIENT", "GETREDIR")


@pytest.mark.parametrize("args", [
    ["ON", "PREFIX", "a"],
    ["ON", "BCAST", "OPTIN"],
    ["ON", "OPTIN", "OPTOUT"],
    ["ON", "REDIRECT", "999999"],
    ["ON", "REDIRECT", "x"],
    ["ON", "REDIRECT", "1", "REDIRECT", "2"],
    ["ON", "NOSUCH"],
    ["MAYBE"],
    ["ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"],
    ["ON", "PREFIX"],
])
def test_tracking_errors(both, args):
    both("CLIENT", "TRACKING", *args)


def test_mode_switch_errors_and_caching_errors(both):
    both.err("CLIENT", "CACHING", "YES")
    both.ok("CLIENT", "TRACKING", "ON", "OPTOUT")
    both.err("CLIENT", "CACHING", "YES")
    both.err("CLIENT", "CACHING", "MAYBE")
    both.err("CLIENT", "TRACKING", "ON", "OPTIN")
    both.err("CLIENT", "TRACKING", "ON", "BCAST")
    both.ok("CLIENT", "TRACKING", "OFF")
    both.ok("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a")
    both.err("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab")
    both.ok("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "b")
    both("CLIENT", "TRACKINGINFO")
    both.err("CLIENT", "CACHING", "NO")
    both.ok("CLIENT", "TRACKING", "OFF")
    both("CLIENT", "TRACKINGINFO")


def test_scripts_track_only_the_keys_their_reads_touch(raw):
    """A script's tracking is that of the reads it makes, for its caller (7.2's call()); a
    script that reads nothing leaves nothing tracked, whatever keys EVAL names."""
    me, writer = raw, raw.new()
    resp3(me)
    me.same(encode("CLIENT", "TRACKING", "ON"))
    me.same(encode("EVAL", "redis.call('set', 'k3', 'bar')", "2", "k1", "k2"))
    writer.same(encode("MSET", "k2", "1", "k1", "1"))
    me.same(encode("PING"))
    me.same(encode("EVAL", "redis.call('get', 'k2')", "2", "k1", "k2"))
    writer.same(encode("MSET", "k2", "2", "k3", "2"))
    assert me.same(b"", 1) == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nk2\r\n"
    me.same(encode("PING"))


def test_read_only_scripts_track_their_reads_not_their_keys(raw):
    """EVAL_RO names keys it never reads: Redis 7.2 tracks only what the script's calls read
    (Debian's 7.0 tracked the keys EVAL_RO names, so Goblin is checked against 7.2's frames)."""
    resp3(raw)
    raw.same(encode("CLIENT", "TRACKING", "ON"))
    goblin = raw.goblin
    writer = raw.new().goblin
    goblin.send(encode("EVAL_RO", "redis.call('ping')", "2", "k1", "k2"))
    assert goblin.read_replies(1) == b"_\r\n"
    writer.send(encode("MSET", "k2", "2", "k1", "2"))
    writer.read_replies(1)
    goblin.send(encode("EVAL_RO", "redis.call('get', 'k2')", "2", "k1", "k2"))
    assert goblin.read_replies(1) == b"_\r\n"
    writer.send(encode("MSET", "k2", "3", "k3", "3"))
    writer.read_replies(1)
    assert goblin.read_replies(1) == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nk2\r\n"
    goblin.send(encode("PING"))
    assert goblin.read_replies(1) == b"+PONG\r\n"


def test_a_transaction_keeps_tracking_what_it_read_after_changing_it(raw):
    """A change is settled when it happens: a key written and then read inside one EXEC is
    tracked afterwards, with no invalidation at the end of the EXEC."""
    me, writer = raw, raw.new()
    resp3(me)
    me.same(encode("CLIENT", "TRACKING", "ON"))
    me.same(encode("MULTI"))
    me.same(encode("SET", "y", "2"))
    me.same(encode("GET", "y"))
    me.same(encode("EXEC"))
    me.same(encode("PING"))
    writer.same(encode("SET", "y", "3"))
    me.same(b"", 1)
    me.same(encode("PING"))


def test_lazy_expiry_of_a_tracked_key_is_told_after_the_reply(raw):
    me = raw
    resp3(me)
    me.same(encode("CLIENT", "TRACKING", "ON"))
    me.same(encode("DEBUG", "SET-ACTIVE-EXPIRE", "0"))
    me.same(encode("MULTI"))
    me.same(encode("MSET", "x", "1", "y", "2"))
    me.same(encode("PEXPIRE", "y", "50"))
    me.same(encode("GET", "y"))
    me.same(encode("EXEC"))
    time.sleep(0.1)
    r, g = me(encode("MGET", "x", "y"), 2)
    assert sorted(map(repr, parse_all(r))) == sorted(map(repr, parse_all(g))), (r, g)
    assert g == b"*2\r\n$1\r\n1\r\n_\r\n>2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ny\r\n", g
    me.same(encode("DEBUG", "SET-ACTIVE-EXPIRE", "1"))


def test_keys_evicted_for_a_command_are_told_before_its_reply(raw):
    me = raw
    resp3(me)
    me.same(encode("CLIENT", "TRACKING", "ON"))
    me.same(encode("SETEX", "volatile-key", "10000", "x"))
    me.same(encode("GET", "volatile-key"))

    def limit(side):
        info = parse_all(me.conns()[side].request(encode("INFO", "memory")))[0].decode()
        field = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
        used = int(field["used_memory"]) - int(field["mem_not_counted_for_evict"])
        return encode("CONFIG", "SET", "maxmemory", str(used + 100 * 1024))

    each(me, limit)
    me.same(encode("CONFIG", "SET", "maxmemory-policy", "volatile-random"))
    me.same(encode("SETBIT", "big-key", "1600000", "0"))
    me.same(encode("GETBIT", "big-key", "0"), 2)
    me.same(encode("CONFIG", "SET", "maxmemory", "0"))
    me.same(encode("CONFIG", "SET", "maxmemory-policy", "noeviction"))


def test_a_flush_empties_the_table_while_nobody_tracks(raw):
    """Keys read while tracking was on stay in the table after CLIENT TRACKING OFF, until
    they change or a flush empties it, whether or not anyone tracks then."""
    me, writer = raw, raw.new()
    resp3(me)
    me.same(encode("CLIENT", "TRACKING", "ON"))
    me.same(encode("GET", "key1"))
    me.same(encode("GET", "key2"))
    me.same(encode("CLIENT", "TRACKING", "OFF"))
    writer.same(encode("SET", "key2", "x"))
    me.same(encode("FLUSHALL"))
    me.same(encode("CLIENT", "TRACKING", "ON"))
    writer.same(encode("SET", "key1", "1"))
    me.same(encode("PING"))
