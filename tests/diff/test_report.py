"""The outputs of ``acpgen diff`` (acpgen/diff/report.py), exactly: markdown (escaped,
grouped by file and level, long info groups folded) and GitHub workflow commands (with
their own escaping of properties and messages)."""

from __future__ import annotations

from typing import Any

from acpgen.diff.ignore import Ignore
from acpgen.diff.model import Change
from acpgen.diff.report import (
    markdown_body,
    render_changelog,
    render_github,
    render_markdown,
)


def _change(file: str, level: str, rule: str, subject: str, **more: Any) -> Change:
    fields: dict[str, Any] = {
        "kind": "type-changed",
        "code": level,
        "breaks": (),
        "message": "m",
    }
    fields.update(more)
    return Change(file=file, level=level, rule=rule, subject=subject, **fields)  # type: ignore[arg-type]


CHANGES = [
    _change(
        "v1/schema.json",
        "error",
        "field-removed",
        "A.x",
        breaks=("agent", "client"),
        message="member x | y <removed>",
        old="int",
    ),
    _change(
        "v1/schema.json",
        "warning",
        "field-default-changed",
        "B.y",
        message="the default changed",
        old="1",
        new="2",
        note="gated: a, b",
    ),
    _change(
        "v1/schema.unstable.json",
        "info",
        "variant-added",
        "U",
        variant="t",
        message="renamed a -> b",
        old="a",
        new="b",
        kind="renamed",
    ),
]


def test_github_annotations_escape_properties_and_messages() -> None:
    assert render_github(CHANGES, {"v1/schema.json": "schema/v1/schema,json:x"}) == (
        "::error file=schema/v1/schema%2Cjson%3Ax,title=field-removed%3A A.x::"
        "member x | y <removed> [breaks agent, client]\n"
        "::warning file=schema/v1/schema%2Cjson%3Ax,title=field-default-changed%3A B.y::"
        "the default changed (gated: a, b)\n"
        "::notice file=v1/schema.unstable.json,title=variant-added%3A U (t)::renamed a -> b\n"
    )
    one = _change("v2/schema.json", "info", "r", "S", message="50%\r\nnext")
    assert (
        render_github([one], {})
        == "::notice file=v2/schema.json,title=r%3A S::50%25%0D%0Anext\n"
    )


def test_markdown_groups_by_file_then_level_and_escapes() -> None:
    assert markdown_body(CHANGES) == (
        "## v1 (stable: `v1/schema.json`)\n\n"
        "### Breaking\n\n"
        "- **`A.x`**: member x \\| y &lt;removed> (`int` → `none`). Breaks: agent, client. `field-removed`\n\n"
        "### Possibly breaking\n\n"
        "- **`B.y`**: the default changed (`1` → `2`). _gated: a, b_. `field-default-changed`\n\n"
        "## v1 (unstable: `v1/schema.unstable.json`)\n\n"
        "### Other changes\n\n"
        "- **`U (t)`**: renamed a -> b. `variant-added`\n"
    )
    assert markdown_body([]) == "No changes.\n"


def test_more_than_twelve_info_records_of_a_rule_are_folded() -> None:
    many = [
        _change("v1/schema.json", "info", "def-added", f"D{i}", kind="added")
        for i in range(13)
    ]
    lines = "".join(f"- **`D{i}`**: m. `def-added`\n" for i in range(13))
    assert markdown_body(many) == (
        "## v1 (stable: `v1/schema.json`)\n\n### Other changes\n\n"
        "<details><summary>13 × <code>def-added</code></summary>\n\n"
        + lines
        + "\n</details>\n"
    )
    assert "<details>" not in markdown_body(many[:12])


def test_markdown_report_and_changelog() -> None:
    hidden = [
        (
            CHANGES[0],
            Ignore(
                "field-removed", "A.x", "accepted | ok", "acpgen.toml", "/diff/ignore/0"
            ),
        )
    ]
    warning = "- **`B.y`**: the default changed (`1` → `2`). _gated: a, b_. `field-default-changed`\n"
    assert render_markdown(CHANGES[1:2], hidden, "0.1", "0.2") == (
        "# Changes from `0.1` to `0.2`\n\n1 change(s): 0 error, 1 warning, 0 info.\n\n"
        "## v1 (stable: `v1/schema.json`)\n\n### Possibly breaking\n\n" + warning + "\n"
        "## Accepted changes (ignored)\n\n- `field-removed` **`A.x`** (v1/schema.json): accepted \\| ok\n"
    )
    assert render_changelog(
        [("0.1", "0.2", CHANGES[1:2]), ("0.2", "0.3", [])], "Changes"
    ) == (
        "# Changes\n\n## 0.3\n\nCompared with `0.2`: 0 change(s): 0 error, 0 warning, 0 info.\n\n"
        "## 0.2\n\nCompared with `0.1`: 1 change(s): 0 error, 1 warning, 0 info.\n\n"
        "### v1 (stable: `v1/schema.json`)\n\n#### Possibly breaking\n\n" + warning
    )
