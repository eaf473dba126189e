"""Values of the overlay stage: an overlay file as read, and what applying it found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

#: per operation (and per def, for the ops that take a list of defs)
Status = Literal["applied", "already-present", "conflict", "not-applicable"]
#: per overlay, on one schema file
Verdict = Literal["applies-cleanly", "partially-merged", "obsolete", "conflict", "not-applicable"]

STATUSES: tuple[Status, ...] = ("applied", "already-present", "conflict", "not-applicable")


@dataclass(frozen=True)
class Op:
    kind: str
    args: dict[str, Any]
    #: where the op is in the overlay file (``/ops/3`` and its line, column), for diagnostics
    pointer: str
    position: tuple[int, int] | None = None


@dataclass(frozen=True)
class Overlay:
    id: str
    title: str
    rfd: str
    status: str
    link: str | None
    protocols: tuple[int, ...]  # empty: every protocol version
    channels: tuple[str, ...]  # empty: stable and unstable
    merged_upstream: str | None
    fallback_description: str | None
    ops: tuple[Op, ...]
    file: str
    sha256: str

    @property
    def slug(self) -> str:
        """``rfd/boolean-config-option`` -> ``boolean-config-option`` (badges, anchors)."""
        return self.id.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Row:
    """What one operation did to one target."""

    index: int  # position of the op in the overlay
    op: str
    target: str  # ``SessionConfigOption``, ``SessionConfigOption#boolean``, ``Foo.bar``
    status: Status
    pointer: str  # where in the schema
    detail: str = ""


@dataclass(frozen=True)
class Report:
    overlay: Overlay
    schema: str  # the schema file the overlay was applied to
    verdict: Verdict
    rows: tuple[Row, ...]
    reason: str = ""  # why the whole overlay did not apply (applies-to)


#: ops with one target: when it is absent the overlay cannot apply here (a list-of-defs
#: op simply skips the defs a release does not have)
SINGLE_TARGET = frozenset(
    {"add_field", "remove_field", "set_field_type", "add_variant", "flatten_union", "add_method", "annotate", "json_patch"}
)


def verdict_of(rows: tuple[Row, ...]) -> Verdict:
    """assert_closed rows only count when they fail: a holding assertion is neither
    "applied" nor "merged". A single-target op whose target is absent makes the whole
    overlay not-applicable (it needs something this release lacks)."""
    if any(r.status == "not-applicable" and r.op in SINGLE_TARGET for r in rows) and not any(r.status == "conflict" for r in rows):
        return "not-applicable"
    counted = [r.status for r in rows if r.status != "not-applicable" and not (r.op == "assert_closed" and r.status != "conflict")]
    if "conflict" in counted:
        return "conflict"
    if not counted:
        return "not-applicable" if all(r.status == "not-applicable" for r in rows) else "obsolete"
    if all(s == "applied" for s in counted):
        return "applies-cleanly"
    if all(s == "already-present" for s in counted):
        return "obsolete"
    return "partially-merged"
