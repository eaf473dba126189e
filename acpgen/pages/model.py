"""Structural records of a schema reference page (MDX or its Markdown export).

A page is reduced to what a reader relies on: which types exist, their kind,
their fields (type text and required flag), union variants, enum values,
methods and anchors. Whitespace, bullets and wrapping do not matter here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageField:
    name: str
    type: str  # the text a reader sees, normalised ("ContentBlock[] | null")
    required: bool
    description: str = ""
    default: str | None = None
    constraints: tuple[tuple[str, str], ...] = ()
    links: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageVariant:
    label: str
    attr: str | None  # the variant's own type="..." attribute, when written
    description: str = ""
    fields: tuple[PageField, ...] = ()


@dataclass(frozen=True)
class PageType:
    name: str
    kind: str  # "Object", "Union", "Enumeration", "simple", "" (no **Type:** line)
    section: str = ""  # "Agent", "Client", "Protocol Level" for method types, else ""
    method: str = ""
    simple: str = ""  # text of **Type:** `...` for simple types
    description: str = ""
    fields: tuple[PageField, ...] = ()
    shared: tuple[PageField, ...] = ()
    variants: tuple[PageVariant, ...] = ()
    values: tuple[str, ...] = ()
    constraints: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PageMethod:
    name: str
    section: str
    anchor: str
    description: str
    types: tuple[str, ...]


@dataclass(frozen=True)
class Page:
    title: str
    description: str
    sections: tuple[str, ...]
    methods: tuple[PageMethod, ...]
    types: tuple[PageType, ...]
    anchors: frozenset[str] = field(default_factory=frozenset)
    links: tuple[str, ...] = ()

    def type_named(self, name: str) -> list[PageType]:
        return [t for t in self.types if t.name == name]
