"""Fixtures of the HTTP mirror-cache tests (the machinery is in httpkit.py).

- `origin`: the session's scriptable origin.
- `front`: the session's goblin-server, mirroring `origin`, with an SSD pool in a temporary
  directory and a 16 KiB --ram-head (bodies over 16 KiB have an SSD tail), --memory 64M,
  --default-ttl 2 and --origin-timeout 2. A test that kills it fails with its log tail.
- `start_front(*args, origin_url=None)`: another front with other arguments, stopped at the
  end of the session.
- `path`: a path no other test uses, so tests sharing the front never share objects.
"""

from __future__ import annotations

import itertools
import re
import shutil
import tempfile

import pytest

from httpkit import GOBLIN_BIN, Front, Origin, has_http_front

MAIN_ARGS = [
    "--ram-head", "16K", "--memory", "64M", "--default-ttl", "2", "--origin-timeout", "2",
]


@pytest.fixture(scope="session")
def origin():
    o = Origin()
    yield o
    o.stop()


@pytest.fixture(scope="session")
def start_front(origin):
    """start_front(*args, origin=None) starts a front with extra arguments (on the session
    origin unless another origin or URL is given); all are stopped after the session."""
    if not has_http_front():
        pytest.skip(f"{GOBLIN_BIN} has no HTTP front (--http-port)")
    started: list[Front] = []

    def start(*args: str, origin_url: str | None = None) -> Front:
        f = Front(origin_url or origin.url, list(args)).start()
        started.append(f)
        return f

    yield start
    for f in started:
        f.stop()


@pytest.fixture(scope="session")
def main_front(start_front):
    ssd = tempfile.mkdtemp(prefix="goblin-http-ssd-")
    f = start_front(*MAIN_ARGS, "--ssd-dir", ssd)
    yield f
    shutil.rmtree(ssd, ignore_errors=True)


@pytest.fixture
def front(main_front):
    """The session's front; a test that kills it fails with the tail of its log."""
    assert main_front.alive(), "the front died earlier:\n" + main_front.log_tail()
    yield main_front
    if not main_front.alive():
        code = main_front.proc.returncode
        log = main_front.log_tail()
        main_front.start()
        pytest.fail(f"the front died during this test (code {code}); log:\n{log}", pytrace=False)


_paths = itertools.count()


@pytest.fixture
def path(request):
    """A path no other test uses."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
    return f"/t/{name}/{next(_paths)}"


