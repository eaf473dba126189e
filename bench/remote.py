"""The remote-transport benchmark (part of ``make bench``; alone: ``bench/run.py --remote``):
acpgen's remote connections against the Python SDK's (``agent-client-protocol``), on the
same transport, the agent in a server process of its own and the client in this one.

Transports: WebSocket (uvicorn), Streamable HTTP over HTTP/1.1 with SSE (uvicorn) and over
HTTP/2 (Hypercorn, cleartext with prior knowledge). Both sides are served by the same
server with the same settings (``run_server`` of acpgen's runtime: uvicorn, or Hypercorn
for HTTP/2); acpgen's app is ``RPC.asgi_app(...)``, its client ``RPC.connect_url(...)``;
the SDK's app is ``acp.http.asgi.create_asgi_app(...)``, its clients
``acp.ws.create_websocket_stream`` and ``acp.http.create_http_stream`` (with an
``httpx.AsyncClient`` speaking only HTTP/1.1, or only HTTP/2) under
``acp.connect_to_agent``.

* **Prompt turn**: after ``initialize`` and ``session/new``, a ``session/prompt`` whose
  agent streams ``chunks`` ``agent_message_chunk`` updates, then answers; the time from
  the prompt sent to its result, every update handled by the client by then.
* **Small requests**: ``count`` sequential ``authenticate`` requests, each awaited before
  the next (``initialize`` opens a connection on Streamable HTTP, so it cannot be
  repeated there).
* **Memory per idle connection**: the server's resident memory (``VmRSS``) grown by
  ``idle`` initialized, idle connections, per connection (a fresh server; a few
  connections opened first, so that what a first connection loads is not counted).
* **Connections held**: ``n`` connections (50, 100, 200, 400, ...), each sending one
  small request a second at its own phase for ``window`` seconds; the largest ``n`` at
  which the 99th percentile of a request's round trip stays within 100 ms, with no
  request failed (a fresh server; a step that misses is measured once more; bounded by
  ``MAX_HELD``). The clients of all ``n`` connections run in this process.

Both ends of every remote figure run on the same event loop: uvloop's when it is installed
(what the runtime's ``run`` and uvicorn pick then), asyncio's own otherwise; with uvloop,
the small requests over WebSocket are measured on asyncio's own loop too (both ends).

The server is this file run as ``remote.py serve <impl> <transport> [<package>]``: it prints
its port and serves until its stdin closes (on uvloop when ``ACPGEN_BENCH_UVLOOP`` is 1).
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import importlib.util
import os
import random
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Coroutine, TypeVar

from acpgen.runtime._remote import loop_factory, run

T = TypeVar("T")
#: whether the remote figures run on uvloop (both ends): when it is installed
UVLOOP = loop_factory() is not None


def on_loop(main: Coroutine[Any, Any, T], uvloop: bool = UVLOOP) -> T:
    """Run ``main`` on uvloop (``uvloop``) or asyncio's own loop."""
    return run(main, uvloop=uvloop)


TRANSPORTS = {"ws": "WebSocket", "http1": "HTTP/1.1 + SSE", "http2": "HTTP/2"}
CHUNK = "chunk of text"
#: the ramp of the connections-held figure stops here
MAX_HELD = 3200
P99_LIMIT = 0.100


# ---------------------------------------------------------------- the server process


def load_package(path: Path, name: str) -> Any:
    """A generated ``v1`` module with its package (its runtime is imported relatively)."""
    spec = importlib.util.spec_from_file_location(name, path / "__init__.py", submodule_search_locations=[str(path)])
    assert spec and spec.loader
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{name}.v1")


def acpgen_app(v1: Any) -> Any:
    sessions = iter(range(1, 1 << 62))
    content = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text=CHUNK))

    class Agent(v1.Agent):  # type: ignore[misc, name-defined]
        def __init__(self, conn: Any) -> None:
            self.client = v1.RemoteClient(conn)

        async def initialize(self, params: Any) -> Any:
            return v1.InitializeResponse(protocol_version=1)

        async def authenticate(self, params: Any) -> Any:
            return v1.AuthenticateResponse()

        async def session_new(self, params: Any) -> Any:
            return v1.NewSessionResponse(session_id=f"s{next(sessions)}")

        async def session_prompt(self, params: Any) -> Any:
            update = v1.SessionNotification(session_id=params.session_id, update=content)
            for _ in range(int(params.prompt[0].text)):
                await self.client.session_update(update)
            return v1.PromptResponse(stop_reason="end_turn")

    return v1.RPC.asgi_app(Agent)


def sdk_app() -> Any:
    import acp
    from acp import schema
    from acp.http.asgi import create_asgi_app

    sessions = iter(range(1, 1 << 62))

    class Agent:
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
            return schema.InitializeResponse(protocol_version=protocol_version)

        async def authenticate(self, method_id: str, **kwargs: Any) -> Any:
            return schema.AuthenticateResponse()

        async def new_session(self, cwd: str, **kwargs: Any) -> Any:
            return schema.NewSessionResponse(session_id=f"s{next(sessions)}")

        async def prompt(self, session_id: str, prompt: Any, **kwargs: Any) -> Any:
            for _ in range(int(prompt[0].text)):
                await self.conn.session_update(session_id, acp.update_agent_message_text(CHUNK))
            return schema.PromptResponse(stop_reason="end_turn")

    return create_asgi_app(Agent)


def serve(impl: str, transport: str, package: str | None) -> None:
    """The server process: print ``PORT <n>`` once listening; exit when stdin closes."""
    import threading

    if impl == "acpgen":
        assert package
        v1 = load_package(Path(package), "bench_remote_acpgen")
        app = acpgen_app(v1)
    else:
        app = sdk_app()
    from acpgen.runtime._remote_server import run_server  # the same server for both sides

    def started(port: int) -> None:
        print(f"PORT {port}", flush=True)

    profile = None
    if os.environ.get("ACPGEN_BENCH_PROFILE"):  # where the server's time goes (cProfile)
        import cProfile

        profile = cProfile.Profile()
        profile.enable()

    def watch() -> None:
        sys.stdin.read()
        if profile is not None:
            profile.disable()
            profile.dump_stats(os.environ["ACPGEN_BENCH_PROFILE"])
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    on_loop(run_server(app, "127.0.0.1", 0, http2=transport == "http2", started=started), os.environ.get("ACPGEN_BENCH_UVLOOP") == "1")


class Server:
    """A server process (see :func:`serve`) and its address."""

    def __init__(self, impl: str, transport: str, package: Path | None, uvloop: bool = UVLOOP) -> None:
        self.log = tempfile.TemporaryFile()
        args = [sys.executable, str(Path(__file__).resolve()), "serve", impl, transport]
        if package is not None:
            args.append(str(package))
        env = {**os.environ, "ACPGEN_BENCH_UVLOOP": "1" if uvloop else "0"}
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            self.log.seek(0)
            raise SystemExit(f"the {impl} {transport} server did not start:\n{self.log.read().decode()[-3000:]}")
        port = int(line.split()[1])
        scheme = "ws" if transport == "ws" else "http"
        self.url = f"{scheme}://127.0.0.1:{port}/acp"

    def rss(self) -> int:
        """The server's resident memory, bytes."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


# ---------------------------------------------------------------- the clients


class Peer:
    """One connection of one side: ``request()`` one small request, ``turn(n)`` a prompt
    turn of ``n`` chunks (returns the updates handled by its result), ``close()``."""

    request: Callable[[], Awaitable[Any]]
    turn: Callable[[int], Awaitable[int]]
    close: Callable[[], Awaitable[None]]


async def acpgen_peer(v1: Any, url: str, transport: str) -> Peer:
    conn = await v1.RPC.connect_url(url, http2=transport == "http2")
    seen = [0]

    class Client(v1.Client):  # type: ignore[misc, name-defined]
        async def session_update(self, params: Any) -> None:
            seen[0] += 1

    conn.start(Client())
    agent = v1.RemoteAgent(conn)
    await agent.initialize(v1.InitializeRequest(protocol_version=1))
    session = (await agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
    auth = v1.AuthenticateRequest(method_id="bench")

    async def turn(chunks: int) -> int:
        seen[0] = 0
        await agent.session_prompt(v1.PromptRequest(session_id=session, prompt=[v1.TextContentBlock(text=str(chunks))]))
        return seen[0]

    async def close() -> None:
        await conn.close()

    peer = Peer()
    peer.request, peer.turn, peer.close = (lambda: agent.authenticate(auth)), turn, close
    return peer


async def sdk_peer(url: str, transport: str) -> Peer:
    import acp

    if transport == "ws":
        from acp.ws import create_websocket_stream

        stream = await create_websocket_stream(url)
    else:
        import httpx
        from acp.http import create_http_stream

        h2 = transport == "http2"
        client = httpx.AsyncClient(http1=not h2, http2=h2, timeout=httpx.Timeout(None))
        stream = create_http_stream(url, client=client)
    seen = [0]

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            seen[0] += 1

    conn = acp.connect_to_agent(Client(), stream)
    await conn.initialize(protocol_version=1)
    session = (await conn.new_session(cwd="/", mcp_servers=[])).session_id

    async def turn(chunks: int) -> int:
        seen[0] = 0
        await conn.prompt(session_id=session, prompt=[acp.text_block(str(chunks))])
        return seen[0]

    async def close() -> None:
        await conn.close()
        await stream.close()
        if transport != "ws":
            await client.aclose()

    peer = Peer()
    peer.request, peer.turn, peer.close = (lambda: conn.authenticate(method_id="bench")), turn, close
    return peer


def connector(impl: str, v1: Any, server: Server, transport: str) -> Callable[[], Awaitable[Peer]]:
    if impl == "acpgen":
        return lambda: acpgen_peer(v1, server.url, transport)
    return lambda: sdk_peer(server.url, transport)


@asynccontextmanager
async def peers(connect: Callable[[], Awaitable[Peer]], n: int, held: list[Peer] | None = None) -> AsyncIterator[list[Peer]]:
    """``n`` connections, opened 50 at a time, closed on the way out (unless ``held`` keeps them)."""
    out = held if held is not None else []
    try:
        while len(out) < n:
            out += await asyncio.gather(*(connect() for _ in range(min(50, n - len(out)))))
        yield out
    finally:
        if held is None:
            await asyncio.gather(*(p.close() for p in out), return_exceptions=True)


# ---------------------------------------------------------------- the measures


async def timed_turn(connect: Callable[[], Awaitable[Peer]], chunks: int) -> float:
    async with peers(connect, 1) as (peer,):
        await peer.turn(10)  # warm: the session's streams open, the models built
        start = time.perf_counter()
        seen = await asyncio.wait_for(peer.turn(chunks), 300)
        elapsed = time.perf_counter() - start
    assert seen == chunks, (seen, chunks)
    return elapsed


async def timed_requests(connect: Callable[[], Awaitable[Peer]], count: int) -> float:
    async with peers(connect, 1) as (peer,):
        await peer.request()
        start = time.perf_counter()
        for _ in range(count):
            async with asyncio.timeout(30):  # a bound without a task of its own per request
                await peer.request()
        return time.perf_counter() - start


async def idle_memory(server: Server, connect: Callable[[], Awaitable[Peer]], idle: int) -> float:
    """Bytes of server memory per idle connection."""
    held: list[Peer] = []
    async with peers(connect, 10, held):
        pass
    await asyncio.sleep(0.5)
    before = server.rss()
    try:
        async with peers(connect, 10 + idle, held):
            await asyncio.sleep(1.0)
            after = server.rss()
    finally:
        await asyncio.gather(*(p.close() for p in held), return_exceptions=True)
    return (after - before) / idle


async def connections_held(connect: Callable[[], Awaitable[Peer]], window: float, log: Callable[[str], None]) -> int:
    """The largest ``n`` of the ramp whose p99 stays within the limit (0 if none)."""
    held: list[Peer] = []
    good = 0
    try:
        n = 50
        while n <= MAX_HELD:
            try:
                async with peers(connect, n, held):
                    pass
            except Exception as exc:  # noqa: BLE001 - a refused connection ends the ramp
                log(f"    {n} connections: opening failed ({exc!r})")
                break
            for attempt in (1, 2):  # a step that fails is measured once more: a busy spell of a shared machine is not the server's limit
                p99, errors = await paced(held, window)
                log(f"    {n} connections: p99 {p99 * 1000:.1f} ms, {errors} failed")
                if p99 <= P99_LIMIT and not errors:
                    break
            if p99 > P99_LIMIT or errors:
                break
            good = n
            n *= 2
    finally:
        await asyncio.gather(*(p.close() for p in held), return_exceptions=True)
    return good


async def paced(held: list[Peer], window: float) -> tuple[float, int]:
    """Each connection sends one small request a second, at its own phase, for ``window``
    seconds: the 99th percentile of the round trips, and how many failed."""
    latencies: list[float] = []
    errors = [0]
    loop = asyncio.get_running_loop()
    end = loop.time() + window + 1.0

    async def one(peer: Peer, phase: float) -> None:
        due = loop.time() + phase
        while due < end:
            await asyncio.sleep(max(0.0, due - loop.time()))
            start = time.perf_counter()
            try:
                await asyncio.wait_for(peer.request(), 10)
            except Exception:  # noqa: BLE001 - counted
                errors[0] += 1
            latencies.append(time.perf_counter() - start)
            due += 1.0

    rng = random.Random(7)
    await asyncio.gather(*(one(p, rng.random()) for p in held))
    latencies.sort()
    return latencies[int(0.99 * (len(latencies) - 1))], errors[0]


# ---------------------------------------------------------------- the figures


def stdio_figures(runs: int, v1: Any, figure: Callable[..., dict[str, Any]], chunks: int = 10_000, count: int = 5_000) -> list[dict[str, Any]]:
    """The stdio rows to set beside the remote ones: bench/connection.py's prompt turn and
    small requests (``initialize``), both ends in this process over a socket pair."""
    import connection

    turns: dict[str, list[float]] = {"acpgen": [], "sdk": []}
    requests: dict[str, list[float]] = {"acpgen": [], "sdk": []}
    for i in range(runs):
        for impl in ("acpgen", "sdk") if i % 2 == 0 else ("sdk", "acpgen"):
            if impl == "acpgen":
                turns[impl].append(chunks / asyncio.run(connection.acpgen_turn(v1, chunks)))
                requests[impl].append(count / asyncio.run(connection.acpgen_requests(v1, count)))
            else:
                turns[impl].append(chunks / asyncio.run(connection.sdk_turn(chunks)))
                requests[impl].append(count / asyncio.run(connection.sdk_requests(count)))
    return [
        figure(f"stdio (socket pair, one process): prompt turn, {chunks:,} chunks", turns["acpgen"], turns["sdk"], "msg/s", ">=1.5x", True),
        figure(f"stdio (socket pair, one process): {count:,} sequential small requests (initialize)", requests["acpgen"], requests["sdk"], "req/s", ">=1.5x", True),
    ]


async def probe(connect: Callable[[], Awaitable[Peer]]) -> str | None:
    """Why a side cannot be measured on a transport (``None``: it can)."""
    try:
        peer = await asyncio.wait_for(connect(), 30)
        await asyncio.wait_for(peer.request(), 30)
        await peer.close()
    except Exception as exc:  # noqa: BLE001 - reported, and the transport's rows left out
        return f"{type(exc).__name__}: {exc}"
    return None


def asyncio_loop_requests(runs: int, v1: Any, package: Path, figure: Callable[..., dict[str, Any]], count: int, log: Callable[[str], None]) -> dict[str, Any]:
    """The small requests over WebSocket with both ends on asyncio's own loop."""
    servers = {"acpgen": Server("acpgen", "ws", package, uvloop=False), "sdk": Server("sdk", "ws", None, uvloop=False)}
    requests: dict[str, list[float]] = {"acpgen": [], "sdk": []}
    try:
        connect = {impl: connector(impl, v1, s, "ws") for impl, s in servers.items()}
        for i in range(runs):
            for impl in ("acpgen", "sdk") if i % 2 == 0 else ("sdk", "acpgen"):
                requests[impl].append(count / on_loop(timed_requests(connect[impl], count), False))
        log(f"  WebSocket, asyncio's own loop: requests {requests}")
    finally:
        for s in servers.values():
            s.stop()
    return figure(f"WebSocket, asyncio's own loop: {count:,} sequential small requests (authenticate)", requests["acpgen"], requests["sdk"], "req/s", None, True)


def figures(
    runs: int,
    v1: Any,
    package: Path,
    figure: Callable[..., dict[str, Any]],
    transports: tuple[str, ...] = tuple(TRANSPORTS),
    held: tuple[str, ...] = ("ws", "http1", "http2"),
    chunks: int = 10_000,
    count: int = 5_000,
    idle: int = 200,
    window: float = 4.0,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
) -> list[dict[str, Any]]:
    """The figures of this benchmark: for each transport, the prompt turn and the small
    requests (medians over ``runs``, the two sides in turns); memory per idle connection on
    each transport; connections held on ``held``."""
    out: list[dict[str, Any]] = []
    skipped: list[str] = []
    for transport in transports:
        name = TRANSPORTS[transport]
        servers = {"acpgen": Server("acpgen", transport, package), "sdk": Server("sdk", transport, None)}
        try:
            connect = {impl: connector(impl, v1, s, transport) for impl, s in servers.items()}
            failed = {impl: on_loop(probe(c)) for impl, c in connect.items()}
            if any(failed.values()):
                log(f"  {name}: not measured ({'; '.join(f'{i}: {why}' for i, why in failed.items() if why)})")
                skipped.append(transport)
                continue
            turns: dict[str, list[float]] = {"acpgen": [], "sdk": []}
            requests: dict[str, list[float]] = {"acpgen": [], "sdk": []}
            for i in range(runs):  # in turns: acpgen first in one round, the SDK in the next
                for impl in ("acpgen", "sdk") if i % 2 == 0 else ("sdk", "acpgen"):
                    turns[impl].append(chunks / on_loop(timed_turn(connect[impl], chunks)))
                    requests[impl].append(count / on_loop(timed_requests(connect[impl], count)))
            log(f"  {name}: turn {turns}, requests {requests}")
        finally:
            for s in servers.values():
                s.stop()
        out.append(figure(f"{name}: prompt turn, {chunks:,} chunks, agent in its own process", turns["acpgen"], turns["sdk"], "msg/s", ">=1.5x", True))
        out.append(figure(f"{name}: {count:,} sequential small requests (authenticate)", requests["acpgen"], requests["sdk"], "req/s", ">=1.5x", True))
        if transport == "ws" and UVLOOP:
            out.append(asyncio_loop_requests(runs, v1, package, figure, count, log))
    for transport in (t for t in transports if t not in skipped):
        per: dict[str, list[float]] = {"acpgen": [], "sdk": []}
        for i in range(max(1, runs // 2)):
            for impl in ("acpgen", "sdk") if i % 2 == 0 else ("sdk", "acpgen"):
                server = Server(impl, transport, package if impl == "acpgen" else None)
                try:
                    per[impl].append(on_loop(idle_memory(server, connector(impl, v1, server, transport), idle)) / 1024)
                finally:
                    server.stop()
        log(f"  {TRANSPORTS[transport]}: KiB per idle connection {per}")
        out.append(figure(f"{TRANSPORTS[transport]}: server memory per idle connection ({idle} open)", per["acpgen"], per["sdk"], "KiB", None, False))
    for transport in (t for t in held if t in transports and t not in skipped):
        counts: dict[str, list[float]] = {}
        for impl in ("acpgen", "sdk"):
            log(f"  {TRANSPORTS[transport]}, {impl}: connections held")
            server = Server(impl, transport, package if impl == "acpgen" else None)
            try:
                counts[impl] = [float(on_loop(connections_held(connector(impl, v1, server, transport), window, log)))]
            finally:
                server.stop()
        out.append(figure(
            f"{TRANSPORTS[transport]}: connections held at 1 request/s each, p99 <= {P99_LIMIT * 1000:.0f} ms (ramp 50, 100, 200, ... {MAX_HELD:,})",
            counts["acpgen"], counts["sdk"], "conns", None, True,
        ))  # fmt: skip
    return out


if __name__ == "__main__" and len(sys.argv) >= 4 and sys.argv[1] == "serve":
    gc.collect()
    serve(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
