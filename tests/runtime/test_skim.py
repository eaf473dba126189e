"""The bounded scan of a line too long to read (acpgen/runtime/_skim.py), on the source
module itself: what the two ends of a line say, and what they must not be taken to say."""

from __future__ import annotations

import json

import pytest

from acpgen.runtime._skim import SKIM, skim


def ends(frame: dict[str, object], pad: int = 3 * SKIM) -> tuple[bytes, bytes]:
    text = json.dumps(frame).replace('"PAD"', json.dumps("p" * pad)).encode()
    return text[:SKIM], text[-SKIM:]


@pytest.mark.parametrize(
    ("frame", "kind", "rid", "method"),
    [
        ({"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"x": "PAD"}}, "call", 7, "session/prompt"),
        ({"jsonrpc": "2.0", "method": "session/prompt", "params": {"x": "PAD"}, "id": "late"}, "call", "late", "session/prompt"),
        ({"params": {"x": "PAD"}, "method": "m", "id": None, "jsonrpc": "2.0"}, "call", None, "m"),
        ({"jsonrpc": "2.0", "method": "session/update", "params": {"x": "PAD"}}, "call", "-", "session/update"),
        ({"jsonrpc": "2.0", "id": 3, "result": {"content": "PAD"}}, "response", 3, None),
        ({"jsonrpc": "2.0", "result": {"content": "PAD"}, "id": 4}, "response", 4, None),
        ({"jsonrpc": "2.0", "error": {"code": 1, "message": "PAD"}, "id": "e"}, "response", "e", None),
    ],
)
def test_the_two_ends_name_the_id_and_kind(frame: dict[str, object], kind: str, rid: object, method: str | None) -> None:
    found = skim(*ends(frame))
    assert found.kind == kind and found.method == method
    if rid == "-":
        assert not found.has_id
    else:
        assert found.has_id and found.id == rid


def test_nested_ids_are_not_the_frames() -> None:
    """An ``id`` inside params, at either end, is not the request's."""
    head, tail = ends({"jsonrpc": "2.0", "method": "m", "params": {"id": 99, "x": "PAD", "last": {"id": 98}}})
    found = skim(head, tail)
    assert found.kind == "call" and not found.has_id
    head, tail = ends({"jsonrpc": "2.0", "method": "m", "params": {"x": "PAD", "y": ",\"id\":5}"}})
    assert not skim(head, tail).has_id


def test_an_id_that_is_not_an_id_is_not_read() -> None:
    found = skim(*ends({"jsonrpc": "2.0", "id": 1.5, "method": "m", "params": {"x": "PAD"}}))
    assert found.has_id and found.id == 1.5  # a number: an id (JSON-RPC discourages fractions only)
    found = skim(b'{"jsonrpc": "2.0", "id": NaN, "method": "m", "params": {"x": "', b'"}}')
    assert not found.has_id
    found = skim(*ends({"jsonrpc": "2.0", "id": True, "method": "m", "params": {"x": "PAD"}}))
    assert not found.has_id


def test_what_is_not_an_object_is_unknown() -> None:
    assert skim(b'["' + b"a" * 100, b"a" * 100 + b'"]').kind is None
    assert skim(b'"' + b"a" * 100, b"a" * 100 + b'"').kind is None
    assert skim(b"", b"").kind is None
