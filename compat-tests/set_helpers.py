"""Helpers of the set tests: comparisons that ignore member order where Redis defines none.

Redis 7.0 (the reference server here) has no listpack sets: a small set of strings is a
hashtable there and a listpack in 7.2 and Goblin, so member order is only comparable for
intsets. `unordered` compares replies as sorted lists; encodings are pinned to what Redis
7.2's t_set.c picks, checked on Goblin alone (`enc72`), with Redis's own encoding compared
where 7.0 and 7.2 agree (intset and hashtable)."""


def _sorted(v):
    """Lists of members sorted; other lists (a SCAN reply) keep their order."""
    if isinstance(v, (list, set)):
        items = [_sorted(x) for x in v]
        if all(isinstance(x, (bytes, int)) for x in items) and len({type(x) for x in items}) <= 1:
            return sorted(items)
        return items
    return v


class S:
    """Set commands on both servers."""

    # How a reply is made order-free before the servers' replies are compared.
    normalize = staticmethod(_sorted)

    def __init__(self, both):
        self.both = both

    def __call__(self, *cmd):
        """Runs on both; equal outcomes with members in any order; returns Redis's."""
        r, g = self.both.run(*cmd)
        if isinstance(r, BaseException) or isinstance(g, BaseException):
            self.both(*cmd)  # compare errors exactly (raises with both outcomes)
            return r
        assert self.normalize(r) == self.normalize(g), f"{cmd!r}: redis {r!r} goblin {g!r}"
        return r

    def exact(self, *cmd):
        """Runs on both, replies compared in order."""
        return self.both(*cmd)

    def goblin(self, *cmd):
        return self.both.goblin.execute_command(*cmd)

    def redis(self, *cmd):
        return self.both.redis.execute_command(*cmd)

    def enc(self, key):
        """Goblin's encoding of `key`."""
        return self.goblin("OBJECT", "ENCODING", key).decode()

    def enc72(self, key, expected):
        """Goblin's encoding is Redis 7.2's; Redis 7.0's too unless 7.2 says listpack."""
        assert self.enc(key) == expected, f"{key}: goblin {self.enc(key)} want {expected}"
        if expected != "listpack":
            assert self.redis("OBJECT", "ENCODING", key).decode() == expected
        else:
            assert self.redis("OBJECT", "ENCODING", key).decode() in ("listpack", "hashtable")

    def members(self, key):
        """SMEMBERS on both, compared in any order; Redis's as a sorted list."""
        return sorted(self("SMEMBERS", key))
