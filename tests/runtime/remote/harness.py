"""What the remote-transport tests share: a real server (uvicorn, or Hypercorn for HTTP/2)
on a free loopback port serving an ASGI app, for as long as a block runs."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from types import ModuleType, SimpleNamespace
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

pytest.importorskip("starlette", reason="the remote transports need starlette (pip install 'acpgen[remote]')")
pytest.importorskip("websockets", reason="the remote transports need websockets (pip install 'acpgen[remote]')")
pytest.importorskip("httpx", reason="the remote transports need httpx (pip install 'acpgen[remote]')")


@asynccontextmanager
async def served(app: Any, *, http2: bool = False, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve ``app`` on a free port of ``host``; yields ``http://host:port`` (the
    endpoint is ``/acp`` under it). Stops the server on the way out (bounded)."""
    from acpgen.runtime._remote_server import run_server

    port: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(run_server(app, host, 0, http2=http2, started=port.set_result))
    done, _ = await asyncio.wait([port, task], timeout=10, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        task.result()
    assert port.done(), "the server did not start within 10 s"
    try:
        yield f"http://{host}:{port.result()}"
    finally:
        task.cancel()
        await asyncio.wait([task], timeout=10)


def sleep_replaced(monkeypatch: pytest.MonkeyPatch, module: ModuleType, sleep: Callable[..., Awaitable[Any]]) -> None:
    """``module``'s ``asyncio`` with ``sleep`` in place of ``asyncio.sleep``, the rest as
    asyncio has it."""
    fake = SimpleNamespace(**{name: getattr(asyncio, name) for name in dir(asyncio) if not name.startswith("_")})
    fake.sleep = sleep
    monkeypatch.setattr(module, "asyncio", fake)


def pauses_noted(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[float]:
    """The delays ``module`` sleeps, each noted before it sleeps it."""
    pauses: list[float] = []
    sleep = asyncio.sleep

    async def noted(delay: float, *args: Any) -> Any:
        pauses.append(delay)
        return await sleep(delay, *args)

    sleep_replaced(monkeypatch, module, noted)
    return pauses
