"""The outputs of ``acpgen diff`` (acpgen/diff/report.py), exactly: markdown (escaped,
grouped by file and level, long info groups folded) and GitHub workflow commands (with
their own escaping of properties and messages)."""

from __future__ import annotations

import json
from typing import Any

from acpgen.diff.ignore import Ignore
from acpgen.diff.model import Change
from acpgen.diff.report import (
    markdown_body,
    render_changelog,
    render_github,
    render_json,
    render_markdown,
    render_text,
    text_line,
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


def test_text_names_the_code_level_only_where_it_differs() -> None:
    same = _change("v1/schema.json", "error", "field-removed", "A.x", message="gone")
    other = _change("v1/schema.json", "info", "def-renamed", "A -> B", message="renamed", code="error")
    assert text_line(same) == "v1/schema.json: error field-removed A.x: gone"
    assert text_line(other) == "v1/schema.json: info def-renamed A -> B [code: error]: renamed"


def test_text_explains_shown_and_ignored_records_only_when_asked() -> None:
    why = (("rule", "r: error unless lowered"), ("sent_by", "agent"))
    shown = _change("v1/schema.json", "error", "r", "A", message="a", why=why)
    hidden = _change("v1/schema.json", "error", "r", "B", message="b", why=why)
    ignore = Ignore("r", "B", "accepted", "acpgen.toml", "/diff/ignore/0")
    plain = "v1/schema.json: error r A: a\nignored: v1/schema.json: error r B: b -- accepted\n"
    assert render_text([shown], [(hidden, ignore)]) == plain
    assert render_text([shown], [(hidden, ignore)], explain=True) == (
        "v1/schema.json: error r A: a\n"
        "    rule: r: error unless lowered\n    sent_by: agent\n"
        "ignored: v1/schema.json: error r B: b -- accepted\n"
        "    rule: r: error unless lowered\n    sent_by: agent\n"
    )


def test_json_keeps_ignored_records_whole_and_text_unescaped() -> None:
    hidden = _change("v1/schema.json", "error", "r", "B", message="café → bar")
    ignore = Ignore("r", "B", "accepted", "acpgen.toml", "/diff/ignore/0")
    text = render_json([CHANGES[0]], [(hidden, ignore)], "0.1", "0.2")
    assert "café → bar" in text
    (ignored,) = json.loads(text)["ignored"]
    assert ignored == dict(hidden.to_json(), reason="accepted", ignored_by="acpgen.toml#/diff/ignore/0")


def test_markdown_shows_a_missing_old_or_new_value_as_none() -> None:
    added = _change("v1/schema.json", "info", "r", "A.x", message="set", new="1")
    assert markdown_body([added]).endswith("- **`A.x`**: set (`none` → `1`). `r`\n")


def test_markdown_puts_each_tree_s_stable_file_before_its_unstable_one() -> None:
    changes = [
        _change(f, "info", "r", "A")
        for f in ("v2/schema.json", "v1/schema.unstable.json", "v1/schema.json")
    ]
    titles = [line for line in markdown_body(changes).splitlines() if line.startswith("## ")]
    assert titles == [
        "## v1 (stable: `v1/schema.json`)",
        "## v1 (unstable: `v1/schema.unstable.json`)",
        "## v2 (stable: `v2/schema.json`)",
    ]


def test_markdown_lists_each_ignored_record_on_its_own_line() -> None:
    ignore = Ignore("r", "*", "accepted", "acpgen.toml", "/diff/ignore/0")
    hidden = [(_change("v1/schema.json", "error", "r", s), ignore) for s in ("A", "B")]
    assert render_markdown([], hidden, "0.1", "0.2").endswith(
        "## Accepted changes (ignored)\n\n"
        "- `r` **`A`** (v1/schema.json): accepted\n"
        "- `r` **`B`** (v1/schema.json): accepted\n"
    )


def test_changelog_keeps_its_title_as_given() -> None:
    assert render_changelog([], "Release X") == "# Release X\n"
    assert render_changelog([], "Draft ") == "# Draft \n"
