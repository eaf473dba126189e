"""Sibling unions (acpgen/runtime/_alternatives.py), on the source module itself: when a
branch of an ``anyOf``/``oneOf`` beside an object's members holds for a wire object, what
a group says is wrong, and JSON equality of the values a ``not`` rules out. ``check`` is
played by a predicate per type, and records what it was asked."""

from __future__ import annotations

from typing import Any

import pytest

from acpgen.runtime._alternatives import (
    _alternatives_problem,
    _Branch,
    _Group,
    _json_in,
    _one_of_problem,
)


def is_str(value: Any) -> bool:
    return type(value) is str


def is_int(value: Any) -> bool:
    return type(value) is int


class Check:
    """``check(tp, value)``: ``tp`` is a predicate; every call is recorded."""

    def __init__(self) -> None:
        self.asked: list[tuple[Any, Any]] = []

    def __call__(self, tp: Any, value: Any) -> bool:
        self.asked.append((tp, value))
        return bool(tp(value))


def test_a_branch_keeps_what_it_is_given() -> None:
    group = _Group("anyOf", ())
    branch = _Branch("b", ("x",), (("y", is_str),), is_int, (("z", (1,)),), ("w",), (group,))
    assert (branch.label, branch.required, branch.members, branch.base) == ("b", ("x",), (("y", is_str),), is_int)
    assert (branch.excludes, branch.absent, branch.groups) == ((("z", (1,)),), ("w",), (group,))
    empty = _Branch("e")
    assert (empty.required, empty.members, empty.base, empty.excludes, empty.absent, empty.groups) == ((), (), None, (), (), ())
    # a branch with nothing to ask holds for any object, and asks nothing
    check = Check()
    assert empty.holds({}, check) and empty.holds({"a": 1}, check) and check.asked == []


def test_a_branch_needs_every_required_member() -> None:
    branch = _Branch("b", required=("x", "y"))
    check = Check()
    assert branch.holds({"x": 1, "y": None}, check)
    assert not branch.holds({"x": 1}, check) and not branch.holds({"y": 1}, check)
    assert not branch.holds({}, check)


def test_a_branch_fails_on_a_member_it_rules_out() -> None:
    branch = _Branch("b", absent=("x", "y"))
    check = Check()
    assert branch.holds({"z": 1}, check)
    assert not branch.holds({"x": 1}, check) and not branch.holds({"y": None}, check)


def test_a_branch_checks_its_members_present_only() -> None:
    branch = _Branch("b", members=(("x", is_str), ("y", is_int)))
    check = Check()
    assert branch.holds({"x": "a"}, check) and check.asked == [(is_str, "a")]
    assert branch.holds({"x": "a", "y": 2}, check)
    assert not branch.holds({"x": 1}, check)
    assert not branch.holds({"x": "a", "y": "2"}, check)
    check.asked.clear()
    assert branch.holds({}, check) and check.asked == []


def test_a_branch_checks_the_whole_object_against_its_base() -> None:
    wanted = {"x": 1}
    branch = _Branch("b", base=lambda value: value == wanted)
    check = Check()
    assert branch.holds({"x": 1}, check) and check.asked[0][1] == {"x": 1}
    assert not branch.holds({"x": 2}, check)


def test_a_branch_fails_on_a_value_its_not_rules_out() -> None:
    branch = _Branch("b", excludes=(("kind", ("gone", 1)), ("flag", (True,))))
    check = Check()
    assert not branch.holds({"kind": "gone"}, check)
    assert not branch.holds({"kind": 1.0}, check)  # JSON: 1 is 1.0
    assert branch.holds({"kind": True}, check)  # JSON: true is not 1
    assert branch.holds({"kind": "here", "flag": 1}, check)
    assert not branch.holds({"flag": True}, check)
    assert branch.holds({}, check)


def test_a_branch_holds_only_when_its_nested_groups_hold() -> None:
    inner = _Group("oneOf", (_Branch("p", required=("p",)), _Branch("q", required=("q",))))
    branch = _Branch("b", groups=(_Group("anyOf", (_Branch("any"),)), inner))
    check = Check()
    assert branch.holds({"p": 1}, check) and branch.holds({"q": 1}, check)
    assert not branch.holds({}, check)
    assert not branch.holds({"p": 1, "q": 1}, check)
    # the nested group's branches check their members with the same ``check``
    typed = _Branch("b", groups=(_Group("anyOf", (_Branch("p", members=(("p", is_int),)),)),))
    assert typed.holds({"p": 1}, check) and (is_int, 1) in check.asked
    assert not typed.holds({"p": "1"}, check)


def test_each_rule_of_a_branch_decides_alone() -> None:
    """Every other rule holds: the one that does not decides."""
    def branch(**changes: Any) -> _Branch:
        parts: dict[str, Any] = {
            "required": ("r",),
            "members": (("m", is_int),),
            "base": lambda value: "bad" not in value,
            "excludes": (("e", ("no",)),),
            "absent": ("a",),
            "groups": (_Group("anyOf", (_Branch("g", required=("r",)),)),),
        }
        parts.update(changes)
        return _Branch("b", **parts)

    check = Check()
    good = {"r": 1, "m": 2, "e": "yes"}
    assert branch().holds(good, check)
    assert not branch().holds({**good, "m": "2"}, check)
    assert not branch().holds({**good, "bad": 1}, check)
    assert not branch().holds({**good, "e": "no"}, check)
    assert not branch().holds({**good, "a": 1}, check)
    assert not branch(groups=(_Group("anyOf", (_Branch("g", required=("zz",)),)),)).holds(good, check)


def test_an_any_of_group_needs_one_branch_or_more() -> None:
    group = _Group("anyOf", (_Branch("first", required=("x",)), _Branch("second", required=("y",))))
    check = Check()
    assert (group.keyword, [b.label for b in group.branches]) == ("anyOf", ["first", "second"])
    assert group.problem({"x": 1}, check) is None
    assert group.problem({"x": 1, "y": 2}, check) is None
    assert group.problem({}, check) == "expected one of 'first', 'second'"


def test_a_one_of_group_needs_exactly_one_branch() -> None:
    group = _Group("oneOf", (_Branch("a", required=("x",)), _Branch("b", required=("y",)), _Branch("c", required=("z",))))
    check = Check()
    assert group.problem({"y": 1}, check) is None
    assert group.problem({"w": 1}, check) == "expected one of 'a', 'b', 'c'"
    # only the branches that held are named
    assert group.problem({"x": 1, "z": 1}, check) == "expected exactly one of 'a', 'c' (oneOf), found several"
    assert group.problem({"x": 1, "y": 1, "z": 1}, check) == "expected exactly one of 'a', 'b', 'c' (oneOf), found several"


def test_an_objects_groups_in_order_first_problem_wins() -> None:
    first = _Group("anyOf", (_Branch("x", required=("x",)),))
    second = _Group("oneOf", (_Branch("y", required=("y",)), _Branch("any")))
    check = Check()
    assert _alternatives_problem((first, second), {"x": 1, "y": 1}, check) == (
        "expected exactly one of 'y', 'any' (oneOf), found several"
    )
    assert _alternatives_problem((first, second), {"x": 1}, check) is None
    assert _alternatives_problem((first, second), {"y": 1}, check) == "expected one of 'x'"
    assert _alternatives_problem((), {"y": 1}, check) is None
    # a value that is not an object is not theirs to judge (its type says what is wrong)
    check.asked.clear()
    for value in (None, [], "x", 1):
        assert _alternatives_problem((first,), value, check) is None
    assert check.asked == []


def test_an_untagged_one_of_accepting_a_value_twice() -> None:
    members = (("text", is_str), ("count", is_int), ("any", lambda value: True))
    check = Check()
    assert _one_of_problem(members, 1, check) == "expected exactly one of 'count', 'any' (oneOf), found several"
    assert _one_of_problem(members[:2], 1, check) is None
    assert _one_of_problem(members[:2], None, check) is None  # none: the union's own error
    assert _one_of_problem(members, "s", check) == "expected exactly one of 'text', 'any' (oneOf), found several"


@pytest.mark.parametrize(
    ("value", "values", "found"),
    [
        (1, (1,), True),
        (1, (1.0,), True),
        (1.0, (1,), True),
        (True, (1,), False),
        (1, (True,), False),
        (False, (0,), False),
        (False, (False,), True),
        ("a", ("b", "a"), True),
        ("a", (), False),
        (None, (None,), True),
        ({"k": [1]}, ({"k": [1]},), True),
    ],
)
def test_json_equality_of_ruled_out_values(value: Any, values: tuple[Any, ...], found: bool) -> None:
    assert _json_in(value, values) is found
