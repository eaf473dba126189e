"""Reaching agents remotely: :func:`connect_url` picks the transport by the URL's scheme
(``ws://``/``wss://``: WebSocket, ``_websocket.py``; ``http://``/``https://``: Streamable
HTTP, ``_http_client.py``) and gives a :class:`~._connection.Connection` with every
promise of one over stdio. ``conn.remote`` is a :class:`RemoteInfo`: the URL, the
connection id the server gave, and the cookies it set, to send back on a reconnect
(sticky load balancing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from ._connection import Connection
    from ._jsonrpc import Rpc


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
        from ._websocket import connect_websocket

        return await connect_websocket(
            rpc, url, side=side, headers=headers, cookies=cookies, **options
        )
    if scheme in ("http", "https"):
        from ._http_client import connect_http

        return await connect_http(
            rpc, url, side=side, headers=headers, cookies=cookies, http2=http2, **options
        )
    raise ValueError(f"no ACP transport for {url!r}: use ws://, wss://, http:// or https://")
