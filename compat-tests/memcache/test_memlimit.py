"""`cache_memlimit` (issue 34): memcached's replies and bounds, `maxbytes` after it, and on
Goblin a lowered limit that really shrinks the store (evicts, unmaps blocks: RSS falls)."""

from test_memcache import stats_of

# Replies recorded from memcached 1.6.18 for these lines, one by one: no argument, a
# non-number, a negative or hex number, under 8, a number over a billion, noreply (no reply
# at all, for an error too), a stray third token, too many tokens, 2^32 (read as 32 bits: 0).
LINES = [
    b"cache_memlimit", b"cache_memlimit abc", b"cache_memlimit -5", b"cache_memlimit 0x10",
    b"cache_memlimit 12abc", b"cache_memlimit 7", b"cache_memlimit 7 noreply",
    b"cache_memlimit noreply", b"cache_memlimit 1000000001", b"cache_memlimit 4294967296",
    b"cache_memlimit 20 30 40", b"cache_memlimit 100 x", b"cache_memlimit 100 noreply",
    b"cache_memlimit  +40", b"cache_memlimit 00064",
]


def test_replies_as_memcached(fresh):
    mc, gb = fresh(b"".join(line + b"\r\n" for line in LINES))
    assert gb == mc
    assert mc.count(b"\r\n") == 13, mc  # 12 replies (three lines are noreply) and MN


def test_maxbytes_after_a_change_as_memcached(fresh_pair):
    mc, gb = fresh_pair
    for server in fresh_pair:
        assert server.exchange(b"cache_memlimit 40\r\n") == b"OK\r\nMN\r\n"
    settings = [stats_of(s.exchange(b"stats settings\r\n")) for s in (mc, gb)]
    general = [stats_of(s.exchange(b"stats\r\n")) for s in (mc, gb)]
    assert settings[1]["maxbytes"] == settings[0]["maxbytes"] == str(40 << 20)
    assert general[1]["limit_maxbytes"] == general[0]["limit_maxbytes"] == str(40 << 20)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def test_a_lowered_limit_shrinks_goblin_and_a_raised_one_grows_it(launch):
    port, proc = launch("goblin", "--small-memory", "96M", "--block", "256K", "--max-item-size", "128K")
    gb = launch.server(port)
    value = b"v" * 1000

    def fill(prefix, n):
        for start in range(0, n, 2000):
            gb.exchange(b"".join(b"set %s%d 0 0 1000 noreply\r\n%s\r\n" % (prefix, i, value)
                                 for i in range(start, min(n, start + 2000))))

    fill(b"a", 80_000)
    full = stats_of(gb.exchange(b"stats\r\n"))
    assert int(full["curr_items"]) == 80_000 and full["evictions"] == "0"
    rss_full = rss_kib(proc.pid)
    # Under one 256 KiB block for each of the arena's 64 shards: refused, as memcached
    # refuses a limit it cannot apply.
    refused = b"MEMLIMIT_ADJUST_FAILED out of bounds or unable to adjust\r\nMN\r\n"
    assert gb.exchange(b"cache_memlimit 15\r\n") == refused
    assert stats_of(gb.exchange(b"stats\r\n"))["limit_maxbytes"] == str(96 << 20)
    assert gb.exchange(b"cache_memlimit 16\r\n") == b"OK\r\nMN\r\n"
    low = stats_of(gb.exchange(b"stats\r\n"))
    rss_low = rss_kib(proc.pid)
    assert low["limit_maxbytes"] == str(16 << 20)
    assert int(low["bytes"]) <= 16 << 20
    assert int(low["curr_items"]) + int(low["evictions"]) == 80_000
    assert int(low["curr_items"]) > 5_000
    # The blocks past the limit were unmapped: the process gave back what it held.
    assert rss_full - rss_low > 60 * 1024, (rss_full, rss_low)
    # What is left reads back whole; new items still go in within the limit.
    last = b"a79999"
    assert gb.exchange(b"get " + last + b"\r\n") == b"VALUE " + last + b" 0 1000\r\n" + value + b"\r\nEND\r\nMN\r\n"
    fill(b"b", 20_000)
    assert int(stats_of(gb.exchange(b"stats\r\n"))["bytes"]) <= 16 << 20
    # Raised again, the store holds as much as before without evicting.
    assert gb.exchange(b"cache_memlimit 96\r\n") == b"OK\r\nMN\r\n"
    evicted = stats_of(gb.exchange(b"stats\r\n"))["evictions"]
    fill(b"c", 60_000)
    high = stats_of(gb.exchange(b"stats\r\n"))
    assert high["evictions"] == evicted and int(high["bytes"]) > 60 << 20
