"""Serving agents remotely: one ASGI endpoint (``/acp``) that speaks ACP over WebSocket
(``GET`` with ``Upgrade: websocket``) and Streamable HTTP (``POST``, ``GET`` SSE streams,
``DELETE``), per the transport RFD. Reached through ``Rpc.asgi_app``; Starlette routes it
(mount it in any Starlette or FastAPI app with :meth:`AcpServer.routes`), uvicorn or
Hypercorn (for HTTP/2) serves it (:func:`run_server`).

Every remote connection is a :class:`~._connection.Connection` over a
:class:`~._channel.Channel`: the same core as over stdio. The server:

* checks ``Host`` and ``Origin`` (:class:`~._remote.Security`; loopback-only by default
  for a loopback bind) and authenticates through a hook before ``initialize`` or the
  WebSocket accept; the principal is bound to the connection, and a request naming the
  connection with another credential is answered 404, as if it did not exist;
* reads at most ``max_body`` bytes of a body (413) or a WebSocket message (1009), holds at
  most ``stream_queue`` messages per outgoing stream (the agent's sends wait beyond) and
  ``max_streams`` event streams per Streamable HTTP connection (429 beyond), closes
  connections idle for ``idle_timeout`` s;
* answers a bad request with its status and one line, logs what failed in itself, and
  goes on serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable

from ._remote import (
    Refused,
    Security,
    ServerOptions,
    authenticate,
    listening_socket,
    need,
    new_id,
)

if TYPE_CHECKING:
    from ._channel import Channel
    from ._connection import Connection
    from ._jsonrpc import Rpc
    from ._versions import Versions

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Served:
    """One remote connection being served: its id, principal and connection; ``kind``
    "ws" or "http"; ``streams`` the streams or sockets open on it (not idle while any
    is); ``state`` what its transport keeps (the HTTP channel)."""

    id: str
    principal: str
    kind: str
    conn: Connection
    state: Any = None
    streams: int = 0
    last_seen: float = field(default_factory=time.monotonic)

    def touch(self) -> None:
        self.last_seen = time.monotonic()


class AcpServer:
    """The remote endpoint for agents of one :class:`Rpc`: ``serve`` is a
    :class:`Versions` or a callable giving the handler (an ``Agent``) for each new
    connection (``serve(conn)``). ``options`` as :class:`~._remote.ServerOptions`."""

    def __init__(
        self,
        rpc: Rpc,
        serve: Versions | Callable[[Connection], Any],
        options: ServerOptions,
    ) -> None:
        need("starlette", "server")
        self.rpc = rpc
        self.serve = serve
        self.options = options
        self.security = options.security or Security()
        self.connections: dict[str, Served] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._http: Any = None

    # -- connections ---------------------------------------------------------------
    async def admit(self, headers: dict[str, str]) -> str:
        """Check Host and Origin, then authenticate: the principal (:class:`Refused`)."""
        self.security.check(headers)
        return await authenticate(self.options.authenticate, headers)

    def open(
        self, channel: Channel, principal: str, kind: str, cid: str | None = None
    ) -> Served:
        """A connection over ``channel`` serving a new handler, registered under a new id
        until it closes."""
        from ._versions import Versions

        conn = self.rpc.over("agent", channel, **self.options.connection)
        served = Served(cid or new_id(), principal, kind, conn)
        conn.remote = served
        self.connections[served.id] = served
        conn.start(self.serve if isinstance(self.serve, Versions) else self.serve(conn))
        conn.closed.add_done_callback(lambda _: self._forget(served))
        self._sweep_later()
        return served

    def _forget(self, served: Served) -> None:
        if self.connections.get(served.id) is served:
            del self.connections[served.id]

    def find(self, cid: str | None, principal: str) -> Served:
        """The connection named ``cid``, for ``principal``: 400 without an id, 404 when
        unknown, closed or another principal's."""
        if not cid:
            raise Refused(400, "missing Acp-Connection-Id header")
        served = self.connections.get(cid)
        if served is None or served.principal != principal or served.conn.is_closed:
            raise Refused(404, "unknown Acp-Connection-Id")
        served.touch()
        return served

    def _sweep_later(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        """Close the connections idle (no traffic, no open stream) past the timeout."""
        idle = self.options.idle_timeout
        while self.connections:
            await asyncio.sleep(min(idle / 4, 5.0))
            now = time.monotonic()
            for served in list(self.connections.values()):
                if served.streams == 0 and now - served.last_seen > idle:
                    log.info("connection %s idle for %.0f s: closed", served.id, idle)
                    self._forget(served)
                    asyncio.get_running_loop().create_task(
                        served.conn.close(f"idle for {idle:g} s")
                    )

    async def close(self) -> None:
        """Close every connection (the server is shutting down)."""
        conns = [s.conn for s in self.connections.values()]
        self.connections.clear()
        if conns:
            await asyncio.gather(
                *(c.close("the server is shutting down") for c in conns),
                return_exceptions=True,
            )
        if self._sweeper is not None:
            self._sweeper.cancel()

    # -- ASGI --------------------------------------------------------------------------
    def routes(self, path: str | None = None) -> list[Any]:
        """Starlette routes serving the endpoint at ``path`` (default: the options')."""
        routing = need("starlette.routing", "server")
        from ._websocket import WebSocketApp

        where = path or self.options.path or "/acp"
        return [
            routing.Route(
                where, self._http_endpoint, methods=["GET", "POST", "DELETE"]
            ),
            routing.WebSocketRoute(where, WebSocketApp(self)),
        ]

    def app(self) -> Any:
        """A Starlette application serving the endpoint (closing its connections on
        shutdown)."""
        applications = need("starlette.applications", "server")

        @contextlib.asynccontextmanager
        async def lifespan(_: Any) -> AsyncIterator[None]:
            try:
                yield
            finally:
                await self.close()

        return applications.Starlette(routes=self.routes(), lifespan=lifespan)

    async def _http_endpoint(self, request: Any) -> Any:
        responses = need("starlette.responses", "server")
        try:
            if self._http is None:
                from ._http_server import HttpEndpoint

                self._http = HttpEndpoint(self)
            return await self._http.handle(request)
        except Refused as refused:
            return responses.PlainTextResponse(refused.reason + "\n", refused.status)
        except Exception:  # noqa: BLE001 - one line to the peer, the trace to the log
            log.exception("%s %s failed", request.method, request.url.path)
            return responses.PlainTextResponse("internal server error\n", 500)


def asgi_app(
    rpc: Rpc, serve: Versions | Callable[[Connection], Any], **options: Any
) -> Any:
    """The Starlette app of an :class:`AcpServer` (``options``: :class:`ServerOptions`);
    its ``state.acp`` is the server."""
    server = AcpServer(rpc, serve, ServerOptions(**options))
    app = server.app()
    app.state.acp = server
    return app


#: seconds a stopping server gives its open requests (event streams included) to end
SHUTDOWN_GRACE = 3.0


async def _close_connections(app: Any) -> None:
    """Close the connections of an :class:`AcpServer`'s app (its event streams end at
    once, not at the end of the server's grace period); any other app is left alone."""
    acp = getattr(getattr(app, "state", None), "acp", None)
    if isinstance(acp, AcpServer):
        await acp.close()


async def run_server(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    http2: bool = False,
    log_level: str = "warning",
    started: Callable[[int], None] | None = None,
) -> None:
    """Serve an ASGI ``app`` on ``host``:``port`` until cancelled: with uvicorn
    (HTTP/1.1 and WebSocket), or with ``http2`` Hypercorn (HTTP/2 over cleartext with
    prior knowledge, HTTP/1.1 and WebSocket). ``port`` 0 picks a free port;
    ``started(port)`` is called once it listens. Cancelled, it closes an
    :class:`AcpServer`'s connections, gives the requests still open
    :data:`SHUTDOWN_GRACE` s to end, and ends cancelled."""
    if http2:
        await _run_hypercorn(app, host, port, log_level, started)
        return
    uvicorn = need("uvicorn", "server")
    _quiet_denials()
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="auto",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    server = uvicorn.Server(config)
    # its own socket: accepted connections read what a message needs (see SizedSocket)
    task = asyncio.ensure_future(server.serve(sockets=[listening_socket(host, port)]))
    try:
        while not server.started:
            if task.done():
                task.result()
                return
            await asyncio.sleep(0.01)
        if started is not None:
            sock = server.servers[0].sockets[0]
            started(sock.getsockname()[1])
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await _close_connections(app)
        server.should_exit = True
        try:
            await asyncio.wait_for(task, SHUTDOWN_GRACE + 5)
        except Exception:  # noqa: BLE001 - stopped anyway: the task is gone
            log.debug("uvicorn's shutdown failed", exc_info=True)
        raise


class _Denials(logging.Filter):
    """uvicorn logs an error for every WebSocket refused with an HTTP status (401, 403,
    421): a refusal is the server working, not failing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "returned without completing handshake" not in record.getMessage()


def _quiet_denials() -> None:
    errors = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _Denials) for f in errors.filters):
        errors.addFilter(_Denials())


def mend_hypercorn_h2() -> None:
    """Bound what Hypercorn's HTTP/2 holds for a stream whose client stops reading, and
    keep a request's body that arrives after its answer from failing the connection.

    Hypercorn (0.17, 0.18) lets the app's writer of a stream go on each time the stream
    is polled for data, even when the client's flow-control window is 0 and nothing was
    sent: a client that stops reading a stream (a slow one, or a hostile one) makes the
    server take every message the agent writes into memory. With this, the writer goes
    on only once the stream's buffer has drained under its low-water mark (the fix
    Hypercorn's fork anycorn made). :func:`run_server` applies it; call it before
    serving ``RPC.asgi_app`` under Hypercorn yourself."""
    h2 = need("hypercorn.protocol.h2", "http2")
    stream_buffer = h2.StreamBuffer
    if getattr(stream_buffer.pop, "mended", False):
        return
    low_water = h2.BUFFER_LOW_WATER

    async def pop(self: Any, max_length: int) -> bytes:
        length = min(len(self.buffer), max_length)
        data = bytes(self.buffer[:length])
        del self.buffer[:length]
        if len(self.buffer) < low_water:  # drained, not merely polled
            await self._paused.set()
        if not self.buffer:
            await self._is_empty.set()
        return data

    pop.mended = True  # type: ignore[attr-defined]
    stream_buffer.pop = pop

    # A request answered before its body is read (a POST refused with 401, 404 or 413)
    # has the rest of its body arrive once its stream is closed: Hypercorn then fails
    # the whole connection (KeyError), cutting every other request multiplexed on it.
    # That data is counted for flow control and dropped instead.
    protocol = h2.H2Protocol
    handle_events = protocol._handle_events
    data_received = need("h2.events", "http2").DataReceived

    async def _handle_events(self: Any, events: list[Any]) -> None:
        kept: list[Any] = []
        for event in events:
            if isinstance(event, data_received) and event.stream_id not in self.streams:
                if kept:  # a request just before it opens its stream: handled first
                    await handle_events(self, kept)
                    kept = []
                if event.stream_id not in self.streams:
                    self.connection.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
                    continue
            kept.append(event)
        await handle_events(self, kept)

    protocol._handle_events = _handle_events


async def _run_hypercorn(
    app: Any,
    host: str,
    port: int,
    log_level: str,
    started: Callable[[int], None] | None,
) -> None:
    import os
    import socket

    config_mod = need("hypercorn.config", "http2")
    asyncio_mod = need("hypercorn.asyncio", "http2")
    mend_hypercorn_h2()
    config = config_mod.Config()
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(
        128
    )  # connections wait for Hypercorn's accept: started() means listening
    sock.set_inheritable(True)
    # Hypercorn closes the socket it is given on shutdown: it gets its own descriptor
    config.bind = [f"fd://{os.dup(sock.fileno())}"]
    config.loglevel = log_level.upper()
    config.accesslog = None
    config.graceful_timeout = SHUTDOWN_GRACE
    # every message of an HTTP/2 connection is a request on one TCP connection: no cap
    # (Hypercorn's default ends a connection after 1,000 with GOAWAY, failing the ACP one)
    config.keep_alive_max_requests = 2**62
    shutdown = asyncio.Event()
    serving = asyncio.ensure_future(
        asyncio_mod.serve(app, config, shutdown_trigger=shutdown.wait)
    )
    if started is not None:
        started(sock.getsockname()[1])
    try:
        await asyncio.shield(serving)
    except (
        asyncio.CancelledError
    ):  # a graceful shutdown, not Hypercorn cancelled midway
        await _close_connections(app)
        shutdown.set()
        try:
            await asyncio.wait_for(serving, SHUTDOWN_GRACE + 5)
        except Exception:  # noqa: BLE001 - Hypercorn cutting the streams still open
            log.debug("Hypercorn's shutdown failed", exc_info=True)
        raise
    finally:
        shutdown.set()
        sock.close()
