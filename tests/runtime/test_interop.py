"""Interop with the official TypeScript SDK (``@agentclientprotocol/sdk``, pinned in
tests/interop/package.json, installed from npm by the first test that needs it).

Bindings are generated from the ACP schema files the SDK ships (``schema/v1`` in its
package, read in place), v1 stable and unstable, in the three styles. Then, both ways:

* a JS client on the SDK drives a Python agent written only on acpgen's output
  (``tests/interop/py_agent.py``: the module's ``Agent`` interface, ``RemoteClient``,
  ``RPC`` and the connection over stdio);
* a Python client written only on acpgen's output (``py_client.py``) drives a JS agent on
  the SDK.

A whole prompt turn each way: every ``session/update`` kind of the schema (one minimal
valid instance of each, drawn from the schema and checked by jsonschema), a permission
request, file-system and terminal requests, an extension request and notification, a
cancellation, and error responses. The SDK validates every request and notification it
receives with zod (an invalid one never reaches its handler, and is answered -32602);
the responses it receives are checked against the SDK's exported zod schemas.

The same scripts play three more scenarios (``INTEROP_SCENARIO``), both ways, in the three
styles, stable v1: ``cancel`` ($/cancel_request, through a nested request), ``large``
(params and results over 1 MB each way, a 1 MB notification) and ``order`` (1,000 updates
of one turn, the client's handler awaiting).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, find, settings
from jsonschema import Draft202012Validator

from ..conftest import generate, import_file, npm_install
from ..strategies import instances

HERE = Path(__file__).parent.parent / "interop"
SDK = HERE / "node_modules" / "@agentclientprotocol" / "sdk"
STYLES = ("pydantic", "dataclasses", "typeddict")
FILES = {"stable": "schema.json", "unstable": "schema.unstable.json"}


@pytest.fixture(scope="session")
def sdk() -> Path:
    npm_install(HERE, "@agentclientprotocol/sdk", "the TypeScript SDK interop test")
    return SDK


@lru_cache(maxsize=None)
def minimal_updates(schema_file: Path) -> tuple[str, ...]:
    """One minimal valid instance of every ``SessionUpdate`` variant of the schema file
    (JSON texts), drawn from the schema itself and checked by jsonschema."""
    root = json.loads(schema_file.read_text())
    union = root["$defs"]["SessionUpdate"]
    out = []
    for variant in union["oneOf"]:
        schema = {**variant, "$defs": root["$defs"]}
        check = Draft202012Validator(schema)
        value = find(
            instances(root, variant),
            check.is_valid,
            settings=settings(database=None, derandomize=True, max_examples=500, suppress_health_check=list(HealthCheck)),
        )
        out.append(json.dumps(value))
    return tuple(out)


@pytest.fixture(scope="session")
def generated(sdk: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for stability, name in FILES.items():
        schema = sdk / "schema" / "v1" / name
        out[stability] = generate(schema, tmp_path_factory.mktemp(f"interop-{stability}"), STYLES, formatted=False)
    return out


def _record(stderr: str) -> dict[str, Any]:
    lines = [line for line in stderr.splitlines() if line.startswith("INTEROP-RECORD ")]
    assert lines, stderr[-3000:]
    return json.loads(lines[-1][len("INTEROP-RECORD ") :])  # type: ignore[no-any-return]


def _events(record: dict[str, Any], kind: str, method: str) -> list[Any]:
    return [e[2] if len(e) > 2 else None for e in record["events"] if e[0] == kind and e[1] == method]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=HERE, capture_output=True, text=True, timeout=120)


def _updates_file(sdk: Path, stability: str, tmp_path: Path) -> tuple[Path, list[Any]]:
    updates = [json.loads(u) for u in minimal_updates(sdk / "schema" / "v1" / FILES[stability])]
    path = tmp_path / "updates.json"
    path.write_text(json.dumps(updates))
    return path, updates


def _module(stability: str, style: str) -> str:
    return f"acp_{style}.v1" + ("_unstable" if stability == "unstable" else "")


def _check_turn(agent_side: dict[str, Any], client_side: dict[str, Any], updates: list[Any]) -> None:
    """What both directions must show: the agent's view and the client's view agree."""
    received = [e["update"] for e in _events(client_side, "notification", "session/update")]
    assert received == updates  # every kind, each exactly as sent, in order
    assert _events(agent_side, "result", "session/request_permission") == [
        {"outcome": {"outcome": "selected", "optionId": "allow"}}
    ]
    assert _events(agent_side, "result", "fs/read_text_file") == [{"content": "hello from /w/a.txt"}]
    assert _events(client_side, "request", "fs/write_text_file")[0]["content"] == "hello from /w/a.txt"
    assert _events(agent_side, "result", "terminal/create") == [{"terminalId": "term-1"}]
    assert _events(agent_side, "result", "terminal/wait_for_exit") == [{"exitCode": 0, "signal": None}]
    for method in ("terminal/output", "terminal/kill", "terminal/release"):
        assert len(_events(agent_side, "result", method)) == 1, method
    assert _events(agent_side, "result", "_interop/echo") == [{"value": 42}]
    assert _events(client_side, "notification", "_interop/note") == [{"n": 1}]
    assert [e["code"] for e in _events(agent_side, "error", "fs/read_text_file")] == [-32002]
    assert _events(client_side, "result", "session/prompt") == [{"stopReason": "end_turn"}, {"stopReason": "cancelled"}]
    assert _events(agent_side, "notification", "session/cancel") == [{"sessionId": "s-1"}]
    assert _events(client_side, "result", "_interop/echo") == [{"value": 7}]
    assert [e["code"] for e in _events(client_side, "error", "session/load")] == [-32601]
    assert _events(client_side, "result", "initialize")[0]["protocolVersion"] == 1


def test_every_session_update_kind_is_sent(sdk: Path) -> None:
    """The turn covers the schema's kinds, not a hand-kept list: a new kind in a newer SDK
    is drawn and sent too."""
    for name in FILES.values():
        root = json.loads((sdk / "schema" / "v1" / name).read_text())
        kinds = {v["properties"]["sessionUpdate"]["const"] for v in root["$defs"]["SessionUpdate"]["oneOf"]}
        drawn = {json.loads(u)["sessionUpdate"] for u in minimal_updates(sdk / "schema" / "v1" / name)}
        assert drawn == kinds and len(kinds) >= 10


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("stability", FILES)
def test_js_client_drives_python_agent(stability: str, style: str, sdk: Path, generated: dict[str, Path], tmp_path: Path) -> None:
    updates_path, updates = _updates_file(sdk, stability, tmp_path)
    agent = [sys.executable, "py_agent.py", str(generated[stability]), _module(stability, style), style, str(updates_path)]
    done = _run(["node", "client.mjs", stability, str(updates_path), *agent])
    records = [json.loads(line[len("INTEROP-RECORD ") :]) for line in done.stderr.splitlines() if line.startswith("INTEROP-RECORD ")]
    assert done.returncode == 0 and len(records) == 2, done.stderr[-3000:]
    js_client, py_agent = records  # the client prints last... or first: tell them apart
    if "invalid" not in js_client:
        js_client, py_agent = py_agent, js_client
    assert js_client["invalid"] == []  # every response of the Python agent passes the SDK's zod schemas
    _check_turn(py_agent, js_client, updates)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("stability", FILES)
def test_python_client_drives_js_agent(stability: str, style: str, sdk: Path, generated: dict[str, Path], tmp_path: Path) -> None:
    updates_path, updates = _updates_file(sdk, stability, tmp_path)
    client = [sys.executable, "py_client.py", str(generated[stability]), _module(stability, style), style]
    done = _run([*client, "node", "agent.mjs", stability, str(updates_path)])
    records = [json.loads(line[len("INTEROP-RECORD ") :]) for line in done.stderr.splitlines() if line.startswith("INTEROP-RECORD ")]
    assert done.returncode == 0 and len(records) == 2, done.stderr[-3000:]
    js_agent, py_client = records
    if "invalid" not in js_agent:
        js_agent, py_client = py_client, js_agent
    assert js_agent["invalid"] == []  # every response of the Python client passes the SDK's zod schemas
    _check_turn(js_agent, py_client, updates)


def test_sdk_rejects_invalid_params_from_python(sdk: Path, generated: dict[str, Path], tmp_path: Path) -> None:
    """The check can fail: a frame the SDK's zod rejects is answered -32602, which the
    Python connection raises as RpcError (here a ``session/new`` without ``cwd``)."""
    script = tmp_path / "bad.py"
    script.write_text(
        f"""
import asyncio, sys
sys.path.insert(0, {str(generated['stable'])!r})
import acp_pydantic.v1 as m

async def main():
    proc = await asyncio.create_subprocess_exec("node", "agent.mjs", "stable", {str(tmp_path / 'u.json')!r},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    conn = m.RPC.connect("client", proc.stdout, proc.stdin)
    serving = asyncio.create_task(conn.serve(object()))
    await conn.request("initialize", {{"protocolVersion": 1}})
    try:
        await conn.request("session/new", {{"mcpServers": []}})
    except m.RpcError as exc:
        print("code", exc.code)
    proc.stdin.close(); await proc.wait(); await serving

asyncio.run(main())
"""
    )
    (tmp_path / "u.json").write_text("[]")
    done = _run([sys.executable, str(script)])
    assert "code -32602" in done.stdout, done.stderr[-2000:]


# -- the transport under the TypeScript SDK: $/cancel_request, lines over 1 MB, order ------------
# Each scenario is played by the same four scripts (INTEROP_SCENARIO selects it), both ways.


def _play(scenario: str, js_client: bool, style: str, generated: dict[str, Path], tmp: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the JS side's record, the Python side's record) of one scenario, stable v1."""
    (tmp / "none.json").write_text("[]")  # the updates of the whole turn: none here
    python = [sys.executable, "py_agent.py" if js_client else "py_client.py", str(generated["stable"]), _module("stable", style), style]
    if js_client:
        args = ["node", "client.mjs", "stable", str(tmp / "none.json"), *python, str(tmp / "none.json")]
    else:
        args = [*python, "node", "agent.mjs", "stable", str(tmp / "none.json")]
    done = subprocess.run(
        args, cwd=HERE, capture_output=True, text=True, timeout=60, env={**os.environ, "INTEROP_SCENARIO": scenario}
    )
    records = [json.loads(line[len("INTEROP-RECORD ") :]) for line in done.stderr.splitlines() if line.startswith("INTEROP-RECORD ")]
    assert done.returncode == 0 and len(records) == 2, done.stderr[-3000:]
    js, py = records if "invalid" in records[0] else records[::-1]
    assert js["invalid"] == []
    return js, py


WAYS = {"js-client": True, "python-client": False}


@pytest.mark.parametrize("style", STYLES)
def test_js_client_cancels_a_python_agent_request(style: str, generated: dict[str, Path], tmp_path: Path) -> None:
    """The SDK sends $/cancel_request when the request's signal aborts: the Python agent's
    handler task is cancelled, and with it the request it was awaiting (fs/read_text_file,
    for which the runtime sends $/cancel_request in turn: the SDK's handler sees its signal
    abort); the prompt is answered -32800 at once, and serving goes on."""
    js, py = _play("cancel", True, style, generated, tmp_path)
    [error] = _events(js, "error", "session/prompt")
    assert error["code"] == -32800 and error["ms"] < 1500, error
    assert _events(py, "cancelled", "session/prompt") == [None]
    assert _events(js, "cancelled", "fs/read_text_file") == [{"code": -32800}]
    assert _events(js, "result", "_interop/echo") == [{"value": 1}]


@pytest.mark.parametrize("style", STYLES)
def test_python_client_cancels_a_js_agent_request(style: str, generated: dict[str, Path], tmp_path: Path) -> None:
    """Cancelling the task that awaits a request sends $/cancel_request for its id: the SDK
    aborts its handler's signal (its -32800 answer comes late, and is dropped quietly); the
    JS agent passes the cancellation on to its own request to the Python client, whose
    handler is cancelled and answered -32800. Serving goes on."""
    js, py = _play("cancel", False, style, generated, tmp_path)
    assert _events(py, "cancelled", "session/prompt") == [None]
    assert _events(js, "cancelled", "session/prompt") == [{"code": -32800}]
    assert _events(py, "cancelled", "fs/read_text_file") == [None]
    assert _events(js, "error", "fs/read_text_file") == [{"code": -32800}]
    assert _events(py, "result", "_interop/echo") == [{"value": 2}]


def _blob(tag: str, n: int) -> dict[str, Any]:
    """What the scripts record for their ``blob(tag, n)`` (their own generator)."""
    peer = import_file(HERE / "peer.py")
    return peer.digest(peer.blob(tag, n))  # type: ignore[no-any-return]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("way", WAYS)
def test_lines_over_a_megabyte_both_ways(way: str, style: str, generated: dict[str, Path], tmp_path: Path) -> None:
    """Params and results over 1 MB of a request each way (an extension request, the
    prompt, fs/read_text_file, fs/write_text_file) and a 1 MB notification, intact."""
    js, py = _play("large", WAYS[way], style, generated, tmp_path)
    client, agent = (js, py) if WAYS[way] else (py, js)
    assert _events(client, "result", "_interop/echo") == [_blob("echo", 1_200_000)]
    assert _events(agent, "request", "session/prompt") == [_blob("prompt", 1_100_000)]
    assert _events(client, "notification", "session/update") == [_blob("prompt", 1_100_000)]
    assert _events(agent, "result", "fs/read_text_file") == [_blob("read", 1_500_000)]
    assert _events(client, "request", "fs/write_text_file") == [_blob("read", 1_500_000)]
    assert _events(client, "result", "session/prompt") == [{"stopReason": "end_turn"}]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("way", WAYS)
def test_a_thousand_updates_in_order(way: str, style: str, generated: dict[str, Path], tmp_path: Path) -> None:
    """1,000 session/update chunks of one turn, the client's handler awaiting 0-2 ms each:
    handled one at a time in arrival order. The Python client has handled every one when
    session_prompt returns (its promise); the SDK's client queues them in order."""
    js, py = _play("order", WAYS[way], style, generated, tmp_path)
    client = js if WAYS[way] else py
    assert _events(client, "order", "session/update") == [list(range(1000))]
    [result] = _events(client, "result", "session/prompt")
    assert result["stopReason"] == "end_turn"
    if not WAYS[way]:
        assert result["handled"] == 1000
