"""Render documentation pages in-process for the docs tests."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from acpgen import api
from acpgen.config import single_target


def render_pages(schema: Path, styles: tuple[str, ...] = ("mdx",)) -> dict[str, str]:
    """{"mdx/v1/schema.mdx": text, ...} for a schema file or release directory."""
    config = single_target(schema, Path("unused"), styles)
    files = api.render_target(config.targets[0], config, formatted=True)
    return {p.as_posix(): text for p, text in files.items() if p.suffix in (".mdx", ".md")}


def page_path(generated_from: str, style: str = "mdx") -> str:
    """Where acpgen writes the page of ``v1/schema.unstable.json`` (upstream's layout)."""
    tree, name = generated_from.split("/")
    draft = "draft/" if ".unstable." in name else ""
    return str(PurePosixPath(style) / tree / f"{draft}schema.{style}")
