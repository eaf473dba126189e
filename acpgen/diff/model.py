"""What ``acpgen diff`` reports: one :class:`Change` per change, in a documented shape."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from acpgen.diff.rules import BY_ID, Level, rank

#: the version of the ``--format json`` document; bumped on any incompatible change
JSON_VERSION = 1


@dataclass(frozen=True)
class Change:
    #: the schema file, by tree and stability: ``v1/schema.json``, ``v2/schema.unstable.json``
    file: str
    #: the rule id (``acpgen diff --rules``)
    rule: str
    #: what happened (``field-added``, ``renamed``, ``type-changed`` ...)
    kind: str
    #: the verdict on the wire: ``error`` definite break, ``warning`` possible break, ``info``
    level: Level
    #: the verdict on the generated Python (imports, attribute and class names, annotations)
    code: Level
    #: ``session/new`` (method), ``Def`` (def), ``Def.wireName`` (member), ``Old -> New`` (rename)
    subject: str
    #: the sides whose existing implementations this breaks: ``agent``, ``client``
    breaks: tuple[str, ...]
    message: str
    #: for a variant, its tag (or title) in the union named by ``subject``
    variant: str | None = None
    old: str | None = None
    new: str | None = None
    #: why the level is below the rule's: a gating capability, a leniency mark
    note: str | None = None

    def sort_key(self) -> tuple[Any, ...]:
        return (self.file, rank(self.level), self.subject, self.variant or "", self.rule, self.old or "", self.new or "")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["breaks"] = list(self.breaks)
        return out

    @property
    def stable(self) -> bool:
        return not self.file.endswith(".unstable.json")


def make(
    file: str,
    rule: str,
    subject: str,
    message: str,
    breaks: frozenset[str] | tuple[str, ...] = (),
    *,
    variant: str | None = None,
    old: str | None = None,
    new: str | None = None,
    note: str | None = None,
    level: Level | None = None,
) -> Change:
    r = BY_ID[rule]
    final = r.level if level is None or rank(level) < rank(r.level) else level
    return Change(
        file=file,
        rule=rule,
        kind=r.kind,
        level=final,
        code=r.code,
        subject=subject,
        breaks=tuple(sorted(breaks)) if r.hits != "none" else (),
        message=message,
        variant=variant,
        old=old,
        new=new,
        note=note,
    )
