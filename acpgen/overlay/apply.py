"""Apply overlays to a loaded schema document: RawDocument -> (RawDocument, reports).

Overlays apply in order, each to the result of the previous one; every operation
reports a status (model.Row) and every overlay a verdict (model.Report). The
input document is never mutated.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import jsonpatch  # type: ignore[import-untyped,unused-ignore]

from acpgen.errors import AcpgenError, Diagnostic
from acpgen.load import RawDocument
from acpgen.overlay import ops_defs, ops_unions  # noqa: F401  (register the operations)
from acpgen.overlay.model import SINGLE_TARGET, Overlay, Report, Row, verdict_of
from acpgen.overlay.shapes import MARK, refs_in
from acpgen.overlay.work import OPS, Work



def gate(overlay: Overlay, doc: RawDocument) -> str:
    """Why ``applies-to`` rules this document out ("" when it does not)."""
    protocol = int(doc.tree[1:]) if doc.tree[1:].isdigit() else 1
    if overlay.protocols and protocol not in overlay.protocols:
        return f"applies-to protocol {', '.join(map(str, overlay.protocols))}; this schema is protocol {protocol}"
    if overlay.channels and doc.stability not in overlay.channels:
        return f"applies-to channel {', '.join(overlay.channels)}; this schema is {doc.stability}"
    return ""


def _container(data: dict[str, Any]) -> str:
    return "definitions" if "definitions" in data and "$defs" not in data else "$defs"


def apply_one(data: dict[str, Any], methods: list[Any], overlay: Overlay, schema_name: str) -> Report:
    """Run one overlay on ``data`` (a private copy, changed in place)."""
    work = Work(data, _container(data), methods, overlay)
    dangling_before = refs_in(data) - set(work.defs)
    rows: list[Row] = []
    for index, operation in enumerate(overlay.ops):
        work.op, work.index = operation, index
        rows.extend(OPS[operation.kind](work, operation))
    for name in sorted(refs_in(work.data) - set(work.defs) - dangling_before):
        rows.append(Row(len(overlay.ops), "(result)", name, "conflict", work.at(name), "referenced by the overlay's changes but not defined"))
    return Report(overlay, schema_name, verdict_of(tuple(rows)), tuple(rows))


def apply_overlays(doc: RawDocument, overlays: tuple[Overlay, ...], schema_name: str) -> tuple[RawDocument, tuple[Report, ...]]:
    data = copy.deepcopy(doc.data)
    methods = list(doc.meta.methods)
    reports: list[Report] = []
    for overlay in overlays:
        why = gate(overlay, doc)
        if why:
            reports.append(Report(overlay, schema_name, "not-applicable", (), why))
            continue
        reports.append(apply_one(data, methods, overlay, schema_name))
    return replace(doc, data=data, meta=replace(doc.meta, methods=tuple(methods))), tuple(reports)


def build_errors(reports: tuple[Report, ...]) -> list[Diagnostic]:
    """A build stops on a conflict (ACPG404) and on a single-target op whose target is
    absent (ACPG403): the bindings would silently lack what the RFD proposes."""
    out = []
    for report in reports:
        for row in report.rows:
            ops = report.overlay.ops
            where, pos = (ops[row.index].pointer, ops[row.index].position) if row.index < len(ops) else ("/ops", None)
            line, col = pos or (None, None)
            if row.status == "conflict":
                code = "ACPG404"
            elif row.status == "not-applicable" and row.op in SINGLE_TARGET:
                code = "ACPG403"
            else:
                continue
            message = f"{row.target} in {report.schema}: {row.detail}"
            out.append(Diagnostic(code, message, report.overlay.file, where, line, col))
    return out


def raise_on_conflicts(reports: tuple[Report, ...]) -> None:
    errors = build_errors(reports)
    if errors:
        raise AcpgenError(errors)


def strip_provenance(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_provenance(v) for k, v in node.items() if k != MARK}
    if isinstance(node, list):
        return [strip_provenance(v) for v in node]
    return node


def as_json_patch(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """The change as RFC 6902 operations, for review or for tools that do not read overlays."""
    ops: list[dict[str, Any]] = jsonpatch.make_patch(before, after).patch
    return ops
