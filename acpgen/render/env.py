"""The only Jinja environment factory, used by production and tests alike."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import jinja2

from acpgen.render.filters import FILTERS


def templates_dir() -> Path:
    packaged = Path(__file__).resolve().parent.parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "templates"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(FILTERS)
    return env


def template_files() -> list[Path]:
    root = templates_dir()
    return sorted(p for p in root.rglob("*.jinja") if p.is_file())


@lru_cache(maxsize=1)
def templates_digest() -> str:
    h = hashlib.sha256()
    root = templates_dir()
    for path in template_files():
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()
