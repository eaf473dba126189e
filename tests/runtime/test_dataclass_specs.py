"""The specs of the dataclasses style (``_dataclass_specs.py``), through a generated
package of ``dataclasses_fixture.json``: every outcome the same compiled and interpreted
(see ``dataclasses_harness.py``), error texts and paths matched whole."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from .dataclasses_harness import dumps, fails, load, pair

Pair = tuple[ModuleType, ModuleType]


@pytest.fixture
def ms(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    return pair(tmp_path_factory)


def checks(**members: Any) -> dict[str, Any]:
    return {"ge": 2, **members}


def member(ms: Pair, wire: str, value: Any) -> Any:
    """The member ``wire`` of a loaded ``Checks`` (as plain data)."""
    return load(ms, "Checks", checks(**{wire: value}))[1][wire]


@pytest.mark.parametrize(
    "wire, value, error",
    [
        ("ge", 1, "expected a value >= 2"),
        ("le", 10, "expected a value <= 9"),
        ("gt", 0, "expected a value > 0"),
        ("lt", 1, "expected a value < 1"),
        ("lt", 1.5, "expected a value < 1"),
        ("mul", 0.75, "expected a multiple of 0.5"),
        ("minl", "a", "expected a length >= 2"),
        ("maxl", "abcd", "expected a length <= 3"),
        ("pat", "aB", "expected a string matching '^[a-z]+$'"),
        ("pat", "", "expected a string matching '^[a-z]+$'"),
        ("few", [], "expected at least 1 items"),
        ("few", [1, 2, 3], "expected at most 2 items"),
        ("some", [], "expected at least 1 items"),
    ],
)
def test_a_value_out_of_bounds_is_rejected_with_the_bound(ms: Pair, wire: str, value: Any, error: str) -> None:
    assert fails(ms, "Checks", checks(**{wire: value})) == f"Checks.{wire}: {error}"


@pytest.mark.parametrize(
    "wire, value",
    [
        ("ge", 2),
        ("le", 9),
        ("gt", 0.5),
        ("lt", 0.5),
        ("mul", 1.5),
        ("mul", 2),
        ("minl", "ab"),
        ("maxl", "abc"),
        ("pat", "xa"),
        ("few", [1]),
        ("few", [1, 2]),
    ],
)
def test_a_value_on_or_inside_its_bounds_is_kept(ms: Pair, wire: str, value: Any) -> None:
    expected = [("int", v) for v in value] if isinstance(value, list) else (type(value).__name__, value)
    assert member(ms, wire, value) == expected


@pytest.mark.parametrize(
    "wire, value, error",
    [
        ("ge", "2", "expected integer, got string"),
        ("ge", True, "expected integer, got boolean"),
        ("ge", 2.0, "expected integer, got number"),
        ("ge", None, "expected integer, got null"),
        ("le", [], "expected integer, got array"),
        ("le", {}, "expected integer, got object"),
        ("gt", "1", "expected number, got string"),
        ("flt", False, "expected number, got boolean"),
        ("flag", 1, "expected boolean, got integer"),
        ("minl", 12, "expected string, got integer"),
        ("nul", 0, "expected null, got integer"),
        ("nul", "", "expected null, got string"),
        ("opt", 1, "expected string, got integer"),
        ("env", [], "expected object, got array"),
        ("bag", [1], "expected object, got array"),
        ("bag", "x", "expected object, got string"),
        ("env", {"a": 1, "b": "2"}, "expected integer, got string"),
        ("strs", "a", "expected array, got string"),
        ("few", {}, "expected array, got object"),
    ],
)
def test_a_value_of_the_wrong_kind_names_both_kinds(ms: Pair, wire: str, value: Any, error: str) -> None:
    text = fails(ms, "Checks", checks(**{wire: value}))
    path = "Checks.env.b" if wire == "env" and isinstance(value, dict) else f"Checks.{wire}"
    assert text == f"{path}: {error}"


def test_a_top_level_error_has_the_type_s_name_as_its_path(ms: Pair) -> None:
    assert fails(ms, "Checks", []) == "Checks: expected object, got array"
    assert fails(ms, "Checks", 1.5) == "Checks: expected object, got number"


def test_a_path_goes_through_array_indexes_and_map_keys(ms: Pair) -> None:
    assert fails(ms, "Checks", checks(strs=["a", "b", 3])) == "Checks.strs[2]: expected string, got integer"
    assert fails(ms, "Checks", checks(strs=[1, "b"])) == "Checks.strs[0]: expected string, got integer"
    assert fails(ms, "Checks", checks(env={"k": None})) == "Checks.env.k: expected integer, got null"
    assert fails(ms, "Checks", checks(pair=["a", "b"])) == "Checks.pair[1]: expected integer, got string"
    assert fails(ms, "Checks", checks(pair=[1, 2])) == "Checks.pair[0]: expected string, got integer"


def test_a_validation_error_keeps_its_message_and_path_apart(ms: Pair) -> None:
    for m in ms:
        with pytest.raises(m.ValidationError) as info:
            m.load(m.Checks, checks(strs=["a", 3]))
        assert info.value.message == "expected string, got integer"
        assert info.value.path == ("Checks", "strs", 1)
        assert info.value.location == "Checks.strs[1]"
        assert isinstance(info.value, ValueError)
        assert str(m.ValidationError("bad")) == "bad"
        assert str(m.ValidationError("bad", (0, "a", 1))) == "[0].a[1]: bad"
        assert m.ValidationError("bad", ("a",)).at(2).path == (2, "a")


def test_scalars_arrays_and_maps_load_as_given(ms: Pair) -> None:
    value = load(ms, "Checks", checks(flag=False, flt=2, strs=["a"], anys=[1, None], env={"a": 1}, bag={"x": [1]}, nul=None, opt=None, any={"z": 1}))
    got = value[1]
    assert got["flag"] == ("bool", False)
    assert got["flt"] == ("int", 2)
    assert got["strs"] == [("str", "a")]
    assert got["anys"] == [("int", 1), ("NoneType", None)]
    assert got["env"] == {"a": ("int", 1)}
    assert got["bag"] == {"x": [("int", 1)]}
    assert got["nul"] == ("NoneType", None)
    assert got["opt"] == ("NoneType", None)
    assert got["any"] == {"z": ("int", 1)}
    assert member(ms, "opt", "s") == ("str", "s")
    assert member(ms, "pair", ["a", 1]) == [("str", "a"), ("int", 1)]
    assert member(ms, "flt", 2.5) == ("float", 2.5)


def test_loaded_arrays_and_maps_are_copies(ms: Pair) -> None:
    for m in ms:
        strs, anys, env, bag = ["a"], [1], {"a": 1}, {"b": 2}
        value = m.load(m.Checks, checks(strs=strs, anys=anys, env=env, bag=bag))
        assert value.strs == strs and value.strs is not strs
        assert value.anys == anys and value.anys is not anys
        assert value.env == env and value.env is not env
        assert value.bag == bag and value.bag is not bag


@pytest.mark.parametrize("value", [["a"], ["a", 1, 2], "ab", None])
def test_a_tuple_needs_its_length(ms: Pair, value: Any) -> None:
    assert fails(ms, "Checks", checks(pair=value)) == "Checks.pair: expected an array of 2 items"


def test_a_literal_is_one_of_its_values_of_the_same_type(ms: Pair) -> None:
    assert member(ms, "color", "red") == ("str", "red")
    assert member(ms, "level", 2) == ("int", 2)
    assert member(ms, "mixed", "a") == ("str", "a")
    assert member(ms, "mixed", 1) == ("int", 1)
    assert fails(ms, "Checks", checks(color="green")) == "Checks.color: expected one of 'red', 'blue', got 'green'"
    assert fails(ms, "Checks", checks(color=1)) == "Checks.color: expected one of 'red', 'blue', got 1"
    assert fails(ms, "Checks", checks(level=True)) == "Checks.level: expected one of 1, 2, got True"
    assert fails(ms, "Checks", checks(level=1.0)) == "Checks.level: expected one of 1, 2, got 1.0"
    assert fails(ms, "Checks", checks(level=3)) == "Checks.level: expected one of 1, 2, got 3"
    assert fails(ms, "Checks", checks(mixed=True)) == "Checks.mixed: expected one of 'a', 1, got True"
    assert fails(ms, "Checks", checks(mixed="b")) == "Checks.mixed: expected one of 'a', 1, got 'b'"


def test_an_open_literal_takes_any_value_of_its_type(ms: Pair) -> None:
    assert load(ms, "Kind", "one") == ("str", "one")
    assert load(ms, "Kind", "three") == ("str", "three")
    assert fails(ms, "Kind", 1) == "Kind: expected one of 'one', 'two', got 1"
    assert load(ms, "Code", 1) == ("int", 1)
    assert load(ms, "Code", 7) == ("int", 7)
    assert fails(ms, "Code", True) == "Code: expected one of 1, 2, got True"
    assert fails(ms, "Code", "1") == "Code: expected one of 1, 2, got '1'"


def test_literals_and_scalars_dump_as_they_are(ms: Pair) -> None:
    data = checks(color="blue", level=1, mixed="a", flag=True, flt=1.5, opt="o", env={"a": 1}, pair=["a", 1], few=[1])
    assert dumps(ms, "Checks", data) == data
    for m in ms:
        value = m.load(m.Checks, checks())
        value.color, value.level, value.mixed, value.minl = m.Checks, m.Checks, m.Checks, m.Checks
        with pytest.raises(TypeError, match="^cannot dump type$"):
            m.dump(value)
        value.color = value.level = value.mixed = None
        with pytest.raises(TypeError, match="^cannot dump type$"):
            m.dump(value)
        value.minl, value.opt = "ok", m.Checks
        with pytest.raises(TypeError, match="^cannot dump type$"):
            m.dump(value)


def test_any_of_takes_the_first_member_that_fits_and_reports_the_deepest_error(ms: Pair) -> None:
    assert member(ms, "either", "s") == ("str", "s")
    assert member(ms, "either", {"x": 1}) == ("Point", {"x": ("int", 1), "y": ("NoneType", None)}, {}, ["x"])
    assert fails(ms, "Checks", checks(either={"x": "1"})) == "Checks.either.x: expected integer, got string"
    assert fails(ms, "Checks", checks(either=1)) == "Checks.either: expected string, got integer"
    assert fails(ms, "Checks", checks(either={})) == "Checks.either: expected string, got object"


def test_one_of_rejects_a_value_valid_as_several_members(ms: Pair) -> None:
    assert member(ms, "one", 1.5) == ("float", 1.5)
    text = fails(ms, "Checks", checks(one=1))
    assert text == "Checks.one: expected exactly one of 'integer', 'number' (oneOf), found several"
    assert fails(ms, "Checks", checks(one="1")) == "Checks.one: expected integer, got string"


def test_a_named_spec_is_looked_up_by_reference(ms: Pair) -> None:
    assert member(ms, "point", {"x": 1, "y": 2}) == ("Point", {"x": ("int", 1), "y": ("int", 2)}, {}, ["x", "y"])
    assert fails(ms, "Checks", checks(point={"y": 2})) == "Checks.point: missing required member 'x'"
    assert dumps(ms, "Checks", checks(point={"x": 1})) == checks(point={"x": 1})


def test_simple_types_load_as_themselves(ms: Pair) -> None:
    assert load(ms, str, "s") == ("str", "s")
    assert load(ms, int, 3) == ("int", 3)
    assert load(ms, float, 3) == ("int", 3)
    assert load(ms, bool, False) == ("bool", False)
    assert load(ms, None, None) == ("NoneType", None)
    assert load(ms, type(None), None) == ("NoneType", None)
    assert load(ms, Any, {"a": 1}) == {"a": ("int", 1)}
    assert fails(ms, str, 1) == "str: expected string, got integer"
    assert fails(ms, int, True) == "int: expected integer, got boolean"
    assert fails(ms, float, "1") == "float: expected number, got string"
    assert fails(ms, bool, 0) == "bool: expected boolean, got integer"
    assert fails(ms, None, 0) == "value: expected null, got integer"
    assert fails(ms, type(None), False) == "NoneType: expected null, got boolean"


def test_a_member_s_default_is_not_dumped_unless_it_was_received(ms: Pair) -> None:
    assert dumps(ms, "Lenient", {}) == {}
    data = {"count": 3, "flag": True, "ratio": 0.5, "labels": ["a"], "tags": [], "size": 7}
    assert dumps(ms, "Lenient", data) == data
    for m in ms:
        value = m.load(m.Lenient, {})
        assert (value.count, value.flag, value.ratio, value.labels, value.tags, value.size) == (3, True, 0.5, ["a"], [], 7)
        value.labels.append("b")
        assert m.load(m.Lenient, {}).labels == ["a"]
        value.count, value.flag, value.ratio = 4, False, 1.5
        assert m.dump(value) == {"labels": ["a", "b"], "count": 4, "flag": False, "ratio": 1.5}
        fresh = m.Lenient()
        assert m.dump(fresh) == {}
        fresh.labels = ["a"]
        fresh.name = "n"
        assert m.dump(fresh) == {"name": "n"}
        fresh.labels = []
        assert m.dump(fresh) == {"labels": [], "name": "n"}


def test_a_value_of_no_json_kind_is_named_by_its_type(ms: Pair) -> None:
    assert fails(ms, "Checks", checks(le=(1,))) == "Checks.le: expected integer, got tuple"
    assert fails(ms, "Checks", checks(nul={1})) == "Checks.nul: expected null, got set"


def test_an_object_s_sibling_union_checks_its_branches_on_the_members(ms: Pair) -> None:
    assert load(ms, "Either", {"a": 1}) == ("Either", {"n": ("NoneType", None), "a": ("int", 1), "b": ("NoneType", None)}, {}, ["a"])
    assert dumps(ms, "Either", {"b": "x", "n": 2}) == {"n": 2, "b": "x"}
    assert fails(ms, "Either", {"n": 1}) == "Either: expected one of 'a', 'b'"


def test_a_reference_to_any_value_keeps_the_value(ms: Pair) -> None:
    assert member(ms, "ext", {"k": [1]}) == {"k": [("int", 1)]}
    assert member(ms, "ext", 0) == ("int", 0)
    assert load(ms, "Anything", [None]) == [("NoneType", None)]
    assert dumps(ms, "Checks", checks(ext={"k": 1})) == checks(ext={"k": 1})


def test_a_sibling_union_s_branch_may_narrow_a_member(ms: Pair) -> None:
    assert dumps(ms, "Stop", {"n": 1}) == {"n": 1}
    assert dumps(ms, "Stop", {"n": 0, "m": "x"}) == {"n": 0, "m": "x"}
    assert fails(ms, "Stop", {"n": 0}) == "Stop: expected one of 'n', 'm'"


def test_maps_and_nullables_of_values_that_take_null(ms: Pair) -> None:
    assert member(ms, "nulls", {"a": "s", "b": None}) == {"a": ("str", "s"), "b": ("NoneType", None)}
    assert fails(ms, "Checks", checks(nulls={"a": 1})) == "Checks.nulls.a: expected string, got integer"
    assert member(ms, "maybe", {"k": 1}) == {"k": ("int", 1)}
    assert member(ms, "maybe", None) == ("NoneType", None)
    assert member(ms, "exts", {"a": [1], "b": None}) == {"a": [("int", 1)], "b": ("NoneType", None)}
    assert dumps(ms, "Checks", checks(nulls={"a": None}, maybe=[1], exts={"a": 2})) == checks(nulls={"a": None}, maybe=[1], exts={"a": 2})
