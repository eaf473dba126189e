"""The pipeline, in order: load -> build IR -> naming -> render -> format -> (write).

The only module that chains the stages. Everything returns values; ``write``
is the only stage that touches the disk, and only ``build`` calls it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from acpgen import __version__, ir
from acpgen.normalise import build_protocol, unimplemented_message
from acpgen.normalise.stability import mark_unstable
from acpgen.config import Config, Target
from acpgen.depth import deep_stack
from acpgen.errors import AcpgenError, Collector, Diagnostic
from acpgen.fetch import UPSTREAM, Fetcher, commit
from acpgen.format import format_file
from acpgen.progress import Progress, Silent
from acpgen.header import Inputs
from acpgen.history.model import History
from acpgen.load import RawDocument, load_inputs
from acpgen.locate import assets_dir, is_remote
from acpgen.naming import Names, decide, unused_overrides
from acpgen.overlay import Overlay, Report, apply_overlays, read_overlays
from acpgen.overlay.apply import build_errors
from acpgen.source import display_path
from acpgen.render.env import templates_digest
from acpgen.render import PYTHON_STYLES, RenderedFile, render_changes, render_docs, render_package_init, render_package_runtime, render_python
from acpgen.write import MANIFEST, Drift, check, manifest_text, recover, write_trees

if TYPE_CHECKING:
    from acpgen.diff import Change, Release


SILENT: Progress = Silent()


@dataclass(frozen=True)
class Built:
    raw: RawDocument
    protocol: ir.Protocol
    names: Names


#: unmarked IR by the content of its schema and meta files (``build_protocols(memo=...)``)
Memo = dict[tuple[str, str | None, str], ir.Protocol]


def _normalised(
    schema: Path, naming: Config | None, overlays: tuple[Overlay, ...], memo: Memo | None = None
) -> tuple[list[tuple[RawDocument, ir.Protocol]], Collector]:
    """load -> overlay -> IR passes for every schema file of ``schema`` (unstable items
    not marked yet), and the problems met. ``memo`` (without overlays) reuses the IR of a
    file whose schema and meta bytes were built before."""
    problems = Collector()
    out: list[tuple[RawDocument, ir.Protocol]] = []
    for raw in load_inputs(schema):
        meta = raw.meta.source.sha256 if raw.meta.source else None
        # what the IR reads besides the bytes: the file's tree, stability and stated version
        key = (raw.source.sha256, meta, f"{raw.tree}|{raw.stability}|{raw.located_version}|{naming.unimplemented if naming else 'error'}")
        if memo is not None and not overlays and key in memo:
            out.append((raw, replace(memo[key], source=raw.source.path)))
            continue
        reports: tuple[Report, ...] = ()
        if overlays:
            raw, reports = apply_overlays(raw, overlays, schema_name(raw))
            errors = build_errors(reports)
            if errors:
                problems.items.extend(errors)
                continue
        try:
            unimplemented = naming.unimplemented if naming else "error"
            protocol = replace(build_protocol(raw, unimplemented), overlays=tuple(_applied(r) for r in reports))
            out.append((raw, protocol))
            if memo is not None and not overlays:
                memo[key] = protocol
        except AcpgenError as exc:
            problems.extend(exc)
    return out, problems


def _marked(protocols: list[ir.Protocol]) -> list[ir.Protocol]:
    stable = {p.tree: p for p in protocols if p.stability == "stable"}
    return [mark_unstable(p, stable.get(p.tree)) for p in protocols]


def build_protocols(
    schema: Path, naming: Config | None = None, overlays: tuple[Overlay, ...] = (), memo: Memo | None = None
) -> list[ir.Protocol]:
    """load -> overlay -> IR passes, without Python naming: what ``acpgen diff`` and the
    docs' history read (a release's names are never rendered, so they are not decided).
    A history shares one ``memo`` across its releases: a file unchanged since an earlier
    release is not built again (its nodes keep the earlier file's path in their origins,
    which a history never shows)."""
    normalised, problems = _normalised(schema, naming, overlays, memo)
    problems.raise_if_any()
    return _marked([p for _, p in normalised])


def load_release(
    path: Path, overlays: tuple[Path, ...] = (), naming: Config | None = None, name: str | None = None, memo: Memo | None = None
) -> Release:
    """One side of ``acpgen diff`` (and a release of a history): ``build_protocols`` of
    ``path`` with ``overlays``, handed to the diff as a :class:`~acpgen.diff.Release`."""
    from acpgen.diff import release

    return release(path, build_protocols(path, naming, read_overlays(overlays), memo), name)


def load_sides(
    paths: list[Path], overlays: list[tuple[Path, ...]], naming: Config | None = None, names: list[str | None] | None = None
) -> list[Release]:
    """Every side loaded; the problems of all of them reported together. ``names`` (a
    remote spec such as ``acp@schema-v1.20.0``) replace the local paths in reports."""
    problems = Collector()
    sides: list[Release] = []
    for i, (path, extra) in enumerate(zip(paths, overlays)):
        try:
            sides.append(load_release(path, extra, naming, names[i] if names else None))
        except AcpgenError as exc:
            problems.extend(exc)
    problems.raise_if_any()
    return sides


def diff_paths(
    old: Path, new: Path, old_overlays: tuple[Path, ...] = (), new_overlays: tuple[Path, ...] = (),
    stable_only: bool = False, naming: Config | None = None,
) -> list[Change]:
    """``acpgen diff OLD NEW`` as a function: the changes from ``old`` to ``new``."""
    from acpgen.diff import diff_releases

    a, b = load_sides([old, new], [old_overlays, new_overlays], naming)
    return diff_releases(a, b, stable_only)


def build_ir(schema: Path, naming: Config | None = None, overlays: tuple[Overlay, ...] = ()) -> list[Built]:
    """load -> overlay -> IR passes -> naming, for every schema file of ``schema``."""
    normalised, problems = _normalised(schema, naming, overlays)
    out: list[Built] = []
    for raw, protocol in normalised:
        try:
            out.append(Built(raw, protocol, decide(protocol, naming.naming if naming else None)))
        except AcpgenError as exc:
            problems.extend(exc)
    problems.raise_if_any()
    marked = _marked([b.protocol for b in out])
    return [replace(b, protocol=p) for b, p in zip(out, marked)]


def _applied(report: Report) -> ir.OverlayApplied:
    o = report.overlay
    return ir.OverlayApplied(
        id=o.id,
        title=o.title,
        rfd=o.rfd,
        status=o.status,
        verdict=report.verdict,
        link=o.link,
        merged_upstream=o.merged_upstream,
        changes=tuple(ir.OverlayChange(r.op, r.target, r.status, r.detail) for r in report.rows),
    )


def _source_name(raw: RawDocument, root: Path, target: Target) -> str:
    """How the manifest names a schema file: relative to the config; ``bundled:v0.1.3/...``
    for a bundled release and ``acp@<tag>/...`` (or the URL) for a remote one, so that the
    manifest does not depend on where acpgen or its cache is installed."""
    path = Path(raw.source.path).resolve()
    if target.remote:
        inside = _inside(path, target.schema.resolve() if target.schema.is_dir() else target.schema.resolve().parent)
        return target.remote if target.remote.startswith("http") else f"{target.remote}/{inside}"
    bundled = _inside(path, (assets_dir() / "acp").resolve())
    if bundled is not None:
        return f"bundled:{bundled}"
    try:
        return Path(os.path.relpath(path, root.resolve())).as_posix()
    except ValueError:
        return path.name


def _inside(path: Path, base: Path) -> str | None:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return None


def schema_name(raw: RawDocument) -> str:
    """``v1/schema.json`` in a tree directory, ``schema.json`` in a flat release: no absolute paths."""
    path = Path(raw.source.path)
    return f"{path.parent.name}/{path.name}" if path.parent.name == raw.tree else path.name


def unenforced(config: Config) -> list[Diagnostic]:
    """With ``[keywords] unimplemented = "warn"``: one warning per keyword the bindings of
    each target do not enforce (the IR is built again: only users who opt in pay)."""
    if config.unimplemented != "warn":
        return []
    config, _ = resolve_sources(config)
    out = []
    for target in config.targets:
        for b in build_ir(target.schema, config, read_overlays(target.overlays)):
            source = Path(b.raw.source.path)
            for pointer, keyword in b.protocol.unenforced:
                message = unimplemented_message(keyword) + ' ([keywords] unimplemented = "warn")'
                out.append(Diagnostic("ACPG209", message, display_path(source), pointer))
    return out


def render_target(
    target: Target, config: Config, formatted: bool = True, progress: Progress = SILENT
) -> dict[PurePosixPath, str]:
    """``formatted=False`` skips black (tests that only import the output use it)."""
    overlays = read_overlays(target.overlays)
    built = build_ir(target.schema, config, overlays)
    history = read_history(target, config) if target.history else None
    unused = unused_overrides(config.naming, [b.protocol for b in built])
    if unused and len(config.targets) == 1:
        raise AcpgenError(
            [Diagnostic("ACPG302", f"naming override {k!r} matches nothing", config.source, "/naming/" + k) for k in unused]
        )
    files: list[RenderedFile] = []
    for style in target.styles:
        modules: list[str] = []
        for b in built:
            inputs = Inputs(
                label=b.protocol.label,
                schema_name=schema_name(b.raw),
                schema_sha256=b.protocol.source_sha256,
                meta_sha256=b.protocol.meta_sha256,
                overlays=tuple((o.id, o.sha256) for o in overlays),
                style=style,
                templates_sha256=templates_digest(style),
            )
            if style in PYTHON_STYLES:
                rendered = render_python(b.protocol, b.names, inputs, style, target.package)
                rendered = replace(
                    rendered,
                    source=_source_name(b.raw, config.root, target),
                    source_sha256=b.protocol.source_sha256,
                )
                modules.append(rendered.path.stem)
                files.append(rendered)
            else:
                if history is not None:
                    inputs = replace(inputs, history=history.digests)
                doc = render_docs(b.protocol, inputs, style, history)
                files.append(
                    replace(doc, source=_source_name(b.raw, config.root, target), source_sha256=b.protocol.source_sha256)
                )
        if style in PYTHON_STYLES:
            files.append(render_package_init(style, modules, target.package))
            files.extend(render_package_runtime(style, target.package))
        elif history is not None:
            files.extend(changes_files(history, sorted({b.protocol.tree for b in built}), style))
    out: dict[PurePosixPath, str] = {}
    entries: list[dict[str, object]] = []
    problems = Collector()
    progress.grow(len(files))
    for f in files:
        progress.step(f"{target.name}: {f.path.as_posix()}")
        try:
            text = format_file(f.path, f.text) if formatted and not f.preformatted else f.text
        except AcpgenError as exc:
            problems.extend(exc)
            continue
        out[f.path] = text
        entry: dict[str, object] = {"path": f.path.as_posix(), "style": f.style}
        if f.tree:
            entry.update(tree=f.tree, stability=f.stability, source=f.source, sha256=f.source_sha256)
        if f.module:
            entry["module"] = f.module
        entries.append(entry)
    problems.raise_if_any()
    out[PurePosixPath(MANIFEST)] = manifest_text(entries, __version__)
    return out


def read_history(target: Target, config: Config) -> History:
    """The releases of ``target.history`` loaded and compared (the source and load stages
    of the history; remote releases through the cache and the lock)."""
    from acpgen.history.load import load_history
    from acpgen.history.sources import history_sources

    fetched = dict(target.fetched_history)

    def fetch(spec: str) -> Path:
        return fetched[spec] if spec in fetched else fetcher(config).resolve(spec)

    sources = history_sources(target.history, config.root, target.schema, target.remote, fetch)
    return load_history([p for p, _ in sources], load_release, [n or display_path(p) for p, n in sources])


def changes_files(history: History, trees: list[str], style: str) -> list[RenderedFile]:
    out = []
    for tree in trees:
        inputs = Inputs(
            label=tree,
            schema_name=f"history of {len(history.steps)} releases",
            schema_sha256=hashlib.sha256("\n".join(history.digests).encode()).hexdigest(),
            meta_sha256=None,
            style=style,
            templates_sha256=templates_digest(style),
        )
        out.append(replace(render_changes(history, tree, inputs), source="history"))
    return out


def render_all(
    config: Config, formatted: bool = True, progress: Progress = SILENT
) -> list[tuple[Target, dict[PurePosixPath, str]]]:
    """Render every target; all errors of all targets are reported together."""
    problems = Collector()
    results: list[tuple[Target, dict[PurePosixPath, str]]] = []
    for target in config.targets:
        try:
            with deep_stack():
                results.append((target, render_target(target, config, formatted, progress)))
        except AcpgenError as exc:
            problems.extend(exc)
        except RecursionError:
            problems.add("ACPG208", "schema nesting is too deep to render", display_path(target.schema))
    problems.raise_if_any()
    return results


def fetcher(config: Config) -> Fetcher:
    upstream = os.environ.get("ACPGEN_UPSTREAM") or config.fetch.upstream or UPSTREAM
    return Fetcher(config.lock_path, upstream, config.fetch.timeout)


def resolve_sources(config: Config) -> tuple[Config, Fetcher | None]:
    """The source stage: every remote schema fetched (or read from the cache the lock
    pins) and replaced by its local copy."""
    if not any(t.remote or any(map(is_remote, t.history)) for t in config.targets):
        return config, None
    f = fetcher(config)
    problems = Collector()
    targets = []
    for t in config.targets:
        try:
            t = replace(t, schema=f.resolve(t.remote)) if t.remote else t
            targets.append(replace(t, fetched_history=tuple((h, f.resolve(h)) for h in t.history if is_remote(h))))
        except AcpgenError as exc:
            problems.extend(exc)
    problems.raise_if_any()
    return replace(config, targets=tuple(targets)), f


def build(config: Config, formatted: bool = True, progress: Progress = SILENT) -> list[tuple[Target, int]]:
    config, fetched = resolve_sources(config)
    for target in config.targets:
        recover(target.root)  # a previous run killed mid-swap left the old output aside
    results = render_all(config, formatted, progress)  # nothing is written unless every target rendered
    write_trees([(target.root, files) for target, files in results])
    if fetched is not None:
        commit(fetched)  # the lock pins what a good build used
    return [(target, len(files)) for target, files in results]


def build_site(config: Config, out: Path, progress: Progress = SILENT) -> int:
    """Every target's ``md`` pages (and history) as one mkdocs-material project in ``out``."""
    from acpgen.site import render_site

    config, fetched = resolve_sources(config)
    config = replace(config, targets=tuple(replace(t, styles=("md",), package=None) for t in config.targets))
    recover(out)
    files = render_site(config, render_all(config, True, progress))
    write_trees([(out, files)])
    if fetched is not None:
        commit(fetched)
    return len(files)


def check_all(config: Config, progress: Progress = SILENT) -> list[tuple[Target, Drift]]:
    config, _ = resolve_sources(config)
    return [(target, check(target.root, files)) for target, files in render_all(config, True, progress)]
