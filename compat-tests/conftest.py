"""pytest fixtures of the differential suite; the machinery is in harness.py (see its
docstring). Test modules import `harness` for the helpers.

This file re-exports harness's names, so `from conftest import Both` keeps working. Another
conftest.py in a subdirectory (compat-tests/memcache/) is also a top-level module named
"conftest", and pytest imports it by that name; `pytest_plugin_registered` below puts this one
back under the name afterwards, so such imports always find the harness.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

# Hypothesis keeps its files out of the work tree.
os.environ.setdefault(
    "HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "goblin-compat-hypothesis")
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import *  # noqa: E402,F401,F403
from harness import AsyncBoth, Both, Pair, RawPair, _after, _clean, start_pair, zadd_keys  # noqa: E402

_THIS = sys.modules[__name__]


def pytest_plugin_registered(plugin, manager):
    if getattr(plugin, "__name__", None) == "conftest" and plugin is not _THIS:
        sys.modules["conftest"] = _THIS


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def servers(tmp_path_factory):
    pair = start_pair(tmp_path_factory)
    yield pair
    pair.stop()


@pytest.fixture
def clean(servers):
    """Flushes both default servers before the test and checks they survive it."""
    _clean(servers)
    yield servers
    _after(servers)


@pytest.fixture
def both(clean):
    b = Both(clean, 2)
    yield b
    b.close()
    b.restore_config()


@pytest.fixture
def both3(clean):
    b = Both(clean, 3)
    yield b
    b.close()
    b.restore_config()


@pytest.fixture
def api(clean):
    """Like `both`, with redis-py's usual reply post-processing, for its high-level API."""
    b = Both(clean, 2, callbacks=True)
    yield b
    b.close()
    b.restore_config()


@pytest.fixture
async def aboth(clean):
    b = AsyncBoth(clean, 2)
    yield b
    await b.close()


@pytest.fixture
async def aboth3(clean):
    b = AsyncBoth(clean, 3)
    yield b
    await b.close()


@pytest.fixture
def raw(clean):
    p = RawPair(clean)
    yield p
    p.close()


@pytest.fixture
def keys(both):
    """A callable that creates sorted-set keys on both servers: keys("a", "b")."""
    return lambda *names: zadd_keys(both, *names)
