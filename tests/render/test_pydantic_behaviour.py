"""Runtime behaviour of the generated Pydantic bindings, on fixtures written here."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest
from pydantic import TypeAdapter, ValidationError


def roundtrip(tp: Any, data: Any) -> Any:
    ta = TypeAdapter(tp)
    value = ta.validate_json(json.dumps(data))
    return value, ta.dump_python(value, mode="json", by_alias=True, exclude_unset=True)


def rejects(tp: Any, data: Any) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(tp).validate_json(json.dumps(data))


Loader = Callable[..., Any]


def test_closed_tagged_union(pydantic_module: Loader) -> None:
    m = pydantic_module("tagged_union.json")
    value, back = roundtrip(m.ContentBlock, {"type": "text", "text": "hi", "_meta": {"k": 1}})
    assert isinstance(value, m.TextContentBlock) and isinstance(value, m.TextContent)
    assert back == {"type": "text", "text": "hi", "_meta": {"k": 1}}
    rejects(m.ContentBlock, {"type": "video"})
    rejects(m.ContentBlock, {"type": "text"})
    value, _ = roundtrip(m.Update, {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "x"}})
    assert isinstance(value, m.AgentMessageChunkUpdate) and isinstance(value.content, m.ImageContentBlock)


def test_open_union_keeps_unknown_and_rejects_malformed_known(pydantic_module: Loader) -> None:
    m = pydantic_module("open_union.json")
    unknown = {"type": "_acme_widget", "payload": {"a": [1, 2]}}
    value, back = roundtrip(m.ToolCallContent, unknown)
    assert isinstance(value, m.OtherToolCallContent) and back == unknown
    rejects(m.ToolCallContent, {"type": "diff"})  # known tag, missing `path`
    rejects(m.ToolCallContent, {"kind": "no tag"})


def test_untagged_default_member(pydantic_module: Loader) -> None:
    m = pydantic_module("default_member.json")
    value, back = roundtrip(m.McpServer, {"command": "run"})
    assert isinstance(value, m.McpServerStdio) and back == {"command": "run"}
    value, _ = roundtrip(m.McpServer, {"type": "http", "url": "u"})
    assert isinstance(value, m.HttpMcpServer)
    value, back = roundtrip(m.SetOption, {"configId": "c", "value": "v1"})
    assert isinstance(value, m.ValueIdSetOption) and back == {"configId": "c", "value": "v1"}
    value, _ = roundtrip(m.SetOption, {"configId": "c", "type": "boolean", "value": True})
    assert isinstance(value, m.BooleanSetOption)
    # a malformed known variant is still valid as the untagged default, whose schema does
    # not rule out the tag (JSON Schema's anyOf; v1's SetSessionConfigOptionRequest)
    yes = {"configId": "c", "type": "boolean", "value": "yes"}
    value, back = roundtrip(m.SetOption, yes)
    assert isinstance(value, m.ValueIdSetOption) and back == yes
    rejects(m.SetOption, {"configId": "c", "type": "boolean", "value": 1})  # strict bool, and not a string


def test_enums_open_and_closed(pydantic_module: Loader) -> None:
    m = pydantic_module("enums.json")
    assert roundtrip(m.ToolKind, "_acme_kind")[1] == "_acme_kind"
    assert roundtrip(m.ToolKind, "read")[1] == "read"
    assert roundtrip(m.ErrorCode, -1)[1] == -1
    assert roundtrip(m.MixedRole, "system")[1] == "system"
    rejects(m.StopReason, "_acme")
    rejects(m.Role, "system")
    assert roundtrip(m.Encoding, "date-time")[1] == "date-time"


def test_nullability_and_optionality(pydantic_module: Loader) -> None:
    m = pydantic_module("nullable.json")
    value, back = roundtrip(m.Thing, {"d": "x", "e": None, "a": None})
    assert back == {"d": "x", "e": None, "a": None}
    rejects(m.Thing, {"d": "x"})  # e is required even though it may be null
    rejects(m.Thing, {"d": None, "e": None})
    b = pydantic_module("maps_and_any.json")
    rejects(b.Bag, {"env": None})  # optional but not nullable


def test_scalars_formats_and_bounds(pydantic_module: Loader) -> None:
    m = pydantic_module("scalars.json")
    ok = {"u16": 65535, "u64": 2**64 - 1, "prio": 0.5, "code": "EUR", "title": "t", "options": ["a"]}
    assert roundtrip(m.Bounds, ok)[1] == ok
    for bad in ({"u16": 65536}, {"u16": -1}, {"u16": 1, "prio": 2}, {"u16": 1, "code": "eur"},
                {"u16": 1, "title": ""}, {"u16": 1, "options": []}, {"u16": "1"}):
        rejects(m.Bounds, bad)
    rejects(m.SemVer, "1.2")


def test_defaults_are_applied_but_not_dumped(pydantic_module: Loader) -> None:
    m = pydantic_module("defaults.json")
    value, back = roundtrip(m.Defaults, {})
    assert back == {}
    assert value.flag is False and value.items == [] and value.obj.n == 1 and value.kind == "object"
    assert value.map == {} and value.num == 0.5
    assert isinstance(value.choice, m.Inner) and value.choice.n == 2  # a union's default


def test_a_union_default_is_built_without_a_new_adapter(pydantic_module: Loader, monkeypatch: pytest.MonkeyPatch) -> None:
    m = pydantic_module("defaults.json")
    built: list[Any] = []
    monkeypatch.setattr(m, "TypeAdapter", lambda tp: built.append(tp) or TypeAdapter(tp))
    first, second = (m.Defaults.model_validate_json("{}").choice for _ in range(2))
    assert first == second and first is not second and built == []


def test_keywords_and_builtins_as_property_names(pydantic_module: Loader) -> None:
    m = pydantic_module("keywords.json")
    data = {"type": "t", "class": "c", "import": "i", "list": True, "properties": {"a": "b"},
            "required": None, "enum": ["x"], "oneOf": ["y"], "copy": "z", "jsonrpc": "2.0"}
    value, back = roundtrip(m.PropertySchema, data)
    assert back == data
    assert value.class_ == "c" and value.list_ is True and value.type_ == "t" and value.one_of == ["y"]


def test_lenient_fields(pydantic_module: Loader) -> None:
    m = pydantic_module("lenient.json")
    value = TypeAdapter(m.Lenient).validate_json(
        json.dumps({"_meta": "_meta", "priority": "high", "tags": [{"name": "a"}, {"bogus": 1}, {"name": "b"}]})
    )
    assert value.meta is None and value.priority is None
    assert [t.name for t in value.tags] == ["a", "b"]
    value = TypeAdapter(m.Lenient).validate_json(json.dumps({"tags": 5}))
    assert value.tags == []
    # an optional member that cannot be null: a bad value leaves it unset, so the model
    # gives back a valid message (not "args": null), as the SDK's serde does
    for bad in (None, 3, ["a", 1]):
        value = m.Lenient.model_validate_json(json.dumps({"args": bad, "priority": 1.5}))
        assert value.args is None and "args" not in value.model_fields_set
        assert value.model_dump(mode="json", by_alias=True, exclude_unset=True) == {"priority": 1.5}
    assert m.Lenient.model_validate({"args": ["a"]}).args == ["a"]


def test_a_dropped_member_reads_as_absent(pydantic_module: Loader) -> None:
    """An optional member that cannot be null, with default-on-error: pydantic-core drops a
    bad value itself (no Python runs per instance); the member then reads, compares and
    dumps as an absent one."""
    m = pydantic_module("lenient.json")
    absent = m.Lenient(priority=1.5)
    for bad in (None, 3, ["a", 1]):
        parsed = m.Lenient.model_validate_json(json.dumps({"args": bad, "priority": 1.5}))
        assert parsed.args is None and parsed == absent and absent == parsed
        assert parsed != m.Lenient(priority=1.5, args=["a"])
        assert m.Lenient.model_validate_json(json.dumps({"args": bad, "priority": 1.5, "x": 1})) != absent
        assert parsed.model_dump(by_alias=True, exclude_unset=True) == {"priority": 1.5}
        assert parsed.model_copy(update={"args": ["b"]}).args == ["b"]
        with pytest.raises(AttributeError):
            parsed.no_such_member  # noqa: B018
    assert not m.Lenient.__pydantic_decorators__.model_validators


def test_meta_round_trips_untouched(pydantic_module: Loader) -> None:
    m = pydantic_module("maps_and_any.json")
    data = {"_meta": {"a": {"b": [1, None, "x"]}}, "raw": [1, {"x": 2}], "yes": None, "value": 3,
            "servers": {"s": {"name": "n", "extra": True}}, "unknownKey": {"kept": True}}
    assert roundtrip(m.Bag, data)[1] == data


def test_shared_properties_and_flattened_shapes(pydantic_module: Loader) -> None:
    m = pydantic_module("shared_props.json")
    value, back = roundtrip(m.Option, {"id": "i", "name": "n", "type": "boolean", "currentValue": True})
    assert isinstance(value, m.BooleanOption) and back["currentValue"] is True
    rejects(m.Option, {"id": "i", "name": "n", "type": "boolean", "currentValue": "true"})
    rejects(m.Option, {"name": "n", "type": "select", "currentValue": "a"})  # shared `id` required
    value, back = roundtrip(m.FormMode, {"schema": "s", "requestId": 3})
    assert back == {"schema": "s", "requestId": 3}
    rejects(m.FormMode, {"schema": "s"})  # neither shape


def test_method_table(pydantic_module: Loader) -> None:
    m = pydantic_module("methods")
    table = {(s.method, s.side): s for s in m.METHODS}
    assert table[("initialize", "agent")].params is m.InitializeRequest
    assert table[("initialize", "agent")].result is m.InitializeResponse
    assert table[("session/update", "client")].kind == "notification"
    assert table[("terminal/create", "client")].params is m.CreateTerminalRequest  # meta + naming convention
    assert m.PROTOCOL_METHODS["$/cancel_request"].params is m.CancelRequestNotification
    assert m.PROTOCOL_VERSION == 1


@pytest.mark.xfail(
    strict=True,
    reason=(
        "known limitation (docs/reference/bindings.md, The Pydantic bindings): pydantic-core puts an unknown member "
        "in model_fields_set under its own key, so an unknown 'meta' reads as the unset member "
        "meta (wire '_meta') being set, and exclude_unset dumps it too. The exact fix needs the "
        "input after validation: a Python hook per model instance, measured at -13% parse."
    ),
)
def test_an_unknown_member_named_like_an_aliased_attribute(pydantic_module: Loader) -> None:
    """Found by tests/test_properties.py (an extra key drawn as "meta"); the property test now
    leaves such keys to this test."""
    m = pydantic_module("maps_and_any.json")
    value, back = roundtrip(m.Bag, {"meta": None})
    assert value.meta is None and value.__pydantic_extra__ == {"meta": None}
    assert back == {"meta": None}
