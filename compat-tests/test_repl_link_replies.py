"""A replica's link carries the stream, never replies, as Redis's integration/replication
checks it ("replica do not write the reply to the replication link"), beside Debian's
redis-server 7.0: a command a replica sends that would be answered closes its link with
Redis's warning, and one reading or writing keys is refused first ("Replica can't interact
with the keyspace", logged as an error sent to a replica).

Each test starts its own server on a free port in its own temporary directory.
"""

from __future__ import annotations

import pytest

from resp import RawConnection, encode
from test_persistence import procs  # noqa: F401 (the fixture)
from test_replication import start, wait_for

KINDS = ["redis", "goblin"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sync,command,name", [
    (("SYNC",), ("PING",), "ping"),
    (("PSYNC", "replicationid", "-1"), ("SLOWLOG", "GET"), "slowlog|get"),
    (("PSYNC", "replicationid", "-1"), ("GET", "foo"), "get"),
])
def test_a_replica_answered_is_dropped(procs, tmp_path, kind, sync, command, name):
    m = start(procs, kind, tmp_path / "m")
    link = RawConnection(m.port)
    link.send(encode(*sync) + encode(*command))
    assert link.is_closed(wait=10), "the link is closed"
    assert m.client().ping()
    out = wait_for(lambda: m.output() if "Replica generated a reply" in m.output() else "",
                   what="the warning")
    assert f"Replica generated a reply to command '{name}', disconnecting it: id=" in out
    refused = "This master is sending an error to its replica: " \
              "'Replica can't interact with the keyspace' after processing the command 'get'"
    assert (refused in out) == (name == "get")
