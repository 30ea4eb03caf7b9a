"""Persistence: RDB snapshots in both directions against Debian's redis-server 7.0, BGSAVE,
save points, SHUTDOWN / SIGTERM saves, DEBUG RELOAD, kill -9 during saves, and corrupt or
truncated files at start-up.

Each test starts its own servers on free ports in its own temporary directory (the shared
pair of the harness runs with `--save ""` and no directory of its own).
"""

from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from harness import GOBLIN_BIN, REDIS_BIN, free_port


class Proc:
    """One goblin-server or redis-server process in `workdir`."""

    def __init__(self, binary: str, workdir: Path, *args: str, name: str = "server"):
        self.binary = binary
        self.workdir = workdir
        self.args = list(args)
        self.log = workdir / f"{name}-{time.monotonic_ns()}.log"
        self.port = 0
        self.proc: subprocess.Popen | None = None

    def start(self, expect_up: bool = True, timeout: float = 20.0) -> "Proc":
        self.port = free_port()
        # A configuration file must be the first argument, as Redis reads its command line
        # (after it, every --name opens a directive whose values run to the next --name).
        conf = self.args[:1] if self.args and not self.args[0].startswith("-") else []
        rest = self.args[len(conf):]
        argv = [self.binary, *conf, "--port", str(self.port), "--bind", "127.0.0.1", *rest]
        if "redis" in Path(self.binary).name:
            argv += ["--daemonize", "no"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(argv, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        if not expect_up:
            return self
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.binary} exited ({self.proc.returncode}):\n{self.output()}")
            try:
                if self.client().ping():
                    return self
            except (redis.ConnectionError, redis.ResponseError):
                time.sleep(0.02)
        raise RuntimeError(f"{self.binary} did not come up:\n{self.output()}")

    def client(self, db: int = 0) -> redis.Redis:
        return redis.Redis(port=self.port, db=db, socket_timeout=30, retry=Retry(NoBackoff(), 0))

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    def kill9(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill9()


@pytest.fixture
def procs():
    started: list[Proc] = []
    yield started
    for p in started:
        p.kill9()


def goblin(procs, workdir: Path, *args: str, start: bool = True) -> Proc:
    p = Proc(GOBLIN_BIN, workdir, "--dir", str(workdir), "--enable-debug-command", "yes", *args,
             name="goblin")
    procs.append(p)
    return p.start() if start else p


def redis_server(procs, workdir: Path, *args: str) -> Proc:
    p = Proc(REDIS_BIN, workdir, "--dir", str(workdir), "--appendonly", "no", *args, name="redis")
    procs.append(p)
    return p.start()


OK = (True, b"OK")


def info(client: redis.Redis) -> dict:
    return client.info("persistence")


def wait_bgsave(client: redis.Redis, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        i = info(client)
        if i["rdb_bgsave_in_progress"] == 0:
            return i
        time.sleep(0.02)
    raise AssertionError("BGSAVE did not finish")


def snapshot(server: Proc, databases: int = 16) -> dict:
    """Every key of every database: (db, key) -> (members with scores, TTL in ms or -1); a
    set's members sorted, with score None."""
    out = {}
    for db in range(databases):
        c = server.client(db)
        for key in c.scan_iter(count=1000):
            kind = c.type(key)
            assert kind in (b"zset", b"set"), key
            if kind == b"zset":
                members = c.zrange(key, 0, -1, withscores=True)
            else:
                members = [(m, None) for m in sorted(c.smembers(key))]
            out[(db, key)] = (members, c.pttl(key))
    return out


def assert_same_data(a: dict, b: dict, ttl_slack_ms: int = 5000) -> None:
    assert a.keys() == b.keys()
    for k in a:
        (ma, ta), (mb, tb) = a[k], b[k]
        assert len(ma) == len(mb), k
        for (xa, sa), (xb, sb) in zip(ma, mb):
            assert xa == xb, (k, xa, xb)
            assert sa == sb or (math.isnan(sa) and math.isnan(sb)), (k, xa, sa, sb)
        if ta < 0 or tb < 0:
            assert ta == tb, (k, ta, tb)
        else:
            assert abs(ta - tb) <= ttl_slack_ms, (k, ta, tb)


SPECIAL_SCORES = [0.0, -0.0, 1.5, -2.25, 1e-300, -1e-300, 5e-324, 1.7976931348623157e308,
                  float("inf"), float("-inf"), 2**53, -(2**53), 123456789012345678.0, 0.1]


def fill(c: redis.Redis) -> None:
    """Small (listpack) and large (skiplist) sets, odd members, expiries, several databases."""
    small = {f"m{i}": s for i, s in enumerate(SPECIAL_SCORES)}
    small.update({"": 3.0, "123": 4.0, "-5": 5.0, "007": 6.0, "2147483648": 7.0, "\x00bin\xff": 8.0})
    c.zadd("small", small)
    c.zadd("large", {f"member:{i}": i * 0.5 - 1000 for i in range(3000)})
    c.zadd("longmember", {"x" * 100: 1, "y" * 5000: 2, "z" * 70: 3})
    c.zadd("same-scores", {f"lex{i:04}": 0 for i in range(200)})
    c.zadd("volatile", {"a": 1, "b": 2})
    c.pexpire("volatile", 600_000)
    c.zadd("volatile-large", {f"v{i}": i for i in range(500)})
    c.expire("volatile-large", 3600)
    c.execute_command("SELECT", 5)
    c.zadd("db5", {"only": 42})
    c.execute_command("SELECT", 15)
    c.zadd("db15", {f"n{i}": -i for i in range(130)})
    c.pexpire("db15", 123_456)
    c.execute_command("SELECT", 0)
    fill_sets(c)


# Sets of every encoding: (key, members, Redis 7.2's encoding).
SETS = [
    ("set-int16", [1, -7, 300], "intset"),
    ("set-int32", [1, 70000, -70000], "intset"),
    ("set-int64", [1, 2**40, -(2**63)], "intset"),
    ("set-strings", ["a", "", "01", "x" * 64, "\x00bin\xff", "1"], "listpack"),
    ("set-big-ints", list(range(600)), "hashtable"),
    ("set-big-strings", [f"member:{i}" for i in range(2000)], "hashtable"),
    ("set-long-member", ["y" * 5000, "z"], "hashtable"),
]


def fill_sets(c: redis.Redis) -> None:
    for key, members, _ in SETS:
        c.sadd(key, *members)
    c.expire("set-int32", 3600)
    c.execute_command("SELECT", 7)
    c.sadd("set-db7", "only")
    c.execute_command("SELECT", 0)


def check_set_encodings(c: redis.Redis, seven_two: bool) -> None:
    """Intsets and hashtables as Redis 7.0 has them too; listpacks only in 7.2 (and Goblin)."""
    for key, _, enc in SETS:
        want = enc if seven_two or enc != "listpack" else "hashtable"
        assert c.object("encoding", key) == want.encode(), key


def single(server: Proc) -> redis.Redis:
    return redis.Redis(port=server.port, single_connection_client=True, socket_timeout=60,
                       retry=Retry(NoBackoff(), 0))


def test_goblin_snapshot_loads_in_redis(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "")
    c = single(g)
    fill(c)
    assert c.execute_command("SAVE") in OK
    expected = snapshot(g)
    assert info(c)["rdb_changes_since_last_save"] == 0
    check_set_encodings(c, True)
    g.stop()
    r = redis_server(procs, tmp_path, "--save", "", "--dbfilename", "dump.rdb")
    assert_same_data(snapshot(r), expected)
    assert "Done loading RDB" in r.output()
    check_set_encodings(r.client(), False)
    # Redis writes its own snapshot of what it loaded; Goblin loads it back unchanged.
    assert r.client().execute_command("SAVE") in OK
    r.stop()
    g2 = goblin(procs, tmp_path, "--save", "")
    assert_same_data(snapshot(g2), expected)
    check_set_encodings(g2.client(), True)


def test_redis_snapshot_loads_in_goblin(procs, tmp_path):
    r = redis_server(procs, tmp_path, "--save", "")
    c = single(r)
    fill(c)
    # Long repetitive members are LZF-compressed by Redis; a function library is in the file.
    c.zadd("compressible", {("abc" * 40) + str(i): i for i in range(20)})
    c.zadd("compressible-small", {"q" * 60: 1})
    c.execute_command("FUNCTION", "LOAD",
                      "#!lua name=lib\nredis.register_function('f', function(keys, args) return 1 end)")
    assert c.object("encoding", "small") == b"listpack"
    assert c.object("encoding", "large") == b"skiplist"
    expected = snapshot(r)
    assert c.execute_command("SAVE") in OK
    r.stop()
    g = goblin(procs, tmp_path, "--save", "")
    assert_same_data(snapshot(g), expected)
    gc = g.client()
    assert gc.object("encoding", "small") == b"listpack"
    assert gc.object("encoding", "large") == b"skiplist"
    check_set_encodings(gc, True)
    # The library came along (test_functions.py checks libraries across files in depth).
    assert gc.execute_command("FCALL", "f", 0) == 1
    assert f"keys loaded: {len(expected)}," in g.output()


def test_streams_go_from_redis_files_to_goblin_and_back(procs, tmp_path):
    """A Redis 7.0 file (stream type 19) with every type, a stream of several nodes with
    tombstones, groups with pending entries and consumers, and an emptied stream: Goblin
    loads it, and its own file loads back into Redis 7.0 with XINFO STREAM FULL unchanged
    (a full trip through Goblin's reader and writer)."""
    r = redis_server(procs, tmp_path, "--save", "", "--stream-node-max-entries", "4")
    c = r.client()
    c.zadd("z", {"m": 1})
    c.set("a-string", "v")
    c.sadd("a-set", "x", "y")
    c.rpush("a-list", *range(300))
    c.hset("a-hash", mapping={"f": "v"})
    for i in range(1, 30):
        c.xadd("s", {"user": f"u{i:08}", "amount": i * 7}, id=f"{i}-{i % 3}")
    c.xdel("s", "2-2", "9-0", "10-1")
    c.xgroup_create("s", "g1", id="3-0")
    c.xgroup_create("s", "g2", id="$")
    c.xreadgroup("g1", "alice", {"s": ">"}, count=4)
    c.xreadgroup("g1", "bob", {"s": ">"}, count=3)
    c.xack("s", "g1", "5-2")
    c.execute_command("XGROUP", "CREATECONSUMER", "s", "g2", "carol")
    c.xadd("empty", {"f": "v"}, id="7-7", maxlen=0)
    full = {k: c.execute_command("XINFO", "STREAM", k, "FULL") for k in ("s", "empty")}
    ranges = {k: c.xrange(k) for k in ("s", "empty")}
    c.execute_command("SAVE")
    r.stop()
    g = goblin(procs, tmp_path, "--save", "")
    gc = g.client()
    assert gc.dbsize() == 7
    assert {k: gc.xrange(k) for k in ranges} == ranges
    assert gc.type("s") == b"stream" and gc.object("encoding", "s") == b"stream"
    assert gc.xlen("empty") == 0
    assert gc.execute_command("SAVE") in OK
    g.stop()
    r2 = redis_server(procs, tmp_path, "--save", "")
    c2 = r2.client()
    assert c2.dbsize() == 7
    for k, want in full.items():
        assert c2.execute_command("XINFO", "STREAM", k, "FULL") == want, k
    assert c2.lrange("a-list", 0, -1) == [b"%d" % i for i in range(300)]


def test_bgsave_info_lastsave_and_schedule(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "")
    c = single(g)
    c.zadd("big", {f"m{i}": i for i in range(200_000)})
    before = c.lastsave()
    i = info(c)
    assert i["rdb_changes_since_last_save"] > 0 and i["rdb_bgsave_in_progress"] == 0
    time.sleep(1.1)
    assert c.execute_command("BGSAVE") in (True, b"Background saving started")
    # While the child writes, the server serves, and a second BGSAVE is refused or scheduled.
    assert c.zadd("during", {"x": 1}) == 1
    try:
        assert c.execute_command("BGSAVE", "SCHEDULE") in (True, b"Background saving scheduled",
                                                           b"Background saving started")
    except redis.ResponseError:
        pass
    with pytest.raises(redis.ResponseError):
        c.execute_command("BGSAVE", "NOW")
    i = wait_bgsave(c)
    assert i["rdb_last_bgsave_status"] == "ok"
    assert i["rdb_last_bgsave_time_sec"] >= 0
    assert c.lastsave() > before
    time.sleep(0.5)
    i = wait_bgsave(c)  # the scheduled one, if it ran
    assert i["rdb_changes_since_last_save"] <= 1
    assert c.info("stats")["total_forks"] >= 1
    g.stop()
    r = redis_server(procs, tmp_path, "--save", "", "--dbfilename", "dump.rdb")
    assert r.client().zcard("big") == 200_000


def test_bgsave_failure_is_reported(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "", "--enable-protected-configs", "yes")
    c = single(g)
    c.zadd("k", {"m": 1})
    doomed = tmp_path / "doomed"
    doomed.mkdir()
    c.config_set("dir", str(doomed))
    doomed.rmdir()
    assert c.execute_command("BGSAVE") in (True, b"Background saving started")
    assert wait_bgsave(c)["rdb_last_bgsave_status"] == "err"
    with pytest.raises(redis.ResponseError):
        c.execute_command("SAVE")
    with pytest.raises(redis.ResponseError, match="Errors trying to SHUTDOWN"):
        c.execute_command("SHUTDOWN", "SAVE")
    assert c.ping()


def test_save_points_config_and_sigterm(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "1 1", "--enable-protected-configs", "yes")
    c = single(g)
    assert c.config_get("save") == {"save": "1 1"}
    assert c.config_get("dbfilename") == {"dbfilename": "dump.rdb"}
    assert c.config_get("dir") == {"dir": str(tmp_path.resolve())}
    # Goblin's own parameter is listed when named, not by globs (CONFIG GET * stays Redis's).
    assert c.config_get("rdb-skip-unsupported-types") == {"rdb-skip-unsupported-types": "no"}
    assert "rdb-skip-unsupported-types" not in c.config_get("*")
    with pytest.raises(redis.ResponseError):
        c.config_set("dir", str(tmp_path / "missing"))
    with pytest.raises(redis.ResponseError):
        c.config_set("dbfilename", "a/b.rdb")
    c.zadd("k", {"a": 1})
    deadline = time.monotonic() + 10
    while not (tmp_path / "dump.rdb").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "dump.rdb").exists()
    assert "changes in 1 seconds. Saving..." in g.output()
    # SIGTERM saves when save points are set.
    c.config_set("save", "3600 1")
    c.config_set("dbfilename", "other.rdb")
    c.zadd("k", {"b": 2})
    g.proc.send_signal(signal.SIGTERM)
    assert g.wait() == 0
    g2 = goblin(procs, tmp_path, "--save", "", "--dbfilename", "other.rdb")
    assert g2.client().zrange("k", 0, -1) == [b"a", b"b"]
    # ... and does not without save points.
    g2.client().zadd("k", {"c": 3})
    g2.proc.send_signal(signal.SIGTERM)
    assert g2.wait() == 0
    g3 = goblin(procs, tmp_path, "--save", "", "--dbfilename", "other.rdb")
    assert g3.client().zrange("k", 0, -1) == [b"a", b"b"]


def test_default_save_points_redis_conf_and_shutdown(procs, tmp_path):
    conf = tmp_path / "goblin.conf"
    conf.write_text('save 900 1\nsave 300 10\ndbfilename "from-conf.rdb"\n')
    p = Proc(GOBLIN_BIN, tmp_path, str(conf), "--dir", str(tmp_path), name="goblin")
    procs.append(p)
    p.start()
    c = single(p)
    assert c.config_get("save") == {"save": "900 1 300 10"}
    c.zadd("k", {"a": 1})
    with pytest.raises(redis.ConnectionError):
        c.execute_command("SHUTDOWN", "NOSAVE")
    p.wait()
    assert not (tmp_path / "from-conf.rdb").exists()
    g = goblin(procs, tmp_path, "--dbfilename", "x.rdb")
    c = single(g)
    assert c.config_get("save") == {"save": "3600 1 300 100 60 10000"}
    c.zadd("k", {"a": 1})
    with pytest.raises(redis.ConnectionError):
        c.execute_command("SHUTDOWN")
    g.wait()
    assert (tmp_path / "x.rdb").exists()
    g = goblin(procs, tmp_path, "--save", "", "--dbfilename", "y.rdb")
    c = single(g)
    c.zadd("k", {"a": 1})
    with pytest.raises(redis.ConnectionError):
        c.execute_command("SHUTDOWN", "SAVE")
    g.wait()
    assert (tmp_path / "y.rdb").exists()


def test_debug_reload(procs, tmp_path):
    g = goblin(procs, tmp_path, "--save", "")
    c = single(g)
    fill(c)
    before = snapshot(g)
    assert c.execute_command("DEBUG", "RELOAD") in OK
    assert_same_data(snapshot(g), before)
    # A damaged file is refused by DEBUG RELOAD NOSAVE and the data stays as it was.
    data = bytearray((tmp_path / "dump.rdb").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / "dump.rdb").write_bytes(bytes(data))
    with pytest.raises(redis.ResponseError, match="Error trying to load the RDB dump"):
        c.execute_command("DEBUG", "RELOAD", "NOSAVE")
    assert_same_data(snapshot(g), before)
    assert "wrong RDB checksum" in g.output() or "corrupt" in g.output()


# --------------------------------------------------------------------------------------------
# kill -9 during SAVE and BGSAVE
# --------------------------------------------------------------------------------------------

BASE_MEMBERS = 400_000
PER_GENERATION = 2_000


def check_generation(server: Proc) -> int:
    """The generation of the loaded snapshot, checking the data is that generation's whole."""
    c = server.client()
    gen = c.zscore("gen", "g")
    gen = 0 if gen is None else int(gen)
    assert c.zcard("big") == BASE_MEMBERS + PER_GENERATION * gen
    if gen:
        assert c.zscore("big", f"gen{gen}:{PER_GENERATION - 1}") == gen
    return gen


@pytest.mark.parametrize("mode", ["SAVE", "BGSAVE"])
def test_kill_9_during_save_keeps_last_complete_snapshot(procs, tmp_path, mode):
    rng = random.Random(1234 if mode == "SAVE" else 4321)
    g = goblin(procs, tmp_path, "--save", "")
    c = g.client()
    pipe = c.pipeline(transaction=False)
    for start in range(0, BASE_MEMBERS, 50_000):
        pipe.zadd("big", {f"base:{i}": i for i in range(start, start + 50_000)})
    pipe.execute()
    t0 = time.monotonic()
    assert c.execute_command("SAVE") in OK
    save_secs = time.monotonic() - t0
    acknowledged = 0
    outcomes = []
    for _ in range(8):
        g.kill9()
        g = goblin(procs, tmp_path, "--save", "")
        gen = check_generation(g)
        assert gen >= acknowledged, "a snapshot acknowledged by SAVE was lost"
        if outcomes:
            outcomes[-1] = "new" if gen == nxt else "old"
        c = g.client()
        nxt = gen + 1
        outcomes.append("?")
        c.zadd("big", {f"gen{nxt}:{j}": nxt for j in range(PER_GENERATION)})
        c.zadd("gen", {"g": nxt})
        replies = []

        def run_save():
            try:
                replies.append(g.client().execute_command(mode))
            except redis.ConnectionError:
                pass

        t = threading.Thread(target=run_save)
        t.start()
        time.sleep(rng.uniform(0, save_secs * 1.5))
        if mode == "BGSAVE" and rng.random() < 0.5:
            # Wait for the fork, then kill the parent while the child writes.
            while not replies and t.is_alive():
                time.sleep(0.001)
        g.kill9()
        t.join()
        if mode == "SAVE" and replies and replies[0] in OK:
            acknowledged = nxt
    g.kill9()
    g = goblin(procs, tmp_path, "--save", "")
    gen = check_generation(g)
    assert gen >= acknowledged
    outcomes[-1] = "new" if gen == nxt else "old"
    assert "panicked" not in g.output()
    # Which snapshot each kill left (the old one when the kill landed mid-save).
    # Temp files of killed saves are removed at the next start (a dying child's may remain).
    stray = list(tmp_path.glob("temp-*.rdb"))
    print(f"{mode}: save {save_secs * 1000:.0f} ms; outcomes {outcomes}; stray temp files {len(stray)}")
    assert len(stray) <= 1


# --------------------------------------------------------------------------------------------
# Corrupt and truncated files
# --------------------------------------------------------------------------------------------

def small_valid_file(procs, workdir: Path) -> bytes:
    g = goblin(procs, workdir, "--save", "")
    c = g.client()
    c.zadd("s", {"a": 1, "bb": 2.5, "123": float("inf")})
    c.zadd("t", {"x": -1})
    c.pexpire("t", 10_000_000)
    c.execute_command("SELECT", 1)
    c.zadd("u", {f"m{i}": i for i in range(3)})
    assert c.execute_command("SAVE") in OK
    g.stop()
    return (workdir / "dump.rdb").read_bytes()


def start_with_file(workdir: Path, data: bytes) -> tuple[int | None, str]:
    """Starts goblin on `data` as dump.rdb; returns (exit code or None if it came up, output)."""
    path = workdir / "dump.rdb"
    path.write_bytes(data)
    p = subprocess.Popen([GOBLIN_BIN, "--port", str(free_port()), "--bind", "127.0.0.1",
                          "--dir", str(workdir), "--save", "3600 1"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        out, _ = p.communicate(timeout=1.0)
        code = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        code = None
    assert path.read_bytes() == data, "the snapshot was modified"
    return code, out.decode(errors="replace")


def test_every_truncation_fails_cleanly_at_start(procs, tmp_path):
    data = small_valid_file(procs, tmp_path)
    work = tmp_path / "t"
    work.mkdir()
    for cut in range(len(data)):
        code, out = start_with_file(work, data[:cut])
        assert code == 1, (cut, out)
        assert "offset" in out and "panicked" not in out, (cut, out)
    code, out = start_with_file(work, data)
    assert code is None, out


def test_every_byte_mutation_fails_cleanly_at_start(procs, tmp_path):
    data = small_valid_file(procs, tmp_path)
    work = tmp_path / "m"
    work.mkdir()
    rng = random.Random(99)
    for pos in range(len(data)):
        bad = bytearray(data)
        bad[pos] ^= rng.choice([0x01, 0x10, 0x80, 0xFF, rng.randrange(1, 256)])
        code, out = start_with_file(work, bytes(bad))
        assert code == 1, (pos, out)
        assert "offset" in out and "panicked" not in out, (pos, out)
