"""The README is the first five minutes: short, every link into the site lands on a page of
its navigation, no history in it, and its programs type-check and run (the machinery of
``tests/doc_programs.py``, shared with the site's pages)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from .doc_programs import ROOT, check_programs, python_blocks

README = ROOT / "README.md"


def _nav_pages() -> set[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "python"))
    pages: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, str):
            pages.add(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    return pages


def test_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= 250


def test_readme_links_land_on_site_pages() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", README.read_text())
    assert len(links) >= 10
    nav = _nav_pages()
    for link in links:
        assert (ROOT / link).is_file(), link
        assert link.removeprefix("docs/") in nav, f"{link} is not in mkdocs.yml's nav"


def test_readme_tells_no_history() -> None:
    text = README.read_text()
    assert not re.search(r"(?<![\w/&])#\d{1,4}\b", text), "issue numbers belong in the tracker"
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text), "dated runs belong nowhere in user docs"
    for phrase in ("this stop", "Earlier runs", "one commit earlier", "used to"):
        assert phrase not in text, phrase


def test_readme_programs_type_check_and_run(tmp_path: Path) -> None:
    blocks = python_blocks(README)
    assert blocks, "the README shows an agent"
    assert check_programs(blocks, tmp_path) == []
