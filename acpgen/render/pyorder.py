"""The order of a Pydantic module's classes and aliases, so that it can do without lazy
annotations.

With ``from __future__ import annotations`` every field annotation is a string, and
pydantic turns each one into a ``typing.ForwardRef`` on import: one ``compile`` per
annotation, about a fifth of the import time of upstream's v1 module. Without it,
Python evaluates each annotation as the class body runs, so every name it uses must
be defined above it. :func:`eager_order` finds such an order: the classes and aliases
in the order given (classes by name, each base first; then the aliases), each moved
down only as far as it must come after what it uses. When the definitions refer to
each other in a cycle (a recursive type), there is none, and the module keeps its lazy
annotations and the order given.
"""

from __future__ import annotations

import re
from typing import Iterable, Literal, Mapping, Protocol, Sequence, TypeVar


class _Def(Protocol):
    @property
    def name(self) -> str: ...


D = TypeVar("D", bound=_Def)


#: a string literal (its text is no name), or a name not reached through an attribute
_STRING_OR_NAME = re.compile(r"""[rRbBuUfF]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|(?<![\w.])([A-Za-z_]\w*)""")


def names_in(*expressions: str | None) -> set[str]:
    """The names Python may look up to evaluate ``expressions``: every identifier outside
    string literals (``Literal["x"]`` holds none) and not after a dot. A keyword argument's
    name counts too, which only ever adds a dependency. Read with a regular expression, not
    ``ast``: an annotation may be nested deeper than Python's parser goes (a schema with
    hundreds of nested arrays)."""
    out: set[str] = set()
    for text in expressions:
        if text:
            out.update(m.group(1) for m in _STRING_OR_NAME.finditer(text) if m.group(1))
    return out


def dependency_order(
    names: Sequence[str], uses: Mapping[str, Iterable[str]], *, cycles: Literal["fail", "skip"]
) -> list[str] | None:
    """``names`` so that each comes after every other of ``names`` it ``uses``; ties keep
    the order of ``names``. A cycle gives ``None`` (``cycles="fail"``) or is left as it is
    met (``"skip"``: lazy annotations take care of it). The one ordering of the Python
    modules: classes after their bases, aliases after the aliases their value names, and
    the eager order of a Pydantic module."""
    known = set(names)
    state: dict[str, int] = {}  # 1: being placed, 2: placed
    out: list[str] = []

    def place(name: str) -> bool:
        if state.get(name) == 2:
            return True
        if state.get(name) == 1:
            return cycles == "skip"
        state[name] = 1
        for dep in sorted(set(uses.get(name, ()))):  # itself too: a class body cannot use its class
            if dep in known and not place(dep):
                return False
        state[name] = 2
        out.append(name)
        return True

    for name in names:
        if not place(name):
            return None
    return out


def eager_order(defs: Sequence[D], uses: Mapping[str, Iterable[str]]) -> tuple[D, ...] | None:
    """``defs`` so that each comes after every other def its ``uses`` names, else
    ``None`` (the defs use each other in a cycle). Ties keep the order of ``defs``."""
    by_name = {d.name: d for d in defs}
    order = dependency_order([d.name for d in defs], uses, cycles="fail")
    return None if order is None else tuple(by_name[n] for n in order)
