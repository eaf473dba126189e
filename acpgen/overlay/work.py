"""The state one overlay's operations share while they run, and the op registry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from acpgen.load import MethodName
from acpgen.overlay.model import Op, Overlay, Row, Status
from acpgen.overlay.shapes import MARK, marks_of
from acpgen.source import pointer_join

DEFAULT_FALLBACK = (
    "Custom or future {noun}.\n\n"
    "Values beginning with `_` are reserved for implementation-specific\n"
    "extensions. Unknown values that do not begin with `_` are reserved for\n"
    "future ACP variants."
)


@dataclass
class Work:
    """A private deep copy of the schema being changed (nothing outside sees it mutate)."""

    data: dict[str, Any]
    container: str
    methods: list[MethodName]
    overlay: Overlay
    op: Op | None = None
    index: int = 0

    @property
    def defs(self) -> dict[str, Any]:
        defs = self.data.setdefault(self.container, {})
        assert isinstance(defs, dict)
        return defs

    def at(self, name: str, *more: str | int) -> str:
        return pointer_join("/" + self.container, name, *more)

    def mark(self, node: dict[str, Any]) -> dict[str, Any]:
        """Provenance: ``x-acpgen-overlay`` names every overlay that changed the node."""
        ids = list(marks_of(node))
        if self.overlay.id not in ids:
            ids.append(self.overlay.id)
        node[MARK] = ids[0] if len(ids) == 1 else ids
        return node

    def row(self, target: str, status: Status, pointer: str, detail: str = "") -> Row:
        assert self.op is not None
        return Row(self.index, self.op.kind, target, status, pointer, detail)

    def def_or_row(self, name: str, target: str = "") -> tuple[dict[str, Any] | None, list[Row]]:
        """The def to change, or the row that says why there is none."""
        d = self.defs.get(name)
        if d is None:
            return None, [self.row(target or name, "not-applicable", self.at(name), f"no def {name} in this schema")]
        if not isinstance(d, dict):
            return None, [self.row(target or name, "conflict", self.at(name), "the def is not a schema object")]
        return d, []


OpFunc = Callable[[Work, Op], list[Row]]
OPS: dict[str, OpFunc] = {}


def op(name: str) -> Callable[[OpFunc], OpFunc]:
    def register(fn: OpFunc) -> OpFunc:
        OPS[name] = fn
        return fn

    return register
