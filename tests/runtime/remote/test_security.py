"""The server's security over Streamable HTTP (the WebSocket handshake's is in
``test_websocket.py``): Host (421) and Origin (403) checked on every method, the
authentication hook before ``initialize`` (401), and the principal bound to the
connection: another credential naming its id gets 404 on POST, GET and DELETE, as if it
did not exist, and the connection goes on for its owner."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from ..harness import module, package, run
from ..test_connection import Agent
from .harness import served

httpx = pytest.importorskip("httpx")

INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
ALICE = {"Authorization": "Bearer t-alice"}
BOB = {"Authorization": "Bearer t-bob"}


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-security"))


def app_of(m: ModuleType) -> Any:
    pkg = package(m)
    return m.RPC.asgi_app(
        lambda conn: Agent(m, m.RemoteClient(conn)),
        security=pkg.Security.for_bind("127.0.0.1"),
        authenticate=pkg.bearer({"t-alice": "alice", "t-bob": "bob"}),
    )


def one_line(response: Any) -> str:
    lines = response.text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in response.text, response.text
    return str(lines[0])


def test_host_origin_and_credentials_are_checked_on_every_method(m: ModuleType) -> None:
    async def scenario() -> None:
        async with served(app_of(m)) as base, httpx.AsyncClient(timeout=10) as client:
            url = base + "/acp"
            for method in ("POST", "GET", "DELETE"):
                no_token = await client.request(method, url, content=INIT if method == "POST" else None, headers=JSON)
                assert no_token.status_code == 401, (method, no_token.text)
                one_line(no_token)
                origin = await client.request(method, url, content=INIT if method == "POST" else None, headers={**JSON, **ALICE, "Origin": "http://evil.example"})
                assert origin.status_code == 403, (method, origin.text)
                assert "Origin" in one_line(origin)
                host = await client.request(method, url, content=INIT if method == "POST" else None, headers={**JSON, **ALICE, "Host": "evil.example"})
                assert host.status_code == 421, (method, host.text)
                assert "Host" in one_line(host)
            ok = await client.post(url, content=INIT, headers={**JSON, **ALICE, "Origin": "http://localhost:5173"})
            assert ok.status_code == 200, ok.text

    run(scenario(), 30)


def test_another_principal_cannot_use_a_connection_id(m: ModuleType) -> None:
    async def scenario() -> None:
        app = app_of(m)
        async with served(app) as base, httpx.AsyncClient(timeout=10) as client:
            url = base + "/acp"
            opened = await client.post(url, content=INIT, headers={**JSON, **ALICE})
            assert opened.status_code == 200, opened.text
            cid = opened.headers["acp-connection-id"]
            named = {"Acp-Connection-Id": cid}
            prompt = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}})
            post = await client.post(url, content=prompt, headers={**JSON, **BOB, **named})
            assert post.status_code == 404 and one_line(post)
            get = await client.get(url, headers={"Accept": "text/event-stream", **BOB, **named})
            assert get.status_code == 404 and one_line(get)
            delete = await client.delete(url, headers={**BOB, **named})
            assert delete.status_code == 404 and one_line(delete)
            assert cid in app.state.acp.connections  # untouched: its owner goes on
            mine = await client.post(url, content=prompt, headers={**JSON, **ALICE, **named})
            assert mine.status_code == 202, mine.text
            gone = await client.delete(url, headers={**ALICE, **named})
            assert gone.status_code == 202, gone.text
            after = await client.post(url, content=prompt, headers={**JSON, **ALICE, **named})
            assert after.status_code == 404

    run(scenario(), 30)
