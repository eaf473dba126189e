"""Frozen view models of the JSON-RPC part of every Python module, whatever its style: the
method table and the interfaces of both sides (handlers and their signatures)."""

from __future__ import annotations

from dataclasses import dataclass

from acpgen import ir
from acpgen.layout import LINE_LENGTH
from acpgen.naming import Names


@dataclass(frozen=True)
class MethodView:
    method: str
    side: str
    kind: str
    params: str
    result: str
    #: the handler's Python name (``session_prompt``)
    handler: str = ""
    description: str | None = None
    #: the result is an object with no required member: a handler may return ``None``
    #: (the peer receives ``{}``)
    empty_result: bool = False
    #: the name under which the params hold the session the method is about (an
    #: attribute, or a key in the TypedDict style): messages are ordered per session
    session: str | None = None
    #: where that is an attribute: its wire key, for params given in wire form (a dict)
    session_key: str | None = None

    def signature(self, indent: str = "    ") -> str:
        """``async def handler(self, params: P) -> R:`` as black lays it out (a def is split
        at its first bracket: the parameters on one line, else one per line)."""
        return def_lines(indent, f"async def {self.handler}(", ("self", f"params: {self.params_type}"), f") -> {self.result_type}:")

    def handler_signature(self, indent: str = "    ") -> str:
        """The interface's signature: as :meth:`signature`, ``R | None`` for an empty result."""
        result = f"{self.result_type} | None" if self.empty_result and self.result_type != "Any" else self.result_type
        return def_lines(indent, f"async def {self.handler}(", ("self", f"params: {self.params_type}"), f") -> {result}:")

    @property
    def params_type(self) -> str:
        return "Any" if self.params == "None" else self.params

    @property
    def result_type(self) -> str:
        if self.kind == "notification":
            return "None"
        return "Any" if self.result == "None" else self.result


@dataclass(frozen=True)
class RpcView:
    """The JSON-RPC part of a module: the method table, the interfaces of both sides."""

    methods: tuple[MethodView, ...]
    #: the schema's JSON-RPC ``Error`` object def, when it has one
    error_type: str | None
    agent: tuple[MethodView, ...]
    client: tuple[MethodView, ...]
    #: the schema declares JSON-RPC batches
    batches: bool = False


def def_lines(indent: str, head: str, params: tuple[str, ...], tail: str) -> str:
    """A ``def`` line laid out as black does: whole when it fits, else split after the
    opening bracket with the parameters on one line, else one per line with a trailing
    comma."""
    whole = f"{indent}{head}{', '.join(params)}{tail}"
    if len(whole) <= LINE_LENGTH:
        return whole
    inner = indent + "    "
    body = inner + ", ".join(params)
    if len(body) <= LINE_LENGTH:
        return "\n".join([indent + head, body, indent + tail])
    return "\n".join([indent + head, *(f"{inner}{p}," for p in params), indent + tail])


def method_views(protocol: ir.Protocol, names: Names, by_key: bool = False) -> tuple[MethodView, ...]:
    """The method table; ``by_key``: params are dicts (TypedDict), read by wire name."""
    defs = protocol.def_map()

    def session(m: ir.Method) -> tuple[str | None, str | None]:
        """Where the params hold the session, and its wire key where that differs."""
        if m.session is None or m.params is None:
            return None, None
        if by_key:
            return m.session, None
        attr = names.attr(m.params, m.session)
        return attr, (None if attr == m.session else m.session)

    def prose(m: ir.Method) -> str | None:
        """The method's prose, else its params type's description."""
        carrier = defs.get(m.params) if m.params else None
        return m.description or (carrier.description if carrier is not None else None)

    return tuple(
        MethodView(
            m.name,
            m.side,
            m.kind,
            names.type(m.params) if m.params else "None",
            names.type(m.result) if m.result else "None",
            names.handler(m.name, m.kind),
            prose(m),
            m.kind == "request" and _empty_object(defs.get(m.result) if m.result else None),
            *session(m),
        )
        for m in protocol.methods
    )


def _empty_object(d: ir.Def | None) -> bool:
    """An object def that ``{}`` can be: no required member."""
    return isinstance(d, ir.ObjectDef) and not any(f.required for f in d.fields)


#: the sides whose methods each interface implements ("" is a method whose side the
#: schema does not say: both sides may receive it)
RECEIVED_BY = {"agent": ("agent", "both", "protocol", ""), "client": ("client", "both", "protocol", "")}


def rpc_view(protocol: ir.Protocol, names: Names, by_key: bool = False) -> RpcView:
    methods = method_views(protocol, names, by_key)
    error = protocol.def_map().get("Error")
    error_type = names.type("Error") if isinstance(error, ir.ObjectDef) else None

    def side(name: str) -> tuple[MethodView, ...]:
        seen: dict[str, MethodView] = {}
        for m in methods:
            if m.side in RECEIVED_BY[name]:
                seen.setdefault(m.handler, m)
        return tuple(sorted(seen.values(), key=lambda m: m.handler))

    return RpcView(methods, error_type, side("agent"), side("client"), protocol.batches)
