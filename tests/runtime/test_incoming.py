"""What the peer sends a connection (acpgen/runtime/_incoming.py), in the three styles, on
the ``rpc`` fixture: answers delivered after the notifications before them, requests
answered once, cancellation by the peer, the bound on work in flight. The connection's
other promises are in ``test_connection.py``."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import SCHEMAS, generate, import_file
from .harness import STYLES, get, line, module, package, raw_peer, run

PROMPT = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


def load(m: ModuleType, name: str, wire: Any) -> Any:
    return m.RPC.codec.load(getattr(m, name), wire)


def update(text: str, session: str = "s") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": {"type": "text", "text": text}}}


def messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level and not r.name.startswith("asyncio")]


class Long:
    """An agent whose prompts run until cancelled (or for ``seconds``)."""

    def __init__(self, m: ModuleType, seconds: float = 60.0) -> None:
        self.m = m
        self.seconds = seconds

    async def session_prompt(self, params: Any) -> Any:
        await asyncio.sleep(self.seconds)
        return load(self.m, "PromptResponse", {"stopReason": "end_turn"})


# ---------------------------------------------------------------- cancellation


def test_the_peer_cancelling_a_request_is_logged_naming_it(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """A cancel for no running request is a debug line naming the id; a cancel that stops a
    handler is an info line naming the request's id and method."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "nope"}})
            await peer.send({"jsonrpc": "2.0", "id": "p", "method": "session/prompt", "params": PROMPT})
            await asyncio.sleep(0.05)
            await peer.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p"}})
            answer = await peer.recv()
            assert answer["id"] == "p" and answer["error"]["code"] == -32800, answer

    caplog.set_level(logging.DEBUG)
    run(scenario())
    assert "$/cancel_request for 'nope': no such request running" in messages(caplog, logging.DEBUG)
    assert "request 'p' (session/prompt) cancelled by the peer" in messages(caplog, logging.INFO)


def without_cancel_request(folder: Path) -> Path:
    """The ``rpc`` fixture without ``$/cancel_request``."""
    shutil.copytree(SCHEMAS / "rpc", folder)
    meta = json.loads((folder / "meta.json").read_text())
    del meta["protocolMethods"]
    (folder / "meta.json").write_text(json.dumps(meta))
    schema = json.loads((folder / "schema.json").read_text())
    del schema["$defs"]["CancelRequestNotification"]
    (folder / "schema.json").write_text(json.dumps(schema))
    return folder


@pytest.mark.parametrize("style", STYLES)
def test_a_cancel_the_schema_does_not_declare_is_honoured_and_a_malformed_one_ignored(
    style: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Where the schema has no ``$/cancel_request``, its params are read as they came: one
    without a ``requestId`` (``{}``, none, an array) cancels nothing (not even a request
    whose id is ``null``) and breaks nothing; one naming a running request cancels it."""
    out = generate(without_cancel_request(tmp_path / "rpc_no_cancel"), tmp_path / "out", (style,))
    m = import_file(out / f"acp_{style}" / "v1.py")

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m, seconds=0.3)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": None, "method": "session/prompt", "params": PROMPT})
            await asyncio.sleep(0.05)
            cancel = {"jsonrpc": "2.0", "method": "$/cancel_request"}
            await peer.send({**cancel, "params": {}}, cancel, {**cancel, "params": [1]})
            answer = await peer.recv()
            assert answer == {"jsonrpc": "2.0", "id": None, "result": {"stopReason": "end_turn"}}
            await peer.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": PROMPT})
            await asyncio.sleep(0.05)
            await peer.send({**cancel, "params": {"requestId": 2}})
            answer = await peer.recv()
            assert answer["id"] == 2 and answer["error"]["code"] == -32800, answer

    caplog.set_level(logging.DEBUG)
    run(scenario())
    assert messages(caplog, logging.DEBUG).count("$/cancel_request without a requestId: nothing cancelled") == 3


# ---------------------------------------------------------------- one answer per request


def test_a_broken_answer_fails_our_request_saying_why(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """An answer to our request whose error object is broken fails the request with
    :class:`InvalidResultError` naming its method, id and what was wrong, and is logged so;
    an answer to no request is logged as rejected."""
    pkg = package(m)

    async def scenario() -> Any:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": "x"}})
            with pytest.raises(pkg.InvalidResultError) as err:
                await asyncio.wait_for(asked, 5)
            assert (err.value.method, err.value.id) == ("fs/read_text_file", sent["id"])
            assert err.value.detail.startswith("Invalid error object: "), err.value.detail
            await peer.send({"jsonrpc": "2.0", "result": {}})
            # answered twice in one read, the second answer invalid: the first counts
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}))
            second = await peer.recv()
            good = {"jsonrpc": "2.0", "id": second["id"], "result": {"content": "c"}}
            await peer.send(line(good) + line({**good, "result": {"content": 5}}))
            assert get(await asyncio.wait_for(asked, 5), "content", "content") == "c"
            await asyncio.sleep(0.05)
            assert not conn.is_closed
            return sent["id"]

    caplog.set_level(logging.WARNING)
    rid = run(scenario())
    broken, unmatched, twice = messages(caplog, logging.WARNING)
    assert broken.startswith(f"the answer to 'fs/read_text_file' (id {rid!r}) is invalid: Invalid error object"), broken
    assert unmatched.startswith("frame rejected: Unmatched response"), unmatched
    assert twice.startswith("frame rejected: invalid result for 'fs/read_text_file'"), twice


def test_a_request_of_an_unknown_method_is_answered_method_not_found(m: ModuleType) -> None:
    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "no/such", "params": {}})
            answer = await peer.recv()
            assert answer == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found", "data": {"method": "no/such"}}}

    run(scenario())


def test_a_call_rejected_unread_is_answered_and_logged(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """A call whose frame is broken is answered with the error, and the warning says what
    was wrong with it."""

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m)) as (conn, peer):
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": "x"})
            answer = await peer.recv()
            assert answer["id"] == 1 and answer["error"]["code"] == -32600, answer

    caplog.set_level(logging.WARNING)
    run(scenario())
    assert messages(caplog, logging.WARNING) == ["frame rejected (answered): Invalid request (params must be an object or an array)"]


# ---------------------------------------------------------------- bounds


def test_each_kind_of_oversized_line_is_logged_saying_what_became_of_it(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """A line over ``max_line``: a request (answered with an error), a notification
    (dropped), the answer to one of our requests (which fails), an answer to no request, a
    line nobody can read (dropped; or, while one of our requests waits, the end of the
    connection). Each warning or error names what was read of it, its size and the limit."""
    pkg = package(m)
    pad = "z" * 2000
    request = line({"jsonrpc": "2.0", "method": "initialize", "params": {"x": pad}, "id": "tail-id"})
    note = line({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": pad}})
    stray = line({"jsonrpc": "2.0", "id": 99, "result": {"content": pad}})
    unknowable = b'["' + pad.encode() + b'"]\n'

    async def scenario() -> None:
        async with raw_peer(m, "agent", Long(m), max_line=1024) as (conn, peer):
            await peer.send(request)
            data = {"reason": "line too long", "size": len(request) - 1, "limit": 1024}
            error = {"code": -32600, "message": "Invalid request", "data": data}
            assert await peer.recv() == {"jsonrpc": "2.0", "id": "tail-id", "error": error}
            await peer.send(note)
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
            sent = await peer.recv()
            answer = line({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": pad}})
            await peer.send(answer)
            with pytest.raises(pkg.OversizedFrameError) as err:
                await asyncio.wait_for(asked, 5)
            assert (err.value.size, err.value.limit) == (len(answer) - 1, 1024)
            await peer.send(stray, unknowable)
            await asyncio.sleep(0.05)
            assert not conn.is_closed
            asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}))
            await peer.recv()
            await peer.send(unknowable)
            with pytest.raises(pkg.ConnectionClosedError):
                await asyncio.wait_for(asked, 5)
            assert conn.is_closed
            return len(answer) - 1, sent["id"]

    caplog.set_level(logging.WARNING)
    answer_size, rid = run(scenario())
    n = len(unknowable) - 1
    assert messages(caplog, logging.WARNING) == [
        f"request 'tail-id' (initialize) is a line of {len(request) - 1} bytes, over the limit of 1024: answered with an error",
        f"notification session/cancel is a line of {len(note) - 1} bytes, over the limit of 1024: dropped",
        f"the answer to 'fs/read_text_file' (id {rid!r}) is a line of {answer_size} bytes, over the limit of 1024",
        f"a line of {len(stray) - 1} bytes (over the limit) answers id 99: no request in flight",
    ]
    assert messages(caplog, logging.ERROR) == [
        f"a line of {n} bytes, over the limit of 1024, could not be read: dropped",
        f"a line of {n} bytes, over the limit of 1024, could not be read: it may answer one of our requests, which would then wait forever",
    ]


def test_notification_handlers_of_two_sessions_awaiting_the_peer_at_the_bound_go_on(m: ModuleType) -> None:
    """``max_in_flight`` handlers running, each waiting for an answer from the peer: reading
    goes on (each handler counts once as waiting), or the answers would never be read."""

    class Asking:
        def __init__(self) -> None:
            self.conn: Any = None
            self.handled: list[str] = []

        async def session_update(self, params: Any) -> None:
            await m.RemoteAgent(self.conn).initialize(load(m, "InitializeRequest", {"protocolVersion": 1}))
            self.handled.append(get(params, "sessionId", "session_id"))

    async def scenario() -> None:
        client = Asking()
        async with raw_peer(m, "client", client, start=False, max_in_flight=2) as (conn, peer):
            client.conn = conn
            conn.start(client)
            await peer.send(update("1", session="a"), update("2", session="b"))
            asks = await peer.recv_all(2)
            for ask in asks:
                await peer.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"protocolVersion": 1}})
            for _ in range(100):
                if len(client.handled) == 2:
                    break
                await asyncio.sleep(0.02)
            assert sorted(client.handled) == ["a", "b"]

    run(scenario(), timeout=20)


# ---------------------------------------------------------------- what is only logged


def test_what_is_only_logged_names_the_method_or_the_id(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """A notification of an unknown method (or of one the other side receives) is ignored,
    a request of one answered -32601 naming it; a request id reused while the first runs is a warning; a notification
    handler raising ``CancelledError`` is a warning, and its lane goes on."""

    class Client:
        def __init__(self) -> None:
            self.handled: list[str] = []
            self.conn: Any = None
            self.contexts: list[tuple[bool, str]] = []

        async def session_update(self, params: Any) -> None:
            text = get(get(params, "update", "update"), "text", "text")
            if text == "cancel me":
                raise asyncio.CancelledError
            self.handled.append(text)

        async def fs_read_text_file(self, params: Any) -> Any:
            context = package(m)._router.current_request()
            self.contexts.append((context.connection is self.conn, context.method))
            await asyncio.sleep(0.3)
            return load(m, "ReadTextFileResponse", {"content": "x"})

    async def scenario() -> None:
        client = Client()
        async with raw_peer(m, "client", client, start=False) as (conn, peer):
            client.conn = conn
            conn.start(client)
            await peer.send({"jsonrpc": "2.0", "method": "no/such", "params": {}})
            await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
            await peer.send({"jsonrpc": "2.0", "id": 1, "method": "no/such", "params": {}})
            answer = await peer.recv()
            assert answer == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found", "data": {"method": "no/such"}}}
            read = {"jsonrpc": "2.0", "id": "r", "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/a"}}
            await peer.send({**read, "id": "q"}, read, read)
            assert sorted(a["id"] for a in await peer.recv_all(3)) == ["q", "r", "r"]
            await peer.send(update("cancel me"), update("after"))
            for _ in range(100):
                if client.handled:
                    break
                await asyncio.sleep(0.02)
            assert client.handled == ["after"]
            assert conn._load() == 0
            assert client.contexts == [(True, "fs/read_text_file")] * 3

    caplog.set_level(logging.WARNING)
    run(scenario())
    assert messages(caplog, logging.WARNING) == [
        "notification of unknown method 'no/such' ignored",
        "notification of unknown method 'session/cancel' ignored",
        "request id 'r' reused while the first is running",
        "handler of notification 'session/update' raised CancelledError",
    ]
