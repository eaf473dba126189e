"""IR + names -> {relative path: text}. The only package that imports jinja2."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from acpgen import ir, runtime
from acpgen.header import Inputs, html_comment_header, markdown_header, package_header, python_header
from acpgen.naming import Names
from acpgen.render.env import environment, templates_digest
from acpgen.render.pytypes import py_literal
from acpgen.render.pyviews import build_module_view
from acpgen.render.dcviews import build_dataclass_view
from acpgen.render.docviews import build_doc_page
from acpgen.render.tdviews import build_typeddict_view
from acpgen.history.marks import page_marks
from acpgen.history.model import History

PYTHON_STYLES = ("pydantic", "dataclasses", "typeddict")
DOC_STYLES = ("mdx", "md")
STYLES = PYTHON_STYLES + DOC_STYLES


@dataclass(frozen=True)
class RenderedFile:
    path: PurePosixPath
    text: str
    style: str
    tree: str | None = None
    stability: str | None = None
    module: str | None = None
    source: str | None = None
    source_sha256: str | None = None
    #: written already as black writes it (a template kept black-clean): not laid out
    preformatted: bool = False


def module_stem(protocol: ir.Protocol) -> str:
    return protocol.tree if protocol.stability == "stable" else f"{protocol.tree}_unstable"


def package_name(style: str) -> str:
    return f"acp_{style}"


def package_dir(style: str, package: str | None) -> tuple[str, PurePosixPath]:
    """The import name of a style's package and its directory in the output: ``acp_<style>/``
    by default; a vendored package (``myagent._acp``) is the whole output directory."""
    if package:
        return package, PurePosixPath()
    return package_name(style), PurePosixPath(package_name(style))


def render_python(
    protocol: ir.Protocol, names: Names, inputs: Inputs, style: str, vendored: str | None = None
) -> RenderedFile:
    package, where = package_dir(style, vendored)
    stem = module_stem(protocol)
    header = python_header(inputs)
    if style == "pydantic":
        view = build_module_view(protocol, names, header)
        text = environment().get_template("python/pydantic/module.py.jinja").render(view=view)
    elif style == "dataclasses":
        dc = build_dataclass_view(protocol, names, header)
        text = environment().get_template("python/dataclasses/module.py.jinja").render(view=dc)
    elif style == "typeddict":
        td = build_typeddict_view(protocol, names, header)
        text = environment().get_template("python/typeddict/module.py.jinja").render(view=td)
    else:
        raise ValueError(f"unknown style {style}")
    return RenderedFile(where / f"{stem}.py", text, style, protocol.tree, protocol.stability, f"{package}.{stem}")


#: what a package re-exports of its JSON-RPC layer: the frames, their errors, the error
#: codes and the request context (``_jsonrpc``, ``_router``: cheap to import)
FRAME_NAMES = (
    "Batch",
    "ConnectionClosedError",
    "DEFAULT_MAX_LINE",
    "ErrorResponse",
    "FrameError",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "InvalidResultError",
    "METHOD_NOT_FOUND",
    "MethodNotFound",
    "Notification",
    "OversizedFrameError",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RemoteError",
    "Request",
    "Response",
    "RpcError",
)
ROUTER_NAMES = ("RequestContext", "Router", "current_request")
#: what it re-exports of the connection, its observers and telemetry, and the session
#: helpers (clients: sessions as objects; agents: tool calls and permission), by module:
#: each imported on first use (asyncio with it)
LAZY = (
    ("_connection", ("Connection", "DEFAULT_MAX_IN_FLIGHT")),
    ("_telemetry", ("OpenTelemetry", "Traffic")),
    ("_sessions", ("ClientSessions", "Session", "SessionSnapshot", "TurnEnd", "Update")),
    ("_tool_calls", ("PermissionOutcome", "ToolCalls", "permission_options")),
    ("_versions", ("UNSUPPORTED_PROTOCOL_VERSION", "UnsupportedProtocolVersionError", "Versions")),
    ("_channel", ("Channel", "ChannelClosed", "memory_pair")),
    ("_remote", ("RefusedError", "RemoteDependencyError", "Security", "bearer", "run")),
    ("_remote_server", ("mend_hypercorn_h2", "run_server")),
    ("_remote_client", ("RemoteInfo", "Reconnected", "SessionLoadUnsupportedError", "reconnect")),
)
LAZY_NAMES = tuple(n for _, names in LAZY for n in names)


def _lazy_imports() -> list[str]:
    """The body of the package's ``__getattr__``: each lazy name from its module."""
    lines: list[str] = []
    for i, (module, names) in enumerate(LAZY):
        note = "  # imported on use: importing the package needs no asyncio" if i == 0 else ""
        if len(names) == 1:  # black writes a one-name tuple on one line
            lines += [f'    if name == "{names[0]}":{note}']
        else:
            lines += ["    if name in (", *(f'        "{n}",' for n in names), f"    ):{note}"]
        lines += [f"        from . import {module}", "", f"        return getattr({module}, name)"]
    return lines


def render_package_init(style: str, modules: list[str], vendored: str | None = None) -> RenderedFile:
    package, where = package_dir(style, vendored)
    names = py_literal(tuple(sorted(modules)))
    lines = [
        f"# Generated by acpgen ({style}) - DO NOT EDIT.",
        f'"""ACP bindings ({style}): one module per schema tree and stability, and the'
        " JSON-RPC\nlayer they share (frames, errors, the connection: build frames here, parse"
        ' them with\n``<module>.RPC``)."""',
        "",
        "from typing import TYPE_CHECKING, Any",
        "",
        "from ._jsonrpc import (",
        *(f"    {n}," for n in FRAME_NAMES),
        ")",
        "from ._router import " + ", ".join(ROUTER_NAMES),
        "",
        "if TYPE_CHECKING:",
        *(f"    from .{module} import " + ", ".join(names) for module, names in LAZY),
        "",
        f"#: the generated modules of this package (import them as ``{package}.<name>``)",
        f"MODULES: tuple[str, ...] = {names}",
        "",
        "",
        "def __getattr__(name: str) -> Any:",
        *_lazy_imports(),
        '    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")',
        "",
        "",
        "__all__ = [",
        *(f'    "{n}",' for n in sorted(("MODULES", *FRAME_NAMES, *ROUTER_NAMES, *LAZY_NAMES))),
        "]",
        "",
    ]
    return RenderedFile(where / "__init__.py", "\n".join(lines), style, module=package)


def render_package_runtime(style: str, vendored: str | None = None) -> list[RenderedFile]:
    """The files every module of a style's package imports relatively: the style's runtime
    (``_runtime.py``) and the JSON-RPC layer (``_jsonrpc.py`` and its companions, the same
    for every style), copied from the real modules of ``acpgen.runtime`` under the header;
    and ``py.typed`` (PEP 561), so that type checkers read the package where it is installed."""
    package, where = package_dir(style, vendored)
    header = package_header(style, templates_digest(style))
    out = []
    for name, source in runtime.package_files(style):
        text = header + "\n" + source.read_text(encoding="utf-8")
        stem = name.removesuffix(".py")
        out.append(RenderedFile(where / name, text, style, module=f"{package}.{stem}", preformatted=True))
    out.append(RenderedFile(where / "py.typed", "", style, preformatted=True))
    return out


def doc_path(protocol: ir.Protocol, style: str) -> PurePosixPath:
    """Upstream's layout: ``<tree>/schema.mdx`` and ``<tree>/draft/schema.mdx``."""
    base = PurePosixPath(style) / protocol.tree
    if protocol.stability == "unstable":
        base = base / "draft"
    return base / f"schema.{style}"


def changes_path(tree: str, style: str) -> PurePosixPath:
    """The changes page of a tree, beside its stable page: ``<style>/<tree>/changes.<style>``."""
    return PurePosixPath(style) / tree / f"changes.{style}"


def changes_href(protocol: ir.Protocol, style: str) -> str:
    """The link from a page to its tree's changes page (Markdown links name the file,
    mkdocs rewrites them; Mintlify links name the page)."""
    name = "changes.md" if style == "md" else "changes"
    return ("../" if protocol.stability == "unstable" else "") + name


def render_docs(
    protocol: ir.Protocol, inputs: Inputs, style: str, history: "History | None" = None
) -> RenderedFile:
    if style not in DOC_STYLES:
        raise ValueError(f"unknown style {style}")
    header = markdown_header(inputs) if style == "mdx" else html_comment_header(inputs)
    marks = page_marks(history, protocol.tree, protocol.stability, changes_href(protocol, style)) if history else None
    page = build_doc_page(protocol, header, marks)
    text = environment().get_template(f"docs/{style}/page.{style}.jinja").render(page=page)
    return RenderedFile(doc_path(protocol, style), text, style, protocol.tree, protocol.stability)


def render_changes(history: "History", tree: str, inputs: Inputs) -> RenderedFile:
    """The changes page of ``tree`` (the records of ``acpgen changelog``)."""
    style = inputs.style
    header = markdown_header(inputs) if style == "mdx" else html_comment_header(inputs)
    from acpgen.history.changes import changes_page  # imports the diff report: only with a history

    page = changes_page(history, tree, header)
    text = environment().get_template(f"docs/{style}/changes.{style}.jinja").render(page=page)
    return RenderedFile(changes_path(tree, style), text, style, tree, "changes")
