"""The change counter against Redis: each write adds the number of elements it changed, as
Redis's server.dirty does (ZADD adds its added + updated members, ZREM its removed ones, DEL
one per key, FLUSHALL the key count and one more...), so rdb_changes_since_last_save and the
save points agree after multi-member writes.
"""

from __future__ import annotations

import time

from harness import start_pair


def changes(c):
    fields = c.execute_command("INFO", "persistence")
    if isinstance(fields, bytes):
        fields = dict(line.split(":", 1) for line in fields.decode().splitlines() if ":" in line)
    return int(fields["rdb_changes_since_last_save"]), int(fields["rdb_saves"])


def test_each_write_counts_its_elements(both):
    def same(cmd=None):
        r, g = (changes(c)[0] for c in both.clients())
        assert r == g, (cmd, r, g)

    both("FLUSHALL")
    both("SAVE")
    steps = [
        ("ZADD", "k", 1, "a", 2, "b", 3, "c"),
        ("ZADD", "k", 1, "a", 5, "b", 7, "d"),
        ("ZADD", "k", "XX", "CH", 9, "a"),
        ("ZADD", "k", "NX", 9, "a"),
        ("ZINCRBY", "k", 1, "a"),
        ("ZREM", "k", "a", "b", "zz"),
        ("ZPOPMIN", "k", 2),
        ("ZADD", "k", 1, "a", 2, "b", 3, "c", 4, "d"),
        ("ZREMRANGEBYRANK", "k", 0, 1),
        ("ZREMRANGEBYSCORE", "k", 3, 3),
        ("ZUNIONSTORE", "d", 1, "k"),
        ("ZUNIONSTORE", "d", 1, "nokey"),
        ("ZUNIONSTORE", "d", 1, "nokey"),
        ("ZRANGESTORE", "e", "k", 0, -1),
        ("ZMPOP", 1, "k", "MIN"),
        ("ZADD", "a", 1, "a"),
        ("ZADD", "b", 1, "b"),
        ("DEL", "a", "b", "zz"),
        ("ZADD", "a", 1, "a"),
        ("RENAME", "a", "c"),
        ("EXPIRE", "c", 100),
        ("PERSIST", "c"),
        ("COPY", "c", "f"),
        ("MOVE", "f", 1),
        ("SWAPDB", 0, 1),
        ("EXPIRE", "f", -1),
        ("FLUSHDB",),
        ("ZADD", "x", 1, "a"),
        ("FLUSHALL",),
    ]
    for cmd in steps:
        both(*cmd)
        same(cmd)
    before = changes(both.goblin)[0]
    both("ZADD", "big", *[x for m in range(2000) for x in (m, f"m{m}")])
    same()
    assert changes(both.goblin)[0] == before + 2000


def test_a_save_point_fires_after_one_multi_member_write(tmp_path_factory):
    pair = start_pair(tmp_path_factory, "--save", "2 1000")
    try:
        clients = [pair.admin(s) for s in pair]
        for c in clients:
            c.execute_command("ZADD", "small", *[x for m in range(999) for x in (m, f"m{m}")])
        time.sleep(3.5)
        assert [changes(c) for c in clients] == [(999, 0), (999, 0)]
        for c in clients:
            c.execute_command("ZADD", "big", 1, "one-more")
        # Both save within the same cron round (hz 10) and reset the counter when done.
        deadline = time.time() + 5
        while any(changes(c) != (0, 1) for c in clients) and time.time() < deadline:
            time.sleep(0.02)
        seen = [changes(c) for c in clients]
        assert seen == [(0, 1), (0, 1)], seen
        for c in clients:
            c.close()
    finally:
        pair.stop()


def test_string_and_set_writes_count_as_in_redis(both):
    both("FLUSHALL")
    both("SAVE")
    steps = [
        ("SET", "s", "v"),
        ("SET", "s", "w", "NX"),
        ("MSET", "a", "1", "b", "2", "c", "3"),
        ("MSETNX", "a", "1", "z", "2"),
        ("INCR", "a"),
        ("INCRBYFLOAT", "a", "1.5"),
        ("APPEND", "s", "x"),
        ("SETRANGE", "s", 0, "y"),
        ("SETRANGE", "s", 0, ""),
        ("SETBIT", "bits", 3, 1),
        ("SETBIT", "bits", 3, 1),
        ("BITFIELD", "bf", "SET", "u8", 0, 1, "INCRBY", "u8", 0, 2, "GET", "u8", 0),
        ("BITOP", "OR", "dst", "bits", "bf"),
        ("BITOP", "OR", "dst", "nokey"),
        ("GETEX", "s", "EX", 100),
        ("GETEX", "s", "PERSIST"),
        ("GETDEL", "s"),
        ("SADD", "t", "a", "b", "c", "a"),
        ("SADD", "t", "a"),
        ("SREM", "t", "a", "zz"),
        ("SMOVE", "t", "u", "b"),
        ("SMOVE", "t", "u", "zz"),
        ("SADD", "t", "1", "2", "3", "4", "5", "6"),
        ("SPOP", "t"),
        ("SPOP", "t", 2),
        ("SPOP", "t", 100),
        ("SADD", "p", "1", "2"),
        ("SADD", "q", "2", "3"),
        ("SINTERSTORE", "r", "p", "q"),
        ("SUNIONSTORE", "r", "p", "q"),
        ("SDIFFSTORE", "r", "p", "p"),
    ]
    for cmd in steps:
        if cmd[0] == "SPOP":  # random members: the replies differ, the counts must not
            for c in both.clients():
                c.execute_command(*cmd)
        else:
            both(*cmd)
        r, g = (changes(c)[0] for c in both.clients())
        assert r == g, (cmd, r, g)


def test_hash_writes_count_as_in_redis(both):
    both("FLUSHALL")
    both("SAVE")
    steps = [
        ("HSET", "h", "a", 1, "b", 2, "a", 3),
        ("HSET", "h", "a", 3),
        ("HMSET", "h", "c", 1, "d", 2),
        ("HSETNX", "h", "a", 9),
        ("HSETNX", "h", "e", 9),
        ("HSETNX", "new", "e", 9),
        ("HINCRBY", "h", "a", 5),
        ("HINCRBY", "h", "fresh", 1),
        ("HINCRBY", "h", "a", "x"),
        ("HINCRBYFLOAT", "h", "a", "0.5"),
        ("HINCRBYFLOAT", "h", "a", "inf"),
        ("HDEL", "h", "a", "zz", "b"),
        ("HDEL", "h", "zz"),
        ("HDEL", "nokey", "zz"),
        ("HSET", "big", *[x for i in range(600) for x in (f"f{i}", i)]),
        ("HDEL", "big", *[f"f{i}" for i in range(600)]),
        ("HDEL", "h", "c", "d", "e", "fresh"),
    ]
    for cmd in steps:
        both(*cmd)
        r, g = (changes(c)[0] for c in both.clients())
        assert r == g, (cmd, r, g)


def test_list_writes_count_as_in_redis(both):
    both("FLUSHALL")
    both("SAVE")
    steps = [
        ("RPUSH", "l", "a", "b", "c", "d", "e", "f"),
        ("LPUSH", "l", "x"),
        ("LPUSHX", "l", "y", "z"),
        ("RPUSHX", "nokey", "y"),
        ("LINSERT", "l", "BEFORE", "c", "new"),
        ("LINSERT", "l", "AFTER", "nope", "new"),
        ("LSET", "l", 0, "set"),
        ("LPOP", "l"),
        ("RPOP", "l", 2),
        ("LPOP", "l", 0),
        ("LREM", "l", 0, "new"),
        ("LREM", "l", 0, "zz"),
        ("LTRIM", "l", 1, -2),
        ("LTRIM", "l", 0, -1),
        ("LMOVE", "l", "m", "LEFT", "RIGHT"),
        ("RPOPLPUSH", "l", "l"),
        ("LMPOP", 2, "nokey", "l", "LEFT", "COUNT", 2),
        ("BLPOP", "m", 0),
        ("RPUSH", "m", "1", "2", "3"),
        ("BRPOP", "m", 0),
        ("BLMOVE", "m", "n", "LEFT", "LEFT", 0),
        ("BRPOPLPUSH", "m", "n", 0),
        ("BLMPOP", 0, 1, "n", "RIGHT", "COUNT", 5),
        ("LTRIM", "nokey", 0, 1),
    ]
    for cmd in steps:
        both(*cmd)
        r, g = (changes(c)[0] for c in both.clients())
        assert r == g, (cmd, r, g)
