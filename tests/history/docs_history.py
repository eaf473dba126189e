"""Read the history marks back from a rendered Markdown page, for the history tests."""

from __future__ import annotations

import re

_HEADING = re.compile(r"^#{2,4} `([^`]+)`( method)?$")
_FIELD = re.compile(r"^- \*\*`([^`]+)`\*\*(.*)$")
_KIND = re.compile(r"\*(since|stable since|changed in)\* ((?:\[`[^`]+`\]\([^)]*\)(?:, )?)+)")
_LINK = re.compile(r"\[`([^`]+)`\]\(([^)]*)\)")
_ROW = re.compile(r"^\| `\"(.*)\"` \| (.*) \|$")


def marks_in(text: str) -> list[tuple[str, str, str]]:
    """``(kind, release, href)`` of every mark in ``text``, in order."""
    return [(kind, release, href) for kind, links in _KIND.findall(text) for release, href in _LINK.findall(links)]


def page_marks(md: str) -> dict[str, list[tuple[str, str, str]]]:
    """Element key (``Def``, ``Def.member``, ``Def|value``, ``method:name``) -> its marks,
    for the types and methods of the page and the members and enum values listed directly
    under them (not inside a variant or an alternative)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    owner = ""
    depth = 0
    expect = ""
    for line in md.splitlines():
        if (h := _HEADING.match(line)) is not None:
            owner, depth = h.group(1), 0
            expect = f"method:{owner}" if h.group(2) else owner
            continue
        if line.startswith("<details"):
            depth += 1
        elif line.startswith("</details>"):
            depth -= 1
        elif expect and line.strip():
            if line.startswith("*since*") or line.startswith("*stable since*") or line.startswith("*changed in*"):
                out[expect] = marks_in(line)
            expect = ""
        if depth or not owner:
            continue
        if (f := _FIELD.match(line)) is not None and marks_in(f.group(2)):
            out[f"{owner}.{f.group(1)}"] = marks_in(f.group(2))
        elif (r := _ROW.match(line)) is not None and marks_in(r.group(2)):
            out[f"{owner}|{r.group(1)}"] = marks_in(r.group(2))
    return out


def anchors_of(md: str) -> set[str]:
    return set(re.findall(r'<a id="([^"]+)"></a>', md))
