"""Reaching agents remotely: :func:`connect_url` picks the transport by the URL's scheme
(``ws://``/``wss://``: WebSocket, ``_ws_client.py``; ``http://``/``https://``: Streamable
HTTP, ``_http_client.py``) and gives a :class:`~._connection.Connection` with every
promise of one over stdio. ``conn.remote`` is a :class:`RemoteInfo`: the URL, the
connection id the server gave, and the cookies it set, to send back on a reconnect
(sticky load balancing).

:func:`reconnect` is the transport RFD's recipe for a connection that was lost (protocol
v1: sessions outlive their connection, nothing in flight is replayed): a new connection
to the same URL with the same headers (credentials) and the cookies of the old one (a
load balancer's sticky cookie: the same server if it is still there, another one if not),
``initialize``, a check that the agent can ``session/load``, then ``session/load`` of each
session. The requests that were pending on the lost connection have failed already, at
once, with :class:`~._frames.ConnectionClosedError`; what they were doing is not replayed.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Union

from ._frames import RemoteError
from ._remote import RefusedError
from ._session_state import Acp

if TYPE_CHECKING:
    from ._connection import Connection
    from ._jsonrpc import Rpc

log = logging.getLogger(__name__)

#: HTTP statuses worth trying again (the server or a balancer in front of it is busy,
#: restarting or without a healthy server yet)
_TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass
class RemoteInfo:
    """What a client knows of its remote connection."""

    url: str
    connection_id: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    #: cookie name -> value, as the server set them (sent back on every request)
    cookies: dict[str, str] = field(default_factory=dict)


async def connect_url(
    rpc: Rpc,
    url: str,
    *,
    side: str = "client",
    headers: Mapping[str, str] | None = None,
    cookies: Mapping[str, str] | None = None,
    http2: bool = False,
    **options: Any,
) -> Connection:
    """A connection to the remote agent at ``url``. ``headers`` go with every request
    (``Authorization``...), ``cookies`` too (those of a previous connection, for
    stickiness); ``http2`` speaks HTTP/2 (prior knowledge on ``http://``, ALPN on
    ``https://``) for Streamable HTTP. ``options`` are the connection's."""
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("ws", "wss"):
        from ._ws_client import connect_websocket

        return await connect_websocket(
            rpc, url, side=side, headers=headers, cookies=cookies, **options
        )
    if scheme in ("http", "https"):
        from ._http_client import connect_http

        return await connect_http(
            rpc,
            url,
            side=side,
            headers=headers,
            cookies=cookies,
            http2=http2,
            **options,
        )
    raise ValueError(
        f"no ACP transport for {url!r}: use ws://, wss://, http:// or https://"
    )


class SessionLoadUnsupportedError(Exception):
    """The agent reached on reconnect does not offer ``session/load`` (its
    ``initialize`` answer has no ``loadSession`` capability): its sessions cannot be
    restored on a new connection. The new connection was closed."""


@dataclass
class Reconnected:
    """What :func:`reconnect` gives: the new connection (started, initialized), the
    answer to ``initialize``, the answer to ``session/load`` of each session restored
    (by session id), the sessions the agent refused to load (by session id: its error;
    a session it no longer knows, say), and the attempts it took."""

    conn: Connection
    initialized: Any
    loaded: dict[str, Any] = field(default_factory=dict)
    failed: dict[str, RemoteError] = field(default_factory=dict)
    attempts: int = 1


#: a handler to serve, or a function of the new connection giving it
Handler = Union[Any, Callable[["Connection"], Any]]


async def reconnect(
    previous: Connection | RemoteInfo,
    handler: Handler,
    *,
    initialize: Any,
    sessions: Iterable[Any] = (),
    rpc: Rpc | None = None,
    headers: Mapping[str, str] | None = None,
    attempts: int = 1,
    backoff: float = 0.5,
    max_backoff: float = 10.0,
    **options: Any,
) -> Reconnected:
    """Reconnect to the agent of ``previous`` (a lost connection, or its
    :class:`RemoteInfo`) and restore its sessions: the RFD's v1 recipe.

    * a new connection to ``previous``'s URL with its headers (``headers`` replaces
      some, a renewed token say) and the cookies it had (a sticky load balancer's),
      serving ``handler`` (the client), or ``handler(conn)`` when it is a function of
      the new connection (``lambda conn: ClientSessions(conn).handler(client)``);
    * ``initialize`` with ``initialize`` (the module's ``InitializeRequest``, or its
      wire form as a dict);
    * where there are ``sessions`` to restore (each the params of ``session/load``: the
      module's ``LoadSessionRequest`` or its wire form), the ``loadSession`` capability
      checked (:class:`SessionLoadUnsupportedError` without it), then every session
      loaded (at once; the agent replays each one's history as ``session/update``).

    A failure to reach the agent (refused, reset, timed out, an HTTP 5xx or 429 from
    a server or balancer, the new connection lost) is tried again up to ``attempts``
    times in all, waiting ``backoff`` s, doubled each time up to ``max_backoff`` (with
    jitter, so that many clients do not come back at the same instant); any other
    error is raised at once. ``rpc`` is the module's (default: ``previous``'s);
    ``options`` are :func:`connect_url`'s (``http2``, ``open_timeout``, the
    connection's options). ``previous`` is left as it is: close it first when it is
    still open (a server keeps an open connection, and its sessions, until then)."""
    if attempts < 1 or backoff < 0 or max_backoff < 0:
        raise ValueError("attempts must be >= 1, backoff and max_backoff >= 0")
    info = previous if isinstance(previous, RemoteInfo) else previous.remote
    if not isinstance(info, RemoteInfo):
        raise TypeError(
            "reconnect needs a connection made by connect_url (or its RemoteInfo)"
        )
    if rpc is None:
        if isinstance(previous, RemoteInfo):
            raise TypeError("reconnect from a RemoteInfo needs rpc= (the module's RPC)")
        rpc = previous.rpc
    if rpc.spec(Acp.LOAD) is None:
        raise SessionLoadUnsupportedError(
            f"this module's protocol has no {Acp.LOAD}: reconnect follows protocol v1's recipe"
        )
    loads = [_typed(rpc, Acp.LOAD, params) for params in sessions]
    sent = {**info.headers, **(headers or {})}
    delay = backoff
    for attempt in range(1, attempts + 1):
        try:
            done = await _once(rpc, info, sent, handler, initialize, loads, options)
        except SessionLoadUnsupportedError:
            raise
        except Exception as exc:  # noqa: BLE001 - sorted below: transient or not
            if attempt == attempts or not _transient(exc):
                raise
            wait = min(delay, max_backoff) * random.uniform(0.5, 1.0)
            log.info(
                "reconnect to %s: attempt %d failed (%r): again in %.2f s",
                info.url,
                attempt,
                exc,
                wait,
            )
            await asyncio.sleep(wait)
            delay *= 2
            continue
        done.attempts = attempt
        return done
    raise AssertionError("unreachable")  # the loop returns or raises


async def _once(
    rpc: Rpc,
    info: RemoteInfo,
    headers: dict[str, str],
    handler: Handler,
    initialize: Any,
    loads: list[Any],
    options: dict[str, Any],
) -> Reconnected:
    """One attempt: connect, initialize, check, load; the new connection closed when
    any of it fails."""
    conn = await connect_url(
        rpc, info.url, headers=headers, cookies=info.cookies, **options
    )
    try:
        conn.start(handler(conn) if callable(handler) else handler)
        initialized = await conn.request(
            Acp.INITIALIZE, _typed(rpc, Acp.INITIALIZE, initialize)
        )
        done = Reconnected(conn, initialized)
        if not loads:
            return done
        answer = rpc.codec.dump(initialized)
        caps = answer.get(Acp.AGENT_CAPABILITIES) if isinstance(answer, dict) else None
        if not (isinstance(caps, dict) and caps.get(Acp.LOAD_SESSION) is True):
            raise SessionLoadUnsupportedError(
                f"the agent at {info.url} does not offer {Acp.LOAD} (no {Acp.LOAD_SESSION}"
                " capability): its sessions cannot be restored on a new connection"
            )
        ids = [rpc.session_of(Acp.LOAD, "request", params) or "" for params in loads]
        results = await asyncio.gather(
            *(conn.request(Acp.LOAD, params) for params in loads),
            return_exceptions=True,
        )
        for session_id, result in zip(ids, results):
            if isinstance(result, RemoteError):
                done.failed[session_id] = result
            elif isinstance(result, BaseException):
                raise result
            else:
                done.loaded[session_id] = result
        return done
    except BaseException:
        await conn.close("the reconnect failed")
        raise


def _typed(rpc: Rpc, method: str, params: Any) -> Any:
    """``params`` as the module's type for ``method`` (a dict is its wire form)."""
    spec = rpc.spec(method)
    if isinstance(params, dict) and spec is not None and spec.params is not None:
        return rpc.codec.load(spec.params, params)
    return params


def _transient(exc: BaseException) -> bool:
    """Whether trying again may succeed: the transport failed (refused, reset, closed,
    timed out) or a server or balancer answered a status worth retrying."""
    if isinstance(exc.__cause__, RefusedError):  # Streamable HTTP: refused initialize
        exc = exc.__cause__
    if isinstance(exc, RefusedError):
        return exc.status in _TRANSIENT_STATUSES
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):  # a library's own error for an HTTP status
        return status in _TRANSIENT_STATUSES
    if isinstance(exc, (OSError, asyncio.TimeoutError, EOFError)):
        return True  # ConnectionError (ConnectionClosedError, ChannelClosed) included
    return any(
        klass.__module__.split(".")[0]
        in ("websockets", "httpx", "httpcore", "h11", "h2")
        and klass.__name__ in ("InvalidHandshake", "InvalidMessage", "TransportError")
        for klass in type(exc).__mro__
    )
