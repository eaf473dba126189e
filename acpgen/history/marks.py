"""History marks of one page (a schema file: tree and stability), by element key.

* ``since R``: R starts the element's current run of releases in the tree (stable or
  unstable file); an element removed and added again is marked since it came back, and
  a renamed one since its new name appeared (its old name is on the changes page).
* ``stable since R``: R starts its current run in the tree's stable file, after the
  element first appeared in the unstable one.
* ``changed in R``: ``acpgen diff`` classed a change of it in the page's file at R as an
  error or a warning, of a kind a peer notices (type, required, opened/closed).

An element present in the oldest release read gets no ``since`` (it may be older). A
member, variant or enum value is not marked ``since`` (or ``stable since``) the release its
def is marked with: it came with the def, which says so once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from acpgen.history.elements import def_key, member_key, method_key, variant_key

if TYPE_CHECKING:
    from acpgen.diff import Change
    from acpgen.history.model import History

#: the kinds of change a "changed in" mark is for (at level error or warning)
CHANGED_KINDS = frozenset(
    {"type-changed", "field-now-required", "field-now-optional", "enum-opened", "enum-closed", "union-opened", "union-closed"}
)


@dataclass(frozen=True)
class Mark:
    kind: str  # "since" | "stable since" | "changed in"
    release: str
    #: the link to the release's section of the tree's changes page, relative to the page
    href: str

    @property
    def text(self) -> str:
        return f"{self.kind} {self.release}"


def change_key(c: "Change") -> str:
    if c.rule.startswith("method-"):
        return method_key(c.subject)
    owner, dot, member = c.subject.partition(".")
    if c.variant is not None:
        return variant_key(owner, c.variant)
    return member_key(owner, member) if dot else def_key(c.subject)


def _run_start(present: list[bool]) -> int | None:
    """The index where the last run of ``True`` starts, when it reaches the end."""
    if not present or not present[-1]:
        return None
    i = len(present) - 1
    while i > 0 and present[i - 1]:
        i -= 1
    return i


def page_marks(history: "History", tree: str, stability: str, changes_href: str) -> dict[str, tuple[Mark, ...]]:
    """Every element of the newest release's file (``tree``, ``stability``) -> its marks."""
    stable_file = f"{tree}/schema.json"
    unstable_file = f"{tree}/schema.unstable.json"
    page_file = stable_file if stability == "stable" else unstable_file
    steps = history.steps
    if not steps or page_file not in steps[-1].files:
        return {}
    changed: dict[str, list[int]] = {}
    for i, s in enumerate(steps):
        for c in s.changes:
            if c.file == page_file and c.level in ("error", "warning") and c.kind in CHANGED_KINDS:
                at = changed.setdefault(change_key(c), [])
                if not at or at[-1] != i:
                    at.append(i)

    def mark(kind: str, i: int) -> Mark:
        return Mark(kind, steps[i].name, f"{changes_href}#{steps[i].anchor}")

    out: dict[str, tuple[Mark, ...]] = {}
    empty: frozenset[str] = frozenset()
    for key in steps[-1].files[page_file]:
        anywhere = [key in s.files.get(stable_file, empty) or key in s.files.get(unstable_file, empty) for s in steps]
        since = _run_start(anywhere)
        if since is None:
            continue
        marks = [mark("since", since)] if since > 0 else []
        stable = _run_start([key in s.files.get(stable_file, empty) for s in steps])
        if stable is not None and stable > since:
            marks.append(mark("stable since", stable))
        marks += [mark("changed in", i) for i in changed.get(key, ()) if i > since]
        if marks:
            out[key] = tuple(marks)
    for key, found in list(out.items()):
        owner = _owner(key)
        if owner is None:
            continue
        same = {(m.kind, m.release) for m in out.get(owner, ()) if m.kind != "changed in"}
        kept = tuple(m for m in found if m.kind == "changed in" or (m.kind, m.release) not in same)
        if kept:
            out[key] = kept
        else:
            del out[key]
    return out


def _owner(key: str) -> str | None:
    """The def a member (``Def.member``) or variant (``Def|tag``) key belongs to."""
    if key.startswith("method:"):
        return None
    for sep in ("|", "."):
        if sep in key:
            return key.split(sep, 1)[0]
    return None
