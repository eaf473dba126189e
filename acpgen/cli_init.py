"""``acpgen init``: a commented configuration for one schema (a path, ``bundled:``, a URL or
``acp@<tag>``), as ``acpgen.toml`` or as ``[tool.acpgen]`` in ``pyproject.toml``. It never
overwrites: an existing ``acpgen.toml``, or a ``pyproject.toml`` that has ``[tool.acpgen]``
already, is refused (exit 2)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Optional

import typer

from acpgen.cli_guard import example, guard
from acpgen.errors import AcpgenError, Diagnostic, did_you_mean

INIT_EXAMPLE = example("acpgen init --schema acp@schema-v1.21.0 --style pydantic --style md")


def config_text(schema: str, styles: list[str], out: str, package: str | None, table: str) -> str:
    """The configuration, every key explained; ``table`` is ``""`` (acpgen.toml) or
    ``"tool.acpgen."`` (pyproject.toml)."""
    remote = schema.startswith(("http://", "https://", "acp@"))
    lines = [
        "# acpgen: Python bindings and reference docs from ACP JSON Schema releases.",
        "# `acpgen build` writes every target below; `acpgen check` (in CI) fails when the",
        "# committed output is not what build writes.",
        "",
        f"[[{table}target]]",
        f"name = {_q(schema)}",
        "# a schema file or release directory, bundled:<release>, an https:// URL of a schema",
        "# file, or acp@<tag> (an upstream release; pinned in acpgen.lock on the first build)",
        f"schema = {_q(schema)}",
        "# pydantic, dataclasses, typeddict (Python packages), mdx, md (reference pages)",
        f"styles = [{', '.join(_q(s) for s in styles)}]",
        "# a directory acpgen owns: every build replaces it whole",
        f"out = {_q(out)}",
    ]
    if package:
        lines += ["# the package's import path: written to out/" + package.replace(".", "/") + "/", f"package = {_q(package)}"]
    else:
        lines += ["# package = \"myagent._acp\"   # vendor it: written to out/myagent/_acp/ (one Python style)"]
    lines += [
        "# overlays = [\"rfd:open-enums\"]  # RFD overlays applied first (acpgen overlay list)",
        "",
        f"[{table}naming]",
        "# reviewed overrides of a generated name, each with its reason:",
        "# \"ContentBlock#text\" = { name = \"TextBlock\", reason = \"matches our SDK\" }",
        "",
        f"[{table}keywords]",
        "# a validating keyword acpgen does not implement stops the build (ACPG209);",
        "# \"warn\" builds anyway and prints each one",
        "unimplemented = \"error\"",
    ]
    if remote:
        lines += [
            "",
            f"[{table}fetch]",
            "# where acp@<tag> is read from, and how long to wait for it",
            f"upstream = {_q('https://raw.githubusercontent.com/agentclientprotocol/agent-client-protocol')}",
            "timeout = 30",
        ]
    lines += [
        "",
        "# accepted changes for `acpgen diff --fail-on error`, each with its reason:",
        f"# [[{table}diff.ignore]]",
        "# rule = \"field-renamed\"",
        "# subject = \"PlanItems.*\"",
        "# reason = \"why this break is accepted\"",
        "# expires = 2027-01-31",
    ]
    return "\n".join(lines) + "\n"


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def register(app: typer.Typer) -> None:
    @app.command(epilog=INIT_EXAMPLE)
    def init(
        schema: str = typer.Option(
            "bundled:v0.1.3", "--schema", help="A schema path, bundled:<release>, an https:// URL or acp@<tag>."
        ),
        style: list[str] = typer.Option([], "--style", help="Output style, repeatable (default: pydantic)."),
        out: Optional[str] = typer.Option(None, "--out", help="The output directory (default: generated/<name>)."),
        package: Optional[str] = typer.Option(None, "--package", help="Vendor under this import path (myagent._acp)."),
        pyproject: bool = typer.Option(
            False, "--pyproject", help="Add \\[tool.acpgen] to pyproject.toml instead of writing acpgen.toml."
        ),
    ) -> None:
        """Write a commented acpgen.toml (or \\[tool.acpgen] in pyproject.toml) for one schema;
        never overwrites."""  # help texts are rich markup: `\\[` keeps a bracket (test_cli_habits)
        from acpgen.config import load_config, package_problem
        from acpgen.locate import default_out_name
        from acpgen.render import STYLES
        from acpgen.write import write_files

        def run() -> int:
            styles = list(dict.fromkeys(style)) or ["pydantic"]
            for s in styles:
                if s not in STYLES:
                    message = f"unknown style {s!r}; choose from {', '.join(STYLES)}{did_you_mean(s, STYLES)}"
                    raise AcpgenError([Diagnostic("ACPG501", message, "--style")])
            if package is not None:
                why = package_problem(package, tuple(styles))
                if why:
                    raise AcpgenError([Diagnostic("ACPG501", why, "--package")])
            target_out = out or f"generated/{default_out_name(schema)}"
            here = Path.cwd()
            if pyproject:
                path = here / "pyproject.toml"
                existing = path.read_text(encoding="utf-8") if path.is_file() else ""
                try:
                    has = "acpgen" in tomllib.loads(existing).get("tool", {})
                except tomllib.TOMLDecodeError as exc:
                    raise AcpgenError([Diagnostic("ACPG501", f"invalid TOML: {exc}", "pyproject.toml")])
                if has:
                    raise AcpgenError(
                        [Diagnostic("ACPG501", "[tool.acpgen] is there already; refusing to overwrite it", "pyproject.toml", "/tool/acpgen")]
                    )
                text = (existing.rstrip("\n") + "\n\n" if existing.strip() else "") + config_text(
                    schema, styles, target_out, package, "tool.acpgen."
                )
            else:
                path = here / "acpgen.toml"
                if path.exists():
                    raise AcpgenError([Diagnostic("ACPG501", "acpgen.toml exists; refusing to overwrite it", "acpgen.toml")])
                text = config_text(schema, styles, target_out, package, "")
            write_files({path: text})
            load_config(path, STYLES)  # what init writes, build reads
            typer.echo(f"wrote {path.name}: run `acpgen build`")
            return 0

        raise typer.Exit(guard(run))

