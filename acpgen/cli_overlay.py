"""``acpgen overlay apply|check``: RFD overlays on their own, outside a build."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from acpgen.cli_guard import example, guard
from acpgen.errors import AcpgenError, Diagnostic
from acpgen.locate import bundled_overlays, bundled_releases, locate_overlay, locate_schema

overlay_app = typer.Typer(
    no_args_is_help=True,
    help="Apply RFD overlays to a schema release, or report whether they still apply.",
)

OverlaysArg = typer.Option(..., "--overlay", help="An overlay file (YAML), repeatable; applied in order.")


def _meta_json(methods: tuple[Any, ...], version: int | None) -> str:
    groups: dict[str, dict[str, str]] = {"agentMethods": {}, "clientMethods": {}, "protocolMethods": {}}
    for m in methods:
        groups.get(f"{m.side}Methods", groups["protocolMethods"])[m.key] = m.wire
    body: dict[str, Any] = {k: dict(sorted(v.items())) for k, v in groups.items() if v}
    if version is not None:
        body["version"] = version
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def _meta_path(out: Path) -> Path:
    """Where the loader looks for the meta of ``out`` (schema.unstable.json -> meta.unstable.json)."""
    if out.name.startswith("schema"):
        return out.with_name("meta" + out.name[len("schema") :])
    return out.with_name(out.stem + ".meta.json")


@overlay_app.command(
    "apply",
    epilog=example("acpgen overlay apply --schema v1/schema.json --overlay schemas/rfds/open-enums.yaml --out proposed.json"),
)
def apply_cmd(
    schema: Path = typer.Option(..., "--schema", help="One schema file (its meta.json beside it is read too)."),
    overlay: list[Path] = OverlaysArg,
    out: Path = typer.Option(..., "--out", help="Where to write the resulting JSON Schema (or patch)."),
    fmt: str = typer.Option("schema", "--format", help="schema: the changed JSON Schema; json-patch: RFC 6902 operations."),
    provenance: bool = typer.Option(True, "--provenance/--no-provenance", help="Keep the x-acpgen-overlay marks."),
    allow_conflicts: bool = typer.Option(False, "--allow-conflicts", help="Write the result even if an operation conflicts."),
) -> None:
    """Write the schema as the overlays propose it. Status tables go to stderr; exit 1 when an
    overlay conflicts or does not apply (nothing written unless --allow-conflicts)."""
    from acpgen.api import schema_name
    from acpgen.load import load_inputs
    from acpgen.overlay import apply_overlays, as_json_patch, read_overlays, report_text, strip_provenance
    from acpgen.write import write_files

    def run() -> int:
        if fmt not in ("schema", "json-patch"):
            raise AcpgenError([Diagnostic("ACPG501", f"unknown format {fmt!r}; choose schema or json-patch", "--format")])
        overlays = read_overlays([locate_overlay(str(o), Path.cwd()) for o in overlay])
        docs = load_inputs(locate_schema(str(schema), Path.cwd()))
        if len(docs) != 1:
            raise AcpgenError([Diagnostic("ACPG501", f"apply takes one schema file; {schema} holds {len(docs)}", str(schema))])
        (doc,) = docs
        result, reports = apply_overlays(doc, overlays, schema_name(doc))
        for report in reports:
            typer.echo(report_text(report), err=True, nl=False)
        conflict = any(r.verdict in ("conflict", "not-applicable") for r in reports)
        if conflict and not allow_conflicts:
            typer.echo("an overlay conflicts or does not apply: nothing written (--allow-conflicts writes the rest)", err=True)
            return 1
        data = result.data if provenance else strip_provenance(result.data)
        files: dict[Path, str] = {}
        if fmt == "json-patch":
            files[out] = json.dumps(as_json_patch(doc.data, data), indent=2, ensure_ascii=False) + "\n"
        else:
            files[out] = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
            if result.meta.methods != doc.meta.methods:
                files[_meta_path(out)] = _meta_json(result.meta.methods, doc.meta.version)
        write_files(files)
        for path in sorted(files):
            typer.echo(f"wrote {path}", err=True)
        return 1 if conflict else 0

    raise typer.Exit(guard(run))


@overlay_app.command(
    "check", epilog=example("acpgen overlay check --schema schemas/acp/v0.1.3 --overlay schemas/rfds/open-enums.yaml")
)
def check_cmd(
    schema: Path = typer.Option(..., "--schema", help="A schema file or a release directory (every schema file in it)."),
    overlay: list[Path] = OverlaysArg,
    as_json: bool = typer.Option(False, "--json", help="Print the reports as JSON."),
) -> None:
    """Print each operation's status (applied, already-present, conflict, not-applicable) and
    each overlay's verdict. Exit 0 when every overlay applies cleanly, is partially merged or
    obsolete; 1 on a conflict."""
    from acpgen.api import schema_name
    from acpgen.load import load_inputs
    from acpgen.overlay import Report, apply_overlays, read_overlays, report_text, reports_json

    def run() -> int:
        overlays = read_overlays([locate_overlay(str(o), Path.cwd()) for o in overlay])
        reports: list[Report] = []
        for doc in load_inputs(locate_schema(str(schema), Path.cwd())):
            reports.extend(apply_overlays(doc, overlays, schema_name(doc))[1])
        if as_json:
            sys.stdout.write(reports_json(reports))
        else:
            typer.echo("\n".join(report_text(r) for r in reports), nl=False)
        return 1 if any(r.verdict == "conflict" for r in reports) else 0

    raise typer.Exit(guard(run))


@overlay_app.command("list", epilog=example("acpgen overlay list  (then: acpgen build --schema bundled:v0.1.3 --overlay rfd:open-enums)"))
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print the list as JSON.")) -> None:
    """The RFD overlays and the schema release shipped with acpgen, by the names --overlay
    (rfd:<name>) and --schema (bundled:<release>) take."""
    from acpgen.overlay import read_overlays

    def run() -> int:
        paths = bundled_overlays()
        overlays = read_overlays(paths)
        rows: list[dict[str, str | None]] = [
            {"name": f"rfd:{p.stem}", "id": o.id, "title": o.title, "status": o.status, "rfd": o.rfd, "merged_upstream": o.merged_upstream}
            for p, o in zip(paths, overlays)
        ]
        releases = [f"bundled:{r}" for r in bundled_releases()]
        if as_json:
            sys.stdout.write(json.dumps({"overlays": rows, "releases": releases}, indent=2) + "\n")
            return 0
        width = max((len(str(r["name"])) for r in rows), default=0)
        for r in rows:
            merged = f", merged upstream in {r['merged_upstream']}" if r["merged_upstream"] else ""
            typer.echo(f"{str(r['name']).ljust(width)}  {r['title']} ({r['id']}, {r['status']}{merged})")
        for release in releases:
            typer.echo(f"{release.ljust(width)}  a schema release written from the seeds")
        return 0

    raise typer.Exit(guard(run))
