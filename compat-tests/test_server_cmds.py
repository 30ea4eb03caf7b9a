"""Server commands: INFO, CONFIG GET / SET / RESETSTAT / HELP, COMMAND (COUNT, INFO, DOCS, LIST,
HELP), TIME, LASTSAVE, SHUTDOWN, DEBUG SLEEP, OBJECT, MEMORY USAGE and SLOWLOG."""

import time

import pytest

import harness
from resp import RawConnection, encode

# --- INFO -------------------------------------------------------------------------------------


def info_sections(text) -> dict:
    """INFO text as {section: {field: value}}, in order."""
    if isinstance(text, bytes):
        text = text.decode()
    sections, current = {}, None
    for line in text.split("\r\n"):
        if line.startswith("# "):
            current = sections.setdefault(line[2:], {})
        elif line and current is not None:
            k, _, v = line.partition(":")
            current[k] = v
    return sections


def info(client, *sections):
    return info_sections(client.execute_command("INFO", *sections))


@pytest.mark.parametrize("args", [(), ("default",), ("all",), ("everything",), ("server", "clients"),
                                  ("keyspace",), ("SERVER",), ("nosuch",), ("commandstats",)])
def test_info_section_headers(both, args):
    r, g = both.run("INFO", *args)
    assert list(info_sections(r)) == list(info_sections(g)), args


def test_info_fields_are_redis_fields(both, keys):
    """Every field Redis 7.0 reports, Goblin reports too, under the same name and section
    (7.2 only adds fields). Values are compared in the tests below."""
    keys("k")
    both("PING")
    r, g = info(both.redis, "everything"), info(both.goblin, "everything")
    missing = {}
    for section, fields in r.items():
        if section in ("Commandstats", "Errorstats", "Latencystats", "Keyspace"):
            continue  # one line per command / error / db: compared by value elsewhere
        gone = sorted(set(fields) - set(g.get(section, {})))
        if gone:
            missing[section] = gone
    assert not missing, f"fields Redis has and Goblin lacks: {missing}"


def test_info_server_values(both):
    g = info(both.goblin, "server")["Server"]
    assert g["redis_version"] == "7.2.4"
    assert g["tcp_port"] == str(both.pair.goblin.port)
    assert g["process_id"] == str(both.pair.goblin.proc.pid)
    assert g["redis_mode"] == "standalone"
    assert int(g["uptime_in_seconds"]) >= 0
    assert g["arch_bits"] == "64"
    r = info(both.redis, "server")["Server"]
    assert set(g) >= set(r)


def test_info_clients_values(both):
    for c in both.clients():
        lines = c.execute_command("CLIENT", "LIST").decode().strip().split("\n")
        fields = info(c, "clients")["Clients"]
        assert int(fields["connected_clients"]) == len(lines)
        assert fields["blocked_clients"] == "0"


def test_info_keyspace_values(both, keys):
    keys("a", "b", "c")
    both("EXPIRE", "a", 100)
    both("SELECT", 4)
    keys("x")
    r, g = info(both.redis, "keyspace")["Keyspace"], info(both.goblin, "keyspace")["Keyspace"]
    strip = lambda d: {k: v.rsplit(",avg_ttl=", 1)[0] for k, v in d.items()}
    assert strip(r) == strip(g) == {"db0": "keys=3,expires=1", "db4": "keys=1,expires=0"}


def test_info_stats_values(both, keys):
    both("CONFIG", "RESETSTAT")
    keys("k")
    both("ZSCORE", "k", "m")  # hit
    both("ZSCORE", "nokey", "m")  # miss
    both("EXISTS", "k")
    both("NOSUCH")
    both("ECHO")
    for i in range(10):
        both("PING")
    r, g = info(both.redis, "stats")["Stats"], info(both.goblin, "stats")["Stats"]
    for field in ("total_commands_processed", "keyspace_hits", "keyspace_misses", "expired_keys",
                  "evicted_keys", "total_error_replies", "rejected_calls", "unexpected_error_replies"):
        assert r.get(field) == g.get(field), (field, r.get(field), g.get(field))


def test_info_commandstats_and_errorstats(both):
    both("CONFIG", "RESETSTAT")
    for _ in range(3):
        both("PING")
    both("ECHO")  # rejected (arity)
    both("SELECT", 99)  # failed (run-time error)
    both("NOSUCH")
    both("CONFIG", "SET", "nosuch", "1")
    r, g = both.run("INFO", "commandstats")
    rs, gs = info_sections(r)["Commandstats"], info_sections(g)["Commandstats"]

    def counts(stats):
        out = {}
        for name, v in stats.items():
            f = dict(p.split("=") for p in v.split(","))
            out[name] = (f["calls"], f["rejected_calls"], f["failed_calls"])
        return out

    assert counts(rs) == counts(gs)
    r, g = both.run("INFO", "errorstats")
    assert info_sections(r) == info_sections(g)


def test_info_errors_and_shapes(both, both3):
    both("INFO", "a", "b", "c", "d")
    r, g = both3.run("INFO", "server")
    assert type(r) is type(g)


def test_info_in_multi(both):
    both("MULTI")
    both("INFO", "keyspace")
    both("EXEC")


def test_info_latencystats(both):
    both("CONFIG", "RESETSTAT")
    both("PING")
    r, g = info(both.redis, "latencystats"), info(both.goblin, "latencystats")
    assert set(r["Latencystats"]) == set(g["Latencystats"])
    assert "latency_percentiles_usec_ping" in g["Latencystats"]


# --- CONFIG -----------------------------------------------------------------------------------

# Parameters Goblin has, whose values at start are the same on both servers.
COMPARABLE_PARAMS = [
    "bind", "requirepass", "databases", "maxclients", "loglevel", "zset-max-listpack-entries",
    "zset-max-listpack-value", "zset-max-ziplist-entries", "zset-max-ziplist-value",
    "proto-max-bulk-len", "client-query-buffer-limit", "client-output-buffer-limit", "hz",
    "timeout", "slowlog-log-slower-than", "slowlog-max-len", "enable-debug-command", "appendonly",
    "save",
]


@pytest.mark.parametrize("param", COMPARABLE_PARAMS)
def test_config_get(both, param):
    both("CONFIG", "GET", param)


def test_config_get_echoes_requested_name(both):
    """A name without glob characters is answered under the name as the client typed it."""
    both("CONFIG", "GET", "MAXCLIENTS")
    both("CONFIG", "GET", "Hz")
    both.pairs("CONFIG", "GET", "TIMEOUT", "slowlog-MAX-len")


def test_config_get_port(both):
    r, g = both.run("CONFIG", "GET", "port")
    assert g == [b"port", str(both.pair.goblin.port).encode()]
    assert r[0] == g[0]


def test_config_get_patterns(both):
    both.pairs("CONFIG", "GET", "nosuchparam")
    both.pairs("CONFIG", "GET", "zset-*")
    both.pairs("CONFIG", "GET", "zset-max-*-entries")
    both.pairs("CONFIG", "GET", "slowlog*")
    both.pairs("CONFIG", "GET", "maxclients", "timeout")
    both.pairs("CONFIG", "GET", "hz", "hz")
    both.pairs("CONFIG", "GET")


def test_config_get_star_is_subset(both):
    r, g = both.run("CONFIG", "GET", "*")
    r, g = dict(zip(r[::2], r[1::2])), dict(zip(g[::2], g[1::2]))
    only_72 = {b"set-max-listpack-entries", b"set-max-listpack-value",  # not in 7.0
               b"cluster-announce-human-nodename", b"locale-collate"}
    assert set(g) - only_72 <= set(r), sorted(set(g) - set(r))
    for k in set(g) & {p.encode() for p in COMPARABLE_PARAMS}:
        assert r[k] == g[k], k


def test_config_get_resp3_map(both3):
    both3("CONFIG", "GET", "maxclients")
    both3.pairs("CONFIG", "GET", "zset-*")


def test_config_what_clients_ask(both):
    # redis-benchmark asks for these at start; redis-cli for databases.
    both("CONFIG", "GET", "save")
    both("CONFIG", "GET", "appendonly")
    both("CONFIG", "GET", "databases")


@pytest.mark.parametrize(
    "param,value",
    [
        ("hz", 20), ("hz", 1000), ("hz", 0), ("timeout", 300), ("maxclients", 500),
        ("loglevel", "warning"), ("loglevel", "VERBOSE"), ("slowlog-log-slower-than", -1),
        ("slowlog-max-len", 5), ("zset-max-listpack-entries", 64), ("zset-max-ziplist-entries", 32),
        ("zset-max-listpack-value", 16), ("proto-max-bulk-len", "2mb"),
        ("client-query-buffer-limit", "2gb"), ("requirepass", ""), ("proto-max-bulk-len", "1gb"),
    ],
)
def test_config_set_valid(both, param, value):
    both.config_set(param, value)
    both("CONFIG", "GET", param)
    if param.startswith("zset-max-ziplist"):
        both("CONFIG", "GET", param.replace("ziplist", "listpack"))


@pytest.mark.parametrize(
    "args",
    [
        ("hz", "abc"),
        ("hz", "-1"),
        ("hz", "1.5"),
        ("timeout", "-5"),
        ("maxclients", "0"),
        ("zset-max-listpack-entries", "x"),
        ("slowlog-max-len", "-1"),
        ("proto-max-bulk-len", "lots"),
        ("databases", "4"),
        ("enable-debug-command", "no"),
        ("nosuchparam", "1"),
        ("hz",),
        ("hz", "10", "timeout"),
        ("hz", "10", "hz", "20"),
        ("hz", "10", "nosuch", "1"),
        ("hz", "10", "timeout", "abc"),
        (),
    ],
)
def test_config_set_errors(both, args):
    both.config_set("hz", 10)  # restore whatever a partial failure changed
    both.config_set("timeout", 0)
    both("CONFIG", "SET", *args)
    both("CONFIG", "GET", "hz")
    both("CONFIG", "GET", "timeout")


def test_config_set_loglevel_error_7_2(both):
    """Redis 7.2 added the loglevel "nothing", and lists it in the error."""
    r, g = both.run("CONFIG", "SET", "loglevel", "chatty")
    prefix = "CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: "
    assert str(r) == prefix + "debug, verbose, notice, warning"
    assert str(g) == prefix + "debug, verbose, notice, warning, nothing"
    g = both.goblin
    assert g.execute_command("CONFIG", "SET", "loglevel", "nothing") == b"OK"
    assert g.execute_command("CONFIG", "SET", "loglevel", "notice") == b"OK"


def test_config_set_multiple(both):
    both.config_set("hz", 10)
    both.config_set("timeout", 0)
    both("CONFIG", "SET", "hz", 15, "timeout", 60)
    both.pairs("CONFIG", "GET", "hz", "timeout")


def test_config_resetstat(both):
    both("PING")
    both("CONFIG", "RESETSTAT")
    both("CONFIG", "RESETSTAT", "x")
    r, g = both.run("INFO", "stats")
    assert info_sections(r)["Stats"]["total_error_replies"] == info_sections(g)["Stats"]["total_error_replies"]


def test_config_help_and_errors(both):
    r, g = both.run("CONFIG", "HELP")
    assert r[0] == g[0]
    both("CONFIG", "HELP", "x")
    both("CONFIG")
    both("CONFIG", "NOSUCH")


def test_zset_encoding_threshold_config(both):
    both.config_set("zset-max-listpack-entries", 4)
    both.ok("ZADD", "small", 1, "a", 2, "b", 3, "c", 4, "d")
    both("OBJECT", "ENCODING", "small")
    both.ok("ZADD", "small", 5, "e")
    both("OBJECT", "ENCODING", "small")
    both.config_set("zset-max-listpack-value", 8)
    both.ok("ZADD", "long", 1, "a" * 9)
    both("OBJECT", "ENCODING", "long")


# --- COMMAND ----------------------------------------------------------------------------------


def command_table(client):
    return {e[0]: e for e in client.execute_command("COMMAND")}


def goblin_command_names(both):
    return [n.decode() for n in both.goblin.execute_command("COMMAND", "LIST")]


def test_command_count(both):
    for c in both.clients():
        assert c.execute_command("COMMAND", "COUNT") == len(command_table(c))
    both("COMMAND", "COUNT", "x")


# Subcommands Redis 7.2 added (Goblin follows 7.2; the reference server is 7.0).
ADDED_IN_72 = {b"client|setinfo", b"client|no-touch", b"cluster|myshardid"}
# Commands whose flags Redis 7.2 changed: blocking commands and WAIT run in scripts (no
# `noscript`; compared with Redis 7.2.4 in test_scripting_suite.py).
CHANGED_IN_72 = {b"blpop", b"brpop", b"blmove", b"brpoplpush", b"wait"}
# Hash-field expiry (Redis 7.4), compared with Redis 7.4 in test_hash_field_expire.py.
ADDED_IN_74 = {b"hexpire", b"hpexpire", b"hexpireat", b"hpexpireat", b"httl", b"hpttl",
               b"hexpiretime", b"hpexpiretime", b"hpersist"}
# Commands of Redis 8 (pinned in their own tests: no Redis 8 is at hand); counted with 7.4's
# wherever a comparison with Redis 7.0 must leave out what it lacks.
ADDED_IN_8 = {b"hgetex", b"hsetex", b"hgetdel", b"digest", b"delex", b"msetex", b"sdiffcard", b"sunioncard",
              b"lmovem", b"blmovem", b"increx", b"hotkeys", b"hotkeys|start", b"hotkeys|stop",
              b"hotkeys|get", b"hotkeys|reset", b"hotkeys|help"}
ADDED_IN_74 |= ADDED_IN_8
# WAITAOF (Redis 7.2; compared with Redis 7.2.4 in test_waitaof.py), counted with 7.4's for
# the same reason.
ADDED_IN_74 |= {b"waitaof"}


def test_command_list_names_are_redis_names(both):
    redis_names = set(both.redis.execute_command("COMMAND", "LIST")) | ADDED_IN_72 | ADDED_IN_74
    names = set(both.goblin.execute_command("COMMAND", "LIST"))
    foreign = {n for n in names - redis_names if not n.lower().startswith(b"goblin.")}
    assert not foreign, foreign


def test_command_list_filterby(both):
    for args in (("FILTERBY", "PATTERN", "expire*"), ("FILTERBY", "PATTERN", "p*expire*"),
                 ("FILTERBY", "PATTERN", "client*")):
        r, g = both.run("COMMAND", "LIST", *args)
        assert set(r) | ADDED_IN_72 >= set(g) and len(g) > 0, args
    both("COMMAND", "LIST", "FILTERBY", "PATTERN")
    both("COMMAND", "LIST", "FILTERBY", "NOSUCH", "x")
    both("COMMAND", "LIST", "FOO")


def _info_core(entry):
    """name, arity, flags (as a set), first key, last key, step."""
    name, arity, flags, first, last, step = entry[:6]
    return name, arity, set(flags), first, last, step


GENERIC = ["ping", "echo", "quit", "reset", "auth", "hello", "select", "client", "del", "unlink",
           "exists", "touch", "type", "rename", "renamenx", "copy", "move", "keys", "scan",
           "randomkey", "dbsize", "flushdb", "flushall", "swapdb", "object", "memory", "expire",
           "pexpire", "expireat", "pexpireat", "ttl", "pttl", "expiretime", "pexpiretime",
           "persist", "multi", "exec", "discard", "watch", "unwatch", "info", "config", "command",
           "time", "lastsave", "shutdown", "debug", "slowlog"]


@pytest.mark.parametrize("name", GENERIC)
def test_command_info(both, name):
    r, g = both.run("COMMAND", "INFO", name)
    assert len(r) == len(g) == 1 and g[0] is not None, (name, g)
    assert _info_core(r[0]) == _info_core(g[0])


def test_command_info_subcommands(both):
    for name in ("client", "config", "object", "slowlog", "command", "memory"):
        r = {e[0]: _info_core(e) for e in both.redis.execute_command("COMMAND", "INFO", name)[0][9]}
        g = {e[0]: _info_core(e) for e in both.goblin.execute_command("COMMAND", "INFO", name)[0][9]}
        for sub, core in g.items():
            if sub in ADDED_IN_72:
                continue
            assert sub in r, sub
            assert r[sub] == core, (sub, r[sub], core)


def test_command_info_edge_cases(both):
    both("COMMAND", "INFO", "nosuchcommand")
    both("COMMAND", "INFO", "PING", "nosuch", "ECHO")
    r, g = both.run("COMMAND", "INFO")  # every command
    assert {e[0] for e in g} <= {e[0] for e in r} | ADDED_IN_74 | {e[0] for e in g if e[0].startswith(b"goblin.")}


def test_command_whole_table_consistent(both):
    """Every command in Goblin's COMMAND reply matches Redis's entry. (Sorted-set commands are
    left to the sorted-set suite: 7.2 changed some of them, e.g. ZRANK's arity.)"""
    r, g = command_table(both.redis), command_table(both.goblin)
    for name, entry in g.items():
        if name.startswith((b"goblin.", b"z", b"bz")) or name in ADDED_IN_74 | CHANGED_IN_72:
            continue
        assert _info_core(r[name]) == _info_core(entry), name


def test_command_docs(both):
    for name in ("ping", "expire", "scan", "client", "zadd"):
        r, g = both.run("COMMAND", "DOCS", name)
        rd, gd = dict(zip(r[::2], r[1::2])), dict(zip(g[::2], g[1::2]))
        assert set(rd) == set(gd), name
        rdoc = dict(zip(rd[name.encode()][::2], rd[name.encode()][1::2]))
        gdoc = dict(zip(gd[name.encode()][::2], gd[name.encode()][1::2]))
        assert gdoc[b"summary"] and gdoc[b"group"] == rdoc[b"group"], name
        assert b"arguments" in gdoc or b"arguments" not in rdoc, name
    both("COMMAND", "DOCS", "nosuch")


def test_command_docs_resp3(both3):
    r, g = both3.run("COMMAND", "DOCS", "ping")
    assert set(r) == set(g)


def test_command_help_and_errors(both):
    r, g = both.run("COMMAND", "HELP")
    assert r[0] == g[0]
    both("COMMAND", "NOSUCH")
    both("COMMAND", "HELP", "x")


# --- TIME / LASTSAVE --------------------------------------------------------------------------


def test_time(both):
    for c in both.clients():
        secs, usecs = c.execute_command("TIME")
        assert abs(int(secs) - time.time()) < 5
        assert 0 <= int(usecs) < 1000000
    both("TIME", "x")


def test_lastsave(both):
    r, g = both.run("LASTSAVE")
    assert isinstance(g, int) and 0 < g <= time.time() + 1
    both("LASTSAVE", "x")


# --- SHUTDOWN (each on a pair of its own) -----------------------------------------------------


@pytest.mark.parametrize("args", [(), ("NOSAVE",), ("NOW", "NOSAVE", "FORCE")])
def test_shutdown(tmp_path_factory, args):
    pair = harness.start_pair(tmp_path_factory)
    try:
        outcomes = []
        for s in pair:
            c = RawConnection(s.port)
            c.send(encode("SHUTDOWN", *args))
            closed = c.is_closed(wait=10)
            code = s.proc.wait(10)
            outcomes.append((closed, c.buf, code))
        assert outcomes[0] == outcomes[1]
        assert outcomes[1][0] and outcomes[1][2] == 0
    finally:
        pair.stop()


def test_shutdown_errors(both):
    both("SHUTDOWN", "MAYBE")
    both("SHUTDOWN", "ABORT")
    both("SHUTDOWN", "SAVE", "NOSAVE")


def test_shutdown_not_allowed_in_multi(both):
    both("MULTI")
    both("SHUTDOWN")
    both("DISCARD")
    both("PING")


# --- DEBUG SLEEP ------------------------------------------------------------------------------


def test_debug_sleep(both):
    both("DEBUG", "SLEEP", 0)
    both("DEBUG", "SLEEP")
    both("DEBUG")
    for c in both.clients():
        t0 = time.monotonic()
        assert c.execute_command("DEBUG", "SLEEP", "0.3") == b"OK"
        assert time.monotonic() - t0 >= 0.29


def test_debug_sleep_lenient_number(both):
    # Redis reads the time with strtod(): what does not parse is 0.
    both("DEBUG", "SLEEP", "abc")
    both("DEBUG", "SLEEP", "0.01xyz")


def test_debug_sleep_blocks_the_server(both):
    """DEBUG SLEEP stalls the whole (single-threaded) server, as in Redis."""
    for s in both.pair:
        sleeper = RawConnection(s.port)
        other = RawConnection(s.port)
        sleeper.send(encode("DEBUG", "SLEEP", "0.4"))
        time.sleep(0.05)
        t0 = time.monotonic()
        assert other.request(encode("PING")) == b"+PONG\r\n"
        waited = time.monotonic() - t0
        assert sleeper.read_replies(1) == b"+OK\r\n"
        assert waited >= 0.25, (s, waited)
        sleeper.close()
        other.close()


# --- OBJECT / MEMORY --------------------------------------------------------------------------


def test_object(both):
    both.ok("ZADD", "z", 1, "a", 2, "b")
    both("OBJECT", "ENCODING", "z")
    both("OBJECT", "ENCODING", "nokey")
    both("OBJECT", "REFCOUNT", "z")
    both("OBJECT", "REFCOUNT", "nokey")
    both("OBJECT", "IDLETIME", "z")
    both("OBJECT", "IDLETIME", "nokey")
    both("OBJECT", "FREQ", "z")  # not under an LFU policy: an error
    both("OBJECT", "FREQ", "nokey")
    both("OBJECT", "ENCODING")
    both("OBJECT", "ENCODING", "z", "extra")
    both("OBJECT", "NOSUCH", "z")
    both("OBJECT")
    r, g = both.run("OBJECT", "HELP")
    assert r[0] == g[0]


def test_object_encoding_sizes(both):
    both.ok("ZADD", "small", *[x for i in range(128) for x in (i, f"m{i}")])
    both("OBJECT", "ENCODING", "small")
    both.ok("ZADD", "big", *[x for i in range(129) for x in (i, f"m{i}")])
    both("OBJECT", "ENCODING", "big")
    both.ok("ZADD", "longmember", 1, "x" * 65)
    both("OBJECT", "ENCODING", "longmember")
    both.ok("ZADD", "edge", 1, "x" * 64)
    both("OBJECT", "ENCODING", "edge")


def idle(both, key):
    """OBJECT IDLETIME on both, as "fresh" (0) or "idle" (1 s or more): the LRU clock's
    resolution makes the exact second differ."""
    r, g = both.run("OBJECT", "IDLETIME", key)
    return ("fresh" if r == 0 else "idle"), ("fresh" if g == 0 else "idle")


def test_object_idletime(both):
    both.ok("ZADD", "z", 1, "a")
    assert idle(both, "z") == ("fresh", "fresh")
    time.sleep(1.2)  # real time: Redis updates its LRU clock in its cron
    assert idle(both, "z") == ("idle", "idle")
    both("ZSCORE", "z", "a")  # a read touches the key
    assert idle(both, "z") == ("fresh", "fresh")
    time.sleep(1.2)  # real time: Redis updates its LRU clock in its cron
    for cmd in (("EXISTS", "z"), ("TYPE", "z"), ("OBJECT", "ENCODING", "z"), ("TTL", "z")):
        both(*cmd)  # these do not touch
        assert idle(both, "z") == ("idle", "idle"), cmd
    both("TOUCH", "z")
    assert idle(both, "z") == ("fresh", "fresh")


def test_memory_usage(both):
    both.ok("ZADD", "z", *[x for i in range(50) for x in (i, f"member-{i}")])
    r, g = both.run("MEMORY", "USAGE", "z")
    assert isinstance(g, int) and g > 50 * 8
    both("MEMORY", "USAGE", "nokey")
    r, g = both.run("MEMORY", "USAGE", "z", "SAMPLES", 5)
    assert isinstance(g, int)
    r, g = both.run("MEMORY", "USAGE", "z", "SAMPLES", 0)
    assert isinstance(g, int)
    both("MEMORY", "USAGE", "z", "SAMPLES")
    both("MEMORY", "USAGE", "z", "SAMPLES", "abc")
    both("MEMORY", "USAGE", "z", "FOO", 1)
    both("MEMORY", "USAGE")
    both("MEMORY")
    r, g = both.run("MEMORY", "HELP")
    assert r[0] == g[0]


def test_memory_usage_negative_samples(both):
    both.ok("ZADD", "z", 1, "a")
    both("MEMORY", "USAGE", "z", "SAMPLES", -1)


# --- SLOWLOG ----------------------------------------------------------------------------------


def slowlog_shape(entries):
    """What both servers must agree on: the order, args and client names (not ids, times or
    durations)."""
    return [(e[3], e[5]) for e in entries]


def test_slowlog(both):
    both.config_set("slowlog-log-slower-than", 0)
    both("SLOWLOG", "RESET")
    both("CLIENT", "SETNAME", "slowpoke")
    both("ECHO", "hello")
    both.ok("ZADD", "k", 1, "m")
    both("EXISTS", "k", "nokey")
    r, g = both.run("SLOWLOG", "GET")
    assert slowlog_shape(r) == slowlog_shape(g)
    for e in g:
        assert len(e) == 6 and isinstance(e[0], int) and isinstance(e[2], int)
        assert abs(e[1] - time.time()) < 60
        assert e[4].startswith(b"127.0.0.1:")
    both("SLOWLOG", "LEN")
    r, g = both.run("SLOWLOG", "GET", 2)
    assert slowlog_shape(r) == slowlog_shape(g) and len(g) == 2
    r, g = both.run("SLOWLOG", "GET", -1)
    assert slowlog_shape(r) == slowlog_shape(g)
    both("SLOWLOG", "GET", 0)
    both("SLOWLOG", "RESET")
    both("SLOWLOG", "LEN")
    both("SLOWLOG", "RESET", "x")
    both("SLOWLOG", "NOSUCH")
    both("SLOWLOG")
    r, g = both.run("SLOWLOG", "HELP")
    assert r[0] == g[0]


def test_slowlog_redacts_sensitive_configs(both):
    """Redis's unit/slowlog 'Certain commands are omitted that contain sensitive
    information': CONFIG SET of requirepass, masterauth and masteruser is logged with
    `(redacted)` for the value (Goblin redacted only requirepass)."""
    both.config_set("slowlog-log-slower-than", 0)
    both("SLOWLOG", "RESET")
    both("CONFIG", "SET", "masterauth", "")
    both("CONFIG", "SET", "MASTERUSER", "")
    both("CONFIG", "SET", "requirepass", "", "maxmemory-samples", "5")
    both.config_set("slowlog-log-slower-than", -1)
    r, g = both.run("SLOWLOG", "GET")
    assert slowlog_shape(r) == slowlog_shape(g)
    assert [e[3] for e in g][:3] == [
        [b"CONFIG", b"SET", b"requirepass", b"(redacted)", b"maxmemory-samples", b"5"],
        [b"CONFIG", b"SET", b"MASTERUSER", b"(redacted)"],
        [b"CONFIG", b"SET", b"masterauth", b"(redacted)"],
    ]


def test_slowlog_get_count_errors(both):
    both("SLOWLOG", "GET", "abc")
    both("SLOWLOG", "GET", -2)


def test_slowlog_get_too_many_args(both):
    both("SLOWLOG", "GET", 1, 2)


def test_slowlog_argument_truncation(both):
    both.config_set("slowlog-log-slower-than", 0)
    both("SLOWLOG", "RESET")
    both("ECHO", "x" * 300)
    both("DEL", *[f"k{i}" for i in range(40)])
    r, g = both.run("SLOWLOG", "GET", 3)
    assert slowlog_shape(r) == slowlog_shape(g)


def test_slowlog_max_len_and_threshold(both):
    both.config_set("slowlog-log-slower-than", 0)
    both.config_set("slowlog-max-len", 3)
    both("SLOWLOG", "RESET")
    for i in range(10):
        both("ECHO", str(i))
    both("SLOWLOG", "LEN")
    r, g = both.run("SLOWLOG", "GET")
    assert slowlog_shape(r) == slowlog_shape(g)
    both.config_set("slowlog-log-slower-than", 1000000)
    both("SLOWLOG", "RESET")
    both("PING")
    both("SLOWLOG", "LEN")
    both("DEBUG", "SLEEP", 0)
    both.config_set("slowlog-log-slower-than", 100000)
    both("DEBUG", "SLEEP", "0.15")
    r, g = both.run("SLOWLOG", "GET")
    assert slowlog_shape(r) == slowlog_shape(g)
    assert g[0][2] >= 150000


def test_slowlog_exec_logs_inner_commands(both):
    both.config_set("slowlog-log-slower-than", 0)
    both("SLOWLOG", "RESET")
    both("MULTI")
    both("ECHO", "inside")
    both("PING")
    both("EXEC")
    r, g = both.run("SLOWLOG", "GET")
    assert slowlog_shape(r) == slowlog_shape(g)


def test_slowlog_resp3(both3):
    both3.config_set("slowlog-log-slower-than", 0)
    both3("SLOWLOG", "RESET")
    both3("ECHO", "x")
    r, g = both3.run("SLOWLOG", "GET")
    assert slowlog_shape(r) == slowlog_shape(g)
