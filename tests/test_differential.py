"""Differential test against datamodel-code-generator (the reference) on `main` v1 and v2 stable.

Every corpus message that datamodel-code-generator's Pydantic output accepts is fed to
acpgen's module for the same file. Where jsonschema agrees the message is valid, acpgen must
accept it and re-serialise it exactly; where jsonschema rejects it (the reference is lax, e.g.
it coerces ``"1"`` to ``1``), acpgen must reject it too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from . import corpus
from .conftest import generate, import_file

pytestmark = corpus.needs_corpus

TARGETS = ("v1/schema.json", "v2/schema.json")


def _dcg(schema: Path, out: Path) -> Any:
    exe = Path(sys.executable).parent / "datamodel-codegen"
    if not exe.exists() and shutil.which("datamodel-codegen") is None:
        pytest.skip("datamodel-code-generator is not installed (it is a dev dependency)")
    subprocess.run(
        [
            str(exe if exe.exists() else "datamodel-codegen"),
            "--input", str(schema),
            "--input-file-type", "jsonschema",
            "--output-model-type", "pydantic_v2.BaseModel",
            "--output", str(out),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return import_file(out)


def _lenient(node: Any) -> Any:
    """The schema as a lenient reader sees it: a member with
    ``x-deserialize-default-on-error`` accepts any value (an invalid one becomes the
    default), an array with ``x-deserialize-skip-invalid-items`` accepts any items."""
    if isinstance(node, list):
        return [_lenient(v) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("x-deserialize-default-on-error") is True:
        return {}
    out = {k: _lenient(v) for k, v in node.items()}
    if node.get("x-deserialize-skip-invalid-items") is True:
        out["items"] = {}
    return out


def _accepts(tp: Any, data: Any) -> tuple[bool, Any]:
    adapter = TypeAdapter(tp)
    try:
        value = adapter.validate_json(json.dumps(data))
    except ValidationError:
        return False, None
    return True, adapter.dump_python(value, mode="json", by_alias=True, exclude_unset=True)


@pytest.mark.parametrize("target", TARGETS)
def test_acpgen_accepts_what_the_reference_accepts(target: str, tmp_path: Path) -> None:
    schema_path = corpus.ACP / "main" / target
    reference = _dcg(schema_path, tmp_path / "reference.py")
    generate(corpus.ACP / "main", tmp_path / "acpgen")
    ours = import_file(tmp_path / "acpgen" / "acp_pydantic" / f"{target.split('/')[0]}.py")
    document = json.loads(schema_path.read_text())
    validator_cls = jsonschema.validators.validator_for(document)

    lenient_defs = _lenient(document["$defs"])
    compared = lax = lenient = 0
    disagreements: list[str] = []
    for message in corpus.messages():
        if not message.get("file") or not message.get("type"):
            continue
        name = message["type"]
        if not hasattr(reference, name) or not hasattr(ours, name):
            continue
        data = corpus.payload(message)
        ok, _ = _accepts(getattr(reference, name), data)
        if not ok:
            continue
        ref = f"#/$defs/{name}"
        valid = validator_cls({"$schema": document.get("$schema"), "$defs": document["$defs"], "$ref": ref}).is_valid(data)
        tolerated = validator_cls({"$schema": document.get("$schema"), "$defs": lenient_defs, "$ref": ref}).is_valid(data)
        got, dumped = _accepts(getattr(ours, name), data)
        compared += 1
        if valid and not got:
            disagreements.append(f"{message['id']}: reference and jsonschema accept, acpgen rejects")
        elif valid and dumped != data:
            disagreements.append(f"{message['id']}: acpgen re-serialises differently")
        elif not valid and tolerated:
            lenient += 1  # x-deserialize-* leniency: accepting is the documented behaviour
            if not got:
                disagreements.append(f"{message['id']}: x-deserialize-* leniency applies, acpgen rejects")
        elif not valid:
            lax += 1
            if got:
                disagreements.append(f"{message['id']}: jsonschema rejects, acpgen accepts")
    print(
        f"{target}: {compared} messages the reference accepts; jsonschema rejects {lax}, "
        f"x-deserialize leniency admits {lenient}"
    )
    assert compared >= 50, "the corpus sample should exercise the comparison"
    assert disagreements == []
