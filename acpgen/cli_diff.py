"""``acpgen diff`` and ``acpgen changelog``: what changed between releases, and whom it
breaks. Exit status: 0, or 1 when ``--fail-on`` finds a change at or above its level,
2 for bad input."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from acpgen.cli_guard import example, guard
from acpgen.fetch import commit
from acpgen.locate import is_remote, locate_overlay, locate_schema
from acpgen.errors import AcpgenError, Diagnostic, did_you_mean

if TYPE_CHECKING:
    from acpgen.diff.ignore import Ignore
    from acpgen.fetch import Fetcher

LEVEL_CHOICES = ("error", "warning", "info")

DIFF_HELP = """Report every change between two ACP releases: rule, level, subject, and the side(s)
it breaks (agent, client), on the wire and in the generated Python."""
DIFF_EXAMPLE = example("acpgen diff base/schema schema --fail-on error --format github   (a schema repository's CI gate)")

CHANGELOG_HELP = """Markdown release notes: one section per release, against the one before it."""
CHANGELOG_EXAMPLE = example("acpgen changelog releases/v0.9.1 releases/v0.10.0 releases/v0.11.1 > docs/changelog.md")


def _level(value: Optional[str], option: str) -> Optional[str]:
    if value is not None and value not in LEVEL_CHOICES:
        raise AcpgenError(
            [
                Diagnostic(
                    "ACPG501",
                    f"{option} must be one of {', '.join(LEVEL_CHOICES)}, not {value!r}{did_you_mean(value, LEVEL_CHOICES)}",
                    option,
                )
            ]
        )
    return value


def _ignores(config: Optional[Path], files: list[Path]) -> tuple["Ignore", ...]:
    from acpgen.config import find_config
    from acpgen.diff.ignore import read_ignores

    entries: list[Ignore] = []
    path = config or find_config(Path.cwd())
    if path is not None:
        entries.extend(read_ignores(path, required=config is not None))
    for f in files:
        entries.extend(read_ignores(f))
    return tuple(entries)


def _sources(specs: list[str], config: Optional[Path]) -> tuple[list[Path], "Fetcher | None"]:
    """Each release spec as a local path; remote ones fetched once through the cache and
    the lock next to the config (or in the working directory)."""
    from acpgen.config import Config, find_config, load_config

    if not any(is_remote(s) for s in specs):
        return [locate_schema(s, Path.cwd()) for s in specs], None
    from acpgen import api
    from acpgen.render import STYLES

    path = config or find_config(Path.cwd())
    cfg = Config(Path.cwd(), ())
    if path is not None:
        try:
            cfg = load_config(path, STYLES)
        except AcpgenError:
            cfg = Config(path.parent, ())  # a config with only [diff] entries: its directory
    fetcher = api.fetcher(cfg)
    return [fetcher.resolve(s) if is_remote(s) else locate_schema(s, Path.cwd()) for s in specs], fetcher


def register(app: typer.Typer) -> None:
    @app.command(help=DIFF_HELP, epilog=DIFF_EXAMPLE)
    def diff(
        old: Optional[str] = typer.Argument(
            None, help="The old release: a release directory or schema file, bundled:<release>, a URL, acp@<tag>."
        ),
        new: Optional[str] = typer.Argument(None, help="The new release (same tree and stability as OLD)."),
        fmt: str = typer.Option("text", "--format", help="text, json, markdown, github or junit."),
        fail_on: Optional[str] = typer.Option(
            None, "--fail-on", help="Exit 1 when a change is at or above this wire level: error, warning, info."
        ),
        fail_on_code: Optional[str] = typer.Option(
            None, "--fail-on-code", help="Exit 1 when a change breaks the generated Python at or above this level."
        ),
        stable_only: bool = typer.Option(False, "--stable-only", help="Ignore the unstable schema files."),
        ignore: list[Path] = typer.Option([], "--ignore", help="A TOML file of diff.ignore entries (array of tables), repeatable."),
        config: Optional[Path] = typer.Option(
            None, "--config", help="acpgen.toml or pyproject.toml whose \\[diff] ignore entries apply (found by default)."
        ),
        overlay: list[Path] = typer.Option([], "--overlay", help="An RFD overlay applied to both sides, repeatable."),
        overlay_old: list[Path] = typer.Option([], "--overlay-old", help="An RFD overlay applied to OLD only."),
        overlay_new: list[Path] = typer.Option(
            [], "--overlay-new", help="An RFD overlay applied to NEW only (what would this RFD break?)."
        ),
        rules: bool = typer.Option(False, "--rules", help="List the rule catalogue and exit."),
        explain: bool = typer.Option(
            False, "--explain", help="Text format: say under each record why it got its level (gate, leniency, sender)."
        ),
    ) -> None:
        from acpgen.api import load_sides
        from acpgen.diff import diff_releases
        from acpgen.diff import report
        from acpgen.diff.ignore import split
        from acpgen.diff.rules import catalogue_text

        def run() -> int:
            if rules:
                typer.echo(catalogue_text())
                return 0
            if fmt not in report.FORMATS:
                raise AcpgenError(
                    [
                        Diagnostic(
                            "ACPG501",
                            f"unknown format {fmt!r}; choose from {', '.join(report.FORMATS)}{did_you_mean(fmt, report.FORMATS)}",
                            "--format",
                        )
                    ]
                )
            _level(fail_on, "--fail-on")
            _level(fail_on_code, "--fail-on-code")
            if old is None or new is None:
                raise AcpgenError([Diagnostic("ACPG501", "give two releases: acpgen diff OLD NEW", "diff")])
            entries = _ignores(config, ignore)
            paths, fetched = _sources([old, new], config)
            here = Path.cwd()
            both = tuple(locate_overlay(str(o), here) for o in overlay)
            a, b = load_sides(
                paths,
                [
                    both + tuple(locate_overlay(str(o), here) for o in overlay_old),
                    both + tuple(locate_overlay(str(o), here) for o in overlay_new),
                ],
                names=[s if is_remote(s) else None for s in (old, new)],
            )
            changes = diff_releases(a, b, stable_only)
            kept, hidden, stale = split(changes, entries)
            if fmt == "json":
                sys.stdout.write(report.render_json(kept, hidden, a.name, b.name))
            elif fmt == "markdown":
                sys.stdout.write(report.render_markdown(kept, hidden, a.label, b.label))
            elif fmt == "github":
                sys.stdout.write(report.render_github(kept, b.paths or {}))
            elif fmt == "junit":
                sys.stdout.write(report.render_junit(kept, fail_on))
            else:
                sys.stdout.write(report.render_text(kept, hidden, explain))
            for entry in stale:
                typer.echo(
                    f"warning: {entry.source}: ignore entry {entry.pointer} ({entry.rule} {entry.subject}) matched nothing",
                    err=True,
                )
            typer.echo(report.summary(kept) + (f"; {len(hidden)} ignored" if hidden else ""), err=True)
            if fetched is not None:
                commit(fetched)
            return 1 if report.failing(kept, fail_on, fail_on_code) else 0

        raise typer.Exit(guard(run))

    @app.command(help=CHANGELOG_HELP, epilog=CHANGELOG_EXAMPLE)
    def changelog(
        releases: list[str] = typer.Argument(..., help="Two or more releases (paths, bundled:, URLs, acp@<tag>), oldest first."),
        stable_only: bool = typer.Option(False, "--stable-only", help="Ignore the unstable schema files."),
        title: str = typer.Option("ACP schema changelog", "--title", help="The page's title."),
    ) -> None:
        from acpgen.api import load_sides
        from acpgen.diff import diff_releases
        from acpgen.diff.report import render_changelog

        def run() -> int:
            if len(releases) < 2:
                raise AcpgenError([Diagnostic("ACPG501", "give at least two releases, oldest first", "changelog")])
            paths, fetched = _sources(list(releases), None)
            sides = load_sides(paths, [()] * len(releases), names=[s if is_remote(s) else None for s in releases])
            if fetched is not None:
                commit(fetched)
            labels = [s.label for s in sides]
            if len(set(labels)) < len(labels):  # two releases of one name: say their paths
                labels = [s.name for s in sides]
            sections = [
                (labels[i], labels[i + 1], diff_releases(a, b, stable_only)) for i, (a, b) in enumerate(zip(sides, sides[1:]))
            ]
            sys.stdout.write(render_changelog(sections, title))
            return 0

        raise typer.Exit(guard(run))
