"""Parameters about the server process, against Redis: latency-tracking and its percentiles
(INFO latencystats), oom-score-adj / oom-score-adj-values (/proc/PID/oom_score_adj of the
server), proc-title-template (/proc/PID/cmdline) and bind-source-addr (the address a
replica connects to its master from)."""

from __future__ import annotations

import re

from test_persistence import procs  # noqa: F401 (the fixture)
from test_replication import replicaof, start, wait_for, wait_synced


def latencystats(c) -> dict[str, str]:
    out = {}
    for line in c.execute_command("INFO", "latencystats").decode().splitlines():
        if line.startswith("latency_percentiles_usec_"):
            name, value = line[len("latency_percentiles_usec_"):].split(":", 1)
            out[name] = value
    return out


def shape(stats: dict[str, str]) -> dict[str, list[str]]:
    """The percentile labels per command (the values are timings)."""
    return {name: re.findall(r"(p[0-9.]+)=[0-9]+\.[0-9]{3}", v) for name, v in stats.items()}


def test_latency_tracking_on_off_and_percentiles(both):
    both.ok("CONFIG", "RESETSTAT")
    both.config_set("latency-tracking", "no")
    both("SET", "a", "b")
    assert [shape(latencystats(c)) for c in both.clients()] == [{}, {}]
    both.config_set("latency-tracking", "yes")
    both("SET", "a", "b")
    both("GET", "a")
    r, g = (shape(latencystats(c)) for c in both.clients())
    assert r["set"] == g["set"] == ["p50", "p99", "p99.9"] and r["get"] == g["get"]
    both.config_set("latency-tracking-info-percentiles", "0.0 50.0 100.0")
    both.pairs("CONFIG", "GET", "latency-tracking-info-percentiles")
    r, g = (shape(latencystats(c)) for c in both.clients())
    assert r["set"] == g["set"] == ["p0", "p50", "p100"]
    both.config_set("latency-tracking-info-percentiles", "")
    both.pairs("CONFIG", "GET", "latency-tracking-info-percentiles")
    assert [latencystats(c)["set"] for c in both.clients()] == ["", ""]
    both.err("CONFIG", "SET", "latency-tracking-info-percentiles", "10.0 50.0 a")
    both.err("CONFIG", "SET", "latency-tracking-info-percentiles", "10.0 50.0 101.0")
    both.pairs("CONFIG", "GET", "latency-tracking*")
    both.ok("CONFIG", "RESETSTAT")
    # Only CONFIG RESETSTAT's own call, with no percentile to print.
    assert [latencystats(c) for c in both.clients()] == [{"config|resetstat": ""}] * 2


def oom_score(pid: int) -> int:
    with open(f"/proc/{pid}/oom_score_adj") as f:
        return int(f.read())


def set_oom_score(pid: int, value: int) -> None:
    with open(f"/proc/{pid}/oom_score_adj", "w") as f:
        f.write(f"{value}\n")


def each_server(procs, tmp_path):
    """A Redis, then a Goblin, each fresh: (kind, process, client, pid)."""
    for kind in ("redis", "goblin"):
        p = start(procs, kind, tmp_path / kind)
        yield kind, p, p.client(), p.proc.pid


def test_oom_score_adj(procs, tmp_path):
    """Redis's unit/oom-score-adj, compared: the score moves as each server's does."""
    seen = {}
    for kind, _, c, pid in each_server(procs, tmp_path):
        base = oom_score(pid)
        steps = []
        c.config_set("oom-score-adj-values", "10 20 30")
        c.config_set("oom-score-adj", "yes")
        steps.append(oom_score(pid) - base)
        c.config_set("oom-score-adj-values", "15 20 30")
        steps.append(oom_score(pid) - base)
        c.execute_command("REPLICAOF", "localhost", 1)
        steps.append(oom_score(pid) - base)
        c.execute_command("REPLICAOF", "NO", "ONE")
        steps.append(oom_score(pid) - base)
        steps.append(c.config_get("oom-score-adj*"))
        # Off: the values no longer touch the score, and the score from before comes back.
        c.config_set("oom-score-adj", "no")
        steps.append(oom_score(pid) - base)
        set_oom_score(pid, base + 2)
        c.config_set("oom-score-adj-values", f"{base + 1} {base + 1} {base + 1}")
        steps.append(oom_score(pid) - base)
        set_oom_score(pid, 22)
        c.config_set("oom-score-adj-values", "9 9 9")
        c.config_set("oom-score-adj", "yes")
        steps.append(oom_score(pid))
        c.config_set("oom-score-adj", "no")
        steps.append(oom_score(pid))
        c.config_set("oom-score-adj", "relative")
        steps.append(oom_score(pid))
        c.config_set("oom-score-adj", "absolute")
        steps.append(oom_score(pid))
        steps.append(c.config_get("oom-score-adj"))
        c.config_set("oom-score-adj-values", "2000 2000 2000")
        steps.append(oom_score(pid))
        seen[kind] = steps
    assert seen["goblin"] == seen["redis"]
    assert seen["goblin"][:4] == [10, 15, 20, 15]


def cmdline(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode().split()


def test_proc_title_template(procs, tmp_path):
    titles = {}
    for kind, p, c, pid in each_server(procs, tmp_path):
        # The default: argv[0] and the listening address.
        default = cmdline(pid)
        assert default[1:] == [f"127.0.0.1:{p.port}"], default
        c.config_set("proc-title-template", "TEST {title} {listen-addr} {port} {tls-port} "
                     "{unixsocket} {config-file} {{x}")
        words = cmdline(pid)
        titles[kind] = [words[0], words[2:]]
        assert words[1] == default[0]
        for template in ("{invalid-var}", "{title", "{title}", "  "):
            try:
                c.config_set("proc-title-template", template)
                titles[kind].append("accepted")
            except Exception as e:  # noqa: BLE001 (compared below)
                titles[kind].append(str(e))
        titles[kind].append(c.config_get("proc-title-template"))
    assert titles["goblin"][2:] == titles["redis"][2:]
    r, g = titles["redis"], titles["goblin"]
    assert r[0] == g[0] == "TEST"
    port = lambda words: words[1]  # noqa: E731
    assert g[1] == [f"127.0.0.1:{port(g[1])}", port(g[1]), "0", "-", "{x}"]
    assert r[1][2:] == g[1][2:]


def test_bind_source_addr(procs, tmp_path):
    """A replica connects to its master from bind-source-addr (the master's CLIENT LIST
    shows that address); an address the host does not have is ignored."""
    seen = {}
    for kind in ("redis", "goblin"):
        # 127.0.0.2 is no loopback address to protected mode.
        master = start(procs, "redis", tmp_path / f"m-{kind}", "--protected-mode", "no")
        replica = start(procs, kind, tmp_path / f"r-{kind}", "--bind-source-addr", "127.0.0.2")
        replica.client().config_get("bind-source-addr")
        replicaof(replica, master)
        mc = master.client()

        def replica_addr():
            for line in mc.execute_command("CLIENT", "LIST").decode().splitlines():
                if "flags=S" in line:
                    return line.split(" addr=", 1)[1].split(":", 1)[0]
            return None

        wait_for(lambda: replica_addr() is not None, what="replica connected")
        got = [replica_addr(), replica.client().config_get("bind-source-addr")]
        rc = replica.client()
        # A replica still loading its first sync answers REPLICAOF with -LOADING.
        wait_synced(mc, rc)
        rc.config_set("bind-source-addr", "192.0.2.1")
        rc.execute_command("REPLICAOF", "NO", "ONE")
        wait_for(lambda: replica_addr() is None, what="the master to drop the replica")
        replicaof(replica, master)
        wait_for(lambda: replica_addr() is not None, what="replica reconnected")
        got.append(replica_addr())
        seen[kind] = got
    assert seen["goblin"] == seen["redis"]
    assert seen["goblin"][0] == "127.0.0.2" and seen["goblin"][2] == "127.0.0.1"
