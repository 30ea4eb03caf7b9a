"""Redis Cluster tools and clients on loopback, Goblin beside Redis 7.0: `redis-cli --cluster
rebalance` and `del-node`, `redis-cli -c` following MOVED, redis-py's asyncio RedisCluster,
and scripts and functions under Redis 7's cluster rules (declared keys in one slot, the
keys a script touches in that slot and on this node, the allow-cross-slot-keys and
no-cluster flags).

The clusters come from test_cluster.py's helpers (nodes whose bus port, port + 10000, is
free; a short cluster-node-timeout).
"""

from __future__ import annotations

import asyncio
import shutil

import pytest
import redis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

from test_cluster import (  # noqa: F401  (goblins, redises: the module's fixtures)
    REDIS_CLI,
    cli,
    cluster_info,
    create,
    goblins,
    node_ids,
    normalize,
    owner_index,
    redises,
    start_nodes,
    stop_all,
    wait_for,
)

pytestmark = pytest.mark.skipif(not shutil.which(REDIS_CLI), reason="redis-cli not installed")


def slot_counts(nodes) -> dict:
    """Slots served by each node (by index), as CLUSTER NODES of the first node says."""
    ids = node_ids(nodes)
    c = nodes[0].client()
    try:
        text = c.execute_command("CLUSTER", "NODES").decode()
    finally:
        c.close()
    counts = {}
    for line in text.splitlines():
        f = line.split()
        n = 0
        for r in f[8:]:
            if r.startswith("["):
                continue
            lo, _, hi = r.partition("-")
            n += int(hi or lo) - int(lo) + 1
        counts[ids.index(f[0])] = n
    return counts


def agree(nodes) -> bool:
    out = cli("--cluster", "check", f"127.0.0.1:{nodes[0].port}")
    return ("[OK] All nodes agree about slots configuration." in out.stdout
            and "[OK] All 16384 slots covered." in out.stdout)


def rebalance_then_del_node(tmp_path_factory, kind: str) -> list:
    """A 3-master cluster holding keys, an empty 4th master added, `rebalance
    --cluster-use-empty-masters`, then the 4th drained (weight 0) and removed with
    `del-node`: what each step left, and every key still readable."""
    nodes = start_nodes(tmp_path_factory, [kind] * 4)
    try:
        create(nodes[:3])
        rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
        try:
            for i in range(2000):
                rc.set(f"k:{i}", i)
        finally:
            rc.close()
        out = cli("--cluster", "add-node", f"127.0.0.1:{nodes[3].port}", f"127.0.0.1:{nodes[0].port}")
        assert out.returncode == 0, out.stdout + out.stderr
        wait_for("4 nodes", lambda: all(cluster_info(n)["cluster_known_nodes"] == "4"
                                        and cluster_info(n)["cluster_state"] == "ok" for n in nodes))
        steps = []
        out = cli("--cluster", "rebalance", f"127.0.0.1:{nodes[0].port}",
                  "--cluster-use-empty-masters", timeout=240)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr
        wait_for("agreement", lambda: agree(nodes), timeout=30)
        steps.append(sorted(slot_counts(nodes).values()))
        ids = node_ids(nodes)
        out = cli("--cluster", "rebalance", f"127.0.0.1:{nodes[0].port}",
                  "--cluster-weight", f"{ids[3]}=0", timeout=240)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr
        wait_for("agreement", lambda: agree(nodes), timeout=30)
        steps.append(slot_counts(nodes)[3])
        out = cli("--cluster", "del-node", f"127.0.0.1:{nodes[0].port}", ids[3])
        assert out.returncode == 0, out.stdout + out.stderr
        steps.append(normalize(out.stdout, nodes).replace(ids[3], "ID3").splitlines()[-1])
        wait_for("3 nodes", lambda: all(cluster_info(n)["cluster_known_nodes"] == "3" for n in nodes[:3]))
        # The removed node was reset: it knows only itself and serves no slot.
        steps.append((cluster_info(nodes[3])["cluster_known_nodes"],
                      cluster_info(nodes[3])["cluster_slots_assigned"]))
        steps.append(agree(nodes[:3]))
        rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
        try:
            steps.append([k for k in range(2000) if rc.get(f"k:{k}") != str(k).encode()])
        finally:
            rc.close()
        return steps
    finally:
        stop_all(nodes)


@pytest.mark.timeout(600)
def test_rebalance_and_del_node_as_redis(tmp_path_factory):
    got = [rebalance_then_del_node(tmp_path_factory, kind) for kind in ("redis", "goblin")]
    assert got[0] == got[1]
    assert got[1][0] == [4096, 4096, 4096, 4096]
    assert got[1][1] == 0 and got[1][-1] == []


def test_redis_cli_c_follows_moved(goblins, redises):
    out = []
    for nodes in (redises, goblins):
        port = str(nodes[0].port)
        # Keys of each of the three nodes, written and read through node 0.
        c = nodes[0].client()
        keys = ["foo", "bar", "{user1000}.following"] + [
            next(k for k in (f"n:{i}" for i in range(1000))
                 if owner_index(nodes, c.execute_command("CLUSTER", "KEYSLOT", k)) == owner)
            for owner in (0, 1, 2)
        ]
        slots = [c.execute_command("CLUSTER", "KEYSLOT", k) for k in keys]
        c.close()
        got = []
        for k in keys:
            got.append(cli("-p", port, "set", k, "v-" + k).stdout)
            got.append(cli("-c", "-p", port, "set", k, "v-" + k).stdout)
            got.append(cli("-c", "-p", port, "get", k).stdout)
            got.append(cli("-c", "-p", port, "del", k).stdout)
        got.append(cli("-c", "-p", port, "mset", "foo", "1", "bar", "2").stdout)
        got.append(sorted({owner_index(nodes, s) for s in slots}))
        out.append([normalize(g, nodes) if isinstance(g, str) else g for g in got])
    assert out[0] == out[1]
    assert out[1][-1] == [0, 1, 2]


async def async_cases(port: int) -> list:
    rc = AsyncRedisCluster(host="127.0.0.1", port=port)
    try:
        await rc.flushall()
        out = []
        for i in range(20):
            key = f"z:{i}"
            out.append(await rc.zadd(key, {"a": i, "b": i * 2, "c": -i}))
            out.append(await rc.zincrby(key, 2.5, "c"))
            out.append(await rc.zrange(key, 0, -1, withscores=True))
            out.append(await rc.zrevrangebyscore(key, "+inf", "-inf", start=0, num=2))
            out.append(await rc.zscore(key, "b"))
        out.append(await asyncio.gather(*(rc.zcard(f"z:{i}") for i in range(20))))
        await rc.zadd("{g}a", {"x": 1, "y": 2})
        await rc.zadd("{g}b", {"y": 3, "z": 4})
        out.append(await rc.zunionstore("{g}u", ["{g}a", "{g}b"], aggregate="MAX"))
        out.append(await rc.zrange("{g}u", 0, -1, withscores=True))
        out.append(await rc.zinter(["{g}a", "{g}b"], withscores=True))
        pipe = rc.pipeline()
        for i in range(20):
            pipe.zadd(f"p:{i}", {"m": i})
            pipe.zrank(f"p:{i}", "m")
        out.append(await pipe.execute())
        try:
            await rc.zunionstore("u", ["a", "b"])
            out.append("(no error)")
        except redis.exceptions.RedisClusterException as e:
            out.append(type(e).__name__)
        return out
    finally:
        await rc.aclose()


async def test_asyncio_cluster_client(goblins, redises):
    results = [await async_cases(nodes[0].port) for nodes in (redises, goblins)]
    assert results[0] == results[1]
    counts = [n.client().dbsize() for n in goblins]
    assert all(c > 0 for c in counts), counts


LIBRARY = """#!lua name=cl
redis.register_function('plain', function(k, a) redis.call('set', a[1], 1) return redis.call('get', a[2]) end)
redis.register_function{function_name='cross', callback=function(k, a) redis.call('set', a[1], 1) return redis.call('get', a[2]) end, flags={'allow-cross-slot-keys'}}
redis.register_function{function_name='nocl', callback=function(k, a) return 1 end, flags={'no-cluster'}}
redis.register_function{function_name='nocl_ro', callback=function(k, a) return 1 end, flags={'no-cluster', 'no-writes'}}
redis.register_function('getk', function(k, a) return redis.call('get', k[1]) end)
"""


def script_replies(nodes) -> list:
    """EVAL and FCALL on node 0 with keys of node 0 (two slots) and of another node."""
    c = nodes[0].client()
    local, remote, i = [], None, 0
    while len(local) < 2 or remote is None:
        key = f"k{i}"
        i += 1
        owner = owner_index(nodes, c.execute_command("CLUSTER", "KEYSLOT", key))
        if owner == 0 and len(local) < 2:
            local.append(key)
        elif owner != 0 and remote is None:
            remote = key
    a, b = local
    for n in nodes:
        n.client().execute_command("FUNCTION", "LOAD", "REPLACE", LIBRARY)
    set_a_get_b = "redis.call('set', ARGV[1], 1) return redis.call('get', ARGV[2])"
    cases = [
        ("EVAL", "return 1", 2, a, b),
        ("EVAL", "return redis.call('get', KEYS[1])", 1, remote),
        # No shebang: keys of any local slot (Redis 7's backward compatibility).
        ("EVAL", "redis.call('set', KEYS[1], 1) return redis.call('get', ARGV[1])", 1, a, b),
        ("EVAL", set_a_get_b, 0, a, b),
        ("EVAL", "return redis.call('get', ARGV[1])", 0, remote),
        # A shebang: the declared slot, or the first key's, binds the script.
        ("EVAL", "#!lua\nredis.call('set', KEYS[1], 1) return redis.call('get', ARGV[1])", 1, a, b),
        ("EVAL", "#!lua\n" + set_a_get_b, 0, a, b),
        ("EVAL", "#!lua\nredis.call('set', KEYS[1], 1) return redis.call('get', KEYS[1])", 1, a),
        ("EVAL", "#!lua flags=allow-cross-slot-keys\n" + set_a_get_b, 0, a, b),
        ("EVAL", "#!lua flags=allow-cross-slot-keys\nreturn redis.call('get', ARGV[1])", 0, remote),
        ("EVAL", "#!lua flags=allow-cross-slot-keys\nreturn 1", 2, a, b),
        ("EVAL", "#!lua flags=no-cluster\nreturn 1", 0),
        ("EVAL", "#!lua flags=no-cluster\nreturn 1", 1, remote),
        ("EVAL_RO", "#!lua flags=no-cluster\nreturn 1", 0),
        ("EVAL", "return redis.call('mget', ARGV[1], ARGV[2])", 0, a, b),
        ("EVAL", "#!lua flags=allow-cross-slot-keys\nreturn redis.call('mget', ARGV[1], ARGV[2])", 0, a, b),
        ("EVAL", "#!lua\nlocal ok = pcall(redis.call, 'get', ARGV[2]) return {ok and 1 or 0, redis.call('get', ARGV[1])}", 0, a, b),
        ("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', ARGV[1])", 0, remote),
        ("FCALL", "plain", 0, a, b),
        ("FCALL", "plain", 1, a, a, b),
        ("FCALL", "plain", 1, a, a, a),
        ("FCALL", "cross", 0, a, b),
        ("FCALL", "cross", 0, a, remote),
        ("FCALL", "nocl", 0),
        ("FCALL_RO", "nocl", 0),
        ("FCALL_RO", "nocl_ro", 0),
        ("FCALL", "getk", 2, a, b),
        ("FCALL", "getk", 1, remote),
    ]
    out = []
    for cmd in cases:
        try:
            reply = repr(c.execute_command(*cmd))
        except redis.exceptions.RedisError as e:
            reply = f"{type(e).__name__}: {e}"
        out.append(normalize(reply, nodes).replace(a, "A").replace(b, "B").replace(remote, "R"))
    c.close()
    return out


def test_scripts_cross_slot_rules_match_redis(goblins, redises):
    got = [script_replies(nodes) for nodes in (redises, goblins)]
    assert got[0] == got[1]
    assert any("do not hash to the same slot" in r for r in got[1])
    assert any("'no-cluster' flag is set" in r for r in got[1])
