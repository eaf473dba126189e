"""Loader fuzzing: real corpus schemas with Hypothesis-chosen damage (nodes dropped,
retyped, duplicated, $refs redirected) either build in every style or stop with
catalogued diagnostics; never an uncaught exception, and never Python output that does
not compile (black's ACPG602 would then be acpgen's own bug).

The budget is the Hypothesis profile (``ci`` in the suite, ``fuzz`` for ``make fuzz``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from acpgen import api
from acpgen.config import Config, Target
from acpgen.errors import CATALOGUE, AcpgenError

from . import corpus
from .strategies import paths_of

pytestmark = corpus.needs_corpus

#: one schema file of each era (small, mid-size with unstable methods, v2 tree, main)
SEEDS = ["v0.0.1/v1/schema.json", "v0.8.0/v1/schema.unstable.json", "schema-v1.13.7/v2/schema.json", "main/v1/schema.json"]
STYLES = ("pydantic", "dataclasses", "typeddict", "mdx", "md")
STATS: dict[str, int] = {"built": 0, "rejected": 0}
WRONG = [None, True, 7, -1.5, "", "#/$defs/Nope", "strnig", [], {}, [1, "a"], {"type": 3}, {"$ref": "#/$defs/Nope"}]


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for token in path[:-1]:
        doc = doc[token]
    return doc


@st.composite
def damaged(draw: st.DrawFn, seed: str) -> tuple[dict[str, Any], list[str]]:
    doc = json.loads((corpus.ACP / seed).read_text())
    done: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in paths_of(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _parent(doc, path), path[-1]
        op = draw(st.sampled_from(["drop", "retype", "duplicate", "redirect"]))
        if op == "drop":
            del parent[key]
        elif op == "retype":
            parent[key] = copy.deepcopy(draw(st.sampled_from(WRONG)))
        elif op == "duplicate":
            target = draw(st.sampled_from(paths))
            if target[: len(path)] != path:  # never into itself
                _parent(doc, target)[target[-1]] = copy.deepcopy(parent[key])
            if isinstance(parent, list):
                parent.append(copy.deepcopy(parent[key]))
        else:
            defs = sorted(doc.get("$defs", {})) if isinstance(doc.get("$defs"), dict) else []
            if defs:
                parent[key] = {"$ref": "#/$defs/" + draw(st.sampled_from(defs))}
        done.append(f"{op} {'/'.join(map(str, path))}")
    return doc, done


@pytest.mark.parametrize("seed", SEEDS)
def test_damaged_schemas_build_or_fail_cleanly(seed: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("fuzz")
    meta = corpus.ACP / seed.replace("schema", "meta")

    @settings(max_examples=4 * settings.default.max_examples)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        doc, steps = data.draw(damaged(seed), label="damaged schema")
        note("damage: " + "; ".join(steps))
        path = home / Path(seed).name
        path.write_text(json.dumps(doc))
        if meta.is_file():
            (home / meta.name).write_text(meta.read_text())
        config = Config(home, (Target("fuzz", path, home / "out", STYLES),))
        try:
            files = api.render_target(config.targets[0], config, formatted=False)
        except AcpgenError as exc:
            assert exc.diagnostics and all(d.code in CATALOGUE for d in exc.diagnostics)
            assert all(d.code != "ACPG602" for d in exc.diagnostics)
            STATS["rejected"] += 1
            return
        for rel, text in files.items():
            if rel.suffix == ".py":
                compile(text, str(rel), "exec")
        STATS["built"] += 1

    check()


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Any:
    yield
    request.config.cache.set("acpgen/fuzz", STATS)
