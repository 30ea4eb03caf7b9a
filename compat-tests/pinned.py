"""Running scripts of (command, reply) steps pinned on Goblin alone, for the commands newer
than the Redis at hand (Redis 8's): see test_hash_getex.py and its neighbours."""

from __future__ import annotations

import re
import time
from pathlib import Path

import redis

from aof_stream import incr_stream
from harness import make_client
from hfe_scripts import Err


def outcome(c: redis.Redis, cmd):
    """The reply to `cmd`, or its error as Err."""
    try:
        return c.execute_command(*cmd)
    except redis.ResponseError as e:
        return Err(str(e))


def run_pinned(server, script, protocol: int = 2) -> None:
    """Runs `script` on a flushed `server` over `protocol`, checking each reply against its
    pin (HGETALL's pin is a flat list: a map in RESP3); ("SLEEP", s) steps wait."""
    c = make_client(server, protocol=protocol)
    c.response_callbacks = {}
    c.execute_command("FLUSHALL")
    try:
        for cmd, pinned in script:
            if cmd[0] == "SLEEP":
                time.sleep(cmd[1])
                continue
            if protocol == 3 and cmd[0] == "HGETALL" and isinstance(pinned, list):
                pinned = dict(zip(pinned[::2], pinned[1::2]))
            assert outcome(c, cmd) == pinned, cmd
    finally:
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        c.close()


def aof_records(workdir: Path) -> list:
    """The AOF's incremental records, 13-digit times within ten minutes of now shown as T."""
    now = time.time() * 1000
    return [[b"T" if re.fullmatch(rb"\d{13}", a) and abs(int(a) - now) < 600_000 else a for a in cmd]
            for cmd in incr_stream(workdir)]


def write_aof(procs, workdir: Path, script) -> list:
    """Runs `script` on a Goblin with an AOF (no preamble) and returns its records."""
    from test_persistence import goblin

    g = goblin(procs, workdir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--save", "")
    c = g.client()
    c.config_set("appendfsync", "always")
    for cmd in script:
        outcome(c, cmd)
    c.close()
    return aof_records(g.workdir)
