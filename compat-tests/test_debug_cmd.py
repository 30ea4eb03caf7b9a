"""DEBUG's testing hooks against Redis: DIGEST and DIGEST-VALUE (the same SHA-1 digests for
the same data, every type and encoding), PROTOCOL, ERROR, POPULATE, RELOAD's options,
CHANGE-REPL-ID, QUICKLIST-PACKED-THRESHOLD, SET-SKIP-CHECKSUM-VALIDATION, PAUSE-CRON, and the
test-only directives Redis's own suite starts servers with.

The reference is Debian's Redis 7.0, whose zset digest prints scores with %.17g where 7.2
prints the shortest form: the scores here print the same either way (Goblin's digest of 0.1
is pinned to 7.2.4's in the server's unit tests)."""

import re
import signal
import time

import pytest
import redis

from harness import info_of
from test_aof import start
from test_aof_deletions import KINDS, deletions
from test_persistence import procs  # noqa: F401 (the fixture)

ZERO = b"0" * 40


def fill(both):
    both("SET", "s", "hello")
    both("SET", "n", 12345)
    both("SET", "big", "x" * 5000)
    both("RPUSH", "l", "a", "b", 1, 2, "a")
    both("RPUSH", "lbig", *[f"e{i}" for i in range(600)])
    both("SADD", "si", 1, 2, 3, -7)
    both("SADD", "ss", "a", "b", "c")
    both("SADD", "sbig", *[f"m{i}" for i in range(300)])
    both("ZADD", "z", 1, "a", 2.5, "b", -3, "c", 1e20, "d", 12, 7)
    both("ZADD", "zbig", *[x for i in range(300) for x in (i * 1.5, f"m{i}")])
    both("HSET", "h", "f", "v", "f2", 2)
    both("HSET", "hbig", *[x for i in range(300) for x in (f"f{i}", f"v{i}")])
    both("SET", "e", "x", "EX", 100)
    both("XADD", "st", "1-1", "a", 1, "b", "x")
    both("XADD", "st", "2-5", "c", 300)
    both("SELECT", 3)
    both("SET", "x", "y")
    both("SELECT", 0)


KEYS = ("s", "n", "big", "l", "lbig", "si", "ss", "sbig", "z", "zbig", "h", "hbig", "e", "st", "nokey")


def test_digest_of_every_type(both):
    assert both("DEBUG", "DIGEST") == ZERO
    fill(both)
    both("DEBUG", "DIGEST")
    for key in KEYS:
        both("DEBUG", "DIGEST-VALUE", key)
    both("DEBUG", "DIGEST-VALUE", *KEYS)
    both("DEBUG", "DIGEST-VALUE")
    # Order matters for a list, not for a set; an expiry counts, its time does not.
    both("LPUSH", "l", "z")
    both("SADD", "ss", "d")
    both("EXPIRE", "e", 5000)
    both("PERSIST", "s")
    both("DEBUG", "DIGEST")
    both("SELECT", 3)
    both("DEBUG", "DIGEST-VALUE", "x", "s")


def test_digest_counts_a_logically_expired_key(both):
    both("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        both("SET", "k", "v", "PX", 1)
        time.sleep(0.05)
        both("DEBUG", "DIGEST-VALUE", "k")
        both("DEBUG", "DIGEST")
    finally:
        both("DEBUG", "SET-ACTIVE-EXPIRE", 1)


def test_protocol_types(raw):
    for proto in (b"2", b"3"):
        raw(b"HELLO " + proto + b"\r\n")
        for name in (b"string", b"integer", b"double", b"bignum", b"null", b"array", b"set",
                     b"map", b"true", b"false", b"verbatim", b"nosuch"):
            raw.same(b"DEBUG PROTOCOL " + name + b"\r\n")
        raw.same(b"DEBUG PROTOCOL attrib\r\n")
    raw(b"HELLO 2\r\n")
    raw.same(b"DEBUG PROTOCOL push\r\n")


def test_protocol_push_follows_the_reply_as_in_7_2(raw):
    """Redis 7.2 sends a push a command makes after the command's reply (7.0 before it)."""
    raw(b"HELLO 3\r\n")
    _, g = raw(b"DEBUG PROTOCOL push\r\n", 2)
    assert g == (b"$40\r\nSome real reply following the push reply\r\n"
                 b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n")


def test_error_is_the_line_given(raw, both):
    raw.same(b"DEBUG ERROR \"CUSTOM message\"\r\n")
    raw.same(b"DEBUG ERROR \"two\\r\\nlines\"\r\n")
    raw.same(b"DEBUG ERROR\r\n")
    # Not counted as a failed call, as Redis does not count it.
    r, g = both.run("INFO", "errorstats")
    assert (b"CUSTOM" in r) == (b"CUSTOM" in g)


def test_populate(both):
    both("SET", "key:1", "mine")
    both.ok("DEBUG", "POPULATE", 5)
    assert sorted(both.run("KEYS", "key:*")[0]) == sorted(both.run("KEYS", "key:*")[1])
    for i in range(5):
        both("GET", f"key:{i}")
    both.ok("DEBUG", "POPULATE", 3, "pfx", 12)
    both.ok("DEBUG", "POPULATE", 2, "short", 3)
    for key in ("pfx:0", "pfx:2", "short:1"):
        both("GET", key)
    both.ok("DEBUG", "POPULATE", 0)
    both.ok("DEBUG", "POPULATE", 1, "p" * 200)
    both("DBSIZE")
    both.err("DEBUG", "POPULATE", -1)
    both.err("DEBUG", "POPULATE", "x")
    both.err("DEBUG", "POPULATE", 1, "p", -5)
    both.err("DEBUG", "POPULATE", 1, "p", 1, "extra")
    both("DEBUG", "DIGEST")


def test_reload_options(both):
    fill(both)
    both.ok("DEBUG", "RELOAD")
    both("DEBUG", "DIGEST")
    both("SET", "added", "after")
    both("SET", "s", "changed")
    # NOFLUSH MERGE: the file's keys are added, the file's wins where both have one.
    both.ok("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")
    both("GET", "added")
    both("GET", "s")
    both("DEBUG", "DIGEST")
    both.ok("DEBUG", "RELOAD", "nosave")
    both("EXISTS", "added")
    both.err("DEBUG", "RELOAD", "FAST")


def test_change_repl_id(both):
    before = [info_of(c, "replication") for c in both.clients()]
    both.ok("DEBUG", "CHANGE-REPL-ID")
    after = [info_of(c, "replication") for c in both.clients()]
    for b, a in zip(before, after):
        assert a["master_replid"] != b["master_replid"]
        assert a["master_replid2"] == 0  # forty zeros
        assert a["second_repl_offset"] == -1
    both.err("DEBUG", "CHANGE-REPL-ID", "x")


def test_quicklist_packed_threshold(both):
    both.config_set("list-max-listpack-size", 4)
    try:
        both.ok("DEBUG", "QUICKLIST-PACKED-THRESHOLD", 100)
        both("RPUSH", "l", "a", "x" * 200, "b", "y" * 100, "c")
        both("LRANGE", "l", 0, -1)
        for c in both.clients():
            line = c.execute_command("DEBUG", "OBJECT", "l").decode()
            # The two elements of 100 bytes and more are plain nodes of their own.
            assert " ql_nodes:5 " in line, line
        both("LINSERT", "l", "BEFORE", "b", "z" * 300)
        both("LRANGE", "l", 0, -1)
        both("LSET", "l", 0, "w" * 150)
        both("LRANGE", "l", 0, -1)
        both.err("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb")
        both.err("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "lots")
    finally:
        both.ok("DEBUG", "QUICKLIST-PACKED-THRESHOLD", 0)


def test_skip_checksum_validation(both):
    both("SET", "k", "value")
    payload = both.clients()[0].dump("k")
    broken = payload[:-1] + bytes([payload[-1] ^ 0xFF])
    both.err("RESTORE", "k2", 0, broken)
    try:
        both.ok("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 1)
        both.ok("RESTORE", "k2", 0, broken)
        both("GET", "k2")
    finally:
        both.ok("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", 0)
    both.err("RESTORE", "k3", 0, broken)


def test_pause_cron_stops_active_expiry(both):
    try:
        both.ok("DEBUG", "PAUSE-CRON", 1)
        both("SET", "k", "v", "PX", 20)
        time.sleep(0.4)
        # Logically expired, but no cycle removed it.
        both("DBSIZE")
    finally:
        both.ok("DEBUG", "PAUSE-CRON", 0)
    deadline = time.monotonic() + 10
    while any(c.dbsize() for c in both.clients()) and time.monotonic() < deadline:
        time.sleep(0.05)
    both("DBSIZE")


def test_hidden_directives(both):
    for name, value in (("use-exit-on-panic", "yes"), ("key-load-delay", "-10"),
                        ("rdb-key-save-delay", "100"), ("lazyfree-lazy-server-del", "yes")):
        both("CONFIG", "GET", name)
        both.config_set(name, value)
        both("CONFIG", "GET", name)
    both.err("CONFIG", "SET", "key-load-delay", "x")
    both.err("CONFIG", "SET", "use-exit-on-panic", "maybe")
    # Hidden ones are not listed by a pattern.
    for c in both.clients():
        names = c.execute_command("CONFIG", "GET", "*")[::2]
        assert b"key-load-delay" not in names and b"use-exit-on-panic" not in names
        assert b"lazyfree-lazy-server-del" in names


@pytest.mark.parametrize("lazy", ["no", "yes"])
def test_server_deletions_propagate_per_lazyfree_lazy_server_del(procs, tmp_path, lazy):
    got, version = {}, {}
    for kind in KINDS:
        p = start(procs, kind, tmp_path / kind, "--appendfsync", "always",
                  "--lazyfree-lazy-server-del", lazy)
        c = p.client()
        c.set("src", "v")
        payload = c.dump("src")
        c.set("old", "1")
        c.restore("old", int(time.time() * 1000) - 5000, payload, replace=True, absttl=True)
        c.sadd("set", "a", "b", "c")
        c.spop("set", 3)
        c.set("fence", "1")
        got[kind] = deletions(tmp_path / kind)
        version[kind] = c.info("server")["redis_version"]
    verb = b"UNLINK" if lazy == "yes" else b"DEL"
    assert got["goblin"] == [(0, verb, b"old"), (0, verb, b"set")]
    # Redis 7.0 propagates these as DEL whatever the directive says; 7.2 as Goblin does.
    if lazy == "no" or not version["redis"].startswith("7.0."):
        assert got["redis"] == got["goblin"]


def test_key_load_delay_slows_a_load(procs, tmp_path):
    """A server started with key-load-delay takes that long per key to load its snapshot."""
    for kind in KINDS:
        w = tmp_path / kind
        p = start(procs, kind, w, "--appendonly", "no", "--enable-debug-command", "yes")
        c = p.client()
        c.execute_command("DEBUG", "POPULATE", 500)
        c.save()
        p.stop()
        p.args += ["--key-load-delay", "2000"]
        began = time.monotonic()
        p.start()
        assert time.monotonic() - began > 0.9, kind
        assert p.client().dbsize() == 500
        p.kill9()


def test_start_up_lines_a_launcher_waits_for(procs, tmp_path):
    """Redis's test framework waits for " PID: <pid>" (the logo) and then "Server
    initialized" in the log; without the logo one "Running mode=" line stands in."""
    for kind in KINDS:
        for logo in ("yes", "no"):
            p = start(procs, kind, tmp_path / f"{kind}-{logo}", "--appendonly", "no",
                      "--always-show-logo", logo)
            out = p.output()
            pid = p.proc.pid
            if logo == "yes":
                assert re.search(rf" PID: {pid}\b.*Server initialized.*Ready to accept connections",
                                 out, re.S), (kind, out)
            else:
                assert f"Running mode=standalone, port={p.port}." in out, (kind, out)
                assert " PID: " not in out
            # 7.0 logs the line at warning level, 7.2 at notice; Goblin follows 7.2.
            assert re.search(rf"^{pid}:C .* [*#] Configuration loaded$", out, re.M), (kind, out)
            if kind == "goblin":
                assert re.search(rf"^{pid}:C .* \* Configuration loaded$", out, re.M), out
                assert f"{pid}:M " in out and "* Ready to accept connections tcp\n" in out
            assert p.client().config_get("always-show-logo") == {"always-show-logo": logo}
            p.kill9()


def test_crash_log_enabled_no_dies_of_the_signal_without_a_report(procs, tmp_path):
    """crash-log-enabled no, given at start or by CONFIG SET: the fatal signal keeps its
    default action, the process dies of it and the log has no report; turned back on,
    the report is written again."""
    for kind in KINDS:
        for how in ("start", "config", "back-on"):
            args = ["--crash-log-enabled", "no"] if how == "start" else []
            p = start(procs, kind, tmp_path / f"{kind}-{how}", "--appendonly", "no",
                      "--enable-debug-command", "yes", "--crash-memcheck-enabled", "no", *args)
            c = p.client()
            if how != "start":
                c.config_set("crash-log-enabled", "no")
            if how == "back-on":
                c.config_set("crash-log-enabled", "yes")
            with pytest.raises(redis.ConnectionError):
                c.execute_command("DEBUG", "SEGFAULT")
            assert p.wait() == -signal.SIGSEGV, kind
            reported = "crashed by signal: 11" in p.output()
            assert reported == (how == "back-on"), (kind, how, p.output()[-2000:])


def test_segfault_writes_a_crash_report_and_dies_of_the_signal(procs, tmp_path):
    for kind in KINDS:
        for exit_on_panic in ("no", "yes"):
            p = start(procs, kind, tmp_path / f"{kind}-{exit_on_panic}", "--appendonly", "no",
                      "--enable-debug-command", "yes", "--crash-memcheck-enabled", "no",
                      "--use-exit-on-panic", exit_on_panic)
            with pytest.raises(redis.ConnectionError):
                p.client().execute_command("DEBUG", "SEGFAULT")
            # A signal's crash dies of the signal even with use-exit-on-panic.
            assert p.wait() == -signal.SIGSEGV, kind
            out = p.output()
            for line in ("=== REDIS BUG REPORT START", "crashed by signal: 11",
                         "------ STACK TRACE ------", "=== REDIS BUG REPORT END"):
                assert line in out, (kind, line, out[-3000:])
