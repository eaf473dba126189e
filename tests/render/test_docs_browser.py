"""The Markdown pages in a real browser: upstream ``main`` (four pages) and the two bundled
targets, built into one mkdocs-material site, served from loopback and opened in headless
Chromium (the Debian package ``.ci/run`` installs; Playwright drives it, nothing is
downloaded). Every page loads without a console error, has a title that tells it apart,
a sample of in-page links scrolls to an element that exists, the search index holds every
type name, and a screenshot of one type's section is kept in ``build/test-artifacts/``."""

from __future__ import annotations

import functools
import json
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from .. import corpus
from .docs_helpers import mkdocs_site, render_pages

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "test-artifacts"
CHROMIUM = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")

def _chromium() -> str:
    for path in CHROMIUM:
        if Path(path).is_file():
            return path
    pytest.skip("no Chromium (the Debian package `chromium`, which .ci/run installs)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    if not corpus.releases():
        pytest.skip(f"{corpus.ABSENT}: upstream main's pages are built from it")
    root = tmp_path_factory.mktemp("site")
    pages = {f"main/{rel.removeprefix('md/')}": text for rel, text in render_pages(corpus.ACP / "main", ("md",)).items()}
    for name in ("v0.1.3", "v0.1.3-rfds"):
        for page in (ROOT / "generated" / name / "md").rglob("*.md"):
            pages[f"{name}/{page.relative_to(ROOT / 'generated' / name / 'md').as_posix()}"] = page.read_text()
    return mkdocs_site(root, pages)


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = _chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


#: the text of the heading an anchor belongs to: the element itself, or the next heading
NEAREST_HEADING = """id => {
  let el = document.getElementById(decodeURIComponent(id));
  if (/^H[1-6]$/.test(el.tagName)) return el.textContent.trim();
  let node = el.closest('p') || el;
  while (node && !/^H[1-6]$/.test(node.tagName)) node = node.nextElementSibling;
  return node ? node.textContent.trim() : '';
}"""


def _pages(site: Path) -> list[str]:
    return sorted(p.parent.relative_to(site).as_posix() + "/" for p in site.rglob("schema/index.html"))


def _open(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    response = page.goto(url, wait_until="load")
    assert response is not None and response.ok, url
    page.wait_for_load_state("networkidle")
    return page, errors


def test_every_page_loads_clean_with_its_own_title(site: Path, server: str, browser: Any) -> None:
    pages = _pages(site)
    assert len(pages) == 6, pages
    titles = {}
    for rel in ["", *pages]:
        page, errors = _open(browser, f"{server}/{rel}")
        assert errors == [], (rel, errors)
        titles[rel] = page.title()
        page.close()
    # main: v1, v1 draft, v2, v2 draft; the bundled release and its RFD version: v1 each
    assert titles["main/v1/schema/"].startswith("Schema v1 - ") and titles["main/v2/draft/schema/"].startswith("Schema v2 (unstable) - ")
    assert len({titles[p] for p in pages if p.startswith("main/")}) == 4


def test_a_sample_of_in_page_links_scrolls_to_an_element(site: Path, server: str, browser: Any) -> None:
    for rel in ("main/v1/schema/", "main/v2/draft/schema/", "v0.1.3-rfds/v1/schema/"):
        page, errors = _open(browser, f"{server}/{rel}")
        links: list[list[str]] = page.eval_on_selector_all(
            "article a[href^='#']", "els => els.map(e => [e.getAttribute('href'), e.textContent.trim()])"
        )
        first: dict[str, str] = {}
        for href, label in links:
            if len(href) > 1:
                first.setdefault(href, label)
        hrefs = sorted(first)
        assert len(hrefs) > 20, rel
        for href in hrefs:
            target = href[1:]
            exists = page.evaluate("id => document.getElementById(decodeURIComponent(id)) !== null", target)
            assert exists, (rel, href)
            # a link named after a type or method lands on that type's or method's heading
            landed = page.evaluate(NEAREST_HEADING, target)
            if re.fullmatch(r"[A-Za-z_$][\w/$]*", first[href]):
                assert first[href] in landed.split(), (rel, href, first[href], landed)
        sample = hrefs[:: max(1, len(hrefs) // 25)][:25]
        for href in sample:
            target = href[1:]
            page.evaluate("h => { location.hash = h }", href)
            top = page.evaluate("id => document.getElementById(decodeURIComponent(id)).getBoundingClientRect().top", target)
            scrolled = page.evaluate("() => window.scrollY")
            # the element is at the top of the viewport (under the sticky header), or the
            # page could not scroll further because it is near the end
            at_end = page.evaluate("() => Math.ceil(window.scrollY + window.innerHeight) >= document.documentElement.scrollHeight")
            assert -5 <= top <= 200 or at_end, (rel, href, top, scrolled)
        assert errors == [], (rel, errors)
        page.close()


def test_the_search_index_has_every_type_name(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text())
    titles = {w for d in index["docs"] for w in re.sub(r"<[^>]+>", "", d["title"]).split()}
    text = "\n".join(d.get("text", "") for d in index["docs"])
    pages = render_pages(corpus.ACP / "main", ("md",))
    names = {m.group(1) for page in pages.values() for m in re.finditer(r"^#{2,4} `([^`]+)`", page, flags=re.M)}
    assert len(names) > 150
    missing = sorted(n for n in names if n not in titles and n not in text)
    assert missing == []


def test_a_screenshot_of_one_type(server: str, browser: Any) -> None:
    page, errors = _open(browser, f"{server}/main/v1/schema/#sessionupdate")
    heading = page.locator("#sessionupdate")
    assert heading.count() == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "main-v1-SessionUpdate.png"
    section = page.locator("article").first
    heading.scroll_into_view_if_needed()
    page.screenshot(path=str(shot), clip={**heading.bounding_box(), "height": 700, "width": 1000})  # type: ignore[dict-item]
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert section.count() == 1 and errors == []
    page.close()
