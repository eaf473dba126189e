"""Accepted changes (acpgen/diff/ignore.py): reading ``[[diff.ignore]]`` entries, each bad
one a line of its own pointing at it; which records an entry hides (every part it names
must match: rule, subject, and the file and variant when given, each as a glob); and
which entries hid nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import acpgen
from acpgen.diff.ignore import Ignore, read_ignores, split
from acpgen.diff.model import Change
from acpgen.errors import AcpgenError

RECORD = Change(
    file="v1/schema.json",
    rule="variant-removed",
    kind="removed",
    level="error",
    code="error",
    subject="ContentBlock",
    breaks=("agent",),
    message="m",
    variant="audio",
)


def _entry(**parts: Any) -> Ignore:
    fields: dict[str, Any] = {"rule": "variant-removed", "subject": "ContentBlock"}
    fields.update(parts)
    return Ignore(reason="r", source="acpgen.toml", pointer="/diff/ignore/0", **fields)


@pytest.mark.parametrize(
    ("parts", "hidden"),
    [
        ({}, True),
        ({"rule": "variant-*"}, True),
        ({"rule": "field-removed"}, False),
        ({"subject": "Content*"}, True),
        ({"subject": "ToolCall"}, False),
        ({"rule": "field-removed", "subject": "ToolCall"}, False),
        ({"file": "v1/*"}, True),
        ({"file": "v1/schema.json"}, True),
        ({"file": "v2/*"}, False),
        ({"variant": "aud*"}, True),
        ({"variant": "image"}, False),
        ({"file": "v1/*", "variant": "image"}, False),
        ({"file": "v2/*", "variant": "audio"}, False),
        ({"rule": "x", "file": "v1/*", "variant": "audio"}, False),
        ({"subject": "x", "file": "v1/*", "variant": "audio"}, False),
    ],
)
def test_every_named_part_must_match(parts: dict[str, Any], hidden: bool) -> None:
    assert _entry(**parts).matches(RECORD) is hidden


def test_a_variant_entry_does_not_hide_a_record_without_a_variant() -> None:
    plain = Change(**{**RECORD.__dict__, "variant": None})
    assert _entry(variant="*").matches(plain) is True  # `*` matches the empty name
    assert _entry(variant="a*").matches(plain) is False
    assert (
        _entry(variant="X*").matches(plain) is False
    )  # a missing variant has no name at all
    assert _entry(variant="").matches(plain) is True
    assert _entry().matches(plain) is True


# --- reading the entries: read_ignores ------------------------------------------------

TODAY = dt.date(2027, 1, 31)
GOOD = 'rule = "variant-removed"\nsubject = "ContentBlock"\nreason = "  accepted  "\n'


def _read(
    tmp_path: Path, text: str, name: str = "ignore.toml", **kw: Any
) -> tuple[Ignore, ...]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_ignores(path, today=kw.pop("today", TODAY), **kw)


def _problems(tmp_path: Path, text: str, name: str = "ignore.toml") -> list[str]:
    """Each problem as the one line acpgen prints: ``file: CODE /pointer: message``."""
    with pytest.raises(AcpgenError) as caught:
        _read(tmp_path, text, name)
    return [d.render() for d in caught.value.diagnostics]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # files are named relative to the working directory


@pytest.mark.parametrize(
    ("name", "text", "pointer"),
    [
        ("ignore.toml", "[[diff.ignore]]\n" + GOOD, "/diff/ignore/0"),
        ("ignore.toml", "[[ignore]]\n" + GOOD, "/ignore/0"),
        ("acpgen.toml", "[[diff.ignore]]\n" + GOOD, "/diff/ignore/0"),
        ("pyproject.toml", "[[tool.acpgen.diff.ignore]]\n" + GOOD, "/diff/ignore/0"),
        ("pyproject.toml", "[[tool.acpgen.ignore]]\n" + GOOD, "/ignore/0"),
    ],
)
def test_entries_are_read_from_each_place_they_may_live(
    tmp_path: Path, name: str, text: str, pointer: str
) -> None:
    (entry,) = _read(tmp_path, text, name)
    assert entry == Ignore("variant-removed", "ContentBlock", "accepted", name, pointer)


def test_a_pyproject_reads_only_its_tool_acpgen_table(tmp_path: Path) -> None:
    assert _read(tmp_path, "[[diff.ignore]]\n" + GOOD, "pyproject.toml") == ()
    assert (
        _read(tmp_path, "[[tool.other.diff.ignore]]\n" + GOOD, "pyproject.toml") == ()
    )


def test_diff_ignore_is_read_before_a_top_level_ignore(tmp_path: Path) -> None:
    text = (
        "[[diff.ignore]]\n"
        + GOOD
        + "[[ignore]]\n"
        + GOOD.replace("ContentBlock", "Other")
    )
    assert [(e.subject, e.pointer) for e in _read(tmp_path, text)] == [
        ("ContentBlock", "/diff/ignore/0")
    ]


def test_a_diff_table_without_ignore_falls_back_to_a_top_level_one(
    tmp_path: Path,
) -> None:
    text = "[[ignore]]\n" + GOOD + "[diff]\nother = 1\n"
    assert [e.pointer for e in _read(tmp_path, text)] == ["/ignore/0"]


def test_no_entries_is_no_entries(tmp_path: Path) -> None:
    assert _read(tmp_path, "") == ()
    assert _read(tmp_path, "[diff]\n") == ()


def test_every_part_of_an_entry_is_kept(tmp_path: Path) -> None:
    text = (
        "[[diff.ignore]]\n"
        + GOOD
        + 'expires = 2027-02-01\nfile = "v1/*"\nvariant = "audio"\n'
        "[[diff.ignore]]\n"
        + GOOD.replace("ContentBlock", "Plan*")
        + 'expires = "2027-01-31"\n'
        "[[diff.ignore]]\n" + GOOD + "expires = 2027-03-01T10:00:00\n"
    )
    assert _read(tmp_path, text) == (
        Ignore(
            "variant-removed",
            "ContentBlock",
            "accepted",
            "ignore.toml",
            "/diff/ignore/0",
            dt.date(2027, 2, 1),
            "v1/*",
            "audio",
        ),
        Ignore(
            "variant-removed",
            "Plan*",
            "accepted",
            "ignore.toml",
            "/diff/ignore/1",
            dt.date(2027, 1, 31),
        ),
        Ignore(
            "variant-removed",
            "ContentBlock",
            "accepted",
            "ignore.toml",
            "/diff/ignore/2",
            dt.date(2027, 3, 1),
        ),
    )


def test_a_rule_may_be_a_glob_of_known_rules(tmp_path: Path) -> None:
    (entry,) = _read(
        tmp_path, "[[ignore]]\n" + GOOD.replace('"variant-removed"', '"variant-*"')
    )
    assert entry.rule == "variant-*"


def test_a_missing_file_is_an_error_unless_it_is_optional(tmp_path: Path) -> None:
    with pytest.raises(AcpgenError) as caught:
        read_ignores(tmp_path / "gone.toml", today=TODAY)
    assert [d.render() for d in caught.value.diagnostics] == [
        "gone.toml: ACPG100 /: ignore file does not exist"
    ]
    assert read_ignores(tmp_path / "gone.toml", today=TODAY, required=False) == ()


def test_invalid_toml_is_one_line(tmp_path: Path) -> None:
    (line,) = _problems(tmp_path, "[[diff.ignore]\n")
    assert line.startswith("ignore.toml: ACPG702 /: invalid TOML: ")


def test_ignore_must_be_an_array_of_tables(tmp_path: Path) -> None:
    assert _problems(tmp_path, '[diff]\nignore = "x"\n') == [
        "ignore.toml: ACPG702 /diff/ignore: diff.ignore must be an array of tables ([[diff.ignore]])"
    ]


BAD = [
    ("ignore = [1]\n", "/ignore/0: an ignore entry must be a table"),
    (
        "[[ignore]]\n" + GOOD + 'reson = "x"\n',
        "/ignore/0/reson: unknown key 'reson'; did you mean 'reason'?",
    ),
    ("[[ignore]]\n" + GOOD + 'zzz = "x"\n', "/ignore/0/zzz: unknown key 'zzz'"),
    (
        "[[ignore]]\n" + GOOD + 'aaa = 1\nzzz = "x"\n',
        "/ignore/0/aaa: unknown key 'aaa'",
    ),
    (
        '[[ignore]]\nrule = "variant-removed"\nsubject = "X"\n',
        "/ignore/0: an ignore entry needs a reason (why this change is accepted)",
    ),
    (
        '[[ignore]]\nrule = "variant-removed"\nsubject = "X"\nreason = " \\n "\n',
        "/ignore/0: an ignore entry needs a reason (why this change is accepted)",
    ),
    (
        '[[ignore]]\nrule = "variant-removed"\nsubject = "X"\nreason = 3\n',
        "/ignore/0: an ignore entry needs a reason (why this change is accepted)",
    ),
    (
        '[[ignore]]\nsubject = "X"\nreason = "r"\n',
        "/ignore/0: an ignore entry needs a rule and a subject (strings; globs allowed)",
    ),
    (
        '[[ignore]]\nrule = "variant-removed"\nreason = "r"\n',
        "/ignore/0: an ignore entry needs a rule and a subject (strings; globs allowed)",
    ),
    (
        '[[ignore]]\nrule = "variant-removed"\nsubject = 1\nreason = "r"\n',
        "/ignore/0: an ignore entry needs a rule and a subject (strings; globs allowed)",
    ),
    (
        "[[ignore]]\n" + GOOD.replace("variant-removed", "variant-remove"),
        "/ignore/0/rule: no rule matches 'variant-remove'; did you mean 'variant-removed'?",
    ),
    (
        "[[ignore]]\n" + GOOD.replace("variant-removed", "zzzzzzzz"),
        "/ignore/0/rule: no rule matches 'zzzzzzzz'; see acpgen diff --rules",
    ),
    (
        "[[ignore]]\n" + GOOD + 'expires = "soon"\n',
        "/ignore/0/expires: expires must be a date (YYYY-MM-DD), not 'soon'",
    ),
    (
        "[[ignore]]\n" + GOOD + "expires = 20270101\n",
        "/ignore/0/expires: expires must be a date (YYYY-MM-DD)",
    ),
    (
        "[[ignore]]\n" + GOOD + "expires = 10:00:00\n",
        "/ignore/0/expires: expires must be a date (YYYY-MM-DD)",
    ),
    (
        "[[ignore]]\n" + GOOD + "expires = 2027-01-30\n",
        "/ignore/0: this ignore entry expired on 2027-01-30: look at the change again, then renew or remove it",
    ),
    (
        "[[ignore]]\n" + GOOD + 'expires = "2027-01-30"\n',
        "/ignore/0: this ignore entry expired on 2027-01-30: look at the change again, then renew or remove it",
    ),
    (
        "[[ignore]]\n" + GOOD + "expires = 2027-01-30T23:59:59\n",
        "/ignore/0: this ignore entry expired on 2027-01-30: look at the change again, then renew or remove it",
    ),
    ("[[ignore]]\n" + GOOD + "file = 1\n", "/ignore/0/file: file must be a string"),
    (
        "[[ignore]]\n" + GOOD + "variant = true\n",
        "/ignore/0/variant: variant must be a string",
    ),
]


@pytest.mark.parametrize(("entry", "problem"), BAD)
def test_a_bad_entry_is_one_line_pointing_at_it(
    tmp_path: Path, entry: str, problem: str
) -> None:
    assert _problems(tmp_path, entry) == [f"ignore.toml: ACPG702 {problem}"]


def test_every_bad_entry_is_reported_at_once_and_the_good_ones_need_not_be(
    tmp_path: Path,
) -> None:
    text = (
        "[[ignore]]\n" + GOOD + "file = 1\nvariant = 2\n"
        "[[ignore]]\n"
        + GOOD
        + '[[ignore]]\nrule = "variant-removed"\nsubject = "X"\n'
        + "[[ignore]]\n"
        + GOOD
        + "expires = 2000-01-01\n"
    )
    assert _problems(tmp_path, text) == [
        "ignore.toml: ACPG702 /ignore/0/file: file must be a string",
        "ignore.toml: ACPG702 /ignore/0/variant: variant must be a string",
        "ignore.toml: ACPG702 /ignore/2: an ignore entry needs a reason (why this change is accepted)",
        "ignore.toml: ACPG702 /ignore/3: this ignore entry expired on 2000-01-01: look at the change again, then renew or remove it",
    ]


@pytest.mark.parametrize(
    "first", [entry for entry, _ in BAD if entry.startswith("[[ignore]]")]
)
def test_a_bad_entry_does_not_hide_the_ones_after_it(
    tmp_path: Path, first: str
) -> None:
    lines = _problems(tmp_path, first + "[[ignore]]\n" + GOOD + "file = 1\n")
    assert lines[-1] == "ignore.toml: ACPG702 /ignore/1/file: file must be a string"


def test_an_entry_that_is_not_a_table_does_not_hide_the_ones_after_it(
    tmp_path: Path,
) -> None:
    assert _problems(
        tmp_path, 'ignore = [1, {rule = "variant-removed", subject = "X"}]\n'
    ) == [
        "ignore.toml: ACPG702 /ignore/0: an ignore entry must be a table",
        "ignore.toml: ACPG702 /ignore/1: an ignore entry needs a reason (why this change is accepted)",
    ]


def test_the_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """An ASCII locale (``LC_ALL=C`` without UTF-8 mode) does not change how the file is read."""
    (tmp_path / "i.toml").write_text(
        "[[ignore]]\n" + GOOD.replace("accepted", "accepté ✓"), encoding="utf-8"
    )
    code = "import sys; from pathlib import Path; from acpgen.diff.ignore import read_ignores; print(ascii(read_ignores(Path(sys.argv[1]))[0].reason))"
    env = {
        **os.environ,
        "LC_ALL": "C",
        "LANG": "C",
        "PYTHONUTF8": "0",
        "PYTHONIOENCODING": "ascii",
    }
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "i.toml")],
        env=env,
        # from the directory of this acpgen (the one under test, not one installed
        # elsewhere), which holds the project's configuration as well
        cwd=Path(acpgen.__file__).parent.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout.strip()) == (
        0,
        ascii("accepté ✓"),
    ), done.stderr


def test_an_entry_is_kept_through_its_expiry_day(tmp_path: Path) -> None:
    text = "[[ignore]]\n" + GOOD + "expires = 2027-01-31\n"
    assert [e.expires for e in _read(tmp_path, text)] == [TODAY]
    with pytest.raises(AcpgenError, match="expired on 2027-01-31"):
        _read(tmp_path, text, today=TODAY + dt.timedelta(days=1))


def test_today_is_the_real_date_unless_given(tmp_path: Path) -> None:
    (tmp_path / "i.toml").write_text(
        "[[ignore]]\n" + GOOD + f"expires = {dt.date.today().isoformat()}\n"
    )
    assert len(read_ignores(tmp_path / "i.toml")) == 1
    yesterday = dt.date.today() - dt.timedelta(days=1)
    (tmp_path / "i.toml").write_text(
        "[[ignore]]\n" + GOOD + f"expires = {yesterday.isoformat()}\n"
    )
    with pytest.raises(AcpgenError, match="expired"):
        read_ignores(tmp_path / "i.toml")


# --- what an entry hides: split --------------------------------------------------------


def test_split_keeps_hides_and_finds_stale_entries() -> None:
    other = Change(**{**RECORD.__dict__, "subject": "ToolCall"})
    first, second, unused = (
        _entry(),
        _entry(subject="Content*"),
        _entry(subject="Nothing"),
    )
    kept, hidden, stale = split([RECORD, other], (first, second, unused))
    assert (kept, hidden, stale) == ([other], [(RECORD, first)], [second, unused])
