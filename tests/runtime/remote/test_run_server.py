"""``run_server``: what the servers it starts allow one long-lived ACP connection."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .harness import served

pytest.importorskip("hypercorn", reason="HTTP/2 needs hypercorn (pip install 'acpgen[remote]')")
pytest.importorskip("h2", reason="HTTP/2 needs h2 (pip install 'acpgen[remote]')")


async def _answer(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 202, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def test_http2_connection_outlives_a_thousand_requests() -> None:
    """An ACP connection over HTTP/2 sends every message as a request on one TCP
    connection: Hypercorn's own default ends a connection after 1,000 requests (GOAWAY),
    which would fail the requests in flight and end the connection's streams."""
    import httpx

    async def go() -> None:
        async with served(_answer, http2=True) as base:
            async with httpx.AsyncClient(http1=False, http2=True) as client:
                for _ in range(1_100):
                    response = await client.post(base + "/acp", content=b"{}")
                    assert response.status_code == 202
                    assert response.http_version == "HTTP/2"

    asyncio.run(asyncio.wait_for(go(), 60))
