"""The "Proposed changes" part of a reference page: one block per RFD overlay applied,
with the status of each operation on this schema and links to what it changed.

Items an overlay added or changed carry its badge (``rfds`` on the page's views,
read from ``ir.Origin.overlays``); this module builds the closing section.
"""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir


def rfd_slug(overlay_id: str) -> str:
    """``rfd/boolean-config-option`` -> ``boolean-config-option`` (the badge text)."""
    return overlay_id.rsplit("/", 1)[-1]


def rfds_of(origin: ir.Origin) -> tuple[str, ...]:
    return tuple(rfd_slug(o) for o in origin.overlays)


@dataclass(frozen=True)
class DocChange:
    op: str
    target: str
    status: str
    detail: str
    anchor: str | None


@dataclass(frozen=True)
class DocOverlay:
    slug: str
    overlay: ir.OverlayApplied
    changes: tuple[DocChange, ...]


def _target_anchor(target: str, anchors: dict[str, str]) -> str | None:
    """``Def``, ``Def#tag`` and ``Def.field`` link to the def; a method name to its block."""
    if target in anchors:
        return anchors[target]
    key = target.split("#", 1)[0].split(".", 1)[0]
    return anchors.get(key)


def proposed_changes(protocol: ir.Protocol, anchors: dict[str, str]) -> tuple[DocOverlay, ...]:
    return tuple(
        DocOverlay(rfd_slug(o.id), o, tuple(DocChange(c.op, c.target, c.status, c.detail, _target_anchor(c.target, anchors)) for c in o.changes))
        for o in protocol.overlays
    )
