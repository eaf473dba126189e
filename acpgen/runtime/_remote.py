"""What both remote transports share, with the standard library only: ACP's endpoint and
headers (the transport RFD: one ``/acp`` endpoint serving WebSocket and Streamable HTTP),
the server's security settings (Host and Origin checks, a bounded body), the
authentication hook, and the clear error for a missing optional dependency.

The remote transports themselves (``_remote_server.py``, ``_remote_client.py`` and the
modules they use) import their libraries (Starlette, uvicorn or Hypercorn,
sse-starlette, httpx-sse, aiohttp, curl_cffi, websockets) only when a remote connection is made or
served: a package without them imports and serves stdio as before.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import ipaddress
import secrets
import socket
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Awaitable, Callable, Coroutine, Final, Mapping, TypeVar, Union

from ._channel import ChannelClosed

#: the endpoint's path (the RFD's)
PATH: Final = "/acp"
#: the headers naming a connection and a session (lowercase, as ASGI gives them)
CONNECTION_ID: Final = "acp-connection-id"
SESSION_ID: Final = "acp-session-id"
#: the largest request body a server reads, and WebSocket message either side takes
#: (bytes; the TypeScript and Rust SDKs' limit)
MAX_BODY: Final = 16 * 1024 * 1024
#: seconds between two keepalive comments on an idle SSE stream
KEEPALIVE: Final = 15.0
#: seconds a server waits for the answer to ``initialize`` before it answers 504
INIT_TIMEOUT: Final = 30.0
#: seconds a connection may stay without traffic or an open stream before it is closed
IDLE_TIMEOUT: Final = 600.0
#: messages held per outgoing stream before the agent's sends wait (nothing dropped)
STREAM_QUEUE: Final = 256
#: event streams a Streamable HTTP connection may hold: its own and its sessions'
MAX_STREAMS: Final = 64

#: the packages each part needs, and the extra that brings them
_INSTALL: Final = {
    "server": ("starlette", "uvicorn", "sse_starlette", "websockets"),
    "http2": ("hypercorn",),
    "http": ("httpx", "httpx_sse", "aiohttp"),
    "ws": ("aiohttp",),
    "http2-client": ("httpx", "httpx_sse", "curl_cffi"),
    "event loop": ("uvloop",),
}
_PIP: Final = {
    "starlette": "starlette",
    "uvicorn": "uvicorn",
    "sse_starlette": "sse-starlette",
    "hypercorn": "hypercorn",
    "h2": "h2",  # Hypercorn's, imported by the HTTP/2 mend (need("h2.events", "http2"))
    "httpx": "httpx",
    "httpx_sse": "httpx-sse",
    "aiohttp": "aiohttp",
    "websockets": "websockets",
    "curl_cffi": "curl_cffi",
    "uvloop": "uvloop",
}


class RemoteDependencyError(ImportError):
    """A remote transport was used without the library it runs on: the message names
    what to install."""


def need(module: str, part: str) -> ModuleType:
    """Import ``module`` for ``part`` of the remote transports, or raise
    :class:`RemoteDependencyError` naming every package that part needs."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        wanted = " ".join(repr(_PIP[m]) for m in _INSTALL[part])
        raise RemoteDependencyError(
            f"the ACP remote transport ({part}) needs the Python package"
            f" {_PIP[module.split('.')[0]]!r},"
            f" which is not installed: pip install {wanted}"
        ) from exc


class Refused(Exception):
    """A request a server answers with ``status`` and the one-line ``reason``."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def ws_closed(code: int | None, reason: str | None) -> ChannelClosed:
    """Why a WebSocket connection ended: its close code and reason (either side)."""
    why = f": {reason}" if reason else ""
    return ChannelClosed(f"the WebSocket closed with code {code}{why}")


class RefusedError(ChannelClosed):
    """The server refused to open a connection: ``status`` is its HTTP status (401 for
    credentials, 403 for the Origin, 421 for the Host...), ``reason`` its one line.
    Raised by ``connect_url`` over WebSocket, and over Streamable HTTP by the first
    request (``initialize``: nothing is sent before it), as the cause of its
    ``ConnectionClosedError``, whose reason is this message."""

    def __init__(self, url: str, status: int, reason: str = "") -> None:
        why = f": {reason}" if reason else ""
        super().__init__(f"{url} refused the connection: HTTP {status}{why}")
        self.url = url
        self.status = status
        self.reason = reason


_LOOPBACK_NAMES: Final = ("localhost", "127.0.0.1", "[::1]", "::1")


def _is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Security:
    """What a server accepts of a request's ``Host`` and ``Origin`` (DNS rebinding: a web
    page that gets its own name resolved to 127.0.0.1 reaches a local agent with its
    own Host and Origin).

    ``allowed_hosts``: the Host values accepted (``"name"``, ``"name:port"`` or
    ``"name:*"`` for any port), ``None`` for any; ``allowed_origins``: the Origin values
    accepted (``"http://name:port"``, ``"http://name:*"``), ``None`` for any; a request
    without ``Origin`` (not from a browser) is always accepted. A bad Host is answered
    421, a bad Origin 403. :meth:`for_bind` gives the defaults for an address."""

    allowed_hosts: tuple[str, ...] | None = None
    allowed_origins: tuple[str, ...] | None = None

    @classmethod
    def for_bind(cls, host: str) -> Security:
        """The defaults for a server bound to ``host``: on a loopback address, only
        loopback names as Host and Origin (any port); elsewhere, anything (put the
        names it is reached by in ``allowed_hosts``/``allowed_origins``)."""
        if not _is_loopback(host):
            return cls()
        hosts = tuple(f"{name}:*" for name in _LOOPBACK_NAMES if name != "::1")
        origins = tuple(
            f"{scheme}://{name}:*"
            for scheme in ("http", "https")
            for name in _LOOPBACK_NAMES
            if name != "::1"
        )
        return cls(hosts, origins)

    @classmethod
    def loopback(cls) -> Security:
        """Only loopback names as Host and Origin."""
        return cls.for_bind("127.0.0.1")

    def check(self, headers: Mapping[str, str]) -> None:
        """Raise :class:`Refused` (421 or 403) for a Host or Origin not allowed."""
        if self.allowed_hosts is not None:
            host = headers.get("host", "")
            if not _matches(host, self.allowed_hosts):
                raise Refused(421, f"Host {host!r} is not allowed")
        if self.allowed_origins is not None:
            origin = headers.get("origin")
            if origin is not None and not _matches(origin, self.allowed_origins):
                raise Refused(403, f"Origin {origin!r} is not allowed")


def _matches(value: str, allowed: tuple[str, ...]) -> bool:
    value = value.lower()
    for pattern in allowed:
        pattern = pattern.lower()
        if pattern.endswith(":*"):
            base = pattern[:-2]
            if value == base or (
                value.startswith(base + ":") and value[len(base) + 1 :].isdigit()
            ):
                return True
        elif value == pattern:
            return True
    return False


#: a request's headers (lowercase names) -> who it is, or None to refuse it (401)
Authenticate = Callable[
    [Mapping[str, str]], Union[Awaitable[Union[str, None]], str, None]
]


def bearer(tokens: Mapping[str, str]) -> Authenticate:
    """An :data:`Authenticate` hook for ``Authorization: Bearer <token>``: ``tokens``
    maps each token to its principal (compared in constant time)."""
    known = dict(tokens)

    def authenticate(headers: Mapping[str, str]) -> str | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        found = None
        for candidate, principal in known.items():
            if secrets.compare_digest(candidate.encode(), token.strip().encode()):
                found = principal
        return found

    return authenticate


async def authenticate(hook: Authenticate | None, headers: Mapping[str, str]) -> str:
    """Run the hook: its principal, ``""`` without a hook; :class:`Refused` (401)."""
    if hook is None:
        return ""
    found: Any = hook(headers)
    if inspect.isawaitable(found):
        found = await found
    if found is None:
        raise Refused(401, "not authenticated")
    return str(found)


@dataclass
class ServerOptions:
    """A remote server's settings (the ``Rpc.asgi_app`` keywords): see
    ``_remote_server.AcpServer``."""

    path: str | None = PATH
    security: Security | None = None
    authenticate: Authenticate | None = None
    max_body: int = MAX_BODY
    keepalive: float = KEEPALIVE
    init_timeout: float = INIT_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT
    stream_queue: int = STREAM_QUEUE
    max_streams: int = MAX_STREAMS
    connection: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_body < 2 or self.stream_queue < 1 or self.max_streams < 2:
            raise ValueError(
                "max_body must be >= 2, stream_queue >= 1 and max_streams >= 2"
            )
        for name in ("keepalive", "init_timeout", "idle_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0")


def id_key(rid: Any) -> tuple[str, Any]:
    """A JSON-RPC id as a dict key (1, 1.0, True and "1" stay apart)."""
    return (type(rid).__name__, rid)


def session_of(frame: Any) -> str | None:
    """The ``sessionId`` a parsed message's params name, if any."""
    params = frame.get("params") if isinstance(frame, dict) else None
    if isinstance(params, dict):
        value = params.get("sessionId")
        if isinstance(value, str):
            return value
    return None


def new_id() -> str:
    """A connection id no one can guess."""
    return secrets.token_urlsafe(18)


# -- sockets that read what a message needs ------------------------------------------
#: bytes a socket of a remote transport reads at most at once. asyncio asks for 256 KiB
#: a read: Python allocates that much for every read however small the message, which
#: the C library maps and unmaps each time (tens of microseconds a message); 64 KiB
#: comes from the heap.
READ_SIZE: Final = 64 * 1024


class SizedSocket(socket.socket):
    """A socket whose reads ask for :data:`READ_SIZE` bytes at most."""

    __slots__ = ()

    def recv(self, bufsize: int, flags: int = 0, /) -> bytes:
        return super().recv(min(bufsize, READ_SIZE), flags)


class SizedListener(socket.socket):
    """A listening socket whose accepted connections are :class:`SizedSocket`."""

    __slots__ = ()

    def accept(self) -> tuple[socket.socket, Any]:
        fd, address = self._accept()  # type: ignore[attr-defined]
        conn = SizedSocket(self.family, self.type, self.proto, fileno=fd)
        if socket.getdefaulttimeout() is None and self.gettimeout():
            conn.setblocking(True)  # as socket.accept does
        return conn, address


def sized_socket(addr_info: tuple[Any, ...]) -> socket.socket:
    """aiohttp's ``socket_factory``: a :class:`SizedSocket` for the address."""
    family, kind, proto = addr_info[:3]
    return SizedSocket(family, kind, proto)


def listening_socket(host: str, port: int) -> socket.socket:
    """A :class:`SizedListener` bound to ``host``:``port`` (IPv6 when the host has a
    colon), not yet listening (the server listens on it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # TCP named: asyncio sets TCP_NODELAY on the connections of a TCP socket only
    sock = SizedListener(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


# -- the event loop ------------------------------------------------------------------
T = TypeVar("T")


def loop_factory(
    uvloop: bool | None = None,
) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What :func:`run` makes its event loop with: uvloop's when it is installed (with
    ``uvloop=True``, required: :class:`RemoteDependencyError` names it when absent),
    ``None`` (asyncio's own loop) when it is not or with ``uvloop=False``."""
    if uvloop is False:
        return None
    try:
        module = importlib.import_module("uvloop")
    except ImportError:
        if uvloop:
            need("uvloop", "event loop")
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = module.new_event_loop
    return factory


def run(
    main: Coroutine[Any, Any, T],
    *,
    uvloop: bool | None = None,
    debug: bool | None = None,
) -> T:
    """``asyncio.run(main)`` on uvloop's event loop when it is installed (the loop
    uvicorn picks for itself then), asyncio's own otherwise; ``uvloop`` as in
    :func:`loop_factory`. uvloop runs the loop's own work (polling, callbacks, socket
    reads and writes, timers) in C: a small request served over WebSocket or HTTP costs
    both ends about a third less CPU. The connection behaves the same on either loop."""
    try:
        factory = loop_factory(uvloop)
    except BaseException:
        main.close()  # never run: no "was never awaited" warning
        raise
    with asyncio.Runner(debug=debug, loop_factory=factory) as runner:
        return runner.run(main)


__all__ = [
    "Authenticate",
    "PATH",
    "Refused",
    "RefusedError",
    "RemoteDependencyError",
    "Security",
    "ServerOptions",
    "bearer",
    "loop_factory",
    "need",
    "run",
]
