"""Black-stable layout of rendered Python, so that black rarely has to run.

The templates print black's layout for everything short; what this module adds is the
layout of statements longer than the line length, which only the renderer's data (long
annotations, argument lists, descriptions) produces. A long line is split the way black
splits it (at the value's last bracket, inside the annotation, or with the value in
parentheses; arguments on one line when they fit there, else one per line with a magic
trailing comma), so that the output is a fixed point of black.

Only shapes whose black layout is certain are split here; any other long line is handed
back as *pending* (the line alone when it is a self-contained statement or element, else
its whole top-level statement), and ``acpgen.format`` runs black on just that.
``tests/test_layout.py`` checks each shape against black, every fixture, bundled and
sampled corpus module for black-stability, and counts how often black was needed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

LINE_LENGTH = 88
INDENT = "    "

_TOKEN = re.compile(
    r'[rRbBuUfF]{0,2}(?:"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*')"
    r"|#[^\n]*|[()\[\]{}]|\n",
    re.S,
)
_OPENERS = {"(": ")", "[": "]", "{": "}"}
#: a statement whose right-hand side is one call / subscript / display: ``x: T = f(``
_STATEMENT_HEAD = re.compile(r"(?:[A-Za-z_][\w.]*(?:: [^=#]+)? = )?[A-Za-z_][\w.]*[(\[]|[A-Za-z_]\w*(?:: [^=#]+)? = [(\[{]")
#: an element inside brackets: ``name=f(``, ``f[``, ``(``
_ELEMENT_HEAD = re.compile(r'(?:[A-Za-z_]\w*=|"(?:[^"\\]|\\.)*": )?(?:[A-Za-z_][\w.]*)?[(\[{]')
#: ``name`` or ``name: `` at the start of a statement
_TARGET = re.compile(r"([A-Za-z_]\w*)(: )?")
#: on masked text: one call / one subscript and nothing after it
_CALL = re.compile(r"[A-Za-z_][\w.]*\(\0*\)")
_SUBSCRIPT = re.compile(r"([A-Za-z_][\w.]*)\[\0*\]")
#: what black cannot split: one string, name or number, optionally as a keyword argument
_ATOM = re.compile(r'(?:[A-Za-z_]\w*=)?(?:"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[\w.]+)')


@dataclass(frozen=True)
class Pending:
    """Lines ``start:end`` of the laid-out text that black has to format: a whole top-level
    statement (``indent`` 0), or one self-contained statement line nested ``indent`` columns
    deep, which black formats dedented with the line length reduced by as much."""

    start: int
    end: int
    indent: int
    #: "(" or "{" for one element line of a bracket the template split (black formats it
    #: as the element of a call / dict of its own); "" for a statement
    element: str = ""


@dataclass(frozen=True)
class Laid:
    """The laid-out module, and the statements black still has to format."""

    text: str
    pending: tuple[Pending, ...]


def py_str(value: str) -> str:
    """A string literal as black writes it: double quotes unless single ones escape less."""
    dumped = json.dumps(value, ensure_ascii=False)
    if value.count('"') <= value.count("'"):
        return dumped
    body = dumped[1:-1].replace('\\"', '"').replace("'", "\\'")
    return f"'{body}'"


def lay_out(text: str) -> Laid:
    lines = text.split("\n")
    depths, in_string = _scan(text, len(lines))
    out: list[str] = []
    pending: list[Pending] = []
    for begin, end in _statements(lines, depths, in_string):
        chunk: list[str] = []
        own: list[Pending] = []
        whole = False
        for i in range(begin, end):
            line = lines[i]
            if len(line) <= LINE_LENGTH or in_string[i] or line.lstrip().startswith(("#", '"""')):
                chunk.append(line)
                continue
            stripped = line.lstrip(" ")
            indent = line[: len(line) - len(stripped)]
            depth = depths[i]
            if depth != depths[i + 1] or _brackets(stripped) is None:
                whole = True  # brackets spanning lines, or a comment: only black knows
                break
            split = _explode(stripped, indent, inside=True) if depth else _statement(stripped, indent)
            if split is not None:
                chunk.extend(split)
                continue
            at = len(out) + len(chunk)
            if depth == 0 and not line.endswith(":"):
                own.append(Pending(at, at + 1, len(indent)))
            elif depth > 0 and line.endswith(","):
                own.append(Pending(at, at + 1, len(indent), "{" if ":" in _mask(stripped) else "("))
            else:
                whole = True
                break
            chunk.append(line)
        if whole:
            pending.append(Pending(len(out), len(out) + end - begin, 0))
            out.extend(lines[begin:end])
        else:
            pending.extend(own)
            out.extend(chunk)
    return Laid("\n".join(out), tuple(pending))


def _scan(text: str, count: int) -> tuple[list[int], list[bool]]:
    """Bracket depth at the start of every line, and whether it starts inside a string."""
    depths = [0] * (count + 2)
    in_string = [False] * (count + 2)
    depth = 0
    line = 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok == "\n":
            line += 1
            depths[line] = depth
        elif tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
        elif "\n" in tok and tok[0] != "#":
            for _ in range(tok.count("\n")):
                line += 1
                depths[line] = depth
                in_string[line] = True
    return depths, in_string


def _statements(lines: list[str], depths: list[int], in_string: list[bool]) -> list[tuple[int, int]]:
    """Top-level statements as line ranges: a column-0 line outside brackets and strings
    starts one; the decorators above a definition belong to it."""
    bounds = [0]
    for i, line in enumerate(lines):
        if i and line and line[0] not in " \t" and depths[i] == 0 and not in_string[i]:
            if not lines[i - 1].startswith("@"):
                bounds.append(i)
    bounds.append(len(lines))
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if a < b]


def _statement(s: str, indent: str) -> list[str] | None:
    """``name: annotation = value`` (either part optional) the way black splits it:
    black first tries the value's last bracket, then the annotation, then parentheses
    around the value, depending on which first line fits."""
    m = _TARGET.match(s)
    if m is None:
        return _explode(s, indent, inside=False)
    name, annot = m.group(1), None
    masked = _mask(s)
    eq = masked.find(" = ", m.end())
    if m.group(2):
        annot = s[m.end() : eq if eq >= 0 else len(s)]
    elif eq != m.end():
        return _explode(s, indent, inside=False)
    value = s[eq + 3 :] if eq >= 0 else None
    if value is None:
        if annot is None:
            return None
        if annot[0] in "\"'" and _ATOM.fullmatch(annot):
            # a string annotation: in parentheses when it then fits, else left as it is
            inner = indent + INDENT + annot
            return [f"{indent}{name}: (", inner, indent + ")"] if _fits(inner) else [indent + s]
        return _annotation(name, annot, indent, "", single_ok=True)
    lhs = s[:eq]
    vmask = masked[eq + 3 :]
    if "|" in vmask:
        return _operands_in_parens(indent + lhs + " = ", value, indent, "")
    if annot is not None and _ATOM.fullmatch(value) and not _fits(f"{indent}{lhs} = ("):
        return _annotation(name, annot, indent, " = " + value)  # ``x: long | union = None``
    if _CALL.fullmatch(vmask) is None or annot is None:
        return _explode(s, indent, inside=False)
    callee = value[: value.index("(")]
    oop_head = f"{indent}{lhs} = {callee}("
    # black wraps every annotation in invisible parentheses, so "the left side has
    # brackets" always holds: the value keeps its own split only if that fits
    prefer_oop = not _fits(f"{indent}{lhs} = (") or _fits(oop_head)
    if not prefer_oop:
        body = _element_lines(value, indent + INDENT, comma=False)
        return None if body is None else [f"{indent}{lhs} = (", *body, indent + ")"]
    if _fits(oop_head):
        return _explode(s, indent, inside=False)
    if _fits(indent + " = " + value):
        return _annotation(name, annot, indent, " = " + value)
    head = _annotation(name, annot, indent, f" = {callee}(")
    parts = _parts(value[len(callee) + 1 : -1])
    body = None if parts is None else _body_lines(parts, indent + INDENT, trailer=True)
    return None if head is None or body is None else [*head, *body, indent + ")"]


def _annotation(name: str, annot: str, indent: str, tail: str, single_ok: bool = False) -> list[str] | None:
    """``name: annotation`` split inside the annotation, ``tail`` after its closing bracket."""
    masked = _mask(annot)
    if "|" in masked:
        return _operands_in_parens(f"{indent}{name}: ", annot, indent, tail)
    sub = _SUBSCRIPT.fullmatch(masked)
    if sub is None or not _fits(indent + "]" + tail):
        return None
    parts = _parts(annot[sub.end(1) + 1 : -1])
    if parts is None or (len(parts) == 1 and not single_ok and not _fits(indent + INDENT + parts[0])):
        return None
    body = _body_lines(parts, indent + INDENT, trailer=True)
    head = f"{indent}{name}: {annot[: sub.end(1) + 1]}"
    return None if body is None or not _fits(head) else [head, *body, indent + "]" + tail]


def _operands_in_parens(head: str, expr: str, indent: str, tail: str) -> list[str] | None:
    """``a | b | c`` in black's optional parentheses: on one line, or one operand per line."""
    ops = _operator_positions(_mask(expr))
    if not ops or (len(ops) == 1 and expr[-1] in ")}"):
        return None
    inner = indent + INDENT
    first, closing = head + "(", indent + ")" + tail
    if not _fits(first) or not _fits(closing):
        return None
    if _fits(inner + expr):
        return [first, inner + expr, closing]
    body = _operand_lines(expr, ops, inner, "")
    return None if body is None else [first, *body, closing]


def _operand_lines(expr: str, ops: list[int], inner: str, comma: str) -> list[str] | None:
    bounds = [0, *ops, len(expr)]
    lines = []
    for k, (a, b) in enumerate(zip(bounds, bounds[1:])):
        line = inner + expr[a:b].strip() + (comma if k == len(ops) else "")
        if not _fits(line):
            return None
        lines.append(line)
    return lines


def _operator_positions(masked: str) -> list[int] | None:
    """Positions of the top-level ``|`` of an expression; None when it has other operators."""
    if re.search(r"\b(lambda|if|else|for|and|or|not|in|is)\b|[-+*/%<>&^~@=!]", masked):
        return None
    return [i for i, c in enumerate(masked) if c == "|"]


def _body_lines(parts: list[str], inner: str, trailer: bool) -> list[str] | None:
    """The inside of a split bracket: one line when it fits (calls and subscripts), else one
    element per line with a magic trailing comma."""
    joined = ", ".join(parts)
    if trailer and _fits(inner + joined):
        return [inner + joined]
    if len(parts) == 1:
        return [inner + parts[0]] if _ATOM.fullmatch(parts[0]) else None
    return _elements(parts, inner)


def _elements(parts: list[str], inner: str) -> list[str] | None:
    """One element per line (or per laid-out block), each with its comma."""
    out: list[str] = []
    for part in parts:
        lines = _element_lines(part, inner, comma=True)
        if lines is None:
            return None
        out.extend(lines)
    return out


def _element_lines(part: str, inner: str, comma: bool) -> list[str] | None:
    element = part + ("," if comma else "")
    if _fits(inner + element) or _ATOM.fullmatch(part):
        return [inner + element]
    masked = _mask(part)
    if "|" in masked:
        ops = _operator_positions(masked)
        return None if not ops else _operand_lines(part, ops, inner, "," if comma else "")
    return _explode(element, inner, inside=True, nested=not comma)


def _fits(line: str) -> bool:
    return len(line) <= LINE_LENGTH


def _mask(s: str) -> str:
    """``s`` with strings and everything inside brackets blanked to NULs (same length), so
    that what is left is the top level of the expression. One pass over the tokens (strings,
    comments, brackets, newlines): the text between two tokens is kept at depth 0 and
    blanked inside brackets; an outermost bracket itself is kept."""
    out: list[str] = []
    pos = depth = 0
    for m in _TOKEN.finditer(s):
        start, end = m.span()
        if start > pos:
            out.append("\0" * (start - pos) if depth > 0 else s[pos:start])
        token = m.group()
        if len(token) == 1 and token in "()[]{}":
            if token in ")]}":
                depth -= 1
            out.append("\0" if depth > 0 else token)
            if token in "([{":
                depth += 1
        else:
            out.append("\0" * (end - start))
        pos = end
    if pos < len(s):
        out.append("\0" * (len(s) - pos) if depth > 0 else s[pos:])
    return "".join(out)


def _parts(body: str) -> list[str] | None:
    """The top-level comma-separated parts of a bracket's body; None when one is empty
    (empty brackets, a trailing comma already there) or lambda parameters are in play."""
    masked = _mask(body)
    cuts = [-1, *(i for i, c in enumerate(masked) if c == ","), len(body)]
    parts = [body[a + 1 : b].strip() for a, b in zip(cuts, cuts[1:])]
    if any(not p for p in parts) or re.search(r"\blambda\s+[^:\s]", masked):
        return None
    return parts


def _explode(s: str, indent: str, inside: bool, nested: bool = False) -> list[str] | None:
    """Split at the last bracket pair. ``nested``: ``s`` is the only content of a bracket
    black already split (the value in ``x = (...)``), so it has no trailing comma."""
    marks = _brackets(s)
    if marks is None:
        return None
    tail = ""
    body_end = len(s)
    if inside and not nested and s.endswith(","):
        tail, body_end = ",", len(s) - 1
    close = body_end - 1
    if close < 0 or s[close] not in ")]}" or close not in marks:
        return None
    open_ = marks[close]
    head = s[: open_ + 1]
    # a statement's head is read with its strings and bracket contents masked: an
    # annotation may hold keywords (``Annotated[int, Field(ge=0)]``) and strings
    if not (_ELEMENT_HEAD.fullmatch(head) if inside else _STATEMENT_HEAD.fullmatch(_mask(head))):
        return None
    if not _fits(indent + head):
        return None
    trailer = open_ > 0 and (s[open_ - 1].isalnum() or s[open_ - 1] in "_)]")
    inside_text = s[open_ + 1 : close]
    parts = _parts(inside_text)
    magic = False
    if parts is None and not trailer and inside_text.endswith(",") and not inside_text.endswith(",,"):
        # a display ending in a comma (a one-tuple ``(x,)``): once split, black puts each
        # element on its own line with its comma
        parts = _parts(inside_text[:-1])
        magic = parts is not None
    if parts is None:
        return None  # empty brackets, or a trailing comma already there
    inner = indent + INDENT
    if magic:
        lines = _elements(parts, inner)
        return None if lines is None else [indent + head, *lines, indent + s[close] + tail]
    if len(parts) == 1 and not (trailer and s[open_] == "("):
        return None  # black's choice for one long subscript or display depends on more
    if len(parts) == 1 and not _fits(inner + parts[0]) and parts[0][0] in "([{" and _is_display(parts[0]):
        # a call's sole argument that is a tuple, list or dict too long for its line: on a
        # line of its own, split in turn, with no comma after it (``f(\n    (\n        a,``)
        alone = _explode(parts[0], inner, inside=True, nested=True)
        return None if alone is None else [indent + head, *alone, indent + s[close] + tail]
    body = _body_lines(parts, inner, trailer=trailer)
    return None if body is None else [indent + head, *body, indent + s[close] + tail]


def _is_display(s: str) -> bool:
    """``s`` is one bracketed display (its first bracket closes at its last character)."""
    marks = _brackets(s)
    return marks is not None and marks.get(len(s) - 1) == 0


def _brackets(s: str) -> dict[int, int] | None:
    """closing index -> opening index for one self-contained line; None when a comment or
    an unbalanced bracket makes the line something only black should touch."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for m in _TOKEN.finditer(s):
        tok = m.group()
        if tok[0] == "#" or tok == "\n":
            return None
        if tok in _OPENERS:
            stack.append(m.start())
        elif tok in ")]}":
            if not stack or _OPENERS[s[stack[-1]]] != tok:
                return None
            pairs[m.start()] = stack.pop()
    return pairs if not stack else None
