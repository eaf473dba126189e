"""The outputs of ``acpgen diff`` and ``acpgen changelog``: text, json, markdown, github,
junit. Pure functions of the changes (and what the ignore entries hid)."""

from __future__ import annotations

import json
from typing import Iterable, Sequence
from xml.sax.saxutils import escape, quoteattr

from acpgen.diff.ignore import Ignore
from acpgen.diff.model import JSON_VERSION, Change
from acpgen.diff.rules import rank

FORMATS = ("text", "json", "markdown", "github", "junit")
HEADINGS = {"error": "Breaking", "warning": "Possibly breaking", "info": "Other changes"}


def _breaks(c: Change) -> str:
    return f" [breaks {', '.join(c.breaks)}]" if c.breaks else ""


def _subject(c: Change) -> str:
    return f"{c.subject} ({c.variant})" if c.variant else c.subject


def text_line(c: Change) -> str:
    note = f" ({c.note})" if c.note else ""
    code = f" [code: {c.code}]" if c.code != c.level else ""
    return f"{c.file}: {c.level} {c.rule} {_subject(c)}{_breaks(c)}{code}: {c.message}{note}"


def summary(changes: Sequence[Change]) -> str:
    counts = {lvl: sum(1 for c in changes if c.level == lvl) for lvl in ("error", "warning", "info")}
    return f"{len(changes)} change(s): {counts['error']} error, {counts['warning']} warning, {counts['info']} info"


def why_lines(c: Change) -> list[str]:
    """``--explain``: why a record got its level, one indented line per reason."""
    return [f"    {key}: {value}" for key, value in c.why]


def render_text(changes: Sequence[Change], hidden: Sequence[tuple[Change, Ignore]], explain: bool = False) -> str:
    lines: list[str] = []
    for c in changes:
        lines.append(text_line(c))
        if explain:
            lines.extend(why_lines(c))
    for c, i in hidden:
        lines.append(f"ignored: {text_line(c)} -- {i.reason}")
        if explain:
            lines.extend(why_lines(c))
    return "".join(line + "\n" for line in lines)


def render_json(
    changes: Sequence[Change], hidden: Sequence[tuple[Change, Ignore]], old: str, new: str
) -> str:
    doc = {
        "version": JSON_VERSION,
        "old": old,
        "new": new,
        "changes": [c.to_json() for c in changes],
        "ignored": [dict(c.to_json(), reason=i.reason, ignored_by=f"{i.source}#{i.pointer}") for c, i in hidden],
        "summary": {lvl: sum(1 for c in changes if c.level == lvl) for lvl in ("error", "warning", "info")},
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def _md_line(c: Change) -> str:
    values = ""
    if (c.old or c.new) and c.kind != "renamed" and f"{c.old} -> {c.new}" not in c.message:
        values = f" (`{_md_escape(c.old or 'none')}` → `{_md_escape(c.new or 'none')}`)"
    breaks = f" Breaks: {', '.join(c.breaks)}." if c.breaks else ""
    note = f" _{_md_escape(c.note)}_." if c.note else ""
    return f"- **`{_subject(c)}`**: {_md_escape(c.message)}{values}.{breaks}{note} `{c.rule}`"


def _file_title(name: str) -> str:
    tree, _, rest = name.partition("/")
    return f"{tree} ({'unstable' if 'unstable' in rest else 'stable'}: `{name}`)"


COLLAPSE = 12


def markdown_body(changes: Sequence[Change], level: int = 2) -> str:
    """Grouped by file (stable before unstable), then breaking first."""
    h = "#" * level
    out: list[str] = []
    files = sorted({c.file for c in changes}, key=lambda f: (f.split("/")[0], f.endswith(".unstable.json"), f))
    for name in files:
        out.append(f"{h} {_file_title(name)}\n")
        mine = [c for c in changes if c.file == name]
        for lvl in ("error", "warning", "info"):
            group = [c for c in mine if c.level == lvl]
            if not group:
                continue
            out.append(f"{h}# {HEADINGS[lvl]}\n")
            by_rule: dict[str, list[Change]] = {}
            for c in group:
                by_rule.setdefault(c.rule, []).append(c)
            for rule, items in by_rule.items():
                if lvl == "info" and len(items) > COLLAPSE:
                    out.append(f"<details><summary>{len(items)} × <code>{rule}</code></summary>\n")
                    out.extend(_md_line(c) for c in items)
                    out.append("\n</details>\n")
                else:
                    out.extend(_md_line(c) for c in items)
            out.append("")
    if not files:
        out.append("No changes.\n")
    return "\n".join(out).rstrip("\n") + "\n"


def render_markdown(changes: Sequence[Change], hidden: Sequence[tuple[Change, Ignore]], old: str, new: str) -> str:
    text = f"# Changes from `{old}` to `{new}`\n\n{summary(changes)}.\n\n" + markdown_body(changes)
    if hidden:
        text += "\n## Accepted changes (ignored)\n\n" + "\n".join(
            f"- `{c.rule}` **`{_subject(c)}`** ({c.file}): {_md_escape(i.reason)}" for c, i in hidden
        ) + "\n"
    return text


def _gh(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh(text).replace(":", "%3A").replace(",", "%2C")


def render_github(changes: Sequence[Change], paths: dict[str, str]) -> str:
    """GitHub workflow commands: one annotation per change, on the new side's file."""
    kind = {"error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for c in changes:
        where = paths.get(c.file, c.file)
        title = f"{c.rule}: {_subject(c)}"
        body = c.message + _breaks(c) + (f" ({c.note})" if c.note else "")
        lines.append(f"::{kind[c.level]} file={_gh_prop(where)},title={_gh_prop(title)}::{_gh(body)}")
    return "".join(line + "\n" for line in lines)


def render_junit(changes: Sequence[Change], fail_on: str | None) -> str:
    """One test case per change; a failure for each at or above ``--fail-on`` (``error``
    when not given)."""
    bar = rank(fail_on or "error")
    failing = [c for c in changes if rank(c.level) <= bar]
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    out.append(f'<testsuites name="acpgen diff" tests="{len(changes)}" failures="{len(failing)}">')
    files = sorted({c.file for c in changes})
    for name in files:
        mine = [c for c in changes if c.file == name]
        fails = sum(1 for c in mine if rank(c.level) <= bar)
        out.append(f"  <testsuite name={quoteattr(name)} tests=\"{len(mine)}\" failures=\"{fails}\">")
        for c in mine:
            case = f"    <testcase classname={quoteattr(name)} name={quoteattr(c.rule + ' ' + _subject(c))}"
            if rank(c.level) <= bar:
                out.append(case + ">")
                out.append(
                    f"      <failure type={quoteattr(c.level)} message={quoteattr(c.message)}>"
                    f"{escape(text_line(c))}</failure>"
                )
                out.append("    </testcase>")
            else:
                out.append(case + f"><system-out>{escape(text_line(c))}</system-out></testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def failing(changes: Iterable[Change], fail_on: str | None, fail_on_code: str | None) -> bool:
    return any(
        (fail_on is not None and rank(c.level) <= rank(fail_on))
        or (fail_on_code is not None and rank(c.code) <= rank(fail_on_code))
        for c in changes
    )


def render_changelog(sections: Sequence[tuple[str, str, Sequence[Change]]], title: str) -> str:
    """Release notes: one section per release (newest first), each against the one before."""
    out = [f"# {title}\n"]
    for old, new, changes in reversed(sections):
        out.append(f"## {new}\n")
        out.append(f"Compared with `{old}`: {summary(changes)}.\n")
        if changes:
            out.append(markdown_body(changes, level=3))
    return "\n".join(out).rstrip("\n") + "\n"
