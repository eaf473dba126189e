"""Status tables: what each overlay's operations found, as text or JSON."""

from __future__ import annotations

import json
from typing import Any

from acpgen.overlay.model import Report


def report_text(report: Report) -> str:
    o = report.overlay
    head = f"{o.id} ({o.title}) on {report.schema}: {report.verdict}"
    if report.reason:
        return f"{head}\n  {report.reason}\n"
    rows = [("#", "op", "target", "status", "detail")]
    rows += [(str(r.index), r.op, r.target, r.status, r.detail) for r in report.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [head]
    for r in rows:
        cells = [c.ljust(widths[i]) for i, c in enumerate(r[:4])]
        lines.append(("  " + "  ".join(cells) + ("  " + r[4] if r[4] else "")).rstrip())
    if report.verdict == "obsolete":
        merged = f" (merged-upstream: {o.merged_upstream})" if o.merged_upstream else ""
        lines.append(f"  every change is already upstream{merged}: the overlay can be retired")
    return "\n".join(lines) + "\n"


def report_json(report: Report) -> dict[str, Any]:
    return {
        "overlay": report.overlay.id,
        "file": report.overlay.file,
        "schema": report.schema,
        "verdict": report.verdict,
        "reason": report.reason,
        "rows": [
            {"index": r.index, "op": r.op, "target": r.target, "status": r.status, "pointer": r.pointer, "detail": r.detail}
            for r in report.rows
        ],
    }


def reports_json(reports: list[Report]) -> str:
    return json.dumps([report_json(r) for r in reports], indent=2, ensure_ascii=False) + "\n"
