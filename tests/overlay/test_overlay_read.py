"""Overlay files: the shipped overlays are valid, every malformed one is one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from acpgen.errors import AcpgenError
from acpgen.overlay import format_schema, read_overlay, read_overlays

ROOT = Path(__file__).resolve().parents[2]
RFDS = ROOT / "schemas" / "rfds"
BAD = Path(__file__).parent.parent / "fixtures" / "errors" / "overlay"
SHIPPED = sorted(RFDS.glob("*.yaml"))


def test_the_format_schema_is_a_valid_json_schema() -> None:
    Draft202012Validator.check_schema(format_schema())


def test_the_three_rfd_overlays_ship() -> None:
    assert [p.name for p in SHIPPED] == ["boolean-config-option.yaml", "open-enums.yaml", "session-config-options.yaml"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_overlays_read(path: Path) -> None:
    overlay = read_overlay(path)
    assert overlay.id == "rfd/" + path.stem
    assert overlay.ops and overlay.sha256 and overlay.status == "accepted"
    assert all(op.pointer == f"/ops/{i}" for i, op in enumerate(overlay.ops))


def test_yaml_errors_carry_line_and_column() -> None:
    with pytest.raises(AcpgenError) as info:
        read_overlay(BAD / "yaml-syntax.yaml")
    (d,) = info.value.diagnostics
    assert d.code == "ACPG401" and d.line == 4 and d.col == 1


def test_schema_errors_point_into_the_yaml() -> None:
    with pytest.raises(AcpgenError) as info:
        read_overlay(BAD / "unknown-op.yaml")
    (d,) = info.value.diagnostics
    assert (d.pointer, d.line, d.col) == ("/ops/0/op", 7, 9)
    assert "unknown operation 'rename_def'" in d.message


def test_every_file_is_reported_and_ids_are_unique(tmp_path: Path) -> None:
    copy = tmp_path / "copy.yaml"
    copy.write_text((RFDS / "open-enums.yaml").read_text())
    with pytest.raises(AcpgenError) as info:
        read_overlays([RFDS / "open-enums.yaml", copy, BAD / "unknown-op.yaml"])
    codes = sorted((d.code, Path(d.file).name) for d in info.value.diagnostics)
    assert codes == [("ACPG402", "copy.yaml"), ("ACPG402", "unknown-op.yaml")]


def test_missing_overlay_file() -> None:
    with pytest.raises(AcpgenError) as info:
        read_overlay(BAD / "nope.yaml")
    assert info.value.diagnostics[0].code == "ACPG100"
