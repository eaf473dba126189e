"""The bindings agree with the referee on every def of every schema file: each distinct
corpus file (v0.0.1 to ``main``) and the files the ``@agentclientprotocol/sdk`` package
ships on npm (read from ``node_modules``, installed pinned as for the interop test).

For each file, every module is generated in the three styles and imported; then, per
def, values are drawn from the JSON Schema (tests/strategies.py, an independent reading)
and, half of the time, mutated (a member dropped or retyped, ``null``, an unknown or
``_``-prefixed tag or enum value, an unknown member). Each value gets the same verdict
from every style as from the referee (jsonschema with the file's ``x-deserialize-*``
marks, tests/referee.py), and an accepted value comes back as the referee repaired it.

The JSON-RPC envelope defs (``ClientRequest``...) are left to test_properties.py: the
bindings type their ``params`` by ``method``, where the schema takes any method's.

The example budget follows the Hypothesis profile (a quarter of its examples, each one
value per def): two per def in ``make test`` (``ci``), 75 under ``make fuzz``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from acpgen import api, ir

from . import corpus
from .conftest import generate, import_file, npm_install, parse_as
from .referee import Referee
from .strategies import instances, mutated
from .runtime.test_jsonrpc_corpus import _files

STYLES = ("pydantic", "dataclasses", "typeddict")
INTEROP = Path(__file__).parent / "interop"
NPM_SCHEMAS = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"
NPM_FILES = ("v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json")
#: values drawn per def and example (the profile's max_examples examples per file)
PER_DEF = 1


def _cases() -> list[Any]:
    cases = [pytest.param(p, id=f"{p.parent.parent.name}/{p.parent.name}/{p.name}") for p in _files()]
    if not cases:  # without the corpus its files are one test that says why it skips
        cases = [pytest.param(corpus.ACP, id="corpus", marks=corpus.needs_corpus)]
    cases += [pytest.param(f"npm:{f}", id=f"npm/{f}") for f in NPM_FILES]
    return cases


def _module_stem(path: Path) -> str:
    return path.parent.name + ("_unstable" if "unstable" in path.name else "")


def _envelopes(path: Path) -> tuple[set[str], set[str]]:
    """The envelope defs (left to test_properties) and the untagged unions."""
    built = [b for b in api.build_ir(path) if Path(b.raw.source.path).resolve() == path.resolve()]
    defs = built[0].protocol.defs
    return (
        {d.key for d in defs if isinstance(d, ir.ObjectDef) and d.by_method},
        {d.key for d in defs if isinstance(d, ir.UnionDef)},
    )


@pytest.mark.parametrize("source", _cases())
def test_every_def_agrees_with_the_referee(source: Path | str, tmp_path: Path) -> None:
    if isinstance(source, str):
        npm_install(INTEROP, "@agentclientprotocol/sdk", "the npm-schema differential")
        path = NPM_SCHEMAS / source.removeprefix("npm:")
    else:
        if not corpus.releases():
            pytest.skip(corpus.ABSENT)
        path = source
    document = json.loads(path.read_text())
    referee = Referee(document)
    out = generate(path, tmp_path, STYLES, formatted=False)
    modules = {s: import_file(out / f"acp_{s}" / f"{_module_stem(path)}.py") for s in STYLES}
    skip, untagged = _envelopes(path)
    strict = referee.strict
    names = [n for n in sorted(document["$defs"]) if n not in skip]
    counts = {"values": 0, "accepted": 0}
    disagreements: dict[tuple[str, str, str], str] = {}

    # every def in one example, disagreements collected (not raised), so that one run
    # reports them all; no shrinking over a whole file's draws
    @settings(
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
        max_examples=max(1, settings().max_examples // 4),
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        for name in names:
            for _ in range(PER_DEF):
                value = data.draw(instances(document, {"$ref": f"#/$defs/{name}"}), label=name)
                if data.draw(st.booleans()):
                    value = data.draw(mutated(value))[0]
                expected, repaired = referee.judge(name, value)
                counts["values"] += 1
                counts["accepted"] += expected
                for style in STYLES:
                    accepted, back = parse_as(style, modules[style], name, value)
                    if accepted != expected:
                        verdict = "accepted" if accepted else "rejected"
                        disagreements.setdefault((name, style, verdict), json.dumps(value)[:300])
                    elif accepted and not strict(name, back):
                        disagreements.setdefault((name, style, "gave back invalid"), f"{json.dumps(value)[:200]} -> {json.dumps(back)[:200]}")
                    elif accepted and back != repaired and name not in untagged:
                        # (an untagged union may read a value as another member than the
                        # referee's first match: only validity is asked of it)
                        disagreements.setdefault((name, style, "changed"), f"{json.dumps(value)[:200]} -> {json.dumps(back)[:200]}")

    check()
    assert counts["values"] >= len(names)
    report = "\n".join(f"{n} {s} {v}: {x}" for (n, s, v), x in sorted(disagreements.items()))
    assert not disagreements, f"{len(disagreements)} disagreements with the referee:\n{report}"
