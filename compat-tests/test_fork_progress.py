"""A fork child's progress in INFO persistence beside Redis (integration/rdb's "Test child
sending info"): while a BGSAVE or a BGREWRITEAOF child writes, slowed by
rdb-key-save-delay, current_save_keys_total is the key count at the fork,
current_save_keys_processed and current_fork_perc grow, and writes to the parent make
current_cow_size (and current_cow_peak) rise; once the child is done every current_*
field is 0 again. The figures differ between the servers (their memory differs), so each
server is checked against the same conditions.
"""

from __future__ import annotations

import pytest

from test_persistence import goblin, info, procs, redis_server, wait_bgsave  # noqa: F401
from test_replication import wait_for

KEYS = 10_000
VALUE = "A" * 500

CURRENT = ("current_cow_peak", "current_cow_size", "current_cow_size_age",
           "current_fork_perc", "current_save_keys_processed", "current_save_keys_total")


def start(procs, tmp_path, kind):
    work = tmp_path / kind
    work.mkdir()
    p = (goblin if kind == "goblin" else redis_server)(procs, work, "--save", "")
    c = p.client()
    pipe = c.pipeline(transaction=False)
    for k in range(KEYS):
        pipe.set(f"key{k}", VALUE)
    pipe.execute()
    c.config_set("rdb-key-save-delay", 200)
    return c


@pytest.mark.parametrize("kind", ["redis", "goblin"])
@pytest.mark.parametrize("command,in_progress", [("BGSAVE", "rdb_bgsave_in_progress"),
                                                 ("BGREWRITEAOF", "aof_rewrite_in_progress")])
def test_the_child_reports_its_progress(procs, tmp_path, kind, command, in_progress):
    c = start(procs, tmp_path, kind)
    assert all(info(c)[f] == 0 for f in CURRENT)
    if command == "BGREWRITEAOF":
        # A commands-only rewrite, so the child walks the keys as an AOF writer.
        c.config_set("aof-use-rdb-preamble", "no")
    c.execute_command(command)
    assert info(c)["current_save_keys_total"] == KEYS
    key = 0
    peak = 0
    for _ in range(2):
        before = info(c)

        def moved():
            # Copy-on-write: rewrite 16 values of 512 bytes, 2 pages at least.
            nonlocal key
            for _ in range(16):
                c.setrange(f"key{key}", 0, "B" * 500)
                key += 1
            now = info(c)
            return (now["current_cow_size"] >= before["current_cow_size"] + 4096
                    and now["current_save_keys_processed"] > before["current_save_keys_processed"]
                    and now["current_fork_perc"] > 0) and now

        now = wait_for(moved, what="the child's report")
        assert now[in_progress] == 1, "the child ended before it reported twice"
        assert now["current_cow_peak"] >= now["current_cow_size"]
        peak = now["current_cow_peak"]
        assert now["current_save_keys_processed"] <= KEYS
        assert now["current_fork_perc"] <= 100
    c.config_set("rdb-key-save-delay", 0)
    wait_for(lambda: info(c)[in_progress] == 0, what="the child's end")
    if command == "BGSAVE":
        done = wait_bgsave(c)
        # The child's peak (Redis's stat_current_cow_peak), not its last measure.
        assert done["rdb_last_cow_size"] >= peak > 0
    assert all(info(c)[f] == 0 for f in CURRENT), info(c)
