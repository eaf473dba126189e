"""The JSON-RPC codec of the Pydantic bindings (acpgen/runtime/_codec_pydantic.py): values
loaded, dumped and encoded by wire name with only the members received or set, pydantic's
errors described as JSON, and whole frames read in one pass."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

from acpgen.runtime._codec_pydantic import PydanticCodec
from acpgen.runtime._jsonrpc import MethodSpec


class _Thing(BaseModel):
    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=False)

    session_id: str = Field(alias="sessionId")
    size: int = 0


class _Other(BaseModel):
    text: str


class _Pair(BaseModel):
    pair: tuple[int, int]


def test_load_validates_as_the_type_and_reuses_one_adapter_per_type() -> None:
    codec = PydanticCodec()
    assert codec.load(_Thing, {"sessionId": "s"}) == _Thing(sessionId="s")
    with pytest.raises(codec.errors):
        codec.load(int, "x")
    assert codec.adapter(_Thing) is codec.adapter(_Thing)
    assert codec.adapter(_Thing) is not codec.adapter(_Other)


def test_dump_writes_wire_names_and_only_the_members_set() -> None:
    codec = PydanticCodec()
    thing = _Thing(sessionId="s")
    assert codec.dump(thing) == {"sessionId": "s"}
    assert codec.dump(_Thing(sessionId="s", size=2)) == {"sessionId": "s", "size": 2}
    # a value that is no model: JSON values, models inside it dumped the same way
    assert codec.dump({"a": (1, 2), "b": [thing]}) == {"a": [1, 2], "b": [{"sessionId": "s"}]}
    assert codec.dump(None) is None
    # JSON values: a tuple is an array
    assert codec.dump(_Pair(pair=(1, 2))) == {"pair": [1, 2]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no value is written against a type it is not
        assert codec.dump({"a": (1, 2)}) == {"a": [1, 2]}


def test_encode_writes_compact_json_by_wire_name() -> None:
    codec = PydanticCodec()
    assert codec.encode(_Thing(sessionId="s")) == '{"sessionId":"s"}'
    assert codec.encode({"a": [_Thing(sessionId="é", size=1)]}) == '{"a":[{"sessionId":"é","size":1}]}'
    assert codec.encode([1, "x"]) == '[1,"x"]'


def test_encode_writes_models_inside_other_values_as_dump_does() -> None:
    # only the members received or set, as a model sent alone, and as `dump` gives them
    codec = PydanticCodec()
    value = {"a": [_Thing(sessionId="s")], "b": None}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no value is written against a type it is not
        assert codec.encode(value) == '{"a":[{"sessionId":"s"}],"b":null}'
    assert json.loads(codec.encode(value)) == codec.dump(value)
    # the same text when a lone surrogate takes the other way
    assert codec.encode({"a": [_Thing(sessionId="\ud800")]}) == '{"a":[{"sessionId":"\ud800"}]}'


def test_encode_keeps_a_lone_surrogate_for_the_frame_to_escape() -> None:
    codec = PydanticCodec()
    text = codec.encode(_Thing(sessionId="a\ud800é"))
    assert text == '{"sessionId":"a\ud800é"}'
    assert codec.encode({"k": ["\udfff", "é"]}) == '{"k":["\udfff","é"]}'
    assert json.loads(text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")) == {
        "sessionId": "a\ud800é"
    }


def test_encode_raises_what_is_not_a_surrogate() -> None:
    with pytest.raises(PydanticSerializationError):
        PydanticCodec().encode({"k": object()})


def test_describe_lists_location_message_and_type() -> None:
    codec = PydanticCodec()
    with pytest.raises(codec.errors) as caught:
        codec.load(_Thing, {"sessionId": 3, "size": "x"})
    assert codec.describe(caught.value) == [
        {"loc": ["sessionId"], "msg": "Input should be a valid string", "type": "string_type"},
        {"loc": ["size"], "msg": "Input should be a valid integer, unable to parse string as an integer", "type": "int_parsing"},
    ]
    assert codec.describe(ValueError("bad")) == "bad"


def _spec(method: str, kind: str, params: Any) -> MethodSpec:
    return MethodSpec(method, "agent", kind, params, None, method.replace("/", "_"))


def _frame(method: str, params: Any, id: Any = None, *, request: bool = True) -> str:
    frame = {"jsonrpc": "2.0", "method": method, "params": params}
    if request:
        frame["id"] = id
    return json.dumps(frame)


def test_a_frame_reader_of_distinct_methods_reads_requests_and_notifications() -> None:
    read = PydanticCodec().frame_reader(
        {
            ("a/go", "request"): _spec("a/go", "request", _Thing),
            ("a/note", "notification"): _spec("a/note", "notification", _Other),
            ("a/none", "request"): _spec("a/none", "request", None),
        }
    )
    assert read is not None
    got = read(_frame("a/go", {"sessionId": "s"}, 1))
    assert got == {"jsonrpc": "2.0", "method": "a/go", "params": _Thing(sessionId="s"), "id": 1}
    assert read(_frame("a/go", {"sessionId": "s"}, "x").encode())["id"] == "x"  # type: ignore[index]
    assert read(_frame("a/go", {"sessionId": "s"}, None))["id"] is None  # type: ignore[index]
    note = read(_frame("a/note", {"text": "t"}, request=False))
    assert note == {"jsonrpc": "2.0", "method": "a/note", "params": _Other(text="t")}
    # anything else is left to the general reader: None
    assert read(_frame("a/go", {"sessionId": 3}, 1)) is None  # bad params
    assert read(_frame("a/go", {"sessionId": "s"}, 1.5)) is None  # bad id
    assert read(_frame("a/go", {"sessionId": "s"}, 1.0)) is None  # strictly: 1.0 is no integer id
    assert read(_frame("a/none", {}, 1)) is None  # a method without params type
    assert read(_frame("a/go", {"sessionId": "s"}, request=False)) is None  # no id
    assert read(_frame("a/note", {"text": "t"}, 1)) is None  # a notification with an id
    assert read(json.dumps({"jsonrpc": "2.0", "method": "a/go", "params": {"sessionId": "s"}, "id": 1, "x": 1})) is None
    assert read('{"jsonrpc": "1.0", "method": "a/go", "params": {"sessionId": "s"}, "id": 1}') is None
    assert read(b"[]") is None


def test_a_frame_reader_of_one_method_reads_it_alone() -> None:
    read = PydanticCodec().frame_reader({("a/go", "request"): _spec("a/go", "request", _Thing)})
    assert read is not None
    assert read(_frame("a/go", {"sessionId": "s"}, 2))["params"] == _Thing(sessionId="s")  # type: ignore[index]
    assert read(_frame("b/go", {"sessionId": "s"}, 2)) is None


def test_a_frame_reader_without_typed_methods_reads_nothing() -> None:
    read = PydanticCodec().frame_reader({("a/none", "request"): _spec("a/none", "request", None)})
    assert read is not None
    assert read(_frame("a/none", {}, 1)) is None


def test_a_method_both_request_and_notification_is_told_apart_by_its_id() -> None:
    read = PydanticCodec().frame_reader(
        {
            ("a/go", "request"): _spec("a/go", "request", _Thing),
            ("a/go", "notification"): _spec("a/go", "notification", _Other),
            ("b/go", "request"): _spec("b/go", "request", _Other),
        }
    )
    assert read is not None
    assert read(_frame("a/go", {"sessionId": "s"}, 1))["params"] == _Thing(sessionId="s")  # type: ignore[index]
    assert read(_frame("b/go", {"text": "t"}, 1).encode())["params"] == _Other(text="t")  # type: ignore[index]
    note = read(_frame("a/go", {"text": "t"}, request=False).encode())
    assert note == {"jsonrpc": "2.0", "method": "a/go", "params": _Other(text="t")}
    assert read(_frame("a/go", {"text": "t"}, 1)) is None  # a request's params are _Thing
    assert read(_frame("a/go", {"sessionId": "s"}, request=False)) is None
