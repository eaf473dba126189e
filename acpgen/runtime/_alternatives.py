"""Sibling unions (an ``anyOf``/``oneOf`` beside an object's own members), checked on
the wire form of an object by every binding style. Imported relatively by ``_runtime``.
"""

from __future__ import annotations

from typing import Any, Callable


class _Branch:
    """One branch of an ``anyOf``/``oneOf`` beside an object's members: it holds for a
    wire object when its ``required`` members are present, each of its ``members``
    present is valid as the type given (checked by the style's ``check``), the whole
    object is valid as ``base`` (the def the branch extends), no member has one of the
    values its ``not`` rules out (``excludes``), none of its ``absent`` members is there
    and its own nested ``groups`` hold."""

    __slots__ = ("label", "required", "members", "base", "excludes", "absent", "groups")

    def __init__(
        self,
        label: str,
        required: tuple[str, ...] = (),
        members: tuple[tuple[str, Any], ...] = (),
        base: Any = None,
        excludes: tuple[tuple[str, tuple[Any, ...]], ...] = (),
        absent: tuple[str, ...] = (),
        groups: tuple[_Group, ...] = (),
    ) -> None:
        self.label = label
        self.required = required
        self.members = members
        self.base = base
        self.excludes = excludes
        self.absent = absent
        self.groups = groups

    def holds(self, value: dict[str, Any], check: Callable[[Any, Any], bool]) -> bool:
        if any(wire not in value for wire in self.required):
            return False
        if any(wire in value for wire in self.absent):
            return False
        for wire, tp in self.members:
            if wire in value and not check(tp, value[wire]):
                return False
        if self.base is not None and not check(self.base, value):
            return False
        for wire, values in self.excludes:
            if wire in value and _json_in(value[wire], values):
                return False
        return all(g.problem(value, check) is None for g in self.groups)


class _Group:
    """The branches of one ``anyOf`` (at least one must hold) or ``oneOf`` (exactly one)."""

    __slots__ = ("keyword", "branches")

    def __init__(self, keyword: str, branches: tuple[_Branch, ...]) -> None:
        self.keyword = keyword
        self.branches = branches

    def problem(
        self, value: dict[str, Any], check: Callable[[Any, Any], bool]
    ) -> str | None:
        """``None`` when the group holds for ``value``, else what is wrong."""
        held = [b.label for b in self.branches if b.holds(value, check)]
        if not held:
            labels = ", ".join(repr(b.label) for b in self.branches)
            return f"expected one of {labels}"
        if self.keyword == "oneOf" and len(held) > 1:
            labels = ", ".join(repr(label) for label in held)
            return f"expected exactly one of {labels} (oneOf), found several"
        return None


def _alternatives_problem(
    groups: tuple[_Group, ...], value: Any, check: Callable[[Any, Any], bool]
) -> str | None:
    """What is wrong with wire object ``value`` against its sibling unions, or ``None``."""
    if not isinstance(value, dict):
        return None
    for group in groups:
        problem = group.problem(value, check)
        if problem is not None:
            return problem
    return None


def _one_of_problem(
    members: tuple[tuple[str, Any], ...], value: Any, check: Callable[[Any, Any], bool]
) -> str | None:
    """An untagged ``oneOf`` whose members can accept the same value (``exclusive:
    "checked"``): what is wrong when wire ``value`` is valid as more than one of
    ``members`` (``(label, type)`` pairs), else ``None``."""
    held = [label for label, tp in members if check(tp, value)]
    if len(held) > 1:
        labels = ", ".join(repr(label) for label in held)
        return f"expected exactly one of {labels} (oneOf), found several"
    return None


def _json_in(value: Any, values: tuple[Any, ...]) -> bool:
    """JSON equality: ``1`` is not ``true``, ``1`` is ``1.0``."""
    return any(
        (type(value) is bool) == (type(v) is bool) and value == v for v in values
    )
