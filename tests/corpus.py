"""Access to ../shared/corpus (upstream data, never copied here) for the corpus tests.

``ACPGEN_SHARED`` names another directory to read instead of ``../shared`` (``.ci/run``
points it at an empty one to prove that a fresh clone without the corpus collects and
skips, saying why)."""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("ACPGEN_SHARED") or ROOT.parent / "shared")
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
ACP = CORPUS / "acp"
MESSAGES = CORPUS / "messages"
ABSENT = f"{CORPUS} is absent: the upstream corpus is read in place, never copied"


def present() -> bool:
    return (ACP / "INDEX.json").is_file()


#: every test that reads the corpus carries this mark, parametrised ones too (their list is
#: empty without the corpus, and pytest's own reason would not say why)
needs_corpus = pytest.mark.skipif(not present(), reason=ABSENT)


needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"{SEEDS} is absent: the seed pages are read in place")


@lru_cache(maxsize=1)
def index() -> dict[str, Any]:
    return json.loads((ACP / "INDEX.json").read_text())


def releases() -> list[str]:
    if not present():
        return []
    return [r["release"] for r in index()["releases"]]


def version_key(release: str) -> tuple[float, ...]:
    """Order releases: v0.x.y and schema-v1.x.y share one line (schema-v1.13.7 = v0.13.7)."""
    if release == "main":
        return (float("inf"),)
    m = re.match(r"^(?:schema-)?v(\d+)\.(\d+)\.(\d+)(?:-(alpha|beta|rc)\.(\d+))?$", release)
    if not m:
        return (-1.0,)
    major, minor, patch = int(m[1]), int(m[2]), int(m[3])
    if release.startswith("schema-"):
        major = 0
    pre = (0.0, float(m[5])) if m[4] else (1.0, 0.0)
    return (float(major), float(minor), float(patch), *pre)


def nearest_release(release: str) -> str:
    """The release itself when it is in the sample, else the newest one before it."""
    present = releases()
    if release in present:
        return release
    key = version_key(release)
    before = [r for r in present if version_key(r) <= key]
    if before:
        return max(before, key=version_key)
    return min(present, key=version_key)


@lru_cache(maxsize=1)
def messages() -> list[dict[str, Any]]:
    return list(json.loads((MESSAGES / "MESSAGES.json").read_text())["messages"])


def payload(message: dict[str, Any]) -> Any:
    return json.loads((MESSAGES / message["file"]).read_text())
