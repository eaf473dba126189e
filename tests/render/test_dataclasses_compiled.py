"""The dataclasses runtime compiles its specs into Python functions on first use; the spec
interpreter stays the definition. Every test here runs the same generated module twice,
once as shipped (compiled) and once with the compiler switched off (each spec's
interpreter), and requires the same outcome: the same object (class, members, ``_extra``,
``_present``) and the same wire JSON back, or the same ``ValidationError`` text.

Inputs: every def of every fixture schema and of upstream ``main`` (v1 and v2, stable and
unstable), Hypothesis instances drawn from the JSON Schema and one mutation of each; the
corpus messages; and hand-written edge cases (bool where an int is expected, extra members
on closed objects, unknown and missing tags, lenient members).
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .. import corpus
from ..conftest import SCHEMAS, generate, import_file
from ..strategies import instances, mutated

FIXTURES = sorted(p.name for p in SCHEMAS.glob("*.json"))
MAIN_FILES = ["v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json"]


def interpreted(module: ModuleType) -> ModuleType:
    """Switch the compiler off in this module: every spec runs its interpreter."""
    runtime = sys.modules[module.__package__ + "._runtime"]
    runtime._Obj.decode = runtime._Obj.interpret
    runtime._Tagged.decode = runtime._Tagged.interpret
    runtime._Obj.encode = runtime._Obj.interpret_encode
    runtime._COMPILER.entry = lambda spec: spec.decode
    return module


@lru_cache(maxsize=None)
def pair(schema: Path, stem: str) -> tuple[ModuleType, ModuleType]:
    out = generate(schema, Path(_TMP[0]) / str(len(_TMP)), ("dataclasses",), formatted=False)
    _TMP.append(str(out))
    path = out / "acp_dataclasses" / f"{stem}.py"
    return import_file(path), interpreted(import_file(path))


_TMP: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    if not _TMP:
        _TMP.append(str(tmp_path_factory.mktemp("compiled")))


def outcome(module: ModuleType, name: str, data: Any) -> tuple[str, Any]:
    try:
        value = module.load(getattr(module, name), data)
    except module.ValidationError as exc:
        return "error", str(exc)
    return "ok", _shape(module, value)


def _shape(module: ModuleType, value: Any) -> Any:
    """Everything a loaded value carries: class, members, unknown members, what was present."""
    if isinstance(value, list):
        return [_shape(module, v) for v in value]
    if isinstance(value, dict):
        return {k: _shape(module, v) for k, v in value.items()}
    if isinstance(value, module.AcpObject):
        spec = sys.modules[module.__package__ + "._runtime"]._CLASS_SPECS[type(value)]
        members = {f.attr: _shape(module, getattr(value, f.attr)) for f in spec.fields}
        return (type(value).__name__, members, value._extra, sorted(value._present), module.dump(value))
    return (type(value).__name__, value)


def same(compiled: ModuleType, reference: ModuleType, name: str, data: Any) -> None:
    got, want = outcome(compiled, name, data), outcome(reference, name, data)
    assert got == want, f"{name}: compiled {got!r} != interpreted {want!r} for {data!r}"


def _check_def(compiled: ModuleType, reference: ModuleType, root: dict[str, Any], name: str) -> None:
    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(instances(root, {"$ref": f"#/$defs/{name}"}))
        same(compiled, reference, name, value)
        bad, _ = data.draw(mutated(value))
        same(compiled, reference, name, bad)

    check()


def _exported(module: ModuleType, root: dict[str, Any]) -> list[str]:
    return [n for n in sorted(root.get("$defs", {})) if n in module._TYPES.values()]


@pytest.mark.parametrize("fixture", FIXTURES)
def test_fixture_defs_compiled_as_interpreted(fixture: str) -> None:
    compiled, reference = pair(SCHEMAS / fixture, "v1")
    root = json.loads((SCHEMAS / fixture).read_text())
    names = _exported(compiled, root)
    assert names, f"{fixture}: no def to check"
    for name in names:
        _check_def(compiled, reference, root, name)


@corpus.needs_corpus
@pytest.mark.parametrize("schema_file", MAIN_FILES)
def test_main_defs_compiled_as_interpreted(schema_file: str) -> None:
    tree, file = schema_file.split("/")
    stem = tree + ("_unstable" if "unstable" in file else "")
    compiled, reference = pair(corpus.ACP / "main", stem)
    root = json.loads((corpus.ACP / "main" / schema_file).read_text())
    for name in _exported(compiled, root):
        _check_def(compiled, reference, root, name)


@corpus.needs_corpus
def test_corpus_messages_compiled_as_interpreted() -> None:
    compiled, reference = pair(corpus.ACP / "main", "v1_unstable")
    index = json.loads((corpus.MESSAGES / "MESSAGES.json").read_text())["messages"]
    checked = 0
    for m in index:
        name = m.get("type")
        if not name or name not in compiled._TYPES.values():
            continue
        data = json.loads((corpus.MESSAGES / m["file"]).read_text())
        same(compiled, reference, name, data)
        checked += 1
    assert checked >= 50


CLOSED = {
    "$defs": {
        "Closed": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": False},
        "Typed": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
    }
}

EDGES: list[tuple[str, str, Any]] = [
    # scalars: bool is not an integer, 1.0 is not an integer, an int is a number, bounds
    ("scalars.json", "Bounds", {"u16": True}),
    ("scalars.json", "Bounds", {"u16": 1.0}),
    ("scalars.json", "Bounds", {"u16": 1, "prio": 1}),
    ("scalars.json", "Bounds", {"u16": 70000}),
    ("scalars.json", "Bounds", {"u16": 1, "options": []}),
    # unknown members: kept on open objects, rejected or validated on closed ones
    ("closed.json", "Closed", {"name": "x", "other": 1}),
    ("closed.json", "Typed", {"name": "x", "b": "not an int"}),
    ("closed.json", "Typed", {"name": "x", "b": 2}),
    ("defaults.json", "Defaults", {"unknown": [1, 2]}),
    ("defaults.json", "Defaults", {}),
    # tagged unions: unknown tag, missing tag, tag of the wrong type, bool tag, bad variant
    ("tagged_union.json", "ContentBlock", {"type": "hexagon"}),
    ("tagged_union.json", "ContentBlock", {"text": "x"}),
    ("tagged_union.json", "ContentBlock", {"type": 1}),
    ("tagged_union.json", "ContentBlock", {"type": True}),
    ("tagged_union.json", "ContentBlock", {"type": "image"}),
    ("tagged_union.json", "Update", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}, "x": 1}),
    ("open_union.json", "ToolCallContent", {"type": "_custom", "payload": [1]}),
    ("default_member.json", "McpServer", {"command": "run"}),
    ("default_member.json", "McpServer", {"type": "http"}),
    ("default_member.json", "McpServer", {"type": "sse", "command": "x"}),
    # one of several member shapes
    ("default_member.json", "SetOption", {"configId": "a", "type": "boolean", "value": True}),
    ("default_member.json", "SetOption", {"configId": "a", "value": "v"}),
    ("default_member.json", "SetOption", {"configId": "a"}),
    # lenient members: the bad value becomes the default, or the item is dropped
    ("lenient.json", "Lenient", {"priority": "high", "tags": [{"name": "a"}, {"x": 1}], "args": [1]}),
    ("lenient.json", "Lenient", {"_meta": 5}),
    # not an object at all
    ("refs.json", "Holder", []),
    ("refs.json", "Holder", None),
]


@pytest.mark.parametrize(("fixture", "name", "data"), EDGES)
def test_edge_cases_compiled_as_interpreted(fixture: str, name: str, data: Any, tmp_path: Path) -> None:
    schema = SCHEMAS / fixture
    if fixture == "closed.json":
        schema = tmp_path / "v1" / "schema.json"
        schema.parent.mkdir()
        schema.write_text(json.dumps(CLOSED))
    compiled, reference = pair(schema, "v1")
    assert name in compiled._TYPES.values(), f"{fixture} exports no {name}"
    same(compiled, reference, name, data)


EMPTY = {
    "$defs": {
        "Empty": {"type": "object", "properties": {}},
        "EmptyClosed": {"type": "object", "properties": {}, "additionalProperties": False},
        "Holder": {"type": "object", "properties": {"inner": {"$ref": "#/$defs/Empty"}}, "required": ["inner"]},
    }
}


@pytest.mark.parametrize(
    ("name", "data", "accepted"),
    [
        ("Empty", {}, True),
        ("Empty", {"x": 1}, True),
        ("Empty", [], False),
        ("EmptyClosed", {}, True),
        ("EmptyClosed", {"x": 1}, False),
        ("Holder", {"inner": {"y": [1]}}, True),
    ],
)
def test_an_object_with_no_members_loads(name: str, data: Any, accepted: bool, tmp_path: Path) -> None:
    """``"properties": {}`` declares a class without fields: its compiled loader once had
    an empty ``try:`` block, and loading any value of it was an ``IndentationError``."""
    schema = tmp_path / "v1" / "schema.json"
    schema.parent.mkdir()
    schema.write_text(json.dumps(EMPTY))
    compiled, reference = pair(schema, "v1")
    assert isinstance(compiled.Empty, type) and issubclass(compiled.Empty, compiled.AcpObject)
    same(compiled, reference, name, data)
    got = outcome(compiled, name, data)
    assert got[0] == ("ok" if accepted else "error"), got
    if accepted:
        assert compiled.dump(compiled.load(getattr(compiled, name), data)) == data


def test_functions_are_compiled_on_first_use_then_reused(tmp_path: Path) -> None:
    out = generate(SCHEMAS / "tagged_union.json", tmp_path, ("dataclasses",), formatted=False)
    compiled = import_file(out / "acp_dataclasses" / "v1.py")
    registry = compiled._REGISTRY
    spec = registry.spec_of(compiled.ContentBlock)
    assert not registry.loaders and compiled._COMPILER.names == {}  # nothing compiled at import
    block = compiled.load(compiled.ContentBlock, {"type": "text", "text": "hi"})
    assert type(block).__name__ == "TextContentBlock" and block.text == "hi"
    fn = registry.loaders[compiled.ContentBlock]
    assert fn.__name__.startswith("_d") and compiled._COMPILER.entry(spec) is fn
    assert compiled.load(compiled.ContentBlock, {"type": "image", "data": "x"}).data == "x"
    assert registry.loaders[compiled.ContentBlock] is fn
