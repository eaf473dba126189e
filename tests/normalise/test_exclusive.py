"""Disjointness of the members of an untagged ``oneOf`` (acpgen/normalise/exclusive.py):
a pair is disjoint only when proved so; JSON kinds meet as JSON Schema says they do
(``integer`` is a kind of ``number``: ``1`` is valid for both)."""

from __future__ import annotations

from typing import Any

import pytest

from acpgen.normalise.exclusive import (
    ALL_KINDS,
    exclusivity,
    kinds,
    may_overlap,
    values,
)


def _nothing(ref: str) -> Any:
    return None


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ({"type": "integer"}, {"type": "number"}, True),  # 1 is both
        ({"type": "number"}, {"type": "integer"}, True),
        ({"type": "number"}, {"const": 2}, True),
        ({"type": "integer"}, {"const": 2.5}, False),
        ({"type": "integer"}, {"type": "string"}, False),
        ({"type": "number"}, {"type": "boolean"}, False),
    ],
)
def test_kinds_meet_as_json_schema_says(a: Any, b: Any, overlap: bool) -> None:
    assert may_overlap(a, b, _nothing) is overlap


def test_an_integer_and_a_number_member_are_checked() -> None:
    assert exclusivity([{"type": "integer"}, {"type": "number"}], _nothing) == "checked"
    assert kinds({"type": "number"}, _nothing) == {"integer", "number"}


DEFS: dict[str, Any] = {
    "Color": {"type": "string", "enum": ["red", "blue"]},
    "Shade": {"type": "string", "enum": ["dark", "light"]},
    "Num": {"type": "integer"},
    "Text": {"$ref": "#/$defs/Str"},  # a chain of references
    "Str": {"type": "string"},
    "Never": False,
}


def _resolve(ref: str) -> Any:
    return DEFS.get(ref.rsplit("/", 1)[-1])


def _obj(
    props: dict[str, Any], required: list[Any] | None = None, **more: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, **more}
    if required is not None:
        out["required"] = required
    return out


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


PAIRS: list[tuple[str, Any, Any, bool]] = [
    # kinds of constant values (JSON: 1.0 is an integer, true is not a number)
    ("null-const", {"const": None}, {"type": "null"}, True),
    ("null-vs-string", {"const": None}, {"type": "string"}, False),
    ("bool-const-vs-integer", {"const": True}, {"type": "integer"}, False),
    ("bool-const-vs-boolean", {"const": False}, {"type": "boolean"}, True),
    ("float-integer-const", {"const": 1.0}, {"type": "integer"}, True),
    ("fraction-vs-number", {"const": 1.5}, {"type": "number"}, True),
    ("fraction-vs-integer", {"const": 1.5}, {"type": "integer"}, False),
    ("string-const", {"const": "a"}, {"type": "string"}, True),
    ("string-const-vs-array", {"const": "a"}, {"type": "array"}, False),
    ("array-vs-object", {"type": "array"}, {"type": "object"}, False),
    ("object-vs-array", {"type": "object"}, {"type": "array"}, False),
    ("enum-kinds", {"enum": ["a", 1]}, {"type": "integer"}, True),
    ("enum-kinds-apart", {"enum": ["a", "b"]}, {"type": "integer"}, False),
    ("value-kind-vs-enum", {"type": "integer"}, {"enum": ["a", None]}, False),
    ("enum-vs-const", {"type": "integer"}, {"const": 3}, True),
    # finite sets: JSON equality
    ("one-is-one-point-zero", {"const": 1}, {"enum": [1.0, 2]}, True),
    ("one-is-not-true", {"const": 1}, {"const": True}, False),
    ("true-is-not-one", {"const": True}, {"const": 1}, False),
    ("false-is-false", {"const": False}, {"enum": [False]}, True),
    ("true-is-not-false", {"const": True}, {"const": False}, False),
    ("different-strings", {"const": "a"}, {"const": "b"}, False),
    ("boolean-type-vs-const", {"type": "boolean"}, {"const": True}, True),
    ("boolean-type-vs-enum", {"type": "boolean"}, {"enum": ["true"]}, False),
    ("null-type-vs-const", {"type": "null"}, {"const": None}, True),
    ("null-type-vs-false", {"type": "null"}, {"const": False}, False),
    ("null-or-boolean", {"type": ["null", "boolean"]}, {"const": False}, True),
    ("null-or-boolean-apart", {"type": ["null", "boolean"]}, {"enum": ["x", 0]}, False),
    (
        "union-of-consts",
        {"oneOf": [{"const": "a"}, {"const": "b"}]},
        {"enum": ["b"]},
        True,
    ),
    (
        "union-of-consts-apart",
        {"anyOf": [{"const": "a"}, {"const": "b"}]},
        {"enum": ["c"]},
        False,
    ),
    (
        "union-with-a-string",
        {"anyOf": [{"const": "a"}, {"type": "string"}]},
        {"const": "z"},
        True,
    ),
    ("enum-ref", _ref("Color"), {"const": "red"}, True),
    ("enum-refs-apart", _ref("Color"), _ref("Shade"), False),
    # kinds a schema says in several ways
    ("type-list", {"type": ["string", "null"]}, {"type": "integer"}, False),
    ("type-list-meets", {"type": ["string", "integer"]}, {"type": "number"}, True),
    # conservative: a union beside a `type` is read as its members alone
    (
        "anyOf-beside-type",
        {"type": "string", "anyOf": [{"minLength": 1}]},
        {"type": "integer"},
        True,
    ),
    (
        "anyOf-kinds",
        {"type": "string", "anyOf": [{"minLength": 1}], "minLength": 2},
        {"type": "integer"},
        False,
    ),
    (
        "allOf-kinds",
        {"allOf": [{"type": "string"}, {"minLength": 1}]},
        {"type": "integer"},
        False,
    ),
    (
        "allOf-kinds-meet",
        {"allOf": [{"type": "integer"}, {"minimum": 1}]},
        {"type": "number"},
        True,
    ),
    ("unknown-type-name", {"type": "decimal"}, {"type": "string"}, True),
    (
        "a-union-member",
        {"oneOf": [{"type": "string"}, {"type": "null"}]},
        {"type": "integer"},
        False,
    ),
    (
        "a-union-member-meets",
        {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        {"type": "integer"},
        True,
    ),
    (
        "union-on-the-right",
        {"type": "integer"},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        False,
    ),
    # references
    ("ref-chain", _ref("Text"), {"type": "integer"}, False),
    ("ref-chain-meets", _ref("Text"), {"type": "string"}, True),
    (
        "allOf-ref",
        {"allOf": [_ref("Num")], "description": "d"},
        {"type": "string"},
        False,
    ),
    (
        "allOf-ref-with-more",
        {"allOf": [_ref("Num")], "minimum": 1},
        {"type": "string"},
        False,
    ),
    (
        "ref-beside-keywords",
        {"$ref": "#/$defs/Num", "minimum": 1},
        {"type": "string"},
        True,
    ),
    (
        "ref-with-annotations",
        {"$ref": "#/$defs/Num", "title": "t"},
        {"type": "string"},
        False,
    ),
    ("unknown-ref", _ref("Missing"), {"type": "string"}, True),
    ("non-string-ref", {"$ref": 3}, {"type": "string"}, True),
    ("false-ref", _ref("Never"), {"type": "string"}, False),
    ("false", False, {"type": "string"}, False),
    ("true", True, {"type": "string"}, True),
    # objects
    (
        "objects-by-const",
        _obj({"k": {"const": "a"}}, ["k"]),
        _obj({"k": {"const": "b"}}, ["k"]),
        False,
    ),
    (
        "objects-same-const",
        _obj({"k": {"const": "a"}}, ["k"]),
        _obj({"k": {"const": "a"}}, ["k"]),
        True,
    ),
    (
        "objects-const-optional",
        _obj({"k": {"const": "a"}}),
        _obj({"k": {"const": "b"}}),
        True,
    ),
    (
        "objects-required-on-one",
        _obj({"k": {"const": "a"}}, ["k"]),
        _obj({"k": {"const": "b"}}),
        False,
    ),
    (
        "objects-required-on-other",
        _obj({"k": {"const": "a"}}),
        _obj({"k": {"const": "b"}}, ["k"]),
        False,
    ),
    (
        "objects-const-vs-enum-ref",
        _obj({"k": {"const": "x"}}, ["k"]),
        _obj({"k": _ref("Color")}, ["k"]),
        False,
    ),
    (
        "objects-const-in-enum-ref",
        _obj({"k": {"const": "red"}}, ["k"]),
        _obj({"k": _ref("Color")}, ["k"]),
        True,
    ),
    (
        "closed-without-it",
        _obj({"a": {}}, ["b"]),
        _obj({"a": {}}, additionalProperties=False),
        False,
    ),
    ("open-without-it", _obj({"a": {}}, ["b"]), _obj({"a": {}}), True),
    (
        "unevaluated-false",
        _obj({"a": {}}, ["b"]),
        _obj({}, unevaluatedProperties=False),
        False,
    ),
    (
        "pattern-properties",
        _obj({"a": {}}, ["b"]),
        _obj({}, patternProperties={"^x": {}}, additionalProperties=False),
        True,
    ),
    (
        "extra-schema",
        _obj({"b": {"type": "string"}}, ["b"]),
        _obj({}, additionalProperties={"type": "integer"}),
        False,
    ),
    (
        "extra-schema-meets",
        _obj({"b": {"type": "string"}}, ["b"]),
        _obj({}, additionalProperties={"type": "string"}),
        True,
    ),
    (
        "extra-true",
        _obj({"b": {"type": "string"}}, ["b"]),
        _obj({}, additionalProperties=True),
        True,
    ),
    ("member-false", _obj({"a": {}}, ["a"]), _obj({"a": False}), False),
    (
        "not-required",
        _obj({}, ["a"]),
        {"type": "object", "not": {"required": ["a"]}},
        False,
    ),
    (
        "not-required-other",
        _obj({}, ["a"]),
        {"type": "object", "not": {"required": ["b"]}},
        True,
    ),
    (
        "not-with-more",
        _obj({}, ["a"]),
        {"type": "object", "not": {"required": ["a"], "properties": {}}},
        True,
    ),
    (
        "not-annotated",
        _obj({}, ["a"]),
        {"type": "object", "not": {"required": ["a"], "title": "t"}},
        False,
    ),
    (
        "required-not-a-list",
        {**_obj({"k": {"const": "a"}}), "required": "k"},
        _obj({"k": {"const": "b"}}, ["k"]),
        False,
    ),
    (
        "required-names-not-strings",
        _obj({"k": {"const": "a"}}, [1]),
        _obj({"k": {"const": "b"}}, [2]),
        True,
    ),
    (
        "objects-by-second-member",
        _obj({"a": {}, "k": {"const": 1}}, ["a", "k"]),
        _obj({"a": {}, "k": {"const": 2}}, ["a", "k"]),
        False,
    ),
    ("true-beside-object", True, _obj({"k": {"const": "b"}}, ["k"]), True),
    (
        "object-or-null-vs-object",
        {
            "type": ["object", "null"],
            "properties": {"k": {"const": 1}},
            "required": ["k"],
        },
        _obj({"k": {"const": 2}}, ["k"]),
        False,
    ),  # they meet only as objects
]


PAIRS += [
    # cases found by mutation testing (docs/project/mutation.md)
    ("one-is-not-true-in-enums", {"enum": [1, "a"]}, {"enum": [True, "b"]}, False),
    (
        "union-with-a-ref-member",
        {"anyOf": [_ref("Color"), {"const": "x"}]},
        {"const": "red"},
        True,
    ),
    (
        "union-with-a-ref-member-apart",
        {"anyOf": [_ref("Color"), {"const": "x"}]},
        {"const": "y"},
        False,
    ),
    (
        "allOf-parts-with-a-ref",
        {"allOf": [_ref("Num"), {"minimum": 1}]},
        {"type": "integer"},
        True,
    ),
    ("allOf-enum-ref", {"allOf": [_ref("Color")]}, {"const": "green"}, False),
    (
        "allOf-enum-ref-annotated",
        {"allOf": [_ref("Color")], "title": "t"},
        {"const": "green"},
        False,
    ),
    (
        "allOf-two-refs",
        {"allOf": [_ref("Color"), _ref("Shade")]},
        {"const": "green"},
        True,
    ),
    (
        "allOf-ref-with-more-than-ref",
        {"allOf": [{**_ref("Color"), "minLength": 1}]},
        {"const": "green"},
        True,
    ),
    (
        "allOf-enum-ref-with-more",
        {"allOf": [_ref("Color")], "minLength": 1},
        {"const": "green"},
        True,
    ),
    (
        "required-with-a-non-string",
        _obj({"k": {"const": "a"}}, [1, "k"]),
        _obj({"k": {"const": "b"}}, [2, "k"]),
        False,
    ),
    (
        "object-member-ref",
        _obj({"k": _ref("Color")}, ["k"]),
        _obj({"k": _ref("Shade")}, ["k"]),
        False,
    ),
]


def _nest(keyword: str, leaf: Any, levels: int) -> Any:
    for _ in range(levels):
        leaf = {keyword: [leaf]}
    return leaf


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf"])
def test_the_depth_limit_is_24_levels_of_unions(keyword: str) -> None:
    """Up to 24 levels are read; past them nothing is proved."""
    text, number = {"type": "string"}, {"type": "integer"}
    assert may_overlap(_nest(keyword, text, 24), number, _resolve) is False
    assert may_overlap(_nest(keyword, text, 25), number, _resolve) is True
    assert may_overlap(number, _nest(keyword, text, 24), _resolve) is False
    assert may_overlap(number, _nest(keyword, text, 25), _resolve) is True
    # inside a schema with more than the union (kinds alone read it)
    assert kinds({**_nest(keyword, text, 24), "minLength": 1}, _resolve) == {"string"}
    assert kinds({**_nest(keyword, text, 25), "minLength": 1}, _resolve) == ALL_KINDS
    assert values(_nest(keyword, {"const": 1}, 24), _resolve) == (1,)
    assert values(_nest(keyword, {"const": 1}, 25), _resolve) is None


def _two(inner: Any) -> Any:
    return {"allOf": [inner, {"minLength": 1}]}  # not a lone $ref


def test_the_depth_limit_is_24_levels_of_allOf_and_objects() -> None:
    text, number = {"type": "string"}, {"type": "integer"}
    deep: Any = text
    for _ in range(24):
        deep = _two(deep)
    assert kinds(deep, _resolve) == {"string"}
    assert kinds(_two(deep), _resolve) == ALL_KINDS
    # one level of objects from a given depth (the check walks both ways at each level,
    # so a deeper nesting is slow to build a case from)
    obj, other = _obj({"k": text}, ["k"]), _obj({"k": number}, ["k"])
    assert may_overlap(obj, other, _resolve, depth=23) is False
    assert may_overlap(obj, other, _resolve, depth=24) is True
    # the depth is passed on to kinds and values inside may_overlap
    assert (
        may_overlap(
            {**_nest("anyOf", text, 24), "minLength": 1}, number, _resolve, depth=1
        )
        is True
    )
    assert (
        may_overlap(
            {**_nest("anyOf", text, 23), "minLength": 1}, number, _resolve, depth=1
        )
        is False
    )
    assert (
        may_overlap(
            number, {**_nest("anyOf", text, 24), "minLength": 1}, _resolve, depth=1
        )
        is True
    )
    assert (
        may_overlap(
            number, {**_nest("anyOf", text, 23), "minLength": 1}, _resolve, depth=1
        )
        is False
    )
    # a null that only the depth limit hides is not read as a finite set of values
    hidden_null = {**_nest("anyOf", {"type": "null"}, 24), "minLength": 1}
    assert values(hidden_null, _resolve) == (None,)
    assert values(hidden_null, _resolve, depth=1) is None
    assert may_overlap(hidden_null, text, _resolve, depth=1) is True
    assert may_overlap(text, hidden_null, _resolve, depth=1) is True


@pytest.mark.parametrize(
    ("a", "b", "overlap"), [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS]
)
def test_may_overlap(a: Any, b: Any, overlap: bool) -> None:
    assert may_overlap(a, b, _resolve) is overlap
    assert may_overlap(b, a, _resolve) is overlap  # a symmetric relation


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"const": 2}, (2,)),
        ({"enum": ["a", "b"]}, ("a", "b")),
        ({"type": "null"}, (None,)),
        ({"type": "boolean"}, (True, False)),
        ({"type": ["null", "boolean"]}, (None, True, False)),
        ({"type": ["boolean", "null"]}, (None, True, False)),
        ({"oneOf": [{"const": 1}, {"enum": [2, 3]}]}, (1, 2, 3)),
        ({"oneOf": [{"const": 1}, {"type": "integer"}]}, None),
        ({"type": "integer"}, None),
        ({"type": ["boolean", "integer"]}, None),
        ({"oneOf": [_ref("Color"), {"const": "x"}]}, ("red", "blue", "x")),
        ({"allOf": [_ref("Num"), {"minimum": 1}]}, None),
        ({"allOf": [{"type": "null"}, {"description": "d"}]}, (None,)),
        (_ref("Color"), ("red", "blue")),
        (True, None),
    ],
)
def test_values(schema: Any, expected: Any) -> None:
    assert values(schema, _resolve) == expected


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (False, set()),
        (True, ALL_KINDS),
        ({}, ALL_KINDS),
        ({"type": "integer"}, {"integer"}),
        ({"type": ["integer", "null"]}, {"integer", "null"}),
        ({"type": ["integer", 3]}, {"integer"}),
        ({"const": 1.0}, {"integer"}),
        ({"enum": [1.5, "a"]}, {"number", "string"}),
        ({"const": []}, {"array"}),
        ({"const": {}}, {"object"}),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, {"string", "null"}),
        ({"oneOf": [{"type": "string"}, {"type": "null"}]}, {"string", "null"}),
        ({"oneOf": [_ref("Num"), {"type": "null"}], "minimum": 1}, {"integer", "null"}),
        ({"const": "a", "enum": [1]}, set()),
        ({"const": 1, "type": "string"}, set()),
        ({"enum": [1], "type": "string"}, set()),
        (
            {"oneOf": [{"type": "string"}, {"type": "null"}], "type": "string"},
            {"string"},
        ),
        ({"allOf": [{"type": ["string", "null"]}, {"type": "null"}]}, {"null"}),
        (_ref("Never"), set()),
    ],
)
def test_kinds(schema: Any, expected: set[str]) -> None:
    assert kinds(schema, _resolve) == expected


def test_deep_nesting_counts_as_overlapping() -> None:
    """Past the depth limit nothing is proved (a deep or cyclic schema is checked)."""
    deep: Any = {"type": "string"}
    for _ in range(30):
        deep = {"anyOf": [deep]}
    assert may_overlap(deep, {"type": "integer"}, _resolve) is True
    assert (
        may_overlap(
            {"type": "integer"}, {"anyOf": [{"type": "string"}]}, _resolve, depth=25
        )
        is True
    )
    assert kinds({"type": "string"}, _resolve, depth=25) == ALL_KINDS
    assert values({"const": 1}, _resolve, depth=25) is None
    cycle = {"Loop": {"$ref": "#/$defs/Loop"}}
    assert (
        may_overlap(
            {"$ref": "#/$defs/Loop"}, {"type": "string"}, lambda r: cycle["Loop"]
        )
        is True
    )


def test_exclusivity_looks_at_every_pair() -> None:
    s, i, n = {"type": "string"}, {"type": "integer"}, {"type": "null"}
    assert exclusivity([s, i, n], _resolve) == "disjoint"
    assert exclusivity([s, i, n, {"const": None}], _resolve) == "checked"
    assert exclusivity([n, s, {"const": "x"}], _resolve) == "checked"
    assert exclusivity([], _resolve) == "disjoint"


def test_objects_nested_deep_are_compared_once_per_pair() -> None:
    """Two chains of 40 objects, each requiring a member that is the next object of its
    chain, overlapping at the end: each pair of the chains is compared once, not once per
    direction at every level (that was 2^24 comparisons: generation hung on such a schema)."""
    defs: dict[str, Any] = {"A40": {"type": "string"}, "B40": {"type": "string"}}
    for chain in "AB":
        for i in range(39, -1, -1):
            defs[f"{chain}{i}"] = _obj({"k": {"$ref": f"#/$defs/{chain}{i + 1}"}}, ["k"])
    calls = [0]

    def resolve(ref: str) -> Any:
        calls[0] += 1
        return defs.get(ref.rsplit("/", 1)[-1])

    assert exclusivity([{"$ref": "#/$defs/A0"}, {"$ref": "#/$defs/B0"}], resolve) == "checked"
    assert calls[0] <= 8 * 40, calls[0]
    # and a difference at the end of the chains is still found within the depth limit
    defs["B40"] = {"type": "integer"}
    calls[0] = 0
    assert may_overlap({"$ref": "#/$defs/A20"}, {"$ref": "#/$defs/B20"}, resolve) is False
    assert calls[0] <= 8 * 20, calls[0]


def test_a_shared_memo_keeps_each_pair_apart() -> None:
    """The answers kept for one union's pairs are kept per pair, not per first schema."""
    text, number, anything = {"type": "string"}, {"type": "number"}, {}
    memo: dict[Any, bool] = {}
    assert may_overlap(text, number, _resolve, memo=memo) is False
    assert may_overlap(text, anything, _resolve, memo=memo) is True
    assert may_overlap(text, number, _resolve, memo=memo) is False


def test_a_pair_met_again_inside_itself_proves_nothing() -> None:
    """Two schemas each requiring a member of their own kind: the inner meeting of the same
    pair is taken as "may overlap", so the pair is not called disjoint."""

    def resolve(ref: str) -> Any:
        return {"A": a, "B": b}[ref.rsplit("/", 1)[-1]]

    a = _obj({"next": _ref("A")}, ["next"])
    b = _obj({"next": _ref("B")}, ["next"])
    assert may_overlap(a, b, resolve) is True
    assert may_overlap(a, b, resolve, memo={}) is True
