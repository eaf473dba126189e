"""Small overlays built in tests: one operation at a time, applied to a dict schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from acpgen.load import Meta, MethodName, RawDocument
from acpgen.overlay import Overlay, Report, apply_overlays
from acpgen.overlay.model import Op
from acpgen.source import SourceFile

FIXTURE = Path(__file__).parent.parent / "fixtures" / "overlays" / "schemas" / "schema.json"


def small() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def overlay(*ops: dict[str, Any], ident: str = "rfd/test", **extra: Any) -> Overlay:
    return Overlay(
        id=ident,
        title="Test",
        rfd="test.md",
        status="draft",
        link=None,
        protocols=tuple(extra.get("protocols", ())),
        channels=tuple(extra.get("channels", ())),
        merged_upstream=None,
        fallback_description=extra.get("fallback_description"),
        ops=tuple(Op(o["op"], {k: v for k, v in o.items() if k != "op"}, f"/ops/{i}") for i, o in enumerate(ops)),
        file="test.yaml",
        sha256="0" * 64,
    )


def doc(data: dict[str, Any], methods: tuple[MethodName, ...] = (), stability: str = "stable") -> RawDocument:
    source = SourceFile("schema.json", json.dumps(data), "0" * 64)
    return RawDocument(source, copy.deepcopy(data), Meta(None, 1, methods), "v1", stability)  # type: ignore[arg-type]


def run(data: dict[str, Any], *ops: dict[str, Any], **extra: Any) -> tuple[dict[str, Any], Report]:
    new, (report,) = apply_overlays(doc(data), (overlay(*ops, **extra),), "schema.json")
    return new.data, report


def statuses(report: Report) -> list[tuple[str, str]]:
    return [(r.target, r.status) for r in report.rows]
