"""Parse a schema reference page into :mod:`acpgen.pages.model` records.

Reads both the repository form of upstream pages (frontmatter, ``-`` bullets,
Prettier-wrapped JSX) and the docs site's Markdown export (``# Title``, ``*``
bullets, escaped underscores, self-closing anchors), as well as acpgen's own
MDX and plain-Markdown output.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

from acpgen.pages.model import Page, PageField, PageMethod, PageType, PageVariant

SECTIONS = ("Agent", "Client", "Protocol Level")
#: acpgen's closing section on overlaid pages: a status report, not schema types
NOT_TYPES = ("Proposed changes",)
CONSTRAINT_KEYS = (
    "Default",
    "Minimum",
    "Maximum",
    "Min length",
    "Max length",
    "Min items",
    "Max items",
    "Pattern",
    "Format",
    "Content encoding",
    "Content media type",
)

_HEADING = re.compile(r"^(#{1,4})\s+(.*?)\s*$")
_SPAN = re.compile(r'^<span class="font-mono">(.*)</span>$')
_ANCHOR = re.compile(r'^<a id="([^"]+)"\s*(?:/>|></a>)\s*$')
_TAG = re.compile(r"<(/?)(ResponseField|Expandable)\b")
_BULLET = re.compile(r"^[-*]\s+(" + "|".join(CONSTRAINT_KEYS) + r"):\s*(.*)$")
_ROW = re.compile(r"^\|\s*(" + "|".join(CONSTRAINT_KEYS) + r")\s*\|\s*(.*?)\s*\|$")
_HREF = re.compile(r'href="#([^"]*)"|\]\(#([^)]*)\)')
_MARKUP = re.compile(r"<[^>]*>")


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[_Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c for c in self.children if isinstance(c, str))

    def nodes(self) -> list[_Node]:
        return [c for c in self.children if isinstance(c, _Node)]


def unescape(text: str) -> str:
    return re.sub(r"\\([_\\#|{}\[\]*<>`])", r"\1", text)


def slug(heading: str) -> str:
    text = _MARKUP.sub("", unescape(heading)).strip().lower().replace(" ", "-")
    return re.sub(r"[^a-z0-9_\-$]", "", text)


def _clean(raw: str) -> str:
    """Visible heading text: markup removed, export escapes undone."""
    match = _SPAN.match(raw.strip())
    return unescape(match.group(1) if match else raw).strip()


def type_text(expr: str) -> str:
    """What a reader sees for a ``type={...}`` / ``type="..."`` attribute."""
    expr = expr.strip()
    if expr.startswith('"') and expr.endswith('"'):
        try:
            value = json.loads(expr)
        except ValueError:
            value = None
        if isinstance(value, str) or "<" not in expr:
            return " ".join(html.unescape(str(value if value is not None else expr.strip('"'))).split())
    pieces = [p for p in _MARKUP.split(expr) if p.strip()]
    text = html.unescape("".join(pieces).replace('"', ""))
    text = re.sub(r"\s*\|\s*", " | ", text)
    return " ".join(text.split())


def _read_attrs(text: str, pos: int) -> tuple[dict[str, str | None], int, bool]:
    attrs: dict[str, str | None] = {}
    n = len(text)
    while pos < n:
        while pos < n and text[pos].isspace():
            pos += 1
        if text.startswith("/>", pos):
            return attrs, pos + 2, True
        if pos < n and text[pos] == ">":
            return attrs, pos + 1, False
        match = re.compile(r"[A-Za-z_][\w-]*").match(text, pos)
        if not match:
            raise ValueError(f"bad attribute at offset {pos}")
        name, pos = match.group(0), match.end()
        if pos < n and text[pos] == "=":
            pos += 1
            if pos >= n:
                break
            if text[pos] == '"':
                end = text.index('"', pos + 1)
                attrs[name] = text[pos : end + 1]
                pos = end + 1
            elif text[pos] == "{":
                depth, i, quote = 0, pos, False
                while i < n:
                    ch = text[i]
                    if ch == '"':
                        quote = not quote
                    elif not quote and ch == "{":
                        depth += 1
                    elif not quote and ch == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    i += 1
                attrs[name] = text[pos + 1 : i]
                pos = i + 1
            else:
                raise ValueError(f"bad attribute value at offset {pos}")
        else:
            attrs[name] = None
    raise ValueError("unterminated tag")


def _tree(text: str) -> _Node:
    root = _Node("root", {})
    stack = [root]
    pos = 0
    for match in _TAG.finditer(text):
        if match.start() < pos:
            continue
        stack[-1].children.append(text[pos : match.start()])
        closing, tag = match.group(1) == "/", match.group(2)
        if closing:
            pos = text.index(">", match.end()) + 1
            if len(stack) > 1 and stack[-1].tag == tag:
                stack.pop()
            continue
        attrs, pos, self_closing = _read_attrs(text, match.end())
        node = _Node(tag, attrs)
        stack[-1].children.append(node)
        if not self_closing:
            stack.append(node)
    stack[-1].children.append(text[pos:])
    return root


def _split_notes(text: str) -> tuple[str, list[tuple[str, str]]]:
    """Separate constraint bullets/tables from prose; returns (prose, constraints)."""
    prose: list[str] = []
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        stripped = line.strip()
        bullet = _BULLET.match(stripped) or _ROW.match(stripped)
        if bullet:
            found.append((bullet.group(1), bullet.group(2).strip().strip("`")))
        elif re.match(r"^\|[\s\-|]*\|$", stripped) or re.match(r"^\|\s*Constraint\s*\|", stripped):
            continue
        else:
            prose.append(stripped)
    return _prose("\n".join(prose)), found


def _prose(text: str) -> str:
    text = text.replace('{""}', "")
    lines = [re.sub(r"^\*\s", "- ", ln.strip()) for ln in text.strip().splitlines()]
    return unescape("\n".join(lines)).strip()


def _field(node: _Node) -> PageField:
    raw_type = node.attrs.get("type") or ""
    prose, notes = _split_notes(node.text())
    default = next((v for k, v in notes if k == "Default"), None)
    return PageField(
        name=type_text(node.attrs.get("name") or '""'),
        type=type_text(raw_type) if raw_type else "",
        required="required" in node.attrs,
        description=prose,
        default=default,
        constraints=tuple((k, v) for k, v in notes if k != "Default"),
        links=tuple(a or b for a, b in _HREF.findall(raw_type)),
    )


def _variant(node: _Node) -> PageVariant:
    fields: list[PageField] = []
    for child in node.nodes():
        # acpgen's sibling-union choices sit in an `alternatives` expandable: not fields
        if child.tag == "Expandable" and child.attrs.get("title") != '"alternatives"':
            fields.extend(_field(f) for f in child.nodes() if f.tag == "ResponseField")
    attr = node.attrs.get("type")
    return PageVariant(
        label=type_text(node.attrs.get("name") or '""'),
        attr=type_text(attr) if attr is not None else None,
        description=_prose(node.text()),
        fields=tuple(fields),
    )


def _type_block(name: str, body: str, section: str, method: str) -> PageType:
    head, sep, rest = body.partition("**Type:**")
    description = _prose(head)
    if not sep:
        return PageType(name, "", section, method, description=description)
    kind_line, _, rest = rest.partition("\n")
    kind_text = kind_line.strip()
    if kind_text.startswith("`"):
        _, notes = _split_notes(rest)
        inline = re.findall(r"\*\*(" + "|".join(CONSTRAINT_KEYS) + r"):\*\*\s*`([^`]*)`", rest)
        constraints = tuple(notes) + tuple((k, v) for k, v in inline)
        return PageType(name, "simple", section, method, kind_text.strip("`"), description, constraints=constraints)
    if kind_text == "Enumeration":
        values = tuple(json.loads(v) for v in re.findall(r"^\|\s*`(\".*\")`\s*\|", rest, re.M))
        return PageType(name, "Enumeration", section, method, description=description, values=values)
    tree = _tree(rest)
    fields: list[PageField] = []
    shared: list[PageField] = []
    variants: list[PageVariant] = []
    mode = "fields" if kind_text == "Object" else "variants"
    for child in tree.children:
        if isinstance(child, str):
            if "**Shared properties:**" in child:
                mode = "shared"
            if "**Variants:**" in child:
                mode = "variants"
            continue
        if child.tag != "ResponseField":
            continue
        if mode == "fields":
            fields.append(_field(child))
        elif mode == "shared":
            shared.append(_field(child))
        else:
            variants.append(_variant(child))
    return PageType(
        name,
        kind_text,
        section,
        method,
        description=description,
        fields=tuple(fields),
        shared=tuple(shared),
        variants=tuple(variants),
    )


def _front(lines: list[str]) -> tuple[str, str, int]:
    if lines and lines[0].strip() == "---":
        meta: dict[str, str] = {}
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                return meta.get("title", ""), meta.get("description", ""), i + 1
            key, _, value = lines[i].partition(":")
            meta[key.strip()] = value.strip().strip('"')
    title = description = ""
    start = 0
    for i, line in enumerate(lines[:6]):
        if line.startswith("# ") and not title:
            title, start = line[2:].strip(), i + 1
        elif line.startswith("> ") and title and not description:
            description, start = line[2:].strip(), i + 1
    return title, description, start


def parse_page(text: str) -> Page:
    lines = text.splitlines()
    title, description, start = _front(lines)
    anchors: set[str] = set()
    sections: list[str] = []
    methods: list[PageMethod] = []
    types: list[PageType] = []
    # split into blocks at headings of level 2..4, outside code fences
    blocks: list[tuple[int, str, list[str]]] = []
    fence = False
    pending_anchor = ""
    for line in lines[start:]:
        if line.strip().startswith("```"):
            fence = not fence
        heading = None if fence else _HEADING.match(line)
        anchor = None if fence else _ANCHOR.match(line.strip())
        if anchor:
            anchors.add(anchor.group(1))
            pending_anchor = anchor.group(1)
            continue
        if heading and len(heading.group(1)) >= 2:
            anchors.add(slug(heading.group(2)))
            blocks.append((len(heading.group(1)), heading.group(2) + "\x00" + pending_anchor, []))
            pending_anchor = ""
            continue
        if blocks:
            blocks[-1][2].append(line)
    section = ""
    current: dict[str, object] | None = None
    method_rows: list[dict[str, object]] = []
    skipping = False
    for level, raw, body_lines in blocks:
        head, _, explicit = raw.partition("\x00")
        name = _clean(head)
        body = "\n".join(body_lines)
        if level == 2:
            skipping = name in NOT_TYPES and not _SPAN.match(head.strip())
        if skipping:
            continue
        if level == 2 and name in SECTIONS and not _SPAN.match(head.strip()):
            section, current = name, None
            sections.append(name)
        elif level == 2:
            section, current = "", None
            types.append(_type_block(name, body, "", ""))
        elif level == 3 and section:
            current = {"name": name, "section": section, "anchor": explicit or slug(head), "body": body, "types": []}
            method_rows.append(current)
        elif level == 4 and current is not None:
            typed = current["types"]
            assert isinstance(typed, list)
            typed.append(name)
            types.append(_type_block(name, body, section, str(current["name"])))
    for row in method_rows:
        methods.append(
            PageMethod(
                name=str(row["name"]),
                section=str(row["section"]),
                anchor=str(row["anchor"]),
                description=_prose(str(row["body"])),
                types=tuple(row["types"]),  # type: ignore[arg-type]
            )
        )
    if not types and not methods:
        raise ValueError("no type or method headings")
    links = tuple(a or b for a, b in _HREF.findall(text))
    return Page(title, description, tuple(sections), tuple(methods), tuple(types), frozenset(anchors), links)
