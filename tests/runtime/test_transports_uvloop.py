"""The spawned agent's connection on uvloop's event loop (what ``run`` picks when uvloop
is installed; its pipes and child processes are libuv's there): the scenarios of
``test_transports.py`` that spawn an agent or serve ``RPC.stdio``, run again on uvloop (in the Pydantic style:
the transport is the same in every style). Each test here checks that its scenario did
run on uvloop."""

from __future__ import annotations

from types import ModuleType
from typing import Iterator

import pytest

from . import test_transports
from .harness import module, run_on_uvloop_in
from .test_transports import (  # noqa: F401 - collected here again
    test_close_stdin_and_wait,
    test_closing_ends_the_whole_process_tree,
    test_closing_releases_the_agent_pipes,
    test_reading_paused_by_backpressure_is_not_taken_for_silence,
    test_requests_end_when_the_spawned_agent_exits_though_its_child_holds_the_pipe,
    test_stdio_reads_a_file_or_a_pipe_and_writes_the_other,
    test_the_exit_status_is_in_the_error_a_caller_sees,
    test_what_the_agent_wrote_before_it_exited_is_read_first,
)

pytest.importorskip("uvloop", reason="uvloop is not installed (pip install uvloop)")


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-uvloop"))


@pytest.fixture(autouse=True)
def on_uvloop(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    loops = run_on_uvloop_in(monkeypatch, test_transports)
    monkeypatch.setenv(
        "ACPGEN_TEST_UVLOOP", "1"
    )  # RPC.stdio's child process runs on the package's run()
    yield
    if (
        "stdio" not in request.node.name
    ):  # the child says its loop (checked by the test)
        assert loops and set(loops) == {"uvloop"}, loops
