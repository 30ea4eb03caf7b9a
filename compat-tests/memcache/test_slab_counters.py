"""memcached's per-slab-class counters against memcached 1.6: `stats slabs` (get_hits,
cmd_set, delete_hits, incr_hits, decr_hits, cas_hits, cas_badval, touch_hits by class, a class
keeping its page once an item was stored in it) after the same commands, classic and meta,
on small, SSD-tail and bad-chunk items; the same figures through libmemcached's `memcstat`;
and Goblin's eviction counters of `stats items` landing in the evicted items' class."""

import re
import shutil
import subprocess

import pytest

from test_debug_and_slabs import stat_lines

pytestmark = pytest.mark.skipif(shutil.which("memcstat") is None,
                                reason="libmemcached-tools (memcstat) is not installed")


def cas_of(server, key):
    reply = server.exchange(b"gets " + key + b"\r\n")
    return int(re.match(rb"VALUE \S+ \d+ \d+ (\d+)\r\n", reply).group(1))


def run_commands(server):
    """The same commands on one server; the cas ones use that server's own CAS values."""
    tail = b"t" * 5000
    server.exchange(
        b"set a 0 0 1\r\nx\r\nget a\r\ngets a\r\nget a b\r\ntouch a 100\r\ngat 0 a\r\n"
        b"mg a v\r\nmg a T30 v\r\nmg nokey v\r\n"
        b"set n 5 0 2\r\n10\r\nincr n 5\r\ndecr n 3\r\nma n\r\nma n MD\r\nincr nokey 1\r\n"
        b"set mid 0 0 1000\r\n" + b"m" * 1000 + b"\r\nget mid\r\ndelete mid\r\n"
        b"set tail 0 0 5000\r\n" + tail + b"\r\nget tail\r\ntouch tail 0\r\n"
        b"ms m 3\r\nabc\r\nmg m v\r\nmd m\r\nmd m\r\n"
        b"append a 0 0 2\r\nyz\r\nprepend a 0 0 1\r\nw\r\n"
        b"set bad 0 0 3\r\nabcde\r\n"
        b"ma vv N0 J3\r\nmg vv v\r\n"
    )
    server.exchange(b"cas n 0 0 1 %d\r\n7\r\n" % cas_of(server, b"n"))
    server.exchange(b"cas n 0 0 1 1\r\n8\r\ncas gone 0 0 1 1\r\n9\r\n")
    server.exchange(b"ms n 1 C1\r\n9\r\nms n 1 C%d\r\n9\r\n" % cas_of(server, b"n"))


def test_per_class_counters_move_as_in_memcached(fresh_pair):
    mc, gb = fresh_pair
    for server in (mc, gb):
        run_commands(server)
    got = [stat_lines(s.exchange(b"stats slabs\r\n")) for s in (mc, gb)]
    assert got[1] == got[0]
    # The counters moved where the commands went: class 1 holds the small items.
    slabs = dict(got[0])
    assert int(slabs["1:get_hits"]) > 0 and int(slabs["1:cas_hits"]) == 2
    assert int(slabs["1:cas_badval"]) == 2 and int(slabs["1:incr_hits"]) == 2
    tools = [subprocess.run(["memcstat", "-s", f"127.0.0.1:{s.port}", "slabs"],
                            capture_output=True, text=True, timeout=30) for s in (mc, gb)]
    assert all(t.returncode == 0 for t in tools), tools
    shown = [t.stdout.split("\n", 1)[1] for t in tools]  # after the "Server: ..." line
    assert shown[1] == shown[0]
    assert "1:cmd_set:" in shown[0]


def test_evictions_land_in_the_class_of_the_evicted_items(launch):
    port, _ = launch("goblin")  # 8 MiB of --small-memory
    gb = launch.server(port)
    value = b"e" * 3000
    for chunk in range(5):
        gb.exchange(b"".join(b"set ev%d 0 0 %d\r\n" % (chunk * 1000 + i, len(value)) + value + b"\r\n"
                             for i in range(1000)))
    items = dict(stat_lines(gb.exchange(b"stats items\r\n")))
    total = dict(stat_lines(gb.exchange(b"stats\r\n")))
    classes = {name.split(":")[1] for name in items}
    assert len(classes) == 1, classes
    cls = classes.pop()
    assert int(items[f"items:{cls}:evicted"]) == int(total["evictions"]) > 0
    assert int(items[f"items:{cls}:evicted_unfetched"]) == int(total["evicted_unfetched"])
    assert int(items[f"items:{cls}:evicted_nonzero"]) == 0
