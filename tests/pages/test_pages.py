"""The page parser and structural diff (acpgen.pages)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from acpgen.pages.diff import diff_pages
from acpgen.pages.parse import parse_page, type_text

from .. import corpus

SEED = corpus.SEEDS / "004_afcb7765383b3049.txt"

PAGE = """---
title: "Schema"
description: "Schema definitions"
---

## Agent

Intro.

<a id="session-new"></a>
### <span class="font-mono">session/new</span>

Creates a session.

#### <span class="font-mono">NewSessionRequest</span>

Request parameters.

**Type:** Object

**Properties:**

<ResponseField
  name="mcpServers"
  type={
  <>
    <span>
      <a href="#mcpserver">McpServer</a>
    </span>
    <span>[]</span>
  </>
}
  required
>
  Servers.

    - Default: `[]`
</ResponseField>
<ResponseField name="limit" type={"integer | null"} >
  Lines.

    - Minimum: `0`
</ResponseField>

## <span class="font-mono">McpServer</span>

**Type:** Union

**Shared properties:**

<ResponseField name="name" type={"string"} required>
  Name.
</ResponseField>

**Variants:**

<ResponseField name="http" type="object">
Over HTTP.

<Expandable title="Properties">
<ResponseField name="url" type={"string"} required />
<ResponseField name="type" type={"string"} required />
</Expandable>
</ResponseField>

## <span class="font-mono">ProtocolVersion</span>

**Type:** `integer (uint16)`

| Constraint | Value   |
| ---------- | ------- |
| Minimum    | `0`     |
| Maximum    | `65535` |

## <span class="font-mono">Role</span>

**Type:** Enumeration

| Value         |
| ------------- |
| `"assistant"` |
| `"user"`      |
"""


def test_parse_records() -> None:
    page = parse_page(PAGE)
    assert page.title == "Schema"
    assert page.sections == ("Agent",)
    (method,) = page.methods
    assert (method.name, method.anchor, method.types) == ("session/new", "session-new", ("NewSessionRequest",))
    request, server, version, role = page.types
    assert (request.section, request.method, request.kind) == ("Agent", "session/new", "Object")
    servers, limit = request.fields
    assert (servers.type, servers.required, servers.default, servers.links) == ("McpServer[]", True, "[]", ("mcpserver",))
    assert (limit.type, limit.required, limit.constraints) == ("integer | null", False, (("Minimum", "0"),))
    assert server.kind == "Union" and [f.name for f in server.shared] == ["name"]
    (http,) = server.variants
    assert (http.label, http.attr, http.description) == ("http", "object", "Over HTTP.")
    assert [(f.name, f.required) for f in http.fields] == [("url", True), ("type", True)]
    assert (version.kind, version.simple, version.constraints) == ("simple", "integer (uint16)", (("Minimum", "0"), ("Maximum", "65535")))
    assert role.values == ("assistant", "user")
    assert {"session-new", "mcpserver", "protocolversion", "role"} <= page.anchors


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        ('"string | null"', "string | null"),
        ('<a href="#x">X</a>', "X"),
        ("<><span><a href='#x'>X</a></span><span> | null</span></>", "X | null"),
        ('<><span>"string"</span><span>[]</span></>', "string[]"),
    ],
)
def test_type_text(expr: str, text: str) -> None:
    assert type_text(expr) == text


def test_diff_finds_each_kind_of_difference() -> None:
    page = parse_page(PAGE)
    request = page.types[0]
    servers, limit = request.fields
    changed = replace(
        page,
        types=(replace(request, fields=(replace(servers, required=False),)), *page.types[1:3]),
    )
    found = {(d.where, d.what) for d in diff_pages(changed, page)}
    assert found == {
        ("NewSessionRequest.mcpServers", "required"),
        ("NewSessionRequest.limit", "missing"),
        ("Role", "missing"),
    }
    assert diff_pages(page, page) == []


def test_export_form_equals_repository_form() -> None:
    """The docs site's Markdown export (`# Title`, `*` bullets, `\\_`) parses to the same records."""
    exported = (
        PAGE.replace('---\ntitle: "Schema"\ndescription: "Schema definitions"\n---\n', "# Schema\n\n> Schema definitions\n")
        .replace("    - Default", "    * Default")
        .replace('<a id="session-new"></a>', '<a id="session-new" />')
        .replace("session/new</span>", "session/new</span>".replace("_", "\\_"))
    )
    assert diff_pages(parse_page(exported), parse_page(PAGE), text=True) == []


@corpus.needs_corpus
@pytest.mark.skipif(not SEED.is_file(), reason=f"{SEED} is absent")
def test_seed_page_equals_upstream_page_of_its_release() -> None:
    seed = parse_page(SEED.read_text())
    upstream = parse_page((corpus.ACP / "v0.1.3-alpha.0" / "docs" / "schema.mdx").read_text())
    assert len(seed.types) == 53 and len(seed.methods) == 10
    assert diff_pages(seed, upstream, text=True) == []


def _pages() -> list[Path]:
    if not corpus.releases():
        return []
    return sorted(corpus.ACP.glob("*/docs/**/*.mdx"))


@corpus.needs_corpus
@pytest.mark.parametrize("path", _pages(), ids=lambda p: str(p.relative_to(corpus.ACP)))
def test_every_upstream_page_parses(path: Path) -> None:
    page = parse_page(path.read_text())
    assert page.types and page.sections[:2] == ("Agent", "Client")
    for t in page.types:
        assert t.kind in ("Object", "Union", "Enumeration", "simple", ""), t.name
        for f in (*t.fields, *t.shared, *(f for v in t.variants for f in v.fields)):
            assert f.name and f.type, (t.name, f.name)


@pytest.mark.parametrize(
    "tail",
    ["<ResponseField name=", '<ResponseField name="a" type={<a', '<ResponseField "a">', '<ResponseField name="a'],
)
def test_truncated_tags_are_a_value_error(tail: str) -> None:
    """Malformed JSX is reported as ValueError (the CLI's ACPG107), never another exception."""
    with pytest.raises(ValueError):
        parse_page('## <span class="font-mono">X</span>\n\n**Type:** Object\n\n' + tail)
