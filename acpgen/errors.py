"""User-facing diagnostics: one catalogue of stable codes, one line per problem.

Every failure a user can cause is an :class:`AcpgenError` carrying one or more
:class:`Diagnostic` values. The CLI prints them as
``file[:line:col]: CODE /json/pointer: message`` and exits with status 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

#: code -> short title. Codes are stable: tests, docs and users refer to them.
CATALOGUE: dict[str, str] = {
    # input files
    "ACPG100": "input not found",
    "ACPG101": "invalid JSON",
    "ACPG102": "empty file",
    "ACPG103": "not a text file",
    "ACPG104": "not a JSON Schema document",
    "ACPG105": "no schema in directory",
    "ACPG106": "malformed meta file",
    "ACPG107": "not a schema reference page",
    # remote schemas
    "ACPG110": "download failed",
    "ACPG111": "pinned file changed",
    "ACPG112": "invalid lock file",
    # schema constructs
    "ACPG201": "$defs entry is not a schema",
    "ACPG202": "malformed keyword",
    "ACPG203": "dangling $ref",
    "ACPG204": "remote $ref",
    "ACPG205": "$ref cycle without an object",
    "ACPG206": "duplicate tag value",
    "ACPG207": "unsupported construct",
    "ACPG208": "nesting too deep",
    "ACPG209": "keyword not implemented",
    # naming
    "ACPG301": "name clash",
    "ACPG302": "invalid naming override",
    "ACPG303": "no usable name",
    # overlays
    "ACPG401": "overlay syntax error",
    "ACPG402": "invalid overlay",
    "ACPG403": "overlay target missing",
    "ACPG404": "overlay conflicts with the schema",
    # configuration
    "ACPG501": "configuration error",
    # output
    "ACPG601": "output not writable",
    "ACPG602": "formatting failed",
    "ACPG603": "refusing to overwrite a file acpgen did not write",
    # diff
    "ACPG701": "diff inputs do not match",
    "ACPG702": "invalid diff ignore entry",
}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    file: str = ""
    pointer: str = ""
    line: int | None = None
    col: int | None = None

    def __post_init__(self) -> None:
        if self.code not in CATALOGUE:
            raise ValueError(f"unknown diagnostic code {self.code}")

    def render(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}:{self.col if self.col is not None else 1}"
        pointer = self.pointer if self.pointer else "/"
        return f"{where}: {self.code} {pointer}: {self.message}"


class AcpgenError(Exception):
    """Raised with every diagnostic a stage found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        # one problem found on two paths through the schema is reported once
        self.diagnostics: tuple[Diagnostic, ...] = tuple(dict.fromkeys(diagnostics))
        super().__init__("\n".join(d.render() for d in self.diagnostics))


def fail(code: str, message: str, file: str = "", pointer: str = "") -> AcpgenError:
    return AcpgenError([Diagnostic(code, message, file, pointer)])


class Collector:
    """Gathers diagnostics during a stage so that all of them are reported."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, code: str, message: str, file: str = "", pointer: str = "") -> None:
        self.items.append(Diagnostic(code, message, file, pointer))

    def extend(self, error: AcpgenError) -> None:
        self.items.extend(error.diagnostics)

    def raise_if_any(self) -> None:
        if self.items:
            raise AcpgenError(self.items)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``; did you mean 'styles'?`` when one of ``choices`` is close to ``word``, else ``""``."""
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
