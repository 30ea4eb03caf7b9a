"""Protected configs and commands beside Redis: with enable-protected-configs no (the
default) CONFIG SET refuses dir and dbfilename, so a client cannot make SAVE write the
keyspace over a file of its choosing; enable-debug-command and enable-module-command gate
DEBUG and MODULE LOAD/LOADEX/UNLOAD, right after the arity check (before authentication).
The three parameters are start-only. MODULE answers as a Redis with no module loaded."""

import pytest

import harness
import resp


def test_protected_configs_are_refused_by_default(both):
    both.err("CONFIG", "SET", "dir", "/tmp")
    both.err("CONFIG", "SET", "dbfilename", "authorized_keys")
    both.err("CONFIG", "SET", "DIR", "/tmp")
    # Every name is checked before any value is applied: nothing changes.
    both.err("CONFIG", "SET", "maxmemory", "1mb", "dir", "/tmp")
    both.err("CONFIG", "SET", "maxmemory", "nonsense", "dbfilename", "x.rdb")
    both("CONFIG", "GET", "maxmemory")
    both("CONFIG", "GET", "dbfilename")
    # The first refused name answers.
    both.err("CONFIG", "SET", "dir", "/tmp", "no-such-parameter", "1")
    both.err("CONFIG", "SET", "no-such-parameter", "1", "dir", "/tmp")
    both.err("CONFIG", "SET", "databases", "4", "dir", "/tmp")
    both.err("CONFIG", "SET", "maxmemory-samples", "5", "MAXMEMORY-SAMPLES", "5")
    for name in ("enable-protected-configs", "enable-debug-command", "enable-module-command"):
        both.err("CONFIG", "SET", name, "yes")
        both.pairs("CONFIG", "GET", name)
    both.pairs("CONFIG", "GET", "enable-*")


def test_module_without_modules(both):
    both("MODULE", "LIST")
    both("MODULE", "LIST", "x")
    both("MODULE")
    both("MODULE", "nosuch")
    both.err("MODULE", "LOAD", "/nonexistent/module.so")
    both.err("MODULE", "LOADEX", "/nonexistent/module.so", "CONFIG", "a", "b")
    both.err("MODULE", "UNLOAD", "nosuch")
    both("MODULE", "UNLOAD")
    # Redis 7.0 words the last help line "Prints this help.", 7.2 (and Goblin) "Print".
    r, g = both.run("MODULE", "HELP")
    assert r[:-1] == g[:-1] and g[-1] == b"    Print this help."


def pair_with(tmp_path_factory, *args):
    pair = harness.start_pair(tmp_path_factory, *args)
    yield pair
    pair.stop()


@pytest.fixture(scope="module")
def open_pair(tmp_path_factory):
    yield from pair_with(
        tmp_path_factory, "--enable-protected-configs", "local", "--enable-module-command", "yes"
    )


def test_protected_configs_set_when_allowed(open_pair):
    b = harness.Both(open_pair)
    try:
        b.pairs("CONFIG", "GET", "enable-*")
        for server, client in zip(open_pair, b.clients()):
            assert client.execute_command("CONFIG", "SET", "dir", str(server.workdir)) == b"OK"
        b("CONFIG", "SET", "dbfilename", "other.rdb")
        b("CONFIG", "GET", "dbfilename")
        b("CONFIG", "SET", "dbfilename", "dump.rdb", "dbfilename", "x.rdb")
        b.err("MODULE", "LOAD", "/nonexistent/module.so", "arg")
        b.err("MODULE", "LOADEX", "/nonexistent/module.so", "ARGS", "x")
        b.err("MODULE", "UNLOAD", "nosuch")
        b("MODULE", "LIST")
    finally:
        b.close()


@pytest.fixture(scope="module")
def closed_pair(tmp_path_factory):
    yield from pair_with(tmp_path_factory, "--requirepass", "pw", "--enable-debug-command", "no")


def test_protected_commands_are_refused_before_authentication(closed_pair):
    conns = [resp.RawConnection(s.port) for s in closed_pair]
    try:
        for cmd in [
            ("DEBUG", "SLEEP", "0"),
            ("DEBUG",),
            ("MODULE", "LOAD", "/nonexistent/module.so"),
            ("MODULE", "LIST"),
            ("AUTH", "pw"),
            ("DEBUG", "SLEEP", "0"),
            ("MODULE", "UNLOAD", "x"),
            ("MULTI",),
            ("DEBUG", "SLEEP", "0"),
            ("EXEC",),
        ]:
            r, g = (c.request(resp.encode(*cmd)) for c in conns)
            assert r == g, cmd
    finally:
        for c in conns:
            c.close()
