"""Text filters of the documentation styles: escaping outside code, type texts, bodies.

MDX needs ``{``, ``}``, ``<`` and ``>`` escaped in prose, never inside code spans
or fences (upstream escapes inside code too, defect D4). Plain Markdown needs only
``<`` escaped outside code.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Callable

from acpgen.render.doctypes import TypeText, anchor_of, plain

_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def _outside_code(text: str, fix: Callable[[str], str], heading_escape: bool = False) -> str:
    out: list[str] = []
    fence = False
    buffer: list[str] = []

    def flush() -> None:
        if not buffer:
            return
        chunk = "\n".join(buffer)
        pieces: list[str] = []
        pos = 0
        for m in _SPAN.finditer(chunk):
            pieces.append(fix(chunk[pos : m.start()]))
            pieces.append(m.group(0))
            pos = m.end()
        pieces.append(fix(chunk[pos:]))
        joined = "".join(pieces)
        if heading_escape:
            joined = re.sub(r"^(\s*)#", r"\1\\#", joined, flags=re.M)
        out.append(joined)
        buffer.clear()

    for line in text.split("\n"):
        if _FENCE.match(line):
            if not fence:
                flush()
            fence = not fence
            out.append(line)
            continue
        if fence:
            out.append(line)
        else:
            buffer.append(line)
    flush()
    return "\n".join(out)


def _mdx_fix(chunk: str) -> str:
    return chunk.replace("{", "\\{").replace("}", "\\}").replace("<", "&lt;").replace(">", "&gt;")


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def loosen_lists(text: str) -> str:
    """A blank line before a list that follows a paragraph line (Python-Markdown needs it)."""
    out: list[str] = []
    fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fence = not fence
        if not fence and _LIST_ITEM.match(line) and out and out[-1].strip() and not _LIST_ITEM.match(out[-1]) and not out[-1].startswith((" ", "\t")):
            out.append("")
        out.append(line)
    return "\n".join(out)


def mdx_text(text: str, type_level: bool = False) -> str:
    """Prose for an MDX page; ``type_level`` also escapes lines starting with ``#``
    (Rust ``# Example`` headings inside a type description)."""
    return _outside_code(loosen_lists(text), _mdx_fix, heading_escape=type_level)


def md_text(text: str, type_level: bool = False) -> str:
    return _outside_code(loosen_lists(text), lambda c: c.replace("<", "&lt;"), heading_escape=type_level)


def code(value: str) -> str:
    """An inline code span holding ``value`` literally, whatever backticks it contains."""
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or longest else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def mdx_type(segs: TypeText) -> str:
    """The ``type={...}`` expression of a ResponseField."""
    if len(segs) == 1 and segs[0].anchor:
        return f'<a href="#{segs[0].anchor}">{html.escape(segs[0].text)}</a>'
    if all(s.anchor is None for s in segs):
        return json.dumps(plain(segs))
    parts = []
    for s in segs:
        if s.anchor:
            parts.append(f'<a href="#{s.anchor}">{html.escape(s.text)}</a>')
        else:
            parts.append(f"<span>{html.escape(s.text, quote=False)}</span>")
    return "<>" + "".join(parts) + "</>"


def md_type(segs: TypeText) -> str:
    parts = []
    for s in segs:
        parts.append(f"[{code(s.text)}](#{s.anchor})" if s.anchor else code(s.text))
    return "".join(parts)


def attr(value: str) -> str:
    return html.escape(value, quote=True)


def indent(text: str, first: str = "", rest: str = "") -> str:
    lines = text.split("\n")
    return "\n".join((first if i == 0 else rest) + line if line else "" for i, line in enumerate(lines))


def jsx_list(items: tuple[str, ...]) -> str:
    """``("open", "RFD: x")`` -> ``{["open", "RFD: x"]}`` (a JSX attribute value)."""
    return "{[" + ", ".join(json.dumps(i, ensure_ascii=False) for i in items) + "]}"


DOC_FILTERS: dict[str, Callable[..., Any]] = {
    "jsx_list": jsx_list,
    "mdx_text": mdx_text,
    "md_text": md_text,
    "mdx_type": mdx_type,
    "md_type": md_type,
    "code": code,
    "attr": attr,
    "plain_type": plain,
    "indent_text": indent,
    "anchor": anchor_of,
}
