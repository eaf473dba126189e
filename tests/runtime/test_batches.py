"""JSON-RPC 2.0 batches (section 6), where the schema declares them: upstream's newer v2
drafts put arrays of messages at the root (``AgentBatchCall``...). The fixture is the
``rpc`` schema with such a root member; without it an array stays an invalid request."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from acpgen import api
from acpgen.normalise import declares_batches

from ..conftest import SCHEMAS, generate, import_file
from .harness import STYLES, get, module, package, raw_peer, run
from .test_connection import PROMPT, Agent

BATCH_MEMBER = {
    "title": "ClientBatchCall",
    "type": "array",
    "minItems": 1,
    "items": {"$ref": "#/$defs/ClientRequest"},
}


def batch_schema(folder: Path) -> Path:
    shutil.copytree(SCHEMAS / "rpc", folder)
    root = json.loads((folder / "schema.json").read_text())
    root["anyOf"] = [*root["anyOf"], BATCH_MEMBER]
    (folder / "schema.json").write_text(json.dumps(root, indent=2))
    return folder


@pytest.fixture(params=STYLES)
def batched(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    style = request.param
    folder = batch_schema(tmp_path_factory.mktemp("batch-schema") / "rpc_batches")
    out = tmp_path_factory.mktemp(f"batches-{style}")
    generate(folder, out, (style,))
    return import_file(out / f"acp_{style}" / "v1.py")


def test_the_ir_records_declared_batches(tmp_path: Path) -> None:
    assert declares_batches({"anyOf": [{"type": "object"}, BATCH_MEMBER]})
    assert declares_batches({"oneOf": [{"type": ["array"]}]})
    assert not declares_batches({"anyOf": [{"type": "object"}]})
    # a malformed type is not a batch member, and no crash (found by make fuzz: ``type: true``)
    assert not declares_batches({"anyOf": [{"type": True}, {"type": 3}, {"type": {"array": 1}}]})
    (plain,) = api.build_ir(SCHEMAS / "rpc")
    (batches,) = api.build_ir(batch_schema(tmp_path / "rpc_batches"))
    assert (plain.protocol.batches, batches.protocol.batches) == (False, True)


def call(rid: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def test_a_batch_is_answered_with_an_array(batched: ModuleType) -> None:
    m = batched

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            await peer.send(
                [
                    call(1, "initialize", {"protocolVersion": 1}),
                    {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
                    call(2, "nope", {}),
                    {"foo": "boo"},
                    call(4, "session/prompt", PROMPT),
                ]
            )
            answer = await peer.recv()
            assert isinstance(answer, list)
            by_id = {a["id"]: a for a in answer}
            assert by_id[1]["result"] == {"protocolVersion": 1}
            assert by_id[2]["error"]["code"] == -32601
            assert by_id[4]["result"] == {"stopReason": "end_turn"}
            assert by_id[None]["error"]["code"] == -32600  # the item {"foo": "boo"}, as in section 6
            assert len(answer) == 4  # nothing for the notification
            # notifications only: no answer at all; an empty array: -32600
            await peer.send([{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}])
            await peer.send(b"[]\n")
            empty = await peer.recv()
            assert empty == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request", "data": "empty batch"}}

    run(scenario())


def test_an_invalid_answer_in_a_batch_fails_only_its_request(batched: ModuleType) -> None:
    """A batch of answers to our requests, one of them invalid: that request fails with
    :class:`InvalidResultError`, the other gets its result, and nothing is answered."""
    m = batched
    pkg = package(m)

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            first = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            a = await peer.recv()
            second = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}))
            b = await peer.recv()
            await peer.send(
                [
                    {"jsonrpc": "2.0", "id": a["id"], "result": {"content": 5}},
                    {"jsonrpc": "2.0", "id": b["id"], "result": {"content": "c"}},
                ]
            )
            with pytest.raises(pkg.InvalidResultError) as err:
                await asyncio.wait_for(first, 5)
            assert (err.value.method, err.value.id) == ("fs/read_text_file", a["id"])
            assert get(await asyncio.wait_for(second, 5), "content", "content") == "c"
            # the connection still serves: the next request is answered as before
            await peer.send(call(7, "initialize", {"protocolVersion": 1}))
            assert await peer.recv() == {"jsonrpc": "2.0", "id": 7, "result": {"protocolVersion": 1}}
            assert not conn.is_closed

    run(scenario())


def test_without_batches_an_array_is_an_invalid_request(tmp_path_factory: pytest.TempPathFactory) -> None:
    m = module("pydantic", tmp_path_factory.mktemp("rpc-pydantic"))
    assert m.RPC.batches is False

    async def scenario() -> None:
        async with raw_peer(m, "agent", Agent(m)) as (conn, peer):
            await peer.send([call(1, "initialize", {"protocolVersion": 1})])
            answer = await peer.recv()
            assert answer["id"] is None and answer["error"]["code"] == -32600
            assert "declares no batches" in answer["error"]["data"]

    run(scenario())


def test_a_batch_inside_a_batch_is_an_invalid_item(batched: ModuleType) -> None:
    m = batched
    init = call(1, "initialize", {"protocolVersion": 1})
    got = m.RPC.parse(json.dumps([[init], init]).encode(), side="agent")
    first, second = got.items
    assert isinstance(first, package(m).FrameError)
    assert (first.code, first.message, first.data, first.answer, first.id) == (-32600, "Invalid request", "a batch item is a JSON object", True, None)
    assert type(second).__name__ == "Request" and second.id == 1


def test_a_batch_item_of_the_other_side_is_unknown_here(batched: ModuleType) -> None:
    m = batched
    update = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "t"}}}
    [item] = m.RPC.parse(json.dumps([update]).encode(), side="agent").items
    assert type(item).__name__ == "MethodNotFound"
    [item] = m.RPC.parse(json.dumps([update]).encode(), side="client").items
    assert type(item).__name__ == "Notification"


@pytest.mark.parametrize("frame", [b"5", b'"x"', b"null", b"true"])
def test_a_frame_neither_object_nor_array(batched: ModuleType, frame: bytes) -> None:
    with pytest.raises(package(batched).FrameError) as caught:
        batched.RPC.parse(frame, side="agent")
    error = caught.value
    assert (error.code, error.message, error.data, error.answer) == (
        -32600,
        "Invalid request",
        "a frame is a JSON object or a non-empty array (a batch)",
        True,
    )
