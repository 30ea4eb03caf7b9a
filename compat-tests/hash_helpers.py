"""Helpers of the hash tests: comparisons that ignore field order where Redis defines none.

A listpack hash keeps insertion order on Redis 7.0, 7.2 and Goblin alike, so its replies
compare exactly (`H.exact`); a hashtable's order is its dict's, so calling `H` compares
replies order-free: RESP3 maps as dicts, lists of [field, value] pairs and of strings
sorted."""

from set_helpers import S


def _unordered(v):
    """A reply as something order-free: maps as dicts, nested pairs and lists of strings
    sorted; other values as they are."""
    if isinstance(v, dict):
        return {k: _unordered(x) for k, x in v.items()}
    if isinstance(v, list):
        items = [_unordered(x) for x in v]
        if all(isinstance(x, list) for x in items) or all(isinstance(x, bytes) for x in items):
            return sorted(items)
        return items
    return v


class H(S):
    """Hash commands on both servers (the set helpers' calls, with hash replies' order)."""

    normalize = staticmethod(_unordered)

    def getall(self, key):
        """HGETALL on both, compared as mappings; Redis's as a dict."""
        r, g = self.both.run("HGETALL", key)
        as_map = (lambda x: x if isinstance(x, dict) else dict(zip(x[::2], x[1::2])))
        assert as_map(r) == as_map(g), f"HGETALL {key}: redis {r!r} goblin {g!r}"
        return as_map(r)

    def enc_both(self, key, expected):
        """Both servers report `expected` as the encoding of `key` (7.0 and 7.2 agree)."""
        got = [c.execute_command("OBJECT", "ENCODING", key).decode() for c in self.both.clients()]
        assert got == [expected, expected], f"{key}: redis, goblin {got} want {expected}"
