"""INFO memory and MEMORY's subcommands against Redis: the same fields and shapes, and
figures whose relations hold (used_memory is the allocated bytes the counting allocator
keeps, within a few percent of glibc's own figure read from malloc_info; a sane
fragmentation ratio; dataset + overhead = used).
"""

from __future__ import annotations

import re
import time

import pytest

from harness import info_of, make_client, start_pair


def info(c):
    return info_of(c, "memory")


def test_info_memory_has_redis_fields(both):
    r, g = (set(info(c)) for c in both.clients())
    assert r - g <= {"mem_overhead_db_hashtable_rehashing", "mem_clients_normal"} or not (r - g), r - g


@pytest.fixture
def fresh_goblin(tmp_path_factory):
    """A Goblin of its own: the session's server has held and freed the memory of every test
    before, which glibc keeps resident and in chunks the counter does not see."""
    pair = start_pair(tmp_path_factory)
    client = make_client(pair.goblin)
    client.response_callbacks = {}
    yield client
    pair.stop()


def test_used_memory_is_the_allocators_figure(fresh_goblin):
    c = fresh_goblin
    for i in range(20):
        c.execute_command("ZADD", f"k{i}", *[x for m in range(2000) for x in (m, f"member:{m}")])
    m = info(c)
    used = m["used_memory"]
    # MEMORY MALLOC-STATS is glibc's malloc_info: its totals give mallinfo2's figure as the
    # arenas' current size less their free chunks, plus the mapped chunks.
    text = c.execute_command("MEMORY", "MALLOC-STATS").decode()
    tail = text[text.rindex("</heap>"):]
    size = lambda kind, tag="total": int(re.search(r'<%s type="%s" (?:count="\d+" )?size="(\d+)"' % (tag, kind), tail).group(1))  # noqa: E731
    malloc = size("current", "system") - size("fast") - size("rest") + size("mmap")
    # Beside 5%, a constant: malloc's chunk headers on the start-up's small allocations,
    # which a counting allocator does not see; most are the command metadata (COMMAND INFO
    # and DOCS, the key specs: 1.5 MB in some 40,000 pieces), built at start as Redis
    # builds its command table.
    assert abs(malloc - used) < 0.05 * used + (1 << 20), (malloc, used)
    assert m["allocator_allocated"] == used
    assert m["used_memory_dataset"] + m["used_memory_overhead"] == used
    assert m["used_memory_peak"] >= used
    assert m["used_memory_rss"] > 0
    assert m["allocator_active"] >= m["allocator_allocated"]
    assert m["used_memory_human"].endswith(("K", "M", "G"))
    # The engine's figure for the sets is part of the dataset.
    engine = c.execute_command("GOBLIN.MEMORY")
    engine = dict(zip(engine[::2], engine[1::2])) if isinstance(engine, list) else engine
    assert engine[b"bytes"] <= m["used_memory"]


def test_used_memory_tracks_mallinfo2(fresh_goblin):
    """The figure moves with what the allocator holds: 20 MB of members show up in
    used_memory (and in the resident set) and leave with FLUSHALL SYNC."""
    c = fresh_goblin
    start = info(c)
    before = start["used_memory"]
    for i in range(10):
        c.execute_command("ZADD", f"big{i}", *[x for m in range(20000) for x in (m, f"m:{m:08}")])
    during = info(c)["used_memory"]
    engine = c.execute_command("GOBLIN.MEMORY")
    engine = dict(zip(engine[::2], engine[1::2])) if isinstance(engine, list) else engine
    grown = during - before
    assert abs(grown - engine[b"bytes"]) < 0.10 * engine[b"bytes"] + (1 << 20), (grown, engine)
    m = info(c)
    # The resident set grew about as much as the counted bytes did (the ratio of the whole
    # process also holds the binary, Lua and the stacks, some 7 MB: 2.5 with these 5 MB).
    rss_grown = m["used_memory_rss"] - start["used_memory_rss"]
    assert 0.8 < rss_grown / grown < 2.0, (rss_grown, grown)
    assert m["mem_fragmentation_ratio"] == pytest.approx(m["used_memory_rss"] / m["used_memory"], abs=0.01)
    c.execute_command("FLUSHALL", "SYNC")
    deadline = time.time() + 5
    while info(c)["used_memory"] > before + (during - before) // 2:
        assert time.time() < deadline, "the flushed sets were not freed"
        time.sleep(0.05)


def test_maxmemory_fields_as_configured(both):
    both.config_set("maxmemory", "64mb")
    both.config_set("maxmemory-policy", "allkeys-lru")
    for c in both.clients():
        m = info(c)
        assert m["maxmemory"] == 64 << 20
        assert m["maxmemory_human"] == "64.00M"
        assert m["maxmemory_policy"] == "allkeys-lru"


def test_memory_stats_shape(both):
    both("ZADD", "k", 1, "a")
    r, g = (c.execute_command("MEMORY", "STATS") for c in both.clients())
    as_keys = lambda x: [k for k in x[::2]]  # noqa: E731
    assert as_keys(r) == as_keys(g)
    gm = dict(zip(g[::2], g[1::2]))
    assert gm[b"keys.count"] == 1
    assert gm[b"total.allocated"] > 0


def stats_of(c) -> dict:
    """MEMORY STATS as a dict, the db.N maps as dicts too."""
    raw = c.execute_command("MEMORY", "STATS")
    stats = dict(zip((k.decode() for k in raw[::2]), raw[1::2]))
    for name, value in stats.items():
        if name.startswith("db."):
            stats[name] = dict(zip((k.decode() for k in value[::2]), value[1::2]))
    return stats


def test_memory_stats_values_relate_as_in_redis(both):
    """The relations Redis's MEMORY STATS figures keep among themselves (object.c's
    getMemoryOverheadData and memoryCommand) hold on both servers."""
    both("ZADD", "z", 1, "a", 2, "b")
    both("SET", "s", "v", "EX", 100)
    both("SELECT", 1)
    both("SADD", "t", "x")
    for c in both.clients():
        m = stats_of(c)
        assert m["keys.count"] == 3
        net = m["total.allocated"] - m["startup.allocated"]
        assert m["keys.bytes-per-key"] == net // 3
        assert m["dataset.bytes"] == m["total.allocated"] - m["overhead.total"]
        assert float(m["dataset.percentage"]) == pytest.approx(m["dataset.bytes"] * 100 / net)
        assert float(m["peak.percentage"]) == pytest.approx(
            m["total.allocated"] * 100 / m["peak.allocated"])
        assert sorted(k for k in m if k.startswith("db.")) == ["db.0", "db.1"]
        for db in ("db.0", "db.1"):
            assert set(m[db]) == {"overhead.hashtable.main", "overhead.hashtable.expires",
                                  "overhead.hashtable.slot-to-keys"}
            assert m[db]["overhead.hashtable.main"] > 0
        assert m["db.0"]["overhead.hashtable.expires"] > 0, "one key of db 0 has a TTL"
        parts = ("startup.allocated", "replication.backlog", "clients.slaves", "clients.normal",
                 "cluster.links", "aof.buffer", "lua.caches", "functions.caches")
        dbs = sum(v for db in ("db.0", "db.1") for v in m[db].values())
        assert m["overhead.total"] == sum(m[p] for p in parts) + dbs
        ratio = lambda a, b: float(m[a]) == pytest.approx(m[b[0]] / m[b[1]], rel=0.05)  # noqa: E731
        assert ratio("allocator-fragmentation.ratio", ("allocator.active", "allocator.allocated"))
        assert ratio("allocator-rss.ratio", ("allocator.resident", "allocator.active"))
        assert m["allocator-fragmentation.bytes"] == m["allocator.active"] - m["allocator.allocated"]
        assert m["allocator-rss.bytes"] == m["allocator.resident"] - m["allocator.active"]


def test_memory_subcommands(both):
    r, g = both.run("MEMORY", "HELP")
    assert r[:-1] == g[:-1]  # 7.2 words the last line "Print this help."
    both("MEMORY", "PURGE")
    both("MEMORY", "DOCTOR")  # both say a small instance has nothing to report
    both("MEMORY", "USAGE", "missing")
    both("MEMORY", "STATS", "extra")
    both("MEMORY", "NOPE")
    text = both.goblin.execute_command("MEMORY", "MALLOC-STATS")
    assert b"<malloc" in text
    assert isinstance(both.redis.execute_command("MEMORY", "MALLOC-STATS"), bytes)


def test_unlink_of_a_big_set_gives_its_memory_back(both):
    """Redis's unit/lazyfree: a set of 100,000 members sent in one SADD, then UNLINKed; once
    the lazy-free thread is done, used_memory is back under twice what it was before, and
    CONFIG RESETSTAT zeroes lazyfreed_objects. Before, Goblin's connection kept the
    100,000 argument ranges of the SADD (2 MiB) and RESETSTAT left the count as it was."""
    for c in both.clients():
        wait_lazyfree_done(c)
        c.execute_command("CONFIG", "RESETSTAT")
        before = info(c)["used_memory"]
        c.execute_command("SADD", "myset", *range(100_000))
        peak = info(c)["used_memory"]
        assert peak > before + 1_000_000
        assert c.execute_command("UNLINK", "myset") == 1
        wait_lazyfree_done(c)
        assert info(c)["lazyfreed_objects"] == 1
        deadline = time.monotonic() + 5
        while info(c)["used_memory"] >= before * 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert info(c)["used_memory"] < before * 2, (before, peak, info(c)["used_memory"])
        c.execute_command("CONFIG", "RESETSTAT")
        assert info(c)["lazyfreed_objects"] == 0


@pytest.mark.parametrize("user_del, user_flush", [("no", "no"), ("yes", "yes")])
def test_del_unlink_and_flush_free_as_the_lazyfree_directives_say(both, user_del, user_flush):
    """DEL frees at once unless lazyfree-lazy-user-del, UNLINK off the loop; FLUSHALL and
    FLUSHDB SYNC free at once, ASYNC off the loop, neither as lazyfree-lazy-user-flush says;
    a database freed off the loop counts one object per key. lazyfreed_objects after each
    step is the same on both. Before, DEL freed off the loop, FLUSHALL SYNC too, a flushed
    database counted one, and the two directives were not parameters."""
    results = []
    for c in both.clients():
        wait_lazyfree_done(c)
        c.execute_command("CONFIG", "RESETSTAT")
        c.config_set("lazyfree-lazy-user-del", user_del)
        c.config_set("lazyfree-lazy-user-flush", user_flush)
        pairs = c.execute_command("CONFIG", "GET", "lazyfree-lazy-user-*")
        seen = [sorted(zip(pairs[::2], pairs[1::2]))]
        for step in (["DEL"], ["UNLINK"]):
            c.execute_command("SADD", "big", *range(1000))
            c.execute_command(*step, "big")
            wait_lazyfree_done(c)
            seen.append(info(c)["lazyfreed_objects"])
        for flush in (["FLUSHALL", "SYNC"], ["FLUSHALL", "ASYNC"], ["FLUSHALL"], ["FLUSHDB"],
                      ["FLUSHDB", "SYNC"]):
            c.mset({f"k{i}": i for i in range(300)})
            c.execute_command(*flush)
            wait_lazyfree_done(c)
            seen.append(info(c)["lazyfreed_objects"])
        c.config_set("lazyfree-lazy-user-del", "no")
        c.config_set("lazyfree-lazy-user-flush", "no")
        results.append(seen)
    assert results[0] == results[1]


def wait_lazyfree_done(c):
    deadline = time.monotonic() + 5
    while info(c)["lazyfree_pending_objects"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert info(c)["lazyfree_pending_objects"] == 0


LAZY_CASES = {
    # Redis frees a value off the loop when freeing it costs more than 64 steps: a list's
    # quicklist nodes, a hashtable's entries, a skiplist's members, a stream's nodes and
    # pending entries; one step for a string and every listpack or intset. (The reference
    # is 7.0, which has no listpack sets: every set here is a hashtable or an intset in
    # both 7.0 and 7.2.)
    "list of 1,000 (a few quicklist nodes)": [("RPUSH", "k", *range(1000))],
    "list of 20,000 (many nodes)": [("RPUSH", "k", *(f"e{i:06}" for i in range(20_000)))],
    "intset of 500": [("SADD", "k", *range(500))],
    "hashtable set of 200 tiny members": [("SADD", "k", *(chr(c) for c in range(0x21, 0x7f)),
                                           *(f"{chr(c)}{chr(c)}" for c in range(0x41, 0x7b)))],
    "hashtable set of 65 long members": [("SADD", "k", *(f"{i:02}" * 33 for i in range(65)))],
    "listpack hash of 100": [("HSET", "k", *(x for i in range(100) for x in (f"f{i}", i)))],
    "hashtable hash of 200": [("HSET", "k", *(x for i in range(200) for x in (f"f{i}", i)))],
    "listpack zset of 100": [("ZADD", "k", *(x for i in range(100) for x in (i, f"m{i}")))],
    "skiplist zset of 200": [("ZADD", "k", *(x for i in range(200) for x in (i, f"m{i}")))],
    "skiplist zset of 64": [("ZADD", "k", *(x for i in range(64) for x in (i, f"m{i}" * 20)))],
    "stream of 1,000 in nodes of 5": [("CONFIG", "SET", "stream-node-max-entries", 5)]
    + [("XADD", "k", "*", "f", i) for i in range(1000)],
    "stream of 100 with a group of 70 pending": [("XADD", "k", "*", "f", i) for i in range(100)]
    + [("XGROUP", "CREATE", "k", "g", 0), ("XREADGROUP", "GROUP", "g", "c", "COUNT", 70,
                                             "STREAMS", "k", ">")],
}


@pytest.mark.parametrize("case", list(LAZY_CASES))
@pytest.mark.parametrize("removal", ["UNLINK", "SET over it", "SET over it, lazy server-del"])
def test_lazyfreed_objects_count_as_redis_weighs_the_freeing(both, case, removal):
    """lazyfreed_objects after a key is removed: UNLINK frees a value off the loop when
    freeing it costs more than 64 steps as Redis weighs them (lazyfreeGetFreeEffort, by
    encoding), and an overwritten value goes there only under lazyfree-lazy-server-del.
    Before, Goblin weighed every value by its element count, counted a value its key's
    record held as nothing, and counted an overwritten one whatever the directive said."""
    seen = []
    for c in both.clients():
        wait_lazyfree_done(c)
        c.execute_command("CONFIG", "RESETSTAT")
        c.config_set("lazyfree-lazy-server-del", "yes" if "lazy" in removal else "no")
        try:
            for cmd in LAZY_CASES[case]:
                c.execute_command(*cmd)
            if removal == "UNLINK":
                c.execute_command("UNLINK", "k")
            else:
                c.execute_command("SET", "k", "v")
            wait_lazyfree_done(c)
            seen.append(info(c)["lazyfreed_objects"])
        finally:
            c.config_set("lazyfree-lazy-server-del", "no")
            c.config_set("stream-node-max-entries", 100)
    assert seen[0] == seen[1], "(redis, goblin)"
