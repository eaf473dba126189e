"""The view of a tree's changes page: one section per release (newest first), each with
what ``acpgen diff`` reports against the release before it, for the tree's files (the
same records as ``acpgen changelog``). The history marks link to these sections."""

from __future__ import annotations

from dataclasses import dataclass

from acpgen.diff.report import HEADINGS, summary
from acpgen.history.model import History

#: info records of one rule beyond this many are folded
COLLAPSE = 12


@dataclass(frozen=True)
class ChangeLine:
    subject: str
    message: str
    rule: str
    breaks: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True)
class ChangeGroup:
    heading: str
    level: str
    lines: tuple[ChangeLine, ...]
    #: one rule's info records, folded under one summary line
    folded: str = ""


@dataclass(frozen=True)
class ChangeFile:
    title: str
    groups: tuple[ChangeGroup, ...]


@dataclass(frozen=True)
class ChangeSection:
    name: str
    anchor: str
    previous: str | None
    summary: str
    files: tuple[ChangeFile, ...]


@dataclass(frozen=True)
class ChangesPage:
    tree: str
    header: str
    sections: tuple[ChangeSection, ...]

    @property
    def title(self) -> str:
        return f"Changes {self.tree}"


def _subject(subject: str, variant: str | None) -> str:
    return f"{subject} ({variant})" if variant else subject


def _groups(changes: list[object]) -> tuple[ChangeGroup, ...]:
    from acpgen.diff import Change

    out: list[ChangeGroup] = []
    for level in ("error", "warning", "info"):
        mine = [c for c in changes if isinstance(c, Change) and c.level == level]
        by_rule: dict[str, list[Change]] = {}
        for c in mine:
            by_rule.setdefault(c.rule, []).append(c)
        for rule, items in by_rule.items():
            lines = tuple(ChangeLine(_subject(c.subject, c.variant), c.message, c.rule, c.breaks, c.note) for c in items)
            folded = f"{len(items)} × {rule}" if level == "info" and len(items) > COLLAPSE else ""
            out.append(ChangeGroup(HEADINGS[level], level, lines, folded))
    return tuple(out)


def changes_page(history: History, tree: str, header: str) -> ChangesPage:
    sections: list[ChangeSection] = []
    for step in reversed(history.steps):
        mine = [c for c in step.changes if c.file.split("/")[0] == tree]
        files = []
        for name in sorted({c.file for c in mine}, key=lambda f: (f.endswith(".unstable.json"), f)):
            kind = "unstable" if name.endswith(".unstable.json") else "stable"
            files.append(ChangeFile(f"{tree} {kind} (`{name}`)", _groups([c for c in mine if c.file == name])))
        text = summary(mine) if step.previous is not None else "the oldest release read: what it has is not marked"
        sections.append(ChangeSection(step.name, step.anchor, step.previous, text, tuple(files)))
    return ChangesPage(tree, header, tuple(sections))
