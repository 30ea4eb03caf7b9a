"""Functions beside Redis: FUNCTION LOAD [REPLACE] with its metadata line and the
load-time environment, redis.register_function's forms and errors, FCALL / FCALL_RO with
function flags, FUNCTION DELETE / FLUSH / LIST (RESP2 and RESP3 shapes) / STATS / DUMP /
RESTORE / KILL / HELP, DUMP payloads restored across the two servers, and libraries
carried by RDB files both ways and by the AOF."""

import time

import pytest
import redis as redispy

from harness import info_of, make_client, start_pair


def lib(name: str, body: str, engine: str = "lua") -> str:
    return f"#!{engine} name={name}\n{body}"


@pytest.fixture
def fboth(both):
    """`both` with no libraries on either server before and after."""
    both("FUNCTION", "FLUSH")
    yield both
    both("FUNCTION", "FLUSH")


@pytest.fixture
def fboth3(both3):
    both3("FUNCTION", "FLUSH")
    yield both3
    both3("FUNCTION", "FLUSH")


MAIN = lib(
    "mylib",
    "local counter = 0\n"
    "redis.register_function('set_it', function(keys, args) return redis.call('set', keys[1], args[1]) end)\n"
    "redis.register_function{function_name='get_it', callback=function(keys) return redis.call('get', keys[1]) end,"
    " flags={'no-writes'}, description='reads a key'}\n"
    "redis.register_function('echo', function(keys, args) return {keys, args} end)\n"
    "redis.register_function('count', function() counter = counter + 1; return counter end)\n"
    "redis.register_function('fail', function() error('boom') end)\n"
    "redis.register_function('bad_global', function() return KEYS end)\n"
    "redis.register_function('set_global', function() x = 5 end)\n"
    "redis.register_function('unknown_cmd', function() return redis.call('nosuch') end)\n"
    "redis.register_function('no_register', function() return redis.register_function('x', function() end) end)\n"
    "redis.register_function('err_reply', function() return redis.error_reply('MY err') end)\n"
    "redis.register_function('lib_string', function() return string.rep('ab', 3) end)\n"
    "redis.register_function{function_name='ro_writes', callback=function() return redis.call('set', 'a', 'b') end,"
    " flags={'no-writes'}}\n"
    "redis.register_function{function_name='oom_ok', callback=function() return redis.call('set', 'a', 'b') end,"
    " flags={'allow-oom'}}\n"
    "redis.register_function('resp3', function() redis.setresp(3); return redis.call('hgetall', 'h') end)\n",
)


def test_load_and_call(fboth):
    assert fboth("FUNCTION", "LOAD", MAIN) == b"mylib"
    fboth("FCALL", "set_it", 1, "k", "v")
    fboth("FCALL", "get_it", 1, "k")
    fboth("FCALL", "GET_IT", 1, "k")
    fboth("FCALL_RO", "get_it", 1, "k")
    fboth("FCALL", "echo", 2, "a", "b", "c", "d")
    fboth("FCALL", "echo", 0)
    fboth("FCALL", "count", 0)
    fboth("FCALL", "count", 0)
    for name in ["fail", "bad_global", "set_global", "unknown_cmd", "no_register", "err_reply",
                 "lib_string", "ro_writes", "oom_ok"]:
        fboth("FCALL", name, 0)
    fboth("HSET", "h", "f", "v")
    fboth("FCALL", "resp3", 0)


def test_fcall_errors(fboth):
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth("FCALL", "nosuch", 0)
    fboth("FCALL", "echo", "x")
    fboth("FCALL", "echo", 5)
    fboth("FCALL", "echo", -1)
    fboth("FCALL", "echo")
    fboth("FCALL_RO", "set_it", 1, "k", "v")
    fboth("FCALL_RO", "count", 0)
    fboth("FCALL_RO", "ro_writes", 0)
    fboth("FCALL_RO", "nosuch", 0)
    # Inside a script, FCALL and FUNCTION are refused.
    fboth("EVAL", "return redis.call('fcall', 'count', 0)", 0)
    fboth("EVAL", "return redis.call('function', 'list')", 0)


@pytest.mark.parametrize(
    "code",
    [
        lib("l2", "return string.len('x')"),
        lib("l2", "local x = redis.call('get', 'x')"),
        lib("l2", "redis.setresp(3)"),
        lib("l2", "redis.log(redis.LOG_WARNING, 'hi') return 1"),
        lib("l2", "error('boom')"),
        lib("l2", "x = 1"),
        lib("l2", "local x = nil + 1"),
        lib("l2", "return ("),
        lib("l2", "local a = redis.REDIS_VERSION_NUM"),
        lib("l2", "while true do end"),
        "#!lua name=l2",
        "#!lua\n",
        "#!lua name=l2 foo=bar\n",
        "#!lua name=a name=b\n",
        "#!lua NAME=l2\nredis.register_function('f', function() return 1 end)",
        "#!LUA name=l2\nredis.register_function('f', function() return 1 end)",
        '#!lua name="l 2"\n',
        "#!lua name='l2'x\n",
        "#!lu name=a\n",
        "#!lua name=a-b\n",
        "#!lua name=\n",
        "lua name=a\n",
        "#!lua name=nul\x00x\nredis.register_function('f', function() end)",
        "#!lua name=nul\nredis.register_function('f\x00g', function() end)",
        "",
        lib("l2", "redis.register_function('f-4', function() return 1 end)"),
        lib("l2", "redis.register_function('f4')"),
        lib("l2", "redis.register_function(1, 2)"),
        lib("l2", "redis.register_function('a', 2)"),
        lib("l2", "redis.register_function{function_name='a', callback=1}"),
        lib("l2", "redis.register_function{function_name='a', callback=function() end, flags={'bad'}}"),
        lib("l2", "redis.register_function{function_name='a', callback=function() end, flags={1}}"),
        lib("l2", "redis.register_function{function_name='a', callback=function() end, flags='x'}"),
        lib("l2", "redis.register_function{function_name='a', callback=function() end, foo=1}"),
        lib("l2", "redis.register_function{function_name='a'}"),
        lib("l2", "redis.register_function{callback=function() end}"),
        lib("l2", "redis.register_function{function_name={}, callback=function() end}"),
        lib("l2", "redis.register_function{[1]=1}"),
        lib("l2", "redis.register_function{function_name='a', callback=function() end, description={}}"),
        lib("l2", "redis.register_function()"),
        lib("l2", "redis.register_function(1)"),
        lib("l2", "redis.register_function(1, 2, 3)"),
        lib("l2", "redis.register_function('a', function() end)\nredis.register_function('a', function() end)"),
        lib("l2", "redis.register_function(7, function() return 7 end)"),
        lib("l2", "redis.register_function{function_name=8, callback=function() end, description=9}"),
        lib("l2", "redis.register_function{FUNCTION_NAME='up', CALLBACK=function() end, FLAGS={'ALLOW-STALE'}}"),
        lib("l2", "local r = redis\nredis.register_function('later', function() return r.register_function('x', function() end) end)"),
        lib("l2", "redis.register_function('set_it', function() end)"),
        lib("mylib", "redis.register_function('other', function() end)"),
    ],
)
def test_load_errors_and_forms(fboth, code):
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth("FUNCTION", "LOAD", code)
    list_both(fboth)
    if "later" in code:
        fboth("FCALL", "later", 0)


def test_load_options(fboth):
    fboth("FUNCTION", "LOAD")
    fboth("FUNCTION", "LOAD", "REPLACE")
    fboth("FUNCTION", "LOAD", "foo", "bar")
    fboth("FUNCTION", "LOAD", "REPLACE", "REPLACE", lib("x", "redis.register_function('x', function() return 1 end)"))
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth("FUNCTION", "LOAD", MAIN)
    replacement = lib("mylib", "redis.register_function('v2', function() return 2 end)")
    fboth("FUNCTION", "LOAD", "replace", replacement)
    fboth("FCALL", "v2", 0)
    fboth("FCALL", "count", 0)
    # REPLACE that collides with another library leaves the old library in place.
    fboth.ok("FUNCTION", "LOAD", lib("other", "redis.register_function('o', function() return 'o' end)"))
    fboth("FUNCTION", "LOAD", "REPLACE", lib("mylib", "redis.register_function('o', function() end)"))
    fboth("FCALL", "v2", 0)
    fboth("FUNCTION", "LOAD", "REPLACE", lib("mylib", "error('x')"))
    fboth("FCALL", "v2", 0)


def sorted_list(reply):
    """FUNCTION LIST's libraries (and each one's functions) in name order: Redis lists them
    in its dictionaries' order."""
    if isinstance(reply, BaseException):
        return reply

    def key(lib):
        return lib[1] if isinstance(lib, list) else lib[b"library_name"]

    out = []
    for library in sorted(reply, key=key):
        if isinstance(library, list):
            library = list(library)
            i = library.index(b"functions") + 1
            library[i] = sorted(library[i], key=lambda f: f[1])
        else:
            library = dict(library)
            library[b"functions"] = sorted(library[b"functions"], key=lambda f: f[b"name"])
        out.append(library)
    return out


def list_both(b, *args):
    r, g = b.run("FUNCTION", "LIST", *args)
    assert sorted_list(r) == sorted_list(g), (r, g)
    return r


def test_list_shapes_resp2(fboth):
    one = lib(
        "one",
        "redis.register_function{function_name='f1', callback=function() end,"
        " flags={'allow-cross-slot-keys', 'no-cluster', 'allow-stale', 'allow-oom', 'no-writes'}, description='all'}",
    )
    fboth.ok("FUNCTION", "LOAD", one)
    fboth("FUNCTION", "LIST")
    fboth("FUNCTION", "LIST", "WITHCODE")
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth.ok("FUNCTION", "LOAD", lib("Two", "redis.register_function('t', function() end)"))
    list_both(fboth)
    list_both(fboth, "WITHCODE")
    list_both(fboth, "LIBRARYNAME", "my*")
    list_both(fboth, "libraryname", "T*", "withcode")
    list_both(fboth, "WITHCODE", "LIBRARYNAME", "*o*")
    list_both(fboth, "LIBRARYNAME", "nomatch")
    fboth("FUNCTION", "LIST", "foo")
    fboth("FUNCTION", "LIST", "LIBRARYNAME")
    fboth("FUNCTION", "LIST", "WITHCODE", "WITHCODE")
    fboth("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b")


def test_list_shapes_resp3(fboth3):
    fboth3.ok(
        "FUNCTION",
        "LOAD",
        lib("one", "redis.register_function{function_name='f1', callback=function() end,"
                   " flags={'no-writes', 'allow-oom'}, description='d'}\n"
                   "redis.register_function('f2', function() end)"),
    )
    list_both(fboth3)
    list_both(fboth3, "WITHCODE")
    fboth3("FUNCTION", "STATS")
    fboth3("FCALL", "f2", 0)


def test_delete_flush_stats_help(fboth):
    fboth("FUNCTION", "STATS")
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth("FUNCTION", "STATS")
    fboth("FUNCTION", "DELETE", "nosuch")
    fboth("FUNCTION", "DELETE", "MYLIB")
    fboth("FUNCTION", "DELETE", "mylib")
    fboth("FCALL", "count", 0)
    fboth("FUNCTION", "DELETE")
    fboth("FUNCTION", "DELETE", "a", "b")
    for mode in [[], ["SYNC"], ["async"]]:
        fboth.ok("FUNCTION", "LOAD", MAIN)
        fboth("FUNCTION", "FLUSH", *mode)
        list_both(fboth)
    fboth("FUNCTION", "FLUSH", "foo")
    fboth("FUNCTION", "FLUSH", "SYNC", "x")
    fboth("FUNCTION", "KILL")
    r, g = fboth.run("FUNCTION", "HELP")
    # 7.2 says "Print this help." where 7.0 says "Prints this help."
    assert r[:-1] == g[:-1] and g[-1] == b"    Print this help."
    fboth("FUNCTION", "NOSUCH")
    fboth("FUNCTION")
    fboth("FUNCTION", "STATS", "x")
    fboth("FUNCTION", "DUMP", "x")


def library_exists(b, payload, *policy):
    """RESTORE of libraries that exist: which one the error names depends on Redis's
    dictionary order."""
    for e in b.run("FUNCTION", "RESTORE", payload, *policy):
        assert isinstance(e, redispy.ResponseError), e
        assert str(e).startswith("Library ") and str(e).endswith(" already exists"), e


def test_dump_and_restore(fboth):
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth.ok("FUNCTION", "LOAD", lib("second", "redis.register_function('s', function() return 's' end)"))
    r, g = fboth.run("FUNCTION", "DUMP")
    # Each server restores the other's payload.
    for payload in (r, g):
        library_exists(fboth, payload)
        library_exists(fboth, payload, "APPEND")
        fboth("FUNCTION", "RESTORE", payload, "REPLACE")
        list_both(fboth, "WITHCODE")
        fboth("FUNCTION", "FLUSH")
        fboth("FUNCTION", "RESTORE", payload)
        fboth("FCALL", "s", 0)
        fboth("FUNCTION", "FLUSH")
        fboth.ok("FUNCTION", "LOAD", lib("clash", "redis.register_function('S', function() end)"))
        fboth("FUNCTION", "RESTORE", payload)
        fboth("FUNCTION", "RESTORE", payload, "REPLACE")
        fboth.ok("FUNCTION", "RESTORE", payload, "FLUSH")
        library_exists(fboth, payload)
        fboth("FUNCTION", "RESTORE", payload, "FLUSH")
        list_both(fboth)
    fboth("FUNCTION", "RESTORE", r, "bad")
    fboth("FUNCTION", "RESTORE", r, "FLUSH", "x")
    fboth("FUNCTION", "RESTORE", "x")
    fboth("FUNCTION", "RESTORE", b"")
    fboth("FUNCTION", "RESTORE", r[:-1] + bytes([r[-1] ^ 1]))
    fboth("FUNCTION", "RESTORE", r[:-10] + b"\x63\x00" + r[-8:])
    fboth("FUNCTION", "FLUSH")
    # An empty dump restores to nothing.
    empty_r, empty_g = fboth.run("FUNCTION", "DUMP")
    assert empty_r == empty_g
    fboth("FUNCTION", "RESTORE", empty_r)


def crc64_jones(data: bytes) -> int:
    poly = 0x95AC9329AC4BC9B5
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def make_payload(body: bytes, version: int = 10) -> bytes:
    head = body + version.to_bytes(2, "little")
    return head + crc64_jones(head).to_bytes(8, "little")


def rdb_string(data: bytes) -> bytes:
    assert len(data) < 16384
    if len(data) < 64:
        return bytes([len(data)]) + data
    return bytes([0x40 | (len(data) >> 8), len(data) & 0xFF]) + data


def test_crafted_restore_payloads(fboth):
    good = lib("crafted", "redis.register_function('c', function() return 'c' end)").encode()
    assert make_payload(b"") == fboth("FUNCTION", "DUMP")
    fboth("FUNCTION", "RESTORE", make_payload(b"\xf5" + rdb_string(good)))
    fboth("FCALL", "c", 0)
    fboth("FUNCTION", "FLUSH")
    # The pre-GA opcode: 7.0 still reads its format, 7.2 refuses it (pinned on Goblin).
    try:
        fboth.goblin.execute_command("FUNCTION", "RESTORE", make_payload(b"\xf6" + rdb_string(good)))
        raise AssertionError("accepted")
    except redispy.ResponseError as e:
        assert str(e) == "Pre-GA function format not supported"
    for body in [
        b"\x00" + rdb_string(good),  # not a function
        b"\xf5" + rdb_string(good) * 2,  # the same library twice
        b"\xf5" + rdb_string(good) + b"\xf5" + rdb_string(good),
        b"\xf5" + rdb_string(b"#!lua name=x\nreturn ("),
        b"\xf5" + rdb_string(b"no shebang"),
        b"\xf5\x05ab",  # a string that runs into the footer
        b"\xf5\x3fab",  # a string longer than the payload
        b"\xf5",
        b"\xf5\xc0",
    ]:
        fboth("FUNCTION", "RESTORE", make_payload(body))
        list_both(fboth)
    fboth("FUNCTION", "RESTORE", make_payload(b"\xf5" + rdb_string(good), version=200))
    # Redis 7.2 reads payloads up to its RDB version 11 (7.0 up to 10): pinned on Goblin.
    goblin = fboth.goblin
    assert goblin.execute_command("FUNCTION", "RESTORE", make_payload(b"\xf5" + rdb_string(good), version=11)) == b"OK"
    with pytest.raises(redispy.ResponseError, match="DUMP payload version or checksum are wrong"):
        goblin.execute_command("FUNCTION", "RESTORE", make_payload(b"\xf5" + rdb_string(good), version=12))


def test_fcall_replies_resp3(fboth3):
    fboth3.ok("FUNCTION", "LOAD", MAIN)
    fboth3("HSET", "h", "f", "v")
    fboth3("FCALL", "resp3", 0)
    fboth3("FCALL", "echo", 1, "a", "b")


def test_function_flags_under_maxmemory(fboth):
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth.ok("SET", "filler", "x" * 1000)
    fboth.config_set("maxmemory", 1)
    fboth.config_set("maxmemory-policy", "noeviction")
    fboth("FCALL", "set_it", 1, "k", "v")
    fboth("FCALL", "oom_ok", 0)
    # no-writes implies allow-oom (Redis 7.0 and 7.2.4 alike: scriptPrepareForRun).
    fboth("FCALL", "get_it", 1, "k")
    fboth("FUNCTION", "LOAD", lib("big", "redis.register_function('b', function() end)"))
    fboth.config_set("maxmemory", 0)


def test_library_scripts_in_transactions(fboth):
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth("MULTI")
    fboth("FCALL", "set_it", 1, "k", "v1")
    fboth("FCALL", "get_it", 1, "k")
    fboth("EXEC")


def test_info_and_flushall(fboth):
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth.ok("FUNCTION", "LOAD", lib("second", "redis.register_function('s', function() return 's' end)"))
    fboth("FCALL", "count", 0)
    seen = []
    for c in fboth.clients():
        info = info_of(c, "memory")
        seen.append((info["number_of_functions"], info["number_of_libraries"]))
    assert seen[0] == seen[1] == (15, 2), seen
    # FLUSHALL and SCRIPT FLUSH leave the libraries alone.
    fboth("FLUSHALL")
    fboth("SCRIPT", "FLUSH")
    fboth("FCALL", "s", 0)
    fboth("FCALL", "count", 0)


@pytest.fixture
def rdb_pair(tmp_path_factory):
    pair = start_pair(tmp_path_factory)
    yield pair
    pair.stop()


def test_rdb_round_trip_both_ways(rdb_pair):
    """Each server saves an RDB with libraries, and each loads the other's file."""
    import shutil

    from harness import GOBLIN_BIN, REDIS_BIN, Server

    clients = {s.kind: make_client(s) for s in rdb_pair}
    for c in clients.values():
        c.execute_command("FUNCTION", "LOAD", MAIN)
        c.execute_command("FUNCTION", "LOAD", lib("second", "redis.register_function('s', function() return 's' end)"))
        c.execute_command("SET", "key", "value")
        c.execute_command("SAVE")
    expected = sorted_list(clients["redis"].execute_command("FUNCTION", "LIST", "WITHCODE"))
    assert sorted_list(clients["goblin"].execute_command("FUNCTION", "LIST", "WITHCODE")) == expected
    for c in clients.values():
        c.close()
    for source in rdb_pair:
        for kind, binary in (("redis", REDIS_BIN), ("goblin", GOBLIN_BIN)):
            workdir = source.workdir.parent / f"load-{source.kind}-into-{kind}"
            workdir.mkdir(exist_ok=True)
            shutil.copy(source.workdir / "dump.rdb", workdir / "dump.rdb")
            server = Server(kind, binary, ["--save", "", "--appendonly", "no"], workdir)
            server.start()
            try:
                c = make_client(server)
                assert sorted_list(c.execute_command("FUNCTION", "LIST", "WITHCODE")) == expected, (
                    source.kind, kind)
                assert c.execute_command("FCALL", "s", 0) == b"s"
                assert c.execute_command("GET", "key") == b"value"
                c.close()
            finally:
                server.stop()


def test_debug_reload_keeps_libraries(fboth):
    fboth.ok("FUNCTION", "LOAD", MAIN)
    fboth("DEBUG", "RELOAD")
    list_both(fboth)
    fboth("FCALL", "count", 0)


def test_aof_keeps_libraries(tmp_path_factory):
    """FUNCTION LOAD / DELETE replayed from the AOF, and the libraries in a rewritten base
    (commands and RDB preamble)."""
    for preamble in ("no", "yes"):
        pair = start_pair(tmp_path_factory, "--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
        try:
            clients = [make_client(s) for s in pair]
            for c in clients:
                c.execute_command("FUNCTION", "LOAD", MAIN)
                c.execute_command("FUNCTION", "LOAD", lib("gone", "redis.register_function('g', function() end)"))
                c.execute_command("FUNCTION", "DELETE", "gone")
                c.execute_command("FCALL", "set_it", 1, "k", "v")
                c.close()
            for s in pair:
                s.stop()
                s.start()
            clients = [make_client(s) for s in pair]
            lists = [sorted_list(c.execute_command("FUNCTION", "LIST", "WITHCODE")) for c in clients]
            assert lists[0] == lists[1]
            assert [c.execute_command("GET", "k") for c in clients] == [b"v", b"v"]
            for c in clients:
                c.execute_command("BGREWRITEAOF")
            for c in clients:
                for _ in range(100):
                    info = c.execute_command("INFO", "persistence")
                    text = info.decode() if isinstance(info, bytes) else str(info)
                    if "aof_rewrite_in_progress:0" in text and "aof_rewrite_scheduled:0" in text:
                        break
                    time.sleep(0.05)
                c.close()
            for s in pair:
                s.stop()
                s.start()
            clients = [make_client(s) for s in pair]
            after = [sorted_list(c.execute_command("FUNCTION", "LIST", "WITHCODE")) for c in clients]
            assert after[0] == after[1] == lists[0], preamble
            assert [c.execute_command("FCALL", "get_it", 1, "k") for c in clients] == [b"v", b"v"]
            for c in clients:
                c.close()
        finally:
            pair.stop()


def test_busy_function_kill_and_stats(tmp_path_factory):
    """A function looping past busy-reply-threshold: other clients get the FUNCTION KILL
    flavour of BUSY, FUNCTION STATS shows it, SCRIPT KILL refuses, FUNCTION KILL stops it."""
    import threading

    pair = start_pair(tmp_path_factory, "--busy-reply-threshold", "100")
    try:
        outcomes = {}
        for server in pair:
            admin = make_client(server)
            admin.execute_command(
                "FUNCTION", "LOAD",
                lib("loop", "redis.register_function{function_name='spin', callback=function() while true do end end,"
                            " flags={'no-writes'}}"))
            result = {}
            caller = make_client(server)
            caller.ping()
            other = make_client(server)
            other.ping()

            def run():
                try:
                    caller.execute_command("FCALL", "spin", 0)
                except redispy.RedisError as e:
                    result["error"] = str(e)

            t = threading.Thread(target=run)
            t.start()
            time.sleep(0.5)
            seen = []
            for cmd in (("PING",), ("SCRIPT", "KILL")):
                try:
                    seen.append(other.execute_command(*cmd))
                except redispy.RedisError as e:
                    seen.append(str(e))
            stats = other.execute_command("FUNCTION", "STATS")
            running = stats[1]
            seen.append([running[0], running[1], running[2], running[3]])
            seen.append(other.execute_command("FUNCTION", "KILL"))
            t.join(10)
            seen.append(result.get("error"))
            seen.append(other.execute_command("PING"))
            outcomes[server.kind] = seen
            caller.close()
            other.close()
            admin.close()
        assert outcomes["redis"] == outcomes["goblin"], outcomes
    finally:
        pair.stop()


def aof_commands(workdir):
    """The commands of a server's incremental AOF files, in order."""
    out = []
    for path in sorted((workdir / "appendonlydir").glob("*.incr.aof")):
        data = path.read_bytes()
        i = 0
        while i < len(data):
            assert data[i:i + 1] == b"*", data[i:]
            end = data.index(b"\r\n", i)
            n = int(data[i + 1:end])
            i = end + 2
            argv = []
            for _ in range(n):
                end = data.index(b"\r\n", i)
                size = int(data[i + 1:end])
                argv.append(data[end + 2:end + 2 + size])
                i = end + 2 + size + 2
            out.append(argv)
    return out


def test_fcall_propagates_its_effects(tmp_path_factory):
    """FUNCTION LOAD / DELETE go to the AOF as sent; FCALL as the writes it made (in
    MULTI / EXEC when there are several), nothing when it wrote nothing."""
    pair = start_pair(tmp_path_factory, "--appendonly", "yes", "--appendfsync", "always")
    try:
        code = lib(
            "effects",
            "redis.register_function('two', function(keys) redis.call('set', keys[1], 'a') "
            "redis.call('incr', keys[2]) return 1 end)\n"
            "redis.register_function('one', function(keys) return redis.call('del', keys[1]) end)\n"
            "redis.register_function{function_name='none', callback=function(keys) "
            "return redis.call('get', keys[1]) end, flags={'no-writes'}}",
        )
        for server in pair:
            c = make_client(server)
            c.execute_command("FUNCTION", "LOAD", code)
            c.execute_command("FCALL", "two", 2, "k", "n")
            c.execute_command("FCALL", "one", 1, "k")
            c.execute_command("FCALL", "one", 1, "nokey")
            c.execute_command("FCALL_RO", "none", 1, "n")
            c.execute_command("FUNCTION", "DELETE", "effects")
            c.close()
        seen = [aof_commands(s.workdir) for s in pair]
        assert seen[0] == seen[1], seen
        heads = [a[0].upper() for a in seen[1]]
        assert b"FUNCTION" in heads and b"MULTI" in heads and b"INCR" in heads, seen
        assert b"FCALL" not in heads and b"FCALL_RO" not in heads
    finally:
        pair.stop()
