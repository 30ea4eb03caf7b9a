"""COMMAND INFO / COMMAND DOCS entries of the Redis 8 commands Goblin has, for
scripts/gen_command_meta.py: no Redis 8 binary is at hand, so they are written here from
Redis's command pages and its src/commands/*.json (arity, flags, ACL categories, key specs,
arguments) and turned into the trees Redis 8 serves, as Redis derives them: implicit ACL
categories from the flags, flags and key-spec flags in Redis's bit order, legacy key range
from an index/range key spec (0 0 0 and `movablekeys` for a keynum one), `display_text` on
every argument but blocks and oneofs.

Redis's command metadata is Copyright Redis Ltd. and contributors."""

from gen_command_meta import arr, b, m, sset

FLAG_ORDER = ["write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
              "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
              "may_replicate", "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys",
              "allow_busy"]
ACL_ORDER = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
             "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
             "dangerous", "connection", "transaction", "scripting"]
KEY_FLAG_ORDER = ["RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
                  "incomplete", "variable_flags"]


def arg(name, type_, token=None, optional=False, multiple=False, args=None, key=None, since=None):
    """One argument, in the shape of Redis's command JSON."""
    return dict(name=name, type=type_, token=token, optional=optional, multiple=multiple,
                args=args, key=key, since=since)


def index_range(pos, lastkey=0, flags=(), notes=None):
    """A key spec: begin at index `pos`, a range of keys up to `lastkey`."""
    return dict(flags=list(flags), notes=notes, begin=("index", pos), find=("range", lastkey, 1, 0))


def index_keynum(pos, flags=(), notes=None, step=1):
    """A key spec: the key count at index `pos`, the keys right after it, `step` apart."""
    return dict(flags=list(flags), notes=notes, begin=("index", pos), find=("keynum", 0, 1, step))


def ordered(names, order):
    return [n for n in order if n in names]


def info_entry(c):
    """The COMMAND INFO entry of command spec `c`."""
    flags = set(c["flags"])
    # A keynum key spec, or a getkeys function (`movable`), makes the keys movable; the
    # legacy range comes from an index/range spec only when there is no keynum one.
    keynum = any(s["find"][0] != "range" for s in c["key_specs"])
    if keynum or c.get("movable"):
        flags.add("movablekeys")
    acl = set(c["acl"])
    acl |= {"write"} if "write" in flags else set()
    acl |= {"read"} if "readonly" in flags else set()
    acl |= {"fast"} if "fast" in flags else {"slow"}
    acl |= {"blocking"} if "blocking" in flags else set()
    acl |= {"admin", "dangerous"} if "admin" in flags else set()
    specs = []
    for s in c["key_specs"]:
        pairs = [("notes", b(s["notes"]))] if s["notes"] else []
        pairs.append(("flags", sset(*ordered(s["flags"], KEY_FLAG_ORDER))))
        pairs.append(("begin_search", m(("type", b("index")), ("spec", m(("index", (":", s["begin"][1])))))))
        if s["find"][0] == "range":
            _, last, step, limit = s["find"]
            spec = m(("lastkey", (":", last)), ("keystep", (":", step)), ("limit", (":", limit)))
        else:
            _, idx, first, step = s["find"]
            spec = m(("keynumidx", (":", idx)), ("firstkey", (":", first)), ("keystep", (":", step)))
        pairs.append(("find_keys", m(("type", b(s["find"][0])), ("spec", spec))))
        specs.append(m(*pairs))
    first = last = step = 0
    if not keynum and c["key_specs"]:
        # As Redis's populateCommandLegacyRangeSpec: range specs of one key each that
        # follow one another make one range (LMOVEM's source and destination: 1 2 1).
        first = last = c["key_specs"][0]["begin"][1]
        step = 1
        for s in c["key_specs"][1:]:
            if s["find"][1] == 0 and s["begin"][1] == last + 1:
                last += 1
    return arr(b(c["name"]), (":", c["arity"]), sset(*ordered(flags, FLAG_ORDER)), (":", first),
               (":", last), (":", step), sset(*["@" + a for a in ordered(acl, ACL_ORDER)]),
               ("~", []), ("~", specs), _subcommand_infos(c))


def _subcommand_infos(c):
    """The subcommands of a container's COMMAND INFO entry; a subcommand's own is an empty
    set, as stored for Redis's (an empty array for the other commands)."""
    if "|" in c["name"]:
        return ("~", [])
    return arr(*[info_entry(s) for s in c.get("subcommands", [])])


def doc_argument(a):
    pairs = [("name", b(a["name"])), ("type", b(a["type"]))]
    if a["type"] not in ("oneof", "block"):
        pairs.append(("display_text", b(a["name"])))
    if a["key"] is not None:
        pairs.append(("key_spec_index", (":", a["key"])))
    if a["token"]:
        pairs.append(("token", b(a["token"])))
    if a["since"]:
        pairs.append(("since", b(a["since"])))
    flags = [f for f, on in (("optional", a["optional"]), ("multiple", a["multiple"])) if on]
    if flags:
        pairs.append(("flags", sset(*flags)))
    if a["args"]:
        pairs.append(("arguments", arr(*[doc_argument(x) for x in a["args"]])))
    return m(*pairs)


def docs_entry(c):
    """The COMMAND DOCS entry of command spec `c`."""
    pairs = [("summary", b(c["summary"])), ("since", b(c["since"])), ("group", b(c["group"])),
             ("complexity", b(c["complexity"]))]
    if c.get("history"):
        pairs.append(("history", ("~", [arr(b(v), b(t)) for v, t in c["history"]])))
    if c["arguments"]:
        pairs.append(("arguments", arr(*[doc_argument(a) for a in c["arguments"]])))
    if c.get("subcommands"):
        pairs.append(("subcommands", m(*[(s["name"], docs_entry(s)) for s in c["subcommands"]])))
    return m(*pairs)


def _expiration(last):
    """HGETEX's and HSETEX's EX / PX / EXAT / PXAT and a last pure token."""
    return arg("expiration", "oneof", optional=True, args=[
        arg("seconds", "integer", token="EX"),
        arg("milliseconds", "integer", token="PX"),
        arg("unix-time-seconds", "unix-time", token="EXAT"),
        arg("unix-time-milliseconds", "unix-time", token="PXAT"),
        arg(last, "pure-token", token=last.upper()),
    ])


def _fields(*inner):
    return arg("fields", "block", token="FIELDS", args=[arg("numfields", "integer"), *inner])


KEY = arg("key", "key", key=0)


def _lmovem(name, arity, flags, summary, timeout=False):
    """LMOVEM's or BLMOVEM's entry (BLMOVEM: a timeout after the two ends)."""
    def end(n):
        return arg(n, "oneof", args=[arg("left", "pure-token", token="LEFT"),
                                     arg("right", "pure-token", token="RIGHT")])
    how_many = arg("how-many", "block", optional=True, args=[
        arg("selector", "oneof", args=[arg("count", "integer", token="COUNT"),
                                       arg("exactly", "integer", token="EXACTLY")]),
        arg("ordering", "oneof", args=[arg("obo", "pure-token", token="OBO"),
                                       arg("bulk", "pure-token", token="BULK")])])
    return dict(name=name, arity=arity, flags=flags, acl=["list"], group="list", since="8.10.0",
                summary=summary, complexity="O(N) where N is the number of elements moved.",
                key_specs=[index_range(1, flags=["RW", "access", "delete"]), index_range(2, flags=["RW", "insert"])],
                arguments=[arg("source", "key", key=0), arg("destination", "key", key=1),
                           end("wherefrom"), end("whereto"),
                           *([arg("timeout", "double")] if timeout else []), how_many])

def _hotkeys_sub(name, arity, summary, complexity, arguments=(), flags=("admin", "noscript"), since="8.6.0"):
    """A HOTKEYS subcommand (no keys; admin and noscript but HELP's)."""
    return dict(name="hotkeys|" + name, arity=arity, flags=list(flags), acl=[], group="server",
                since=since, summary=summary, complexity=complexity, key_specs=[],
                arguments=list(arguments))


HOTKEYS = dict(
    name="hotkeys", arity=-2, flags=[], acl=[], group="server", since="8.6.0",
    summary="A container for hotkeys tracking commands.", complexity="Depends on subcommand.",
    key_specs=[], arguments=[],
    subcommands=[
        _hotkeys_sub("start", -2, "Starts hotkeys tracking.", "O(1)", [
            arg("metrics", "block", token="METRICS", args=[
                arg("count", "integer"),
                arg("cpu", "pure-token", token="CPU", optional=True),
                arg("net", "pure-token", token="NET", optional=True)]),
            arg("k", "integer", token="COUNT", optional=True),
            arg("seconds", "integer", token="DURATION", optional=True),
            arg("ratio", "integer", token="SAMPLE", optional=True),
            arg("slots", "block", token="SLOTS", optional=True, args=[
                arg("count", "integer"), arg("slot", "integer", multiple=True)])]),
        _hotkeys_sub("stop", 2, "Stops hotkeys tracking.", "O(1)"),
        _hotkeys_sub("get", 2, "Returns lists of top K hotkeys depending on metrics chosen in HOTKEYS START command.",
                     "O(K) where K is the number of hotkeys returned."),
        _hotkeys_sub("reset", 2, "Release the resources used for hotkey tracking.", "O(1)"),
        _hotkeys_sub("help", 2, "Return helpful text about HOTKEYS command parameters.", "O(1)",
                     flags=("loading", "stale"), since="8.6.1"),
    ])

COMMANDS = [
    dict(name="hgetex", arity=-5, flags=["write", "fast"], acl=["hash"], group="hash", since="8.0.0",
         summary="Get the value of one or more fields of a given hash key, and optionally set their expiration.",
         complexity="O(N) where N is the number of specified fields",
         key_specs=[index_range(1, flags=["RW", "access", "update"], notes="RW and UPDATE because it changes the TTL")],
         arguments=[KEY, _expiration("persist"), _fields(arg("field", "string", multiple=True))]),
    dict(name="hsetex", arity=-6, flags=["write", "denyoom", "fast"], acl=["hash"], group="hash", since="8.0.0",
         summary="Set the value of one or more fields of a given hash key, and optionally set their expiration.",
         complexity="O(N) where N is the number of fields being set.",
         key_specs=[index_range(1, flags=["RW", "update"])],
         arguments=[KEY,
                    arg("condition", "oneof", optional=True, args=[arg("fnx", "pure-token", token="FNX"),
                                                                    arg("fxx", "pure-token", token="FXX")]),
                    _expiration("keepttl"),
                    _fields(arg("data", "block", multiple=True, args=[arg("field", "string"), arg("value", "string")]))]),
    dict(name="hgetdel", arity=-5, flags=["write", "fast"], acl=["hash"], group="hash", since="8.0.0",
         summary="Returns the value of a field and deletes it from the hash.",
         complexity="O(N) where N is the number of specified fields",
         key_specs=[index_range(1, flags=["RW", "access", "delete"])],
         arguments=[KEY, _fields(arg("field", "string", multiple=True))]),
    dict(name="msetex", arity=-4, flags=["write", "denyoom"], acl=["string"], group="string", since="8.4.0",
         summary="Atomically sets multiple string keys with an optional shared expiration in a single operation.",
         complexity="O(N) where N is the number of keys to set.",
         key_specs=[index_keynum(1, flags=["OW", "update"], step=2)],
         arguments=[arg("numkeys", "integer"),
                    arg("data", "block", multiple=True, args=[arg("key", "key", key=0), arg("value", "string")]),
                    arg("condition", "oneof", optional=True, args=[arg("nx", "pure-token", token="NX"),
                                                                    arg("xx", "pure-token", token="XX")]),
                    _expiration("keepttl")]),
    dict(name="sdiffcard", arity=-3, flags=["readonly"], acl=["set"], group="set", since="8.10.0",
         summary="Returns the number of members of the difference between the first set and all successive sets.",
         complexity="O(N) where N is the total number of elements in all given sets.",
         key_specs=[index_keynum(1, flags=["RO", "access"])],
         arguments=[arg("numkeys", "integer"), arg("key", "key", key=0, multiple=True),
                    arg("limit", "integer", token="LIMIT", optional=True)]),
    dict(name="sunioncard", arity=-3, flags=["readonly"], acl=["set"], group="set", since="8.10.0",
         summary="Returns the number of members of the union of multiple sets.",
         complexity="O(N) where N is the total number of elements in all given sets.",
         key_specs=[index_keynum(1, flags=["RO", "access"])],
         arguments=[arg("numkeys", "integer"), arg("key", "key", key=0, multiple=True),
                    arg("approx", "pure-token", token="APPROX", optional=True),
                    arg("limit", "integer", token="LIMIT", optional=True)]),
    _lmovem("lmovem", -5, ["write", "denyoom"],
            "Moves up to (or exactly) a number of elements from one list to another and returns them. "
            "Deletes the source list if it becomes empty."),
    _lmovem("blmovem", -6, ["write", "denyoom", "blocking"],
            "Moves up to (or exactly) a number of elements from one list to another and returns them. "
            "Blocks until the elements are available otherwise. Deletes the source list if it becomes empty.",
            timeout=True),
    dict(name="increx", arity=-2, flags=["write", "denyoom", "fast"], acl=["string"], group="string",
         since="8.8.0",
         summary="Increments the numeric value of a key by a number and sets its expiration time. "
                 "Uses 0 as initial value if the key doesn't exist.",
         complexity="O(1)",
         key_specs=[index_range(1, flags=["RW", "access", "update"])],
         arguments=[KEY,
                    arg("increment", "oneof", optional=True, args=[arg("float", "double", token="BYFLOAT"),
                                                                    arg("integer", "integer", token="BYINT")]),
                    arg("saturate", "pure-token", token="SATURATE", optional=True),
                    arg("lowerbound", "string", token="LBOUND", optional=True),
                    arg("upperbound", "string", token="UBOUND", optional=True),
                    _expiration("persist"),
                    arg("enx", "pure-token", token="ENX", optional=True)]),
    dict(name="digest", arity=2, flags=["readonly", "fast"], acl=["string"], group="string", since="8.4.0",
         summary="Returns the XXH3 hash of a string value.",
         complexity="O(N) where N is the length of the string value.",
         key_specs=[index_range(1, flags=["RO", "access"])], arguments=[KEY]),
    dict(name="delex", arity=-2, flags=["write", "fast"], acl=["string"], group="string", since="8.4.0",
         movable=True,
         summary="Conditionally removes the specified key based on value or digest comparison.",
         complexity="O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.",
         key_specs=[index_range(1, flags=["RW", "delete", "variable_flags"])],
         arguments=[KEY, arg("condition", "oneof", optional=True, args=[
             arg("ifeq-value", "string", token="IFEQ"), arg("ifne-value", "string", token="IFNE"),
             arg("ifdeq-digest", "string", token="IFDEQ"), arg("ifdne-digest", "string", token="IFDNE")])]),
    HOTKEYS,
]


def _plain(name, type_, token, since):
    """An argument in the style of Redis 7.0's COMMAND DOCS (no display_text), for the
    commands whose stored entry is 7.0's."""
    return m(("name", b(name)), ("type", b(type_)), ("token", b(token)), ("since", b(since)))


def amend_docs(docs):
    """Adds Redis 8's options to the stored COMMAND DOCS of commands Redis 7.0 has
    (`docs`: the (name, entry) pairs): SET's IFEQ / IFNE / IFDEQ / IFDNE (8.4), AGGREGATE
    COUNT of ZUNION / ZINTER / ZUNIONSTORE / ZINTERSTORE (8.8). (BITOP's DIFF / DIFF1 /
    ANDOR / ONE need nothing: 7.0 documents its operation as a string.)"""
    from gen_command_meta import mget
    for name in (b"zunion", b"zinter", b"zunionstore", b"zinterstore"):
        zentry = next(d for k, d in docs if k[1] == name)
        aggregate = next(a for a in mget(zentry, "arguments")[1] if mget(a, "name")[1] == b"aggregate")
        tokens = mget(aggregate, "arguments")[1]
        if len(tokens) == 3:
            tokens.append(_plain("count", "pure-token", "COUNT", "8.8.0"))
    entry = next(d for k, d in docs if k[1] == b"set")
    history = mget(entry, "history")[1]
    if not any(h[1][0][1] == b"8.4.0" for h in history):
        history.append(arr(b("8.4.0"), b("Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options.")))
    condition = next(a for a in mget(entry, "arguments")[1] if mget(a, "name")[1] == b"condition")
    options = mget(condition, "arguments")[1]
    if len(options) == 2:
        options.extend([_plain("ifeq-value", "string", "IFEQ", "8.4.0"),
                        _plain("ifne-value", "string", "IFNE", "8.4.0"),
                        _plain("ifdeq-digest", "string", "IFDEQ", "8.4.0"),
                        _plain("ifdne-digest", "string", "IFDNE", "8.4.0")])


def entries(have):
    """(info, docs) pairs, keyed by name, of the commands here that Goblin has (`have`)."""
    return [((b(c["name"]), info_entry(c)), (b(c["name"]), docs_entry(c)))
            for c in COMMANDS if c["name"] in have]


def parse(buf, pos=0):
    """The typed tree (as gen_command_meta's `read`) of the RESP3 value at `buf[pos:]`, and
    where it ends."""
    end = buf.index(b"\r\n", pos)
    tag, rest, pos = buf[pos:pos + 1].decode(), buf[pos + 1:end], end + 2
    if tag in "+-":
        return (tag, rest.decode()), pos
    if tag == ":":
        return (tag, int(rest)), pos
    if tag == "$":
        n = int(rest)
        return (tag, buf[pos:pos + n]), pos + n + 2
    if tag in "*~":
        items = []
        for _ in range(int(rest)):
            item, pos = parse(buf, pos)
            items.append(item)
        return (tag, items), pos
    if tag == "%":
        pairs = []
        for _ in range(int(rest)):
            k, pos = parse(buf, pos)
            v, pos = parse(buf, pos)
            pairs.append((k, v))
        return (tag, pairs), pos
    raise ValueError(tag)


def splice(path, entries, amend=None):
    """Puts `entries` ((name, tree) pairs) into the stored map at `path`: in place of an
    entry of the same name, else at the end before Goblin's own commands; then `amend`s
    the pairs."""
    from gen_command_meta import write
    with open(path, "rb") as f:
        tree, _ = parse(f.read())
    pairs = tree[1]
    if amend:
        amend(pairs)
    for (key, value) in entries:
        at = next((i for i, (k, _) in enumerate(pairs) if k[1] == key[1]), None)
        if at is not None:
            pairs[at] = (key, value)
        else:
            at = next((i for i, (k, _) in enumerate(pairs) if k[1].startswith(b"goblin.")), len(pairs))
            pairs.insert(at, (key, value))
    with open(path, "wb") as f:
        f.write(write(tree))


def main():
    """Updates server/src/commands/meta/{info,docs}.resp3 with the entries here, leaving
    the others as stored (a full regeneration with gen_command_meta.py reorders Redis's
    subcommands, which Redis keeps in a hash table)."""
    import os
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server", "src", "commands", "meta")
    names = {c["name"] for c in COMMANDS}
    pairs = entries(names)
    splice(os.path.join(out, "info.resp3"), [i for i, _ in pairs])
    splice(os.path.join(out, "docs.resp3"), [d for _, d in pairs], amend_docs)
    print("spliced %d commands into %s" % (len(pairs), out))


if __name__ == "__main__":
    main()
