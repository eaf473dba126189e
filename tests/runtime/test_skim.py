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


HEAD_ONLY = b""  # a tail that says nothing: what the head says is all there is


def test_the_head_reads_members_after_nested_objects_and_arrays() -> None:
    """The id and method after params holding objects in arrays in objects, several deep,
    each holding an ``id`` of its own: the top-level ones are read, the nested ones not."""
    head = (
        b'{"jsonrpc": "2.0", "params": {"a": [1, {"b": [2, {"id": 3}]}], "c": {"id": 5,'
        b' "d": {"id": 6}}, "e": [[{"id": 4}]]}, "id": 7, "method": "m", "x": "' + b"p" * 100
    )
    assert skim(head, HEAD_ONLY) == (("call", True, 7, "m"))


def test_the_first_member_of_the_head_is_read() -> None:
    assert skim(b'{"id": 3, "result": {"x": "' + b"p" * 100, HEAD_ONLY) == ("response", True, 3, None)


def test_a_whole_object_in_the_head_and_nothing_after_it() -> None:
    """A head holding a whole object reads it; a second object after it on the same line
    is not the frame's."""
    assert skim(b'{"id": 1, "method": "m"}', HEAD_ONLY) == ("call", True, 1, "m")
    assert skim(b'{"jsonrpc": "2.0"} {"id": 5, "method": "m", "x": "' + b"p" * 100, HEAD_ONLY) == (None, False, None, None)


def test_a_key_that_is_not_json_ends_the_head() -> None:
    """A broken key (an escape JSON has not) ends what the head says: what came before it
    stands, nothing after it is read."""
    found = skim(b'{"id": 2, "\\q": 1, "method": "m", "x": "' + b"p" * 100, HEAD_ONLY)
    assert found == (None, True, 2, None)


@pytest.mark.parametrize("end", [b"}", b"}\n", b"} \r\n", b"}\t  "])
def test_the_tail_alone_names_the_kind_id_and_method(end: bytes) -> None:
    """Compact or spaced, with whitespace after the closing brace: the tail's members give
    the kind, the id and the method when the head says nothing."""
    assert skim(b"", b'pp"}, "id": 1, "result": null' + end) == ("response", True, 1, None)
    assert skim(b"", b'pp"},"method":"m","id":5' + end) == ("call", True, 5, "m")


def test_an_id_not_read_is_none() -> None:
    found = skim(*ends({"jsonrpc": "2.0", "id": True, "method": "m", "params": {"x": "PAD"}}))
    assert (found.has_id, found.id) == (False, None)


def test_a_member_after_an_array_of_the_top_level_is_read() -> None:
    head = b'{"jsonrpc": "2.0", "params": [1, [2], {"id": 3}], "id": 7, "method": "m", "x": "' + b"p" * 100
    assert skim(head, HEAD_ONLY) == ("call", True, 7, "m")


def test_a_method_inside_params_is_not_the_frames() -> None:
    """A ``method`` one level down, after a nested object has closed, stays nested."""
    head = b'{"params": {"a": {"b": 1}, "method": "evil"}, "id": 7, "x": "' + b"p" * 100
    assert skim(head, HEAD_ONLY) == ("call", True, 7, None)


def test_a_broken_head_is_read_for_what_it_says_first() -> None:
    """A member's value is the first token after its colon; an id whose value is an
    object is no id, whatever stray token follows it."""
    assert skim(b'{"id": 1 2, "method": "m", "x": "' + b"p" * 100, HEAD_ONLY) == ("call", True, 1, "m")
    assert skim(b'{"id": {"a": 1} 2, "method": "m", "x": "' + b"p" * 100, HEAD_ONLY) == ("call", False, None, "m")
