"""The ``acpgen`` command line. Turns arguments into a Config, calls the pipeline,
prints diagnostics and sets the exit status (0 ok, 1 stale output, 2 bad input)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from dataclasses import replace
from typing import Optional

import typer

from acpgen import __version__, stamp
from acpgen.cli_guard import example
from acpgen.cli_guard import guard as _guard
from acpgen.cli_guard import state as _state
from acpgen.cli_diff import register as register_diff
from acpgen.cli_init import register as register_init
from acpgen.cli_overlay import overlay_app
from acpgen.config import Config, Fetch, Target, find_config, load_config, package_problem
from acpgen.locate import is_remote, default_out_name, locate_overlay, locate_schema
from acpgen.errors import AcpgenError, Collector, Diagnostic, did_you_mean
from acpgen.render import STYLES

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Generate Python bindings and reference docs from ACP JSON Schema releases.",
)
app.add_typer(overlay_app, name="overlay")
register_diff(app)
register_init(app)

def _config(
    schema: Optional[str],
    out: Optional[Path],
    styles: list[str],
    config: Optional[Path],
    overlays: tuple[Path, ...] = (),
    package: Optional[str] = None,
    history: tuple[str, ...] = (),
) -> Config:
    cfg = _base_config(schema, out, styles, config)
    if history:  # the reference pages mark what each release changed
        cfg = replace(cfg, targets=tuple(replace(t, history=t.history + history) for t in cfg.targets))
    if package is not None:
        if len(cfg.targets) != 1:
            raise AcpgenError([Diagnostic("ACPG501", "--package names the package of one target; give --schema", "--package")])
        why = package_problem(package, cfg.targets[0].styles)
        if why:
            raise AcpgenError([Diagnostic("ACPG501", why, "--package")])
        cfg = replace(cfg, targets=(replace(cfg.targets[0], package=package),))
    if not overlays:
        return cfg
    extra = tuple(locate_overlay(str(o), Path.cwd()) for o in overlays)
    return replace(cfg, targets=tuple(replace(t, overlays=t.overlays + extra) for t in cfg.targets))


def _base_config(schema: Optional[str], out: Optional[Path], styles: list[str], config: Optional[Path]) -> Config:
    for s in styles:
        if s not in STYLES:
            hint = did_you_mean(s, STYLES)
            raise AcpgenError([Diagnostic("ACPG501", f"unknown style {s!r}; choose from {', '.join(STYLES)}{hint}", "--style")])
    if schema is not None:
        remote = schema if is_remote(schema) else None
        local = Path() if remote else locate_schema(schema, Path.cwd())
        target_out = out if out is not None else Path("generated") / default_out_name(schema)
        base = load_config(config, STYLES) if config else None
        return Config(
            base.root if base else Path.cwd(),
            (Target(schema, local, target_out, tuple(styles) or ("pydantic",), remote=remote),),
            base.naming if base else {},
            base.source if base else "",
            base.unimplemented if base else "error",
            base.fetch if base else Fetch(),
        )
    path = config or find_config(Path.cwd())
    if path is None:
        raise AcpgenError(
            [Diagnostic("ACPG501", "no --schema given and no acpgen.toml or [tool.acpgen] found", str(Path.cwd()))]
        )
    cfg = load_config(path, STYLES)
    if out is not None or styles:
        cfg = Config(
            cfg.root,
            tuple(
                replace(t, out=out or t.out, styles=tuple(styles) or t.styles) for t in cfg.targets
            ),
            cfg.naming,
            cfg.source,
            cfg.unimplemented,
            cfg.fetch,
        )
    return cfg


def _long(cfg: Config) -> bool:
    """Worth a progress display: several targets, or a release directory (or a remote
    release, which is one)."""
    return len(cfg.targets) > 1 or any(t.remote or t.schema.is_dir() for t in cfg.targets)


def schema_path(spec: str, config: Optional[Config] = None) -> Path:
    """A schema spec as a local path (a remote one through the cache and the lock; the lock
    is not written here: only a build that succeeded writes it)."""
    if is_remote(spec):
        from acpgen import api

        return api.fetcher(config or Config(Path.cwd(), ())).resolve(spec)
    return locate_schema(spec, Path.cwd())


SchemaOpt = typer.Option(
    None,
    "--schema",
    help="A schema file or release directory, bundled:<release>, an https:// URL of a schema file, or acp@<tag>.",
)
OutOpt = typer.Option(None, "--out", help="Output directory (owned by acpgen).")
StyleOpt = typer.Option([], "--style", help=f"Output style, repeatable: {', '.join(STYLES)}.")
ConfigOpt = typer.Option(None, "--config", help="acpgen.toml or pyproject.toml to read.")
QuietOpt = typer.Option(False, "--quiet", "-q", help="Print only problems: no progress, no summary lines.")
PackageOpt = typer.Option(
    None, "--package", help="Vendor the package under this import path (myagent._acp): written to OUT/myagent/_acp/."
)
OverlayOpt = typer.Option(
    [], "--overlay", help="An RFD overlay (YAML) applied before the IR, repeatable; added after each target's own."
)
HistoryOpt = typer.Option(
    [],
    "--history",
    help="Releases to mark the reference pages from (since / stable since / changed in), oldest first, repeatable: "
    "a directory of release folders, a release, bundled:<release>, acp@<tag>.",
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"acpgen {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks of internal errors."),
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_print_version, is_eager=True
    ),
) -> None:
    _state["debug"] = debug


@app.command(epilog=example("acpgen build --schema schemas/acp/v0.1.3 --out generated --style pydantic --style md"))
def build(
    schema: Optional[str] = SchemaOpt,
    out: Optional[Path] = OutOpt,
    style: list[str] = StyleOpt,
    config: Optional[Path] = ConfigOpt,
    overlay: list[Path] = OverlayOpt,
    package: Optional[str] = PackageOpt,
    quiet: bool = QuietOpt,
    history: list[str] = HistoryOpt,
) -> None:
    """Generate every target (or one --schema) and write it atomically."""
    from acpgen import api
    from acpgen.progress import reporter

    def run() -> None:
        cfg = _config(schema, out, style, config, tuple(overlay), package, tuple(history))
        progress = reporter(quiet or not _long(cfg))
        try:
            built = api.build(cfg, progress=progress)
        finally:
            progress.close()
        for target, count in built:
            if not quiet:
                typer.echo(f"{target.name}: wrote {count} files to {target.root}")
        warnings = api.unenforced(cfg)
        for warning in warnings:
            typer.echo(f"warning: {warning.render()}", err=True)
        if stamp.ARGV is not None and not warnings:  # no stamp: every run says them again
            inputs = [cfg.source] if cfg.source else []
            if cfg.lock_path.is_file():
                inputs.append(str(cfg.lock_path))
            for t, _ in built:  # remote schemas: their copies in the cache
                inputs += [str(t.schema), *map(str, t.overlays)]
            stamp.record(stamp.ARGV, Path.cwd(), inputs, [(t.name, n, str(t.root)) for t, n in built])

    _guard(run)


@app.command(epilog=example("acpgen site --schema acp@schema-v1.20.0 --history acp@schema-v1.19.0 --out site && mkdocs build -f site/mkdocs.yml"))
def site(
    schema: Optional[str] = SchemaOpt,
    out: Path = typer.Option(Path("site"), "--out", help="The mkdocs project directory (owned by acpgen)."),
    config: Optional[Path] = ConfigOpt,
    overlay: list[Path] = OverlayOpt,
    history: list[str] = HistoryOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Write a ready mkdocs-material site of the Markdown reference pages (and changes pages)."""
    from acpgen import api
    from acpgen.progress import reporter

    def run() -> None:
        cfg = _config(schema, out, ["md"], config, tuple(overlay), None, tuple(history))
        progress = reporter(quiet or not _long(cfg))
        try:
            count = api.build_site(cfg, out, progress)
        finally:
            progress.close()
        if not quiet:
            typer.echo(f"site: wrote {count} files to {out} (build it: mkdocs build -f {out / 'mkdocs.yml'})")

    _guard(run)


@app.command(epilog=example("acpgen check   (in CI, after the generated files are committed)"))
def check(
    schema: Optional[str] = SchemaOpt,
    out: Optional[Path] = OutOpt,
    style: list[str] = StyleOpt,
    config: Optional[Path] = ConfigOpt,
    overlay: list[Path] = OverlayOpt,
    package: Optional[str] = PackageOpt,
    quiet: bool = QuietOpt,
    history: list[str] = HistoryOpt,
) -> None:
    """Exit 1 and list the files that differ from what build would write."""
    from acpgen import api
    from acpgen.progress import reporter

    def run() -> int:
        cfg = _config(schema, out, style, config, tuple(overlay), package, tuple(history))
        status = 0
        progress = reporter(quiet or not _long(cfg))
        try:
            checked = api.check_all(cfg, progress)
        finally:
            progress.close()
        for target, drift in checked:
            for label, paths in (("stale", drift.stale), ("missing", drift.missing), ("extra", drift.extra)):
                for p in paths:
                    typer.echo(f"{label}: {target.root / p}")
            if not drift.clean:
                status = 1
        if status:
            typer.echo("generated output is out of date; run `acpgen build` (make build)", err=True)
        elif not quiet:
            typer.echo("generated output is up to date")
        return status

    raise typer.Exit(_guard(run))


@app.command(epilog=example("acpgen ir --schema schemas/acp/v0.1.3 > ir.json"))
def ir(
    schema: str = typer.Option(..., "--schema", help="A schema file or release directory, bundled:<release>, a URL, acp@<tag>."),
    config: Optional[Path] = ConfigOpt,
    overlay: list[Path] = OverlayOpt,
) -> None:
    """Print the intermediate model (and the names decided for it) as sorted JSON."""
    from acpgen import api
    from acpgen.ir import to_jsonable

    def run() -> None:
        cfg = load_config(config, STYLES) if config else None
        from acpgen.overlay import read_overlays

        extra = [locate_overlay(str(o), Path.cwd()) for o in overlay]
        built = api.build_ir(schema_path(schema, cfg), cfg, read_overlays(extra))
        doc = {
            b.protocol.label: {"protocol": to_jsonable(b.protocol), "names": dict(sorted(b.names.types.items()))}
            for b in built
        }
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")

    _guard(run)


@app.command("diff-pages", epilog=example("acpgen diff-pages generated/v0.1.3/mdx/v1/schema.mdx upstream/docs/protocol/schema.mdx --explain"))
def diff_pages_cmd(
    ours: Path = typer.Argument(..., help="A schema reference page (acpgen's, MDX or Markdown export)."),
    theirs: Path = typer.Argument(..., help="The reference page to compare with (e.g. upstream's schema.mdx)."),
    text: bool = typer.Option(False, "--text", help="Also compare descriptions (whitespace and bullets normalised)."),
    as_json: bool = typer.Option(False, "--json", help="Print the differences as JSON records."),
    explain_: bool = typer.Option(
        False, "--explain", help="Name the deliberate fix behind each difference; exit 1 only for unexplained ones."
    ),
) -> None:
    """Structural diff of two schema reference pages: types, fields (type text, required),
    variants, enum values, methods. Exit 1 when they differ."""
    from dataclasses import asdict

    from acpgen.pages.diff import diff_pages
    from acpgen.pages.parse import parse_page
    from acpgen.pages.rules import explain
    from acpgen.source import read_source

    def run() -> int:
        pages = []
        problems = Collector()
        for path in (ours, theirs):
            try:
                source = read_source(path)
                if not source.text.strip():
                    raise AcpgenError([source.diagnostic("ACPG102", "the file is empty")])
                pages.append(parse_page(source.text))
            except AcpgenError as exc:
                problems.extend(exc)
            except ValueError as exc:
                problems.add("ACPG107", f"not a schema reference page: {exc}", source.path)
        problems.raise_if_any()
        rows = diff_pages(pages[0], pages[1], text=text)
        reasons = [explain(r, pages[0], pages[1]) if explain_ else None for r in rows]
        if as_json:
            records = [dict(asdict(r), rule=why) for r, why in zip(rows, reasons)]
            sys.stdout.write(json.dumps(records, indent=2) + "\n")
        else:
            for r, why in zip(rows, reasons):
                typer.echo(r.render() + (f"  [{why}]" if why else ""))
            typer.echo(f"{len(rows)} difference(s), {sum(1 for w in reasons if w)} explained", err=True)
        failing = [r for r, why in zip(rows, reasons) if why is None]
        return 1 if failing else 0

    raise typer.Exit(_guard(run))


def main() -> None:
    app()
