"""The short version of benchmarks/maxmemory_load.py: 4 clients write past maxmemory for a
few seconds under allkeys-lru and noeviction; only integers or the OOM error come back, the
server lives, and RSS stays within 10% of maxmemory plus a fixed overhead."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
import maxmemory_load  # noqa: E402


@pytest.mark.parametrize("policy", ["allkeys-lru", "noeviction"])
def test_writes_past_maxmemory_stay_bounded(policy):
    r = maxmemory_load.run(4, "16mb", policy, overhead_mb=16)
    assert r["alive"]
    assert set(r["replies"]) <= {"int", "oom"}, r["replies"]
    assert r["peak_rss"] <= r["bound"], r
    if policy == "noeviction":
        assert r["replies"].get("oom", 0) > 0 and r["evicted"] == 0
    else:
        assert r["evicted"] > 0
