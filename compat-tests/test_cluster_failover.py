"""Cluster replicas and failover on loopback: 3 Goblin masters + 3 Goblin replicas created by
redis-cli --cluster create --cluster-replicas 1. The replicas hold their masters' data;
CLUSTER FAILOVER (plain, FORCE, TAKEOVER) swaps a master and its replica; kill -9 of a
master promotes its replica while a client keeps writing, and the killed node, restarted,
rejoins as a replica of the new master. A Redis 7.0 node replicates a Goblin master and
takes its place by CLUSTER FAILOVER; a master emptied by resharding becomes a replica of
the node that got its last slot, and a spare replica migrates to an orphaned master.

Every wait polls with a deadline (cluster-node-timeout is 2000 ms here).
"""

from __future__ import annotations

import subprocess

import pytest
import redis
from redis.cluster import RedisCluster

from test_cluster import (
    cli,
    cluster_info,
    info_field,
    start_nodes,
    stop_all,
    wait_for,
)

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "redis-cli"], capture_output=True).returncode != 0,
    reason="redis-cli not installed",
)


def cmd(node, *args):
    c = node.client()
    try:
        return c.execute_command(*args)
    finally:
        c.close()


def try_cmd(node, *args):
    try:
        return cmd(node, *args)
    except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
        return None


def myid(node) -> str:
    return cmd(node, "CLUSTER", "MYID").decode()


def nodes_lines(node) -> dict:
    """CLUSTER NODES by id: (flags, master)."""
    text = cmd(node, "CLUSTER", "NODES").decode()
    out = {}
    for line in text.splitlines():
        f = line.split()
        out[f[0]] = (set(f[2].split(",")), f[3])
    return out


def role(node) -> str:
    r = try_cmd(node, "ROLE")
    return r[0].decode() if r else ""


def master_of(node) -> str | None:
    """The master id this node sees itself replicating, None when a master."""
    flags, master = nodes_lines(node)[myid(node)]
    return None if "master" in flags else master


def create_with_replicas(nodes) -> None:
    out = cli("--cluster", "create", *[f"127.0.0.1:{n.port}" for n in nodes],
              "--cluster-replicas", "1", "--cluster-yes")
    assert out.returncode == 0, out.stdout + out.stderr
    wait_for("cluster_state:ok", lambda: all(cluster_info(n)["cluster_state"] == "ok" for n in nodes), 30)


def synced(replica) -> bool:
    try:
        return info_field(replica, "replication", "master_link_status") == "up"
    except redis.RedisError:
        return False


def restart(node) -> None:
    """Starts a stopped node again on its port and directory (its nodes.conf kept)."""
    log = open(node.log_path, "ab")
    node.proc = subprocess.Popen(node.argv(), cwd=node.workdir, stdout=log,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    log.close()
    assert node._wait_ready(), node.log_tail()


def pairs(nodes) -> list:
    """(master, replica) node pairs as the cluster sees them now."""
    by_id = {myid(n): n for n in nodes if n.alive()}
    out = []
    for n in by_id.values():
        m = master_of(n)
        if m is not None and m in by_id:
            out.append((by_id[m], n))
    return out


def roles_settled(nodes) -> bool:
    """Every live node agrees on who replicates whom, and each replica is in sync."""
    live = [n for n in nodes if n.alive()]
    views = []
    for n in live:
        v = try_cmd(n, "CLUSTER", "NODES")
        if v is None:
            return False
        views.append(sorted((line.split()[0], "master" in line.split()[2], line.split()[3])
                            for line in v.decode().splitlines()
                            if "fail" not in line.split()[2]))
    if any(v != views[0] for v in views):
        return False
    try:
        return all(synced(r) for _, r in pairs(live)) and all(
            cluster_info(n)["cluster_state"] == "ok" for n in live)
    except redis.RedisError:
        return False


@pytest.fixture(scope="module")
def six(tmp_path_factory):
    nodes = start_nodes(tmp_path_factory, ["goblin"] * 6)
    try:
        create_with_replicas(nodes)
        wait_for("the replicas to sync", lambda: roles_settled(nodes), 60)
        yield nodes
    finally:
        stop_all(nodes)


def cluster_client(nodes) -> RedisCluster:
    n = next(n for n in nodes if n.alive())
    return RedisCluster(host="127.0.0.1", port=n.port)


def test_replicas_hold_their_masters_data(six):
    ps = pairs(six)
    assert len(ps) == 3
    rc = cluster_client(six)
    for i in range(300):
        rc.set(f"k{i}", i)
    rc.close()
    for master, replica in ps:
        assert role(replica) == "slave"
        mid = myid(master)
        keys = set(cmd(master, "KEYS", "*"))
        assert keys

        def same_keys(replica=replica, keys=keys):
            return set(cmd(replica, "KEYS", "*")) == keys

        wait_for("the replica to hold its master's keys", same_keys)
        c = replica.client()
        c.execute_command("READONLY")
        key = sorted(keys)[0]
        assert c.get(key) == cmd(master, "GET", key)
        c.close()
        lines = cmd(master, "CLUSTER", "REPLICAS", mid)
        assert len(lines) == 1 and f" slave {mid} " in lines[0].decode()
        shards = cmd(replica, "CLUSTER", "SHARDS")
        roles = {}
        for shard in shards:
            members = shard[3]
            for m in members:
                d = dict(zip(m[::2], m[1::2]))
                roles[d[b"id"].decode()] = d[b"role"]
        assert roles[myid(replica)] == b"replica" and roles[mid] == b"master"


def test_slot_taken_by_gossip_deletes_keys_on_replicas_too(six):
    """As Redis's unit/cluster/slot-ownership: a master that learns by gossip that another
    node took a slot with keys deletes them and propagates the deletions, so its replica
    drops them too."""
    (src, replica), (dst, _) = pairs(six)[:2]
    sid = myid(src)
    key = next(f"owned{i}" for i in range(10000)
               if slot_owner(src, cmd(src, "CLUSTER", "KEYSLOT", f"owned{i}")) == sid)
    slot = cmd(src, "CLUSTER", "KEYSLOT", key)
    assert cmd(src, "SET", key, "v")

    def replica_count() -> int:
        return cmd(replica, "CLUSTER", "COUNTKEYSINSLOT", slot)

    wait_for("the replica to get the key", lambda: replica_count() == 1)
    cmd(dst, "CLUSTER", "BUMPEPOCH")
    assert cmd(dst, "CLUSTER", "SETSLOT", slot, "NODE", myid(dst)) == b"OK"
    wait_for("the old owner to drop the key",
             lambda: cmd(src, "CLUSTER", "COUNTKEYSINSLOT", slot) == 0)
    wait_for("its replica to drop the key", lambda: replica_count() == 0)


def test_replicaof_refused_as_redis(six, tmp_path_factory):
    [r] = start_nodes(tmp_path_factory, ["redis"])
    try:
        errors = []
        for node in (r, six[0]):
            c = node.client()
            with pytest.raises(redis.ResponseError) as e:
                c.execute_command("REPLICAOF", "127.0.0.1", "1")
            errors.append(str(e.value))
            c.close()
        assert errors[0] == errors[1] == "REPLICAOF not allowed in cluster mode."
        bad = []
        for node in (r, six[0]):
            c = node.client()
            for args in (("FAILOVER", "NOW"), ("FAILOVER",), ("FAILOVER", "FORCE", "X")):
                try:
                    c.execute_command("CLUSTER", *args)
                    bad.append("OK")
                except redis.ResponseError as e:
                    bad.append(str(e))
            c.close()
        assert bad[:3] == bad[3:]
    finally:
        r.stop()


@pytest.mark.parametrize("mode", ["", "FORCE", "TAKEOVER"])
def test_cluster_failover(six, mode):
    master, replica = pairs(six)[0]
    rc = cluster_client(six)
    for i in range(100):
        rc.set(f"f{mode}{i}", i)
    args = ["CLUSTER", "FAILOVER"] + ([mode] if mode else [])
    assert cmd(replica, *args) == b"OK"
    wait_for("the replica to take over", lambda: master_of(replica) is None, 20)
    wait_for("the old master to follow it", lambda: master_of(master) == myid(replica), 20)
    wait_for("the roles to settle", lambda: roles_settled(six), 30)
    assert role(master) == "slave"
    for i in range(100):
        assert rc.get(f"f{mode}{i}") == str(i).encode()
    rc.set(f"after{mode}", 1)
    assert rc.get(f"after{mode}") == b"1"
    rc.close()
    assert "Failover election won" in replica.log_path.read_text(errors="replace") or mode == "TAKEOVER"


def test_kill_master_promotes_a_replica_and_it_rejoins(six):
    master, replica = pairs(six)[1]
    rc = cluster_client(six)
    owned = [f"x{i}" for i in range(400)]
    for k in owned:
        rc.set(k, k)
    # Every write reached the replicas before the kill.
    assert cmd(master, "WAIT", 1, 5000) == 1
    master.proc.kill()
    master.proc.wait()
    wait_for("the replica to be promoted", lambda: master_of(replica) is None, 30)
    wait_for("cluster_state:ok", lambda: all(
        cluster_info(n)["cluster_state"] == "ok" for n in six if n.alive()), 30)
    for k in owned:
        assert rc.get(k) == k.encode()
    rc.set("x-after", 1)
    rc.close()
    restart(master)
    wait_for("the killed node to rejoin as a replica", lambda: master_of(master) == myid(replica), 30)
    wait_for("it to sync", lambda: synced(master) and roles_settled(six), 30)
    assert cmd(master, "DBSIZE") == cmd(replica, "DBSIZE")


def test_redis_replica_of_a_goblin_master(six, tmp_path_factory):
    """A Redis 7.0 node meets the cluster, replicates a Goblin master, and takes its place by
    CLUSTER FAILOVER (MFSTART to the Goblin master, the votes of the Goblin masters)."""
    [r] = start_nodes(tmp_path_factory, ["redis"])
    try:
        master = pairs(six)[2][0]
        assert cmd(r, "CLUSTER", "MEET", "127.0.0.1", master.port) == b"OK"
        wait_for("the Redis node to be known", lambda: myid(r) in nodes_lines(master), 20)
        wait_for("the Redis node to know the masters",
                 lambda: sum("master" in f for f, _ in nodes_lines(r).values()) >= 3, 20)
        assert cmd(r, "CLUSTER", "REPLICATE", myid(master)) == b"OK"
        wait_for("Redis to sync from Goblin", lambda: synced(r), 30)
        wait_for("Goblin to see the Redis replica",
                 lambda: nodes_lines(master)[myid(r)][1] == myid(master), 20)
        assert cmd(r, "DBSIZE") == cmd(master, "DBSIZE")
        # Every voter must know the requester as a replica first: a vote denied ("its master
        # is up or it is not a replica") is retried only after the manual failover's 5 s.
        wait_for("every node to agree on the roles", lambda: roles_settled(six + [r]), 30)
        assert cmd(r, "CLUSTER", "FAILOVER") == b"OK"
        wait_for("Redis to take over", lambda: master_of(r) is None, 30)
        wait_for("the Goblin master to follow it", lambda: master_of(master) == myid(r), 30)
        assert "Manual failover requested by replica" in master.log_path.read_text(errors="replace")
        wait_for("Goblin to sync from Redis", lambda: synced(master), 30)
        wait_for("Redis to see its Goblin replica",
                 lambda: nodes_lines(r)[myid(master)][1] == myid(r), 20)
        # Back to the Goblin node, so the cluster is all Goblin again.
        wait_for("every node to agree on the roles", lambda: roles_settled(six + [r]), 30)
        assert cmd(master, "CLUSTER", "FAILOVER") == b"OK"
        wait_for("Goblin to take over again", lambda: master_of(master) is None, 30)
    finally:
        r.stop()


def move_slot(slot: int, src, dst, nodes) -> None:
    """Moves an empty slot as redis-cli's reshard does: IMPORTING, MIGRATING, then NODE on
    the target, the source and the other nodes."""
    sid, did = myid(src), myid(dst)
    assert cmd(dst, "CLUSTER", "SETSLOT", slot, "IMPORTING", sid) == b"OK"
    assert cmd(src, "CLUSTER", "SETSLOT", slot, "MIGRATING", did) == b"OK"
    for n in [dst, src] + [n for n in nodes if n not in (src, dst) and n.alive()]:
        try_cmd(n, "CLUSTER", "SETSLOT", slot, "NODE", did)


def test_emptied_master_follows_and_replica_migrates(six, tmp_path_factory):
    """A new master gets one slot, then gives it back: left without slots, it becomes a
    replica of the node that got its last slot. That master having two replicas then, one
    of them migrates to another master when that one's only replica dies
    (cluster-migration-barrier 1)."""
    (dst, _), (other, other_replica) = pairs(six)[:2]
    [extra] = start_nodes(tmp_path_factory, ["goblin"])
    nodes = six + [extra]
    try:
        assert cmd(extra, "CLUSTER", "MEET", "127.0.0.1", dst.port) == b"OK"
        eid = myid(extra)
        wait_for("the new node to be known", lambda: all(
            eid in nodes_lines(n) for n in nodes if n.alive())
            and all(myid(n) in nodes_lines(extra) for n in six if n.alive()), 30)
        did = myid(dst)
        slot = next(s for s in range(16384)
                    if cmd(dst, "CLUSTER", "COUNTKEYSINSLOT", s) == 0
                    and slot_owner(dst, s) == did)
        move_slot(slot, dst, extra, nodes)
        wait_for("the slot to move", lambda: slot_owner(dst, slot) == myid(extra), 20)
        move_slot(slot, extra, dst, nodes)
        wait_for("the emptied master to follow the new owner", lambda: master_of(extra) == did, 30)
        wait_for("it to sync", lambda: synced(extra), 30)
        assert "Reconfiguring myself as a replica of" in extra.log_path.read_text(errors="replace")
        wait_for("the roles to settle", lambda: roles_settled(nodes), 60)
        other_replica.proc.kill()
        other_replica.proc.wait()
        oid = myid(other)
        wait_for("a replica to migrate to the orphaned master", lambda: any(
            n.alive() and n is not other and master_of(n) == oid for n in nodes), 40)
        migrated = [n for n in nodes if n.alive() and n is not other and master_of(n) == oid]
        assert "Migrating to orphaned master" in migrated[0].log_path.read_text(errors="replace")
        wait_for("it to sync", lambda: synced(migrated[0]), 30)
    finally:
        extra.stop()


def slot_owner(node, slot: int) -> str | None:
    for s in cmd(node, "CLUSTER", "SLOTS"):
        if s[0] <= slot <= s[1]:
            return s[2][2].decode()
    return None
