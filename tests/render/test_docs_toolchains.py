"""The generated pages through real toolchains: @mdx-js/mdx for MDX, mkdocs for Markdown.

The MDX compiler is installed from npm (versions pinned in tests/mdx/package.json)
into tests/mdx/node_modules by the first test that needs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .. import corpus
from ..conftest import SCHEMAS, npm_install
from .docs_helpers import mkdocs_site, render_pages

MDX = Path(__file__).parent.parent / "mdx"


@pytest.fixture(scope="session")
def mdx_compiler() -> Path:
    npm_install(MDX, "@mdx-js/mdx", "the MDX compile check")
    return MDX / "compile.mjs"


def _compile(script: Path, files: list[Path]) -> list[dict[str, object]]:
    done = subprocess.run(["node", str(script), *map(str, files)], capture_output=True, text=True, timeout=900)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(files), done.stderr
    return results


def test_compiler_reports_errors(mdx_compiler: Path, tmp_path: Path) -> None:
    """The check can fail: an unescaped tag or brace in prose is an MDX error."""
    bad = tmp_path / "bad.mdx"
    bad.write_text("# T\n\nA list of Vec<T> values, {a b}.\n\n<ResponseField name=\"x\" type={\"string\"}>\n</ResponseField>\n")
    good = tmp_path / "good.mdx"
    good.write_text("# T\n\nSupplying `{}` means nothing, \\{\\} too.\n")
    results = _compile(mdx_compiler, [bad, good])
    assert [r["ok"] for r in results] == [False, True]


def test_fixture_pages_compile(mdx_compiler: Path, tmp_path: Path) -> None:
    """The fixture pages, and the committed pages of both bundled targets (with and
    without the RFD overlays: badges and the Proposed changes tables)."""
    files = sorted((Path(__file__).resolve().parents[2] / "generated").glob("*/mdx/**/*.mdx"))
    assert len(files) == 2
    for rel, text in render_pages(SCHEMAS / "docs").items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)
    assert [r for r in _compile(mdx_compiler, files) if not r["ok"]] == []


@corpus.needs_corpus
def test_every_corpus_release_compiles(mdx_compiler: Path, tmp_path: Path) -> None:
    files = []
    for release in corpus.releases():
        for rel, text in render_pages(corpus.ACP / release).items():
            path = tmp_path / release / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            files.append(path)
    assert len(files) >= 96  # one page per schema file of every release
    errors = [r for r in _compile(mdx_compiler, files) if not r["ok"]]
    assert errors == [], errors[:5]


def _mkdocs(tmp_path: Path, pages: dict[str, str]) -> Path:
    return mkdocs_site(tmp_path, pages)


@corpus.needs_corpus
def test_mkdocs_material_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pages = render_pages(corpus.ACP / "main", ("md",))
    site = _mkdocs(tmp_path, {rel.removeprefix("md/"): text for rel, text in pages.items()})
    html = (site / "v1" / "schema" / "index.html").read_text()
    assert "&lt;ResponseField" not in html and "<details" in html
    assert 'id="sessionid"' in html and 'id="session-new"' in html


def test_mkdocs_builds_the_overlaid_page_strict(tmp_path: Path) -> None:
    """Every RFD badge link and Proposed changes row resolves (anchor validation on)."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    page = Path(__file__).resolve().parents[2] / "generated" / "v0.1.3-rfds" / "md" / "v1" / "schema.md"
    site = _mkdocs(tmp_path, {"v1/schema.md": page.read_text()})
    html = (site / "v1" / "schema" / "index.html").read_text()
    assert 'id="rfd-open-enums"' in html and 'href="#rfd-open-enums"' in html
