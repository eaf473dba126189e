"""The Streamable HTTP client's waits on event streams all end, over HTTP/1.1 (aiohttp) and
HTTP/2 (libcurl), against servers that misbehave: a stream refused with a body that never
ends, a stream whose status never comes. Every test is bounded in time."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from .harness import served
from .http_peers import Record, app_for, bindings, client_class, new_session, package, prompt, run, start

BOTH = pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return bindings(tmp_path_factory)


def is_stream(scope: Any, session: bool) -> bool:
    names = {k.lower() for k, _ in scope.get("headers", [])}
    return (
        scope["type"] == "http"
        and scope["method"] == "GET"
        and (b"acp-session-id" in names) == session
    )


@BOTH
def test_a_session_stream_refused_with_a_body_that_never_ends_fails_that_request_only(
    v1: ModuleType, http2: bool
) -> None:
    """A server (or a proxy) that refuses a session's stream with ``429`` and a body it
    never ends: the prompt about that session fails with an error naming the status
    within about ``post_timeout`` s, instead of it and every later message waiting on the
    body for ever; the connection goes on."""

    async def main() -> None:
        app = app_for(v1, Record())
        refused = 0

        async def refusing(scope: Any, receive: Any, send: Any) -> None:
            nonlocal refused
            if not is_stream(scope, session=True):
                await app(scope, receive, send)
                return
            refused += 1
            await send({"type": "http.response.start", "status": 429, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"slow down\n", "more_body": True})
            await asyncio.sleep(3600)

        async with served(refusing, http2=http2) as base:
            conn, agent = await start(v1, base + "/acp", client_class(v1)(), http2=http2, post_timeout=0.5)
            sid = (await agent.session_new(new_session(v1))).session_id
            began = asyncio.get_running_loop().time()
            with pytest.raises(package(v1).RemoteError) as failed:
                await asyncio.wait_for(agent.session_prompt(prompt(v1, sid, "count 1")), 10)
            assert asyncio.get_running_loop().time() - began < 3
            assert failed.value.data["status"] == 429
            assert refused >= 1 and not conn.is_closed
            assert (await agent.session_new(new_session(v1))).session_id  # it goes on
            await conn.close()

    run(main())


@BOTH
def test_a_stream_whose_status_never_comes_closes_the_connection_in_time(
    v1: ModuleType, http2: bool
) -> None:
    """A server that takes the connection's stream request and never answers it, not even
    its status: initialize fails (ConnectionClosedError) after ``open_timeout +
    post_timeout`` s, instead of waiting for ever."""

    async def main() -> None:
        app = app_for(v1, Record())

        async def silent(scope: Any, receive: Any, send: Any) -> None:
            if not is_stream(scope, session=False):
                await app(scope, receive, send)
                return
            await asyncio.sleep(3600)

        async with served(silent, http2=http2) as base:
            conn = await v1.RPC.connect_url(base + "/acp", http2=http2, open_timeout=0.5, post_timeout=0.5)
            conn.start(client_class(v1)())
            began = asyncio.get_running_loop().time()
            with pytest.raises(package(v1).ConnectionClosedError) as failed:
                await asyncio.wait_for(
                    v1.RemoteAgent(conn).initialize(v1.InitializeRequest(protocol_version=1)), 10
                )
            assert asyncio.get_running_loop().time() - began < 4
            assert "within 1 s" in str(failed.value)
            await conn.close()

    run(main())
