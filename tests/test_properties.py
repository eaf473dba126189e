"""Property tests over every def of upstream ``main`` (v1 and v2, stable and unstable).

For each def, Hypothesis draws instances from the JSON Schema (tests/strategies.py, an
independent reading of the schema, not acpgen's IR):

1. valid ones (jsonschema accepts them) are accepted by the Pydantic, dataclasses and
   TypedDict bindings and come back exactly as they went in;
2. mutated ones that jsonschema rejects are rejected by the Pydantic and dataclasses
   bindings with their documented error (``pydantic.ValidationError``, the module's
   ``ValidationError``) and never another exception;
3. except where the mutation lies under a property marked ``x-deserialize-*`` (the SDK's
   tolerant parsing): there the binding may accept, and must then give back a message
   that jsonschema accepts (the bad value replaced by its default or dropped).

The schema's JSON-RPC envelope defs (``ClientRequest``...: ``params`` typed by ``method``,
acpgen/normalise/frames.py) are drawn with a known method of their kind and that method's
params, since the bindings type ``params`` by ``method`` where the schema only asks for
*some* method's params.

The example budget is the Hypothesis profile: ``ci`` (default, sized for the suite) or
``fuzz`` (``make fuzz``), see tests/conftest.py.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from acpgen import api, ir
from acpgen.render.pytypes import refs_of

from . import corpus
from .conftest import generate, import_file
from .conftest import parse_as as parse
from .strategies import instances, mutated

pytestmark = corpus.needs_corpus

FILES = ["v1/schema.json", "v1/schema.unstable.json", "v2/schema.json", "v2/schema.unstable.json"]
STYLES = ("pydantic", "dataclasses", "typeddict")
LENIENT = ("x-deserialize-default-on-error", "x-deserialize-skip-invalid-items")
ANY_PROBES = (None, True, 0, 1.5, "", [], {}, [{"a": None}])
COUNTS: dict[str, int] = {"valid": 0, "invalid": 0, "lenient-accepted": 0, "defs": 0}


@lru_cache(maxsize=None)
def document(schema_file: str) -> dict[str, Any]:
    return json.loads((corpus.ACP / "main" / schema_file).read_text())  # type: ignore[no-any-return]


def _cases() -> list[Any]:
    if not corpus.releases():
        return []
    return [pytest.param(f, name, id=f"{f}:{name}") for f in FILES for name in sorted(document(f)["$defs"])]


@lru_cache(maxsize=None)
def validator(schema_file: str, name: str) -> Draft202012Validator:
    return Draft202012Validator({"$defs": document(schema_file)["$defs"], "$ref": f"#/$defs/{name}"})


@lru_cache(maxsize=None)
def lenient_names(schema_file: str) -> frozenset[str]:
    """Property names that carry an x-deserialize-* flag somewhere in the file."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, prop in (node.get("properties") or {}).items():
                if isinstance(prop, dict) and any(prop.get(flag) for flag in LENIENT):
                    found.add(key)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document(schema_file))
    return frozenset(found)


_MODULES: dict[tuple[str, str], Any] = {}


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Any]:
    if not _MODULES:
        out = generate(corpus.ACP / "main", tmp_path_factory.mktemp("main"), STYLES, formatted=False)
        for f in FILES:
            tree, name = f.split("/")
            stem = tree + ("_unstable" if "unstable" in name else "")
            for style in STYLES:
                _MODULES[(f, style)] = import_file(out / f"acp_{style}" / f"{stem}.py")
    return _MODULES


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Any:
    yield
    request.config.cache.set("acpgen/properties", COUNTS)


@lru_cache(maxsize=None)
def envelopes(schema_file: str) -> dict[str, tuple[str, tuple[tuple[str, str], ...]]]:
    """Envelope def -> (kind, the (method, params def) pairs its ``params`` names)."""
    built = api.build_ir(corpus.ACP / "main" / schema_file)
    protocol = built[0].protocol
    out = {}
    for d in protocol.defs:
        if isinstance(d, ir.ObjectDef) and d.by_method:
            params = next(f for f in d.fields if f.wire_name == "params")
            refs = refs_of(params.type)
            pairs = tuple((m.name, m.params) for m in protocol.methods if m.kind == d.by_method and m.params in refs)
            out[d.key] = (d.by_method, pairs)
    return out


def valid_instances(schema_file: str, name: str) -> st.SearchStrategy[Any]:
    check = validator(schema_file, name)
    root = document(schema_file)
    envelope = envelopes(schema_file).get(name)
    if envelope is None:
        return instances(root, {"$ref": f"#/$defs/{name}"}).filter(check.is_valid)
    kind, pairs = envelope

    def frame(pair: tuple[str, str]) -> st.SearchStrategy[Any]:
        members = {"method": st.just(pair[0]), "params": instances(root, {"$ref": f"#/$defs/{pair[1]}"})}
        if kind == "request":
            members["id"] = st.one_of(st.integers(0, 2**31), st.text(max_size=8))
        return st.fixed_dictionaries(members)

    return st.sampled_from(pairs).flatmap(frame).filter(check.is_valid)


@pytest.mark.parametrize(("schema_file", "name"), _cases())
def test_valid_instances_round_trip_in_every_style(schema_file: str, name: str, modules: dict[tuple[str, str], Any]) -> None:
    COUNTS["defs"] += 1

    @given(valid_instances(schema_file, name))
    def check(value: Any) -> None:
        COUNTS["valid"] += 1
        for style in STYLES:
            accepted, back = parse(style, modules[(schema_file, style)], name, value)
            assert accepted, f"{style} rejected a valid {name}"
            assert back == value, f"{style} changed a valid {name}"

    check()


@pytest.mark.parametrize(("schema_file", "name"), _cases())
def test_invalid_instances_are_rejected(schema_file: str, name: str, modules: dict[tuple[str, str], Any]) -> None:
    check_schema = validator(schema_file, name)
    tolerant = lenient_names(schema_file)
    if all(check_schema.is_valid(probe) for probe in ANY_PROBES):
        pytest.skip(f"{name} accepts any JSON value: no instance of it is invalid")

    @given(st.data())
    def check(data: st.DataObject) -> None:
        value = data.draw(valid_instances(schema_file, name))
        bad, path = data.draw(mutated(value))
        assume(not check_schema.is_valid(bad))
        note(f"mutated at {path}")
        COUNTS["invalid"] += 1
        lenient = any(isinstance(token, str) and token in tolerant for token in path)
        for style in ("pydantic", "dataclasses"):
            accepted, back = parse(style, modules[(schema_file, style)], name, bad)
            if not accepted:
                continue
            assert lenient, f"{style} accepted an invalid {name}"
            COUNTS["lenient-accepted"] += 1
            assert check_schema.is_valid(back), f"{style} tolerated {path} but gave back an invalid {name}"

    check()
