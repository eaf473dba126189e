"""acpgen's own documentation site (``mkdocs.yml``, ``docs/``; not the ACP schema sites that
``acpgen site`` writes): one ``mkdocs build --strict`` shared by the tests here; the command
reference and the diff rule catalogue written from the code by ``docs/hooks.py`` (every
command, option and rule appears); every program on the pages type-checks and runs; and in
headless Chromium (the Debian package; Playwright drives it, nothing is downloaded) the home
page and one page per section load without a console error."""

from __future__ import annotations

import functools
import html
import importlib.util
import re
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest

from .doc_programs import ROOT, check_programs, doc_pages, python_blocks

CHROMIUM = ("/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
#: the home page and one page of each section of the navigation
SECTIONS = ("", "getting-started/", "guides/reference-pages/", "reference/cli/", "project/performance/")


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("acpgen_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def project_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with ``mkdocs build --strict`` (as ``make docs`` does)."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    out = tmp_path_factory.mktemp("project-site") / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_site_builds_strict_with_every_page(project_site: Path) -> None:
    for page in doc_pages():
        rel = page.relative_to(ROOT / "docs").with_suffix("")
        index = project_site / ("index.html" if rel.name == "index" else f"{rel.as_posix()}/index.html")
        html = index.read_text()
        assert "<!-- acpgen:" not in html, f"{rel}: a placeholder the hook did not fill"
    assert not (project_site / "hooks.py").exists() and not (project_site / "screenshots.py").exists()
    agent = (project_site / "guides" / "agent-and-client" / "index.html").read_text()
    assert "class EchoAgent" in _text(agent) and "--8&lt;--" not in agent, "the examples are included"
    for image in sorted((ROOT / "docs" / "images").glob("*.png")):
        assert (project_site / "images" / image.name).is_file()
        assert image.stat().st_size < 150_000, f"{image.name}: keep screenshots small"
        assert any(f"images/{image.name}" in p.read_text() for p in doc_pages()), f"{image.name} is not shown"


def test_cli_reference_has_every_command_and_option(project_site: Path) -> None:
    import typer.main

    from acpgen.cli import app

    page = " ".join(html.unescape(_text((project_site / "reference" / "cli" / "index.html").read_text())).split())

    def walk(path: str, cmd: Any) -> Iterator[tuple[str, Any]]:
        yield path, cmd
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            yield from walk(f"{path} {name}", sub)

    seen = 0
    for path, cmd in walk("acpgen", typer.main.get_command(app)):
        assert path in page, path
        for param in cmd.params:
            for opt in getattr(param, "opts", []) if param.param_type_name == "option" else []:
                assert opt in page, (path, opt)
            help_text = " ".join((getattr(param, "help", None) or "").replace("\\[", "[").split())
            assert help_text in page, (path, param.name, help_text)
            seen += 1
    assert seen > 50


def test_rule_catalogue_has_every_rule(project_site: Path) -> None:
    from acpgen.diff.rules import RULES

    html = (project_site / "reference" / "diff" / "index.html").read_text()
    html = html[html.index('id="the-rule-catalogue"') :]
    rows = re.findall(r"<tr>\s*<td><code>([a-z0-9-]+)</code></td>", html)
    assert rows == [r.id for r in RULES]
    assert f"{len(RULES)} rules (" in _text(html)


def test_hooks_write_from_the_code() -> None:
    """The reference follows the code: a rule or an option added there is on the page."""
    hooks = _hooks()
    from acpgen.diff import rules

    extra = rules.Rule("a-rule-for-this-test", "def-added", "info", "info", "none", "a summary")
    original = rules.RULES
    rules.RULES = (*original, extra)
    try:
        assert "| `a-rule-for-this-test` | `def-added` | info | info | none | a summary |" in hooks.rule_catalogue()
    finally:
        rules.RULES = original
    reference = hooks.cli_reference()
    assert "### `acpgen overlay apply`" in reference and "`--fail-on`" in reference


def test_pages_left_to_their_own_tests_are_checked_there() -> None:
    from .doc_programs import OWN_TESTS

    for page, test in OWN_TESTS.items():
        assert (ROOT / page).is_file() and python_blocks(ROOT / page), page
        assert page in (ROOT / test).read_text(), (page, test)


def test_site_programs_type_check_and_run(tmp_path: Path) -> None:
    blocks = [block for page in doc_pages() for block in python_blocks(page)]
    assert sum(b.include is None for b in blocks) >= 4 and sum(b.include is not None for b in blocks) == 4
    included = {b.include for b in blocks if b.include is not None}
    assert included == {"examples/echo_agent.py", "examples/client.py", "examples/remote_agent.py", "examples/remote_client.py"}
    assert check_programs(blocks, tmp_path) == []


# ----------------------------------------------------------------------------- browser


def _chromium() -> str:
    for path in CHROMIUM:
        if Path(path).is_file():
            return path
    pytest.skip("no Chromium (the Debian package `chromium`, which .ci/run installs)")


@pytest.fixture(scope="module")
def served(project_site: Path) -> Iterator[str]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(project_site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_pages_open_without_console_errors(served: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = _chromium()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            titles = []
            for path in SECTIONS:
                response = page.goto(f"{served}/{path}")
                assert response is not None and response.ok, path
                page.wait_for_load_state("load")
                titles.append(page.title())
                if path == "guides/reference-pages/":
                    widths = page.eval_on_selector_all("article img", "imgs => imgs.map(i => i.naturalWidth)")
                    assert len(widths) == 3 and all(w > 0 for w in widths), widths
            assert errors == []
            assert len(set(titles)) == len(SECTIONS), titles
        finally:
            browser.close()
