"""Retake the screenshots of docs/images/ (the reference pages as a reader sees them).

    .venv/bin/python docs/screenshots.py [--corpus ../shared/corpus/acp]

Writes the site of upstream ``main`` with the history of every corpus release
(``acpgen site``), builds it with mkdocs, serves it from loopback and photographs three
views in headless Chromium (the Debian package ``chromium``; Playwright drives it, nothing
is downloaded) at a 1000x560 viewport. Not part of the site (``exclude_docs``)."""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

#: open the alternatives that follow the first "At least one of" and scroll to them
ALTERNATIVES = """() => {
  const p = [...document.querySelectorAll("p")].find(e => e.textContent.startsWith("At least one of"));
  let a = p.closest("details");
  while (a) { a.open = true; a = a.parentElement.closest("details"); }
  let n = p.nextElementSibling;
  while (n && n.tagName === "DETAILS") { n.open = true; n = n.nextElementSibling; }
  window.scrollTo(0, p.getBoundingClientRect().top + window.scrollY - 130);
}"""

SHOTS = (
    ("history-marks.png", "/main/v1/schema/#initializeresponse", None),
    ("changes-page.png", "/main/v1/changes/", None),
    ("alternatives.png", "/main/v2/draft/schema/", ALTERNATIVES),
)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus" / "acp")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        run = functools.partial(subprocess.run, check=True)
        run([str(BIN / "acpgen"), "site", "--schema", str(args.corpus / "main"), "--history", str(args.corpus), "--out", str(site)])
        run([str(BIN / "mkdocs"), "build", "--strict", "-q"], cwd=site)
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site / "html")))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1000, "height": 560})
                for name, path, script in SHOTS:
                    page.goto(base + path)
                    page.wait_for_timeout(400)
                    if script:
                        page.evaluate(script)
                        page.wait_for_timeout(300)
                    page.screenshot(path=str(ROOT / "docs" / "images" / name))
                    print(f"docs/images/{name}")
                browser.close()
        finally:
            httpd.shutdown()
            httpd.server_close()


if __name__ == "__main__":
    main()
