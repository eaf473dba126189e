"""A fresh clone without ``../shared``: the whole suite collects, and every test that
needs the upstream corpus says so when it is skipped (docs/getting-started.md: "The corpus
tests read `../shared/corpus` in place and are skipped, with that reason, when it is absent").
``ACPGEN_SHARED`` points the corpus locator (`tests/corpus.py`) at another directory;
``.ci/run`` also runs the corpus test files that way before the full run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests import corpus


def _collect_without_shared(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, str | None]]:
    census = tmp_path / "census.json"
    env = {**os.environ, "ACPGEN_SHARED": str(tmp_path / "no-shared"), "ACPGEN_SKIP_CENSUS": str(census)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "tests.skip_census", "-p", "no:cacheprovider"],
        cwd=corpus.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, (json.loads(census.read_text()) if census.is_file() else {})


def test_the_suite_collects_without_the_corpus_and_says_why_it_skips(tmp_path: Path) -> None:
    done, census = _collect_without_shared(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert census, "the census plugin wrote nothing"
    # a parametrisation read from the corpus is empty without it: pytest's own reason
    # ("got empty parameter set") would hide that the corpus is what is missing
    unexplained = sorted(n for n, why in census.items() if why is not None and why.startswith("got empty parameter set"))
    assert not unexplained, unexplained
    absent = str(tmp_path / "no-shared")
    skipped = {n: why for n, why in census.items() if why is not None and "is absent" in why}
    assert skipped, "no test skipped for the missing corpus: is the locator still reading ../shared?"
    assert all(absent in why for why in skipped.values()), "a skip reason names another directory than ACPGEN_SHARED"
    # the corpus test files are all there, each test skipped for the corpus
    for name in ("test_corpus.py", "diff/test_diff_corpus.py", "test_styles_corpus.py", "overlay/test_overlay_corpus.py"):
        of_file = {n: why for n, why in census.items() if n.startswith(f"tests/{name}::")}
        assert of_file and all(why is not None and absent in why for why in of_file.values()), name


def test_the_locator_follows_acpgen_shared(tmp_path: Path) -> None:
    env = {**os.environ, "ACPGEN_SHARED": str(tmp_path)}
    code = "from tests import corpus; print(corpus.CORPUS, corpus.SEEDS, corpus.present(), sep='|')"
    out = subprocess.run([sys.executable, "-c", code], cwd=corpus.ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip().split("|") == [str(tmp_path / "corpus"), str(tmp_path / "seeds"), "False"]
