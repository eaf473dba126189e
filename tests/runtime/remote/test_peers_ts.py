"""acpgen's remote transports against the official TypeScript SDK, both directions, over
WebSocket and Streamable HTTP: ``@agentclientprotocol/sdk`` 2.4.0 and ``ws`` 8.23.0,
pinned in ``tests/interop`` (installed by the tests; skipped, saying why, without node or
the registry).

* acpgen client -> SDK server: ``tests/interop/remote_agent.mjs`` (``./experimental/server``
  on node:http through ``./experimental/node``, upgrades through ``ws``) serves the
  scenario agent; ``v1.RPC.connect_url`` plays each step of ``peers.py``.
* SDK client -> acpgen server: ``tests/interop/remote_client.mjs``
  (``./experimental/ws-client`` with ``ws.WebSocket``, ``./experimental/http-client``)
  plays the same steps against ``v1.RPC.asgi_app`` serving ``peers.ScenarioAgent``.

Every step (``peers.STEPS``): initialize and a prompt of 1,000 updates in order, a
permission round trip during a prompt, cancel by ``session/cancel`` and by
``$/cancel_request`` (both SDK sides send and handle it), two sessions on one
connection, a 1 MB message each way, ``session/load`` on a new connection.

Interop choices acpgen makes, seen here:

* The TS HTTP client opens the session's SSE stream *before* it posts ``session/load``
  on a new connection (the RFD's resume flow); acpgen's server opens the stream for a
  session it does not know yet on that connection, as the TS server does, rather than
  404 (the RFD's routing rule, which the Python SDK server follows).
* ``Acp-Session-Id`` is accepted, and not required, on ``session/load`` (the TS client
  sends it, the Python SDK client does not).
* A JSON-RPC batch is answered 501, as the RFD says (the TS server answers 400: pinned
  below as the peer's divergence).
* HTTP/2: the TS client (Node's fetch) speaks HTTP/1.1 only and the SDK's node adapter
  serves node:http (HTTP/1.1): the TS pairings run over HTTP/1.1; HTTP/2 is covered by
  the Python SDK pairings.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from types import ModuleType
from typing import Any, Iterator

import pytest

from ..peers import INTEROP
from . import peers
from .harness import served
from .peers import STEPS, Log, agent_factory, check, play

REMOTE_AGENT = INTEROP / "remote_agent.mjs"
REMOTE_CLIENT = INTEROP / "remote_client.mjs"
TRANSPORTS = ("ws", "http")


def url(base: str, transport: str) -> str:
    return (base.replace("http://", "ws://") if transport == "ws" else base) + "/acp"


def run(coro: Any, timeout: float = 40.0) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return peers.bindings(tmp_path_factory)


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.skip("node is absent: the TypeScript SDK peers need it")
    return found


# -- acpgen client -> the TS SDK server ------------------------------------------------------


@pytest.fixture(scope="module")
def ts_server(v1: ModuleType) -> Iterator[str]:
    """``http://127.0.0.1:port`` of remote_agent.mjs (ended when stdin closes)."""
    process = subprocess.Popen(
        [node(), str(REMOTE_AGENT)], cwd=INTEROP, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        line = _readline(process, 15)
        yield f"http://127.0.0.1:{json.loads(line)['port']}"
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _readline(process: subprocess.Popen[bytes], timeout: float) -> bytes:
    import threading

    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    if not got or not got[0]:
        process.kill()
        err = process.stderr.read().decode(errors="replace") if process.stderr else ""  # type: ignore[union-attr]
        pytest.fail(f"remote_agent.mjs did not start within {timeout} s: {err[-2000:]}")
    return got[0]


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_acpgen_client_to_ts_server(v1: ModuleType, ts_server: str, transport: str, step: str) -> None:
    if transport == "http":
        peers.needs_http(v1, "client")
    record = run(play(v1, url(ts_server, transport), step))
    check(step, record)
    if step == "cancel_request":  # the prompt's request id, as acpgen sent it
        assert len(record["sent"]) == 1 and set(record["sent"][0]) == {"requestId"}


def test_ts_server_answers_a_batch_400_where_the_rfd_says_501(ts_server: str) -> None:
    """Pinned divergence: a JSON-RPC batch POSTed to the TS server is answered 400 (the
    RFD says 501 Not Implemented, which the Python SDK server and acpgen's answer)."""
    import httpx

    batch = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}]
    response = httpx.post(url(ts_server, "http"), json=batch, timeout=10)
    if response.status_code == 501:
        pytest.fail("the TS server answers 501 now, as the RFD says: drop this pin")
    assert response.status_code == 400, response.text


# -- the TS SDK client -> acpgen server ------------------------------------------------------

_RECORDS: dict[str, tuple[dict[str, Any], Log]] = {}


def ts_client_records(v1: ModuleType, transport: str) -> tuple[dict[str, Any], Log]:
    """Every step played by remote_client.mjs against an acpgen server (one run per
    transport, shared by the tests of its steps), and what acpgen's agents saw."""
    if transport not in _RECORDS:
        _RECORDS[transport] = run(_ts_client(v1, transport), 90)
    return _RECORDS[transport]


async def _ts_client(v1: ModuleType, transport: str) -> tuple[dict[str, Any], Log]:
    log = Log()
    async with served(v1.RPC.asgi_app(agent_factory(v1, log))) as base:
        process = await asyncio.create_subprocess_exec(
            node(), str(REMOTE_CLIENT), url(base, transport), *STEPS,
            cwd=INTEROP, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(process.communicate(), 80)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
            raise
    assert process.returncode == 0, err.decode(errors="replace")[-3000:]
    return json.loads(out), log


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_ts_client_to_acpgen_server(v1: ModuleType, transport: str, step: str) -> None:
    if transport == "http":
        peers.needs_http(v1, "server")
    records, log = ts_client_records(v1, transport)
    check(step, records[step])
    sid = records[step].get("sessionId")
    if step == "cancel":
        assert ("session/cancel", sid, None) in log.events and ("cancelled", sid, None) in log.events
    if step == "cancel_request":  # the handler was cancelled by the SDK's $/cancel_request
        assert ("aborted", sid, None) in log.events
    if step == "load":
        assert ("load", sid, None) in log.events
