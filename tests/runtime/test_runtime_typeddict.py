"""The TypedDict style's markers (acpgen/runtime/_runtime_typeddict.py) and the
annotations the generator writes with them (acpgen/render/tdviews.py): an optional,
non-nullable ``x-deserialize-default-on-error`` member with a bad value is left out,
not kept as ``null`` (which the schema would reject)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import TypeAdapter
from typing_extensions import NotRequired, TypedDict

from acpgen.runtime._runtime_typeddict import _OnErrorDefault

from ..conftest import generate, import_file, parse_as


class _Omit(TypedDict):
    x: NotRequired[Annotated[int, _OnErrorDefault(omit=True)]]


class _Default(TypedDict):
    x: NotRequired[Annotated[int, _OnErrorDefault(7)]]


def test_a_bad_value_of_an_omitted_member_drops_the_key() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(_Omit)
    assert adapter.validate_python({"x": "bad"}) == {}
    assert adapter.validate_python({"x": 3}) == {"x": 3}
    assert adapter.validate_python({}) == {}


def test_a_bad_value_of_a_member_with_a_default_reads_as_the_default() -> None:
    assert TypeAdapter(_Default).validate_python({"x": "bad"}) == {"x": 7}


@pytest.mark.parametrize(
    ("node", "back"),
    [
        ({"type": "integer"}, {}),  # optional, not nullable: left out
        ({"type": ["integer", "null"]}, {"x": None}),  # nullable: null is valid
        ({"type": "integer", "default": 5}, {"x": 5}),  # a default: the default
    ],
    ids=["left-out", "nullable", "default"],
)
def test_a_generated_typeddict_leaves_a_bad_optional_member_out(
    tmp_path: Path, node: dict[str, Any], back: dict[str, Any]
) -> None:
    schema = tmp_path / "schema.json"
    thing = {
        "type": "object",
        "properties": {"x": {**node, "x-deserialize-default-on-error": True}},
    }
    schema.write_text(json.dumps({"$defs": {"Thing": thing}}))
    out = generate(schema, tmp_path / "out", ("typeddict",))
    module = import_file(out / "acp_typeddict" / "v1.py")
    assert parse_as("typeddict", module, "Thing", {"x": "bad"}) == (True, back)
    assert parse_as("typeddict", module, "Thing", {"x": 3}) == (True, {"x": 3})


# ------------------------------------------------------------------ markers, on their own

from typing import Union  # noqa: E402

from pydantic import ValidationError  # noqa: E402

from acpgen.runtime import _runtime_typeddict as rt  # noqa: E402
from acpgen.runtime._jsonrpc import MethodSpec, Rpc  # noqa: E402


def _adapter(tp: Any) -> TypeAdapter[Any]:
    return TypeAdapter(tp)


def _rejects(tp: Any, value: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        _adapter(tp).validate_python(value)
    return str(caught.value)


def test_constraints_apply_the_schema_bounds() -> None:
    tp = Annotated[int, rt._Constraints(ge=0, le=9)]
    assert _adapter(tp).validate_python(9) == 9
    _rejects(tp, 10)
    _rejects(tp, -1)
    assert _adapter(Annotated[str, rt._Constraints(pattern="^a")]).validate_python("ab") == "ab"
    _rejects(Annotated[str, rt._Constraints(pattern="^a")], "b")


def _lenient() -> Any:
    """Made in each test: its markers are read when an adapter is built."""

    class _Lenient(TypedDict, total=False):
        __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
        n: Annotated[int, rt._OnErrorDefault(None)]
        f: Annotated[list[int], rt._OnErrorDefault(factory=lambda: [0])]
        d: Annotated[int, rt._OnErrorDefault(5, required=True)]
        title: Annotated[str, rt._OnNull("untitled")]
        tags: Annotated[list[str], rt._OnNull(factory=list)]
        kind: Annotated[str, rt._OnNull(omit=True)]
        items: list[Annotated[int, rt._SKIP_INVALID]]

    return _Lenient


def test_leniency_of_a_typeddict() -> None:
    lenient = _lenient()
    read = _adapter(lenient).validate_python
    assert read({"n": "x", "f": "x", "d": "x"}) == {"n": None, "f": [0], "d": 5}
    assert read({"n": 1, "f": [2], "d": 3}) == {"n": 1, "f": [2], "d": 3}
    one, two = read({"f": "x"}), read({"f": "x"})
    assert one["f"] is not two["f"]  # a fresh default each time
    assert read({"title": None, "tags": None, "kind": None}) == {"title": "untitled", "tags": []}
    assert read({"title": "t", "tags": ["a"], "kind": "k"}) == {"title": "t", "tags": ["a"], "kind": "k"}
    assert read({"items": [1, "x", 2]}) == {"items": [1, 2]}
    assert read({"x": True}) == {"x": True}  # open
    assert read({}) == {}
    _rejects(lenient, {"title": 3})


class _Text(TypedDict):
    __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
    type: Literal["text"]
    text: str


class _Num(TypedDict):
    __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
    type: Literal[2]
    n: int


class _Open(TypedDict):
    __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
    type: str
    z: NotRequired[int]


class _Loose(TypedDict, total=False):
    __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
    type: Any
    text: Any


_NAMES = {"_Text": _Text, "_Num": _Num, "_Open": _Open, "_Loose": _Loose}


def _route(default: bool, fallback: bool, catch: str | None = None) -> TypeAdapter[Any]:
    choices = {"text": "_Text", "2": "_Num"}
    if default:
        choices["<default>"] = "_Loose"
    if fallback:
        choices["<fallback>"] = "_Open"
    route = rt._Route(_NAMES, "type", choices, default=default, fallback=fallback, catch=catch)
    return _adapter(Annotated[Union[_Text, _Num, _Open, _Loose], route])


def test_a_route_sends_a_known_tag_to_its_variant() -> None:
    adapter = _route(default=False, fallback=False)
    assert adapter.validate_python({"type": "text", "text": "t"}) == {"type": "text", "text": "t"}
    assert adapter.validate_python({"type": 2, "n": 1}) == {"type": 2, "n": 1}
    _rejects(Annotated[Union[_Text, _Num], rt._Route(_NAMES, "type", {"text": "_Text", "2": "_Num"}, default=False, fallback=False)], {"type": "text"})
    for value in ({}, {"type": "zzz"}, {"type": True}, {"type": "2"}, {"type": 2.0}, "text"):
        with pytest.raises(ValidationError):
            adapter.validate_python(value)


def test_a_route_sends_other_tags_to_the_fallback_or_the_default() -> None:
    adapter = _route(default=True, fallback=True)
    assert adapter.validate_python({"type": "zzz"}) == {"type": "zzz"}
    assert adapter.validate_python({"text": 1}) == {"text": 1}  # no tag: the default
    assert adapter.validate_python({"type": 7}) == {"type": 7}  # not a string: the default
    assert adapter.validate_python({"type": True}) == {"type": True}
    _rejects(Annotated[Any, rt._Route(_NAMES, "type", {"text": "_Text"}, default=False, fallback=True)], {"type": 7})
    assert _route(default=False, fallback=True).validate_python({"type": "zzz"}) == {"type": "zzz"}
    _rejects(Annotated[Any, rt._Route(_NAMES, "type", {"<fallback>": "_Open"}, default=False, fallback=True)], {})
    # a tag spelled as a route key is an unknown tag like any other
    _rejects(Annotated[Any, rt._Route(_NAMES, "type", {"<default>": "_Loose", "<fallback>": "_Open"}, default=True, fallback=True)], {"type": "<default>", "z": "x"})


def test_a_value_no_route_takes_is_no_tag_of_the_union() -> None:
    for value in ({}, {"type": "zzz"}):
        with pytest.raises(ValidationError) as caught:
            _route(default=False, fallback=False).validate_python(value)
        assert [e["type"] for e in caught.value.errors()] == ["union_tag_not_found"]


def test_a_route_with_a_catch_all_reads_what_the_tag_variant_rejects() -> None:
    adapter = _route(default=True, fallback=False, catch="<default>")
    assert adapter.validate_python({"type": "text", "text": "t"}) == {"type": "text", "text": "t"}
    assert adapter.validate_python({"type": "text", "text": 3}) == {"type": "text", "text": 3}
    strict = rt._Route({"_Text": _Text, "_Open": _Open}, "type", {"text": "_Text", "<fallback>": "_Open"}, default=False, fallback=True, catch="<fallback>")
    open_only = _adapter(Annotated[Any, strict])
    assert open_only.validate_python({"type": "text", "text": 3}) == {"type": "text", "text": 3}
    # a value its variant accepts is that variant's, whatever the catch-all says
    assert open_only.validate_python({"type": "text", "text": "t", "z": "x"}) == {"type": "text", "text": "t", "z": "x"}
    _rejects(Annotated[Any, strict], {"type": "text", "text": 3, "z": "1"})  # the catch-all is strict too
    message = _rejects(Annotated[Any, strict], {"type": 3})
    assert "type" in message
    _rejects(Annotated[Any, strict], "text")  # no object: not tried as the catch-all


def test_one_of_rejects_a_value_valid_as_several_members() -> None:
    tp = Annotated[Union[int, float], rt._OneOf(("int", int), ("number", Union[int, float]))]
    assert _adapter(tp).validate_python(1.5) == 1.5
    assert "expected exactly one of 'int', 'number' (oneOf), found several" in _rejects(tp, 2)


def _sided() -> Any:
    class _Sided(TypedDict, total=False):
        __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
        a: int
        b: str


    setattr(
        _Sided,
        "__get_pydantic_core_schema__",
        rt._require_alternatives((rt._Group("oneOf", (rt._Branch("A", required=("a",), members=(("a", Annotated[int, rt._Constraints(lt=10)]),)), rt._Branch("B", required=("b",)))),)),
    )

    return _Sided


def test_sibling_unions_are_checked_on_the_object() -> None:
    sided = _sided()
    assert _adapter(sided).validate_python({"a": 1}) == {"a": 1}
    assert "expected one of 'A', 'B'" in _rejects(sided, {})
    assert "found several" in _rejects(sided, {"a": 1, "b": "x"})
    assert _adapter(sided).validate_python({"a": 10, "b": "x"}) == {"a": 10, "b": "x"}  # A's a is under 10


def test_conforms_is_strict_and_the_adapter_cached() -> None:
    assert rt._conforms(int, 1) and not rt._conforms(int, "1") and not rt._conforms(int, True)
    fresh = Annotated[int, object()]  # a type never seen: no adapter kept yet
    assert rt._conforms(fresh, 1) and not rt._conforms(fresh, "1")
    other = Annotated[int, object()]
    assert rt._strict(other) is rt._strict(other)
    assert rt._strict(other).validate_python(2) == 2


class _Params(TypedDict):
    __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
    sessionId: str


class _Envelope(TypedDict, total=False):
    __pydantic_config__ = rt._CONFIG  # type: ignore[misc]
    method: str
    params: Any


def test_an_envelope_params_are_read_as_its_method() -> None:
    codec = rt.TypedDictCodec()
    rpc = Rpc((MethodSpec("a/go", "agent", "request", _Params, None, "go"),), codec, Any)
    setattr(_Envelope, "__get_pydantic_core_schema__", rt._by_method(lambda: rpc, "request"))
    adapter = _adapter(_Envelope)
    assert adapter.validate_python({"method": "a/go", "params": {"sessionId": "s"}})["params"] == {"sessionId": "s"}
    assert "params of 'a/go'" in _rejects(_Envelope, {"method": "a/go", "params": {"sessionId": 1}})
    assert "unknown request method 'b/go'" in _rejects(_Envelope, {"method": "b/go", "params": {}})


def test_the_typeddict_codec() -> None:
    codec = rt.TypedDictCodec()
    assert codec.errors == (ValidationError,) and codec.errors is codec.errors
    value = {"sessionId": "s"}
    assert codec.load(_Params, value) == value
    assert codec.load(_Params, value) == value  # the adapter, kept
    assert codec._adapters.keys() == {_Params}
    with pytest.raises(codec.errors) as caught:
        codec.load(_Params, {"sessionId": 1})
    assert codec.describe(caught.value) == [{"loc": ["sessionId"], "msg": "Input should be a valid string", "type": "string_type"}]
    assert codec.describe(ValueError("bad")) == "bad"
    assert codec.dump(value) is value
    assert codec.encode({"a": ["é", 1]}) == '{"a":["é",1]}'
