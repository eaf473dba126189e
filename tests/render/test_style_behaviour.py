"""Runtime behaviour of the dataclasses and TypedDict bindings (same scenarios as the
Pydantic ones), on fixtures written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

from ..conftest import SCHEMAS, generate, import_file, parse_as

STYLES = ("dataclasses", "typeddict")
_CACHE: dict[tuple[str, str], ModuleType] = {}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("styles")


def module(root: Path, fixture: str, style: str) -> ModuleType:
    key = (fixture, style)
    if key not in _CACHE:
        out = generate(SCHEMAS / fixture, root / f"{fixture}-{style}", (style,))
        _CACHE[key] = import_file(out / f"acp_{style}" / "v1.py")
    return _CACHE[key]


def roundtrip(style: str, m: ModuleType, tp: Any, data: Any) -> tuple[Any, Any]:
    if style == "dataclasses":
        value = m.load(tp, data)
        return value, m.dump(value)
    ta = TypeAdapter(tp)
    value = ta.validate_json(json.dumps(data))
    if style == "pydantic":
        return value, ta.dump_python(value, mode="json", by_alias=True, exclude_unset=True)
    # a TypedDict value is its wire JSON, written as the style's codec writes it (pydantic's
    # serializer would pick a union member by tag, and warn on a value of the default)
    return value, json.loads(json.dumps(value))


def rejects(style: str, m: ModuleType, tp: Any, data: Any) -> None:
    if style == "dataclasses":
        with pytest.raises(m.ValidationError):
            m.load(tp, data)
    else:
        with pytest.raises(ValidationError):
            TypeAdapter(tp).validate_json(json.dumps(data))


@pytest.mark.parametrize("style", STYLES)
def test_tagged_unions(style: str, root: Path) -> None:
    m = module(root, "tagged_union.json", style)
    data = {"type": "text", "text": "hi", "_meta": {"k": 1}}
    value, back = roundtrip(style, m, m.ContentBlock, data)
    assert back == data
    if style == "dataclasses":
        assert isinstance(value, m.TextContentBlock) and isinstance(value, m.TextContent)
    rejects(style, m, m.ContentBlock, {"type": "video"})
    rejects(style, m, m.ContentBlock, {"type": "text"})
    o = module(root, "open_union.json", style)
    unknown = {"type": "_acme_widget", "payload": {"a": [1, 2]}}
    value, back = roundtrip(style, o, o.ToolCallContent, unknown)
    assert back == unknown
    if style == "dataclasses":
        assert isinstance(value, o.OtherToolCallContent) and value._extra == {"payload": {"a": [1, 2]}}
    rejects(style, o, o.ToolCallContent, {"type": "diff"})  # known tag, missing `path`
    rejects(style, o, o.ToolCallContent, {"kind": "no tag"})


@pytest.mark.parametrize("style", STYLES)
def test_default_member_and_strict_bool(style: str, root: Path) -> None:
    m = module(root, "default_member.json", style)
    assert roundtrip(style, m, m.McpServer, {"command": "run"})[1] == {"command": "run"}
    assert roundtrip(style, m, m.SetOption, {"configId": "c", "value": "v1"})[1] == {"configId": "c", "value": "v1"}
    yes = {"configId": "c", "type": "boolean", "value": "yes"}  # valid as the untagged default
    value, back = roundtrip(style, m, m.SetOption, yes)
    assert back == yes
    if style == "dataclasses":
        assert isinstance(value, m.ValueIdSetOption)
    rejects(style, m, m.SetOption, {"configId": "c", "type": "boolean", "value": 1})


@pytest.mark.parametrize("style", STYLES)
def test_enums_scalars_nullability(style: str, root: Path) -> None:
    e = module(root, "enums.json", style)
    assert roundtrip(style, e, e.ToolKind, "_acme_kind")[1] == "_acme_kind"
    rejects(style, e, e.Role, "system")
    s = module(root, "scalars.json", style)
    ok = {"u16": 65535, "u64": 2**64 - 1, "prio": 0.5, "code": "EUR", "title": "t", "options": ["a"]}
    assert roundtrip(style, s, s.Bounds, ok)[1] == ok
    for bad in ({"u16": 65536}, {"u16": -1}, {"u16": 1, "prio": 2}, {"u16": 1, "code": "eur"},
                {"u16": 1, "title": ""}, {"u16": 1, "options": []}, {"u16": "1"}):  # fmt: skip
        rejects(style, s, s.Bounds, bad)
    n = module(root, "nullable.json", style)
    assert roundtrip(style, n, n.Thing, {"d": "x", "e": None, "a": None})[1] == {"d": "x", "e": None, "a": None}
    rejects(style, n, n.Thing, {"d": "x"})
    rejects(style, n, n.Thing, {"d": None, "e": None})


@pytest.mark.parametrize("style", STYLES)
def test_wire_keys_meta_and_lenience(style: str, root: Path) -> None:
    k = module(root, "keywords.json", style)
    data = {"type": "t", "class": "c", "import": "i", "list": True, "properties": {"a": "b"},
            "required": None, "enum": ["x"], "oneOf": ["y"], "copy": "z", "jsonrpc": "2.0"}  # fmt: skip
    assert roundtrip(style, k, k.PropertySchema, data)[1] == data
    b = module(root, "maps_and_any.json", style)
    bag = {"_meta": {"a": {"b": [1, None, "x"]}}, "raw": [1, {"x": 2}], "yes": None, "value": 3,
           "servers": {"s": {"name": "n", "extra": True}}, "unknownKey": {"kept": True}}  # fmt: skip
    assert roundtrip(style, b, b.Bag, bag)[1] == bag
    lenient = module(root, "lenient.json", style)
    _, back = roundtrip(style, lenient, lenient.Lenient, {"_meta": "_meta", "priority": "high", "tags": [{"name": "a"}, {"bogus": 1}]})
    assert back["_meta"] is None and back["priority"] is None and back["tags"] == [{"name": "a"}]
    _, back = roundtrip(style, lenient, lenient.Lenient, {"args": None, "priority": 1.5})
    assert back == {"priority": 1.5}  # not "args": null, which the schema rejects


def test_dataclass_defaults_errors_and_construction(root: Path) -> None:
    m = module(root, "defaults.json", "dataclasses")
    value, back = roundtrip("dataclasses", m, m.Defaults, {})
    assert back == {}  # defaults are applied, never injected into the wire form
    assert value.flag is False and value.items == [] and value.obj.n == 1 and value.map == {}
    value.flag = True
    assert m.dump(value) == {"flag": True}  # a member changed after loading is sent
    t = module(root, "tagged_union.json", "dataclasses")
    built = t.TextContentBlock(text="hi")  # the tag is filled in
    assert t.dump(built) == {"type": "text", "text": "hi"}
    u = module(root, "tagged_union.json", "dataclasses")
    with pytest.raises(u.ValidationError) as info:
        u.load(u.Update, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}})
    assert str(info.value) == "Update.content.text: expected string, got integer"
    assert issubclass(u.ValidationError, ValueError)


def test_typeddict_keys_are_wire_keys(root: Path) -> None:
    k = module(root, "keywords.json", "typeddict")
    keys = set(k.PropertySchema.__annotations__)
    assert {"class", "import", "oneOf", "jsonrpc"} <= keys  # functional syntax: not identifiers
    t = module(root, "tagged_union.json", "typeddict")
    assert t.TextContentBlock.__required_keys__ == {"text", "type"}
    n = module(root, "nullable.json", "typeddict")
    assert "a" in n.Thing.__optional_keys__ and "e" in n.Thing.__required_keys__


def test_dataclasses_need_no_pydantic(root: Path) -> None:
    """The dataclass module imports and round-trips with pydantic blocked from import."""
    out = root / "tagged_union.json-dataclasses" / "acp_dataclasses" / "v1.py"
    module(root, "tagged_union.json", "dataclasses")
    script = f"""
import importlib.abc, importlib.util, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pydantic", "pydantic_core", "typing_extensions"):
            raise ImportError("blocked: " + name)
        return None
sys.meta_path.insert(0, Block())
sys.path.insert(0, {str(out.parent.parent)!r})
import acp_dataclasses.v1 as m
data = {{"type": "text", "text": "hi", "_meta": {{"k": 1}}}}
assert m.dump(m.load(m.ContentBlock, data)) == data
assert not any(n.startswith("pydantic") for n in sys.modules)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr


@pytest.mark.parametrize("style", ("pydantic", *STYLES))
def test_variant_whose_payload_is_a_tagged_union(style: str, root: Path) -> None:
    """upstream v2 ``SessionUpdate`` ``state_update``: ``allOf: [{$ref: StateUpdate}]``,
    itself a union tagged by ``state``. The variant is one class per inner variant, each
    carrying both tags; the inner tag is required and checked, its open fallback kept."""
    m = module(root, "nested_union.json", style)
    for data in (
        {"update": {"kind": "state", "state": "running", "task": "build"}},
        {"update": {"kind": "state", "state": "idle", "_meta": {"k": 1}}},
        {"update": {"kind": "state", "state": "_paused", "why": [1]}},
        {"update": {"kind": "message", "text": "hi"}},
    ):
        value, back = roundtrip(style, m, m.Notification, data)
        assert back == data
    value, _ = roundtrip(style, m, m.Update, {"kind": "state", "state": "running", "task": "t"})
    if style != "typeddict":
        assert type(value).__name__ == "RunningStateUpdate"
        assert (value.kind, value.state, value.task) == ("state", "running", "t")
        fallback, _ = roundtrip(style, m, m.Update, {"kind": "state", "state": "_x"})
        assert type(fallback).__name__ == "OtherStateUpdate" and fallback.state == "_x"
    for bad in (
        {"kind": "state"},
        {"kind": "state", "state": None},
        {"kind": "state", "state": 3},
        {"kind": "state", "state": "running"},
        {"kind": "state", "state": "running", "task": 1},
    ):
        rejects(style, m, m.Update, bad)


def test_whole_numbers_in_number_members_dump_without_warnings(root: Path) -> None:
    """A JSON number received (or set) as a whole number stays an int: it goes back as
    ``1``, not ``1.0``, and a TypedDict holding one dumps through pydantic without a
    ``PydanticSerializationUnexpectedValue`` warning, inside a union too."""
    import warnings

    from pydantic import TypeAdapter

    td = module(root, "scalars.json", "typeddict")
    pd = module(root, "scalars.json", "pydantic")
    dc = module(root, "scalars.json", "dataclasses")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ta = TypeAdapter(td.Bounds | None)
        value = ta.validate_python({"u16": 1, "prio": 1})
        assert json.dumps(ta.dump_python(value, mode="json")) == '{"u16": 1, "prio": 1}'
        assert ta.dump_python({"u16": 1, "prio": 0}, mode="json") == {"u16": 1, "prio": 0}
        back = TypeAdapter(pd.Bounds).validate_json('{"u16": 1, "prio": 1}')
        assert back.model_dump_json(by_alias=True, exclude_unset=True) == '{"u16":1,"prio":1}'
        assert TypeAdapter(pd.Bounds).validate_json('{"u16": 1, "prio": 0.5}').prio == 0.5
    assert json.dumps(dc.dump(dc.load(dc.Bounds, {"u16": 1, "prio": 1}))) == '{"u16": 1, "prio": 1}'
    for bad in ('{"u16": 1, "prio": true}', '{"u16": 1, "prio": 2}', '{"u16": 1, "prio": "1"}'):
        with pytest.raises(Exception):
            TypeAdapter(pd.Bounds).validate_json(bad)


@pytest.mark.parametrize("style", ("pydantic", *STYLES))
def test_unions_of_null_defs_import_and_validate(style: str, root: Path) -> None:
    """Early releases have several params/result defs whose schema is ``{"type": "null"}``:
    a union of two of them was ``None | None`` at import (a TypeError); each is spelled
    ``None`` where it is used, and keeps its own exported name."""
    m = module(root, "null_members.json", style)
    if style != "dataclasses":  # there each alias keeps its name for load(): Annotated[None, ...]
        assert m.AuthenticateResponse is None and m.NullPair is None
    for name, value, ok in (
        ("ClientResponse", None, True),
        ("ClientResponse", {"content": "x"}, True),
        ("ClientResponse", 5, False),
        ("NullPair", None, True),
        ("NullPair", {}, False),
    ):
        accepted, back = parse_as(style, m, name, value)
        assert accepted is ok, (name, value)
        if ok:
            assert back == value


#: values whose tag stands under its Python attribute name (``type_``, ``session_update``):
#: (fixture, type, value, the variant class it is read as, or None when rejected)
ATTRIBUTE_NAMED_TAGS = [
    ("tagged_union.json", "ContentBlock", {"type_": "text", "text": "hi"}, None),
    ("tagged_union.json", "ContentBlock", {"type_": "image", "data": "d"}, None),
    ("tagged_union.json", "Update", {"session_update": "user_message_chunk", "content": {"type": "text", "text": "x"}}, None),
    ("tagged_union.json", "Update", {"sessionUpdate": "user_message_chunk", "content": {"type_": "text", "text": "x"}}, None),
    # the wire tag decides; the other key is an unknown member
    ("tagged_union.json", "ContentBlock", {"type": "text", "type_": "image", "text": "hi"}, "TextContentBlock"),
    ("tagged_union.json", "Update", {"sessionUpdate": "agent_message_chunk", "session_update": "user_message_chunk",
                                     "content": {"type": "text", "text": "x"}}, "AgentMessageChunkUpdate"),
    # no wire tag: the untagged default variant, or nothing
    ("default_member.json", "McpServer", {"type_": "http", "url": "u"}, None),
    ("default_member.json", "McpServer", {"type_": "http", "command": "c"}, "McpServerStdio"),
]  # fmt: skip


@pytest.mark.parametrize("style", ("pydantic", *STYLES))
@pytest.mark.parametrize(("fixture", "name", "data", "read_as"), ATTRIBUTE_NAMED_TAGS)
def test_a_tag_is_read_under_its_wire_name_only(
    style: str, root: Path, fixture: str, name: str, data: Any, read_as: str | None
) -> None:
    """JSON Schema requires a union's tag under its wire name: the bindings accept a value
    exactly when the schema does, whatever other keys it carries, as JSON and (Pydantic)
    as a Python dict."""
    schema = json.loads((SCHEMAS / fixture).read_text())
    verdict = Draft202012Validator({**schema, "$ref": f"#/$defs/{name}"}).is_valid(data)
    assert verdict is (read_as is not None)  # the fixture's case is what the schema says
    m = module(root, fixture, style)
    accepted, _ = parse_as(style, m, name, data)
    assert accepted is verdict
    if style == "pydantic":
        try:
            value = TypeAdapter(getattr(m, name)).validate_python(data)
        except ValidationError:
            value = None
        assert (value is not None) is verdict
        if read_as is not None:
            assert type(value).__name__ == read_as
            assert type(TypeAdapter(getattr(m, name)).validate_json(json.dumps(data))).__name__ == read_as
    elif style == "dataclasses" and read_as is not None:
        assert type(m.load(getattr(m, name), data)).__name__ == read_as


def _calls_python(schema: Any) -> bool:
    """Whether a core schema holds a Python function (a discriminator, a validator)."""
    if callable(schema) and not isinstance(schema, type):
        return True
    if isinstance(schema, dict):
        return any(_calls_python(v) for k, v in schema.items() if k not in ("cls", "metadata", "serialization"))
    if isinstance(schema, (list, tuple)):
        return any(_calls_python(v) for v in schema)
    return False


@pytest.mark.parametrize(
    ("fixture", "name", "routed_in_python"),
    [("tagged_union.json", "Update", False), ("default_member.json", "McpServer", False), ("open_union.json", "ToolCallContent", True)],
)
def test_only_an_open_union_calls_python_to_route_json(root: Path, fixture: str, name: str, routed_in_python: bool) -> None:
    """Pydantic: a JSON value of a closed union or of one with an untagged default variant
    is routed by pydantic-core alone; one with an open fallback keeps its routing function."""
    m = module(root, fixture, "pydantic")
    adapter: TypeAdapter[Any] = TypeAdapter(getattr(m, name))
    schema: Any = adapter.core_schema
    while schema["type"] == "definitions":
        schema = schema["schema"]
    json_side = schema["json_schema"] if schema["type"] == "json-or-python" else schema
    assert _calls_python(json_side) is routed_in_python

