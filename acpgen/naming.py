"""All naming, decided once for a whole protocol.

* A ``$defs`` key is authoritative: it is the class or alias name (one that is not an
  identifier is PascalCased, ``class`` -> ``Class``; a keyword then gets a trailing
  underscore, ``None`` -> ``None_``; a key with no letter or digit is ACPG303).
* A tagged-union variant is named from its tag value and its union
  (``text`` in ``ContentBlock`` -> ``TextContentBlock``); a default or fallback
  variant from its title (``other`` -> ``OtherContentBlock``). When that name is
  already the name of the variant's own payload def (upstream's
  ``RunningStateUpdate`` for ``StateUpdate`` ``running``), the tagged form is
  ``RunningStateUpdateVariant``. A variant whose payload is itself a tagged union
  is one class per inner variant, named with the inner variant's prefix
  (``running`` of ``state_update`` -> ``RunningStateUpdateSessionUpdate``).
* A node lifted out of an inline schema is named from its parent and the
  property, title or distinguishing properties that led to it.
* Attributes are snake_case with the wire name kept as an alias; keywords,
  names that shadow builtins used in annotations and base-class attributes get
  a trailing underscore.
* A JSON-RPC method's handler (its method in the generated ``Agent`` / ``Client``
  protocols and ``RemoteAgent`` / ``RemoteClient``) is its wire name in snake_case, with
  the punctuation between words dropped: ``session/prompt`` -> ``session_prompt``,
  ``$/cancel_request`` -> ``cancel_request``. A wire name that is both a request and a
  notification names the notification's handler ``<name>_notification``.
* Two things with one name are an error pointing at both; there is no numeric
  suffix and no hand-kept rename table. A reviewed override (``[naming]`` in
  the config, each with a reason) is the only way to change a derived name.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from acpgen import ir
from acpgen.errors import AcpgenError, Diagnostic

#: names the generated modules define themselves
MODULE_RESERVED = frozenset(
    {
        "AcpBaseModel",
        "MethodSpec",
        "METHODS",
        "AGENT_METHODS",
        "CLIENT_METHODS",
        "PROTOCOL_METHODS",
        "UnknownValue",
        "ValidationError",
        "Any",
        "Annotated",
        "Literal",
        "Union",
        "Final",
        "Field",
        "BaseModel",
        "ConfigDict",
        "TypeAdapter",
        "Discriminator",
        "Tag",
        "Self",
        "TypeAlias",
        "NamedTuple",
        "Callable",
        "CoreSchema",
        "GetCoreSchemaHandler",
        "PROTOCOL_VERSION",
        "RPC",
        "Agent",
        "Client",
        "RemoteAgent",
        "RemoteClient",
        "RpcError",
        "Protocol",
        "cast",
    }
)

#: handler names the generated interfaces define for extension methods
HANDLER_RESERVED = frozenset({"extension_request", "extension_notification"})

#: attribute names that would shadow what the class body or the base class needs
ATTRIBUTE_RESERVED: Mapping[str, frozenset[str]] = {
    "pydantic": frozenset(
        {
            "list", "dict", "str", "int", "float", "bool", "bytes", "object", "type",
            "copy", "json", "schema", "schema_json", "validate", "construct", "fields",
            "from_orm", "parse_obj", "parse_raw", "parse_file", "update_forward_refs",
        }
    ),
}


@dataclass(frozen=True)
class Override:
    name: str
    reason: str


@dataclass(frozen=True)
class Names:
    types: dict[str, str]
    #: (owner key, wire name) -> attribute name
    attrs: dict[tuple[str, str], str] = field(default_factory=dict)
    #: (wire method, kind) -> handler method name
    handlers: dict[tuple[str, str], str] = field(default_factory=dict)

    def handler(self, method: str, kind: str) -> str:
        return self.handlers[(method, kind)]

    def type(self, key: str) -> str:
        return self.types[key]

    def attr(self, owner: str, wire: str) -> str:
        return self.attrs[(owner, wire)]


_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+")


def pascal(text: str) -> str:
    words = _WORD.findall(str(text))
    out = "".join(w[:1].upper() + w[1:] for w in words)
    if not out:
        return ""
    return out if not out[0].isdigit() else "V" + out


def snake(text: str) -> str:
    core = text.lstrip("_")
    words = _WORD.findall(core)
    return "_".join(w.lower() for w in words)


def class_name(
    key: str,
    protocol_defs: Mapping[str, ir.Def],
    variants: Mapping[str, ir.Variant],
    nested: Mapping[str, ir.NestedVariant] | None = None,
) -> str:
    if nested and key in nested:
        # one inner variant of a variant whose payload is a tagged union: the inner
        # variant's prefix on the outer variant's name (`running` of `state_update` in
        # `SessionUpdate` -> RunningStateUpdateSessionUpdate)
        n = nested[key]
        iv = n.inner_variant
        prefix = str(iv.tag_value) if iv.kind == "tagged" else (iv.title or ("other" if iv.kind == "fallback" else iv.base or "default"))
        return pascal(prefix) + class_name(n.variant.key, protocol_defs, variants)
    if key in variants:
        union, _, rest = key.rpartition("#")
        v = variants[key]
        owner = class_name(union, protocol_defs, variants)
        if v.kind == "tagged":
            name = pascal(str(v.tag_value)) + owner
        elif v.kind == "fallback":
            name = pascal(v.title or "other") + owner
        elif v.title:
            name = pascal(v.title) + owner
        else:
            name = (v.base or "Default" + owner) + "Variant"
        # the payload def already carries the variant's name (Rust `RunningStateUpdate`
        # for `StateUpdate::Running`): the tagged form is that name + "Variant"
        return name + "Variant" if name == v.base else name
    if "." in key:
        parent, _, hint = key.rpartition(".")
        return class_name(parent, protocol_defs, variants) + pascal(hint)
    if "#" in key:
        union, _, tag = key.rpartition("#")
        return pascal(tag) + class_name(union, protocol_defs, variants)
    if key.isidentifier() and not keyword.iskeyword(key):
        return key
    # `class` -> `Class`; `None`, `True` and `False` are PascalCase already -> `None_`
    return not_a_keyword(pascal(key))


def not_a_keyword(name: str) -> str:
    """The one rule for a derived name that is a Python keyword: a trailing underscore
    (class names, attributes and handlers alike)."""
    return name + "_" if keyword.iskeyword(name) else name


def attribute_name(wire: str, style: str = "pydantic") -> str:
    name = snake(wire) or "field"
    if name[0].isdigit():
        name = "n" + name
    if name in ATTRIBUTE_RESERVED.get(style, frozenset()) or name.startswith("model_"):
        return name + "_"
    return not_a_keyword(name)


def handler_name(wire: str) -> str:
    """The Python name of a wire method's handler (see the module docstring)."""
    name = snake(wire) or "method"  # every run of punctuation separates words
    if name[0].isdigit():
        name = "n" + name
    return not_a_keyword(name)


def handler_override_key(m: ir.Method) -> str:
    """The ``[naming]`` key of a method's handler: ``method:<wire>`` (``:notification``
    added for a notification)."""
    return f"method:{m.name}" + (":notification" if m.kind == "notification" else "")


def method_handlers(protocol: ir.Protocol, overrides: Mapping[str, Override]) -> tuple[dict[tuple[str, str], str], list[Diagnostic]]:
    """Handler names for every method of ``protocol``; a clash is an ACPG301."""
    kinds: dict[str, set[str]] = {}
    for m in protocol.methods:
        kinds.setdefault(m.name, set()).add(m.kind)
    out: dict[tuple[str, str], str] = {}
    owners: dict[str, ir.Method] = {}
    problems: list[Diagnostic] = []
    for m in protocol.methods:
        key = (m.name, m.kind)
        if key in out:
            continue
        ov = overrides.get(handler_override_key(m))
        name = ov.name if ov else handler_name(m.name)
        if not ov and m.kind == "notification" and len(kinds[m.name]) > 1:
            name += "_notification"
        out[key] = name
        other = owners.get(name)
        if name in HANDLER_RESERVED or (other is not None and other.name != m.name):
            what = f"method {other.name!r} ({_origin_text(other.origin)})" if other else "the extension-method handler"
            problems.append(
                Diagnostic(
                    "ACPG301",
                    f"method {m.name!r} and {what} both become handler {name!r}; add a [naming] override with a reason",
                    m.origin.file,
                    m.origin.pointer,
                )
            )
        owners.setdefault(name, m)
    return out, problems


def _origin_text(origin: ir.Origin) -> str:
    return f"{origin.file}:{origin.pointer}"


def class_fields(protocol: ir.Protocol) -> dict[str, list[ir.Field]]:
    """Every class the bindings define, with every field it carries (inherited too)."""
    defs = protocol.def_map()
    out: dict[str, list[ir.Field]] = {}

    def object_fields(key: str) -> list[ir.Field]:
        d = defs.get(key)
        if isinstance(d, ir.ObjectDef):
            return [*d.fields, *(f for m in d.mixins for f in _mixin_fields(m))]
        return []

    def _mixin_fields(m: ir.Mixin) -> list[ir.Field]:
        nested = [f for inner in m.mixins for f in _mixin_fields(inner)]
        return [*(object_fields(m.base) if m.base else []), *m.fields, *nested]

    for d in protocol.defs:
        if isinstance(d, ir.ObjectDef):
            out[d.key] = object_fields(d.key)
        elif isinstance(d, ir.TaggedUnionDef):
            for v in d.variants:
                fs = [*(object_fields(v.base) if v.base else []), *d.shared_fields, *v.fields]
                fs += [f for m in v.mixins for f in _mixin_fields(m)]
                out[v.key] = fs
    for n in ir.all_nested_variants(protocol):
        # the inner variant's members, then the outer variant's own (its base, the inner
        # union, brings none of its own)
        out[n.key] = out[n.inner_variant.key] + out[n.variant.key]
    return out


def decide(
    protocol: ir.Protocol,
    overrides: Mapping[str, Override] | None = None,
    style: str = "pydantic",
) -> Names:
    overrides = overrides or {}
    defs = protocol.def_map()
    variants = {v.key: v for d in protocol.defs if isinstance(d, ir.TaggedUnionDef) for v in d.variants}
    origins: dict[str, ir.Origin] = {d.key: d.origin for d in protocol.defs}
    origins.update({k: v.origin for k, v in variants.items()})
    nested = {n.key: n for n in ir.all_nested_variants(protocol)}
    origins.update({k: n.variant.origin for k, n in nested.items()})

    problems: list[Diagnostic] = []
    types: dict[str, str] = {}
    for key in sorted(origins):
        ov = overrides.get(key)
        name = ov.name if ov else class_name(key, defs, variants, nested)
        types[key] = name
        if not name.isidentifier() or keyword.iskeyword(name):  # `---` has no PascalCase form
            what = "the def key" if key in defs else "the variant"
            o = origins[key]
            problems.append(
                Diagnostic(
                    "ACPG303",
                    f"{what} {key!r} gives no Python name; add a [naming] override with a reason",
                    o.file,
                    o.pointer,
                )
            )

    by_name: dict[str, list[str]] = {}
    for key, name in types.items():
        by_name.setdefault(name, []).append(key)
    for name, keys in sorted(by_name.items()):
        if name in MODULE_RESERVED:
            o = origins[keys[0]]
            problems.append(
                Diagnostic("ACPG301", f"{name!r} is a name the generated module defines itself", o.file, o.pointer)
            )
        if len(keys) > 1:
            first, second = sorted(keys)[:2]
            o = origins[second]
            problems.append(
                Diagnostic(
                    "ACPG301",
                    f"{name!r} names both {_origin_text(origins[first])} and {_origin_text(o)}; "
                    "add a [naming] override with a reason",
                    o.file,
                    o.pointer,
                )
            )

    attrs: dict[tuple[str, str], str] = {}
    for owner, fields in sorted(class_fields(protocol).items()):
        tag = nested[owner].union.tag if owner in nested else _tag_of(owner, defs, variants)
        wires = [f.wire_name for f in fields] + ([tag] if tag else [])
        for wire in wires:
            ov = overrides.get(f"{owner}.{wire}")
            attr = ov.name if ov else attribute_name(wire, style)
            attrs[(owner, wire)] = attr
        seen: dict[str, str] = {}
        for wire in dict.fromkeys(wires):
            attr = attrs[(owner, wire)]
            if attr in seen and seen[attr] != wire:
                o = origins.get(owner, protocol.defs[0].origin if protocol.defs else ir.Origin("", ""))
                problems.append(
                    Diagnostic(
                        "ACPG301",
                        f"members {seen[attr]!r} and {wire!r} of {types.get(owner, owner)} both become "
                        f"attribute {attr!r}; add a [naming] override with a reason",
                        o.file,
                        o.pointer,
                    )
                )
            seen[attr] = wire
    handlers, handler_problems = method_handlers(protocol, overrides)
    problems += handler_problems
    if problems:
        raise AcpgenError(problems)
    return Names(types, attrs, handlers)


def _tag_of(owner: str, defs: Mapping[str, ir.Def], variants: Mapping[str, ir.Variant]) -> str | None:
    if owner in variants:
        union = defs.get(owner.rpartition("#")[0])
        if isinstance(union, ir.TaggedUnionDef):
            return union.tag
    return None


def unused_overrides(overrides: Mapping[str, Override], protocols: Iterable[ir.Protocol]) -> list[str]:
    used: set[str] = set()
    for p in protocols:
        used.update(d.key for d in p.defs)
        used.update(v.key for d in p.defs if isinstance(d, ir.TaggedUnionDef) for v in d.variants)
        used.update(n.key for n in ir.all_nested_variants(p))
        used.update(f"{o}.{f.wire_name}" for o, fs in class_fields(p).items() for f in fs)
        used.update(handler_override_key(m) for m in p.methods)
    return sorted(k for k in overrides if k not in used)
