"""The runtime every generated Python package carries, as real modules of acpgen.

Each file here is type-checked and tested as part of acpgen, and copied verbatim, under the
generated header, into every package acpgen writes (``acpgen.render.render_package_runtime``):

* ``_jsonrpc.py``: :class:`Rpc` (parse and encode frames typed by method), re-exporting
  ``_frames.py``: the frames, their errors, the codec interface, the same in every style;
* ``_router.py`` and ``_connection.py``: the router that answers a frame, and the asyncio
  connection (lifecycle, sending, cancellation), with its parts ``_incoming.py`` (what the
  peer sends: routing, order per session, backpressure) and ``_lines.py`` (the line reader);
* ``_transports.py``: the connection over a spawned agent process or this process's stdio;
* ``_session_state.py``, ``_sessions.py`` and ``_tool_calls.py``: the session helpers,
  a session's state merged from its updates and sessions as objects for clients, tool
  calls and permission for agents (the only files here that name ACP's methods and
  variants, all in ``_session_state.Acp``);
* ``_versions.py``: several protocol versions from one program, negotiated on ``initialize``;
* ``_alternatives.py``: sibling unions, checked on an object's wire form;
* ``_runtime_<style>.py``: the style's base classes, leniency markers and codec, written as
  ``_runtime.py`` in the package; a style's other modules ``_<name>_<style>.py`` are written
  as ``_<name>.py`` (the Pydantic codec ``_codec_pydantic.py`` and unions ``_unions_pydantic.py``);
  a style's modules that its ``_runtime`` imports are written under their own name, the one
  they are imported by here and there (``IMPORTED``: the dataclasses specs ``_dataclass_specs.py``).

Apart from the session helpers, nothing here names a method or a type of ACP: the
generated modules bind it to their own method table. The files import each other relatively, so the copies work wherever a package
is vendored. This ``__init__`` imports none of them.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

RUNTIME_DIR = Path(__file__).resolve().parent

#: the modules shared by every style, by file name (written under the same name)
SHARED = (
    "_jsonrpc.py",
    "_frames.py",
    "_router.py",
    "_connection.py",
    "_incoming.py",
    "_lines.py",
    "_channel.py",
    "_remote.py",
    "_remote_server.py",
    "_remote_client.py",
    "_websocket.py",
    "_ws_client.py",
    "_curl_wire.py",
    "_http_server.py",
    "_http_client.py",
    "_http_wire.py",
    "_transports.py",
    "_skim.py",
    "_telemetry.py",
    "_session_state.py",
    "_sessions.py",
    "_tool_calls.py",
    "_versions.py",
    "_alternatives.py",
)

#: a style's modules that its ``_runtime_<style>.py`` imports: written under the same name
IMPORTED: dict[str, tuple[str, ...]] = {"dataclasses": ("_dataclass_specs.py",)}


def package_files(style: str) -> tuple[tuple[str, Path], ...]:
    """(file name in the generated package, source file) for each runtime file of ``style``:
    ``_runtime_<style>.py`` as ``_runtime.py``, any other ``_<name>_<style>.py`` as
    ``_<name>.py``, the style's ``IMPORTED`` modules under their name, then the shared
    modules."""
    own = RUNTIME_DIR / f"_runtime_{style}.py"
    if not own.is_file():
        raise ValueError(f"no runtime for style {style!r}")
    suffix = f"_{style}.py"
    extra = tuple(
        (p.name[: -len(suffix)] + ".py", p)
        for p in sorted(RUNTIME_DIR.glob(f"_*{suffix}"))
        if p != own
    )
    imported = tuple((name, RUNTIME_DIR / name) for name in IMPORTED.get(style, ()))
    shared = tuple((name, RUNTIME_DIR / name) for name in SHARED)
    return (("_runtime.py", own),) + extra + imported + shared


@lru_cache(maxsize=None)
def runtime_digest(style: str) -> str:
    """sha256 over the runtime files of ``style`` (names and bytes)."""
    h = hashlib.sha256()
    for name, path in package_files(style):
        h.update(name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()
