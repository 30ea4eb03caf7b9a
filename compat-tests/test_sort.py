"""SORT and SORT_RO against Redis on sets and sorted sets: numeric and ALPHA sorts, ASC and
DESC, LIMIT windows, BY patterns over string keys (missing keys, `nosort`), GET patterns
(`#`, string keys, missing keys, several GETs), the "can't be converted into double" error,
hash fields (`key->field`) in BY and GET, lists as input, STORE, syntax and WRONGTYPE
errors, RESP3; ALPHA under a collation locale (locale-collate)."""

import random

import pytest
import redis

from harness import GOBLIN_BIN, REDIS_BIN
from test_persistence import Proc, procs  # noqa: F401 (the fixture)


@pytest.fixture
def data(both):
    both("SADD", "nums", 3, 1, 2, 10, -5, "2.5", "1e2")
    both("SADD", "words", "banana", "apple", "cherry", "Apple", "10", "9")
    both("ZADD", "z", 3, "c", 1, "a", 2, "b", 5, "e", 4, "d")
    for m, w in [("a", 30), ("b", 10), ("c", 50), ("d", 20)]:
        both("SET", f"w_{m}", w)
        both("SET", f"name_{m}", f"N{m.upper()}")
        both("SET", f"alpha_{m}", f"x{60 - w}")
    return both


@pytest.mark.parametrize("cmd", ["SORT", "SORT_RO"])
def test_numeric_and_alpha(data, cmd):
    b = data
    b(cmd, "nums")
    b(cmd, "nums", "DESC")
    b(cmd, "nums", "LIMIT", 1, 3)
    b(cmd, "nums", "desc", "limit", 0, 2)
    b(cmd, "words", "ALPHA")
    b(cmd, "words", "ALPHA", "DESC", "LIMIT", 2, 10)
    b.err(cmd, "words")
    b(cmd, "z")
    b(cmd, "z", "ALPHA", "DESC")
    b(cmd, "nokey")
    b(cmd, "nokey", "BY", "w_*", "GET", "#")


def test_limit_windows(data):
    for offset, count in [(0, 0), (0, -1), (-2, 3), (3, 100), (10, 2), (2, -5), (1, 1),
                          (9223372036854775807, 9223372036854775807)]:
        data("SORT", "nums", "LIMIT", offset, count)
        data("SORT", "z", "BY", "nosort", "LIMIT", offset, count)
        data("SORT", "z", "BY", "nosort", "DESC", "LIMIT", offset, count)


def test_by_and_get_patterns(data):
    b = data
    b("SORT", "z", "BY", "w_*")
    b("SORT", "z", "BY", "w_*", "DESC", "GET", "#", "GET", "name_*", "GET", "w_*")
    b("SORT", "z", "BY", "alpha_*", "ALPHA")
    b("SORT", "z", "BY", "alpha_*", "ALPHA", "DESC", "LIMIT", 0, 3)
    b("SORT", "z", "BY", "nosort")
    b("SORT", "z", "BY", "nosort", "DESC")
    b("SORT", "z", "BY", "nosort", "GET", "name_*", "GET", "missing_*")
    b("SORT", "z", "GET", "name_*")
    b("SORT", "z", "GET", "nostar")
    b("SORT", "z", "BY", "missing_*")
    b("SORT", "z", "GET", "#", "GET", "#")
    b("SORT", "z", "BY", "w_*->field")
    b("SET", "bad_a", "notanumber")
    b.err("SORT", "z", "BY", "bad_*")
    b("SADD", "ks", "a", "b")
    b("ZADD", "zz_a", 1, "x")
    b("SORT", "ks", "BY", "zz_*", "GET", "zz_*")
    b("SORT", "ks", "BY", "w_*", "GET", "w_*")


def test_hash_field_patterns(data):
    b = data
    for m, w in [("a", 3), ("b", 1), ("c", 2)]:
        b("HSET", f"user_{m}", "weight", w, "name", f"U{m}")
    b("SORT", "z", "BY", "user_*->weight", "GET", "#", "GET", "user_*->name")
    b("SORT", "z", "BY", "user_*->weight", "DESC", "GET", "user_*->missing")
    b("SORT", "z", "BY", "user_*->name", "ALPHA", "GET", "user_*->weight")
    b("SORT", "z", "GET", "w_*->weight")
    b("SORT", "z", "GET", "user_*")
    b.err("SORT", "user_a")


def test_lists_and_store(data):
    b = data
    b("RPUSH", "l", 3, 1, 2, 10, 1)
    b("SORT", "l")
    b("SORT", "l", "DESC", "LIMIT", 1, 2)
    b("SORT", "l", "BY", "nosort")
    b("SORT", "l", "BY", "nosort", "DESC")
    b("SORT", "l", "STORE", "dst")
    b("LRANGE", "dst", 0, -1)
    # 7.2 settles a small stored list as a listpack; Debian's 7.0 leaves a quicklist.
    assert b.goblin.execute_command("OBJECT", "ENCODING", "dst") == b"listpack"
    b("SORT", "z", "BY", "w_*", "GET", "#", "GET", "name_*", "GET", "missing_*", "STORE", "dst")
    b("LRANGE", "dst", 0, -1)
    b("SET", "dst", "x")
    b("EXPIRE", "dst", 100)
    b("SORT", "nums", "STORE", "dst")
    b("TTL", "dst")
    b("SORT", "words", "BY", "nosort", "STORE", "dst")
    b("LRANGE", "dst", 0, -1)
    b("SORT", "nokey", "STORE", "dst")
    b("EXISTS", "dst")
    b.err("SORT_RO", "l", "STORE", "dst")
    b("SORT", "l", "STORE", "dst", "STORE", "dst2")
    b("LRANGE", "dst2", 0, -1)


def test_number_texts(both):
    both("SADD", "n", "1", " 2", "3.5", "-inf", "0x10", "")
    both("SORT", "n")
    for bad in ("1 ", "nan", "abc", "1e400", "   "):
        both("SADD", "m", "1", bad)
        both.err("SORT", "m")
        both("DEL", "m")


def test_errors(data):
    b = data
    b.err("SORT", "nums", "LIMIT", 1)
    b.err("SORT", "nums", "LIMIT", "x", 1)
    b.err("SORT", "nums", "LIMIT", 1, "y")
    b.err("SORT", "nums", "BY")
    b.err("SORT", "nums", "GET")
    b.err("SORT", "nums", "bogus")
    b.err("SORT_RO", "nums", "STORE", "dst")
    b.err("SORT", "w_a")
    b.err("SORT", "w_a", "bogus")
    b.err("SORT")


def test_resp3(data):
    b3 = data.new(protocol=3)
    try:
        b3("SORT", "z", "BY", "w_*", "GET", "#", "GET", "name_*", "GET", "missing_*")
        b3("SORT", "nums")
    finally:
        b3.close()


def test_random_sorts_match_redis(both):
    rng = random.Random(16)
    members = [str(rng.randint(-1000, 1000)) for _ in range(300)]
    both("SADD", "s", *members)
    both("ZADD", "zs", *[x for m in members for x in (rng.random(), m)])
    for m in members[:150]:
        both("SET", f"by_{m}", rng.randint(0, 50))
    for _ in range(30):
        key = rng.choice(["s", "zs"])
        args = ["SORT", key]
        if rng.random() < 0.5:
            args += ["BY", rng.choice(["by_*", "nosort"])]
        if rng.random() < 0.3:
            args.append("ALPHA")
        if rng.random() < 0.5:
            args.append("DESC")
        if rng.random() < 0.5:
            args += ["LIMIT", rng.randint(-5, 300), rng.randint(-2, 50)]
        if rng.random() < 0.5:
            args += ["GET", "#", "GET", "by_*"]
        if key == "s" and "nosort" in args:
            continue  # a set's own order differs between 7.0's hashtable and 7.2's listpack
        if "ALPHA" in args and "by_*" in args:
            continue  # equal BY values leave the order to qsort
        both(*args)


WORDS = ["b", "A", "a", "B", "élan", "eclair", "Zebra", "zoo", "10", "9", "a-b", "ab", "a b"]


def test_alpha_sorts_by_the_environments_collation(procs, tmp_path, monkeypatch):
    """SORT ALPHA compares with strcoll under LC_COLLATE, which Redis takes from the
    environment at start (7.2's locale-collate is empty by default: the same), and so do
    Lua's string comparisons; SORT ... STORE compares bytes. Both servers run under
    LC_ALL=en_US.UTF-8 (scripts/test.sh compiles that locale). Before, Goblin never set
    the locale and compared bytes everywhere."""
    monkeypatch.setenv("LC_ALL", "en_US.UTF-8")
    got = {}
    for kind, binary in (("redis", REDIS_BIN), ("goblin", GOBLIN_BIN)):
        workdir = tmp_path / kind
        workdir.mkdir()
        p = Proc(binary, workdir, "--save", "", name=kind)
        procs.append(p)
        c = p.start().client()
        c.rpush("l", *WORDS)
        for i, word in enumerate(WORDS):
            c.set(f"w_{word}", WORDS[-1 - i])
        got[kind] = (
            c.sort("l", alpha=True),
            c.sort("l", alpha=True, desc=True, start=2, num=5),
            c.sort("l", by="w_*", alpha=True),
            c.sort("l", by="nokey_*", alpha=True),
            c.sort("l", alpha=True, store="dst"),
            c.lrange("dst", 0, -1),
            c.eval("return {tostring('a' < 'B'), tostring('é' < 'f')}", 0),
        )
    assert got["goblin"] == got["redis"]
    in_bytes = sorted(w.encode() for w in WORDS)
    assert got["goblin"][0] != in_bytes, "the locale orders them otherwise"
    assert got["goblin"][5] == in_bytes, "STORE orders by bytes"


def test_locale_collate_directive(procs, tmp_path):
    """locale-collate (Redis 7.2, which Debian's 7.0 lacks): CONFIG SET changes the
    collation at once, an unknown locale is refused in Redis 7.2's words and changes
    nothing, CONFIG GET shows it, and one given at start that does not exist stops the
    server with Redis's line."""
    p = Proc(GOBLIN_BIN, tmp_path, "--save", "", "--locale-collate", "en_US.UTF-8",
             name="goblin")
    procs.append(p)
    c = p.start().client()
    c.rpush("l", *WORDS)
    assert c.config_get("locale-collate") == {"locale-collate": "en_US.UTF-8"}
    localized = c.sort("l", alpha=True)
    c.config_set("locale-collate", "C")
    assert c.sort("l", alpha=True) == sorted(w.encode() for w in WORDS)
    with pytest.raises(redis.ResponseError) as refused:
        c.config_set("locale-collate", "xx_NOWHERE.UTF-8")
    assert str(refused.value) == ("CONFIG SET failed (possibly related to argument "
                                  "'locale-collate') - Invalid locale name")
    assert c.config_get("locale-collate") == {"locale-collate": "C"}
    c.config_set("locale-collate", "en_US.UTF-8")
    assert c.sort("l", alpha=True) == localized != sorted(w.encode() for w in WORDS)
    bad = Proc(GOBLIN_BIN, tmp_path, "--locale-collate", "xx_NOWHERE.UTF-8", name="bad")
    procs.append(bad)
    bad.start(expect_up=False)
    assert bad.proc.wait(10) == 1
    assert "Failed to configure LOCALE for invalid locale name." in bad.output()
