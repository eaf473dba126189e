"""RFD overlays: declarative changes applied to a schema release before the IR.

source -> load -> **overlay** -> IR. ``read_overlays`` reads and validates the
files, ``apply_overlays`` returns the changed document and one report per overlay.
"""

from acpgen.overlay.apply import apply_overlays, as_json_patch, gate, raise_on_conflicts, strip_provenance
from acpgen.overlay.model import Op, Overlay, Report, Row
from acpgen.overlay.read import format_schema, read_overlay, read_overlays
from acpgen.overlay.report import report_json, report_text, reports_json

__all__ = [
    "Op",
    "Overlay",
    "Report",
    "Row",
    "apply_overlays",
    "as_json_patch",
    "format_schema",
    "gate",
    "raise_on_conflicts",
    "read_overlay",
    "read_overlays",
    "report_json",
    "report_text",
    "reports_json",
    "strip_provenance",
]
