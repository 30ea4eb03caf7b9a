"""The start-up load of a large AOF serves clients meanwhile, as Redis does: commands without
the `loading` flag get -LOADING, INFO persistence shows loading:1 and the loading_* fields,
and once loaded every key is there."""

from __future__ import annotations

import time

import redis

from test_aof import start
from test_persistence import procs  # noqa: F401 (the fixture)

KEYS = 1_500_000


def write_large_aof(workdir) -> int:
    d = workdir / "appendonlydir"
    d.mkdir(parents=True)
    (d / "appendonly.aof.manifest").write_text("file appendonly.aof.1.incr.aof seq 1 type i\n")
    chunks = [b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"]
    for i in range(KEYS):
        k = b"key:%d" % i
        chunks.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n" % (len(k), k))
    data = b"".join(chunks)
    (d / "appendonly.aof.1.incr.aof").write_bytes(data)
    return len(data)


def test_clients_get_loading_while_the_aof_loads(procs, tmp_path):
    for kind in ("redis", "goblin"):
        w = tmp_path / kind
        size = write_large_aof(w)
        p = start(procs, kind, w, expect_up=False)
        seen, refused = None, False
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not refused:
            try:
                c = p.client()  # no retries: -LOADING is an error redis-py would retry
                info = c.info("persistence")
            except redis.ConnectionError:
                time.sleep(0.005)
                continue
            if not info["loading"]:
                break
            seen = info
            try:
                c.get("key:0")  # answered only if the load ended meanwhile: look again
            except redis.BusyLoadingError as e:
                assert str(e) == "Redis is loading the dataset in memory", kind
                refused = True
        assert seen is not None and refused, f"{kind}: the load was over before -LOADING"
        assert seen["loading_total_bytes"] == size, kind
        assert 0 <= seen["loading_loaded_bytes"] <= size, kind
        for field in ("loading_start_time", "loading_loaded_perc", "loading_eta_seconds"):
            assert field in seen, (kind, field)
        deadline = time.monotonic() + 120
        while True:
            try:
                n = p.client().dbsize()
                break
            except redis.BusyLoadingError:
                assert time.monotonic() < deadline, kind
                time.sleep(0.05)
        assert n == KEYS, kind
        p.kill9()
