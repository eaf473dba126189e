"""The MDX and Markdown styles on fixture schemas: structure, the A10 fixes, snapshots."""

from __future__ import annotations

import re

import pytest

from acpgen.pages.parse import parse_page
from acpgen.render.mdtext import code, mdx_text, md_text

from ..conftest import SCHEMAS
from .docs_helpers import render_pages

DOCS = SCHEMAS / "docs"


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return render_pages(DOCS, ("mdx", "md"))


def test_layout_follows_upstream(pages: dict[str, str]) -> None:
    assert sorted(pages) == ["md/v1/draft/schema.md", "md/v1/schema.md", "mdx/v1/draft/schema.mdx", "mdx/v1/schema.mdx"]
    page = parse_page(pages["mdx/v1/schema.mdx"])
    assert page.title == "Schema"
    assert page.sections == ("Agent", "Client", "Protocol Level")
    # methods sorted by wire name inside each section; "both" appears under Agent and Client
    assert [(m.section, m.name) for m in page.methods] == [
        ("Agent", "mcp/message"),
        ("Agent", "session/prompt"),
        ("Client", "mcp/message"),
        ("Protocol Level", "$/cancel_request"),
    ]
    prompt = next(m for m in page.methods if m.name == "session/prompt")
    assert prompt.types == ("PromptRequest", "PromptResponse")
    # the prose comes from the x-docs-ignore router, not from rustdoc
    assert prompt.description.startswith("Processes a user prompt.")
    # method types are not repeated in the reference list; routers are not shown
    rest = [t.name for t in page.types if not t.section]
    assert rest == ["ConfigOption", "ContentBlock", "Role", "SessionId", "StopReason", "TextContent"]


def test_anchors_side_prefixed_and_all_links_resolve(pages: dict[str, str]) -> None:
    for path in ("mdx/v1/schema.mdx", "mdx/v1/draft/schema.mdx"):
        page = parse_page(pages[path])
        assert {"agent-mcp-message", "client-mcp-message", "session-prompt", "$-cancel_request"} <= page.anchors
        assert set(page.links) <= page.anchors, set(page.links) - page.anchors
    md = pages["md/v1/schema.md"]
    heading_slugs = {re.sub(r"[^a-z0-9_\-$]", "", m.lower()) for m in re.findall(r"^#+ `([^`]+)`$", md, re.M)}
    ids = set(re.findall(r'<a id="([^"]+)">', md))
    links = set(re.findall(r"\]\(#([^)]+)\)", md))
    assert links and links <= heading_slugs | ids


def test_open_enums_and_unions_are_shown_open(pages: dict[str, str]) -> None:
    text = pages["mdx/v1/schema.mdx"]
    page = parse_page(text)
    stop = page.type_named("StopReason")[0]
    assert [v.label for v in stop.variants] == ["end_turn", "cancelled", "other"]
    assert "**Open enumeration:**" in text and "Values beginning with `_` are reserved" in text
    assert '<ResponseField name="other" type="string" post={["open"]}>' in text
    block = page.type_named("ContentBlock")[0]
    other = next(v for v in block.variants if v.label == "other")
    assert [f.name for f in other.fields] == ["type"]
    assert "**Open union:**" in text
    # a closed enum says nothing of the kind
    role = text.split('<span class="font-mono">Role</span>')[1].split("## ")[0]
    assert "Open" not in role


def test_item_and_value_types_are_kept(pages: dict[str, str]) -> None:
    fields = {f.name: f for f in parse_page(pages["mdx/v1/schema.mdx"]).type_named("PromptRequest")[0].fields}
    assert fields["prompt"].type == "ContentBlock[]"
    assert fields["prompt"].links == ("contentblock",)
    assert fields["tags"].type == "string[] | null"
    assert fields["limit"].type == "uint32 | null"
    assert fields["env"].type == "map<string, string>"
    assert fields["raw"].type == "any"
    assert "`\"fast\"`, `\"slow\"`" in pages["mdx/v1/schema.mdx"]


def test_one_variant_union_shows_every_field(pages: dict[str, str]) -> None:
    config = parse_page(pages["mdx/v1/schema.mdx"]).type_named("ConfigOption")[0]
    assert config.kind == "Object"
    assert {f.name: f.required for f in config.fields} == {"current": True, "id": True, "name": True, "type": True}


def test_no_escaping_inside_code(pages: dict[str, str]) -> None:
    text = pages["mdx/v1/schema.mdx"]
    assert "Supplying `{}` means no options; `Vec<T>` is a list and \\{braces\\} or &lt;tags&gt; in prose" in text
    assert "\\# Example" in text
    assert mdx_text("a `x|{y}<z>` b {c}") == "a `x|{y}<z>` b \\{c\\}"
    assert mdx_text("```json\n{\"a\": 1}\n```\n{b}") == "```json\n{\"a\": 1}\n```\n\\{b\\}"
    assert md_text("`<T>` and <T> {x}") == "`<T>` and &lt;T> {x}"
    assert code("a`b") == "`` a`b ``"  # CommonMark strips one space each side


def test_unstable_items_are_marked(pages: dict[str, str]) -> None:
    stable, draft = pages["mdx/v1/schema.mdx"], pages["mdx/v1/draft/schema.mdx"]
    # the **UNSTABLE** prose prefix marks an item on both pages
    assert '<ResponseField name="draft" type={"boolean"} post={["unstable"]}>' in stable
    assert "Badge" not in stable.split("<ResponseField")[0]  # no page-level warning on stable pages
    # items only the unstable file has: method, its type, a field, an enum value
    assert '### <span class="font-mono">nes/suggest</span>\n\n<Badge color="orange">Unstable</Badge>' in draft
    assert '#### <span class="font-mono">NesRequest</span>\n\n<Badge color="orange">Unstable</Badge>' in draft
    assert '<ResponseField name="nes" type={"boolean | null"} post={["unstable"]}>' in draft
    assert '<ResponseField name="paused" type="string" post={["unstable"]}>' in draft
    # ... and nothing that the stable file also has
    assert '<ResponseField name="sessionId" type={<a href="#sessionid">SessionId</a>} required>' in draft
    md = pages["md/v1/draft/schema.md"]
    assert "- **`nes`** · `boolean | null` · **unstable**" in md


def test_markdown_has_no_jsx(pages: dict[str, str]) -> None:
    for path in ("md/v1/schema.md", "md/v1/draft/schema.md"):
        text = pages[path]
        assert not re.search(r"<(ResponseField|Expandable|Note|Info|Warning|Badge)\b", text)
        assert "type={" not in text and "{/*" not in text
        assert "<!-- Generated by acpgen" in text


@pytest.mark.parametrize("style", ["mdx", "md"])
def test_docs_snapshot(style: str, pages: dict[str, str], snapshot) -> None:  # type: ignore[no-untyped-def]
    assert {p: t for p, t in pages.items() if p.startswith(style + "/")} == snapshot


@pytest.mark.parametrize("style", ["mdx", "md"])
def test_a_oneof_whose_members_overlap_says_exactly_one(style: str) -> None:
    """``UnionDef.exclusive`` on the page (issue #27 item 1): the ``checked`` unions of
    the fixture say that a value two members accept is rejected; the ``disjoint`` ones
    and everything else say nothing of it."""
    text = render_pages(SCHEMAS / "exclusive_unions.json", (style,))[f"{style}/v1/schema.{style}"]
    sections = {}
    for chunk in text.split("\n## ")[1:]:
        head, _, body = chunk.partition("\n")
        sections[re.sub(r"<[^>]+>|`", "", head)] = body
    says = {name for name, body in sections.items() if "**Exactly one:**" in body}
    assert says == {"Source", "Amount", "Setting", "Job.count"}, says
    assert {"Target", "Label"} <= set(sections)
    assert text.count("**Exactly one:**") == 4
    box = "<Info>**Exactly one:**" if style == "mdx" else "> **Exactly one:**"
    assert box in text
