"""Cross-style agreement over the corpus: Pydantic, dataclasses and TypedDict (through
pydantic.TypeAdapter) accept and reject the same messages, and give back the same wire JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from . import corpus
from .conftest import generate, import_file, parse_as

pytestmark = corpus.needs_corpus

STYLES = ("pydantic", "dataclasses", "typeddict")
_MODULES: dict[tuple[str, str, str], Any] = {}


def _modules(root: Path, release: str, schema_file: str) -> dict[str, Any]:
    tree, name = schema_file.split("/")
    stem = tree + ("_unstable" if "unstable" in name else "")
    out = root / release
    if not (out / "acpgen-manifest.json").exists():
        generate(corpus.ACP / release, out, STYLES, formatted=False)
    for style in STYLES:
        key = (release, stem, style)
        if key not in _MODULES:
            _MODULES[key] = import_file(out / f"acp_{style}" / f"{stem}.py")
    return {style: _MODULES[(release, stem, style)] for style in STYLES}


def _cases() -> list[Any]:
    if not corpus.releases():
        return []
    return [
        pytest.param(m, id=m["id"])
        for m in corpus.messages()
        if m["validation"]["status"] in ("pass", "fail") and m.get("file")
    ]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("styles")


@pytest.mark.parametrize("message", _cases())
def test_styles_agree(message: dict[str, Any], root: Path) -> None:
    release = corpus.nearest_release(message["written_for"]["release"])
    modules = _modules(root, release, message["written_for"]["schema_file"])
    if not hasattr(modules["pydantic"], message["type"]):
        pytest.skip(f"{message['type']} is not in {release}")
    data = corpus.payload(message)
    results = {style: parse_as(style, modules[style], message["type"], data) for style in STYLES}
    assert results["dataclasses"] == results["pydantic"]
    assert results["typeddict"] == results["pydantic"]
    if message["validation"]["status"] == "pass":
        assert results["pydantic"] == (True, data)
    else:
        assert results["pydantic"][0] is False


@pytest.mark.parametrize("schema_file", ["v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json"])
def test_every_def_is_exported_in_every_style(schema_file: str, root: Path) -> None:
    modules = _modules(root, "main", schema_file)
    names = set(json.loads((corpus.ACP / "main" / schema_file).read_text())["$defs"])
    for style, module in modules.items():
        assert names - set(module.__all__) == set(), style
        assert all(hasattr(module, n) for n in names), style
