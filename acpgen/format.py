"""Formatting of rendered text: black-stable layout for Python, whitespace rules for Markdown.

Python modules are laid out by ``acpgen.layout`` (black's layout, computed without black);
black runs in-process only on the top-level statements the layout hands back, pinned to one
mode, and each of its results is cached by content hash, so that an unchanged statement is
never formatted twice. black is imported only when a statement needs it.
"""

from __future__ import annotations

import hashlib
import os
from importlib.metadata import version as _dist_version
from pathlib import Path, PurePosixPath
from typing import Any

from acpgen.errors import AcpgenError, Diagnostic
from acpgen.layout import LINE_LENGTH, Pending, lay_out
from acpgen.stamp import cache_base


def cache_dir() -> Path | None:
    """Where black's results are kept: ``ACPGEN_CACHE_DIR`` itself, or a per-black-version
    folder of the user cache; None when ``ACPGEN_CACHE_DIR`` is empty."""
    base = cache_base()
    if base is None or os.environ.get("ACPGEN_CACHE_DIR"):
        return base
    return base / f"black-{_dist_version('black')}"


def _mode(line_length: int) -> Any:
    import black
    from black.mode import TargetVersion

    return black.Mode(target_versions={TargetVersion.PY311}, line_length=line_length)


def black_format(path: PurePosixPath, text: str, line_length: int = LINE_LENGTH) -> str:
    """black on ``text`` (a module or one statement), through the content-hash cache."""
    key = hashlib.sha256(f"{line_length}\0{text}".encode()).hexdigest()
    cache = cache_dir()
    hit = cache / key if cache else None
    if hit is not None and hit.is_file():
        return hit.read_text(encoding="utf-8")
    import black

    try:
        out = black.format_str(text, mode=_mode(line_length))
    except Exception as exc:  # black raises several types; all mean "not valid Python"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AcpgenError([Diagnostic("ACPG602", f"black could not format the rendered module: {first}", str(path))])
    if hit is not None:
        try:
            hit.parent.mkdir(parents=True, exist_ok=True)
            tmp = hit.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(out, encoding="utf-8")
            os.replace(tmp, hit)
        except OSError:
            pass  # a cache that cannot be written is only slower
    return out


def format_python(path: PurePosixPath, text: str) -> str:
    laid = lay_out(text)
    lines = laid.text.split("\n")
    out: list[str] = []
    done = 0
    for p in laid.pending:
        out.extend(lines[done : p.start])
        out.extend(_black_pending(path, lines[p.start : p.end], p))
        done = p.end
    out.extend(lines[done:])
    return "\n".join(out)


_WRAP = {"(": ("_(", "    _,", ")"), "{": ("_ = {", "    _: _,", "}")}


def _black_pending(path: PurePosixPath, block: list[str], p: Pending) -> list[str]:
    """black on one pending statement, formatted where it stands: dedented to column 0
    (or to the element column of a two-element bracket of its own) with the line length
    reduced by as many columns."""
    trailing = len(block) - len("\n".join(block).rstrip("\n").split("\n"))
    shift = p.indent - (4 if p.element else 0)
    body = [line[shift:] for line in "\n".join(block).rstrip("\n").split("\n")]
    if p.element:
        opener, filler, closer = _WRAP[p.element]
        body = [opener, *body, filler, closer]
    formatted = black_format(path, "\n".join(body) + "\n", LINE_LENGTH - shift).rstrip("\n").split("\n")
    if p.element:
        formatted = formatted[1:-2]
    pad = " " * shift
    return [pad + line if line else line for line in formatted] + [""] * trailing


def format_markdown(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def format_file(path: PurePosixPath, text: str) -> str:
    if path.suffix == ".py":
        return format_python(path, text)
    if path.suffix in (".md", ".mdx"):
        return format_markdown(text)
    if not text.endswith("\n"):
        text += "\n"
    return text
