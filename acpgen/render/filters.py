"""Every filter the templates may call, in one place."""

from __future__ import annotations

from typing import Any, Callable

from acpgen.render.mdtext import DOC_FILTERS
from acpgen.render.pytypes import py_literal


def py_docstring(text: str | None, indent: str = "") -> str:
    """A triple-quoted docstring body that is safe and black-stable."""
    if not text:
        return ""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    if body.endswith('"'):
        body += " "
    lines = body.split("\n")
    lines = [line.rstrip() for line in lines]
    if len(lines) == 1:
        return f'"""{lines[0]}"""'
    joined = ("\n" + indent).join(lines)
    joined = "\n".join(line if line.strip() else "" for line in joined.split("\n"))
    return f'"""{joined}\n{indent}"""'


def py_comment(text: str) -> str:
    return "\n".join(("# " + line).rstrip() for line in text.split("\n"))


FILTERS: dict[str, Callable[..., Any]] = {
    "py_docstring": py_docstring,
    "py_comment": py_comment,
    #: a Python literal as black writes it (strings, numbers, tuples of them)
    "py": py_literal,
    **DOC_FILTERS,
}
