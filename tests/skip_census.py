"""A pytest plugin (``-p tests.skip_census``) that writes, once collection is done, every
collected test with the reason it would be skipped for (``null`` when it would run) to the
JSON file named by ``ACPGEN_SKIP_CENSUS``: how `tests/test_clean_start.py` sees what a
fresh clone without ``../shared`` collects, without running anything."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _pytest.skipping import evaluate_skip_marks


def pytest_collection_finish(session: pytest.Session) -> None:
    target = os.environ.get("ACPGEN_SKIP_CENSUS")
    if not target:
        return
    census = {}
    for item in session.items:
        skip = evaluate_skip_marks(item)
        census[item.nodeid] = None if skip is None else skip.reason
    Path(target).write_text(json.dumps(census, indent=1, sort_keys=True))
