#!/usr/bin/env python3
"""Eviction quality under maxmemory, beside Redis with the same policy and sample count, the
way Redis's own LRU test (utils/lru/test-lru.rb) measures it: fill the server past its limit,
access the keys with a skewed pattern (a hot fifth of the keys gets most reads), add as many
new keys again as half the data set so about half of it must be evicted, and report the share
of the hot keys that survived (1.0 is a perfect LRU/LFU; random eviction keeps about as many
hot keys as cold ones). Keys are small sorted sets written with ZADD.

    python3 benchmarks/eviction_quality.py [--maxmemory 32mb] [--policies allkeys-lru,...] [--samples 5,10]
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Client, Server, encode, info  # noqa: E402

MEMBERS = 8


def zadd(key):
    args = []
    for m in range(MEMBERS):
        args += [m, "m%d" % m]
    return encode("ZADD", key, *args)


def fill_until_evicting(c):
    """Adds keys until the server starts evicting; returns how many it holds then."""
    n = 0
    while int(info(c, "stats")["evicted_keys"]) == 0:
        c.pipeline([zadd("key:%d" % i) for i in range(n, n + 2000)])
        n += 2000
    return int(c.call("DBSIZE")), n


def measure(kind, policy, samples, maxmemory, seed):
    rnd = random.Random(seed)
    with Server(kind, extra=["--maxmemory", maxmemory, "--maxmemory-policy", policy,
                             "--maxmemory-samples", str(samples)]) as s:
        c = Client(s.port)
        held, written = fill_until_evicting(c)
        keys = ["key:%d" % i for i in range(written) if c.call("EXISTS", "key:%d" % i) == 1]
        time.sleep(1.1)  # the LRU clock counts seconds
        hot = set(rnd.sample(keys, len(keys) // 5))
        hot_list = list(hot)
        # 80% of the reads go to the hot fifth, 20% to the rest.
        reads = []
        for _ in range(4 * len(keys)):
            k = rnd.choice(hot_list) if rnd.random() < 0.8 else rnd.choice(keys)
            reads.append(encode("ZSCORE", k, "m1"))
        c.pipeline(reads)
        c.pipeline([zadd("new:%d" % i) for i in range(len(keys) // 2)])
        alive_hot = sum(c.call("EXISTS", k) for k in hot_list)
        cold = [k for k in keys if k not in hot]
        alive_cold = sum(c.call("EXISTS", k) for k in cold)
        evicted = int(info(c, "stats")["evicted_keys"])
        c.close()
        return {"held": held, "hot_kept": alive_hot / len(hot_list),
                "cold_kept": alive_cold / len(cold), "evicted": evicted}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--maxmemory", default="32mb")
    ap.add_argument("--policies", default="allkeys-lru,allkeys-lfu,allkeys-random")
    ap.add_argument("--samples", default="5,10")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    print("maxmemory %s, a hot fifth of the keys gets 80%% of the reads, then half the data set "
          "again in new keys" % args.maxmemory)
    print("| policy | samples | server | keys held | hot keys kept | cold keys kept |")
    print("|---|---:|---|---:|---:|---:|")
    for policy in args.policies.split(","):
        for samples in [int(s) for s in args.samples.split(",")]:
            for kind in ("redis", "goblin"):
                r = measure(kind, policy, samples, args.maxmemory, args.seed)
                print("| %s | %d | %s | %d | %.3f | %.3f |" % (
                    policy, samples, kind, r["held"], r["hot_kept"], r["cold_kept"]))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
