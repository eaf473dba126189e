"""Structure checks of the sibling-union choices on rendered pages (both styles): every
property list (an object's, a variant's, an alternative's) names each member once, and
every alternative's description is on the page."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterator

from acpgen import ir
from acpgen.pages.parse import _Node, _tree
from acpgen.render.docviews import clean_description

_MD_FIELD = re.compile(r"^- \*\*`([^`]+)`\*\*")


def md_lists(text: str) -> Iterator[list[str]]:
    """The member names of every property list of a Markdown page: a heading's block,
    each ``<details>`` block (a variant or an alternative), each without its inner blocks."""
    stack: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.startswith("#"):
            while len(stack) > 1:
                yield stack.pop()
            yield stack.pop()
            stack = [[]]
        elif line.startswith("<details"):
            stack.append([])
        elif line.startswith("</details>"):
            yield stack.pop()
        elif (m := _MD_FIELD.match(line)) is not None:
            stack[-1].append(m.group(1))
    yield from stack


def mdx_lists(text: str) -> Iterator[list[str]]:
    """The member names of every ``<Expandable title="Properties">`` of an MDX page."""

    def walk(node: _Node) -> Iterator[list[str]]:
        if node.tag == "Expandable" and node.attrs.get("title") == '"Properties"':
            yield [(c.attrs.get("name") or "").strip('"') for c in node.nodes() if c.tag == "ResponseField"]
        for child in node.nodes():
            yield from walk(child)

    yield from walk(_tree(text))


def duplicates(text: str, style: str) -> list[tuple[str, int]]:
    """Members listed more than once within one property list: (name, times)."""
    lists = md_lists(text) if style == "md" else mdx_lists(text)
    return [(name, n) for names in lists for name, n in Counter(names).items() if n > 1]


def branch_descriptions(protocol: ir.Protocol) -> set[str]:
    """The description of every branch of a sibling union with several branches (its
    own, else its base def's), as the page must show it."""
    defs = protocol.def_map()
    out: set[str] = set()

    def visit(mixins: tuple[ir.Mixin, ...]) -> None:
        for _, branches in ir.mixin_groups(mixins):
            for b in branches:
                base = defs.get(b.base or "")
                text = clean_description(b.description) or clean_description(getattr(base, "description", None))
                if len(branches) > 1 and text:
                    out.add(text)
                visit(b.mixins)

    for d in protocol.defs:
        if isinstance(d, ir.ObjectDef):
            visit(d.mixins)
        elif isinstance(d, ir.TaggedUnionDef):
            for v in d.variants:
                visit(v.mixins)
    return out
