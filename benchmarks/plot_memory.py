#!/usr/bin/env python3
"""Draws the memory benchmarks' results as one chart: RSS bytes per key, member, field or
element for goblin-server beside each peer of the run (redis-server 7.2.4, valkey-server
8.0.1, ...), one group of bars a case, with issue 35's target (a fraction of the first
peer's figure) marked on Goblin's bar.

It reads the JSON that zset_memory.py, string_memory.py, set_memory.py, hash_memory.py and
list_memory.py write with --json (rows of {"case", "goblin": {"rss"}, "peers": {name:
{"rss"}}}, most with a "shape"), and the memory cases of stream_bench.py's --json, so the
chart shows exactly the figures of those runs, each measured beside its peers in the same run.

Usage: benchmarks/plot_memory.py out.png zsets.json strings.json sets.json hashes.json lists.json
           [streams.json]
"""

import argparse
import json

# Issue 35's and issue 32's (M1, M2) targets: Goblin's RSS at most this fraction of the first
# peer's (Redis 7.2.4).
TARGETS = {"W4a": 0.6, "T3": 0.6, "H1": 0.55, "L2": 0.75, "M1": 0.75, "M2": 0.5}
COLOURS = ["#b0413e", "#e0a030", "#6a994e", "#8e6c8a"]


def load_rows(path):
    """The rows of one results file: a memory benchmark's list of rows as they are, or
    stream_bench.py's {"memory": {case: {server: {"shape", "rss", ...}}}} turned into such
    rows."""
    results = json.load(open(path))
    if isinstance(results, list):
        return results
    rows = []
    for case, servers in results["memory"].items():
        goblin = servers["goblin"]
        peers = {name: r for name, r in servers.items() if name != "goblin"}
        rows.append({"case": case, "shape": goblin["shape"], "goblin": goblin, "peers": peers})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="PNG to write")
    ap.add_argument("results", nargs="+", help="JSON files written by the *_memory.py --json")
    args = ap.parse_args()
    rows = [row for path in args.results for row in load_rows(path)]
    peers = list(rows[0]["peers"])

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = ["%s\n%s" % (r["case"], r.get("shape", "")) for r in rows]
    ys = range(len(rows))
    bar = 0.8 / (len(peers) + 1)
    fig, ax = plt.subplots(figsize=(9, 0.35 * (len(peers) + 1) * len(rows) + 1.2))
    offset = lambda i: -0.4 + bar * (i + 0.5)  # noqa: E731
    ax.barh([y + offset(0) for y in ys], [r["goblin"]["rss"] for r in rows], bar, label="goblin-server",
            color="#3e7cb1")
    for i, peer in enumerate(peers, 1):
        ax.barh([y + offset(i) for y in ys], [r["peers"][peer]["rss"] for r in rows], bar, label=peer,
                color=COLOURS[(i - 1) % len(COLOURS)])
        for y, r in zip(ys, rows):
            ax.text(r["peers"][peer]["rss"] + 1, y + offset(i), "%.1f" % r["peers"][peer]["rss"], va="center",
                    fontsize=7)
    for y, r in zip(ys, rows):
        first = r["peers"][peers[0]]["rss"]
        target = TARGETS.get(r["case"])
        if target is not None:
            x = target * first
            ax.plot([x, x], [y - 0.4, y - 0.4 + bar], color="black", linewidth=2,
                    label="target (x %s)" % peers[0])
        ax.text(r["goblin"]["rss"] + 1, y + offset(0), "%.1f (%.2fx)" % (r["goblin"]["rss"], r["goblin"]["rss"] / first),
                va="center", fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("RSS bytes per key / member / field / element (lower is better)")
    ax.set_title("Memory by type, each case on fresh servers in one run")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print("plot written to", args.out)


if __name__ == "__main__":
    main()
