"""Several protocol versions from one program: the version is negotiated on ``initialize``.

Standard library only. A package built from a schema directory with several trees holds
one module per version (``v1``, ``v2``); :class:`Versions` names the ones a program speaks,
each by its module's ``RPC`` and a factory making the handler that serves it::

    versions = Versions().add(v1.RPC, make_v1_handler).add(v2.RPC, make_v2_handler)
    await conn.serve(versions)  # instead of one handler

The connection then chooses which module's :class:`Rpc` and handler it uses, before
anything version-specific is read:

* **Agent side.** The client's ``initialize`` names the latest version it supports. The
  agent answers with the highest version it speaks at or below that one (the client's own
  when the agent has it); the ``initialize`` handler of that version sees that version in
  the params, and the rest of the connection is parsed, typed and served by that version's
  module. When the agent speaks no version at or below the client's, the request is
  answered ``-32022`` (Unsupported protocol version) with ``{"requested", "supported"}``,
  and the client may try again. Before ``initialize``, a request is answered ``-32600``
  and a notification is ignored.
* **Client side.** The client sends ``initialize`` built with its newest module (the
  version it offers). When the answer arrives, its ``protocolVersion`` chooses the module:
  the answer is parsed with that version's types, the client's handler for that version
  is made, and the connection goes on in that version (``conn.version``; talk to the agent
  through that module's ``RemoteAgent``). An answer naming a version the client does not
  speak, or the agent's ``-32022``, raises :class:`UnsupportedProtocolVersionError` from
  the ``initialize`` call; the client should then close the connection.

A connection serving one handler (not a :class:`Versions`) negotiates nothing: its reading
and writing are exactly as without this module.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Final

from ._jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    FrameError,
    InvalidResultError,
    Rpc,
    RpcError,
)
from ._router import Router

if TYPE_CHECKING:
    from ._connection import Connection

#: ACP's "Unsupported protocol version": no version the agent speaks is at or below the
#: one the client requested (data: ``{"requested": int, "supported": [int, ...]}``)
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: the method that negotiates the version
INITIALIZE: Final = "initialize"
#: the largest protocol version ACP's ``ProtocolVersion`` allows
MAX_PROTOCOL_VERSION: Final = 0xFFFF

#: makes the handler of one version for a connection (which it may keep: to build that
#: version's ``RemoteClient`` / ``RemoteAgent`` on it)
HandlerFactory = Callable[["Connection"], Any]


class UnsupportedProtocolVersionError(RpcError):
    """No protocol version both sides speak. An agent answers ``initialize`` with it; a
    client's ``initialize`` raises it when the agent answered so, or answered a version
    the client does not speak. ``requested``: the version the client offered;
    ``supported``: the versions the other side speaks."""

    def __init__(
        self, requested: Any, supported: list[int], message: str | None = None
    ) -> None:
        data = {"requested": requested, "supported": supported}
        super().__init__(
            UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data
        )
        self.requested = requested
        self.supported = supported
        self.detail = message or (
            f"no protocol version at or below {requested!r} is spoken by the other side"
            f" (it speaks {', '.join(map(str, supported)) or 'none'})"
        )

    def __str__(self) -> str:
        return self.detail


class Versions:
    """The protocol versions a program speaks: for each, its module's ``RPC`` and the
    factory making the handler that serves it once that version is chosen. Pass it to
    :meth:`Connection.start` / :meth:`Connection.serve` in place of a handler (either
    side); see the module docstring for what happens then."""

    def __init__(self) -> None:
        self._versions: dict[int, tuple[Rpc, HandlerFactory]] = {}

    def add(self, rpc: Rpc, handler: HandlerFactory) -> Versions:
        """Speak the version of ``rpc`` (its module's ``PROTOCOL_VERSION``), served by
        ``handler(connection)``. Returns ``self``, so that calls chain."""
        version = rpc.version
        if version is None:
            raise ValueError("this module's schema declares no protocol version")
        if version in self._versions:
            raise ValueError(f"protocol version {version} is added already")
        self._versions[version] = (rpc, handler)
        return self

    @property
    def supported(self) -> list[int]:
        """The versions spoken, lowest first."""
        return sorted(self._versions)

    @property
    def newest(self) -> int:
        if not self._versions:
            raise ValueError("no protocol version added")
        return max(self._versions)

    def rpc(self, version: int) -> Rpc:
        return self._versions[version][0]

    def choose(self, requested: int) -> int | None:
        """The highest version spoken at or below ``requested`` (None: there is none)."""
        below = [v for v in self._versions if v <= requested]
        return max(below) if below else None

    # -- the connection's side ------------------------------------------------------------
    def begin(self, conn: Connection) -> Router:
        """Called by :meth:`Connection.start`: the router serving the connection until the
        version is chosen (it answers errors only), and the negotiation set up."""
        rpc = self.rpc(self.newest)
        conn.rpc = rpc
        conn.version = None
        _switch_cancel(conn, rpc)
        # until the version is chosen, every line read goes through the negotiation
        # first (an attribute of the instance: the class's reading path is unchanged)
        watch = self._agent_line if conn.side == "agent" else self._client_line
        setattr(conn, "_dispatch", lambda line: watch(conn, line))
        return Router(rpc, conn.side, _NoHandler(), conn.log)

    def _chosen(self, conn: Connection, version: int) -> None:
        rpc, factory = self._versions[version]
        conn.rpc = rpc
        conn.version = version
        _switch_cancel(conn, rpc)
        conn.router = Router(rpc, conn.side, factory(conn), conn.log)
        if "_dispatch" in vars(conn):  # from now on: the class's reading path
            delattr(conn, "_dispatch")
        conn.log.debug("protocol version %d negotiated", version)

    def _agent_line(self, conn: Connection, line: bytes) -> None:
        """A line read before the version is chosen, on the agent side."""
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            data = None
        if type(data) is list:  # ACP does not use batches before initialize either
            _answer(
                conn,
                None,
                INVALID_REQUEST,
                "Invalid request",
                "batches are not supported",
                line,
            )
            return
        if type(data) is not dict or "method" not in data:
            type(conn)._dispatch(conn, line)  # unreadable, or a response: as usual
            return
        if "id" not in data:  # a notification before initialize: nothing to act on
            conn._observe_in(line)
            conn.log.warning(
                "notification %r before initialize ignored", data["method"]
            )
            return
        rid = data["id"]
        if type(data["method"]) is str and data["method"].startswith("_"):
            # an extension request: no handler is chosen yet to implement it (-32601)
            type(conn)._dispatch(conn, line)
            return
        if data["method"] != INITIALIZE:
            message = "the first request must be initialize"
            _answer(conn, rid, INVALID_REQUEST, "Invalid request", message, line)
            return
        params = data.get("params")
        requested = params.get("protocolVersion") if type(params) is dict else None
        if type(requested) is not int or not 0 <= requested <= MAX_PROTOCOL_VERSION:
            detail = "initialize.protocolVersion must be an integer from 0 to 65535"
            _answer(conn, rid, INVALID_PARAMS, "Invalid params", detail, line)
            return
        version = self.choose(requested)
        if version is None:
            error = UnsupportedProtocolVersionError(requested, self.supported)
            conn.log.warning("initialize: %s", error)
            _answer(conn, rid, error.code, error.message, error.data, line)
            return
        assert type(params) is dict
        conn._observe_in(line)
        # the handler of the chosen version sees its own version asked for
        frame = {**data, "params": {**params, "protocolVersion": version}}
        try:
            parsed = self.rpc(version).parse(frame, side=conn.side)
        except (FrameError, InvalidResultError) as exc:
            conn._rejected(exc)  # invalid for that version: nothing is chosen yet
            return
        self._chosen(conn, version)
        conn._route(parsed, None)  # type: ignore[arg-type]

    def _client_line(self, conn: Connection, line: bytes) -> None:
        """A line read before the version is chosen, on the client side: the answer to
        our ``initialize`` chooses it."""
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            data = None
        pending = None
        if type(data) is dict and "method" not in data and "id" in data:
            rid = data["id"]
            if isinstance(rid, (int, str)) and not isinstance(rid, bool):
                pending = conn._pending.get(rid)
        if pending is None or pending.method != INITIALIZE or pending.future.done():
            type(conn)._dispatch(conn, line)
            return
        assert type(data) is dict
        result, error = data.get("result"), data.get("error")
        if type(error) is dict and error.get("code") == UNSUPPORTED_PROTOCOL_VERSION:
            conn._observe_in(line)
            body = error.get("data")
            body = body if type(body) is dict else {}
            offered, supported = body.get("requested"), body.get("supported")
            failure = UnsupportedProtocolVersionError(
                offered,
                list(supported) if type(supported) is list else [],
                f"the agent speaks no protocol version at or below {offered!r}"
                f" (it speaks {supported!r}): {error.get('message')}",
            )
            conn._fail(pending, failure)
            return
        answered = result.get("protocolVersion") if type(result) is dict else None
        if type(answered) is int and answered not in self._versions:
            conn._observe_in(line)
            failure = UnsupportedProtocolVersionError(
                None,
                [answered],
                f"the agent answered protocol version {answered!r}, which this program"
                f" does not speak (it speaks {', '.join(map(str, self.supported))})",
            )
            conn._fail(pending, failure)
            return
        if type(answered) is int:
            self._chosen(conn, answered)
        # parsed with the chosen version's types (an invalid answer fails initialize with
        # InvalidResultError, and chooses nothing)
        type(conn)._dispatch(conn, line)


class _NoHandler:
    """The handler before the version is chosen: it implements nothing."""


def _switch_cancel(conn: Connection, rpc: Rpc) -> None:
    conn._cancel_spec = rpc.spec("$/cancel_request", "notification")


def _answer(
    conn: Connection, rid: Any, code: int, message: str, data: Any, line: bytes
) -> None:
    """Answer a request read before the version is chosen with an error (the version is
    still open: the client may send ``initialize`` again)."""
    conn._observe_in(line)
    if type(rid) not in (int, str, float):  # a bool, an object, an array: not an id
        rid = None
    assert conn.router is not None
    conn._reply(conn.router.error_line(rid, code, message, data), None)
