"""Geo commands against Redis: GEOADD (NX XX CH and the coordinate errors), GEOPOS, GEODIST
(every unit), GEOHASH, GEOSEARCH / GEOSEARCHSTORE (every option and every option-combination
error), GEORADIUS / GEORADIUSBYMEMBER with STORE / STOREDIST and their _RO forms, RESP2 and
RESP3 shapes, geo keys as sorted sets (ZRANGE WITHSCORES), and random searches compared with
Redis. Distances and coordinates are compared by value where Redis 7.0's printing differs
from 7.2's; the bytes 7.2 prints are pinned on Goblin alone."""

import random

import pytest

SICILY = ("13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
MORE = ("12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2",
        "13.583333", "37.316667", "Agrigento")


@pytest.fixture
def sicily(both):
    both("GEOADD", "Sicily", *SICILY)
    both("GEOADD", "Sicily", *MORE)
    return both


def test_geoadd_options_and_errors(both):
    assert both("GEOADD", "k", *SICILY) == 2
    assert both("GEOADD", "k", "13.361389", "38.115556", "Palermo") == 0
    assert both("GEOADD", "k", "CH", "13.5", "38.1", "Palermo", "1", "2", "new") == 2
    assert both("GEOADD", "k", "XX", "CH", "13.6", "38.1", "Palermo", "1", "2", "x") == 1
    assert both("GEOADD", "k", "NX", "13.7", "38.1", "Palermo", "1", "2", "y") == 1
    assert both("GEOADD", "k", "nx", "ch", "13.7", "38.1", "Palermo", "1", "3", "z") == 1
    both("ZRANGE", "k", 0, -1, "WITHSCORES")
    both.err("GEOADD", "k", "NX", "XX", "1", "2", "m")
    both.err("GEOADD", "k", "1", "2", "m", "3")
    both.err("GEOADD", "k", "GT", "1", "2", "m")
    both.err("GEOADD", "k", "NX", "CH")
    both.err("GEOADD", "k", "181", "2", "m")
    both.err("GEOADD", "k", "10", "85.06", "m")
    both.err("GEOADD", "k", "-180.5", "-85.2", "m")
    both.err("GEOADD", "k", "x", "2", "m")
    both.err("GEOADD", "k", "1", "nan", "m")
    both.err("GEOADD", "k", "1", "inf", "m")
    both.err("GEOADD", "k", "1", "2")
    assert both("GEOADD", "k", "180", "85.05112878", "corner", "-180", "-85.05112878", "c2") == 2
    both("GEOPOS", "k", "corner", "c2")
    both("SET", "s", "v")
    both.err("GEOADD", "s", "1", "2", "m")
    assert both("EXISTS", "k2") == 0
    both.err("GEOADD", "k2", "1", "2", "m", "500", "2", "n")
    assert both("EXISTS", "k2") == 0, "a bad point adds nothing"


def test_geopos_geohash_geodist(sicily):
    b = sicily
    b("GEOPOS", "Sicily", "Palermo", "Catania", "nope", "edge2")
    b("GEOPOS", "nokey", "a", "b")
    b("GEOPOS", "Sicily")
    b("GEOHASH", "Sicily", "Palermo", "Catania", "nope", "edge1", "Agrigento")
    b("GEOHASH", "nokey", "a")
    for unit in ("m", "km", "ft", "mi", "KM", "Mi"):
        b("GEODIST", "Sicily", "Palermo", "Catania", unit)
    b("GEODIST", "Sicily", "Palermo", "Catania")
    b("GEODIST", "Sicily", "Palermo", "Palermo")
    b("GEODIST", "Sicily", "Palermo", "nope")
    b("GEODIST", "nokey", "Palermo", "nope")
    b.err("GEODIST", "Sicily", "Palermo", "Catania", "yd")
    b.err("GEODIST", "Sicily", "Palermo", "Catania", "km", "x")
    b.err("GEODIST", "nokey", "a", "b", "parsec")
    b("SET", "s", "v")
    for cmd in (("GEOPOS", "s", "a"), ("GEOHASH", "s", "a"), ("GEODIST", "s", "a", "b"),
                ("GEOSEARCH", "s", "FROMLONLAT", 1, 2, "BYRADIUS", 1, "m"),
                ("GEORADIUS", "s", 1, 2, 1, "m"), ("GEORADIUSBYMEMBER", "s", "a", 1, "m")):
        b.err(*cmd)


def test_geo_keys_are_sorted_sets(sicily):
    b = sicily
    b("ZRANGE", "Sicily", 0, -1, "WITHSCORES")
    b("ZSCORE", "Sicily", "Palermo")
    b("TYPE", "Sicily")
    b("ZADD", "z", "3479099956230698", "p")
    b("GEOPOS", "z", "p")
    b("ZADD", "z", "-5", "neg", "1e20", "big", "0", "zero")
    b("GEOHASH", "z", "zero")
    b("DEBUG", "RELOAD")
    b("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 300, "km", "ASC", "WITHCOORD")


SEARCHES = [
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "ASC"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "DESC", "WITHDIST", "WITHCOORD", "WITHHASH"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200, "km"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 0, "km"),
    ("FROMMEMBER", "Palermo", "BYRADIUS", 100, "mi", "ASC", "WITHDIST"),
    ("FROMMEMBER", "Palermo", "BYBOX", 400, 400, "km", "ASC", "WITHCOORD"),
    ("FROMLONLAT", 15, 37, "BYBOX", 400, 300, "km", "DESC", "WITHDIST"),
    ("FROMLONLAT", 15, 37, "BYBOX", 0, 0, "km"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "COUNT", 2),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "COUNT", 2, "DESC"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "COUNT", 10, "ANY"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 2000, "km", "COUNT", 1, "ANY", "ASC"),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 200000, "ft", "WITHDIST", "ASC"),
    ("fromlonlat", 15, 37, "byradius", 200, "KM", "asc", "withdist", "count", 3),
    ("FROMLONLAT", 15, 37, "BYRADIUS", 20000, "km", "ASC"),
    ("FROMLONLAT", -179.9, 0, "BYRADIUS", 500, "km", "ASC"),
    ("FROMLONLAT", 0, 85, "BYBOX", 20000, 200, "km", "ASC"),
]


def test_geosearch_options(sicily):
    for args in SEARCHES:
        sicily("GEOSEARCH", "Sicily", *args)
    sicily("GEOSEARCH", "nokey", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km")
    sicily("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", 200, "km")


def test_geosearch_resp3(sicily):
    b3 = sicily.new(protocol=3)
    try:
        for args in SEARCHES[:7]:
            b3("GEOSEARCH", "Sicily", *args)
        b3("GEOPOS", "Sicily", "Palermo", "nope")
        b3("GEOHASH", "Sicily", "Palermo", "nope")
        b3("GEODIST", "Sicily", "Palermo", "Catania", "km")
    finally:
        b3.close()


def test_geo_replies_pin_redis_72_bytes(sicily, raw):
    """7.0 and 7.2 print these alike; the raw bytes are compared too."""
    raw.same(b"GEOPOS Sicily Palermo nope\r\n")
    raw.same(b"GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 300 km ASC WITHDIST WITHCOORD\r\n")
    g = raw.goblin
    g.send(b"GEODIST Sicily Palermo Catania\r\n")
    assert g.read_replies(1) == b"$11\r\n166274.1516\r\n"
    g.send(b"GEOPOS Sicily Palermo\r\n")
    assert g.read_replies(1) == b"*1\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n"


def test_geosearch_errors(sicily):
    b = sicily
    k = "Sicily"
    errors = [
        ("GEOSEARCH", k, "BYRADIUS", 10, "km"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "FROMMEMBER", "Palermo", "BYRADIUS", 1, "m"),
        ("GEOSEARCH", k, "FROMMEMBER", "Palermo", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "BYBOX", 1, 1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYBOX", 1, 1, "m", "BYRADIUS", 1, "m"),
        ("GEOSEARCH", k, "FROMMEMBER", "nope", "BYRADIUS", 1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 200, 37, "BYRADIUS", 1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", "x", 37, "BYRADIUS", 1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", "x", "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", -1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "yd"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYBOX", "x", 1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYBOX", 1, "x", "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYBOX", -1, 1, "m"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYBOX", 1, 1, "yd"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYBOX", 1, 1),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "ANY"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "COUNT", 0),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "COUNT", -1),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "COUNT", "x"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "COUNT"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "STORE", "d"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "STOREDIST"),
        ("GEOSEARCH", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "bogus"),
        ("geosearch", k, "BYRADIUS", 1, "m"),
        ("GeoSearch", k, "FROMLONLAT", 15, 37),
        ("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "m", "ANY"),
        ("GEOSEARCH", "nokey", "FROMMEMBER", "x"),
        ("GEOSEARCHSTORE", "d", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "WITHDIST"),
        ("GEOSEARCHSTORE", "d", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "WITHHASH"),
        ("GEOSEARCHSTORE", "d", k, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "m", "STORE", "x"),
        ("GEOSEARCHSTORE", "d", k, "FROMLONLAT", 15, 37),
        ("GEORADIUS", k, 15, 37, 200, "km", "STORE", "d", "WITHDIST"),
        ("GEORADIUS", k, 15, 37, 200, "km", "STORE"),
        ("GEORADIUS", k, 15, 37, 200, "km", "FROMLONLAT", 1, 2),
        ("GEORADIUS", k, 15, 37, 200, "km", "BYBOX", 1, 1, "m"),
        ("GEORADIUS", k, 15, 37, -1, "km"),
        ("GEORADIUS", k, 15, 95, 1, "km"),
        ("GEORADIUS", k, 15, 37, 1, "parsec"),
        ("GEORADIUS_RO", k, 15, 37, 200, "km", "STORE", "d"),
        ("GEORADIUS_RO", k, 15, 37, 200, "km", "STOREDIST", "d"),
        ("GEORADIUSBYMEMBER", k, "nope", 200, "km"),
        ("GEORADIUSBYMEMBER", k, "Palermo", "x", "km"),
        ("GEORADIUSBYMEMBER_RO", k, "Palermo", 200, "km", "STORE", "d"),
        ("GEORADIUSBYMEMBER", "nokey", "Palermo", 200, "km", "bogus"),
        ("GEORADIUSBYMEMBER", "nokey", "Palermo", 200, "km", "STORE", "d", "WITHCOORD"),
        ("GEOSEARCH", k),
        ("GEORADIUS", k, 1, 2, 3),
    ]
    for cmd in errors:
        b.err(*cmd)
    b("GEORADIUSBYMEMBER", "nokey", "Palermo", "x", "parsec")
    b("GEORADIUSBYMEMBER", "nokey", "Palermo", "x", "parsec", "STORE", "d")


def test_georadius_forms(sicily):
    b = sicily
    k = "Sicily"
    b("GEORADIUS", k, 15, 37, 200, "km", "ASC")
    b("GEORADIUS", k, 15, 37, 200, "km", "WITHDIST", "WITHCOORD", "WITHHASH", "DESC")
    b("GEORADIUS", k, 15, 37, 200, "km", "COUNT", 1)
    b("GEORADIUS", k, 15, 37, 200, "km", "COUNT", 2, "ANY", "ASC")
    b("GEORADIUS_RO", k, 15, 37, 200, "km", "ASC", "WITHDIST")
    b("GEORADIUSBYMEMBER", k, "Palermo", 200, "km", "ASC", "WITHDIST")
    b("GEORADIUSBYMEMBER_RO", k, "Agrigento", 100, "km", "DESC", "COUNT", 2)
    b("GEORADIUS", "nokey", 15, 37, 200, "km")
    b("GEORADIUSBYMEMBER", "nokey", "x", 200, "km")


def test_store_forms(sicily):
    b = sicily
    k = "Sicily"
    assert b("GEORADIUS", k, 15, 37, 200, "km", "STORE", "d1") == 3
    b("ZRANGE", "d1", 0, -1, "WITHSCORES")
    assert b("GEORADIUS", k, 15, 37, 200, "km", "STOREDIST", "d2", "COUNT", 2) == 2
    b("ZRANGE", "d2", 0, -1, "WITHSCORES")
    assert b("GEORADIUSBYMEMBER", k, "Palermo", 100, "mi", "STOREDIST", "d3", "ASC") >= 1
    b("ZRANGE", "d3", 0, -1, "WITHSCORES")
    b("GEOSEARCHSTORE", "d4", k, "FROMMEMBER", "Palermo", "BYBOX", 500, 500, "km")
    b("ZRANGE", "d4", 0, -1, "WITHSCORES")
    b("GEOSEARCHSTORE", "d5", k, "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "STOREDIST", "COUNT", 3, "DESC")
    b("ZRANGE", "d5", 0, -1, "WITHSCORES")
    b("OBJECT", "ENCODING", "d5")
    # An empty result deletes the destination; a missing source too.
    assert b("GEOSEARCHSTORE", "d5", k, "FROMLONLAT", 0, 0, "BYRADIUS", 1, "m") == 0
    assert b("EXISTS", "d5") == 0
    assert b("GEORADIUS", "nokey", 15, 37, 200, "km", "STORE", "d4") == 0
    assert b("EXISTS", "d4") == 0
    b("SET", "str", "v")
    assert b("GEOSEARCHSTORE", "str", k, "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km") == 3
    b("TYPE", "str")
    b("SET", "str2", "v")
    b.err("GEOSEARCHSTORE", "d", "str2", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km")


def random_points(rng, n, lon, lat, spread):
    out = []
    for i in range(n):
        x = max(-180, min(180, lon + rng.uniform(-spread, spread)))
        y = max(-85, min(85, lat + rng.uniform(-spread / 2, spread / 2)))
        out += [f"{x:.6f}", f"{y:.6f}", f"p{i}"]
    return out


@pytest.mark.parametrize("n", [50, 400])
def test_random_searches_match_redis(both, n):
    """Random points around random centres (a listpack and a skiplist set), searched by
    random radii and boxes: the same members, distances and order (ties are unlikely)."""
    rng = random.Random(16 + n)
    for round_ in range(4):
        lon, lat = rng.uniform(-170, 170), rng.uniform(-75, 75)
        both("DEL", "g")
        both("GEOADD", "g", *random_points(rng, n, lon, lat, rng.choice([0.01, 1, 10])))
        for _ in range(25):
            cx = lon + rng.uniform(-1, 1)
            cy = lat + rng.uniform(-1, 1)
            unit = rng.choice(["m", "km", "mi", "ft"])
            scale = {"m": 1, "km": 1000, "mi": 1609.34, "ft": 0.3048}[unit]
            r = rng.choice([100, 10_000, 200_000, 2_000_000]) / scale
            if rng.random() < 0.5:
                by = ("BYRADIUS", f"{r:.3f}", unit)
            else:
                by = ("BYBOX", f"{r:.3f}", f"{r * rng.uniform(0.2, 2):.3f}", unit)
            both("GEOSEARCH", "g", "FROMLONLAT", f"{cx:.5f}", f"{cy:.5f}", *by, "ASC", "WITHDIST", "WITHHASH")
            both("GEOSEARCH", "g", "FROMMEMBER", f"p{rng.randrange(n)}", *by, "COUNT", 5, "WITHCOORD")


def test_geo_writes_count_changes(both):
    from test_dirty import changes

    both("FLUSHALL")
    both("SAVE")
    steps = [
        ("GEOADD", "g", *SICILY),
        ("GEOADD", "g", "CH", "13", "38", "Palermo", "1", "1", "x"),
        ("GEOADD", "g", "NX", "13", "38", "Palermo"),
        ("GEORADIUS", "g", 15, 37, 200, "km", "STORE", "d"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 15, 37, "BYRADIUS", 300, "km"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km"),
        ("GEORADIUS", "nokey", 15, 37, 200, "km", "STORE", "g"),
    ]
    for cmd in steps:
        both(*cmd)
        r, g = (changes(c)[0] for c in both.clients())
        assert r == g, (cmd, r, g)
