"""The forms of ``not`` acpgen reads (acpgen/normalise/nots.py), each only with its
``required``: without it, a ``not`` means something else (``not: {properties: {t: {const:
"a"}}}`` rules out every object *without* ``t``), so it is refused (ACPG207), never read as
the guarded form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acpgen import api, ir
from acpgen.errors import AcpgenError

from ..conftest import generate, import_file, parse_as

AGENT_ONLY = {"required": ["type"], "properties": {"type": {"not": {"const": "agent"}}}}
NOT_A_OR_B = {"anyOf": [{"required": ["kind"], "properties": {"kind": {"const": "a"}}},
                        {"required": ["kind"], "properties": {"kind": {"const": "b"}}}]}
NOT_A = {"required": ["kind"], "properties": {"kind": {"const": "a"}}}
WITHOUT_HINT = {"required": ["hint"]}


def _without(node: dict[str, Any], key: str) -> dict[str, Any]:
    """``node`` with ``key`` dropped, in its ``anyOf`` members too."""
    out = {k: v for k, v in node.items() if k != key}
    if "anyOf" in out:
        out["anyOf"] = [_without(m, key) for m in out["anyOf"]]
    return out


def _schema(tmp_path: Path, guard: dict[str, Any]) -> Path:
    obj = {
        "type": "object",
        "properties": {"type": {"type": "string"}, "kind": {"type": "string"}, "hint": {"type": "string"}},
        "not": guard,
    }
    path = tmp_path / "v1" / "schema.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"$defs": {"X": obj}}))
    return path


@pytest.mark.parametrize(
    ("guard", "label", "accepted", "rejected"),
    [
        (AGENT_ONLY, "type absent or agent", [{}, {"type": "agent"}], [{"type": "terminal"}]),
        (NOT_A_OR_B, "kind not a, b", [{}, {"kind": "c"}], [{"kind": "a"}, {"kind": "b"}]),
        (NOT_A, "kind not a", [{}, {"kind": "b"}], [{"kind": "a"}]),
        (WITHOUT_HINT, "without hint", [{}, {"kind": "a"}], [{"hint": "h"}]),
    ],
    ids=["only-value", "excluded-values", "excluded-value", "forbidden-member"],
)
def test_each_form_is_read_with_its_required(
    tmp_path: Path, guard: dict[str, Any], label: str, accepted: list[Any], rejected: list[Any]
) -> None:
    schema = _schema(tmp_path, guard)
    (built,) = api.build_ir(schema)
    x = built.protocol.def_map()["X"]
    assert isinstance(x, ir.ObjectDef) and [m.label for m in x.mixins] == [label]
    out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses"), formatted=False)
    for style in ("pydantic", "dataclasses"):
        module = import_file(out / f"acp_{style}" / "v1.py")
        for value in accepted:
            assert parse_as(style, module, "X", value) == (True, value), (style, value)
        for value in rejected:
            assert parse_as(style, module, "X", value)[0] is False, (style, value)


@pytest.mark.parametrize("guard", [AGENT_ONLY, NOT_A_OR_B, NOT_A], ids=["only-value", "excluded-values", "excluded-value"])
def test_a_form_without_its_required_is_refused(tmp_path: Path, guard: dict[str, Any]) -> None:
    # e.g. not: {properties: {type: {not: {const: agent}}}}: `type` must be there and be
    # "agent"; read as the guarded form, {} would be accepted
    schema = _schema(tmp_path, _without(guard, "required"))
    with pytest.raises(AcpgenError) as exc:
        api.build_ir(schema)
    assert [(d.code, d.pointer) for d in exc.value.diagnostics] == [("ACPG207", "/$defs/X/not")]


def test_a_not_ruling_out_an_array_const_is_no_crash(tmp_path: Path) -> None:
    """Found by ``make fuzz``: an untagged default variant whose ``not`` rules out a tag
    ``const`` that is an array (unhashable) made ``TaggedUnionDef.catch_all`` raise
    ``TypeError``. A value that is no string or number can never be a tag: it rules out
    none, and the build goes on (or stops with a catalogued diagnostic)."""
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps(
            {
                "$defs": {
                    "Update": {
                        "anyOf": [
                            {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}}, "required": ["kind"]},
                            {
                                "type": "object",
                                "properties": {"text": {"type": "string"}},
                                "not": {"anyOf": [{"properties": {"kind": {"const": [1, "a"]}}, "required": ["kind"]}]},
                            },
                        ]
                    }
                }
            }
        )
    )
    try:
        out = generate(schema, tmp_path / "out", ("pydantic", "dataclasses", "typeddict"))
    except AcpgenError as exc:  # refused out loud is fine; an internal error is not
        assert exc.diagnostics
        return
    for style in ("pydantic", "dataclasses", "typeddict"):
        import_file(out / f"acp_{style}" / "v1.py")
