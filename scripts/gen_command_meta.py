#!/usr/bin/env python3
"""Regenerates server/src/commands/meta/{info,docs}.resp3: the COMMAND INFO and COMMAND DOCS
data Goblin serves, taken from a real redis-server (Debian's 7.0) for the commands Goblin
has (from REDIS72_BIN, Redis 7.2, for those 7.0 lacks: WAITAOF; from REDIS74_BIN, a Redis
7.4 or later, for those 7.2 lacks too: hash-field expiry; from scripts/redis8_meta.py for
those of Redis 8, as no Redis 8 binary is at hand), then
brought to Redis 7.2 where 7.2 changed them (ZRANK/ZREVRANK WITHSCORE, CLIENT
SETINFO, CLIENT NO-TOUCH, blocking commands allowed in scripts) and completed with Goblin's own GOBLIN.* commands.

Usage: scripts/gen_command_meta.py   (needs target/release/goblin-server and redis-server)
Redis's command metadata is BSD-3-Clause licensed (Copyright Redis Ltd. and contributors).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from common import REPO, Client, Server, encode  # noqa: E402

OUT = os.path.join(REPO, "server", "src", "commands", "meta")
# Newer Redis builds, asked in this order for the commands Redis 7.0 lacks (WAITAOF: 7.2;
# the HEXPIRE family: 7.4).
NEWER_REDIS_BINS = (os.environ.get("REDIS72_BIN", "/work/redis-7.2.4/src/redis-server"),
                    os.environ.get("REDIS74_BIN", "/work/redis-unstable/src/redis-server"))


# A typed RESP3 tree: (tag, value) with tags + $ : * ~ % (map value is a list of pairs).
def read(c):
    line = c._line()
    tag, rest = line[:1].decode(), line[1:]
    if tag in "+-":
        return (tag, rest.decode())
    if tag == ":":
        return (tag, int(rest))
    if tag == "$":
        return (tag, c._exact(int(rest)))
    if tag in "*~":
        return (tag, [read(c) for _ in range(int(rest))])
    if tag == "%":
        return (tag, [(read(c), read(c)) for _ in range(int(rest))])
    if tag == "_":
        return ("_", None)
    raise ValueError(line)


def write(v):
    tag, val = v
    if tag in "+-":
        return b"%s%s\r\n" % (tag.encode(), val.encode())
    if tag == ":":
        return b":%d\r\n" % val
    if tag == "$":
        return b"$%d\r\n%s\r\n" % (len(val), val)
    if tag in "*~":
        return b"%s%d\r\n" % (tag.encode(), len(val)) + b"".join(write(x) for x in val)
    if tag == "%":
        return b"%%%d\r\n" % len(val) + b"".join(write(k) + write(x) for k, x in val)
    if tag == "_":
        return b"_\r\n"
    raise ValueError(tag)


def b(s):
    return ("$", s.encode() if isinstance(s, str) else s)


def m(*pairs):
    return ("%", [(b(k), v) for k, v in pairs])


def arr(*items):
    return ("*", list(items))


def sset(*names):
    return ("~", [("+", n) for n in names])


def mget(v, key):
    for k, x in v[1]:
        if k[1] == key.encode():
            return x
    return None


def mset(v, key, new):
    for i, (k, _) in enumerate(v[1]):
        if k[1] == key.encode():
            v[1][i] = (k, new)
            return
    v[1].append((b(key), new))


def argument(name, type_, **extra):
    pairs = [("name", b(name)), ("type", b(type_))]
    for k, x in extra.items():
        pairs.append((k.replace("_", "-") if k != "key_spec_index" else k, x))
    return m(*pairs)


def key_spec(flags, index=1, lastkey=0):
    return m(("flags", sset(*flags)), ("begin_search", m(("type", b("index")), ("spec", m(("index", (":", index)))))),
             ("find_keys", m(("type", b("range")), ("spec", m(("lastkey", (":", lastkey)), ("keystep", (":", 1)), ("limit", (":", 0)))))))


def info(name, arity, flags, first, last, step, acl, specs, subs=()):
    return arr(b(name), (":", arity), sset(*flags), (":", first), (":", last), (":", step), sset(*acl), ("~", []), arr(*specs), arr(*subs))


def docs(summary, since, group, complexity, arguments=(), history=()):
    pairs = [("summary", b(summary)), ("since", b(since)), ("group", b(group)), ("complexity", b(complexity))]
    if history:
        pairs.append(("history", arr(*[arr(b(v), b(t)) for v, t in history])))
    if arguments:
        pairs.append(("arguments", arr(*arguments)))
    return m(*pairs)


def fetch(port, *args):
    c = Client(port)
    c.call("HELLO", "3")
    c.sock.sendall(encode(*args))
    v = read(c)
    c.close()
    return v


def main():
    with Server("goblin") as g:
        c = Client(g.port)
        names = [n.decode() for n in c.call("COMMAND", "LIST")]
        c.close()
    top = [n for n in names if "|" not in n and not n.startswith("goblin.")]
    have = set(names)
    with Server("redis") as r:
        infos = fetch(r.port, "COMMAND", "INFO", *top)
        docs_map = fetch(r.port, "COMMAND", "DOCS", *top)
    # Commands of Redis 8 are written in redis8_meta.py (no Redis 8 binary at hand); those
    # newer than Redis 7.0 (WAITAOF: 7.2, hash-field expiry: 7.4) come from the first newer
    # Redis that has them.
    import redis8_meta
    redis8 = redis8_meta.entries(have)
    redis8_names = {info[0][1].decode() for info, _ in redis8}
    infos[1][:] = [e for n, e in zip(top, infos[1]) if n not in redis8_names]
    docs_map[1][:] = [(k, d) for k, d in docs_map[1] if k[1].decode() not in redis8_names]
    top = [n for n in top if n not in redis8_names]
    newer = [n for n, e in zip(top, infos[1]) if e[0] == "_"]
    infos[1][:] = [e for e in infos[1] if e[0] != "_"]
    for binary in NEWER_REDIS_BINS:
        if not newer:
            break
        with Server("redis", binary=binary) as r:
            found = fetch(r.port, "COMMAND", "INFO", *newer)[1]
            have_here = [n for n, e in zip(newer, found) if e[0] != "_"]
            infos[1].extend(e for e in found if e[0] != "_")
            if have_here:
                docs_map[1].extend(fetch(r.port, "COMMAND", "DOCS", *have_here)[1])
        newer = [n for n in newer if n not in have_here]
    if newer:
        raise SystemExit("no Redis has the metadata of %s" % ", ".join(newer))

    info_out = []
    for entry in infos[1]:
        name = entry[1][0][1].decode()
        subs = [s for s in entry[1][9][1] if s[1][0][1].decode() in have]
        entry[1][9] = ("*", subs)
        info_out.append((b(name), entry))
    docs_out = []
    for k, d in docs_map[1]:
        subs = mget(d, "subcommands")
        if subs is not None:
            mset(d, "subcommands", ("%", [(sk, sv) for sk, sv in subs[1] if sk[1].decode() in have]))
        docs_out.append((k, d))

    def find(pairs, name):
        return next(v for k, v in pairs if k[1] == name.encode())

    # Redis 7.2: ZRANK / ZREVRANK take WITHSCORE.
    for name in ("zrank", "zrevrank"):
        find(info_out, name)[1][1] = (":", -3)
        d = find(docs_out, name)
        mget(d, "arguments")[1].append(argument("withscore", "pure-token", token=b("WITHSCORE"), since=b("7.2.0"), flags=sset("optional")))
        mset(d, "history", arr(arr(b("7.2.0"), b("Added the optional `WITHSCORE` argument."))))

    # Redis 7.2: PFMERGE's source keys are optional.
    for a in mget(find(docs_out, "pfmerge"), "arguments")[1]:
        if mget(a, "name")[1] == b"sourcekey":
            mset(a, "flags", sset("optional", "multiple"))

    # Redis 7.2: CLIENT SETINFO and CLIENT NO-TOUCH.
    client_info = find(info_out, "client")
    client_info[1][9][1].extend([
        info("client|setinfo", 4, ["noscript", "loading", "stale"], 0, 0, 0, ["@slow", "@connection"], []),
        info("client|no-touch", 3, ["noscript", "loading", "stale"], 0, 0, 0, ["@slow", "@connection"], []),
    ])
    client_docs = mget(find(docs_out, "client"), "subcommands")
    client_docs[1].extend([
        (b("client|setinfo"), docs("Sets information specific to the client or connection.", "7.2.0", "connection", "O(1)", [
            argument("attr", "oneof", arguments=arr(argument("libname", "string", token=b("LIB-NAME")), argument("libver", "string", token=b("LIB-VER"))))])),
        (b("client|no-touch"), docs("Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0", "connection", "O(1)", [
            argument("enabled", "oneof", arguments=arr(argument("on", "pure-token", token=b("ON")), argument("off", "pure-token", token=b("OFF"))))])),
    ])

    # Redis 7.2: XINFO CONSUMERS's `inactive` and XINFO STREAM FULL's `active-time`.
    xinfo_docs = mget(find(docs_out, "xinfo"), "subcommands")[1]
    for sub, line in (("xinfo|consumers", "Added the `inactive` field."),
                      ("xinfo|stream", "Added the `active-time` field, and changed the meaning of `seen-time`.")):
        d = next(v for k, v in xinfo_docs if k[1] == sub.encode())
        history = mget(d, "history")
        entry = arr(b("7.2.0"), b(line))
        if history is None:
            at = next(i for i, (k, _) in enumerate(d[1]) if k[1] == b"arguments")
            d[1].insert(at, (b("history"), arr(entry)))
        else:
            history[1].append(entry)

    # Redis 7.2: the blocking commands and WAIT run in scripts (without blocking).
    for name in ("blmove", "blpop", "brpop", "brpoplpush", "bzpopmax", "bzpopmin", "wait"):
        flags = find(info_out, name)[1][2][1]
        flags[:] = [f for f in flags if f != ("+", "noscript")]

    # Redis 7.2: CLUSTER MYSHARDID.
    cluster_info = find(info_out, "cluster")
    cluster_info[1][9][1].append(
        info("cluster|myshardid", 2, ["loading", "stale"], 0, 0, 0, ["@slow"], []))
    cluster_docs = mget(find(docs_out, "cluster"), "subcommands")
    cluster_docs[1].append(
        (b("cluster|myshardid"), docs("Returns the shard ID of a node.", "7.2.0", "cluster", "O(1)")))

    for info_pair, docs_pair in redis8:
        info_out.append(info_pair)
        docs_out.append(docs_pair)
    redis8_meta.amend_docs(docs_out)

    # Goblin's own commands.
    info_out.append((b("goblin.memory"), info("goblin.memory", -1, ["readonly"], 0, 0, 0, ["@read", "@sortedset", "@slow"], [])))
    info_out.append((b("goblin.optimize"), info("goblin.optimize", -2, ["write"], 1, 1, 1, ["@write", "@sortedset", "@slow"], [key_spec(["RW", "UPDATE"])])))
    docs_out.append((b("goblin.memory"), docs(
        "Returns the bytes Goblin's engine holds for a sorted set, or a summary of the keyspace (sets, members, bytes, bytes_per_member).",
        "0.1.0", "sorted-set", "O(1) with a key, O(N) over the keys without one",
        [argument("key", "key", key_spec_index=(":", 0), flags=sset("optional"))])))
    docs_out.append((b("goblin.optimize"), docs(
        "Repacks a sorted set's member index and score index to a target load factor (default 0.97); 1.0 packs fully but makes lookups of missing members scan the whole table.",
        "0.1.0", "sorted-set", "O(N)",
        [argument("key", "key", key_spec_index=(":", 0)), argument("density", "double", flags=sset("optional"))])))

    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "info.resp3"), "wb") as f:
        f.write(write(("%", info_out)))
    with open(os.path.join(OUT, "docs.resp3"), "wb") as f:
        f.write(write(("%", docs_out)))
    print("wrote %d command infos and %d docs to %s" % (len(info_out), len(docs_out), OUT))


if __name__ == "__main__":
    main()
