#!/usr/bin/env python3
"""Draws the memory benchmarks' results as one chart: RSS bytes per key, member, field or
element for goblin-server beside redis-server, one pair of bars a case, with the issue's
target (a fraction of Redis's figure) marked on Goblin's bar.

It reads the JSON that string_memory.py, set_memory.py, hash_memory.py and list_memory.py
write with --json (rows of {"case", "goblin": {"rss"}, "redis": {"rss"}}, most with a
"shape"), so the
chart shows exactly the figures of those runs, each measured beside Redis in the same run.

Usage: benchmarks/plot_memory.py out.png strings.json sets.json hashes.json lists.json
"""

import argparse
import json

# The targets of issues 13 and 16: Goblin's RSS at most this fraction of Redis's.
TARGETS = {"S1": 0.5, "S2": 0.5, "T1": 1 / 3, "T2": 1 / 3, "T3": 0.5,
           "H1": 0.7, "H2": 0.5, "L1": 0.95, "L2": 0.7}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="PNG to write")
    ap.add_argument("results", nargs="+", help="JSON files written by the *_memory.py --json")
    args = ap.parse_args()
    rows = [row for path in args.results for row in json.load(open(path))]

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = ["%s\n%s" % (r["case"], r.get("shape", "")) for r in rows]
    ys = range(len(rows))
    fig, ax = plt.subplots(figsize=(9, 0.7 * len(rows) + 1.2))
    ax.barh([y + 0.2 for y in ys], [r["redis"]["rss"] for r in rows], 0.4, label="redis-server 7.0", color="#b0413e")
    ax.barh([y - 0.2 for y in ys], [r["goblin"]["rss"] for r in rows], 0.4, label="goblin-server", color="#3e7cb1")
    for y, r in zip(ys, rows):
        target = TARGETS.get(r["case"])
        if target is not None:
            x = target * r["redis"]["rss"]
            ax.plot([x, x], [y - 0.4, y], color="black", linewidth=2,
                    label="target" if y == 0 else None)
        ax.text(r["goblin"]["rss"] + 1, y - 0.2, "%.1f (%.2fx)" % (r["goblin"]["rss"], r["goblin"]["rss"] / r["redis"]["rss"]),
                va="center", fontsize=8)
        ax.text(r["redis"]["rss"] + 1, y + 0.2, "%.1f" % r["redis"]["rss"], va="center", fontsize=8)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("RSS bytes per key / member / field / element (lower is better)")
    ax.set_title("Memory by type, each case on fresh servers in one run")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print("plot written to", args.out)


if __name__ == "__main__":
    main()
