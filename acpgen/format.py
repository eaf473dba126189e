"""Formatting of rendered text: black for Python, whitespace rules for Markdown.

black runs in-process (its API), pinned to one mode, and its results are cached by
content hash so that an unchanged module is never formatted twice.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePosixPath

import black
from black.mode import TargetVersion
from importlib.metadata import version as _dist_version

from acpgen.errors import AcpgenError, Diagnostic

MODE = black.Mode(target_versions={TargetVersion.PY311}, line_length=88)


def cache_dir() -> Path | None:
    env = os.environ.get("ACPGEN_CACHE_DIR")
    if env == "":
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acpgen" / f"black-{_dist_version('black')}"


def format_python(path: PurePosixPath, text: str) -> str:
    key = hashlib.sha256(text.encode()).hexdigest()
    cache = cache_dir()
    hit = cache / key if cache else None
    if hit is not None and hit.is_file():
        return hit.read_text(encoding="utf-8")
    try:
        out = black.format_str(text, mode=MODE)
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
