"""Golden snapshots (syrupy) of the IR and the Pydantic module of each fixture schema.

Update with ``make snapshots`` (pytest --snapshot-update) after reviewing the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acpgen import api
from acpgen.ir import to_jsonable

from .conftest import SCHEMAS, generate

FIXTURES = sorted(
    [p.name for p in SCHEMAS.glob("*.json")] + [p.name for p in SCHEMAS.iterdir() if p.is_dir()]
)


@pytest.mark.parametrize("fixture", FIXTURES)
def test_ir_snapshot(fixture: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    built = api.build_ir(SCHEMAS / fixture)
    doc = {b.protocol.label: {"protocol": to_jsonable(b.protocol), "names": b.names.types} for b in built}
    assert json.dumps(doc, indent=2, sort_keys=True) == snapshot


@pytest.mark.parametrize("fixture", FIXTURES)
def test_pydantic_snapshot(fixture: str, snapshot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = generate(SCHEMAS / fixture, tmp_path / "out")
    assert (out / "acp_pydantic" / "v1.py").read_text() == snapshot


@pytest.mark.parametrize("style", ["dataclasses", "typeddict"])
@pytest.mark.parametrize("fixture", FIXTURES)
def test_style_snapshot(fixture: str, style: str, snapshot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = generate(SCHEMAS / fixture, tmp_path / "out", (style,))
    assert (out / f"acp_{style}" / "v1.py").read_text() == snapshot


@pytest.mark.parametrize("style", ["pydantic", "dataclasses", "typeddict"])
def test_package_runtime_snapshot(style: str, snapshot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What every module of a package imports: the style's runtime and the JSON-RPC layer
    (frames, router, connection), the same text in every style."""
    out = generate(SCHEMAS / "rpc", tmp_path / "out", (style,))
    package = out / f"acp_{style}"
    assert (package / "_runtime.py").read_text() == snapshot
    assert (package / "_jsonrpc.py").read_text() == snapshot
