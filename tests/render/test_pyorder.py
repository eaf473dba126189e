"""The order of a Pydantic module's definitions (acpgen/render/pyorder.py): each class and
alias after every name its annotations and value use, so that the module needs no
``from __future__ import annotations`` (pydantic compiles a ``ForwardRef`` for each
string annotation on import); a recursive type keeps lazy annotations."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from acpgen.render.pyorder import eager_order, names_in

from ..conftest import SCHEMAS, generate, import_file

FUTURE = "from __future__ import annotations"


@dataclass(frozen=True)
class D:
    name: str


def test_names_are_what_python_looks_up() -> None:
    assert names_in("Annotated[Foo | None, _OnErrorDefault(None)]", None, "") == {"Annotated", "Foo", "None", "_OnErrorDefault"}
    # strings are text, an attribute is no lookup, a keyword's name only adds a dependency
    assert names_in('Literal["Foo", "a\\"Bar"] | x.Baz', 'Field(default="Bar", description="Baz")') == {
        "Literal", "x", "Field", "default", "description"
    }
    assert names_in("Annotated[\n    list[Annotated[Item, _SKIP_INVALID]] | None,\n    _NON_NULL,\n]") >= {"Item", "list"}
    # deeper than Python's parser nests (a schema of 900 nested arrays): still read
    assert names_in("list[" * 900 + "Leaf" + "]" * 900) == {"list", "Leaf"}


def test_each_def_comes_after_what_it_uses_and_ties_keep_their_order() -> None:
    defs = [D("A"), D("B"), D("C"), D("Z")]
    order = eager_order(defs, {"A": {"Z", "str"}, "B": set(), "C": {"B"}, "Z": {"B"}})
    assert order is not None and [d.name for d in order] == ["B", "Z", "A", "C"]
    assert [d.name for d in eager_order(defs, {}) or ()] == ["A", "B", "C", "Z"]


def test_a_cycle_or_a_class_using_itself_has_no_eager_order() -> None:
    assert eager_order([D("A"), D("B")], {"A": {"B"}, "B": {"A"}}) is None
    assert eager_order([D("A"), D("B")], {"A": {"A"}}) is None


def _module(tmp_path: Path, schema: dict[str, object]) -> tuple[str, object]:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    out = generate(path, tmp_path / "out")
    module_path = out / "acp_pydantic" / "v1.py"
    return module_path.read_text(), import_file(module_path)


def test_a_module_of_upstream_shapes_is_written_in_order_without_lazy_annotations(tmp_path: Path) -> None:
    text, module = _module(
        tmp_path,
        {
            "$defs": {
                "Alpha": {"type": "object", "properties": {"beta": {"$ref": "#/$defs/Beta"}, "kind": {"$ref": "#/$defs/Kind"}}},
                "Beta": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
                "Kind": {"oneOf": [{"$ref": "#/$defs/Beta"}, {"type": "string"}]},
            }
        },
    )
    assert FUTURE not in text
    assert text.index("class Beta(") < text.index("Kind: TypeAlias") < text.index("class Alpha(")
    value = TypeAdapter(module.Alpha).validate_json('{"beta": {"n": 1}, "kind": {"n": 2}}')  # type: ignore[attr-defined]
    assert value.beta.n == 1 and value.kind.n == 2
    with pytest.raises(ValidationError):
        TypeAdapter(module.Alpha).validate_json('{"beta": {"n": "1"}}')  # type: ignore[attr-defined]


def test_a_recursive_type_keeps_lazy_annotations(tmp_path: Path) -> None:
    text, module = _module(
        tmp_path,
        {
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}, "name": {"type": "string"}},
                    "required": ["name"],
                }
            }
        },
    )
    assert FUTURE in text
    value = TypeAdapter(module.Node).validate_json('{"name": "a", "children": [{"name": "b"}]}')  # type: ignore[attr-defined]
    assert value.children[0].name == "b"


def test_every_fixture_module_is_written_in_order(tmp_path: Path) -> None:
    """No fixture is recursive: each Pydantic module is eager, and imports (the fixture
    and fuzz tests exercise them further)."""
    lazy = []
    for fixture in ("tagged_union.json", "sibling_unions.json", "exclusive_unions.json", "rpc", "lenient_required.json"):
        out = generate(SCHEMAS / fixture, tmp_path / fixture.removesuffix(".json"))
        text = (out / "acp_pydantic" / "v1.py").read_text()
        if FUTURE in text:
            lazy.append(fixture)
        import_file(out / "acp_pydantic" / "v1.py")
    assert lazy == []


@pytest.mark.parametrize("style", ["pydantic", "dataclasses", "typeddict"])
def test_an_alias_comes_after_the_aliases_its_value_names(style: str, tmp_path: Path) -> None:
    """``Auth = TerminalAuth | Zed`` (a tagged variant and a member that is an alias of
    ``null``, sorted after it): its value is evaluated on import in every style, so ``Zed`` is written first
    (found by ``make fuzz``: a def grafted to ``null``, NameError on import)."""
    path = tmp_path / "schema.json"
    path.write_text(
        json.dumps(
            {
                "$defs": {
                    "Auth": {
                        "anyOf": [
                            {"type": "object", "properties": {"type": {"type": "string", "const": "terminal"}}, "required": ["type"]},
                            {"$ref": "#/$defs/Zed"},
                        ]
                    },
                    "Zed": {"type": "null"},
                }
            }
        )
    )
    out = generate(path, tmp_path / "out", (style,))
    module_path = out / f"acp_{style}" / "v1.py"
    text = module_path.read_text()
    assert text.index("Zed: TypeAlias") < text.index("Auth: TypeAlias")
    module = import_file(module_path)
    assert module.Auth is not None


def test_importing_a_module_compiles_no_forward_reference(tmp_path: Path) -> None:
    """Pydantic reads the annotations of every base of a model again for each model: an
    annotation of the runtime's base model (a module with lazy annotations) would be a
    ``ForwardRef`` compiled per model on import."""
    import sys
    import typing

    out = generate(SCHEMAS / "tagged_union.json", tmp_path / "out")
    import_file(out / "acp_pydantic" / "v1.py")  # pydantic's own lazy imports done
    made: list[str] = []
    original = typing.ForwardRef.__init__

    def counting(self: typing.ForwardRef, arg: str, *args: object, **kwargs: object) -> None:
        frame = sys._getframe(1)
        while frame is not None:  # made while pydantic builds a model class
            if frame.f_globals.get("__name__") == "pydantic._internal._model_construction":
                made.append(arg)
                break
            frame = frame.f_back  # type: ignore[assignment]
        original(self, arg, *args, **kwargs)  # type: ignore[arg-type]

    typing.ForwardRef.__init__ = counting  # type: ignore[method-assign]
    try:
        import_file(out / "acp_pydantic" / "v1.py")
    finally:
        typing.ForwardRef.__init__ = original  # type: ignore[method-assign]
    assert made == []
