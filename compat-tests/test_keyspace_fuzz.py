"""Generated command streams over the keyspace commands, sent to both servers, replies compared
(in the manner of fakeredis's hypothesis tests). Keys, members and databases come from small
pools so that commands collide; TTLs are long, so no reply depends on timing but the millisecond a
relative EXPIRE reached each server, which PEXPIRETIME shows (see `same_expiry`)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import describe, same

KEYS = st.sampled_from(["a", "b", "c"])
DBS = st.integers(min_value=0, max_value=2)
MEMBERS = st.sampled_from(["m1", "m2", "m3"])
SCORES = st.integers(min_value=-3, max_value=3)
TTL = st.integers(min_value=1000, max_value=5000)
EXPIRE_FLAGS = st.sampled_from([(), ("NX",), ("XX",), ("GT",), ("LT",), ("NX", "XX")])

ZADD = st.tuples(st.just("ZADD"), KEYS, SCORES, MEMBERS)
EXPIRE = st.builds(lambda k, t, f: ("EXPIRE", k, t, *f), KEYS, TTL, EXPIRE_FLAGS)

# ZADD and EXPIRE weigh more, so that keys exist and carry TTLs when the others run
# (sampled_from over a list with repeats: one_of would fold the repeats into one branch).
COMMANDS = st.sampled_from([
    ZADD, ZADD, ZADD, ZADD, ZADD, EXPIRE, EXPIRE, EXPIRE,
    st.tuples(st.just("ZREM"), KEYS, MEMBERS),
    st.tuples(st.just("DEL"), KEYS, KEYS),
    st.tuples(st.just("UNLINK"), KEYS),
    st.tuples(st.just("EXISTS"), KEYS, KEYS),
    st.tuples(st.just("TOUCH"), KEYS),
    st.tuples(st.just("TYPE"), KEYS),
    st.tuples(st.just("RENAME"), KEYS, KEYS),
    st.tuples(st.just("RENAMENX"), KEYS, KEYS),
    st.tuples(st.just("COPY"), KEYS, KEYS),
    st.tuples(st.just("COPY"), KEYS, KEYS, st.just("DB"), DBS, st.just("REPLACE")),
    st.tuples(st.just("MOVE"), KEYS, DBS),
    st.tuples(st.just("SELECT"), DBS),
    st.tuples(st.just("SWAPDB"), DBS, DBS),
    st.tuples(st.just("DBSIZE")),
    st.tuples(st.just("FLUSHDB")),
    st.builds(lambda k, t, f: ("PEXPIREAT", k, 4102444800000 + t, *f), KEYS, TTL, EXPIRE_FLAGS),
    st.tuples(st.just("PEXPIRETIME"), KEYS),
    st.tuples(st.just("PERSIST"), KEYS),
    st.tuples(st.just("ZCARD"), KEYS),
    st.tuples(st.just("ZRANGE"), KEYS, st.just(0), st.just(-1), st.just("WITHSCORES")),
    st.tuples(st.just("MULTI")),
    st.tuples(st.just("EXEC")),
    st.tuples(st.just("DISCARD")),
]).flatmap(lambda strategy: strategy)


def ttl_bucket(reply):
    """TTL replies: -2, -1, or "some seconds" (the exact second can differ by timing)."""
    return reply if isinstance(reply, int) and reply < 0 else "positive"


# Unix times in milliseconds are above this; two of them set by one relative EXPIRE differ
# only by the time between the two servers receiving it (TTLs differ by whole seconds).
UNIX_MS = 10**12
EXPIRY_SLACK_MS = 500


def same_expiry(r, g) -> bool:
    """Replies equal, where expiry times in milliseconds (PEXPIRETIME, alone or in an EXEC
    reply) may differ by less than EXPIRY_SLACK_MS."""
    if isinstance(r, int) and isinstance(g, int) and min(r, g) > UNIX_MS:
        return abs(r - g) < EXPIRY_SLACK_MS
    if isinstance(r, list) and isinstance(g, list):
        return len(r) == len(g) and all(same_expiry(x, y) for x, y in zip(r, g))
    return describe(r) == describe(g) if isinstance(r, BaseException) else same(r, g)


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(COMMANDS, min_size=1, max_size=50))
def test_keyspace_command_streams(both, stream):
    both("FLUSHALL")
    both("SELECT", 0)
    both.run("DISCARD")
    for cmd in stream:
        r, g = both.run(*cmd)
        assert same_expiry(r, g), f"command {cmd!r}\n  redis:  {describe(r)!r}\n  goblin: {describe(g)!r}"
    # The whole state, database by database.
    both("DISCARD")
    for db in range(3):
        both("SELECT", db)
        r, g = both.run("KEYS", "*")
        assert sorted(r) == sorted(g), db
        for key in sorted(g):
            both("ZRANGE", key, 0, -1, "WITHSCORES")
            r, g = both.run("TTL", key)
            assert ttl_bucket(r) == ttl_bucket(g), (db, key, r, g)
