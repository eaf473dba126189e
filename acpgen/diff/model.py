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
    #: why the record got its level (``--explain``, ``"why"`` in JSON): the rule's own
    #: level and whom it hits, the side(s) that send the type, the gate, the leniency mark
    why: tuple[tuple[str, str], ...] = ()

    def sort_key(self) -> tuple[Any, ...]:
        return (self.file, rank(self.level), self.subject, self.variant or "", self.rule, self.old or "", self.new or "")

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["breaks"] = list(self.breaks)
        out["why"] = dict(self.why)
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
    sent_by: frozenset[str] | None = None,
) -> Change:
    r = BY_ID[rule]
    final = r.level if level is None or rank(level) < rank(r.level) else level
    why: list[tuple[str, str]] = [("rule", f"{r.id}: {r.level} unless lowered; breaks {_HITS[r.hits]}")]
    if sent_by is not None:
        why.append(("sent_by", ", ".join(sorted(sent_by))))
    if note:
        why.append((_why_key(note), note))
    if final != r.level:
        why.append(("level", f"{final}, lowered from the rule's {r.level} by the {_why_key(note or '')} above"))
    return Change(
        file=file,
        rule=rule,
        kind=r.kind,
        level=final,
        code=r.code,
        subject=subject,
        # an info record breaks nobody, whatever the rule would break at its own level
        breaks=tuple(sorted(breaks)) if r.hits != "none" and final != "info" else (),
        message=message,
        variant=variant,
        old=old,
        new=new,
        note=note,
        why=tuple(why),
    )


_HITS = {
    "senders": "the sides that send the type",
    "receivers": "the sides that receive the type",
    "both": "both sides",
    "callers": "the callers",
    "implementers": "the implementers",
    "advertisers": "the side that advertised the capability",
    "as-added": "whom adding it to the stable file would break",
    "none": "nobody",
}


def _why_key(note: str) -> str:
    """What kind of reason a note gives: a gate, a leniency mark, or something else."""
    if "gate" in note:
        return "gate"
    if "lenien" in note:
        return "leniency"
    if "stable file" in note:
        return "stable"
    return "reason"
