"""RESTORE of corrupt payloads and sanitize-dump-payload, against Debian's Redis 7.0.

The bodies are those of Redis's tests/integration/corrupt-dump.tcl (valid CRC64 recomputed,
RDB version 9 or 10, which 7.0 reads): blobs whose integrity check fails in Redis under both
settings, and duplicates in a listpack, which Redis's deep check (sanitize-dump-payload yes,
or clients for a client whose user lacks skip-sanitize-payload) refuses and its shallow
check lets through. INFO's dump_payload_sanitizations counts the blobs checked in depth.
The log lines of a refused payload and of a snapshot load (DEBUG RELOAD) are Redis's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from test_dump_restore import footer

# Refused whatever sanitize-dump-payload says ("Bad data format").
ALWAYS_BAD = {
    "hash-ziplist-bad-entry-len": (
        b"\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00"
        b"\x04\x14\x63\x00\x04\x02\x64\x00\xFF",
        9,
    ),
    "ziplist-bad-zlbytes": (
        b"\x0D\x1B\x25\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00"
        b"\x04\x02\x63\x00\x04\x02\x64\x00\xFF",
        9,
    ),
    "hash-ziplist-dup-records": (
        b"\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00"
        b"\x04\x02\x61\x00\x04\x02\x64\x00\xFF",
        9,
    ),
    "quicklist-big-prev-len": (
        b"\x0E\x01\x13\x13\x00\x00\x00\x0E\x00\x00\x00\x02\x00\x00\x02\x61\x00\x0E\x02\x62"
        b"\x00\xFF",
        9,
    ),
    "quicklist-wrong-count": (
        b"\x0E\x01\x13\x13\x00\x00\x00\x0E\x00\x00\x00\x03\x00\x00\x02\x61\x00\x04\x02\x62"
        b"\x00\xFF",
        9,
    ),
    "quicklist-empty-ziplist": (b"\x0E\x01\x0B\x0B\x00\x00\x00\x0A\x00\x00\x00\x00\x00\xFF", 9),
    "quicklist2-empty-plain-node": (b"\x12\x01\x01\x00", 10),
    "hash-empty-zipmap": (b"\x09\x02\x00\xFF", 9),
    "zset-ziplist-entry-lensize-0": (
        b"\x0C\x3D\x3D\x00\x00\x00\x3A\x00\x00\x00\x14\x00\x00\xF1\x02\xF1\x02\x02\x5F\x31"
        b"\x04\xF2\x02\xF3\x02\xF3\x02\x02\x5F\x33\x04\xF4\x02\xEE\x02\xF5\x02\x02\x5F\x35"
        b"\x04\xF6\x02\xF7\x02\xF7\x02\x02\x5F\x37\x04\xF8\x02\xF9\x02\xF9\x02\x02\x5F\x39"
        b"\x04\xFA\xFF",
        9,
    ),
    "set-dup-strings": (
        b"\x02\x0A\x02\x5F\x39\xC0\x06\x02\x5F\x31\xC0\x00\xC0\x04\x02\x5F\x35\xC0\x02\xC0"
        b"\x08\x02\x5F\x31\x02\x5F\x33",
        9,
    ),
    "empty-zset": (b"\x05\xC0\x01", 9),
    "hash-len-0": (b"\x04\xC0\x21", 9),
    "huge-string": (b"\x00\x81\x01", 9),
}

# A hash listpack holding field "a" twice: refused by the deep check only.
DUP_HASH_LISTPACK = (
    b"\x10\x17\x17\x00\x00\x00\x04\x00\x82\x61\x00\x03\x82\x62\x00\x03\x82\x61\x00\x03\x82"
    b"\x64\x00\x03\xff"
)


@pytest.mark.parametrize("sanitize", ["no", "yes"])
@pytest.mark.parametrize("name", sorted(ALWAYS_BAD))
def test_corrupt_payloads_are_bad_data_format(both, sanitize, name):
    body, version = ALWAYS_BAD[name]
    both.config_set("sanitize-dump-payload", sanitize)
    both.err("RESTORE", "k", 0, footer(body, version))
    both.ok("PING")
    assert both("EXISTS", "k") == 0


def sanitizations(both) -> tuple[int, int]:
    """INFO's dump_payload_sanitizations on Redis and on Goblin."""

    def read(client) -> int:
        text = client.execute_command("INFO", "stats")
        if isinstance(text, bytes):
            text = text.decode()
        if isinstance(text, dict):
            return int(text["dump_payload_sanitizations"])
        field = next(line for line in text.splitlines() if line.startswith("dump_payload_san"))
        return int(field.split(":")[1])

    return read(both.redis), read(both.goblin)


@pytest.mark.parametrize(
    "sanitize, deep", [("no", False), ("yes", True), ("clients", True)]
)
def test_listpack_duplicates_refused_only_by_the_deep_check(both, sanitize, deep):
    both.config_set("sanitize-dump-payload", sanitize)
    before = sanitizations(both)
    if deep:
        both.err("RESTORE", "k", 0, footer(DUP_HASH_LISTPACK, 10))
    else:
        both.ok("RESTORE", "k", 0, footer(DUP_HASH_LISTPACK, 10))
        both("TYPE", "k")
    after = sanitizations(both)
    assert after[0] - before[0] == after[1] - before[1] == int(deep)


def test_clients_mode_spares_a_user_with_skip_sanitize_payload(both):
    both.config_set("sanitize-dump-payload", "clients")
    both.ok("ACL", "SETUSER", "default", "skip-sanitize-payload")
    try:
        both.ok("RESTORE", "k", 0, footer(DUP_HASH_LISTPACK, 10))
        both("ACL", "GETUSER", "default")
    finally:
        both.ok("ACL", "SETUSER", "default", "sanitize-payload")


def logged_after(server, marker: str) -> str | None:
    """What follows `marker` on the last line of `server`'s log holding it (None: no line)."""
    lines = [ln for ln in server.log_path.read_text(errors="replace").splitlines() if marker in ln]
    return lines[-1].split(marker, 1)[1] if lines else None


def test_refused_payload_logged_at_verbose_as_redis(both):
    """Redis's rdbReportError in a RESTORE: 'Internal error in RDB reading offset N' (then
    Redis's own rdb.c line and the reason), at verbose level."""
    both.config_set("loglevel", "verbose")
    body, version = ALWAYS_BAD["hash-ziplist-dup-records"]
    both.err("RESTORE", "k", 0, footer(body, version))
    marker = "Internal error in RDB reading offset "
    logged = [logged_after(s, marker) for s in both.pair]
    assert all(line is not None for line in logged), logged


def test_done_loading_line_as_redis(both):
    """Redis's rdbLoadRio ends with 'Done loading RDB, keys loaded: N, keys expired: N.',
    naming skipped empty keys only when there were some."""
    both.ok("SET", "a", "1")
    both.ok("SET", "b", "2")
    both.ok("DEBUG", "RELOAD")
    redis_line, goblin_line = (logged_after(s, "Done loading RDB") for s in both.pair)
    assert redis_line == ", keys loaded: 2, keys expired: 0."
    assert goblin_line == redis_line


EMPTY_KEYS_RDB = Path(os.environ.get("REDIS_SRC", "/work/redis-7.2.4")) / "tests/assets/corrupt_empty_keys.rdb"


@pytest.mark.skipif(not EMPTY_KEYS_RDB.exists(), reason="no Redis source tree (REDIS_SRC)")
def test_empty_keys_skipped_logged_as_redis(both):
    """Redis's tests/assets/corrupt_empty_keys.rdb (nine empty keys) loaded by DEBUG RELOAD
    NOSAVE: each skipped key named by 'rdbLoadObject skipping empty key:', and counted at
    the end of the 'Done loading RDB' line."""
    for server in both.pair:
        shutil.copy(EMPTY_KEYS_RDB, server.workdir / "dump.rdb")
    both.ok("DEBUG", "RELOAD", "NOSAVE")
    assert both("DBSIZE") == 0
    logs = [s.log_path.read_text(errors="replace") for s in both.pair]
    named = [sorted(ln.split("rdbLoadObject skipping empty key: ", 1)[1]
                    for ln in log.splitlines() if "rdbLoadObject skipping empty key: " in ln)
             for log in logs]
    assert len(named[0]) == 9 and named[1] == named[0]
    done = [logged_after(s, "Done loading RDB") for s in both.pair]
    assert done[0] == ", keys loaded: 0, keys expired: 0, empty keys skipped: 9."
    assert done[1] == done[0]


def test_config_values(both):
    for value in ["yes", "clients", "NO"]:
        both.config_set("sanitize-dump-payload", value)
        both.pairs("CONFIG", "GET", "sanitize-dump-payload")
    both.err("CONFIG", "SET", "sanitize-dump-payload", "maybe")
    both.pairs("CONFIG", "GET", "sanitize-dump-payload")
