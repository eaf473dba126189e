"""The frames' errors, the codec interface and the id and JSON helpers
(acpgen/runtime/_frames.py), on the source module itself: what each error carries and
says, the answer a frame error is written as, which values are ids, and ``_loads``
giving what ``json.loads`` gives, value or error."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from acpgen.runtime import _frames as f


def test_an_rpc_error_carries_its_code_message_and_data() -> None:
    err = f.RpcError(-32000, "boom", {"why": 1})
    assert (err.code, err.message, err.data) == (-32000, "boom", {"why": 1})
    assert str(err) == "boom" and err.args == ("boom",)
    assert err.to_json() == {"code": -32000, "message": "boom", "data": {"why": 1}}
    assert f.RpcError(1, "m").data is None
    assert f.RpcError(1, "m").to_json() == {"code": 1, "message": "m"}


@pytest.mark.parametrize("data", [0, False, "", [], {}])
def test_falsy_data_is_still_sent(data: Any) -> None:
    assert f.RpcError(1, "m", data).to_json() == {
        "code": 1,
        "message": "m",
        "data": data,
    }


def test_method_not_found_names_the_method() -> None:
    err = f.RpcError.method_not_found("x/y")
    assert type(err) is f.RpcError
    assert err.to_json() == {
        "code": -32601,
        "message": "Method not found",
        "data": {"method": "x/y"},
    }

    class Mine(f.RpcError):
        pass

    assert type(Mine.method_not_found("z")) is Mine


def test_a_frame_error_and_its_answer() -> None:
    err = f.FrameError(-32600, "Invalid Request", answer=True)
    assert (err.id, err.data, err.answer, err.call) == (None, None, True, True)
    assert err.response() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request"},
    }
    err = f.FrameError(
        -32602, "Invalid params", {"é": "ü"}, id="r1", answer=False, call=False
    )
    assert (err.code, err.message, err.data, err.id, err.answer, err.call) == (
        -32602,
        "Invalid params",
        {"é": "ü"},
        "r1",
        False,
        False,
    )
    assert str(err) == "Invalid params"
    expected = '{"jsonrpc":"2.0","id":"r1","error":{"code":-32602,"message":"Invalid params","data":{"é":"ü"}}}\n'
    assert err.response_line() == expected.encode("utf-8")


def test_a_frame_errors_line_survives_a_lone_surrogate() -> None:
    """A string no UTF-8 can hold (a lone surrogate) is written escaped, never raised."""
    line = f.FrameError(
        -32700, "Parse error", "a\udc80b", id=7, answer=True
    ).response_line()
    assert (
        line
        == b'{"jsonrpc":"2.0","id":7,"error":{"code":-32700,"message":"Parse error","data":"a\\udc80b"}}\n'
    )


def test_a_remote_error_names_its_request() -> None:
    err = f.RemoteError(-32002, "Resource not found", method="fs/read_text_file", id=4)
    assert (err.code, err.message, err.data, err.method, err.id) == (
        -32002,
        "Resource not found",
        None,
        "fs/read_text_file",
        4,
    )
    assert err.args == ("Resource not found",)
    assert str(err) == "fs/read_text_file: Resource not found (-32002)"


def test_a_remote_errors_data_is_shown_as_json() -> None:
    err = f.RemoteError(1, "m", {"path": "/é", "n": 0}, method="x", id=1)
    assert str(err) == 'x: m (1): {"path": "/é", "n": 0}'
    assert str(f.RemoteError(1, "m", 0, method="x", id=1)) == "x: m (1): 0"
    assert str(f.RemoteError(1, "m", "", method="x", id=1)) == 'x: m (1): ""'


def test_a_remote_errors_data_that_is_not_json_is_shown_by_repr() -> None:
    class Thing:
        def __repr__(self) -> str:
            return "<thing>"

    assert (
        str(f.RemoteError(1, "m", {"t": Thing()}, method="x", id=1))
        == 'x: m (1): {"t": "<thing>"}'
    )
    circular: list[Any] = [1]
    circular.append(circular)
    assert (
        str(f.RemoteError(1, "m", circular, method="x", id=1)) == "x: m (1): [1, [...]]"
    )


def test_a_remote_errors_long_data_is_cut() -> None:
    whole = "d" * 1998  # 2000 characters with its quotes
    assert str(f.RemoteError(1, "m", whole, method="x", id=1)) == f'x: m (1): "{whole}"'
    longer = whole + "e"
    assert (
        str(f.RemoteError(1, "m", longer, method="x", id=1))
        == f'x: m (1): "{whole}e...'
    )


def test_forward_is_the_same_error_as_a_plain_rpc_error() -> None:
    err = f.RemoteError(
        -32002, "Resource not found", {"p": 1}, method="x", id=2
    ).forward()
    assert type(err) is f.RpcError
    assert (err.code, err.message, err.data) == (-32002, "Resource not found", {"p": 1})


def test_an_invalid_result_error_keeps_what_came() -> None:
    err = f.InvalidResultError("session/prompt", "r", {"bad": 1}, "stopReason: missing")
    assert (err.method, err.id, err.raw, err.detail) == (
        "session/prompt",
        "r",
        {"bad": 1},
        "stopReason: missing",
    )
    assert (
        str(err) == "invalid result for 'session/prompt' (id 'r'): stopReason: missing"
    )
    assert not isinstance(err, f.RpcError)


def test_a_connection_closed_error_says_why_and_the_exit_status() -> None:
    err = f.ConnectionClosedError("the peer closed its output")
    assert (err.reason, err.returncode, err.args) == (
        "the peer closed its output",
        None,
        ("the peer closed its output",),
    )
    assert str(err) == "the peer closed its output"
    assert isinstance(err, ConnectionError)
    err = f.ConnectionClosedError("the peer closed its output", -15)
    assert err.returncode == -15
    assert (
        str(err)
        == "the peer closed its output (the agent process exited with status -15)"
    )
    err = f.ConnectionClosedError("the agent process exited with status 0", 0)
    assert str(err) == "the agent process exited with status 0"
    err = f.ConnectionClosedError("the agent process exited with status 1", 0)
    assert (
        str(err)
        == "the agent process exited with status 1 (the agent process exited with status 0)"
    )


def test_an_oversized_frame_error_says_its_size_and_the_limit() -> None:
    err = f.OversizedFrameError("fs/read_text_file", 3, 100, 10)
    assert (err.method, err.id, err.size, err.limit) == (
        "fs/read_text_file",
        3,
        100,
        10,
    )
    assert (
        str(err)
        == "the answer to 'fs/read_text_file' (id 3) is a line of 100 bytes, over the connection's limit of 10 bytes"
    )


class _Codec(f.Codec):
    def dump(self, value: Any) -> Any:
        return {"v": value, "s": [1, 2]}


def test_the_codec_interface() -> None:
    base = f.Codec()
    assert f.Codec.errors == ()
    with pytest.raises(NotImplementedError):
        base.load(int, 1)
    with pytest.raises(NotImplementedError):
        base.dump(1)
    assert base.describe(ValueError("bad value")) == "bad value"
    assert base.frame_reader({}) is None
    assert _Codec().encode("é") == '{"v":"é","s":[1,2]}'


@pytest.mark.parametrize(
    ("value", "is_id"),
    [
        (None, True),
        ("", True),
        ("r", True),
        (0, True),
        (-7, True),
        (1.5, True),
        (0.0, True),
        (math.nan, False),
        (math.inf, False),
        (-math.inf, False),
        (True, False),
        (False, False),
        ([], False),
        ({}, False),
        (b"r", False),
    ],
)
def test_what_is_an_id(value: Any, is_id: bool) -> None:
    assert f._is_id(value) is is_id


def test_subclasses_of_the_id_types_are_not_ids() -> None:
    class Num(int):
        pass

    class Text(str):
        pass

    class Real(float):
        pass

    assert not f._is_id(Num(1)) and not f._is_id(Text("r")) and not f._is_id(Real(1.0))


@pytest.mark.parametrize(
    ("value", "text"),
    [(7, "7"), (-1, "-1"), (1.0, "1.0"), ("é", '"é"'), (None, "null"), (True, "true")],
)
def test_an_id_as_json_text(value: Any, text: str) -> None:
    assert f._id_json(value) == text


FRAMES: list[Any] = [
    b'{"a":1}',
    bytearray(b'{"a":[1,2]}'),
    '{"a":"é"}',
    '{"a":"é"}'.encode(),
    b' {"a":1}',
    b'{"a":1} \t\r\n',
    b'{"a":1}\x0c',
    b'{"a":1}x',
    b'{"a":1} X',
    b'{"a":1} {"b":2}',
    b"{not json",
    b"",
    b"   ",
    b'"\xff"',
    '{"a":"é"}'.encode("utf-16"),
    '{"a":1}'.encode("utf-16-le"),
    b"NaN",
    b"[" * 100_000 + b"]" * 100_000,
    "[1]\u00a0",
]


@pytest.mark.parametrize("frame", FRAMES, ids=range(len(FRAMES)))
def test_loads_gives_what_json_loads_gives(frame: Any) -> None:
    try:
        expected: Any = json.loads(frame)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        with pytest.raises(type(exc)) as got:
            f._loads(frame)
        assert str(got.value) == str(exc)
        return
    value = f._loads(frame)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(value)
    else:
        assert value == expected and type(value) is type(expected)
