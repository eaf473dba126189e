"""The only Jinja environment factory, used by production and tests alike."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

import jinja2

from acpgen.render.filters import FILTERS
from acpgen.runtime import runtime_digest


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


#: template folder of each style; files named ``_*.jinja`` beside it are shared
STYLE_DIRS = {"pydantic": "python/pydantic", "dataclasses": "python/dataclasses", "typeddict": "python/typeddict", "mdx": "docs/mdx", "md": "docs/md"}


#: the styles whose packages carry ``acpgen.runtime``
PYTHON_RUNTIMES = frozenset({"pydantic", "dataclasses", "typeddict"})


@lru_cache(maxsize=None)
def templates_digest(style: str | None = None) -> str:
    """sha256 over the templates a style renders with (all templates when ``style`` is None)
    and, for a Python style, the runtime modules its packages carry, so that changing one
    style's templates does not touch another style's headers."""
    h = hashlib.sha256()
    root = templates_dir()
    folder = STYLE_DIRS.get(style or "", "")
    for path in template_files():
        rel = path.relative_to(root).as_posix()
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if folder and not (rel.startswith(folder + "/") or (path.name.startswith("_") and folder.startswith(parent + "/"))):
            continue
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    if style in PYTHON_RUNTIMES or style is None:  # the runtime modules copied into packages
        for name in sorted(PYTHON_RUNTIMES) if style is None else (style,):
            h.update(runtime_digest(name).encode())
    return h.hexdigest()
