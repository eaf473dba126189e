"""Structural parity of acpgen's MDX pages with upstream's, on every corpus release.

Each upstream page (``docs/`` of a release, ``generated_from`` in INDEX.json) and
acpgen's page for the same schema file are parsed into records and diffed; every
difference must be explained by a rule of ``parity_rules`` (a deliberate fix), and
every rule must explain at least one difference.
"""

from __future__ import annotations

import collections
from functools import lru_cache

import pytest

from acpgen.pages.diff import diff_pages, normalise
from acpgen.pages.parse import parse_page

from .. import corpus
from .docs_helpers import page_path, render_pages
from acpgen.pages.rules import RULES, explain

SEED = corpus.SEEDS / "004_afcb7765383b3049.txt"
BUNDLED = corpus.ROOT / "schemas" / "acp" / "v0.1.3"


def _pages() -> list[tuple[str, str, str]]:
    """(release, generated_from, upstream page path) of every comparable page."""
    if not corpus.releases():
        return []
    out = []
    for r in corpus.index()["releases"]:
        for f in r["files"]:
            if f["kind"] == "docs" and (corpus.ACP / r["release"] / f["generated_from"]).is_file():
                out.append((r["release"], f["generated_from"], f["path"]))
    return out


@lru_cache(maxsize=None)
def _ours(release: str) -> dict[str, str]:
    return render_pages(corpus.ACP / release)


@corpus.needs_corpus
def test_every_upstream_record_is_on_our_page() -> None:
    pages = _pages()
    assert len(pages) >= 80
    used: collections.Counter[str] = collections.Counter()
    unexplained = []
    for release, generated_from, upstream in pages:
        theirs = parse_page((corpus.ACP / upstream).read_text())
        ours = parse_page(_ours(release)[page_path(generated_from)])
        for d in diff_pages(ours, theirs):
            why = explain(d, ours, theirs)
            if why is None:
                unexplained.append(f"{release} {generated_from}: {d.render()}")
            else:
                used[why] += 1
    assert unexplained == [], "\n".join(unexplained[:30])
    assert set(RULES) <= set(used), f"rules that explain nothing: {sorted(set(RULES) - set(used))}"


@corpus.needs_corpus
def test_parity_catches_a_changed_field() -> None:
    """The comparison is not vacuous: one changed field gives unexplained rows."""
    text = _ours("main")["mdx/v1/schema.mdx"]
    upstream = parse_page((corpus.ACP / "main" / "docs" / "v1" / "schema.mdx").read_text())
    broken = text.replace(
        '<ResponseField name="methodId" type={<a href="#authmethodid">AuthMethodId</a>} required>',
        '<ResponseField name="methodId" type={"string"}>',
    )
    assert broken != text
    ours = parse_page(broken)
    rows = [d for d in diff_pages(ours, upstream) if explain(d, ours, upstream) is None]
    assert {(d.where, d.what) for d in rows} == {("AuthenticateRequest.methodId", "type"), ("AuthenticateRequest.methodId", "required")}


def _seed_differences(ours_text: str) -> tuple[list[str], list[str], list[str]]:
    seed = parse_page(SEED.read_text())
    ours = parse_page(ours_text)
    structural = [(d, explain(d, ours, seed)) for d in diff_pages(ours, seed)]
    unexplained = [d.render() for d, why in structural if why is None]
    fixes = sorted({f"{why}: {d.where}" for d, why in structural if why is not None})
    text_only = [d for d in diff_pages(ours, seed, text=True) if d.what == "description"]
    return unexplained, fixes, [f"{_text_reason(d.where, d.ours, d.theirs)}: {d.where}" for d in text_only]


def _text_reason(where: str, ours: str, theirs: str) -> str:
    """Why a description differs after normalising; "unexplained" fails the test."""
    if where.startswith("method ") and not ours:
        return "method-prose-not-in-schema"  # v0.1.x took it from rustdoc; the schema has no routers' prose
    if ours.startswith("The discriminator value. Must be ") and not theirs:
        return "discriminator-sentence"  # upstream's generator writes it since v0.4
    if ours.startswith("Payload: ") and not theirs:
        return "payload-link"  # acpgen links a $ref variant to its type's section (D7)
    return "unexplained"


@pytest.mark.skipif(not SEED.is_file(), reason=f"{SEED} is absent")
@corpus.needs_corpus
def test_seed_page_is_reproduced_from_the_corpus_release() -> None:
    unexplained, fixes, text = _seed_differences(_ours("v0.1.3-alpha.0")["mdx/v1/schema.mdx"])
    assert unexplained == []
    # the deliberate fixes on this page: item types of nullable arrays, integer formats
    # on nullable fields, any-JSON values
    assert fixes and all(f.split(":")[0] in RULES for f in fixes)
    # prose: every description is the page's after normalising whitespace and bullets,
    # but for the three reasons of _text_reason
    assert [t for t in text if t.startswith("unexplained")] == []
    assert {t.split(":")[0] for t in text} == {"method-prose-not-in-schema", "discriminator-sentence", "payload-link"}


@pytest.mark.skipif(not SEED.is_file(), reason=f"{SEED} is absent")
def test_seed_page_is_reproduced_from_the_bundled_schema() -> None:
    unexplained, fixes, text = _seed_differences(render_pages(BUNDLED)["mdx/v1/schema.mdx"])
    assert unexplained == []
    assert all(f.split(":")[0] in RULES for f in fixes)
    # the bundled schema carries the method prose in its routers (written from the page)
    assert [t for t in text if not t.startswith(("discriminator-sentence", "payload-link"))] == []


def test_normalise_treats_bullets_alike() -> None:
    assert normalise("* a\n  *  b") == normalise("- a\n- b")
