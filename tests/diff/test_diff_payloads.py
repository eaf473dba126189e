"""The payload check of #25: each fixture pair that lists payloads (``payloads``: of the
old release, validated against the new one; ``new_payloads``: of the new release, against
the old one) must agree with jsonschema, and the records of the case must agree with both.

* ``compatible``: valid on both sides, and no ``error`` record on that def;
* ``breaks``: valid on its own side, invalid on the other, and an ``error`` or ``warning``
  record on that def (the verdict of a possible or definite break);
* ``gated``: invalid on the other side, but the case's record on that def is ``info``
  with the gate in its note: the payload is never sent to a peer of the other release.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.diff.diff_helpers import CASES, patched, run_case

WITH_PAYLOADS = sorted(n for n, c in CASES.items() if "payloads" in c or "new_payloads" in c)


def _valid(doc: dict[str, Any], def_name: str, payload: object) -> bool:
    if def_name not in doc["$defs"]:  # the def is gone: nothing accepts its payload
        return False
    schema = dict(doc, **{"$ref": f"#/$defs/{def_name}"})
    return jsonschema.Draft202012Validator(schema).is_valid(payload)


def _samples(entries: list[Any]) -> list[dict[str, Any]]:
    """``[payload, verdict]``, ``[payload, verdict, variant]``, or a mapping with
    ``payload``, ``verdict``, and optionally ``variant`` and ``subject`` (the record's,
    when it is not the def: a method)."""
    out = []
    for e in entries:
        if isinstance(e, dict):
            out.append(e)
        else:
            out.append({"payload": e[0], "verdict": e[1], "variant": e[2] if len(e) > 2 else None})
    return out


def test_every_family_pair_has_payloads() -> None:
    families = {n for n, c in CASES.items() if "family" in c}
    assert families <= set(WITH_PAYLOADS), sorted(families - set(WITH_PAYLOADS))


@pytest.mark.parametrize("name", WITH_PAYLOADS)
def test_payloads_agree_with_the_verdict(tmp_path: Path, name: str) -> None:
    case = CASES[name]
    old, new = patched(case.get("old", [])), patched(case.get("new", []))
    changes = [c for c in run_case(tmp_path, name) if c.file == "v1/schema.json"]
    for key, own, other in (("payloads", old, new), ("new_payloads", new, old)):
        for def_name, entries in case.get(key, {}).items():
            for sample in _samples(entries):
                payload, verdict = sample["payload"], sample["verdict"]
                subject = sample.get("subject") or def_name
                variant = sample.get("variant")
                records = [
                    c for c in changes if c.subject.split(" -> ")[0].split(".")[0] == subject and c.variant == variant
                ]
                assert _valid(own, def_name, payload), (def_name, payload, "not valid on its own side")
                there = _valid(other, def_name, payload)
                if verdict == "compatible":
                    assert there, (def_name, payload, "the rule calls it compatible; jsonschema rejects it")
                    assert all(c.level != "error" for c in records), records
                elif verdict == "breaks":
                    assert not there, (def_name, payload, "the rule calls it breaking; jsonschema accepts it")
                    assert any(c.level in ("error", "warning") for c in records), records
                else:
                    assert verdict == "gated", verdict
                    assert not there, (def_name, payload, "accepted on the other side: no gate needed")
                    assert records and all(c.level == "info" and c.note for c in records), records
