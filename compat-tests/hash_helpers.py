"""Helpers of the hash tests: comparisons that ignore field order where Redis defines none.

A listpack hash keeps insertion order on Redis 7.0, 7.2 and Goblin alike, so its replies
compare exactly; a hashtable's order is its dict's, so `H.__call__` compares HGETALL-like
replies as mappings and HKEYS/HVALS-like ones as sorted lists (exactly the same elements,
any order)."""


def _unordered(v):
    """A reply as something order-free: flat field/value lists and RESP3 maps as dicts of
    pairs, nested [field, value] pairs and plain lists sorted; other values as they are."""
    if isinstance(v, dict):
        return {k: _unordered(x) for k, x in v.items()}
    if isinstance(v, list):
        items = [_unordered(x) for x in v]
        if all(isinstance(x, list) for x in items):
            return sorted(items)
        if all(isinstance(x, bytes) for x in items):
            return sorted(items)
        return items
    return v


class H:
    """Hash commands on both servers."""

    def __init__(self, both):
        self.both = both

    def __call__(self, *cmd):
        """Runs on both; equal outcomes with elements in any order; returns Redis's."""
        r, g = self.both.run(*cmd)
        if isinstance(r, BaseException) or isinstance(g, BaseException):
            self.both(*cmd)  # compare errors exactly (raises with both outcomes)
            return r
        assert _unordered(r) == _unordered(g), f"{cmd!r}: redis {r!r} goblin {g!r}"
        return r

    def getall(self, key):
        """HGETALL on both, compared as mappings; Redis's as a dict."""
        r, g = self.both.run("HGETALL", key)
        as_map = (lambda x: x if isinstance(x, dict) else dict(zip(x[::2], x[1::2])))
        assert as_map(r) == as_map(g), f"HGETALL {key}: redis {r!r} goblin {g!r}"
        return as_map(r)

    def exact(self, *cmd):
        """Runs on both, replies compared in order."""
        return self.both(*cmd)

    def goblin(self, *cmd):
        return self.both.goblin.execute_command(*cmd)

    def enc(self, key, expected):
        """Both servers report `expected` as the encoding of `key` (7.0 and 7.2 agree)."""
        got = [c.execute_command("OBJECT", "ENCODING", key).decode() for c in self.both.clients()]
        assert got == [expected, expected], f"{key}: redis, goblin {got} want {expected}"
