"""Render documentation pages in-process for the docs tests."""

from __future__ import annotations

import subprocess
import sys
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


MKDOCS_YML = """\
site_name: ACP schema reference
docs_dir: docs
site_dir: site
theme:
  name: material
  font: false          # no Google Fonts: the site works offline (and the test browser has no network)
plugins:
  - search
strict: true
validation:
  links:
    anchors: warn
markdown_extensions:
  - toc
  - tables
  - md_in_html
nav:
{nav}
"""


def mkdocs_site(root: Path, pages: dict[str, str]) -> Path:
    """``mkdocs build --strict`` of ``pages`` (relative path -> Markdown) with an index page
    and one navigation entry each, titled by the page itself; returns the site directory."""
    nav = []
    for rel, text in sorted(pages.items()):
        path = root / "docs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        nav.append(f"  - {rel}")
    (root / "docs" / "index.md").write_text("# ACP\n\n" + "".join(f"- [{r}]({r})\n" for r in sorted(pages)))
    (root / "mkdocs.yml").write_text(MKDOCS_YML.format(nav="\n".join(["  - index.md", *nav])))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "site"
