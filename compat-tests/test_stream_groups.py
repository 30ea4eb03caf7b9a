"""XGROUP against Redis over RESP2 and RESP3: CREATE (an id, `$`, MKSTREAM, ENTRIESREAD),
SETID (`$`, `-`/`+`, ENTRIESREAD), DESTROY, CREATECONSUMER, DELCONSUMER, HELP, every error
in Redis's order (options, WRONGTYPE, missing key, NOGROUP, argument counts); then the
groups Goblin built, saved to a file and loaded by Redis 7.0, answer XINFO GROUPS and the
consumer names of XINFO CONSUMERS as Redis's own groups from the same commands."""

import pytest

from test_persistence import goblin, procs, redis_server  # noqa: F401 (procs: the fixture)

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def x(request):
    return request.getfixturevalue("both3" if request.param == 3 else "both")


GROUP_OPS = [
    ("XADD", "s", "1-1", "f", "v"),
    ("XADD", "s", "2-2", "f", "v"),
    ("XGROUP", "CREATE", "s", "g1", "0"),
    ("XGROUP", "CREATE", "s", "g2", "$"),
    ("XGROUP", "CREATE", "s", "g3", "1-1", "ENTRIESREAD", "1"),
    ("XGROUP", "create", "s", "g4", "1", "entriesread", "-1"),
    ("XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"),
    ("XGROUP", "CREATE", "new2", "g", "5-5", "MKSTREAM", "ENTRIESREAD", "3"),
    ("XGROUP", "CREATECONSUMER", "s", "g1", "alice"),
    ("XGROUP", "CREATECONSUMER", "s", "g1", "alice"),
    ("XGROUP", "CREATECONSUMER", "s", "g1", "bob"),
    ("XGROUP", "CREATECONSUMER", "s", "g2", "carol"),
    ("XGROUP", "DELCONSUMER", "s", "g1", "bob"),
    ("XGROUP", "DELCONSUMER", "s", "g1", "nobody"),
    ("XGROUP", "SETID", "s", "g2", "1-1"),
    ("XGROUP", "SETID", "s", "g3", "$", "ENTRIESREAD", "2"),
    ("XGROUP", "SETID", "s", "g4", "-"),
    ("XGROUP", "SETID", "s", "g1", "+"),
    ("XGROUP", "SETID", "s", "g1", "1"),
    ("XGROUP", "CREATE", "s", "gone", "0"),
    ("XGROUP", "DESTROY", "s", "gone"),
    ("XGROUP", "DESTROY", "s", "gone"),
]


def test_xgroup_replies_and_errors(x):
    for op in GROUP_OPS:
        x(*op)
    x("SET", "str", "v")
    for bad in [
        ("XGROUP", "CREATE", "s", "g1", "0"),
        ("XGROUP", "CREATE", "nokey", "g", "0"),
        ("XGROUP", "CREATE", "str", "g", "0"),
        ("XGROUP", "CREATE", "str", "g", "0", "MKSTREAM"),
        ("XGROUP", "CREATE", "s", "x", "bad-id"),
        ("XGROUP", "CREATE", "s", "x", "-"),
        ("XGROUP", "CREATE", "s", "x", "0", "ENTRIESREAD", "-2"),
        ("XGROUP", "CREATE", "s", "x", "0", "ENTRIESREAD", "x"),
        ("XGROUP", "CREATE", "s", "x", "0", "ENTRIESREAD"),
        ("XGROUP", "CREATE", "s", "x", "0", "FOO"),
        ("XGROUP", "CREATE", "s", "x", "0", "MKSTREAM", "MKSTREAM", "MKSTREAM", "MKSTREAM"),
        ("XGROUP", "CREATE", "s", "x"),
        ("XGROUP", "SETID", "s", "nogroup", "0"),
        ("XGROUP", "SETID", "nokey", "g", "0"),
        ("XGROUP", "SETID", "s", "g1", "bad"),
        ("XGROUP", "SETID", "s", "g1", "0", "MKSTREAM"),
        ("XGROUP", "SETID", "s", "g1", "0", "ENTRIESREAD", "1", "ENTRIESREAD", "2"),
        ("XGROUP", "SETID", "s", "g1", "0", "ENTRIESREAD", "1", "x"),
        ("XGROUP", "DESTROY", "nokey", "g"),
        ("XGROUP", "DESTROY", "str", "g"),
        ("XGROUP", "DESTROY", "s", "g1", "extra"),
        ("XGROUP", "DESTROY", "s"),
        ("XGROUP", "CREATECONSUMER", "s", "nogroup", "c"),
        ("XGROUP", "CREATECONSUMER", "nokey", "g", "c"),
        ("XGROUP", "CREATECONSUMER", "s", "g1", "c", "extra"),
        ("XGROUP", "DELCONSUMER", "s", "nogroup", "c"),
        ("XGROUP", "DELCONSUMER", "s", "g1"),
        ("XGROUP", "FOO", "s", "g1"),
        ("XGROUP", "FOO"),
        ("XGROUP", "HELP", "extra"),
        ("XGROUP",),
    ]:
        x(*bad)
    for help in (("XGROUP", "HELP"), ("xgroup", "help")):
        # Redis 7.0 ends with "Prints this help.", 7.2 (and Goblin) "Print this help."
        r, g = x.run(*help)
        assert r[:-1] == g[:-1] and g[-1] == b"    Print this help.", (r, g)
    # Subcommands one by one: Redis lists a container's subcommands in its dict's order.
    subs = ("create", "setid", "destroy", "createconsumer", "delconsumer", "help")
    x("COMMAND", "INFO", *[f"xgroup|{s}" for s in subs])
    x("COMMAND", "GETKEYS", "XGROUP", "CREATE", "s", "g", "$")
    x("TYPE", "new")
    x("XLEN", "new")
    x("XRANGE", "new2", "-", "+")


def test_groups_built_by_goblin_load_in_redis(procs, tmp_path):
    seen = {}
    for kind in ("redis", "goblin"):
        d = tmp_path / kind
        d.mkdir()
        if kind == "redis":
            s = redis_server(procs, d, "--save", "")
        else:
            s = goblin(procs, d, "--save", "")
        c = s.client()
        for op in GROUP_OPS:
            c.execute_command(*op)
        c.execute_command("SAVE")
        s.stop()
        r = redis_server(procs, d, "--save", "")
        rc = r.client()
        seen[kind] = {}
        for k in ("s", "new", "new2"):
            groups = rc.xinfo_groups(k)
            consumers = [sorted(c["name"] for c in rc.xinfo_consumers(k, g["name"])) for g in groups]
            seen[kind][k] = (groups, consumers)
        r.stop()
    assert seen["goblin"] == seen["redis"]


def test_xack_on_pending_entries_from_a_redis_dump(x):
    """Pending entries come from Redis's XREADGROUP through DUMP / RESTORE (Goblin has no
    XREADGROUP yet); XACK's replies, then DELCONSUMER's pending counts, must agree."""
    r = x.redis
    for i in range(1, 11):
        r.execute_command("XADD", "src", f"{i}-0", "f", i)
    r.execute_command("XGROUP", "CREATE", "src", "g", "0")
    r.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", "4", "STREAMS", "src", ">")
    r.execute_command("XREADGROUP", "GROUP", "g", "bob", "COUNT", "3", "STREAMS", "src", ">")
    payload = r.dump("src")
    for c in x.clients():
        c.restore("s", 0, payload)
    x("SET", "str", "v")
    x("XACK", "s", "g", "1-0", "1-0", "5-0", "9-0", "100-0")
    x("XACK", "s", "g", "1")
    x("XACK", "s", "nogroup", "2-0")
    x("XACK", "nokey", "g", "2-0")
    x("XACK", "nokey", "g", "bad")
    x("XACK", "s", "nogroup", "bad")
    x("XACK", "s", "g", "2-0", "bad")
    x("XACK", "s", "g", "-")
    x("XACK", "str", "g", "1-0")
    x("XACK", "s", "g")
    x("XACK", "s", "g", "2-0")
    x("XGROUP", "DELCONSUMER", "s", "g", "alice")
    x("XGROUP", "DELCONSUMER", "s", "g", "bob")
    x("COMMAND", "INFO", "XACK")
    x("COMMAND", "DOCS", "XACK")
