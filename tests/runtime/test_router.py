"""The router (acpgen/runtime/_router.py) used alone, in the three styles, on the fixture
``rpc``: one frame in, its handler called, the answer out. Each kind of frame, each kind
of failure a handler can raise and the answer and log line it gets, the handler's result
checked before it is sent, extension methods, the request context, and a batch."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import generate, import_file
from .harness import STYLES, get, module, package
from .test_batches import batch_schema


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


def wire(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame).encode() + b"\n"


def call(rid: Any, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def note(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


INIT = call(1, "initialize", {"protocolVersion": 1})


class Handler:
    """An agent whose ``initialize`` does what it is told (``self.then``)."""

    def __init__(self, m: ModuleType) -> None:
        self.m = m
        self.then: Any = None
        self.seen: list[Any] = []
        self.contexts: list[Any] = []

    async def initialize(self, params: Any) -> Any:
        self.contexts.append(package(self.m).current_request())
        self.seen.append(get(params, "protocolVersion", "protocol_version"))
        then = self.then
        if isinstance(then, BaseException):
            raise then
        if callable(then):
            return then()
        return self.m.RPC.codec.load(self.m.InitializeResponse, {"protocolVersion": 1})

    async def session_close(self, params: Any) -> Any:
        return self.then

    async def session_cancel(self, params: Any) -> Any:
        self.seen.append("cancel")
        if isinstance(self.then, BaseException):
            raise self.then
        return {"ignored": True}


def router(m: ModuleType, handler: Any = None, side: str = "agent", **options: Any) -> Any:
    return package(m).Router(m.RPC, side, handler if handler is not None else Handler(m), **options)


def answer(r: Any, frame: dict[str, Any] | bytes) -> Any:
    out = asyncio.run(r.handle_line(frame if isinstance(frame, bytes) else wire(frame)))
    return None if out is None else json.loads(out)


def failing(m: ModuleType, exc: BaseException) -> Any:
    handler = Handler(m)
    handler.then = exc
    return answer(router(m, handler), INIT)


def test_a_request_is_answered_with_its_result(m: ModuleType) -> None:
    handler = Handler(m)
    out = asyncio.run(router(m, handler).handle_line(wire({**INIT, "params": {"protocolVersion": 4}})))
    assert out == b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}\n'
    assert handler.seen == [4]  # the typed params
    assert answer(router(m), {**INIT, "id": "a"}) == {"jsonrpc": "2.0", "id": "a", "result": {"protocolVersion": 1}}


def test_an_unknown_method(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert answer(router(m), call(3, "no/such", {})) == {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32601, "message": "Method not found", "data": {"method": "no/such"}},
        }
        assert caplog.records == []
        assert answer(router(m), note("no/such", {})) is None
    assert [r.getMessage() for r in caplog.records] == ["notification of unknown method 'no/such' ignored"]
    assert caplog.records[0].levelno == logging.WARNING


def test_a_method_the_handler_does_not_implement(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    class Bare:
        pass

    with caplog.at_level(logging.INFO):
        assert answer(router(m, Bare()), INIT)["error"] == {
            "code": -32601,
            "message": "Method not found",
            "data": {"method": "initialize"},
        }
        assert answer(router(m, Bare()), note("session/cancel", {"sessionId": "s"})) is None
        # extension methods without their handler methods
        assert answer(router(m, Bare()), call(2, "_x/y", [1]))["error"] == {
            "code": -32601,
            "message": "Method not found",
            "data": {"method": "_x/y"},
        }
        assert answer(router(m, Bare()), note("_x/y", [1])) is None
    assert caplog.records == []


def test_extension_methods_go_to_the_extension_handlers(m: ModuleType) -> None:
    calls: list[Any] = []

    class Extended(Handler):
        async def extension_request(self, method: str, params: Any) -> Any:
            calls.append(("request", method, params))
            return {"echo": params}

        async def extension_notification(self, method: str, params: Any) -> Any:
            calls.append(("notification", method, params))
            return {"ignored": True}

    r = router(m, Extended(m))
    assert answer(r, call(4, "_x/echo", {"a": [1]})) == {"jsonrpc": "2.0", "id": 4, "result": {"echo": {"a": [1]}}}
    assert answer(r, note("_x/told", [2])) is None
    assert calls == [("request", "_x/echo", {"a": [1]}), ("notification", "_x/told", [2])]


def test_an_rpc_error_is_answered_as_raised(m: ModuleType) -> None:
    pkg = package(m)
    assert failing(m, pkg.RpcError(-32000, "Authentication required", {"why": [1]})) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32000, "message": "Authentication required", "data": {"why": [1]}},
    }
    assert failing(m, pkg.RpcError(-32002, "Resource not found"))["error"] == {"code": -32002, "message": "Resource not found"}


def test_a_peer_error_escaping_a_handler_is_an_internal_error(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    pkg = package(m)
    inner = pkg.RemoteError(-32002, "Resource not found", {"path": "/x"}, method="fs/read_text_file", id=9)
    with caplog.at_level(logging.INFO):
        got = failing(m, inner)
    assert got == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {
            "code": -32603,
            "message": "Internal error",
            "data": {
                "method": "initialize",
                "cause": {"method": "fs/read_text_file", "code": -32002, "message": "Resource not found", "data": {"path": "/x"}},
            },
        },
    }
    [record] = caplog.records
    assert record.levelno == logging.WARNING and record.getMessage() == (
        "handler of 'initialize' failed: the peer answered its 'fs/read_text_file' request with -32002 'Resource not found'"
    )
    bare = pkg.RemoteError(-32000, "no", method="fs/read_text_file", id=9)
    assert failing(m, bare)["error"]["data"]["cause"] == {"method": "fs/read_text_file", "code": -32000, "message": "no"}
    # passed on on purpose
    assert failing(m, inner.forward())["error"] == {"code": -32002, "message": "Resource not found", "data": {"path": "/x"}}


def test_a_cancelled_handler_answers_request_cancelled(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert failing(m, asyncio.CancelledError()) == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32800, "message": "Request cancelled", "data": {"method": "initialize"}},
        }
    [record] = caplog.records
    assert (record.levelno, record.getMessage()) == (logging.INFO, "request 1 (initialize) cancelled")


def test_a_closed_connection_under_a_handler_is_no_error_of_ours(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    pkg = package(m)
    with caplog.at_level(logging.INFO):
        got = failing(m, pkg.ConnectionClosedError("the peer went away"))
    assert got["error"] == {"code": -32603, "message": "Internal error", "data": "ConnectionClosedError: the peer went away"}
    [record] = caplog.records
    assert record.levelno == logging.INFO and record.exc_info is None
    assert record.getMessage() == "handler of 'initialize' ended: the connection closed (the peer went away)"


def test_any_other_failure_is_an_internal_error_with_its_traceback_logged(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    pkg = package(m)
    with caplog.at_level(logging.INFO):
        got = failing(m, RuntimeError("boom"))
    assert got == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error", "data": "RuntimeError: boom"}}
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.getMessage() == "handler of 'initialize' failed"
    assert record.exc_info is not None and record.exc_info[:2] == (RuntimeError, record.exc_info[1])
    assert record.exc_info[1].args == ("boom",)
    # a frame error raised by a handler is its bug too, not an answer about the frame
    frame_error = pkg.FrameError(-32602, "Invalid params", answer=True)
    assert failing(m, frame_error)["error"] == {"code": -32603, "message": "Internal error", "data": "FrameError: Invalid params"}


def test_an_interrupt_is_not_answered(m: ModuleType) -> None:
    handler = Handler(m)
    handler.then = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        answer(router(m, handler), INIT)


def test_a_result_is_checked_before_it_is_sent(m: ModuleType) -> None:
    handler = Handler(m)
    handler.then = lambda: {"protocolVersion": -1}
    got = answer(router(m, handler), INIT)["error"]
    assert (got["code"], got["message"]) == (-32603, "Internal error")
    assert got["data"].startswith("invalid result: ") and "protocolVersion" in got["data"]
    # None where the result has required members: invalid too
    handler.then = lambda: None
    assert answer(router(m, handler), INIT)["error"]["data"].startswith("invalid result: ")
    # a result with no required member may be returned as None: answered {}
    handler.then = None
    assert answer(router(m, handler), call(5, "session/close", {"sessionId": "s"})) == {"jsonrpc": "2.0", "id": 5, "result": {}}
    handler.then = {"extra": [1]}
    assert answer(router(m, handler), call(5, "session/close", {"sessionId": "s"}))["result"] == {"extra": [1]}
    handler.then = 5
    assert answer(router(m, handler), call(5, "session/close", {"sessionId": "s"}))["error"]["code"] == -32603


def test_a_notification_is_never_answered(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    pkg = package(m)
    handler = Handler(m)
    r = router(m, handler)
    cancel = note("session/cancel", {"sessionId": "s"})
    with caplog.at_level(logging.INFO):
        assert answer(r, cancel) is None  # its handler's return value is not checked
        assert caplog.records == []
        handler.then = pkg.ConnectionClosedError("closing")
        assert answer(r, cancel) is None
        handler.then = ValueError("bad")
        assert answer(r, cancel) is None
    assert handler.seen == ["cancel"] * 3
    closed, failed = caplog.records
    assert closed.levelno == logging.INFO and closed.exc_info is None
    assert closed.getMessage() == "handler of notification 'session/cancel' ended: the connection closed (closing)"
    assert failed.levelno == logging.ERROR and failed.getMessage() == "handler of notification 'session/cancel' failed"
    assert failed.exc_info is not None and failed.exc_info[1].args == ("bad",)


def test_the_request_context(m: ModuleType) -> None:
    pkg = package(m)
    handler = Handler(m)
    r = router(m, handler)
    assert answer(r, {**INIT, "id": "q"})["result"] == {"protocolVersion": 1}
    [context] = handler.contexts
    assert (context.id, context.method, context.connection, context.cancelled) == ("q", "initialize", None, None)
    assert pkg.current_request() is None
    given = pkg.RequestContext(7, "initialize", connection="conn")
    frame = m.RPC.parse(wire({**INIT, "id": 7}), side="agent")
    asyncio.run(r.handle(frame, given))
    assert handler.contexts[-1] is given and pkg.current_request() is None
    # the context is reset when the handler fails too
    handler.then = RuntimeError("x")
    asyncio.run(r.handle(frame, given))
    assert handler.contexts[-1] is given and pkg.current_request() is None


def test_only_requests_and_notifications_are_routed(m: ModuleType) -> None:
    frame = m.RPC.parse(wire({"jsonrpc": "2.0", "id": 1, "result": {}}), side="agent")
    with pytest.raises(TypeError) as caught:
        asyncio.run(router(m).handle(frame))
    assert str(caught.value) == f"a router handles requests and notifications, not {type(frame).__name__}"


def test_lines_json_rpc_does_not_answer(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert answer(router(m), {"jsonrpc": "2.0", "id": 5, "result": {}}) is None
        assert answer(router(m), {"jsonrpc": "2.0", "id": 6, "error": {"code": 1, "message": "m"}}) is None
        assert answer(router(m), note("session/cancel", {"sessionId": 5})) is None
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "response to id 5 with no request in flight",
        "response to id 6 with no request in flight",
        "frame rejected: Invalid params",
    ]
    assert {r.levelno for r in caplog.records} == {logging.WARNING}


def test_a_bad_line_gets_its_json_rpc_answer(m: ModuleType) -> None:
    got = answer(router(m), b"{not json\n")
    assert (got["id"], got["error"]["code"], got["error"]["message"]) == (None, -32700, "Parse error")
    got = answer(router(m), call(8, "initialize", {"protocolVersion": "one"}))
    assert got["id"] == 8 and got["error"]["code"] == -32602


def test_an_error_line_falls_back_to_a_bare_error_object(m: ModuleType) -> None:
    r = router(m)
    typed = json.loads(r.error_line(3, -32000, "m", {"d": 1}))
    assert typed == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "m", "data": {"d": 1}}}
    assert json.loads(r.error_line(3, -32000, "m")) == {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "m"}}
    # a code the schema's Error does not allow (not an integer): the bare object
    assert json.loads(r.error_line("x", 1.5, "m", [2])) == {"jsonrpc": "2.0", "id": "x", "error": {"code": 1.5, "message": "m", "data": [2]}}
    assert json.loads(r.error_line("x", 1.5, "m")) == {"jsonrpc": "2.0", "id": "x", "error": {"code": 1.5, "message": "m"}}


def test_a_router_logs_to_the_logger_given(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    mine = logging.getLogger("test_router.mine")
    assert router(m, logger=mine).log is mine
    assert router(m).log.name == package(m).__name__ + "._router"
    with caplog.at_level(logging.INFO):
        answer(router(m, logger=mine), note("no/such", {}))
    assert [r.name for r in caplog.records] == ["test_router.mine"]


def test_batch_lines() -> None:
    from acpgen.runtime._router import batch_line

    assert batch_line([]) is None
    assert batch_line([b'{"a":1}\n']) == b'[{"a":1}]\n'
    assert batch_line([b'{"a":1}\n', b'{"b":2}\n', b"{}"]) == b'[{"a":1},{"b":2},{}]\n'
    # the newline only is taken off
    assert batch_line([b"{} \n", b"X\n"]) == b"[{} ,X]\n"


_BATCHED: dict[str, ModuleType] = {}


@pytest.fixture(params=STYLES)
def batched(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    style = request.param
    if style not in _BATCHED:
        folder = batch_schema(tmp_path_factory.mktemp("batch-schema") / "rpc_batches")
        out = tmp_path_factory.mktemp(f"router-batches-{style}")
        generate(folder, out, (style,))
        _BATCHED[style] = import_file(out / f"acp_{style}" / "v1.py")
    return _BATCHED[style]


def test_a_batch_is_answered_item_by_item(batched: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    m = batched
    items = [
        call(1, "initialize", {"protocolVersion": 1}),
        note("session/cancel", {"sessionId": "s"}),
        call(2, "no/such", {}),
        {"foo": "boo"},
        note("session/cancel", {"sessionId": 5}),
        {"jsonrpc": "2.0", "id": 9, "result": {}},
        call(3, "initialize", {"protocolVersion": 1}),
    ]
    with caplog.at_level(logging.INFO):
        out = asyncio.run(router(m).handle_line(json.dumps(items).encode() + b"\n"))
    assert out is not None and out.startswith(b"[") and out.endswith(b"]\n")
    assert json.loads(out) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found", "data": {"method": "no/such"}}},
        json.loads(out)[2],
        {"jsonrpc": "2.0", "id": 3, "result": {"protocolVersion": 1}},
    ]
    assert json.loads(out)[2]["id"] is None and json.loads(out)[2]["error"]["code"] == -32600
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["batch item rejected: Invalid params", "response to id 9 with no request in flight"]
    # notifications only: nothing at all
    assert asyncio.run(router(m).handle_line(json.dumps([note("session/cancel", {"sessionId": "s"})]).encode())) is None


def test_a_router_serves_its_own_side_only(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    """A method of the other side is unknown here, even when the handler has it."""
    calls: list[str] = []

    class Both(Handler):
        async def fs_read_text_file(self, params: Any) -> Any:
            calls.append("read")
            return self.m.RPC.codec.load(self.m.ReadTextFileResponse, {"content": "c"})

        async def session_update(self, params: Any) -> None:
            calls.append("update")

    read = call(2, "fs/read_text_file", {"sessionId": "s", "path": "/a"})
    update = note("session/update", {"sessionId": "s", "update": {"type": "text", "text": "t"}})
    with caplog.at_level(logging.INFO):
        assert answer(router(m, Both(m)), read)["error"] == {"code": -32601, "message": "Method not found", "data": {"method": "fs/read_text_file"}}
        assert answer(router(m, Both(m)), update) is None
    assert calls == []
    assert [r.getMessage() for r in caplog.records] == ["notification of unknown method 'session/update' ignored"]
    client = router(m, Both(m), side="client")
    assert answer(client, read) == {"jsonrpc": "2.0", "id": 2, "result": {"content": "c"}}
    assert answer(client, update) is None and calls == ["read", "update"]
    assert answer(client, INIT)["error"]["code"] == -32601


def test_a_frame_of_the_other_side_given_to_handle_is_unknown(m: ModuleType) -> None:
    """:meth:`Router.handle` looks the method up on its own side, whatever the frame."""
    calls: list[str] = []

    class Both(Handler):
        async def fs_read_text_file(self, params: Any) -> Any:
            calls.append("read")
            return self.m.RPC.codec.load(self.m.ReadTextFileResponse, {"content": "c"})

    frame = m.RPC.parse(wire(call(2, "fs/read_text_file", {"sessionId": "s", "path": "/a"})), side=None)
    out = asyncio.run(router(m, Both(m)).handle(frame))
    assert out is not None and json.loads(out)["error"]["code"] == -32601 and calls == []


def test_a_request_whose_result_has_no_type_is_sent_as_returned(m: ModuleType) -> None:
    pkg = package(m)  # its Router over a method table with one more request
    spec = m.RPC.spec("session/close")
    free = spec._replace(method="x/free", result=None, handler="x_free")
    rpc = type(m.RPC)((*m.RPC.methods, free), m.RPC.codec, m.RPC.error_type)

    class Free(Handler):
        async def x_free(self, params: Any) -> Any:
            return {"any": ["thing"]}

    r = pkg.Router(rpc, "agent", Free(m))
    assert answer(r, call(3, "x/free", {"sessionId": "s"})) == {"jsonrpc": "2.0", "id": 3, "result": {"any": ["thing"]}}
