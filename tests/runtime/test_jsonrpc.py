"""The JSON-RPC layer of the generated packages, in the three styles, on the fixture
``rpc`` (methods of both sides, a protocol method, an extension-free method table, an
``Error`` def with an open ``ErrorCode``): frames typed by method, the router's answers,
bad frames, and a connection over a local socket pair that keeps serving."""

from __future__ import annotations

import asyncio
import importlib
import json
import socket
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import SCHEMAS, generate, import_file

STYLES = ("pydantic", "dataclasses", "typeddict")
_MODULES: dict[str, ModuleType] = {}


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    style = request.param
    if style not in _MODULES:
        out = generate(SCHEMAS / "rpc", tmp_path_factory.mktemp(f"rpc-{style}"), (style,))
        _MODULES[style] = import_file(out / f"acp_{style}" / "v1.py")
    return _MODULES[style]


def line(frame: dict[str, Any]) -> bytes:
    return json.dumps(frame).encode() + b"\n"


PROMPT = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


def test_request_is_typed_by_its_method_and_encodes_back(m: ModuleType) -> None:
    frame = m.RPC.parse(line({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": PROMPT}))
    assert type(frame).__name__ == "Request" and frame.id == 3 and frame.method == "session/prompt"
    if isinstance(frame.params, dict):  # TypedDict: the value is its wire JSON
        assert frame.params == PROMPT
    else:
        assert type(frame.params) is m.PromptRequest and frame.params.prompt[0].text == "hi"
    assert json.loads(m.RPC.encode(frame)) == {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": PROMPT}


def test_same_shape_params_keep_their_own_method(m: ModuleType) -> None:
    """``session/close`` and ``session/cancel`` take the same shape: each frame is its own
    method's type, never a guess by shape."""
    close = m.RPC.parse({"jsonrpc": "2.0", "id": 1, "method": "session/close", "params": {"sessionId": "s"}})
    cancel = m.RPC.parse({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
    assert type(close).__name__ == "Request" and type(cancel).__name__ == "Notification"
    if not isinstance(close.params, dict):
        assert type(close.params) is m.CloseSessionRequest and type(cancel.params) is m.CancelNotification


def test_params_of_another_method_are_rejected_with_the_path(m: ModuleType) -> None:
    with pytest.raises(m.RpcError) as err:
        m.RPC.parse({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {"sessionId": "s"}})
    assert err.value.code == -32602 and err.value.id == 9 and err.value.answer
    assert "prompt" in json.dumps(err.value.data)
    with pytest.raises(m.RpcError) as bad:
        m.RPC.parse({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": 5}}})
    assert bad.value.code == -32602 and not bad.value.answer  # a notification is never answered
    assert "text" in json.dumps(bad.value.data)


def test_extension_and_unknown_methods(m: ModuleType) -> None:
    ext = m.RPC.parse({"jsonrpc": "2.0", "id": "x", "method": "_zed/ping", "params": {"a": [1]}})
    assert type(ext).__name__ == "Request" and ext.params == {"a": [1]}
    note = m.RPC.parse({"jsonrpc": "2.0", "method": "_zed/note"})
    assert type(note).__name__ == "Notification" and note.params is None
    unknown = m.RPC.parse({"jsonrpc": "2.0", "id": 2, "method": "session/bogus", "params": {}})
    assert type(unknown).__name__ == "MethodNotFound" and unknown.request and unknown.id == 2
    # a side receives only its own methods: session/update is the client's
    assert type(m.RPC.parse({"jsonrpc": "2.0", "method": "session/update", "params": {}}, side="agent")).__name__ == "MethodNotFound"


def test_responses_are_typed_by_the_request_they_answer(m: ModuleType) -> None:
    ok = m.RPC.parse({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn"}}, method_of=lambda i: "session/prompt")
    assert type(ok).__name__ == "Response" and ok.method == "session/prompt"
    if not isinstance(ok.result, dict):
        assert type(ok.result) is m.PromptResponse
    package = sys.modules[m.__package__]
    with pytest.raises(package.InvalidResultError) as bad:
        m.RPC.parse({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": 1}}, method_of=lambda i: "session/prompt")
    assert not isinstance(bad.value, m.RpcError)  # the peer did not answer with an error
    assert (bad.value.id, bad.value.method, bad.value.raw) == (1, "session/prompt", {"stopReason": 1})
    raw = m.RPC.parse({"jsonrpc": "2.0", "id": 1, "result": {"anything": 1}})
    assert raw.method is None and raw.result == {"anything": 1}
    err = m.RPC.parse({"jsonrpc": "2.0", "id": 1, "error": {"code": -32099, "message": "custom", "data": [1]}})
    assert type(err).__name__ == "ErrorResponse"
    assert m.RPC.to_json(err) == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32099, "message": "custom", "data": [1]}}


def test_a_typed_answer_keeps_its_id_and_method(m: ModuleType) -> None:
    for rid in (7, "r", None):
        got = m.RPC.parse({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}, method_of=lambda i: "session/prompt")
        assert (type(got).__name__, got.id, got.method) == ("Response", rid, "session/prompt")
        assert m.RPC.codec.dump(got.result) == {"stopReason": "end_turn"}


def test_an_invalid_result_says_what_is_wrong_with_it(m: ModuleType) -> None:
    package = sys.modules[m.__package__]
    result = {"stopReason": 1}
    with pytest.raises(package.InvalidResultError) as bad:
        m.RPC.parse(
            {"jsonrpc": "2.0", "id": "p", "result": result},
            method_of=lambda i: "session/prompt",
        )
    e = bad.value
    assert (e.method, e.id, e.raw) == ("session/prompt", "p", result)
    assert (
        e.detail == _described(m, m.RPC, m.PromptResponse, result)
        and e.detail is not None
    )


def test_an_answer_without_a_result_type_keeps_its_method(m: ModuleType) -> None:
    """An answer to a request whose method has no result type here (an extension method,
    one this module does not know, one whose spec has none) keeps its result as received,
    named by that method."""
    free = spec_of(m, "x/free", "agent")._replace(result=None)
    rpc = type(m.RPC)((*m.RPC.methods, free), m.RPC.codec, m.RPC.error_type)
    asked: list[Any] = []

    def method_of(rid: Any) -> str:
        asked.append(rid)
        return {1: "_x/y", "two": "x/free", 3: "session/bogus"}[rid]

    for rid, method in ((1, "_x/y"), ("two", "x/free"), (3, "session/bogus")):
        got = rpc.parse(
            {"jsonrpc": "2.0", "id": rid, "result": {"a": [rid]}}, method_of=method_of
        )
        assert (type(got).__name__, got.id, got.result, got.method) == (
            "Response",
            rid,
            {"a": [rid]},
            method,
        )
    assert asked == [1, "two", 3]


def test_the_constructors_of_connections_hand_on_every_argument(
    m: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``connect``, ``over``, ``asgi_app``, ``connect_url``, ``stdio`` and ``spawn`` hand
    the module's ``Rpc``, their arguments and their defaults on to the transport that makes
    the connection (stood in for here, each recording what it was given)."""
    package = m.__package__
    calls: list[tuple[Any, ...]] = []

    def record(name: str) -> Any:
        def made(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, args, kwargs))
            return name

        return made

    def arecord(name: str) -> Any:
        async def made(*args: Any, **kwargs: Any) -> Any:
            return record(name)(*args, **kwargs)

        return made

    monkeypatch.setattr(
        importlib.import_module(f"{package}._connection"),
        "Connection",
        record("Connection"),
    )
    transports = importlib.import_module(f"{package}._transports")
    monkeypatch.setattr(transports, "channel_connection", record("channel_connection"))
    monkeypatch.setattr(transports, "stdio_connection", arecord("stdio_connection"))
    monkeypatch.setattr(transports, "spawn_connection", arecord("spawn_connection"))
    monkeypatch.setattr(
        importlib.import_module(f"{package}._remote_server"),
        "asgi_app",
        record("asgi_app"),
    )
    monkeypatch.setattr(
        importlib.import_module(f"{package}._remote_client"),
        "connect_url",
        arecord("connect_url"),
    )
    rpc, reader, writer, channel, serve = m.RPC, object(), object(), object(), object()
    stderr, env = object(), {"A": "1"}

    async def every() -> list[Any]:
        return [
            rpc.connect("agent", reader, writer, max_line=7),
            rpc.over("client", channel, max_line=8),
            rpc.asgi_app(serve, idle_timeout=9),
            await rpc.connect_url("ws://h/acp", http2=True),
            await rpc.stdio("agent", max_line=10),
            await rpc.spawn("prog", "a", "b"),
            await rpc.spawn(
                "prog",
                side="agent",
                env=env,
                cwd="/w",
                stderr=stderr,
                start_new_session=False,
                max_line=11,
            ),
        ]

    made = asyncio.run(every())
    assert made == [c[0] for c in calls]
    assert calls == [
        ("Connection", (rpc, "agent", reader, writer), {"max_line": 7}),
        ("channel_connection", (rpc, "client", channel), {"max_line": 8}),
        ("asgi_app", (rpc, serve), {"idle_timeout": 9}),
        ("connect_url", (rpc, "ws://h/acp"), {"http2": True}),
        ("stdio_connection", (rpc, "agent"), {"max_line": 10}),
        (
            "spawn_connection",
            (rpc, "client", "prog", "a", "b"),
            {"env": None, "cwd": None, "stderr": None, "start_new_session": True},
        ),
        (
            "spawn_connection",
            (rpc, "agent", "prog"),
            {
                "env": env,
                "cwd": "/w",
                "stderr": stderr,
                "start_new_session": False,
                "max_line": 11,
            },
        ),
    ]


def _frame_error(m: ModuleType, frame: Any, **kwargs: Any) -> tuple[Any, ...]:
    """The whole ``FrameError`` ``frame`` raises: code, message, data, answer, call, id."""
    with pytest.raises(sys.modules[m.__package__].FrameError) as caught:
        m.RPC.parse(frame, **kwargs)
    e = caught.value
    return (e.code, e.message, e.data, e.answer, e.call, e.id)


def _described(m: ModuleType, rpc: Any, kind: Any, value: Any) -> Any:
    """What the codec says of ``value`` not being a ``kind``."""
    with pytest.raises(rpc.codec.errors) as caught:
        rpc.codec.load(kind, value)
    return rpc.codec.describe(caught.value)


def test_an_error_object_the_error_def_rejects_is_judged_in_full(m: ModuleType) -> None:
    body = {"code": "x", "message": "m"}
    frame = {"jsonrpc": "2.0", "id": 5, "error": body}
    whole = (
        -32600,
        "Invalid error object",
        _described(m, m.RPC, m.RPC.error_type, body),
        False,
        True,
        5,
    )
    assert _frame_error(m, frame, side="agent") == whole
    assert _frame_error(m, line(frame), side="agent") == whole
    got = m.RPC.parse(
        {"jsonrpc": "2.0", "id": "r", "error": {"code": -1, "message": "m"}}
    )
    assert got.id == "r" and m.RPC.codec.dump(got.error) == {"code": -1, "message": "m"}


@pytest.mark.parametrize(
    "body",
    [
        [1],
        "e",
        {"message": "m"},
        {"code": "1", "message": "m"},
        {"code": 1.0, "message": "m"},
        {"code": True, "message": "m"},
        {"code": 1},
        {"code": 1, "message": 5},
        {"CODE": 1, "MESSAGE": "m"},
    ],
)
def test_without_an_error_def_an_error_object_needs_a_code_and_a_message(
    m: ModuleType, body: Any
) -> None:
    """A release without an ``Error`` def reads an error object as parsed JSON, checked
    for an integer ``code`` and a string ``message``."""
    rpc = type(m.RPC)(m.RPC.methods, m.RPC.codec, None)
    with pytest.raises(sys.modules[m.__package__].FrameError) as caught:
        rpc.parse({"jsonrpc": "2.0", "id": 5, "error": body})
    e = caught.value
    assert (e.code, e.message, e.data, e.answer, e.call, e.id) == (
        -32600,
        "Invalid error object",
        "expected code and message",
        False,
        True,
        5,
    )


def test_without_an_error_def_an_error_object_is_kept_as_json(m: ModuleType) -> None:
    rpc = type(m.RPC)(m.RPC.methods, m.RPC.codec, None)
    body = {"code": -3, "message": "m", "data": {"k": [1]}}
    got = rpc.parse({"jsonrpc": "2.0", "id": 5, "error": body})
    assert (type(got).__name__, got.id, got.error) == ("ErrorResponse", 5, body)
    built = rpc.error(6, -4, "n", {"k": 2})
    assert (type(built).__name__, built.id, built.error) == (
        "ErrorResponse",
        6,
        {"code": -4, "message": "n", "data": {"k": 2}},
    )
    assert rpc.error("i", -5, "o").error == {"code": -5, "message": "o"}
    assert rpc.error(None, -5, "o", 0).error == {"code": -5, "message": "o", "data": 0}
    typed = m.RPC.error(7, -6, "p", [3])
    assert typed.id == 7 and m.RPC.codec.dump(typed.error) == {
        "code": -6,
        "message": "p",
        "data": [3],
    }
    assert m.RPC.codec.dump(m.RPC.error(8, -7, "q").error) == {
        "code": -7,
        "message": "q",
    }


def test_without_an_error_def_a_broken_error_object_fails_the_request_it_answers(m: ModuleType) -> None:
    """An answer to one of our requests whose error object has no integer ``code`` and
    string ``message`` fails that request with :class:`InvalidResultError`, as it does
    with an ``Error`` def, instead of leaving it waiting: the error keeps the answer's id."""
    rpc = type(m.RPC)(m.RPC.methods, m.RPC.codec, None)
    package = sys.modules[m.__package__]
    with pytest.raises(package.FrameError) as caught:
        rpc.parse({"jsonrpc": "2.0", "id": 5, "error": {"code": "x"}})
    assert caught.value.id == 5

    async def scenario() -> Any:
        a, b = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=a)
        peer_r, peer_w = await asyncio.open_connection(sock=b)
        conn = rpc.connect("agent", reader, writer)
        serving = asyncio.create_task(conn.serve(Handler(m)))
        asked = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
        sent = json.loads(await peer_r.readline())
        peer_w.write(line({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": "x", "message": "m"}}))
        await peer_w.drain()
        with pytest.raises(package.InvalidResultError) as err:
            await asyncio.wait_for(asked, 10)
        peer_w.close()
        await serving
        return sent["id"], err.value

    rid, error = asyncio.run(scenario())
    assert (error.method, error.id) == ("fs/read_text_file", rid)
    assert str(error.detail).startswith("Invalid error object"), error.detail


_CALLS_JUDGED = [
    (
        {"jsonrpc": "2.0", "id": [1], "method": "initialize"},
        (
            -32600,
            "Invalid request",
            "id must be a string, a number or null",
            True,
            True,
            None,
        ),
    ),
    (
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/cancel"},
        (
            -32600,
            "Invalid request",
            "id must be a string, a number or null",
            True,
            True,
            None,
        ),
    ),
    (
        {
            "jsonrpc": "1.0",
            "id": 3,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        },
        (-32600, "Invalid request", "jsonrpc must be '2.0'", True, True, 3),
    ),
    (
        {"id": "t", "method": "initialize", "params": {"protocolVersion": 1}},
        (-32600, "Invalid request", "jsonrpc must be '2.0'", True, True, "t"),
    ),
    (
        {"jsonrpc": "1.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        (-32600, "Invalid request", "jsonrpc must be '2.0'", False, True, None),
    ),
    (
        {"jsonrpc": "2.0", "id": 4, "method": 12},
        (-32600, "Invalid request", "method must be a string", True, True, 4),
    ),
    (
        {"jsonrpc": "2.0", "method": ["x"]},
        (-32600, "Invalid request", "method must be a string", False, True, None),
    ),
    (
        {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": "x"},
        (
            -32600,
            "Invalid request",
            "params must be an object or an array",
            True,
            True,
            4,
        ),
    ),
    (
        {"jsonrpc": "2.0", "id": 4, "method": "_ext/x", "params": 5},
        (
            -32600,
            "Invalid request",
            "params must be an object or an array",
            True,
            True,
            4,
        ),
    ),
    (
        {"jsonrpc": "2.0", "method": "session/cancel", "params": False},
        (
            -32600,
            "Invalid request",
            "params must be an object or an array",
            False,
            True,
            None,
        ),
    ),
]


@pytest.mark.parametrize(
    ("frame", "whole"), _CALLS_JUDGED, ids=range(len(_CALLS_JUDGED))
)
def test_calls_are_judged_in_full(
    m: ModuleType, frame: dict[str, Any], whole: tuple[Any, ...]
) -> None:
    """A request or notification that cannot be accepted: its whole error, as parsed JSON
    and as a line."""
    assert _frame_error(m, frame, side="agent") == whole
    assert _frame_error(m, line(frame), side="agent") == whole


@pytest.mark.parametrize(
    ("frame", "kind", "value"),
    [
        (
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "session/close",
                "params": {"sessionId": 1},
            },
            "CloseSessionRequest",
            {"sessionId": 1},
        ),
        (
            {"jsonrpc": "2.0", "id": "n", "method": "session/close", "params": None},
            "CloseSessionRequest",
            None,
        ),
        (
            {"jsonrpc": "2.0", "id": 0, "method": "session/close"},
            "CloseSessionRequest",
            None,
        ),
        (
            {"jsonrpc": "2.0", "id": 1.5, "method": "session/close", "params": [1]},
            "CloseSessionRequest",
            [1],
        ),
        (
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 2}},
            "CancelNotification",
            {"sessionId": 2},
        ),
        ({"jsonrpc": "2.0", "method": "session/cancel"}, "CancelNotification", None),
    ],
)
def test_invalid_params_are_judged_in_full(
    m: ModuleType, frame: dict[str, Any], kind: str, value: Any
) -> None:
    """Params (absent ones read as null) that are not the method's: -32602 with what the
    codec says of them, answered for a request (with its id), never for a notification.
    """
    request = "id" in frame
    whole = (
        -32602,
        "Invalid params",
        _described(m, m.RPC, getattr(m, kind), value),
        request,
        True,
        frame.get("id"),
    )
    assert _frame_error(m, frame, side="agent") == whole
    assert _frame_error(m, line(frame), side="agent") == whole


def test_params_nested_too_deeply_are_invalid_params(m: ModuleType) -> None:
    """Params whose validation goes deeper than Python's recursion limit (a codec that
    recurses, on a deeply nested value): -32602, answered for a request only."""
    import copy

    codec = copy.copy(m.RPC.codec)

    def load(kind: Any, value: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    codec.load = load
    codec.frame_reader = lambda table: None
    rpc = type(m.RPC)(m.RPC.methods, codec, m.RPC.error_type)
    for frame, whole in (
        (
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/close",
                "params": {"sessionId": "s"},
            },
            (-32602, "Invalid params", "nested too deeply", True, True, 2),
        ),
        (
            {
                "jsonrpc": "2.0",
                "method": "session/cancel",
                "params": {"sessionId": "s"},
            },
            (-32602, "Invalid params", "nested too deeply", False, True, None),
        ),
    ):
        with pytest.raises(sys.modules[m.__package__].FrameError) as caught:
            rpc.parse(frame, side="agent")
        e = caught.value
        assert (e.code, e.message, e.data, e.answer, e.call, e.id) == whole


def test_absent_params_are_loaded_as_null(m: ModuleType) -> None:
    """A call without params has its params type loaded from ``null`` (what the codec
    makes of it is the method's params), as one with ``"params": null`` does."""
    import copy

    codec = copy.copy(m.RPC.codec)
    loaded: list[Any] = []

    def load(kind: Any, value: Any) -> Any:
        loaded.append((kind, value))
        return "made"

    codec.load = load
    codec.frame_reader = lambda table: None
    rpc = type(m.RPC)(m.RPC.methods, codec, m.RPC.error_type)
    close = rpc.spec("session/close").params
    for frame in ({"jsonrpc": "2.0", "id": 1, "method": "session/close"}, {"jsonrpc": "2.0", "id": 1, "method": "session/close", "params": None}):
        got = rpc.parse(frame, side="agent")
        assert (type(got).__name__, got.id, got.method, got.params) == ("Request", 1, "session/close", "made")
        assert loaded.pop() == (close, None) and not loaded


def test_calls_of_methods_without_a_params_type_or_unknown_keep_their_params(
    m: ModuleType,
) -> None:
    """A method whose spec has no params type keeps the params as received (absent: None);
    an unknown method is a ``MethodNotFound`` holding its id, method, params and kind;
    an extension method keeps its params."""
    free = spec_of(m, "x/free", "agent")._replace(params=None)
    told = spec_of(m, "x/told", "agent", "notification")._replace(params=None)
    rpc = type(m.RPC)((*m.RPC.methods, free, told), m.RPC.codec, m.RPC.error_type)

    def got(frame: dict[str, Any]) -> tuple[Any, ...]:
        value = rpc.parse(frame, side="agent")
        kind = type(value).__name__
        if kind == "MethodNotFound":
            return (kind, value.id, value.method, value.params, value.request)
        if kind == "Request":
            return (kind, value.id, value.method, value.params)
        return (kind, value.method, value.params)

    call = {"jsonrpc": "2.0", "id": 3}
    note = {"jsonrpc": "2.0"}
    assert got({**call, "method": "x/free", "params": {"a": [1]}}) == (
        "Request",
        3,
        "x/free",
        {"a": [1]},
    )
    assert got({**call, "method": "x/free", "params": [1, 2]}) == (
        "Request",
        3,
        "x/free",
        [1, 2],
    )
    assert got({**call, "method": "x/free"}) == ("Request", 3, "x/free", None)
    assert got({**call, "method": "x/free", "params": None}) == (
        "Request",
        3,
        "x/free",
        None,
    )
    assert got({**note, "method": "x/told", "params": {"b": 2}}) == (
        "Notification",
        "x/told",
        {"b": 2},
    )
    assert got({**note, "method": "x/told"}) == ("Notification", "x/told", None)
    assert got({**call, "method": "x/told", "params": {"b": 2}}) == (
        "MethodNotFound",
        3,
        "x/told",
        {"b": 2},
        True,
    )
    assert got({**note, "method": "x/free", "params": {"a": 1}}) == (
        "MethodNotFound",
        None,
        "x/free",
        {"a": 1},
        False,
    )
    assert got({**note, "method": "x/free"}) == (
        "MethodNotFound",
        None,
        "x/free",
        None,
        False,
    )
    assert got({**call, "id": None, "method": "y/z", "params": [3]}) == (
        "MethodNotFound",
        None,
        "y/z",
        [3],
        True,
    )
    assert got({**call, "id": "q", "method": "y/z"}) == (
        "MethodNotFound",
        "q",
        "y/z",
        None,
        True,
    )
    assert got({**call, "method": "_y/z", "params": [3]}) == ("Request", 3, "_y/z", [3])
    assert got({**call, "id": None, "method": "_y/z"}) == (
        "Request",
        None,
        "_y/z",
        None,
    )
    assert got({**note, "method": "_y/z", "params": {"c": 1}}) == (
        "Notification",
        "_y/z",
        {"c": 1},
    )
    assert got({**note, "method": "_y/z"}) == ("Notification", "_y/z", None)
    assert got({**note, "method": "y_z"}) == (
        "MethodNotFound",
        None,
        "y_z",
        None,
        False,
    )
    typed = rpc.parse(
        {**call, "id": None, "method": "session/close", "params": {"sessionId": "s"}},
        side="agent",
    )
    assert (type(typed).__name__, typed.id, typed.method) == (
        "Request",
        None,
        "session/close",
    )
    assert rpc.codec.dump(typed.params) == {"sessionId": "s"}
    cancel = rpc.parse(
        {**note, "method": "session/cancel", "params": {"sessionId": "s"}}, side="agent"
    )
    assert (type(cancel).__name__, cancel.method, rpc.codec.dump(cancel.params)) == (
        "Notification",
        "session/cancel",
        {"sessionId": "s"},
    )


def test_route_params_types_the_params_its_method_names(m: ModuleType) -> None:
    rpc = m.RPC
    close = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/close",
        "params": {"sessionId": "s"},
    }
    routed = rpc.route_params(close, "request")
    assert set(routed) == set(close) and {
        k: v for k, v in routed.items() if k != "params"
    } == {"jsonrpc": "2.0", "id": 1, "method": "session/close"}
    assert rpc.codec.dump(routed["params"]) == {"sessionId": "s"} and close[
        "params"
    ] == {"sessionId": "s"}
    if not isinstance(routed["params"], dict):
        assert type(routed["params"]) is m.CloseSessionRequest
    cancel = {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "s"},
    }
    assert rpc.codec.dump(rpc.route_params(cancel, "notification")["params"]) == {
        "sessionId": "s"
    }
    for same in (
        [1],
        "x",
        None,
        {**close, "method": 5},
        {**close, "params": None},
        {"jsonrpc": "2.0", "id": 1, "method": "session/close"},
        {**close, "method": "_x/y"},
    ):
        assert rpc.route_params(same, "request") is same
    with pytest.raises(ValueError) as unknown:
        rpc.route_params({**close, "method": "session/bogus"}, "request")
    assert str(unknown.value) == "unknown request method 'session/bogus'"
    with pytest.raises(ValueError) as other:
        rpc.route_params(close, "notification")
    assert str(other.value) == "unknown notification method 'session/close'"
    with pytest.raises(ValueError) as bad:
        rpc.route_params({**close, "params": {"sessionId": 5}}, "request")
    assert str(bad.value).startswith("params of 'session/close': ") and len(
        str(bad.value)
    ) > len("params of 'session/close': ")
    free = spec_of(m, "x/free", "agent")._replace(params=None)
    loose = type(m.RPC)((free,), m.RPC.codec, m.RPC.error_type)
    plain = {"jsonrpc": "2.0", "id": 1, "method": "x/free", "params": {"any": 1}}
    assert loose.route_params(plain, "request") is plain


def test_encode_refuses_what_is_no_frame(m: ModuleType) -> None:
    with pytest.raises(TypeError) as caught:
        m.RPC.encode({"jsonrpc": "2.0"})
    assert str(caught.value) == "cannot encode dict"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b' {"jsonrpc":"2.0","id":1,"result":{}} \r\n',
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"result":{}}',
        '{"jsonrpc":"2.0","id":1,"result":{}}'.encode("utf-16"),
        '{"jsonrpc":"2.0","id":1,"result":{}}'.encode("utf-32-le"),
        b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","result":{}}',
        b'{"jsonrpc":"2.0","id":1,"result":{}} x',
        b'{"jsonrpc":"2.0","id":1,"result":{}',
        b"\xff",
        b"",
    ],
)
def test_a_frame_is_read_as_json_loads_reads_it(m: ModuleType, raw: bytes) -> None:
    """The frame reader's shortcut for plain UTF-8 frames reads every frame as
    ``json.loads`` does: the same value, the same error (BOMs, UTF-16 and UTF-32, a
    surrogate, text after the value, a broken or empty frame)."""
    package = sys.modules[m.__package__]
    try:
        expected: Any = ("ok", json.loads(raw))
    except ValueError as exc:
        expected = ("error", str(exc))
    try:
        got: Any = ("ok", m.RPC.parse(raw, method_of=lambda i: None).id)
        expected = ("ok", expected[1]["id"]) if expected[0] == "ok" else expected
    except package.FrameError as exc:
        got = ("error", exc.data)
    assert got == expected


def test_whole_numbers_stay_whole(m: ModuleType) -> None:
    frame = m.RPC.parse({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1, "ratio": 2}}, method_of=lambda i: "initialize")
    assert b'"ratio":2}' in m.RPC.encode(frame) or b'"ratio":2,' in m.RPC.encode(frame)


class Handler:
    """Implements some of the agent's methods, duck-typed (no base class)."""

    def __init__(self, m: ModuleType) -> None:
        self.m = m
        self.cancelled: list[Any] = []

    async def initialize(self, params: Any) -> Any:
        version = params["protocolVersion"] if isinstance(params, dict) else params.protocol_version
        if version == 7:
            raise self.m.RpcError(-32000, "unsupported", {"version": 7})
        if version == 8:
            raise RuntimeError("boom")
        if version == 9:
            return {"protocolVersion": "not a number"}  # an invalid result is not sent
        return self.m.RPC.codec.load(self.m.InitializeResponse, {"protocolVersion": version})

    async def session_cancel(self, params: Any) -> None:
        self.cancelled.append(params)

    async def extension_request(self, method: str, params: Any) -> Any:
        return {"method": method, "params": params}


def answer(m: ModuleType, frame: Any, handler: Any = None) -> Any:
    router = m.RPC and sys.modules[m.__package__].Router(m.RPC, "agent", handler or Handler(m))
    out = asyncio.run(router.handle_line(frame if isinstance(frame, (bytes, str)) else line(frame)))
    return None if out is None else json.loads(out)


def test_router_answers(m: ModuleType) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    assert answer(m, init) == {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}
    for version, code in ((7, -32000), (8, -32603), (9, -32603)):
        got = answer(m, {**init, "params": {"protocolVersion": version}})
        assert got["id"] == 1 and got["error"]["code"] == code, got
    assert answer(m, {**init, "params": {"protocolVersion": -1}})["error"]["code"] == -32602
    assert answer(m, {**init, "method": "session/close", "params": {"sessionId": "s"}})["error"]["code"] == -32601  # not implemented
    assert answer(m, {**init, "method": "nope"})["error"] == {"code": -32601, "message": "Method not found", "data": {"method": "nope"}}
    assert answer(m, {**init, "method": "_x/echo", "params": [1]})["result"] == {"method": "_x/echo", "params": [1]}
    handler = Handler(m)
    assert answer(m, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}, handler) is None
    assert len(handler.cancelled) == 1


def test_subclassing_the_interface(m: ModuleType) -> None:
    """A method the subclass leaves out is answered -32601 by the interface's default."""

    class Agent(m.Agent):  # type: ignore[misc, name-defined]
        pass

    got = answer(m, {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {"protocolVersion": 1}}, Agent())
    assert got["error"]["code"] == -32601 and got["id"] == 5
    assert answer(m, {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}, Agent()) is None


BAD_FRAMES = [
    (b"{not json", -32700, None),
    (b"[1, 2]", -32600, None),
    (b"42", -32600, None),
    (line({"id": 4, "method": "initialize", "params": {"protocolVersion": 1}}), -32600, 4),  # no jsonrpc
    (line({"jsonrpc": "1.0", "id": 4, "method": "initialize"}), -32600, 4),
    (line({"jsonrpc": "2.0", "id": {"a": 1}, "method": "initialize"}), -32600, None),
    (line({"jsonrpc": "2.0", "id": True, "method": "initialize"}), -32600, None),
    (line({"jsonrpc": "2.0", "id": 4, "method": 12}), -32600, 4),
    (line({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": "x"}), -32600, 4),
    (line({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"sessionId": "s"}}), -32602, 4),
    (b"[" * 100000 + b"]" * 100000, -32700, None),
    (line({"jsonrpc": "2.0"}), -32600, None),
]


@pytest.mark.parametrize("frame,code,rid", BAD_FRAMES, ids=range(len(BAD_FRAMES)))
def test_bad_frames_get_the_json_rpc_answer(m: ModuleType, frame: bytes, code: int, rid: Any) -> None:
    got = answer(m, frame)
    assert got["jsonrpc"] == "2.0" and got["id"] == rid and got["error"]["code"] == code, got


def test_frames_json_rpc_does_not_answer(m: ModuleType) -> None:
    assert answer(m, {"jsonrpc": "2.0", "id": 77, "result": {}}) is None  # a response to nothing in flight
    assert answer(m, {"jsonrpc": "2.0", "method": "initialize", "params": {}}) is None  # bad notification
    assert answer(m, {"jsonrpc": "2.0", "method": "nope"}) is None


def test_connection_keeps_serving_and_correlates(m: ModuleType) -> None:
    """Over a local socket pair: bad frames in between, two requests of ours in flight at
    once answered out of order, and the peer's request served."""

    async def scenario() -> list[Any]:
        a, b = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=a)
        peer_r, peer_w = await asyncio.open_connection(sock=b)
        conn = m.RPC.connect("agent", reader, writer)
        serving = asyncio.create_task(conn.serve(Handler(m)))
        first = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/a"}))
        second = asyncio.ensure_future(conn.request("fs/read_text_file", {"sessionId": "s", "path": "/b"}))
        sent = [json.loads(await peer_r.readline()) for _ in range(2)]
        assert [s["params"]["path"] for s in sent] == ["/a", "/b"]
        for data in (b"garbage\n", line({"jsonrpc": "2.0", "id": 999, "result": {}}), b"\n"):
            peer_w.write(data)
        peer_w.write(line({"jsonrpc": "2.0", "id": sent[1]["id"], "result": {"content": "B"}}))
        peer_w.write(line({"jsonrpc": "2.0", "id": sent[0]["id"], "error": {"code": -32002, "message": "gone"}}))
        peer_w.write(line({"jsonrpc": "2.0", "id": "p1", "method": "initialize", "params": {"protocolVersion": 1}}))
        await peer_w.drain()
        answers = [json.loads(await peer_r.readline()) for _ in range(2)]
        result = await second
        with pytest.raises(m.RpcError) as err:
            await first
        peer_w.close()
        await serving
        content = result["content"] if isinstance(result, dict) else result.content
        return [content, err.value.code, sorted(answers, key=lambda x: str(x["id"]))]

    content, code, answers = asyncio.run(scenario())
    assert content == "B" and code == -32002
    assert answers == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error", "data": answers[0]["error"]["data"]}},
        {"jsonrpc": "2.0", "id": "p1", "result": {"protocolVersion": 1}},
    ]


BIG_INITIALIZE = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"' + b"y" * 5000 + b'"}}\n'


def test_oversized_frame_is_answered_with_its_id_and_serving_goes_on(m: ModuleType) -> None:
    """A line over the connection's ``max_line`` (whatever the reader's own limit) is
    answered with its own id, and the next line is served."""

    async def scenario() -> list[Any]:
        a, b = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=a, limit=1024)
        peer_r, peer_w = await asyncio.open_connection(sock=b)
        conn = m.RPC.connect("agent", reader, writer, max_line=2048)
        serving = asyncio.create_task(conn.serve(Handler(m)))
        peer_w.write(BIG_INITIALIZE)
        peer_w.write(line({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 3}}))
        await peer_w.drain()
        got = [json.loads(await peer_r.readline()) for _ in range(2)]
        peer_w.close()
        await serving
        return got

    too_big, ok = asyncio.run(scenario())
    assert too_big["error"]["code"] == -32600 and too_big["id"] == 1
    size = len(BIG_INITIALIZE) - 1
    assert too_big["error"]["data"] == {"reason": "line too long", "size": size, "limit": 2048}
    assert ok == {"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": 3}}


def test_handler_names_come_from_the_wire_method(m: ModuleType) -> None:
    handlers = {spec.method: spec.handler for spec in m.METHODS}
    assert handlers == {
        "$/cancel_request": "cancel_request",
        "fs/read_text_file": "fs_read_text_file",
        "import": "import_",
        "initialize": "initialize",
        "session/cancel": "session_cancel",
        "session/close": "session_close",
        "session/prompt": "session_prompt",
        "session/update": "session_update",
    }
    assert m.Agent.session_prompt.__doc__ == "Sends a user prompt."
    agent = {n for n in vars(m.Agent) if not n.startswith("_")}
    assert agent == {"cancel_request", "initialize", "session_cancel", "session_close", "session_prompt", "extension_request", "extension_notification"}


def test_building_messages(m: ModuleType, tmp_path: Path) -> None:
    if m.__name__.endswith("v1") and hasattr(m, "AcpObject"):  # dataclasses
        block = m.TextContentBlock(text="hi")
        assert m.dump(block) == {"type": "text", "text": "hi"}
        with pytest.raises(TypeError):
            m.TextContentBlock(txet="hi")
        assert m.dump(m.ReadTextFileRequest(session_id="s", path="/a", line=None)) == {"sessionId": "s", "path": "/a", "line": None}
        assert m.dump(m.ReadTextFileRequest(session_id="s", path="/a")) == {"sessionId": "s", "path": "/a"}
    elif hasattr(m, "AcpBaseModel"):  # pydantic
        block = m.TextContentBlock(text="hi")
        assert block.model_dump(by_alias=True, exclude_unset=True) == {"type": "text", "text": "hi"}
        with pytest.raises(TypeError):
            m.TextContentBlock(txet="hi")
        sent = m.ReadTextFileRequest(session_id="s", path="/a", line=None)
        assert sent.model_dump(by_alias=True, exclude_unset=True) == {"sessionId": "s", "path": "/a", "line": None}
        assert m.ReadTextFileRequest.model_validate({"sessionId": "s", "path": "/a", "extra": 1}).model_extra == {"extra": 1}
    frame = m.RPC.parse({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "hi"}}})
    assert json.loads(m.RPC.encode(frame))["params"]["update"] == {"type": "text", "text": "hi"}


def _validate(m: ModuleType, name: str, data: Any) -> Any:
    """``name`` through the style's own validation (the codec ``RPC`` uses)."""
    return m.RPC.codec.load(getattr(m, name), data)


def test_envelope_defs_route_params_by_method(m: ModuleType) -> None:
    """The schema's ``ClientRequest`` (params: anyOf of every method's params) types its
    params by ``method`` too: same-shape params keep their method, another method's are
    rejected, an unknown method is rejected, absent or null params and extension methods
    are what the schema allows."""
    close = {"jsonrpc": "2.0", "id": 1, "method": "session/close", "params": {"sessionId": "s"}}
    value = _validate(m, "ClientRequest", close)
    params = value["params"] if isinstance(value, dict) else value.params
    if not isinstance(params, dict):
        assert type(params) is m.CloseSessionRequest
    assert m.RPC.codec.dump(value) == close
    for bad in (
        {**close, "method": "session/prompt"},  # CloseSessionRequest's shape under another method
        {**close, "method": "session/unknown"},
    ):
        with pytest.raises(m.RPC.codec.errors):
            _validate(m, "ClientRequest", bad)
    for fine in ({**close, "params": None}, {"jsonrpc": "2.0", "id": 1, "method": "session/prompt"}, {**close, "method": "_x/y"}):
        assert m.RPC.codec.dump(_validate(m, "ClientRequest", fine)) == fine


def test_notification_envelopes_route_by_notification_methods(m: ModuleType) -> None:
    """``AgentNotification`` has no ``id``: its params are typed by the *notification*
    of that name; a request method there is unknown."""
    update = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "x"}}}
    assert m.RPC.codec.dump(_validate(m, "AgentNotification", update)) == update
    with pytest.raises(m.RPC.codec.errors):
        _validate(m, "AgentNotification", {**update, "method": "session/close"})
    with pytest.raises(m.RPC.codec.errors):
        _validate(m, "AgentNotification", {**update, "params": {"sessionId": "s", "update": {"type": "text", "text": 5}}})


def test_lines_and_parsed_json_get_the_same_outcome(m: ModuleType) -> None:
    """A line takes pydantic-core's one-pass path where the style has one; the outcome is
    the one of the general path on the parsed JSON, for good and bad frames alike."""
    frames = [
        {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": PROMPT},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 4, "method": "session/cancel", "params": {"sessionId": "s"}},  # a request of a notification
        {"jsonrpc": "2.0", "method": "session/prompt", "params": PROMPT},  # a notification of a request
        {"jsonrpc": "2.0", "id": True, "method": "session/close", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 1.0, "method": "session/close", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 5, "method": "session/close", "params": {"sessionId": "s"}, "extra": 1},
        {"jsonrpc": "2.0", "id": 6, "method": "session/close", "params": {"sessionId": 5}},
        {"jsonrpc": "2.0", "id": 7, "method": "session/close"},
    ]

    def outcome(frame: Any) -> Any:
        try:
            got = m.RPC.parse(frame)
        except m.RpcError as exc:
            return ("error", exc.code, exc.id)
        if type(got).__name__ in ("Request", "Notification"):
            return (type(got).__name__, m.RPC.to_json(got))
        return (type(got).__name__, got.id, got.method, got.request)

    for frame in frames:
        assert outcome(line(frame)) == outcome(frame), frame
        assert outcome(json.dumps(frame)) == outcome(frame), frame
    assert outcome(frames[2])[0] == "MethodNotFound" and outcome(frames[3])[0] == "MethodNotFound"


def test_frames_are_built_from_the_package(m: ModuleType) -> None:
    """A user builds frames with the package's exports, encodes them with the module's
    ``RPC``, and gets a line jsonschema accepts for the schema's envelope and that parses
    back to the same frame."""
    from jsonschema import Draft202012Validator

    package = sys.modules[m.__package__]
    root = json.loads((SCHEMAS / "rpc" / "schema.json").read_text())
    params = m.RPC.codec.load(m.PromptRequest, PROMPT)
    frame = package.Request(7, "session/prompt", params)
    wire = json.loads(m.RPC.encode(frame))
    assert Draft202012Validator({"$defs": root["$defs"], "$ref": "#/$defs/ClientRequest"}).is_valid(wire)
    back = m.RPC.parse(m.RPC.encode(frame))
    assert isinstance(back, package.Request) and back.id == 7 and m.RPC.to_json(back) == wire
    update = package.Notification("session/update", m.RPC.codec.load(m.SessionNotification, {"sessionId": "s", "update": {"type": "text", "text": "x"}}))
    assert Draft202012Validator({"$defs": root["$defs"], "$ref": "#/$defs/AgentNotification"}).is_valid(m.RPC.to_json(update))
    assert issubclass(package.FrameError, package.RpcError) and package.RpcError is m.RpcError


@pytest.mark.parametrize("escape", ["\\ud83d", "\\udfff", "\\ud800\\ud800", "a\\udc00b \\u00e9 \\ud83d\\ude00"])
def test_lone_surrogates_are_written_back_escaped(m: ModuleType, escape: str) -> None:
    """JSON allows a lone surrogate escape in a string (what a JavaScript peer sends for
    half an emoji); a frame read with one is written back with it escaped as ``\\uXXXX``,
    valid UTF-8 and the same string once parsed again, in every style and both ways
    (a value built here, a frame parsed from the wire)."""
    raw = (
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        '{"type":"text","text":"' + escape + '"}}}\n'
    ).encode()
    text = json.loads('"' + escape + '"')
    frame = m.RPC.parse(raw)
    out = m.RPC.encode(frame)
    out.decode("utf-8")  # strict: no surrogate bytes
    assert json.loads(out) == json.loads(raw)
    again = m.RPC.parse(out)
    update = again.params["update"] if isinstance(again.params, dict) else again.params.update
    assert (update["text"] if isinstance(update, dict) else update.text) == text
    assert m.RPC.encode(again) == out
    # an error built here, holding the same text
    error = sys.modules[m.__package__].ErrorResponse(7, {"code": -32000, "message": text, "data": {"k": text}})
    assert json.loads(m.RPC.encode(error).decode("utf-8"))["error"]["data"] == {"k": text}


def spec_of(m: ModuleType, method: str, side: str, kind: str = "request", session: str | None = None, session_key: str | None = None) -> Any:
    base = m.RPC.spec("session/close")
    return base._replace(method=method, side=side, kind=kind, handler=method.replace("/", "_"), session=session, session_key=session_key)


def test_the_methods_each_side_receives(m: ModuleType) -> None:
    """A side serves its own methods, those of both sides and the protocol's; None, every
    method. The first spec of a (method, kind) wins; each table is made once."""
    methods = (
        spec_of(m, "a/own", "agent"),
        spec_of(m, "c/own", "client"),
        spec_of(m, "x/both", "both"),
        spec_of(m, "$/proto", "protocol", "notification"),
        spec_of(m, "u/unsided", ""),
        spec_of(m, "a/own", "agent", "notification"),
        spec_of(m, "a/own", "client"),  # the same name and kind again: the first wins
        spec_of(m, "o/other", "other"),
    )
    rpc = type(m.RPC)(methods, m.RPC.codec, m.RPC.error_type)
    agent = rpc.receives("agent")
    assert list(agent) == [
        ("a/own", "request"),
        ("x/both", "request"),
        ("$/proto", "notification"),
        ("u/unsided", "request"),
        ("a/own", "notification"),
    ]
    assert agent[("a/own", "request")] is methods[0]
    client = rpc.receives("client")
    assert list(client) == [("c/own", "request"), ("x/both", "request"), ("$/proto", "notification"), ("u/unsided", "request"), ("a/own", "request")]
    assert client[("a/own", "request")] is methods[6]
    assert rpc.receives("agent") is agent and rpc.receives("client") is client
    every = rpc.receives(None)
    assert len(every) == 7 and every[("a/own", "request")] is methods[0] and every[("o/other", "request")] is methods[7]
    assert rpc.spec("a/own") is methods[0] and rpc.spec("a/own", "notification") is methods[5]
    assert rpc.spec("c/own", "notification") is None


def test_the_session_a_message_is_about(m: ModuleType) -> None:
    methods = (
        spec_of(m, "s/call", "agent", session="sessionId"),
        spec_of(m, "s/told", "agent", "notification", session="session_id"),
        spec_of(m, "s/none", "agent"),
    )
    rpc = type(m.RPC)(methods, m.RPC.codec, m.RPC.error_type)
    assert rpc.session_of("s/call", "request", {"sessionId": "s1"}) == "s1"
    assert rpc.session_of("s/call", "request", {"sessionId": 5}) is None
    assert rpc.session_of("s/call", "request", {}) is None
    assert rpc.session_of("s/call", "request", None) is None
    assert rpc.session_of("s/call", "notification", {"sessionId": "s1"}) is None  # another kind
    assert rpc.session_of("s/none", "request", {"sessionId": "s1"}) is None

    class Params:
        session_id = "s2"

    assert rpc.session_of("s/told", "notification", Params()) == "s2"
    assert rpc.session_of("s/told", "notification", object()) is None
    assert rpc.session_of("s/told", "notification", {"session_id": "s3"}) == "s3"
    assert rpc.session_of("s/none", "request", Params()) is None  # typed params, no session member


def test_params_in_wire_form_are_read_by_the_session_key(m: ModuleType) -> None:
    """Where the session member is an attribute, params in wire form (a dict) hold it
    under its wire key; typed params are still read by the attribute."""
    rpc = type(m.RPC)((spec_of(m, "s/call", "agent", session="session_id", session_key="sessionId"),), m.RPC.codec, m.RPC.error_type)
    assert rpc.session_of("s/call", "request", {"sessionId": "s1"}) == "s1"
    assert rpc.session_of("s/call", "request", {"session_id": "s1"}) is None
    assert rpc.session_of("s/call", "notification", {"sessionId": "s1"}) is None  # another kind

    class Params:
        session_id = "s2"
        sessionId = "s3"

    assert rpc.session_of("s/call", "request", Params()) == "s2"


def test_an_rpc_keeps_what_it_is_made_with(m: ModuleType) -> None:
    made = type(m.RPC)(m.RPC.methods, m.RPC.codec, m.RPC.error_type)
    assert (made.batches, made.version, made.error_type, made.codec) == (False, None, m.RPC.error_type, m.RPC.codec)
    told = type(m.RPC)(m.RPC.methods, m.RPC.codec, m.RPC.error_type, batches=True, version=3)
    assert (told.batches, told.version) == (True, 3)
    # the typed Error of the module, as the module's own RPC builds it
    error = made.error(1, -32000, "m").error
    assert type(error) is type(m.RPC.error(1, -32000, "m").error)
    assert made.codec.dump(error) == {"code": -32000, "message": "m"}


def test_a_call_is_read_in_one_pass_by_the_codecs_reader(m: ModuleType) -> None:
    """Where the codec offers a reader of whole frames (one pass from the text to typed
    params), each side's is made once, from that side's methods, and used for calls
    (bytes or text); an answer, which has no ``method``, is not given to it."""
    import copy

    made: list[Any] = []
    read: list[Any] = []
    codec = copy.copy(m.RPC.codec)
    real = codec.frame_reader

    def frame_reader(table: Any) -> Any:
        made.append(sorted(table))
        reader = real(table)
        if reader is None:
            return None

        def counted(line: Any) -> Any:
            read.append(line)
            return reader(line)

        return counted

    codec.frame_reader = frame_reader
    rpc = type(m.RPC)(m.RPC.methods, codec, m.RPC.error_type)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    for frame in (line(init), line(init).decode(), line(init)):
        got = rpc.parse(frame, side="agent")
        assert (type(got).__name__, got.id, got.method) == ("Request", 1, "initialize")
    assert made == [sorted(m.RPC.receives("agent"))]
    rpc.parse(line({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}}), side="agent", method_of=lambda _: "initialize")
    assert made == [sorted(m.RPC.receives("agent"))]
    if real(m.RPC.receives("agent")) is None:
        assert read == []
        return
    assert read == [line(init), line(init).decode(), line(init)]
    # another side's reader is its own
    update = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": "t"}}}
    assert type(rpc.parse(line(update), side="client")).__name__ == "Notification"
    assert made[1] == sorted(m.RPC.receives("client")) and read[-1] == line(update)
    assert type(rpc.parse(line(update), side="agent")).__name__ == "MethodNotFound"


@pytest.mark.parametrize("frame", [b"5", b'"x"', b"[1]", b"null"])
def test_a_frame_that_is_no_object(m: ModuleType, frame: bytes) -> None:
    with pytest.raises(sys.modules[m.__package__].FrameError) as caught:
        m.RPC.parse(frame, side="agent")
    error = caught.value
    assert (error.code, error.message, error.data, error.answer) == (
        -32600,
        "Invalid request",
        "a frame is a JSON object (this schema declares no batches)",
        True,
    )


@pytest.mark.parametrize(
    ("frame", "message", "data"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}, "Invalid request", "a response has exactly one of result and error"),
        ({"jsonrpc": "2.0", "id": True, "result": {}}, "Unmatched response", {"reason": "a response without a usable id answers no request", "id": True, "error": None}),
        ({"jsonrpc": "2.0", "id": [1], "result": {}}, "Unmatched response", {"reason": "a response without a usable id answers no request", "id": [1], "error": None}),
    ],
)
def test_an_answer_shaped_almost_like_the_usual_one(m: ModuleType, frame: dict[str, Any], message: str, data: Any) -> None:
    """The usual answer (an integer id, ``jsonrpc`` and ``result``, nothing else) skips the
    checks it passes; one that differs from it in any way is checked in full."""
    with pytest.raises(sys.modules[m.__package__].FrameError) as caught:
        m.RPC.parse(line(frame), side="agent", method_of=lambda _: "initialize")
    assert (caught.value.message, caught.value.data, caught.value.answer) == (message, data, False)


_UNMATCHED = "a response without a usable id answers no request"


@pytest.mark.parametrize(
    ("frame", "whole"),
    [
        (
            {"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}},
            (-32600, "Unmatched response", {"reason": _UNMATCHED, "id": None, "error": {"code": 1, "message": "m"}}, False, False, None),
        ),
        (
            {"jsonrpc": "2.0", "id": [1], "error": {"code": 2, "message": "n"}},
            (-32600, "Unmatched response", {"reason": _UNMATCHED, "id": [1], "error": {"code": 2, "message": "n"}}, False, False, None),
        ),
        ({"jsonrpc": "2.0", "result": 5}, (-32600, "Unmatched response", {"reason": _UNMATCHED, "id": None, "error": None}, False, False, None)),
        ({"jsonrpc": "2.0"}, (-32600, "Invalid request", "no method and no valid id", True, True, None)),
        ({"jsonrpc": "2.0", "id": {"a": 1}}, (-32600, "Invalid request", "no method and no valid id", True, True, None)),
        ({"jsonrpc": "1.0", "id": 3, "result": {}}, (-32600, "Invalid request", "jsonrpc must be '2.0'", False, True, 3)),
        ({"jsonrpc": "2.0", "id": 4}, (-32600, "Invalid request", "no method, no result and no error", True, False, 4)),
    ],
)
def test_frames_without_a_method_are_judged_in_full(m: ModuleType, frame: dict[str, Any], whole: tuple[Any, ...]) -> None:
    with pytest.raises(sys.modules[m.__package__].FrameError) as caught:
        m.RPC.parse(line(frame), side="agent", method_of=lambda _: "initialize")
    e = caught.value
    assert (e.code, e.message, e.data, e.answer, e.call, e.id) == whole
