"""Helpers of the list tests: `L` is zset_helpers' `Z` (paired clients, every reply
compared) with the whole-list comparison of lists, and the fixtures over RESP2 and RESP3.

Redis 7.0 (the reference server here) has no listpack lists: every list is a quicklist
there, while Redis 7.2 and Goblin keep a small list as one listpack. `L.enc72` checks Goblin's
encoding against what Redis 7.2's t_list.c picks, Goblin alone."""

import pytest

from zset_helpers import Z


class L(Z):
    """List commands on both servers."""

    def state(self, *keys):
        """The existence, type, length and elements of each key must agree."""
        for k in keys:
            self("EXISTS", k)
            self("TYPE", k)
            self("LLEN", k)
            self("LRANGE", k, 0, -1)

    def enc72(self, key, expected):
        """Goblin's encoding of `key` is Redis 7.2's `expected`; Redis 7.0 says quicklist."""
        got = self.goblin.execute_command("OBJECT", "ENCODING", key).decode()
        assert got == expected, f"{key}: goblin {got}, Redis 7.2 {expected}"
        assert self.redis.execute_command("OBJECT", "ENCODING", key) == b"quicklist"


def l_for(request, protocol: int) -> L:
    l = L(request.getfixturevalue("both3" if protocol == 3 else "both"))
    request.addfinalizer(l.restore)
    return l


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def lst(request):
    """An `L` over RESP2, then over RESP3."""
    return l_for(request, request.param)


@pytest.fixture(params=["small", "nodes"])
def lenc(request, lst):
    """`lst`, with the default fill, then with list-max-listpack-size 2 (quicklists of
    two-element nodes, so every command crosses node boundaries)."""
    if request.param == "nodes":
        lst.config_set("list-max-listpack-size", 2)
    return lst
