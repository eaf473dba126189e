"""``acpgen diff`` / ``acpgen changelog`` from the command line: every output format
(snapshots of fixture pairs), the CI gate, the ignore file, and bad input (exit 2)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app
from acpgen.diff.report import FORMATS
from acpgen.diff.rules import RULES
from acpgen.diff.rules import BY_ID
from tests.diff.diff_helpers import BASE, CASES, expected, sides

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def diff(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["diff", *args])


@pytest.fixture
def pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A fixture pair written under the cwd (so paths in the output are relative)."""
    monkeypatch.chdir(tmp_path)

    def make(name: str) -> tuple[str, str]:
        sides(Path("."), name)
        return "old", "new"

    return make


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", ["field-renamed", "variant-added-behind-new-capability", "moved-to-stable"])
def test_every_format_of_a_few_pairs(pair, snapshot, case: str, fmt: str) -> None:  # type: ignore[no-untyped-def]
    old, new = pair(case)
    result = diff(old, new, "--format", fmt)
    assert result.exit_code == 0, result.output
    assert result.stdout == snapshot


def test_json_is_the_documented_record_shape(pair) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(diff(*pair("field-renamed"), "--format", "json").stdout)
    assert doc["version"] == 1 and doc["old"] == "old" and doc["new"] == "new"
    (record,) = doc["changes"]
    assert set(record) == {
        "file", "rule", "kind", "level", "code", "subject", "breaks", "message", "variant", "old", "new", "note", "why"
    }
    assert record["why"]["rule"] == "field-renamed: error unless lowered; breaks both sides"
    assert record["why"]["sent_by"] == "agent"  # AuthMethod: in InitializeResponse
    assert (record["rule"], record["kind"], record["subject"]) == ("field-renamed", "renamed", "AuthMethod.name -> AuthMethod.label")
    assert doc["summary"] == {"error": 1, "warning": 0, "info": 0}


def test_github_annotations_point_at_the_new_file(pair) -> None:  # type: ignore[no-untyped-def]
    out = diff(*pair("variant-added-behind-new-capability"), "--format", "github").stdout.splitlines()
    assert out and all(re.match(r"^::(error|warning|notice) file=new/v1/schema\.json,title=[^:]+::.+$", line) for line in out)
    assert any("%60PromptCapabilities.audio%60" in line or "`PromptCapabilities.audio`" in line for line in out)


def test_junit_fails_what_fail_on_fails(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair("type-narrowed-read-leniently")  # a warning, a warning and an info
    tree = ET.fromstring(diff(old, new, "--format", "junit").stdout)
    assert (tree.get("tests"), tree.get("failures")) == ("3", "0")
    tree = ET.fromstring(diff(old, new, "--format", "junit", "--fail-on", "warning").stdout)
    assert (tree.get("tests"), tree.get("failures")) == ("3", "2")
    assert len(tree.findall(".//failure")) == 2


def test_fail_on_sets_the_exit_status(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair("type-narrowed-read-leniently")
    assert diff(old, new).exit_code == 0
    assert diff(old, new, "--fail-on", "error").exit_code == 0
    assert diff(old, new, "--fail-on", "warning").exit_code == 1
    assert diff(old, new, "--fail-on", "info").exit_code == 1


def test_fail_on_code_reads_the_generated_code_verdict(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair("def-renamed")  # no wire change, a broken import
    assert diff(old, new, "--fail-on", "info").exit_code == 1
    assert diff(old, new, "--fail-on", "warning").exit_code == 0
    assert diff(old, new, "--fail-on-code", "error").exit_code == 1


def test_stable_only_skips_the_unstable_files(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair("moved-to-stable")
    every = diff(old, new).stdout
    stable = diff(old, new, "--stable-only").stdout
    assert "v1/schema.unstable.json" in every and "v1/schema.unstable.json" not in stable
    assert stable and all(line.startswith("v1/schema.json:") for line in stable.splitlines())


IGNORE = """
[[diff.ignore]]
rule = "field-renamed"
subject = "AuthMethod.*"
reason = "SDKs regenerate; accepted in review"
expires = 2999-01-01
"""


def test_ignore_file_hides_and_reports(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old, new = pair("field-renamed")
    Path("ignore.toml").write_text(IGNORE)
    result = diff(old, new, "--ignore", "ignore.toml", "--fail-on", "error")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ignored: v1/schema.json: error field-renamed AuthMethod.name -> AuthMethod.label")
    assert result.stdout.rstrip().endswith("-- SDKs regenerate; accepted in review")
    assert "1 ignored" in result.stderr
    doc = json.loads(diff(old, new, "--ignore", "ignore.toml", "--format", "json").stdout)
    assert doc["changes"] == [] and doc["ignored"][0]["reason"] == "SDKs regenerate; accepted in review"
    assert doc["ignored"][0]["ignored_by"] == "ignore.toml#/diff/ignore/0"


def test_ignore_entries_in_acpgen_toml_and_stale_ones(pair) -> None:  # type: ignore[no-untyped-def]
    old, new = pair("field-renamed")
    Path("acpgen.toml").write_text(IGNORE + '\n[[diff.ignore]]\nrule = "method-removed"\nsubject = "session/load"\nreason = "gone"\n')
    result = diff(old, new, "--fail-on", "error")
    assert result.exit_code == 0
    assert "ignore entry /diff/ignore/1 (method-removed session/load) matched nothing" in result.stderr


def test_a_config_with_a_diff_table_still_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("s.json").write_text(json.dumps(BASE))
    Path("acpgen.toml").write_text('[[target]]\nschema = "s.json"\nout = "out"\nstyles = ["md"]\n' + IGNORE)
    assert runner.invoke(app, ["build"]).exit_code == 0


@pytest.mark.parametrize(
    "entry,message",
    [
        ('rule = "field-renamed"\nsubject = "X"', "ACPG702 /diff/ignore/0: an ignore entry needs a reason"),
        ('rule = "field-renamed"\nsubject = "X"\nreason = "ok"\nexpires = 2020-01-01', "expired on 2020-01-01"),
        ('rule = "field-renamd"\nsubject = "X"\nreason = "ok"', "no rule matches 'field-renamd'; did you mean 'field-renamed'?"),
        ('rule = "field-renamed"\nsubject = "X"\nreason = "ok"\nexpire = 2999-01-01', "unknown key 'expire'; did you mean 'expires'?"),
    ],
)
def test_bad_ignore_entries_exit_2(pair, entry: str, message: str) -> None:  # type: ignore[no-untyped-def]
    old, new = pair("field-renamed")
    Path("ignore.toml").write_text("[[diff.ignore]]\n" + entry + "\n")
    result = diff(old, new, "--ignore", "ignore.toml")
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("ignore.toml: ACPG702 /diff/ignore/0") and message in line


def _file(path: Path) -> str:
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(BASE))
    return str(path)


@pytest.mark.parametrize(
    "a,b,message",
    [
        ("a/v1/schema.json", "b/v2/schema.json", "ACPG701"),
        ("a/v1/schema.json", "b/v1/schema.unstable.json", "ACPG701"),
    ],
)
def test_two_files_of_different_trees_or_stability_exit_2(tmp_path: Path, monkeypatch, a: str, b: str, message: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    result = diff(_file(Path(a)), _file(Path(b)))
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert message in line and "same tree and stability" in line


def test_a_missing_side_exits_2(pair) -> None:  # type: ignore[no-untyped-def]
    old, _ = pair("field-renamed")
    result = diff(old, "nowhere")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["nowhere: ACPG100 /: no such file or directory"]
    assert diff(old).exit_code == 2


@pytest.mark.parametrize("args", [["--format", "yaml"], ["--fail-on", "fatal"], ["--fail-on-code", "x"]])
def test_bad_options_exit_2(pair, args: list[str]) -> None:  # type: ignore[no-untyped-def]
    result = diff(*pair("field-renamed"), *args)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1 and "ACPG501" in result.stderr


def test_rules_lists_the_catalogue() -> None:
    out = diff("--rules").stdout.splitlines()
    assert len(out) == len(RULES) + 1
    assert all(any(line.startswith(r.id + " ") for line in out) for r in RULES)


def test_an_overlay_on_one_side_says_what_the_rfd_would_break(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    release = "schemas/acp/v0.1.3"
    result = diff(release, release, "--overlay-new", "schemas/rfds/open-enums.yaml", "--format", "json")
    assert result.exit_code == 0, result.output
    records = {(c["rule"], c["subject"]) for c in json.loads(result.stdout)["changes"]}
    assert ("enum-opened", "StopReason") in records and ("union-opened", "SessionUpdate") in records
    assert {r for r, _ in records} <= {"enum-opened", "union-opened"}
    assert diff(release, release, "--overlay", "schemas/rfds/open-enums.yaml").stdout == ""


def test_changelog_has_a_section_per_release_newest_first(tmp_path: Path, monkeypatch, snapshot) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    from tests.diff.diff_helpers import CASES, write_side

    write_side(Path("r1"), {"old": []}, "old")
    write_side(Path("r2"), CASES["field-renamed"], "new")
    write_side(Path("r3"), {"new": CASES["field-renamed"]["new"] + CASES["enum-value-added-closed"]["new"]}, "new")
    result = runner.invoke(app, ["changelog", "r1/old", "r2/new", "r3/new", "--title", "Fixture releases"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.index("## r3/new") < text.index("## r2/new")
    assert "Compared with `r2/new`: 1 change(s): 1 error" in text
    assert text == snapshot
    assert runner.invoke(app, ["changelog", "r1/old"]).exit_code == 2


@pytest.mark.parametrize(
    "name,single,label",
    [("corpus/acp/v0.13.4", False, "v0.13.4"), ("rel/v2/schema.unstable.json", True, "rel"), ("v0.0.1/schema.json", True, "v0.0.1")],
)
def test_release_labels(name: str, single: bool, label: str) -> None:
    from acpgen.diff import Release

    assert Release(name, {}, single).label == label


FAMILIES = sorted(n for n, c in CASES.items() if "family" in c)


@pytest.mark.parametrize("name", FAMILIES)
def test_each_issue_25_family_in_json_and_text(pair, name: str) -> None:  # type: ignore[no-untyped-def]
    """Every #25 family's fixture pair through the CLI: the JSON records carry the kind,
    subject, level and breaks of the case (each with its why), the text lines say the same."""
    old, new = pair(name)
    doc = json.loads(diff(old, new, "--format", "json").stdout)
    got = {(c["file"], c["rule"], c["kind"], c["level"], c["subject"], c["variant"], tuple(c["breaks"])) for c in doc["changes"]}
    want = {(f, r, BY_ID[r].kind, lvl, s, v, b) for f, r, lvl, s, v, b in expected(name)}
    assert got == want
    assert all(c["why"]["rule"].startswith(c["rule"] + ":") for c in doc["changes"])
    text = diff(old, new).stdout.splitlines()
    for f, r, lvl, s, v, b in sorted(expected(name), key=str):
        head = f"{f}: {lvl} {r} {s}" + (f" ({v})" if v else "") + (f" [breaks {', '.join(b)}]" if b else "")
        assert any(line.startswith(head + ":") or line.startswith(head + " [code") for line in text), (head, text)


@pytest.mark.parametrize(
    "today,applies",
    [("2027-01-30", True), ("2027-01-31", True), ("2027-02-01", False)],
)
def test_an_ignore_entry_applies_through_its_expiry_day_and_not_after(tmp_path: Path, today: str, applies: bool) -> None:
    """docs/guides/diff-gate.md: "after this date the entry is refused". On the day itself it still hides
    its change; the day after, it is bad input (exit 2), never silently applied."""
    import datetime as dt

    from acpgen.diff.ignore import read_ignores, split
    from acpgen.errors import AcpgenError
    from tests.diff.diff_helpers import run_case

    path = tmp_path / "ignore.toml"
    path.write_text(IGNORE.replace("2999-01-01", "2027-01-31"))
    changes = run_case(tmp_path / "case", "field-renamed")
    if not applies:
        with pytest.raises(AcpgenError, match="expired on 2027-01-31"):
            read_ignores(path, today=dt.date.fromisoformat(today))
        return
    entries = read_ignores(path, today=dt.date.fromisoformat(today))
    kept, hidden, stale = split(changes, entries)
    assert (kept, [c.rule for c, _ in hidden], stale) == ([], ["field-renamed"], [])


def test_explain_says_why_each_record_got_its_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--explain: under each text record, the rule's own level and whom it hits, the side
    that sends the type, and the gate or leniency mark that lowered it; JSON has the same
    as ``why``."""
    monkeypatch.chdir(tmp_path)
    lenient = [str(p) for p in sides(Path("lenient"), "type-narrowed-read-leniently")]
    out = diff(*lenient, "--explain").stdout.splitlines()
    i = next(i for i, line in enumerate(out) if " type-narrowed NewSessionRequest.cwd" in line)
    assert out[i + 1 : i + 5] == [
        "    rule: type-narrowed: error unless lowered; breaks the sides that send the type",
        "    sent_by: client",
        "    leniency: read leniently (x-deserialize-default-on-error): a bad value is dropped, not the message",
        "    level: warning, lowered from the rule's error by the leniency above",
    ]
    gated_pair = [str(p) for p in sides(Path("gated"), "variant-added-behind-a-capability-that-names-it")]
    gated = diff(*gated_pair, "--explain").stdout
    assert "    gate: gated by the new capability `ClientCapabilities.planCapabilities`\n" in gated
    assert "    sent_by: agent\n" in gated  # SessionUpdate: the agent sends it, the client receives it
    plain = diff(*lenient).stdout
    assert "    rule:" not in plain and plain.count("\n") == 3
    doc = json.loads(diff(*lenient, "--format", "json").stdout)
    why = next(c["why"] for c in doc["changes"] if c["rule"] == "type-narrowed")
    assert why["leniency"].startswith("read leniently (x-deserialize-default-on-error)") and why["sent_by"] == "client"


@pytest.mark.parametrize(
    "name,because",
    [
        # a gated addition is the info rule itself, as a capability gate makes it
        ("request-added-behind-a-data-gate", "    rule: method-added: info unless lowered; breaks nobody"),
        ("request-removed-with-its-data-gate", "    level: info, lowered from the rule's error by the gate above"),
    ],
)
def test_explain_names_the_data_gate_and_its_type(pair, name: str, because: str) -> None:  # type: ignore[no-untyped-def]
    """A request gated by the data it needs: --explain and the JSON ``why`` name the
    optional member that alone brings its identifier, the type it goes through, and the
    identifier."""
    old, new = pair(name)
    out = diff(old, new, "--explain").stdout.splitlines()
    i = next(i for i, line in enumerate(out) if " session/set_model" in line)
    gate = next(line for line in out[i + 1 : i + 5] if line.startswith("    gate: "))
    assert "`NewSessionResponse.models` (through `SessionModelState`)" in gate and "`ModelId` its `modelId`" in gate
    assert because in out[i + 1 : i + 6]
    doc = json.loads(diff(old, new, "--format", "json").stdout)
    record = next(c for c in doc["changes"] if c["subject"] == "session/set_model")
    assert record["why"]["gate"] == gate.removeprefix("    gate: ") == record["note"]
    assert record["why"]["sent_by"] == "client"
