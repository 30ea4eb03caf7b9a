"""`stats reset` (issue 34) zeroes what memcached 1.6.18's stats_reset zeroes: its global
counters (total_items, total_connections, rejected_connections, ...), every per-thread
counter (cmd_*, *_hits, *_misses, bytes_read/written, store_too_large, ...), the per-class
counters of `stats slabs` and the eviction counters of `stats items`; the gauges of the
present state (curr_items, bytes, curr_connections, connection_structures) stay. cmd_meta
counts `me` alone, as memcached 1.6.18 counts it."""

from test_memcache import stats_of

LOAD = (
    b"set r1 0 0 1\r\n1\r\nset r2 0 0 5\r\nhello\r\nget r1 r2 rmiss\r\nincr r1 5\r\n"
    b"incr rmiss 1\r\ndecr r1 1\r\ndecr rmiss 1\r\ngets r2\r\ncas r2 0 0 1 1\r\nx\r\n"
    b"cas rmiss 0 0 1 1\r\nx\r\ntouch r1 100\r\ntouch rmiss 100\r\ndelete r2\r\n"
    b"delete rmiss\r\nmg r1 v\r\nms r3 2\r\nhi\r\nme r1\r\nflush_all 1000\r\n"
)

# Fields both servers keep the same way after the reset (the others: timing, memcached's
# own machinery, and bytes_read/bytes_written, which count how the reads were chunked).
ZEROED = [
    "total_connections", "rejected_connections", "cmd_get", "cmd_set", "cmd_flush", "cmd_touch",
    "cmd_meta", "get_hits", "get_misses", "get_expired", "delete_misses", "delete_hits",
    "incr_misses", "incr_hits", "decr_misses", "decr_hits", "cas_misses", "cas_hits",
    "cas_badval", "touch_hits", "touch_misses", "store_too_large", "store_no_memory",
    "total_items", "expired_unfetched", "evicted_unfetched", "evictions", "reclaimed",
]
KEPT = ["curr_items", "bytes", "curr_connections"]


def slab_counters(reply):
    """The per-class counters of `stats slabs` (the class's shape and fill are state)."""
    names = ("get_hits", "cmd_set", "delete_hits", "incr_hits", "decr_hits", "cas_hits",
             "cas_badval", "touch_hits")
    return {k: v for k, v in stats_of(reply).items() if k.split(":")[-1] in names}


def item_counters(reply):
    names = ("evicted", "evicted_nonzero", "outofmemory", "reclaimed", "expired_unfetched",
             "evicted_unfetched")
    return {k: v for k, v in stats_of(reply).items() if k.split(":")[-1] in names}


def test_stats_reset_zeroes_the_counters_memcached_zeroes(fresh):
    fresh(LOAD)
    fresh(b"set big 0 0 2000000\r\n" + b"x" * 2000000 + b"\r\n")
    before = [stats_of(r) for r in fresh(b"stats\r\n")]
    assert before[0]["cmd_get"] != "0" and before[1]["cmd_get"] != "0"
    assert fresh(b"stats reset\r\n") == (b"RESET\r\nMN\r\n",) * 2
    after = [stats_of(r) for r in fresh(b"stats\r\n")]
    for name in ZEROED:
        assert after[1][name] == after[0][name], name
    # The connection that asked for the stats is the one counted since the reset; the mn
    # that ended the reset's exchange came after it.
    assert after[0]["total_connections"] == "1" and after[0]["cmd_get"] == "0"
    for name in KEPT:
        assert after[1][name] == before[1][name], name
    for served in after:
        assert 0 < int(served["bytes_read"]) < 16 and 0 < int(served["bytes_written"]) < 64
    slabs = [slab_counters(r) for r in fresh(b"stats slabs\r\n")]
    assert slabs[1] == slabs[0] and set(slabs[0].values()) <= {"0"}
    items = [item_counters(r) for r in fresh(b"stats items\r\n")]
    assert set(items[0].values()) <= {"0"} and set(items[1].values()) <= {"0"}


def test_counters_move_again_after_a_reset(fresh):
    fresh(LOAD)
    fresh(b"stats reset\r\n")
    fresh(LOAD)
    after = [stats_of(r) for r in fresh(b"stats\r\n")]
    for name in ZEROED:
        assert after[1][name] == after[0][name], name
    slabs = [slab_counters(r) for r in fresh(b"stats slabs\r\n")]
    assert slabs[1] == slabs[0]
