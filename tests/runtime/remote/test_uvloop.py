"""The connection on uvloop's event loop (what ``run`` picks when uvloop is installed):
every scenario of ``test_same_guarantees.py`` over every transport (a socket pair as
stdio is, an in-process channel pair, WebSocket, Streamable HTTP over HTTP/1.1 and
HTTP/2) and the chaos of ``test_chaos_remote.py``, run again on uvloop. Each test here
checks that its scenario did run on uvloop."""

from __future__ import annotations

from typing import Iterator

import pytest

from ..harness import run_on_uvloop_in
from . import test_chaos_remote, test_same_guarantees
from .test_chaos_remote import test_chaos_over_the_remote_transports  # noqa: F401
from .test_same_guarantees import *  # noqa: F401, F403 - every scenario, collected here again

pytest.importorskip("uvloop", reason="uvloop is not installed (pip install uvloop)")


@pytest.fixture(autouse=True)
def on_uvloop(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    loops = run_on_uvloop_in(monkeypatch, test_same_guarantees, test_chaos_remote)
    yield
    assert loops and set(loops) == {"uvloop"}, loops
