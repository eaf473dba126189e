"""One behaviour test per rule that hand-made mutations of acpgen survived (#19 item 6),
on fixtures written here because the corpus has no example:

* a fallback variant is named from its own title, whatever it is (not only ``other``);
* a name that would start with a digit is guarded (class, attribute, handler), and the
  module imports;
* two lower (upper) bounds on one member: the tighter one holds (``max``/``min``), in
  every style;
* a ``pattern`` matches anywhere in the string (JSON Schema's ``re.search``), not only at
  its start, in every style;
* every target is staged before any is swapped in: a failure staging the second target
  leaves the first one untouched;
* ``acpgen check`` reports a generated file that is missing.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

import acpgen.write as write
from acpgen import api
from acpgen.cli import app
from acpgen.errors import AcpgenError

from .conftest import generate, import_file, parse_as, tree_bytes

STYLES = ("pydantic", "dataclasses", "typeddict")
runner = CliRunner()

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "Shape": {
            "description": "An open union whose fallback is titled `unknown`, with a tag starting with a digit.",
            "oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "3d"}, "depth": {"type": "integer"}}, "required": ["kind", "depth"]},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "flat"}}, "required": ["kind"]},
                {
                    "title": "unknown",
                    "type": "object",
                    "properties": {"kind": {"type": "string"}},
                    "required": ["kind"],
                    "not": {"anyOf": [{"type": "object", "properties": {"kind": {"const": k}}, "required": ["kind"]} for k in ("3d", "flat")]},
                },
            ],
        },
        "Bounded": {
            "type": "object",
            "properties": {
                "small": {"type": "integer", "format": "uint8", "minimum": 3, "maximum": 300},
                "loose": {"type": "integer", "format": "uint8", "minimum": -5},
                "both": {"type": "number", "minimum": 1, "exclusiveMinimum": 5, "maximum": 9, "exclusiveMaximum": 8},
                "2fa": {"type": "boolean"},
                "code": {"type": "string", "pattern": "b+"},
            },
        },
    },
}
_MODULES: dict[str, ModuleType] = {}


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    if not _MODULES:
        root = tmp_path_factory.mktemp("guarded")
        (root / "schema.json").write_text(json.dumps(SCHEMA))
        out = generate(root / "schema.json", root / "out", STYLES)
        for style in STYLES:
            _MODULES[style] = import_file(out / f"acp_{style}" / "v1.py")
    return _MODULES


def test_fallback_variant_named_from_its_title(modules: dict[str, ModuleType]) -> None:
    (built,) = api.build_ir(_write_schema())
    assert built.names.type("Shape#fallback") == "UnknownShape"
    assert built.names.type("Shape#3d") == "V3dShape"
    for style in STYLES:
        assert hasattr(modules[style], "UnknownShape") and hasattr(modules[style], "V3dShape")
    d = modules["dataclasses"]
    assert isinstance(d.load(d.Shape, {"kind": "_x"}), d.UnknownShape)
    assert isinstance(d.load(d.Shape, {"kind": "3d", "depth": 1}), d.V3dShape)


def test_names_starting_with_a_digit_are_guarded(modules: dict[str, ModuleType]) -> None:
    (built,) = api.build_ir(_write_schema())
    attr = built.names.attr("Bounded", "2fa")
    assert attr.isidentifier() and not attr[0].isdigit()
    for style in STYLES:
        assert parse_as(style, modules[style], "Bounded", {"2fa": True}) == (True, {"2fa": True})


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    ("member", "value", "ok"),
    [
        ("small", 2, False),  # minimum 3 is tighter than uint8's 0
        ("small", 3, True),
        ("small", 255, True),
        ("small", 256, False),  # uint8's 255 is tighter than maximum 300
        ("loose", -1, False),  # uint8's 0 is tighter than minimum -5
        ("loose", 0, True),
        ("both", 5, False),  # exclusiveMinimum 5 is tighter than minimum 1
        ("both", 5.5, True),
        ("both", 8, False),  # exclusiveMaximum 8 is tighter than maximum 9
        ("code", "abbb", True),  # a pattern matches anywhere (re.search)
        ("code", "bx", True),
        ("code", "xyz", False),
    ],
)
def test_tighter_bounds_and_patterns(style: str, member: str, value: Any, ok: bool, modules: dict[str, ModuleType]) -> None:
    accepted, back = parse_as(style, modules[style], "Bounded", {member: value})
    assert accepted == ok
    if ok:
        assert back == {member: value}


def _write_schema() -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    return path


def test_all_targets_are_staged_before_any_is_swapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    old = {PurePosixPath(write.MANIFEST): "{}\n", PurePosixPath("a.txt"): "old\n"}
    write.write_trees([(first, old), (second, old)])
    before = tree_bytes(first)
    real_stage = write._stage

    def failing_stage(out: Path, files: dict[PurePosixPath, str]) -> Path:
        if out == second:
            raise _failure(out)
        return real_stage(out, files)

    monkeypatch.setattr(write, "_stage", failing_stage)
    new = {PurePosixPath(write.MANIFEST): "{}\n", PurePosixPath("a.txt"): "new\n"}
    with pytest.raises(AcpgenError):
        write.write_trees([(first, new), (second, new)])
    assert tree_bytes(first) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "a staging directory was left behind"


def _failure(out: Path) -> AcpgenError:
    from acpgen.errors import Diagnostic

    return AcpgenError([Diagnostic("ACPG601", "disk full", str(out))])


def test_check_reports_a_missing_file(tmp_path: Path) -> None:
    schema = _write_schema()
    out = tmp_path / "out"
    assert runner.invoke(app, ["build", "--schema", str(schema), "--out", str(out)]).exit_code == 0
    (out / "acp_pydantic" / "v1.py").unlink()
    result = runner.invoke(app, ["check", "--schema", str(schema), "--out", str(out)])
    assert result.exit_code == 1
    assert "missing:" in result.output and "acp_pydantic/v1.py" in result.output
