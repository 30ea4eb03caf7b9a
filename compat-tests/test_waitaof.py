"""WAITAOF numlocal numreplicas timeout against Redis 7.2.4 (REDIS72_BIN, default the tree's
/work/redis-7.2.4/src/redis-server; skipped without it: Debian's 7.0 has no WAITAOF).

Each scenario runs as a script of steps on servers of one kind and of the other, and the
replies (errors included) must be the same, step by step:

- one server: the argument errors in Redis's order, `appendonly no`, MULTI, scripts,
  COMMAND INFO / DOCS, CLIENT UNBLOCK (TIMEOUT and ERROR), timeouts, appendfsync always /
  no / everysec, a client waiting when the AOF is turned off, an AOF whose first rewrite
  waits behind a BGSAVE, a replica's refusal;
- a master and a replica (Redis/Redis is the reference; Goblin/Goblin, Goblin master with a
  Redis 7.2.4 replica, Redis 7.2.4 master with a Goblin replica): a master demoted while a
  client waits, the replica's appendfsync no / everysec / always and its rewrites (its
  `REPLCONF ACK <offset> FACK <aofoffset>`), a replica stopped by SIGSTOP, a replica or a
  master without AOF.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import redis

from harness import GOBLIN_BIN, free_port
from test_persistence import Proc, procs  # noqa: F401 (the fixture)
from test_replication import wait_for

REDIS72_BIN = os.environ.get("REDIS72_BIN", "/work/redis-7.2.4/src/redis-server")

pytestmark = pytest.mark.skipif(not Path(REDIS72_BIN).exists(),
                                reason=f"no Redis 7.2.4 at {REDIS72_BIN}")

BINARIES = {"redis": REDIS72_BIN, "goblin": GOBLIN_BIN}


def start(procs, kind: str, workdir: Path, *args: str) -> Proc:  # noqa: F811
    workdir.mkdir(parents=True, exist_ok=True)
    p = Proc(BINARIES[kind], workdir, "--dir", str(workdir), "--save", "",
             "--auto-aof-rewrite-percentage", "0", "--enable-debug-command", "yes", *args,
             name=kind)
    procs.append(p)
    return p.start()


def outcome(f):
    try:
        return ("ok", f())
    except redis.ResponseError as e:
        return ("err", str(e))


class Steps:
    """The labelled outcomes of one run."""

    def __init__(self):
        self.seen: list[tuple[str, tuple]] = []

    def __call__(self, label: str, f):
        self.seen.append((label, outcome(f)))


def compare(reference: Steps, other: Steps, what: str) -> None:
    assert [label for label, _ in reference.seen] == [label for label, _ in other.seen]
    diffs = [f"{label}: redis {r!r} != {what} {o!r}"
             for (label, r), (_, o) in zip(reference.seen, other.seen) if r != o]
    assert not diffs, "\n".join(diffs)


def info(c: redis.Redis, field: str, section: str = "persistence"):
    return c.info(section).get(field)


def aof_settled(c: redis.Redis) -> bool:
    return info(c, "aof_rewrite_in_progress") == 0 and info(c, "aof_rewrite_scheduled") == 0


def blocked(c: redis.Redis, n: int = 1) -> None:
    wait_for(lambda: info(c, "blocked_clients", "clients") == n, 10, f"{n} blocked clients")


class Deferred:
    """A connection whose reply is read later (a client left blocked)."""

    def __init__(self, p: Proc):
        self.conn = p.client().connection_pool.get_connection()

    def call(self, *args):
        self.conn.send_command(*args)
        return self.conn.read_response()

    def send(self, *args):
        self.conn.send_command(*args)

    def read(self):
        try:
            return ("ok", self.conn.read_response())
        except redis.ResponseError as e:
            return ("err", str(e))

    def close(self):
        self.conn.disconnect()


def standalone(procs, kind: str, workdir: Path) -> Steps:  # noqa: F811
    p = start(procs, kind, workdir, "--appendonly", "no")
    c = p.client()
    s = Steps()
    for args in (("1", "0"), ("2", "0", "0"), ("-1", "0", "0"), ("x", "0", "0"),
                 ("99999999999999999999", "0", "0"), ("0", "-1", "0"), ("0", "x", "0"),
                 ("0", "0", "-1"), ("0", "0", "x"), ("0", "0", "9223372036854775807"),
                 ("2", "-1", "x"), ("1", "x", "-1"), ("1", "0", "0"), ("1", "1", "10"),
                 ("0", "0", "0"), ("0", "1", "10")):
        s(f"WAITAOF {' '.join(args)} with appendonly no", lambda: c.execute_command("WAITAOF", *args))
    c.incr("foo")
    s("after a write", lambda: c.execute_command("WAITAOF", "0", "0", "0"))

    def multi(*cmd):
        pipe = c.pipeline(transaction=True)
        pipe.incr("foo")
        pipe.execute_command(*cmd)
        return pipe.execute(raise_on_error=False)

    s("in MULTI, would block", lambda: [x if not isinstance(x, Exception) else str(x)
                                        for x in multi("WAITAOF", "0", "1", "0")])
    s("in MULTI, numlocal without AOF", lambda: [x if not isinstance(x, Exception) else str(x)
                                                 for x in multi("WAITAOF", "1", "0", "0")])
    s("EVAL redis.call", lambda: c.eval("return redis.call('waitaof', '0', '0', '0')", 0))
    s("EVAL redis.pcall", lambda: c.eval(
        "local r = redis.pcall('waitaof', '0', '0', '0'); return r['err']", 0))
    unparsed = Deferred(p)
    s("COMMAND INFO", lambda: unparsed.call("COMMAND", "INFO", "waitaof"))
    s("COMMAND DOCS", lambda: unparsed.call("COMMAND", "DOCS", "waitaof"))
    unparsed.close()
    s("ACL CAT connection has it", lambda: "waitaof" in c.acl_cat("connection"))

    # CLIENT UNBLOCK: as a timeout (the counts now), then as an error.
    for how in ("TIMEOUT", "ERROR"):
        d = Deferred(p)
        cid = d.call("CLIENT", "ID")
        d.send("WAITAOF", "0", "1", "0")
        blocked(c)
        s(f"CLIENT UNBLOCK {how}", lambda: c.execute_command("CLIENT", "UNBLOCK", cid, how))
        s(f"unblocked by {how}", d.read)
        d.close()
    s("timeout with no replica", lambda: c.execute_command("WAITAOF", "0", "1", "50"))

    # The local AOF.
    c.config_set("appendonly", "yes")
    wait_for(lambda: aof_settled(c), 20, "the first rewrite")
    c.config_set("appendfsync", "always")
    c.incr("foo")
    s("appendfsync always", lambda: c.execute_command("WAITAOF", "1", "0", "0"))
    s("numreplicas times out, numlocal counted", lambda: c.execute_command("WAITAOF", "1", "1", "50"))
    c.config_set("appendfsync", "no")
    c.incr("foo")
    s("appendfsync no: times out", lambda: c.execute_command("WAITAOF", "1", "0", "50"))
    c.config_set("appendfsync", "everysec")
    s("everysec fsyncs what no left", lambda: c.execute_command("WAITAOF", "1", "0", "0"))
    c.incr("foo")
    s("appendfsync everysec", lambda: c.execute_command("WAITAOF", "1", "0", "0"))

    # A client waiting for the local fsync when the AOF is turned off.
    c.config_set("appendfsync", "no")
    d = Deferred(p)
    d.call("INCR", "foo")
    d.send("WAITAOF", "1", "0", "0")
    blocked(c)
    c.config_set("appendonly", "no")
    s("waiting when appendonly is turned off", d.read)
    d.close()
    c.incr("foo")
    s("appendonly no", lambda: c.execute_command("WAITAOF", "1", "0", "0"))

    # The first rewrite postponed behind a BGSAVE: nothing fsynced until it ran.
    c.config_set("appendfsync", "everysec")
    c.set("x", "y")
    c.config_set("rdb-key-save-delay", "1000000")
    c.bgsave()
    c.config_set("appendonly", "yes")
    s("rewrite scheduled", lambda: info(c, "aof_rewrite_scheduled"))
    c.set("x", "y")
    s("before the postponed rewrite", lambda: c.execute_command("WAITAOF", "1", "0", "50"))
    c.config_set("rdb-key-save-delay", "0")
    s("after the postponed rewrite", lambda: c.execute_command("WAITAOF", "1", "0", "20000"))
    wait_for(lambda: aof_settled(c), 20, "the rewrite")

    # A replica refuses it, after checking the arguments.
    c.replicaof("127.0.0.1", free_port())
    s("on a replica, bad numlocal", lambda: c.execute_command("WAITAOF", "5", "0", "0"))
    s("on a replica", lambda: c.execute_command("WAITAOF", "0", "0", "0"))
    c.replicaof("no", "one")
    return s


def test_standalone_as_redis_72(procs, tmp_path):  # noqa: F811
    reference = standalone(procs, "redis", tmp_path / "redis")
    compare(reference, standalone(procs, "goblin", tmp_path / "goblin"), "goblin")


def synced(master: redis.Redis, replica: redis.Redis) -> bool:
    r = replica.info("replication")
    return (r.get("master_link_status") == "up"
            and r.get("slave_repl_offset") == master.info("replication")["master_repl_offset"]
            and aof_settled(replica))


def replicated(procs, master_kind: str, replica_kind: str, workdir: Path) -> Steps:  # noqa: F811
    m = start(procs, master_kind, workdir / "m", "--appendonly", "yes")
    r = start(procs, replica_kind, workdir / "r", "--appendonly", "yes")
    mc, rc = m.client(), r.client()
    mc.config_set("appendfsync", "always")
    rc.config_set("appendfsync", "no")
    s = Steps()

    # A master that becomes a replica drops its waiting clients.
    d = Deferred(r)
    d.call("INCR", "foo")
    d.send("WAITAOF", "0", "1", "0")
    blocked(rc)
    rc.replicaof("127.0.0.1", m.port)
    s("demoted while waiting", d.read)
    d.close()
    wait_for(lambda: synced(mc, rc), 30, "the replica's sync and rewrite")

    def after_write(label: str, *waitaof: str) -> None:
        mc.incr("foo")
        s(label, lambda: mc.execute_command("WAITAOF", *waitaof))

    after_write("replica appendfsync no", "0", "1", "50")
    rc.config_set("appendfsync", "everysec")
    after_write("replica appendfsync everysec", "0", "1", "0")
    rc.bgrewriteaof()
    wait_for(lambda: aof_settled(rc), 20, "the replica's rewrite")
    after_write("after the replica's rewrite", "0", "1", "0")
    rc.config_set("appendfsync", "always")
    after_write("replica appendfsync always", "1", "1", "0")
    s("on the replica", lambda: rc.execute_command("WAITAOF", "0", "0", "0"))

    # A stopped replica acknowledges nothing; it catches up once it runs again.
    os.kill(r.proc.pid, signal.SIGSTOP)
    try:
        after_write("replica stopped", "1", "1", "50")
    finally:
        os.kill(r.proc.pid, signal.SIGCONT)
    s("replica running again", lambda: mc.execute_command("WAITAOF", "1", "1", "0"))
    s("a client that wrote nothing", lambda: m.client().execute_command("WAITAOF", "1", "1", "0"))

    # A replica without AOF sends no FACK; turned on again, it counts after its rewrite.
    rc.config_set("appendonly", "no")
    after_write("replica appendonly no", "1", "1", "50")
    s("local only", lambda: mc.execute_command("WAITAOF", "1", "0", "0"))
    rc.config_set("appendonly", "yes")
    wait_for(lambda: aof_settled(rc), 20, "the replica's first rewrite")
    after_write("replica appendonly yes again", "1", "1", "0")

    # A master without AOF.
    mc.config_set("appendonly", "no")
    after_write("master appendonly no", "0", "1", "0")
    s("master appendonly no, numlocal", lambda: mc.execute_command("WAITAOF", "1", "1", "0"))
    return s


@pytest.mark.parametrize("master_kind,replica_kind",
                         [("goblin", "goblin"), ("goblin", "redis"), ("redis", "goblin")])
def test_replicated_as_redis_72(procs, tmp_path, master_kind, replica_kind):  # noqa: F811
    reference = replicated(procs, "redis", "redis", tmp_path / "reference")
    compare(reference, replicated(procs, master_kind, replica_kind, tmp_path / "under-test"),
            f"{master_kind} master, {replica_kind} replica")
