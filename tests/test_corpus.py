"""Every upstream release builds; every real message round-trips (../shared/corpus)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from acpgen import api
from acpgen.render import render_python
from acpgen.header import Inputs

from . import corpus
from .conftest import generate, import_file

pytestmark = corpus.needs_corpus


@pytest.mark.parametrize("release", corpus.releases())
def test_release_builds(release: str) -> None:
    built = api.build_ir(corpus.ACP / release)
    assert built, release
    for b in built:
        rendered = render_python(b.protocol, b.names, Inputs(b.protocol.label, "x", "0", None, style="pydantic"), "pydantic")
        compile(rendered.text, str(rendered.path), "exec")
        defs = {d.key for d in b.protocol.defs}
        raw_defs = set(b.raw.data.get("$defs", {}))
        assert raw_defs <= defs, "every $defs entry is in the IR"
        # no generated class name ends in a digit the schema did not have
        for key, name in b.names.types.items():
            if re.search(r"\d$", name):
                assert re.search(r"\d$", key.split("#")[-1].split(".")[-1]), (key, name)


_MODULES: dict[tuple[str, str], Any] = {}


def _module(tmp_root: Path, release: str, schema_file: str) -> Any:
    tree, name = schema_file.split("/")
    stem = tree + ("_unstable" if "unstable" in name else "")
    key = (release, stem)
    if key not in _MODULES:
        out = tmp_root / release
        if not (out / "acpgen-manifest.json").exists():
            generate(corpus.ACP / release, out, formatted=False)
        _MODULES[key] = import_file(out / "acp_pydantic" / f"{stem}.py")
    return _MODULES[key]


def _cases(status: str) -> list[Any]:
    if not corpus.releases():
        return []
    return [
        pytest.param(m, id=m["id"])
        for m in corpus.messages()
        if m["validation"]["status"] == status and m.get("file")
    ]


@pytest.fixture(scope="module")
def module_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("corpus-modules")


@pytest.mark.parametrize("message", _cases("pass"))
def test_pass_message_round_trips(message: dict[str, Any], module_root: Path) -> None:
    release = corpus.nearest_release(message["written_for"]["release"])
    module = _module(module_root, release, message["written_for"]["schema_file"])
    data = corpus.payload(message)
    ta = TypeAdapter(getattr(module, message["type"]))
    value = ta.validate_json(json.dumps(data))
    assert ta.dump_python(value, mode="json", by_alias=True, exclude_unset=True) == data


@pytest.mark.parametrize("message", _cases("fail"))
def test_fail_message_agrees_with_jsonschema(message: dict[str, Any], module_root: Path) -> None:
    """jsonschema rejected these; acpgen must too (a disagreement is reported here)."""
    release = corpus.nearest_release(message["written_for"]["release"])
    module = _module(module_root, release, message["written_for"]["schema_file"])
    tp = getattr(module, message["type"], None)
    if tp is None:
        pytest.skip(f"{message['type']} is not in {release}")
    with pytest.raises(ValidationError):
        TypeAdapter(tp).validate_json(json.dumps(corpus.payload(message)))
