"""Sibling unions are shown as choices, never merged into a property list (issue #26 1).

Fixture pages are snapshotted; the pages of the newest schema the TypeScript SDK ships
(read in place from the npm package the interop test installs) are checked by property:
no member listed twice within one property list, every alternative's description shown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acpgen.api import build_ir
from acpgen.render.mdtext import md_text, mdx_text

from ..conftest import SCHEMAS, npm_install
from .docs_alternatives import branch_descriptions, duplicates
from .docs_helpers import render_pages

#: written here for the docs (kept out of tests/fixtures/schemas/, which every binding
#: snapshot reads) and the two sibling-union fixtures of the bindings
ALTERNATIVES = Path(__file__).parent.parent / "fixtures" / "docs" / "alternatives.json"
FIXTURES = (ALTERNATIVES, SCHEMAS / "sibling_unions.json", SCHEMAS / "nested_siblings.json")
SDK_HOME = Path(__file__).parent.parent / "interop"
SDK_SCHEMA = SDK_HOME / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"


@pytest.fixture(scope="module", params=FIXTURES, ids=[p.name for p in FIXTURES])
def fixture_pages(request: pytest.FixtureRequest) -> tuple[str, dict[str, str]]:
    path: Path = request.param
    return path.name, render_pages(path, ("mdx", "md"))


def test_fixture_pages_snapshot(fixture_pages: tuple[str, dict[str, str]], snapshot) -> None:  # type: ignore[no-untyped-def]
    name, pages = fixture_pages
    assert {f"{name}:{p}": t for p, t in sorted(pages.items())} == snapshot


def test_fixture_pages_list_each_member_once(fixture_pages: tuple[str, dict[str, str]]) -> None:
    _, pages = fixture_pages
    for path, text in pages.items():
        assert duplicates(text, path.split("/")[0]) == [], path


def test_variant_alternatives_are_choices() -> None:
    pages = render_pages(ALTERNATIVES, ("mdx", "md"))
    md, mdx = pages["md/v1/schema.md"], pages["mdx/v1/schema.mdx"]
    form = md.split("<summary><code>form</code>")[1].split("<summary><code>url</code>")[0]
    # the variant's own members, then the choice, each alternative with its description
    assert form.index("- **`fields`**") < form.index("**One of** (exactly one must hold, `oneOf`)")
    assert "<summary><code>Session</code> · alternative</summary>" in form
    assert "Tied to a session, optionally to a tool call within it." in form
    assert "Tied to a JSON-RPC request outside of a session." in form
    assert form.count("- **`sessionId`** · `string` · *required*") == 1
    idle = mdx.split('<ResponseField name="idle" type="object">')[1].split("## ")[0]
    assert "**At least one of** (at least one must hold):" in idle
    assert '<Expandable title="alternatives">' in idle and '<ResponseField name="none" type="alternative">' in idle
    # a one-variant union: one object, its choice after its members
    scoped = md.split("## `Scoped`")[1].split("## ")[0]
    assert "**Type:** Object" in scoped and "**One of**" in scoped and scoped.count("sessionId") == 1


def _sdk_files() -> list[Path]:
    npm_install(SDK_HOME, "@agentclientprotocol/sdk", "the SDK page checks")
    files = sorted(SDK_SCHEMA.glob("v*/schema*.json"))
    if not files:
        pytest.skip("the SDK package ships no schema/ files")
    return files


@pytest.mark.parametrize("style", ["md", "mdx"])
def test_newest_sdk_pages_show_alternatives(style: str) -> None:
    escape = md_text if style == "md" else mdx_text
    for schema in _sdk_files():
        pages = render_pages(schema, (style,))
        (text,) = pages.values()
        assert duplicates(text, style) == [], schema
        (built,) = build_ir(schema)
        protocol = built.protocol
        missing = [d for d in branch_descriptions(protocol) if escape(d) not in text]
        assert not missing, (schema, missing[:3])
