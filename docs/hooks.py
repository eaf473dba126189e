"""mkdocs hook of acpgen's own site: the pages that must not drift are written from the code.

* ``<!-- acpgen:cli -->`` becomes the command reference, read from the click command tree
  that typer builds from ``acpgen.cli.app`` (every command, its arguments, options, help
  and example), so a new option is documented by adding it.
* ``<!-- acpgen:diff-rules -->`` becomes the rule catalogue of ``acpgen diff``, one row per
  ``Rule`` of ``acpgen.diff.rules.RULES``, with the counts per level.

The hook is named in ``mkdocs.yml`` (``hooks:``) and left out of the site (``exclude_docs``).
"""

from __future__ import annotations

import re
from typing import Any

#: the commands in the order a newcomer meets them; any other command follows, by name
ORDER = ["build", "check", "init", "site", "diff", "changelog", "overlay", "ir", "diff-pages"]
CLI_MARK = "<!-- acpgen:cli -->"
RULES_MARK = "<!-- acpgen:diff-rules -->"


def _prose(text: str) -> str:
    """Help text as Markdown prose: rich's escapes undone, ``<release>`` shown, not taken as HTML."""
    return text.replace("\\[", "[").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    """One Markdown table cell: one line, pipes escaped, whitespace collapsed."""
    return _prose(re.sub(r"\s+", " ", text).strip()).replace("|", "\\|")


def _metavar(param: Any) -> str:
    """What a value of the parameter is called: its metavar, else its type's name."""
    if param.metavar:
        return str(param.metavar)
    kind = getattr(param, "type", None)
    if kind is not None:
        return str(kind.name).upper()
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    while getattr(annotation, "__args__", None):  # list[Path], Optional[str]: the item type
        annotation = next(a for a in annotation.__args__ if a is not type(None))
    name = getattr(annotation, "__name__", None) or str(param.name)
    return {"str": "TEXT", "Path": "PATH", "int": "INTEGER", "float": "FLOAT"}.get(name, name.upper())


def _param(param: Any, ctx: Any) -> tuple[str, str, str]:
    """(spelling, help, default) of one argument or option (a click parameter, duck-typed:
    typer may carry its own copy of click)."""
    if param.param_type_name == "option":
        names = [*param.opts, *param.secondary_opts]
        spelling = " / ".join(f"`{n}`" for n in names)
        if not param.is_flag:
            spelling += f" `{_metavar(param)}`"
        help_text = param.help or ""
        if param.multiple and "repeatable" not in help_text:
            help_text += " (repeatable)"
        default = param.default
        shown = "" if default in (None, (), [], False) or param.required else f"`{default}`"
        if param.required:
            shown = "required"
        return spelling, help_text, shown
    name = str(param.metavar or param.name).upper()
    suffix = ""
    help_text = getattr(param, "help", None) or ""
    return f"`{name}{suffix}`", help_text, "required" if param.required else ""


def _command(path: str, cmd: Any, level: int) -> list[str]:
    ctx = cmd.context_class(cmd, info_name=path)
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    out = [f"{'#' * level} `{path}`", ""]
    text, _, example = (cmd.help or "").partition("Example:")
    if text.strip():
        out += [_prose(text.strip()), ""]
    out += ["```text", f"{path} {usage}".rstrip(), "```", ""]
    params = [p for p in cmd.params if not getattr(p, "hidden", False) and p.name != "help"]
    if params:
        out += ["| argument or option | what it does | default |", "| --- | --- | --- |"]
        out += [f"| {_cell(s)} | {_cell(h)} | {_cell(d)} |" for s, h, d in (_param(p, ctx) for p in params)]
        out.append("")
    example = example.strip() or (cmd.epilog or "").partition("Example:")[2].strip()
    if example:
        command, note = re.fullmatch(r"(.*?)\s*(\([^()]*\))?", re.sub(r"\s+", " ", example)).groups()  # type: ignore[union-attr]
        out += [f"Example: `{command}`" + (f" {_prose(note)}" if note else ""), ""]
    if getattr(cmd, "commands", None):
        for name in sorted(cmd.commands):
            out += _command(f"{path} {name}", cmd.commands[name], level + 1)
    return out


def cli_reference() -> str:
    """The Markdown reference of every ``acpgen`` command, from the command tree itself."""
    import typer.main

    from acpgen.cli import app

    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="acpgen")
    out = [(root.help or "").strip(), ""]
    globals_ = [p for p in root.params if p.name != "help"]
    if globals_:
        out += ["Options of `acpgen` itself, given before the command:", ""]
        out += ["| option | what it does | default |", "| --- | --- | --- |"]
        out += [f"| {_cell(s)} | {_cell(h)} | {_cell(d)} |" for s, h, d in (_param(p, ctx) for p in globals_)]
        out.append("")
    names = root.list_commands(ctx)
    for name in sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n)):
        out += _command(f"acpgen {name}", root.commands[name], 3)
    return "\n".join(out)


def rule_catalogue() -> str:
    """The rule catalogue of ``acpgen diff`` as a Markdown table, from ``RULES``."""
    from acpgen.diff.rules import LEVELS, RULES

    counts = ", ".join(f"{sum(r.level == level for r in RULES)} {level}" for level in LEVELS)
    out = [
        f"{len(RULES)} rules ({counts}, by their level on the wire before any note lowers it).",
        "",
        "| rule | kind | wire level | code level | breaks | what changed |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in RULES:
        out.append(f"| `{r.id}` | `{r.kind}` | {r.level} | {r.code} | {r.hits} | {_cell(r.summary)} |")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if CLI_MARK in markdown:
        markdown = markdown.replace(CLI_MARK, cli_reference())
    if RULES_MARK in markdown:
        markdown = markdown.replace(RULES_MARK, rule_catalogue())
    return markdown
