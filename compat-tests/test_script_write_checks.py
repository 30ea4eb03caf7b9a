"""The checks on writes that reach scripts and functions, as Redis (7.0 and 7.2 alike):
min-replicas-to-write (NOREPLICAS) and a read-only replica (READONLY).

A script or function that declared its flags (a `#!lua` shebang, a registered function) is
judged as a command by them before it runs: unless it declared `no-writes` it counts as a
write, refused with NOREPLICAS, also as EVALSHA_RO / FCALL_RO and when queued in MULTI (EXEC
then aborts). A script without a shebang runs, and is refused at its first write call
(redis.call raises the error with the script's name; redis.pcall returns it).
"""

from __future__ import annotations

import pytest

from harness import Both, free_port, start_pair

LIBRARY = """#!lua name=wa_lib
redis.register_function('wa_w', function() return redis.call('set', 'k', 'v') end)
redis.register_function{function_name='wa_r', callback=function() return redis.call('get', 'k') end, flags={'no-writes'}}
redis.register_function{function_name='wa_rw', callback=function() return redis.call('set', 'k', 'v') end, flags={'no-writes'}}
"""

COMPAT_WRITE = "return redis.call('set', 'k', 'v')"
COMPAT_READ = "return redis.call('get', 'k')"
COMPAT_PCALL_WRITE = "local r = redis.pcall('set', 'k', 'v'); return r['err']"
READ_THEN_WRITE = "redis.call('get', 'k'); redis.call('set', 'k', 'v'); return redis.call('set', 'k2', 'v')"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    p = start_pair(tmp_path_factory)
    yield p
    p.stop()


@pytest.fixture
def both(pair):
    pair.flushall()
    b = Both(pair)
    b.ok("FUNCTION", "LOAD", "REPLACE", LIBRARY)
    yield b
    b("FUNCTION", "FLUSH")
    b.restore_config()
    b.close()
    assert not pair.check_alive()


def scripts_and_functions(both: Both, *, shebang_write_refused: bool) -> None:
    """Every kind of script and function call; `shebang_write_refused` when a script that may
    write is refused before it runs."""
    sha = both.ok("SCRIPT", "LOAD", "#!lua\nreturn 1")
    both("EVAL", COMPAT_READ, 0)
    both("EVAL", COMPAT_WRITE, 0)
    both("EVAL", COMPAT_PCALL_WRITE, 0)
    both("EVAL", READ_THEN_WRITE, 0)
    both("EVAL", "#!lua\nreturn redis.call('get', 'k')", 0)
    both("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", 0)
    both("EVAL", "#!lua flags=no-writes,allow-oom\nreturn redis.call('set', 'k', 'v')", 0)
    both("EVAL_RO", COMPAT_READ, 0)
    both("EVALSHA", sha, 0)
    both("EVALSHA_RO", sha, 0)
    for f in ("wa_w", "wa_r", "wa_rw"):
        both("FCALL", f, 0)
        both("FCALL_RO", f, 0)
    for queued in (("EVAL", "#!lua\nreturn 1", 0), ("EVALSHA", sha, 0), ("FCALL", "wa_w", 0),
                   ("FCALL", "wa_r", 0), ("EVAL", COMPAT_WRITE, 0), ("EVAL", COMPAT_READ, 0)):
        both("MULTI")
        both(*queued)
        both("EXEC")
    both("GET", "k")
    assert shebang_write_refused == isinstance(both("EVALSHA", sha, 0), Exception)


def test_min_replicas_to_write(both):
    both.config_set("min-replicas-to-write", 1)
    scripts_and_functions(both, shebang_write_refused=True)
    both.config_set("min-replicas-max-lag", 0)
    scripts_and_functions(both, shebang_write_refused=False)


def test_read_only_replica(both):
    port = free_port()
    try:
        both("REPLICAOF", "127.0.0.1", port)
        scripts_and_functions(both, shebang_write_refused=True)
        both.config_set("replica-read-only", "no")
        scripts_and_functions(both, shebang_write_refused=False)
    finally:
        both("REPLICAOF", "NO", "ONE")
