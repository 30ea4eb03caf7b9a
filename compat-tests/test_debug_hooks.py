"""DEBUG's remaining testing hooks against Redis: HELP's lines, LOADAOF, AOF-FLUSH-SLEEP,
SET-DISABLE-DENY-SCRIPTS, CONFIG-REWRITE-FORCE-ALL and REPLYBUFFER (the reply buffer sizes
CLIENT LIST shows as rbs / rbp, resized by the cron as Redis resizes them).

The reference is Debian's Redis 7.0, which has the same hooks with the same words."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import redis

from aof_stream import incr_stream, manifest_files
from harness import GOBLIN_BIN, REDIS_BIN, free_port, make_client
from resp import RawConnection, encode
from test_aof import start
from test_aof_deletions import KINDS
from test_persistence import Proc, procs  # noqa: F401 (the fixture)

DEBUG = ("--enable-debug-command", "yes")


def help_blocks(lines: list[bytes]) -> dict[bytes, list[bytes]]:
    """DEBUG HELP's lines by subcommand (a block starts with an unindented line)."""
    blocks: dict[bytes, list[bytes]] = {}
    current = None
    for line in lines[1:]:
        if not line.startswith(b" "):
            current = line.split(b" ")[0]
            current = current + b" " + line.split(b" ")[1] if current == b"REPLYBUFFER" else current
            blocks[current] = []
        blocks[current].append(line)
    return blocks


def test_help_has_redis_lines_for_what_goblin_has(both):
    r, g = both.run("DEBUG", "HELP")
    assert r[0] == g[0]
    redis_blocks, goblin_blocks = help_blocks(r), help_blocks(g)
    # HELP's own two lines differ between 7.0 ("Prints") and 7.2 ("Print"); Goblin has 7.2's.
    goblin_blocks.pop(b"HELP")
    for name, lines in goblin_blocks.items():
        assert redis_blocks[name] == lines, name
    # In Redis's order.
    order = [n for n in redis_blocks if n in goblin_blocks]
    assert order == list(goblin_blocks)
    for name in (b"LOADAOF", b"AOF-FLUSH-SLEEP", b"CONFIG-REWRITE-FORCE-ALL",
                 b"REPLYBUFFER PEAK-RESET-TIME", b"REPLYBUFFER RESIZING"):
        assert name in goblin_blocks


def test_replybuffer_arguments(both):
    both.err("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "abc")
    both.err("DEBUG", "REPLYBUFFER", "FOO", "1")
    both.err("DEBUG", "REPLYBUFFER", "RESIZING")
    both.ok("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET")


def rbs(c: redis.Redis, name: bytes) -> tuple[int, int]:
    for line in c.execute_command("CLIENT", "LIST").split(b"\n"):
        if b" name=" + name + b" " in line:
            fields = dict(f.split(b"=", 1) for f in line.split(b" ") if b"=" in f)
            return int(fields[b"rbs"]), int(fields[b"rbp"])
    raise AssertionError(f"no client {name!r}")


def wait_for(cond, what: str, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_reply_buffer_shrinks_when_idle_and_grows_when_busy(servers, both):
    """Redis's unit/replybufsize: an idle client's buffer shrinks to 1 KiB once its peak
    resets, a busy one doubles back to 16 KiB, with RESIZING 0 nothing moves."""
    both.ok("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", 100)
    try:
        both("SET", "bigval", "x" * 32768)
        sizes = {}
        for server in servers:
            admin, tc = make_client(server), make_client(server)
            tc.execute_command("CLIENT", "SETNAME", "tc")
            assert rbs(admin, b"tc") == (16384, 16384)
            wait_for(lambda: rbs(admin, b"tc")[0] == 1024, f"{server}: no shrink")
            admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "NEVER")
            seen = []

            def grown():
                tc.get("bigval")
                seen.append(rbs(admin, b"tc")[0])
                return seen[-1] == 16384

            wait_for(grown, f"{server}: no growth")
            admin.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", 0)
            time.sleep(0.3)
            assert rbs(admin, b"tc")[0] == 16384
            admin.execute_command("DEBUG", "REPLYBUFFER", "RESIZING", 1)
            admin.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", 100)
            stats = admin.info("stats")
            assert stats["reply_buffer_shrinks"] >= 1 and stats["reply_buffer_expands"] >= 4
            # The doubling steps seen (each a cron apart).
            sizes[server.kind] = sorted(set(seen))
            tc.close()
            admin.close()
        assert sizes["goblin"] == sizes["redis"] or set(sizes["goblin"]) <= {1024, 2048, 4096,
                                                                             8192, 16384}
    finally:
        both.ok("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET")
        both.ok("DEBUG", "REPLYBUFFER", "RESIZING", 1)


def test_set_disable_deny_scripts(both):
    script = "return redis.call('config', 'get', 'maxmemory')"
    both.err("EVAL", script, 0)
    both.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1)
    try:
        both("EVAL", script, 0)
        both.ok("SCRIPT", "FLUSH")
        both("EVAL", script, 0)
    finally:
        both.ok("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)
    both.err("EVAL", script, 0)


def test_loadaof(procs, tmp_path):
    """LOADAOF replaces the data by the AOF's: keys made without propagation (POPULATE) go,
    the others stay; without an AOF it is an error."""
    got = {}
    for kind in KINDS:
        p = start(procs, kind, tmp_path / kind, *DEBUG)
        c = p.client()
        c.set("a", "1")
        c.rpush("l", "x", "y")
        c.execute_command("DEBUG", "POPULATE", 10)
        before = c.dbsize()
        ok = c.execute_command("DEBUG", "LOADAOF")
        got[kind] = (before, ok, c.dbsize(), c.get("a"), c.lrange("l", 0, -1),
                     c.info("persistence")["rdb_changes_since_last_save"])
    assert got["goblin"] == got["redis"]
    assert got["goblin"][2] == 2
    # Without an AOF: Redis 7.2.4's error (7.0 closes the connection instead).
    workdir = tmp_path / "off"
    workdir.mkdir()
    p = Proc(GOBLIN_BIN, workdir, "--dir", str(workdir), "--appendonly", "no", "--save", "",
             *DEBUG, name="goblin")
    procs.append(p)
    with pytest.raises(redis.ResponseError, match="^Error trying to load the AOF files, check "
                       "server logs.$"):
        p.start().client().execute_command("DEBUG", "LOADAOF")


def test_loadaof_answers_loading_during_a_slow_script(procs, tmp_path):
    """A script in the AOF that runs past busy-reply-threshold serves the other clients while
    DEBUG LOADAOF replays it, and they get -LOADING (Redis's suite, integration/aof, "EVAL
    timeout with slow verbatim Lua script from AOF"). Goblin had answered nobody until the
    load was over, and then PING got its PONG."""
    script = "redis.call('set',KEYS[1],'y'); for i=1,1500000 do redis.call('ping') end return 'ok'"
    got = {}
    for kind in KINDS:
        workdir = tmp_path / kind
        p = start(procs, kind, workdir, *DEBUG, "--busy-reply-threshold", "1",
                  "--aof-use-rdb-preamble", "no")
        aof_dir = workdir / "appendonlydir"
        incr = next(name for name, type_ in manifest_files(aof_dir) if type_ == "i")
        with open(aof_dir / incr, "ab") as f:
            f.write(encode("SELECT", 9) + encode("EVAL", script, 1, "x"))
        loader, other = RawConnection(p.port, 60), RawConnection(p.port, 60)
        loader.send(encode("DEBUG", "LOADAOF"))
        deadline, answer = time.monotonic() + 30, b"+PONG\r\n"
        while answer == b"+PONG\r\n" and time.monotonic() < deadline:
            answer = other.request(encode("PING"))
        got[kind] = (answer, loader.read_replies(1), other.request(encode("SELECT", 9)),
                     other.request(encode("GET", "x")))
        for c in (loader, other):
            c.close()
    assert got["goblin"] == got["redis"]
    assert got["goblin"][0] == b"-LOADING Redis is loading the dataset in memory\r\n"


def test_debug_propagates_nothing(procs, tmp_path):
    """DEBUG LOADAOF, POPULATE and RELOAD leave nothing in the AOF (Redis's suite, unit/expire:
    a LOADAOF written there replayed itself at the next LOADAOF without end, and the server
    died of the stack overflow)."""
    got = {}
    for kind in KINDS:
        workdir = tmp_path / kind
        c = start(procs, kind, workdir, *DEBUG).client()
        c.set("foo", "bar", ex=100)
        assert c.execute_command("DEBUG", "LOADAOF") == b"OK"
        c.execute_command("DEBUG", "POPULATE", 3)
        c.execute_command("DEBUG", "RELOAD")
        c.getex("foo", persist=True)
        assert c.execute_command("DEBUG", "LOADAOF") == b"OK"
        stream = [cmd[0].lower() for cmd in incr_stream(workdir)]
        got[kind] = (c.ttl("foo"), c.dbsize(), stream)
    assert got["goblin"] == got["redis"]
    assert b"debug" not in got["goblin"][2]


def test_aof_flush_sleep_delays_the_write(procs, tmp_path):
    took = {}
    for kind in KINDS:
        c = start(procs, kind, tmp_path / kind, *DEBUG, "--appendfsync", "always").client()
        assert c.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 300000) == b"OK"
        started = time.monotonic()
        c.set("k", "v")
        took[kind] = time.monotonic() - started
        assert c.execute_command("DEBUG", "AOF-FLUSH-SLEEP", 0) == b"OK"
        started = time.monotonic()
        c.get("k")
        assert time.monotonic() - started < 0.25
    assert took["redis"] >= 0.29 and took["goblin"] >= 0.29


def start_with_conf(procs, binary: str, workdir: Path, conf: Path) -> Proc:
    """A server whose first argument is its configuration file (where Redis wants it)."""
    p = Proc(binary, workdir, name=Path(binary).name)
    port = free_port()
    conf.write_text(conf.read_text() + f"port {port}\nbind 127.0.0.1\ndir {workdir}\n")
    p.port = port
    with open(p.log, "ab") as log:
        p.proc = subprocess.Popen([binary, str(conf), "--save", "", "--appendonly", "no",
                                   *DEBUG], cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
    procs.append(p)
    deadline = time.monotonic() + 20
    while True:
        try:
            if p.client().ping():
                return p
        except redis.ConnectionError:
            assert time.monotonic() < deadline and p.proc.poll() is None, p.output()
            time.sleep(0.05)


def test_config_rewrite_force_all(procs, tmp_path):
    """Every parameter gets a line, defaults included, and the server restarts from it."""
    lines = {}
    for kind in KINDS:
        workdir = tmp_path / kind
        workdir.mkdir()
        conf = workdir / "s.conf"
        conf.write_text("# mine\nhz 10\n")
        binary = GOBLIN_BIN if kind == "goblin" else REDIS_BIN
        p = start_with_conf(procs, binary, workdir, conf)
        c = p.client()
        assert c.execute_command("DEBUG", "CONFIG-REWRITE-FORCE-ALL") == b"OK"
        text = conf.read_text().splitlines()
        lines[kind] = {line.split(" ", 1)[0]: line for line in text if line and line[0] != "#"}
        c.shutdown(nosave=True)
        p.proc.wait()
        conf.write_text("\n".join(line for line in text if not line.startswith("port ")) + "\n")
        assert start_with_conf(procs, binary, workdir, conf).client().config_get("hz") == {
            "hz": "10"}
    shared = ["hz", "tcp-backlog", "maxmemory", "latency-tracking", "oom-score-adj",
              "oom-score-adj-values", "latency-tracking-info-percentiles", "timeout",
              "proc-title-template", "appendfsync", "maxmemory-policy", "databases",
              "ignore-warnings", "activedefrag", "active-defrag-ignore-bytes",
              "active-expire-effort", "crash-log-enabled", "rdbchecksum", "rdb-del-sync-files",
              "lazyfree-lazy-user-del", "replica-lazy-flush", "jemalloc-bg-thread",
              "server_cpulist", "bgsave_cpulist", "rdb-save-incremental-fsync",
              "repl-disable-tcp-nodelay"]
    for name in shared:
        assert lines["goblin"].get(name) == lines["redis"].get(name), name
    # Goblin's own parameters, and 7.2's that Redis 7.0 lacks.
    extra = {"busy-poll-us", "rdb-skip-unsupported-types", "set-max-listpack-entries",
             "set-max-listpack-value", "cluster-ping-interval", "locale-collate"}
    assert set(lines["goblin"]) - set(lines["redis"]) <= extra
    assert lines["goblin"]["stream-node-max-bytes"] == "stream-node-max-bytes 4kb"
