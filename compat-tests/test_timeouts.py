"""Timeout arguments of the blocking and pausing commands (Redis's
getTimeoutFromObjectOrReply): seconds with fractions for BLPOP and its kin, whole
milliseconds for XREAD BLOCK, WAIT and CLIENT PAUSE; the same errors for text, negative
and overflowing values on every one of them.

Redis 7.0 (the peer here) overflows on huge timeouts (blocking for ever, pausing for no
time, or "timeout is negative"); 7.2 answers "timeout is out of range", which Goblin
follows: those cases are asserted against the reply of Redis 7.2.4, checked by hand."""

import pytest
import redis

HUGE = "9223372036854775807"

MS_COMMANDS = [
    ("XREAD", "BLOCK", "{t}", "STREAMS", "s", "$"),
    ("WAIT", "0", "{t}"),
    ("CLIENT", "PAUSE", "{t}"),
]
SECONDS_COMMANDS = [
    ("BLPOP", "l", "{t}"),
    ("BZPOPMIN", "z", "{t}"),
    ("BLMOVE", "a", "b", "LEFT", "RIGHT", "{t}"),
]


def fill(cmd, t):
    return [a.replace("{t}", t) for a in cmd]


def cases(common, ms_only, seconds_only):
    """(command, timeout) pairs: `common` for every command, the others for one kind."""
    return ([(c, t) for c in MS_COMMANDS for t in common + ms_only]
            + [(c, t) for c in SECONDS_COMMANDS for t in common + seconds_only])


@pytest.mark.parametrize("cmd,t", cases(["x", "-1", ""], ["1.5", "1e30"], []))
def test_bad_timeouts_get_the_same_error(both, cmd, t):
    both(*fill(cmd, t))


@pytest.mark.parametrize("cmd,t", cases([HUGE, "9223372036854775806"], [], ["1e30"]))
def test_overflowing_timeouts_are_out_of_range_as_in_redis_72(both, cmd, t):
    with pytest.raises(redis.ResponseError, match="^timeout is out of range$"):
        both.goblin.execute_command(*fill(cmd, t))


def test_wait_without_replicas_answers_at_once(both):
    both("WAIT", "0", "0")
    both("WAIT", "0", "1")
