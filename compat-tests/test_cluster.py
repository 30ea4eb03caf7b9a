"""Redis Cluster on loopback: Goblin nodes created and checked by redis-cli --cluster, used by
redis-py's RedisCluster, redirections and CLUSTER replies compared with a cluster of real
Redis 7.0 nodes, and a mixed cluster of Redis 7.0 nodes and a Goblin node agreeing on the
slot map.

Each node listens on a port whose bus port (port + 10000) is free too. The clusters are
module-scoped and use a short cluster-node-timeout, so the module takes a few seconds.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest
import redis
from redis.cluster import RedisCluster

from harness import GOBLIN_BIN, REDIS_BIN, Server, make_client

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
NODE_TIMEOUT = "2000"

pytestmark = pytest.mark.skipif(not shutil.which("redis-cli"), reason="redis-cli not installed")


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def cluster_port() -> int:
    """A free port below 55536 whose bus port (port + 10000) is free as well."""
    for _ in range(1000):
        port = random.randint(20000, 29999)
        if _port_free(port) and _port_free(port + 10000):
            return port
    raise RuntimeError("no free port pair")


class Node(Server):
    """A cluster-enabled redis-server or goblin-server."""

    node_timeout = NODE_TIMEOUT

    def start(self) -> None:
        for _attempt in range(5):
            port = cluster_port()
            self.port = port
            log = open(self.log_path, "ab")
            argv = self.argv()
            self.proc = subprocess.Popen(
                argv, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            log.close()
            if self._wait_ready():
                return
            self.stop()
        raise RuntimeError(f"{self.kind} did not start; log:\n{self.log_tail()}")

    def argv(self) -> list[str]:
        return super().argv() + [
            "--cluster-enabled", "yes", "--cluster-node-timeout", self.node_timeout,
            "--cluster-config-file", "nodes.conf",
        ]

    def client(self) -> redis.Redis:
        return make_client(self)


def start_nodes(tmp_path_factory, kinds: list[str], node_timeout: str = NODE_TIMEOUT) -> list[Node]:
    nodes = []
    for i, kind in enumerate(kinds):
        d = tmp_path_factory.mktemp(f"{kind}{i}")
        n = Node(kind, GOBLIN_BIN if kind == "goblin" else REDIS_BIN, [], d)
        n.node_timeout = node_timeout
        n.start()
        nodes.append(n)
    return nodes


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([REDIS_CLI, *args], capture_output=True, text=True, timeout=timeout)


def wait_for(what, predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def cluster_info(node: Node) -> dict:
    c = node.client()
    try:
        text = c.execute_command("CLUSTER", "INFO").decode()
    finally:
        c.close()
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def create(nodes: list[Node]) -> subprocess.CompletedProcess:
    out = cli("--cluster", "create", *[f"127.0.0.1:{n.port}" for n in nodes], "--cluster-yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[OK] All 16384 slots covered." in out.stdout, out.stdout
    wait_for("cluster_state:ok", lambda: all(cluster_info(n)["cluster_state"] == "ok" for n in nodes))
    return out


def stop_all(nodes):
    for n in nodes:
        n.stop()


@pytest.fixture(scope="module")
def goblins(tmp_path_factory):
    nodes = start_nodes(tmp_path_factory, ["goblin"] * 3)
    try:
        create(nodes)
        yield nodes
    finally:
        stop_all(nodes)


@pytest.fixture(scope="module")
def redises(tmp_path_factory):
    nodes = start_nodes(tmp_path_factory, ["redis"] * 3)
    try:
        create(nodes)
        yield nodes
    finally:
        stop_all(nodes)


def slot_map(node: Node) -> list:
    """CLUSTER SLOTS as (start, end, master port, master id) sorted."""
    c = node.client()
    try:
        slots = c.execute_command("CLUSTER", "SLOTS")
    finally:
        c.close()
    return sorted((s[0], s[1], s[2][1], s[2][2]) for s in slots)


def nodes_view(node: Node) -> list:
    """CLUSTER NODES as (id, address, role flags, master, epoch, slots), myself left out of
    the flags, so every node's view can be compared."""
    c = node.client()
    try:
        text = c.execute_command("CLUSTER", "NODES").decode()
    finally:
        c.close()
    out = []
    for line in text.splitlines():
        f = line.split()
        flags = sorted(x for x in f[2].split(",") if x != "myself")
        out.append((f[0], f[1], tuple(flags), f[3], f[6], f[7], tuple(f[8:])))
    return sorted(out)


def test_create_and_check(goblins):
    out = cli("--cluster", "check", f"127.0.0.1:{goblins[1].port}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[OK] All nodes agree about slots configuration." in out.stdout
    assert "[OK] All 16384 slots covered." in out.stdout
    views = [nodes_view(n) for n in goblins]
    assert views[0] == views[1] == views[2]
    assert len({slot_map(n) == slot_map(goblins[0]) for n in goblins}) == 1
    info = cluster_info(goblins[0])
    assert info["cluster_known_nodes"] == "3" and info["cluster_size"] == "3"
    # nodes.conf is Redis's format, with the vars line.
    conf = (goblins[0].workdir / "nodes.conf").read_text()
    assert re.search(r"^vars currentEpoch \d+ lastVoteEpoch \d+$", conf, re.M), conf
    assert len([x for x in conf.splitlines() if "master" in x]) == 3


def run_zsets(rc: RedisCluster) -> list:
    out = []
    for i in range(30):
        key = f"z:{i}"
        out.append(rc.zadd(key, {"a": i, "b": i * 2, "c": -i}))
        out.append(rc.zincrby(key, 1.5, "a"))
        out.append(rc.zrange(key, 0, -1, withscores=True))
        out.append(rc.zrangebyscore(key, "-inf", "+inf", start=0, num=2))
        out.append(rc.zrank(key, "b"))
        out.append(rc.zrem(key, "c"))
        out.append(rc.zcard(key))
    out.append(rc.zunionstore("{t}dst", ["{t}s1", "{t}s2"]))
    rc.zadd("{t}s1", {"x": 1, "y": 2})
    rc.zadd("{t}s2", {"y": 3, "z": 4})
    out.append(rc.zunionstore("{t}dst", ["{t}s1", "{t}s2"]))
    out.append(rc.zinter(["{t}s1", "{t}s2"], withscores=True))
    out.append(rc.zdiff(["{t}s1", "{t}s2"]))
    out.append(rc.zrange("{t}dst", 0, -1, withscores=True))
    out.append(rc.zmpop(2, ["{t}s1", "{t}s2"], min=True))
    with pytest.raises(redis.exceptions.RedisClusterException):
        rc.zunionstore("dst", ["s1", "s2"])
    return out


def test_redis_py_cluster_sorted_sets(goblins, redises):
    results = []
    for nodes in (redises, goblins):
        rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
        try:
            rc.flushall()
            results.append(run_zsets(rc))
            # The keys really are spread over the three nodes.
            counts = [n.client().dbsize() for n in nodes]
            assert all(c > 0 for c in counts), counts
        finally:
            rc.close()
    assert results[0] == results[1]


def error_of(c: redis.Redis, *cmd) -> str:
    try:
        c.execute_command(*cmd)
    except redis.exceptions.RedisError as e:  # MOVED, ASK, TRYAGAIN, CROSSSLOT: own classes
        return f"{type(e).__name__}: {e}"
    return "(no error)"


def normalize(text: str, nodes: list[Node]) -> str:
    for i, n in enumerate(nodes):
        text = text.replace(f"127.0.0.1:{n.port}", f"node{i}")
    return text


def owner_index(nodes: list[Node], slot: int) -> int:
    for start, end, port, _ in slot_map(nodes[0]):
        if start <= slot <= end:
            return [n.port for n in nodes].index(port)
    raise AssertionError(slot)


def node_ids(nodes: list[Node]) -> list[str]:
    out = []
    for n in nodes:
        c = n.client()
        out.append(c.execute_command("CLUSTER", "MYID").decode())
        c.close()
    return out


def redirections(nodes: list[Node]) -> list[str]:
    """The refusals a plain client meets, with the node addresses normalized."""
    out = []
    c0 = nodes[0].client()
    c0.execute_command("FLUSHALL")
    for key in ["foo", "bar", "somekey", "{user}1", "z"]:
        out.append(normalize(error_of(c0, "GET", key), nodes))
        out.append(normalize(error_of(c0, "SET", key, "v"), nodes))
    out.append(error_of(c0, "MSET", "a", "1", "b", "2"))
    out.append(error_of(c0, "ZUNIONSTORE", "{x}d", "2", "{x}a", "b"))
    out.append(error_of(c0, "SELECT", "1"))
    out.append(str(c0.execute_command("SELECT", "0")))
    out.append(error_of(c0, "EVAL", "return 1", "2", "a", "b"))
    # Commands of other databases, and scripts touching keys of other nodes ("bar" is node
    # 0's, "foo" is not).
    out.append(error_of(c0, "MOVE", "bar", "1"))
    out.append(error_of(c0, "SWAPDB", "0", "1"))
    out.append(error_of(c0, "COPY", "bar", "{bar}x", "DB", "1"))
    out.append(error_of(c0, "EVAL", "return redis.call('get', 'foo')", "0"))
    out.append(error_of(c0, "EVAL", "return redis.call('get', KEYS[1])", "1", "bar"))
    out.append(error_of(c0, "EVAL", "return redis.call('get', 'foo')", "1", "bar"))
    # Shard channels are routed like keys.
    out.append(normalize(error_of(c0, "SPUBLISH", "foo", "m"), nodes))
    out.append(normalize(error_of(c0, "SPUBLISH", "bar", "m"), nodes))
    out.append(normalize(error_of(c0, "PUBSUB", "SHARDNUMSUB", "foo"), nodes))
    # A slot in migration: ASK for a missing key, TRYAGAIN for a multi-key request with some
    # keys missing, the key served by the target only after ASKING.
    ids = node_ids(nodes)
    slot = 12182  # "foo"
    src = owner_index(nodes, slot)
    dst = (src + 1) % len(nodes)
    cs, cd = nodes[src].client(), nodes[dst].client()
    try:
        cs.execute_command("SET", "{foo}present", "1")
        out.append(str(cd.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])))
        out.append(str(cs.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])))
        out.append(normalize(error_of(cs, "GET", "foo"), nodes))
        out.append(str(cs.execute_command("GET", "{foo}present")))
        out.append(normalize(error_of(cs, "MGET", "{foo}present", "foo"), nodes))
        out.append(normalize(error_of(cd, "GET", "foo"), nodes))
        out.append(str(cd.execute_command("ASKING")))
        out.append(str(cd.execute_command("GET", "foo")))
        out.append(normalize(error_of(cd, "GET", "foo"), nodes))
        out.append(str(cd.execute_command("ASKING")))
        out.append(normalize(error_of(cd, "MGET", "foo", "{foo}x"), nodes))
        out.append(normalize(error_of(cs, "CLUSTER", "SETSLOT", slot, "NODE", ids[dst]), nodes))
        out.append(normalize(error_of(cs, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[dst]), nodes))
        out.append(error_of(cs, "CLUSTER", "SETSLOT", slot, "BOGUS"))
        out.append(error_of(cs, "CLUSTER", "SETSLOT", 99999, "STABLE"))
    finally:
        cs.execute_command("DEL", "{foo}present")
        cs.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
        cd.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
        cs.close()
        cd.close()
    # MULTI: a queued command for another node fails the transaction.
    c0.execute_command("MULTI")
    out.append(normalize(error_of(c0, "SET", "foo", "1"), nodes))
    out.append(error_of(c0, "EXEC"))
    c0.close()
    return out


def test_redirections_match_redis(goblins, redises):
    assert redirections(goblins) == redirections(redises)


def endpoint_views(nodes: list[Node]) -> list:
    """For each cluster-preferred-endpoint-type of node 0 (which announces a hostname, seen
    in its own replies at once; the others announce none): a MOVED redirect, the endpoint
    fields of CLUSTER SLOTS and of CLUSTER SHARDS, ports normalized."""
    ports = {n.port: f"port{i}" for i, n in enumerate(nodes)}
    out = []
    c = nodes[0].client()
    try:
        key = next(k for k in ["foo", "bar", "z"] if "MovedError" in error_of(c, "GET", k))
        c.execute_command("CONFIG", "SET", "cluster-announce-hostname", "me.example")
        for kind in ["unknown-endpoint", "hostname", "ip"]:
            c.execute_command("CONFIG", "SET", "cluster-preferred-endpoint-type", kind)
            moved = error_of(c, "GET", key)
            for port, name in ports.items():
                moved = moved.replace(f":{port}", f":{name}")
            slots = sorted(
                (s[0], s[2][0], ports[s[2][1]], s[2][3]) for s in c.execute_command("CLUSTER", "SLOTS")
            )
            shards = sorted(
                (ports[n[b"port"]], n[b"endpoint"], n.get(b"hostname"))
                for sh in c.execute_command("CLUSTER", "SHARDS")
                for n in (dict(zip(m[::2], m[1::2])) for m in dict(zip(sh[::2], sh[1::2]))[b"nodes"])
            )
            out.append((kind, moved, slots, shards))
    finally:
        c.execute_command("CONFIG", "SET", "cluster-preferred-endpoint-type", "ip")
        c.execute_command("CONFIG", "SET", "cluster-announce-hostname", "")
        c.close()
    return out


def dropped_publishes(nodes: list[Node]) -> list:
    """DEBUG DROP-CLUSTER-PACKET-FILTER: its error, then node 1 dropping the bus PUBLISH
    messages (type 4) node 0 sends, until the filter is -1 again: what node 1's subscriber
    gets."""
    c0, c1 = nodes[0].client(), nodes[1].client()
    sub = c1.pubsub()
    try:
        out = [error_of(c1, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", "x")]
        sub.subscribe("dropch")
        sub.get_message(timeout=1)
        out.append(c1.execute_command("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "4"))
        c0.publish("dropch", "dropped")
        time.sleep(0.3)
        out.append(c1.execute_command("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "-1"))
        c0.publish("dropch", "delivered")
        got = []
        deadline = time.monotonic() + 10
        while b"delivered" not in got and time.monotonic() < deadline:
            m = sub.get_message(timeout=0.5)
            if m and m["type"] == "message":
                got.append(m["data"])
        out.append(got)
        return out
    finally:
        c1.execute_command("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "-1")
        sub.close()
        c0.close()
        c1.close()


def test_drop_cluster_packet_filter_matches_redis(goblins, redises):
    assert dropped_publishes(goblins) == dropped_publishes(redises)


def test_preferred_endpoint_types_match_redis(goblins, redises):
    assert endpoint_views(goblins) == endpoint_views(redises)


def cluster_replies(node: Node, other_id: str) -> list:
    c = node.client()
    out = []
    try:
        for cmd in [
            ("CLUSTER", "KEYSLOT", "{user1000}.following"),
            ("CLUSTER", "KEYSLOT", "foo{}{bar}"),
            ("CLUSTER", "COUNTKEYSINSLOT", "16384"),
            ("CLUSTER", "COUNTKEYSINSLOT", "x"),
            ("CLUSTER", "GETKEYSINSLOT", "1", "-1"),
            ("CLUSTER", "ADDSLOTS", "99999"),
            ("CLUSTER", "ADDSLOTSRANGE", "5", "3"),
            ("CLUSTER", "ADDSLOTSRANGE", "5"),
            ("CLUSTER", "MEET", "127.0.0.1", "abc"),
            ("CLUSTER", "MEET", "not-an-ip", "7000"),
            ("CLUSTER", "FORGET", "0" * 40),
            ("CLUSTER", "REPLICATE", "0" * 40),
            ("CLUSTER", "COUNT-FAILURE-REPORTS", "x"),
            ("CLUSTER", "COUNT-FAILURE-REPORTS", other_id),
            ("CLUSTER", "SET-CONFIG-EPOCH", "5"),
            ("CLUSTER", "RESET", "MAYBE"),
            ("CLUSTER", "REPLICAS", other_id),
            ("CLUSTER", "BOGUS"),
            ("ASKING",),
            ("READWRITE",),
            ("READONLY",),
        ]:
            try:
                out.append(c.execute_command(*cmd))
            except redis.exceptions.RedisError as e:
                out.append(f"{type(e).__name__}: {e}")
        info = c.execute_command("CLIENT", "INFO").decode()
        out.append([f for f in info.split() if f.startswith("flags=")])
        c.execute_command("READWRITE")
        info = c.execute_command("CLIENT", "INFO").decode()
        out.append([f for f in info.split() if f.startswith("flags=")])
        myid = c.execute_command("CLUSTER", "MYID").decode()
        for cmd in [("CLUSTER", "FORGET", myid), ("CLUSTER", "REPLICATE", myid)]:
            out.append(error_of(c, *cmd))
    finally:
        c.close()
    return out


def test_cluster_replies_match_redis(goblins, redises):
    g = cluster_replies(goblins[0], node_ids(goblins)[1])
    r = cluster_replies(redises[0], node_ids(redises)[1])
    assert g == r


def test_keys_in_slot(goblins):
    rc = RedisCluster(host="127.0.0.1", port=goblins[0].port)
    try:
        for i in range(50):
            rc.set(f"{{tag}}k{i}", i)
        slot = rc.keyslot("{tag}")
        node = rc.get_node_from_key("{tag}")
        assert rc.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot, target_nodes=node) == 50
        keys = rc.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10, target_nodes=node)
        assert len(keys) == 10 and all(k.startswith(b"{tag}k") for k in keys)
        for i in range(50):
            rc.delete(f"{{tag}}k{i}")
        assert rc.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot, target_nodes=node) == 0
    finally:
        rc.close()



def slot_keys_after_writes(nodes: list[Node]) -> list:
    """Keys of one slot, as CLUSTER COUNTKEYSINSLOT/GETKEYSINSLOT see them, after writes
    that create, overwrite, grow, rename, restore and delete keys of every kind."""
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    try:
        slot = rc.keyslot("{ix}")
        node = rc.get_node_from_key("{ix}")
        out = []

        def view():
            count = rc.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot, target_nodes=node)
            keys = rc.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000, target_nodes=node)
            out.append((count, sorted(keys)))

        for i in range(20):
            rc.set(f"{{ix}}s{i}", i)
        rc.set("{ix}s0", "x" * 100)
        rc.incr("{ix}s1")
        rc.append("{ix}s2", "y" * 300)
        rc.hset("{ix}h", mapping={"a": 1, "b": 2})
        rc.zadd("{ix}z", {"m": 1})
        rc.rpush("{ix}l", "a", "b")
        rc.sadd("{ix}set", "a")
        view()
        rc.rename("{ix}s3", "{ix}renamed")
        rc.rename("{ix}s4", "{ix}s5")
        rc.execute_command("RENAMENX", "{ix}s6", "{ix}s7")
        rc.execute_command("COPY", "{ix}h", "{ix}hcopy")
        dumped = rc.dump("{ix}z")
        rc.restore("{ix}zr", 0, dumped)
        rc.restore("{ix}s8", 0, dumped, replace=True)
        rc.getdel("{ix}s9")
        rc.delete("{ix}s10", "{ix}s11", "{ix}nosuch")
        rc.execute_command("UNLINK", "{ix}s12")
        rc.hdel("{ix}h", "a", "b")
        rc.lpop("{ix}l", 2)
        rc.set("{ix}s13", "v", px=1)
        time.sleep(0.05)
        assert rc.get("{ix}s13") is None
        view()
        rc.flushall()
        view()
        return out
    finally:
        rc.close()


def test_slot_index_follows_writes_as_redis(goblins, redises):
    assert slot_keys_after_writes(goblins) == slot_keys_after_writes(redises)

def del_events_of_a_slot_taken_by_gossip(nodes: list[Node]) -> tuple:
    """A key of nodes[0]'s slot, the slot then claimed by nodes[1] (higher epoch): the keys
    nodes[0] deletes as the slot leaves it (Redis's delKeysInSlot), the 'del' keyspace events
    a client of nodes[0] got meanwhile. The slot is given back to nodes[0] afterwards."""
    src, dst = nodes[0], nodes[1]
    ids = node_ids(nodes)
    c = src.client()
    watcher = src.client().pubsub()
    try:
        key = next(f"gone{i}" for i in range(10000)
                   if owner_of(src, c.execute_command("CLUSTER", "KEYSLOT", f"gone{i}")) == ids[0])
        slot = c.execute_command("CLUSTER", "KEYSLOT", key)
        c.set(key, "v")
        c.execute_command("CONFIG", "SET", "notify-keyspace-events", "Eg")
        watcher.subscribe("__keyevent@0__:del")
        assert watcher.get_message(timeout=5)["type"] == "subscribe"
        d = dst.client()
        d.execute_command("CLUSTER", "BUMPEPOCH")
        d.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[1])
        d.close()
        wait_for("the old owner to drop the key",
                 lambda: c.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0)
        events = []
        while (m := watcher.get_message(timeout=1)) is not None:
            events.append((m["channel"], m["data"]))
        c.execute_command("CONFIG", "SET", "notify-keyspace-events", "")
        c.execute_command("CLUSTER", "BUMPEPOCH")
        c.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[0])
        wait_for("the slot back home", lambda: all(owner_of(n, slot) == ids[0] for n in nodes))
        return c.exists(key), events
    finally:
        watcher.close()
        c.close()


def owner_of(node: Node, slot: int) -> str | None:
    """The id of the master serving `slot` as `node` sees it."""
    c = node.client()
    try:
        for s in c.execute_command("CLUSTER", "SLOTS"):
            if s[0] <= slot <= s[1]:
                return s[2][2].decode()
        return None
    finally:
        c.close()


def test_slot_taken_by_gossip_fires_no_del_event_as_redis(goblins, redises):
    """The keys of a slot lost to another node moved rather than died: Redis 7.2.4's
    delKeysInSlot tells modules only, a client subscribed to 'del' events gets none."""
    assert del_events_of_a_slot_taken_by_gossip(goblins) == \
        del_events_of_a_slot_taken_by_gossip(redises)


def test_publish_reaches_every_node(goblins):
    """PUBLISH on one node reaches the subscribers of the others over the bus."""
    subs = []
    for n in goblins[1:]:
        p = n.client().pubsub()
        p.subscribe("news")
        assert p.get_message(timeout=5)["type"] == "subscribe"
        subs.append(p)
    c = goblins[0].client()
    assert c.execute_command("PUBLISH", "news", "hello") == 0  # no local subscriber
    c.close()
    for p in subs:
        msg = p.get_message(timeout=5)
        assert msg is not None and msg["data"] == b"hello", msg
        p.close()


def move_empty_slot(slot: int, src: Node, dst: Node) -> None:
    """Moves an empty slot as redis-cli's resharding does, without keys to migrate."""
    src_id, dst_id = node_ids([src, dst])
    cs, cd = src.client(), dst.client()
    try:
        assert cd.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id) == b"OK"
        assert cs.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id) == b"OK"
        assert cd.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id) == b"OK"
        assert cs.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id) == b"OK"
    finally:
        cs.close()
        cd.close()


def test_mixed_slot_moves_and_failure_detection(tmp_path_factory):
    """Slots move from a Redis node to a Goblin node and back (new config epochs spread by
    PING and UPDATE), a hostname set on the Goblin node reaches the Redis nodes, and a
    stopped node is flagged fail by the others, Redis and Goblin alike."""
    nodes = start_nodes(tmp_path_factory, ["redis", "goblin", "redis"], node_timeout="1000")
    try:
        create(nodes)
        ids = node_ids(nodes)

        def agreed():
            maps = [slot_map(n) for n in nodes]
            return maps[0] == maps[1] == maps[2]

        move_empty_slot(0, nodes[0], nodes[1])
        move_empty_slot(16383, nodes[2], nodes[1])
        move_empty_slot(5461, nodes[1], nodes[0])
        wait_for("the slot map to agree", agreed)
        owners = {s: p for s0, s1, p, _ in slot_map(nodes[0]) for s in (s0, s1)}
        assert owners[0] == nodes[1].port and owners[16383] == nodes[1].port and owners[5461] == nodes[0].port
        epochs = [cluster_info(n)["cluster_current_epoch"] for n in nodes]
        wait_for("the epochs to agree", lambda: len({cluster_info(n)["cluster_current_epoch"] for n in nodes}) == 1)
        assert int(epochs[1]) > 3
        # A hostname announced by the Goblin node.
        c = nodes[1].client()
        c.execute_command("CONFIG", "SET", "cluster-announce-hostname", "goblin-host")
        c.close()
        wait_for(
            "the hostname to reach the Redis nodes",
            lambda: all(f"@{nodes[1].port + 10000},goblin-host " in
                        n.client().execute_command("CLUSTER", "NODES").decode() for n in nodes),
        )
        # Failure detection: stop a Redis node; the others flag it fail.
        nodes[2].stop()

        def flagged(n):
            line = [x for x in n.client().execute_command("CLUSTER", "NODES").decode().splitlines()
                    if x.startswith(ids[2])][0]
            return " fail " in f" {line.split()[2].replace(',', ' ')} "

        wait_for("the stopped node to be flagged fail", lambda: all(flagged(n) for n in nodes[:2]))
        wait_for("cluster_state:fail", lambda: cluster_info(nodes[1])["cluster_state"] == "fail")
        # The Goblin node gives the same answer as the Redis node for a key of the lost slots.
        answers = []
        for n in nodes[:2]:
            answers.append(error_of(n.client(), "GET", "foo"))
        assert answers[0] == answers[1] == "ClusterDownError: The cluster is down", answers
        # The node comes back (on another port, with its nodes.conf): its new address is
        # learned, FAIL is cleared and the cluster is up again everywhere.
        nodes[2].start()
        wait_for("the cluster to be up again",
                 lambda: all(cluster_info(n)["cluster_state"] == "ok" for n in nodes))
        wait_for("the new address to be known",
                 lambda: all(f"127.0.0.1:{nodes[2].port}@" in
                             n.client().execute_command("CLUSTER", "NODES").decode() for n in nodes))
    finally:
        stop_all(nodes)


def test_nodes_conf_is_locked(goblins):
    """A second node started on the same nodes.conf refuses to start."""
    port = cluster_port()
    proc = subprocess.run(
        [GOBLIN_BIN, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--cluster-enabled", "yes", "--dir", str(goblins[0].workdir)],
        capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode != 0
    assert "is already used by a different Redis Cluster node" in proc.stdout + proc.stderr


def test_loaded_keys_claim_their_slots(tmp_path_factory):
    """A node started in cluster mode on a snapshot takes the unassigned slots of its keys,
    as Redis does (both load the same RDB file, written by Goblin)."""
    src = tmp_path_factory.mktemp("rdbsrc")
    plain = Server("goblin", GOBLIN_BIN, [], src)
    plain.start()
    try:
        c = make_client(plain)
        for k in ["foo", "bar", "{t}1", "{t}2", "zkey"]:
            c.execute_command("ZADD", k, "1", "m")
        c.execute_command("SAVE")
        c.close()
    finally:
        plain.stop()
    views = []
    for kind in ("redis", "goblin"):
        d = tmp_path_factory.mktemp(f"load{kind}")
        shutil.copy(src / "dump.rdb", d / "dump.rdb")
        n = Node(kind, GOBLIN_BIN if kind == "goblin" else REDIS_BIN, [], d)
        n.start()
        try:
            def mine():
                line = [x for x in n.client().execute_command("CLUSTER", "NODES").decode().splitlines()
                        if "myself" in x][0]
                return line.split()[8:]
            wait_for("the slots to be claimed", lambda: len(mine()) > 0)
            views.append((mine(), n.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", 12182)))
        finally:
            n.stop()
    assert views[0] == views[1]
    assert views[0][1] == 1


def blocked_redirect(nodes: list[Node]) -> str:
    """A client blocked on a key whose slot moves away gets MOVED."""
    slot = 5061  # "bar"
    src = owner_index(nodes, slot)
    dst = (src + 1) % len(nodes)
    c = nodes[src].client()
    c.execute_command("DEL", "bar")
    try:
        import threading
        result = {}

        def block():
            result["reply"] = error_of(c, "BZPOPMIN", "bar", "10")

        t = threading.Thread(target=block)
        t.start()
        time.sleep(0.3)
        move_empty_slot(slot, nodes[src], nodes[dst])
        t.join(15)
        return normalize(result["reply"], nodes)
    finally:
        move_empty_slot(slot, nodes[dst], nodes[src])
        c.close()


def test_blocked_client_redirected(goblins, redises):
    g = blocked_redirect(goblins)
    assert g.startswith("MovedError: 5061 node"), g
    assert g == blocked_redirect(redises)


def shapes(nodes: list[Node]) -> dict:
    """CLUSTER INFO's fields, SHARDS, LINKS and HELP of node 0, with ids, ports and times
    normalized."""
    ids = node_ids(nodes)
    c = nodes[0].client()
    try:
        info = c.execute_command("CLUSTER", "INFO").decode()
        shards = c.execute_command("CLUSTER", "SHARDS")
        links = c.execute_command("CLUSTER", "LINKS")
        help_ = c.execute_command("CLUSTER", "HELP")
    finally:
        c.close()

    def norm(v):
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, bytes):
            s = v.decode()
            for i, n in enumerate(nodes):
                s = s.replace(ids[i], f"id{i}")
                s = s.replace(str(n.port), f"port{i}")
            return s
        if isinstance(v, int):
            return next((f"port{i}" for i, n in enumerate(nodes) if n.port == v), v)
        return v

    fields = {line.split(":")[0] for line in info.split("\r\n") if line}
    # Message counters appear once non-zero; both have sent and received PING, PONG, MEET.
    fields = {f for f in fields if not f.startswith("cluster_stats_messages_")
              or f.split("_")[3] in ("ping", "pong", "meet", "sent", "received")}
    shard_list = sorted(norm(shards), key=str)
    link_keys = sorted({tuple(norm(x)[0::2]) for x in links})
    return {
        "info": sorted(fields),
        "shards": shard_list,
        "links": (len(links), link_keys),
        # 7.2 adds MYSHARDID and words the last line "Print this help." (7.0: "Prints").
        "help": [h for h in norm(help_)[:-1] if "MYSHARDID" not in h and "shard id" not in h],
    }


def test_cluster_shapes_match_redis(goblins, redises):
    g, r = shapes(goblins), shapes(redises)
    assert g["info"] == r["info"]
    assert g["shards"] == r["shards"]
    assert g["links"] == r["links"]
    assert g["help"] == r["help"]


def test_mixed_cluster(tmp_path_factory):
    """Masters: two Redis 7.0 nodes and a Goblin node created by redis-cli (the Goblin node
    joins by CLUSTER MEET); then a second Goblin node and a Redis node meet the cluster
    (CLUSTER MEET, as --cluster add-node does; add-node itself also wants FUNCTION LIST,
    which Goblin does not have). Every node sees the same nodes and slot map, keys and
    PUBLISH cross between Redis and Goblin nodes. The Redis node then replicates the first
    master; when that master stops, the replica needs the votes of a majority of the masters
    serving slots (2 of 3): the other Redis master's and the Goblin master's. It is promoted
    and every node agrees on the new slot map."""
    nodes = start_nodes(tmp_path_factory, ["redis", "redis", "goblin", "redis", "goblin"],
                        node_timeout="1000")
    masters, replica, extra = nodes[:3], nodes[3], nodes[4]
    try:
        create(masters)
        ids = node_ids(nodes)
        for n in (extra, replica):
            c = n.client()
            assert c.execute_command("CLUSTER", "MEET", "127.0.0.1", masters[0].port) == b"OK"
            c.close()
        wait_for(
            "the five nodes to agree",
            lambda: all(cluster_info(n)["cluster_known_nodes"] == "5" for n in nodes)
            and len({tuple(nodes_view(n)) for n in nodes}) == 1,
        )
        maps = [slot_map(n) for n in nodes]
        assert all(m == maps[0] for m in maps) and len(maps[0]) == 3
        rc = RedisCluster(host="127.0.0.1", port=masters[2].port)
        for i in range(30):
            rc.zadd(f"m{i}", {"x": i})
        assert [rc.zscore(f"m{i}", "x") for i in range(30)] == [float(i) for i in range(30)]
        rc.close()
        # PUBLISH crosses the bus both ways between Redis and Goblin nodes.
        for pub, sub in ((masters[0], extra), (extra, masters[1])):
            p = sub.client().pubsub()
            p.subscribe("mixed")
            assert p.get_message(timeout=5)["type"] == "subscribe"
            c = pub.client()
            c.execute_command("PUBLISH", "mixed", f"from {pub.kind}")
            c.close()
            msg = p.get_message(timeout=5)
            assert msg is not None and msg["data"] == f"from {pub.kind}".encode(), msg
            p.close()
        out = cli("--cluster", "check", f"127.0.0.1:{extra.port}")
        assert out.returncode == 0, out.stdout + out.stderr
        assert "[OK] All nodes agree about slots configuration." in out.stdout
        # Failover of the first master to its Redis replica.
        c = replica.client()
        c.execute_command("CLUSTER", "REPLICATE", ids[0])
        c.close()
        wait_for("the replica to be seen as one",
                 lambda: f"slave {ids[0]}" in masters[2].client().execute_command("CLUSTER", "NODES").decode())
        wait_for("the replica to sync", lambda: info_field(replica, "replication", "master_link_status") == "up")
        masters[0].stop()
        survivors = masters[1:] + [replica, extra]

        def promoted(n):
            return any(s[3].decode() == ids[3] and s[0] == 0 for s in slot_map(n))

        wait_for("the replica to be promoted everywhere", lambda: all(promoted(n) for n in survivors), 30)
        wait_for("cluster_state:ok", lambda: all(cluster_info(n)["cluster_state"] == "ok" for n in survivors))
        log = replica.log_path.read_text(errors="replace")
        assert "Failover election won" in log, replica.log_tail()
        assert "Failover auth granted" in masters[2].log_path.read_text(errors="replace")
    finally:
        stop_all(nodes)


def info_field(node: Node, section: str, field: str) -> str:
    c = node.client()
    try:
        return str(c.info(section).get(field, ""))
    finally:
        c.close()


def test_cluster_config_errors_match_redis(goblins, redises):
    out = []
    for nodes in (goblins, redises):
        c = nodes[0].client()
        try:
            got = []
            for name, value in [
                ("cluster-announce-hostname", "a b"),
                ("cluster-announce-hostname", "a" * 300),
                ("cluster-preferred-endpoint-type", "bogus"),
                ("cluster-node-timeout", "-1"),
                ("cluster-port", "7000"),
                ("cluster-enabled", "no"),
                ("cluster-require-full-coverage", "maybe"),
            ]:
                got.append(error_of(c, "CONFIG", "SET", name, value))
            got.append(c.execute_command("CONFIG", "GET", "cluster-node-timeout"))
            # Redis 7.0 lacks cluster-announce-human-nodename (7.2; its own test below).
            names = c.execute_command("CONFIG", "GET", "cluster-a*")
            got.append(sorted(
                (k, v) for k, v in zip(names[::2], names[1::2])
                if k != b"cluster-announce-human-nodename"
            ))
            out.append(got)
        finally:
            c.close()
    assert out[0] == out[1]


def test_add_node_and_reshard_keys_under_writes(tmp_path_factory):
    """`--cluster add-node` of a Goblin, then `--cluster reshard` of 1000 slots holding keys
    (MIGRATE between Goblins) while a client writes: every acknowledged write is there."""
    nodes = start_nodes(tmp_path_factory, ["goblin"] * 4)
    try:
        create(nodes[:3])
        out = cli("--cluster", "add-node", f"127.0.0.1:{nodes[3].port}", f"127.0.0.1:{nodes[0].port}")
        assert out.returncode == 0 and "[OK] New node added correctly." in out.stdout, out.stdout
        wait_for("4 nodes", lambda: all(cluster_info(n)["cluster_known_nodes"] == "4" for n in nodes))
        wait_for("the new node's state ok", lambda: cluster_info(nodes[3])["cluster_state"] == "ok")
        rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
        try:
            for i in range(3000):
                rc.set(f"k:{i}", i)
            ids = node_ids(nodes)
            log_path = tmp_path_factory.mktemp("reshard") / "reshard.log"
            log = open(log_path, "w")
            reshard = subprocess.Popen(
                [REDIS_CLI, "--cluster", "reshard", f"127.0.0.1:{nodes[0].port}",
                 "--cluster-from", ids[0], "--cluster-to", ids[3], "--cluster-slots", "1000",
                 "--cluster-yes"],
                stdout=log, stderr=subprocess.STDOUT,
            )
            acked = {}
            i = 3000
            while reshard.poll() is None:
                rc.set(f"k:{i}", i)
                acked[f"k:{i}"] = i
                i += 1
            log.close()
            text = log_path.read_text()
            assert reshard.returncode == 0, "\n".join(line for line in text.splitlines() if "Moving slot" not in line)[-3000:]
            check = cli("--cluster", "check", f"127.0.0.1:{nodes[0].port}")
            assert "[OK] All nodes agree about slots configuration." in check.stdout, check.stdout
            assert "[OK] All 16384 slots covered." in check.stdout, check.stdout
            missing = [k for k in [f"k:{j}" for j in range(3000)] + list(acked)
                       if rc.get(k) != str(int(k[2:])).encode()]
            assert missing == []
            moved = nodes[3].client()
            try:
                assert moved.execute_command("DBSIZE") > 0
            finally:
                moved.close()
        finally:
            rc.close()
    finally:
        stop_all(nodes)


REDIS72_BIN = os.environ.get("REDIS72_BIN", "/work/redis-7.2.4/src/redis-server")


@pytest.mark.skipif(not os.path.exists(REDIS72_BIN), reason="no Redis 7.2.4 (REDIS72_BIN)")
def test_human_nodenames_match_redis72(tmp_path_factory):
    """cluster-announce-human-nodename (Redis 7.2): its CONFIG SET checks, the ping extension
    that carries it (each side's nodes.conf keeps the other's name as nodename=), and the
    verbose log line naming reporter and failing node by it. Nodes: Redis 7.2.4, Goblin,
    Redis 7.2.4; the third is stopped so the other two report it."""
    nodes = []
    for i, (kind, binary) in enumerate([("redis", REDIS72_BIN), ("goblin", GOBLIN_BIN),
                                        ("redis", REDIS72_BIN)]):
        n = Node(kind, binary, ["--loglevel", "verbose"], tmp_path_factory.mktemp(f"hn{kind}{i}"))
        n.start()
        nodes.append(n)
    clients = [n.client() for n in nodes]
    try:
        errors = []
        for c in clients[:2]:
            errors.append([
                error_of(c, "CONFIG", "SET", "cluster-announce-human-nodename", "a:b"),
                error_of(c, "CONFIG", "SET", "cluster-announce-human-nodename", "a!b"),
                c.execute_command("CONFIG", "SET", "cluster-announce-human-nodename", "a_b-c.d"),
                c.execute_command("CONFIG", "GET", "cluster-announce-human-nodename"),
            ])
        assert errors[0] == errors[1]
        for i, c in enumerate(clients):
            c.execute_command("CONFIG", "SET", "cluster-announce-human-nodename", f"nodename-{i}")
            if i:
                c.execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[0].port)
        ids = [c.execute_command("CLUSTER", "MYID").decode() for c in clients]

        def knows_names(i: int) -> bool:
            clients[i].execute_command("CLUSTER", "SAVECONFIG")
            text = (nodes[i].workdir / "nodes.conf").read_text()
            return all(f"nodename=nodename-{j}" in text for j in range(3) if j != i)

        wait_for("human nodenames propagated", lambda: knows_names(0) and knows_names(1))
        nodes[2].proc.send_signal(signal.SIGSTOP)
        try:
            line = {
                i: f"Node {ids[1 - i]} (nodename-{1 - i}) reported node {ids[2]} (nodename-2) "
                "as not reachable."
                for i in range(2)
            }
            wait_for("failure reports logged",
                     lambda: all(line[i] in nodes[i].log_path.read_text() for i in range(2)))
        finally:
            nodes[2].proc.send_signal(signal.SIGCONT)
    finally:
        for c in clients:
            c.close()
        stop_all(nodes)
