#!/usr/bin/env python3
"""Seeded HTTP-mirror corpus: heavy-tailed files in a docroot plus fixed request manifests.

Sizes (per object, independent draws from one seeded PRNG):
  30%  small:  log-uniform in [256 B, 16 KiB)
  66%  medium: lognormal, median 104 KB, sigma 1.0, truncated to [16 KiB, 1 MiB)
   4%  large:  1 MiB x Pareto(alpha 2.2), truncated to 16 MiB
The mean comes out near 175 KiB; objects are drawn until the total reaches --size.

Content: every file is a slice of one 64 MiB block from the same PRNG, at an offset that
depends on the object, preceded by the object's own path, so no two files are alike and
writing 4 GiB costs only the kernel's copy.

Manifests (each line "/path size"; the size lets goblin-bench check every body):
  population.txt  every object once, shuffled                 (the population phase)
  probe.txt       1,000 objects drawn uniformly               (the hit probe)
  measured.txt    --factor x objects requests, Zipf(--alpha) over a shuffled popularity
                  order, so popularity does not depend on size (the warm replay)

Everything goes under OUT/corpus-<seed>-<size>/ (docroot/ and the manifests) with
corpus.json recording the parameters, the size statistics and the SHA-256 of each
manifest. A corpus whose corpus.json matches the parameters is reused as it is.

Usage: make_corpus.py [--out DIR] [--size 4G] [--seed 1] [--factor 5] [--alpha 0.95]
"""

import argparse
import bisect
import hashlib
import itertools
import json
import math
import os
import random
import sys
import time

VERSION = 1
BLOCK = 64 << 20
SMALL, LARGE, LARGE_CAP = 16 << 10, 1 << 20, 16 << 20


def parse_size(text):
    """'4G', '400M', '512K' or a byte count."""
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1:], 1)
    return int(float(text[:-1] if mult > 1 else text) * mult)


def draw_size(rng):
    u = rng.random()
    if u < 0.30:
        return int(math.exp(rng.uniform(math.log(256), math.log(SMALL))))
    if u < 0.96:
        while True:
            s = int(rng.lognormvariate(math.log(104_000), 1.0))
            if SMALL <= s < LARGE:
                return s
    while True:
        s = int(LARGE * rng.paretovariate(2.2))
        if s <= LARGE_CAP:
            return s


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_manifest(path, rows):
    with open(path, "w") as f:
        f.writelines("%s %d\n" % row for row in rows)
    return sha256_file(path)


def corpus_dir(out, seed, size):
    return os.path.join(out, "corpus-%d-%d" % (seed, size))


def make(out, size, seed=1, factor=5, alpha=0.95, quiet=False):
    """Creates (or reuses) the corpus and returns its corpus.json as a dict."""
    params = {"version": VERSION, "seed": seed, "size": size, "factor": factor, "alpha": alpha}
    root = corpus_dir(out, seed, size)
    meta_path = os.path.join(root, "corpus.json")
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("params") == params:
            ok = all(sha256_file(os.path.join(root, m)) == meta["sha256"][m] for m in meta["sha256"])
            if ok:
                if not quiet:
                    print("reusing corpus %s (%d objects, %.2f GiB)" % (root, meta["objects"], meta["bytes"] / 2**30))
                return meta
        os.remove(meta_path)
    t0 = time.time()
    rng = random.Random(seed)
    sizes, total = [], 0
    while total < size:
        s = draw_size(rng)
        sizes.append(s)
        total += s
    block = random.Random(seed ^ 0x5EED).randbytes(BLOCK + LARGE_CAP)
    view = memoryview(block)
    docroot = os.path.join(root, "docroot")
    paths = []
    for i, s in enumerate(sizes):
        rel = "o/%02x/%06x.bin" % (i & 0xFF, i)
        paths.append("/" + rel)
        full = os.path.join(docroot, rel)
        if i < 256:
            os.makedirs(os.path.dirname(full), exist_ok=True)
        tag = ("%s %d\n" % (paths[-1], s)).encode()[:s]
        off = (i * 0x9E3779B1) % BLOCK
        with open(full, "wb") as f:
            f.write(tag)
            f.write(view[off:off + s - len(tag)])
    rows = list(zip(paths, sizes))
    population = rows[:]
    rng.shuffle(population)
    probe = [rows[rng.randrange(len(rows))] for _ in range(1000)]
    order = rows[:]
    rng.shuffle(order)
    cum = list(itertools.accumulate(1.0 / (r + 1) ** alpha for r in range(len(order))))
    top = cum[-1]
    measured = [order[bisect.bisect_left(cum, rng.random() * top)] for _ in range(factor * len(rows))]
    sha = {
        "population.txt": write_manifest(os.path.join(root, "population.txt"), population),
        "probe.txt": write_manifest(os.path.join(root, "probe.txt"), probe),
        "measured.txt": write_manifest(os.path.join(root, "measured.txt"), measured),
    }
    n = len(sizes)
    meta = {
        "params": params,
        "root": root,
        "docroot": docroot,
        "objects": n,
        "bytes": total,
        "mean": total / n,
        "median": sorted(sizes)[n // 2],
        "max": max(sizes),
        "share_below_16k": sum(s < SMALL for s in sizes) / n,
        "share_at_least_1m": sum(s >= LARGE for s in sizes) / n,
        "bytes_page_rounded": sum((s + 4095) // 4096 * 4096 for s in sizes),
        "measured_requests": len(measured),
        "measured_bytes": sum(s for _, s in measured),
        "measured_distinct": len(set(p for p, _ in measured)),
        "sha256": sha,
        "seconds": round(time.time() - t0, 1),
    }
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    if not quiet:
        print("wrote corpus %s in %.1f s" % (root, meta["seconds"]))
    return meta


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/work/bench-http")
    ap.add_argument("--size", default="4G", help="total bytes of the corpus (4G, 400M, ...)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--factor", type=int, default=5, help="measured requests per object")
    ap.add_argument("--alpha", type=float, default=0.95, help="Zipf exponent of the measured manifest")
    args = ap.parse_args()
    meta = make(args.out, parse_size(args.size), args.seed, args.factor, args.alpha)
    json.dump({k: v for k, v in meta.items() if k != "params"}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
