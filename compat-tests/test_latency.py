"""LATENCY and latency-monitor-threshold against Redis: LATEST, HISTORY, GRAPH, DOCTOR and
RESET over an event both servers record (a slow DEBUG SLEEP as a "command" spike; the
milliseconds and times, which differ by a tick, are compared for their form), the errors and
replies without data, HELP (7.2's last line), and HISTOGRAM's reply shape per command in both
protocols (calls exact, cumulative counts ending at the calls, buckets on HDR's powers of
two)."""

import re
import time

import pytest

DIGITS = re.compile(rb"\d+")


def unnumbered(text: bytes) -> bytes:
    return DIGITS.sub(b"N", text)


def clear_events(both):
    """LATENCY RESET on each server without comparing its count: earlier tests, and a loaded
    machine's slow expiry cycles, leave each server a different number of event series."""
    for c in both.clients():
        c.execute_command("LATENCY", "RESET")


@pytest.fixture
def monitor(both):
    """The latency monitor on (10 ms) with no events, cleared again afterwards."""
    both.config_set("latency-monitor-threshold", "10")
    clear_events(both)
    yield
    clear_events(both)


def test_threshold_parameter(both):
    both("CONFIG", "GET", "latency-monitor-threshold")
    both.config_set("latency-monitor-threshold", "25")
    both("CONFIG", "GET", "latency-monitor-threshold")
    for bad in ["-1", "x", "1.5"]:
        both.err("CONFIG", "SET", "latency-monitor-threshold", bad)
    both("CONFIG", "GET", "latency-monitor-threshold")


def test_errors_and_empty_replies(both):
    clear_events(both)
    both.err("LATENCY")
    both.err("LATENCY", "FOO")
    both.err("LATENCY", "GRAPH", "nosuch")
    both.err("LATENCY", "GRAPH")
    both.err("LATENCY", "HISTORY")
    both.err("LATENCY", "HISTORY", "a", "b")
    both.err("LATENCY", "LATEST", "x")
    both.err("LATENCY", "DOCTOR", "x")
    both.err("LATENCY", "HELP", "x")
    both("LATENCY", "HISTORY", "nosuch")
    both("LATENCY", "LATEST")
    both("LATENCY", "RESET")
    both("LATENCY", "RESET", "a", "b")


def test_doctor_without_events(both):
    clear_events(both)
    both.config_set("latency-monitor-threshold", "0")
    both("LATENCY", "DOCTOR")
    both.config_set("latency-monitor-threshold", "100")
    both("LATENCY", "DOCTOR")


def test_help_as_7_2_prints_it(both):
    r, g = both.run("LATENCY", "HELP")
    assert r[:-1] == g[:-1]
    assert r[-1] == b"    Prints this help." and g[-1] == b"    Print this help."


def test_a_command_spike(both, monitor):
    before = int(time.time())
    both("DEBUG", "SLEEP", "0.05")
    after = int(time.time())
    r, g = both.run("LATENCY", "LATEST")
    for latest in (r, g):
        assert len(latest) == 1, latest
        name, at, ms, worst = latest[0]
        assert name == b"command" and before <= at <= after and 50 <= ms < 1000 and worst == ms
    r, g = both.run("LATENCY", "HISTORY", "command")
    assert len(r) == len(g) == 1 and g[0][0] == latest[0][1] and g[0][1] == latest[0][2]
    both("LATENCY", "HISTORY", "COMMAND")
    r, g = both.run("LATENCY", "GRAPH", "command")
    assert unnumbered(r) == unnumbered(g), (r, g)
    assert g.startswith(b"command - high %d ms, low %d ms" % (latest[0][2], latest[0][2]))
    r, g = both.run("LATENCY", "DOCTOR")
    assert unnumbered(r) == unnumbered(g), (r, g)
    # A fast command under the threshold adds nothing.
    both("PING")
    r, g = both.run("LATENCY", "LATEST")
    assert len(r) == len(g) == 1
    both("LATENCY", "RESET", "COMMAND", "nosuch", "command")
    both("LATENCY", "LATEST")


def test_doctor_advice_follows_slowlog(both, monitor):
    both.config_set("slowlog-log-slower-than", "-1")
    both("DEBUG", "SLEEP", "0.02")
    r, g = both.run("LATENCY", "DOCTOR")
    assert unnumbered(r) == unnumbered(g), (r, g)
    both.config_set("slowlog-log-slower-than", "5000")
    r, g = both.run("LATENCY", "DOCTOR")
    assert unnumbered(r) == unnumbered(g), (r, g)


def test_monitor_off_records_nothing(both):
    clear_events(both)
    both.config_set("latency-monitor-threshold", "0")
    both("DEBUG", "SLEEP", "0.02")
    both("LATENCY", "LATEST")


POWERS = {1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908, 33816, 67633,
          135266, 270532, 541065, 1073741}


def histograms(reply):
    """A LATENCY HISTOGRAM reply as {name: (calls, [(usec, cumulative), ...])} (RESP2's flat
    arrays or RESP3's maps)."""
    def pairs(x):
        if isinstance(x, dict):
            return list(x.items())
        return list(zip(x[::2], x[1::2]))
    out = {}
    for name, body in pairs(reply):
        body = dict(pairs(body))
        out[name] = (body[b"calls"], pairs(body[b"histogram_usec"]))
    return out


@pytest.mark.parametrize("protocol", [2, 3])
def test_histogram(both, protocol):
    c = both.new(protocol=protocol)
    c("CONFIG", "RESETSTAT")
    for i in range(5):
        c("SET", f"k{i}", "v")
    c("GET", "k1")
    c.run("CLIENT", "ID")
    c("LATENCY", "HISTOGRAM", "nosuch")
    for args in [(), ("set", "GET", "client", "nosuch", "config|resetstat", "zadd")]:
        r, g = c.run("LATENCY", "HISTOGRAM", *args)
        hr, hg = histograms(r), histograms(g)
        if not args:
            # Without names: every command with calls, LATENCY HISTOGRAM itself excepted
            # where it already ran once.
            hr.pop(b"latency|histogram", None)
            hg.pop(b"latency|histogram", None)
        assert sorted(hr) == sorted(hg), (hr, hg)
        for name in hr:
            assert hr[name][0] == hg[name][0], name
            for calls, cdf in (hr[name], hg[name]):
                assert cdf and cdf[-1][1] == calls, cdf
                assert all(u in POWERS for u, _ in cdf), cdf
                assert [n for _, n in cdf] == sorted(set(n for _, n in cdf)), cdf
