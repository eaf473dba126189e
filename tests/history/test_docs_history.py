"""History marks and changes pages (issue #26, items 2 and 3).

Four tiny releases written here (tests/fixtures/history/, see its README) cover an element
that appears, one stabilised, a member made required, a type changed, a member removed
and added again, a renamed def and an unstable-only def. Over the corpus (read in place,
skipped when absent) every ``since`` mark of ``main`` is checked against the first
release of the element's current run, re-derived here from the raw schema files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acpgen.cli import app
from acpgen.config import Config, Target

from ..corpus import ACP, index
from .docs_history import anchors_of, page_marks

HISTORY = Path(__file__).parent.parent / "fixtures" / "history"
runner = CliRunner()


def render(schema: Path, history: tuple[str, ...], styles: tuple[str, ...] = ("md",)) -> dict[str, str]:
    from acpgen import api

    config = Config(Path.cwd(), (Target(str(schema), schema, Path("unused"), styles, history=history),))
    files = api.render_target(config.targets[0], config, formatted=True)
    return {p.as_posix(): t for p, t in files.items() if p.suffix in (".md", ".mdx")}


@pytest.fixture(scope="module")
def fixture_pages() -> dict[str, str]:
    return render(HISTORY / "r4", (str(HISTORY),), ("md", "mdx"))


def _since(pages: dict[str, str], page: str = "md/v1/schema.md") -> dict[str, list[tuple[str, str]]]:
    return {k: [(kind, rel) for kind, rel, _ in v] for k, v in page_marks(pages[page]).items()}


def test_fixture_history_marks_stable_page(fixture_pages: dict[str, str]) -> None:
    marks = _since(fixture_pages)
    assert marks == {
        "Usage": [("since", "r2")],  # appeared (its members with it: said once, on the def)
        "Nes": [("stable since", "r3")],  # stabilised (unstable since r1, the oldest read)
        "Prompt.text": [("changed in", "r3")],  # now required
        "Prompt.count": [("changed in", "r2")],  # integer -> string
        "Prompt.legacy": [("since", "r3")],  # removed in r2, back in r3: since it came back
        "Prompt.extra": [("since", "r4")],
        "New": [("since", "r3")],  # renamed from Old: since the rename
        "Mode|c": [("since", "r3")],
    }
    # present in the oldest release read, unchanged: not marked
    assert "Prompt" not in marks and "Mode" not in marks and "Mode|a" not in marks
    assert "Draft" not in marks  # unstable-only: not on the stable page


def test_fixture_history_marks_unstable_page(fixture_pages: dict[str, str]) -> None:
    marks = _since(fixture_pages, "md/v1/draft/schema.md")
    assert marks["Draft"] == [("since", "r2")]
    assert marks["Nes"] == [("stable since", "r3")]
    assert marks["Prompt.legacy"] == [("since", "r3")]


def test_marks_link_to_release_sections_of_the_changes_page(fixture_pages: dict[str, str]) -> None:
    changes = fixture_pages["md/v1/changes.md"]
    anchors = anchors_of(changes)
    assert anchors == {"release-r1", "release-r2", "release-r3", "release-r4"}
    for page, prefix in (("md/v1/schema.md", "changes.md#"), ("md/v1/draft/schema.md", "../changes.md#")):
        hrefs = {href for marks in page_marks(fixture_pages[page]).values() for _, _, href in marks}
        assert hrefs and all(h.startswith(prefix) and h[len(prefix) :] in anchors for h in hrefs)
    r3 = changes.split('<a id="release-r3"></a>')[1].split('<a id="release-r2"></a>')[0]
    assert "Old -> New" in r3 and "Prompt.text is now required" in r3 and "Compared with `r2`" in r3
    assert changes.index("release-r4") < changes.index("release-r1")  # newest first
    mdx = fixture_pages["mdx/v1/schema.mdx"]
    assert '<a href="changes#release-r3"><Badge color="gray">since r3</Badge></a>' in mdx
    assert "mdx/v1/changes.mdx" in fixture_pages


def test_without_history_the_pages_are_unchanged() -> None:
    plain = render(HISTORY / "r4", ())
    assert sorted(plain) == ["md/v1/draft/schema.md", "md/v1/schema.md"]
    assert "since" not in plain["md/v1/schema.md"] and "History" not in plain["md/v1/schema.md"]


def test_history_is_deterministic(fixture_pages: dict[str, str]) -> None:
    again = render(HISTORY / "r4", (str(HISTORY),), ("md", "mdx"))
    assert again == fixture_pages
    listed = render(HISTORY / "r4", tuple(str(HISTORY / r) for r in ("r1", "r2", "r3", "r4")), ("md", "mdx"))
    assert listed == fixture_pages  # a list of releases reads as the directory of them


def test_history_ends_at_the_target() -> None:
    pages = render(HISTORY / "r2", (str(HISTORY),))
    marks = _since(pages)
    assert marks == {"Usage": [("since", "r2")], "Prompt.count": [("changed in", "r2")]}
    assert anchors_of(pages["md/v1/changes.md"]) == {"release-r1", "release-r2"}


def test_cli_and_config(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", "--schema", str(HISTORY / "r4"), "--style", "md", "--out", str(out), "--history", str(HISTORY)])
    assert result.exit_code == 0, result.output
    assert (out / "md" / "v1" / "changes.md").is_file()
    again = ["check", "--schema", str(HISTORY / "r4"), "--style", "md", "--out", str(out)]
    assert runner.invoke(app, again + ["--history", str(HISTORY)]).exit_code == 0
    assert runner.invoke(app, again).exit_code == 1  # without the history: the changes page is extra
    manifest = json.loads((out / "acpgen-manifest.json").read_text())
    assert {"path": "md/v1/changes.md", "style": "md", "tree": "v1", "stability": "changes"}.items() <= next(
        e for e in manifest["files"] if e["path"] == "md/v1/changes.md"
    ).items()
    config = tmp_path / "acpgen.toml"
    config.write_text(
        f'[[target]]\nschema = "{HISTORY / "r4"}"\nout = "site-out"\nstyles = ["md"]\nhistory = "{HISTORY}"\n'
    )
    result = runner.invoke(app, ["build", "--config", str(config), "-q"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site-out" / "md" / "v1" / "changes.md").read_text() == (out / "md" / "v1" / "changes.md").read_text()
    assert runner.invoke(app, ["check", "--config", str(config)]).exit_code == 0


def test_bad_history_is_one_line_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["build", "--schema", str(HISTORY / "r4"), "--style", "md", "--out", str(tmp_path / "o"), "--history", str(tmp_path / "nope")]
    )
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "ACPG100" in result.output and "Traceback" not in result.output
    config = tmp_path / "acpgen.toml"
    config.write_text(f'[[target]]\nschema = "{HISTORY / "r4"}"\nout = "o"\nstyles = ["md"]\nhistory = 3\n')
    result = runner.invoke(app, ["build", "--config", str(config)])
    assert result.exit_code == 2 and "/target/0/history" in result.output


# --------------------------------------------------------------------------- the corpus


def _raw_defs(release: str, name: str) -> dict[str, object]:
    path = ACP / release / "v1" / name
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    defs = data.get("$defs") or data.get("definitions") or {}
    return defs if isinstance(defs, dict) else {}


def _raw_methods(release: str, name: str) -> set[str]:
    """Method names of a meta file (``*Methods`` tables), or of the legacy methods.json."""
    path = ACP / release / "v1" / name
    if not path.is_file():
        return set()
    data = json.loads(path.read_text())
    tables = [v for k, v in data.items() if k.endswith("Methods")] if name != "methods.json" else [data]
    return {m for t in tables if isinstance(t, dict) for m in t.values() if isinstance(m, str)}


def _members(d: object) -> set[str]:
    props = d.get("properties") if isinstance(d, dict) else None
    return set(props) if isinstance(props, dict) else set()


def _run_start(present: list[bool]) -> int:
    i = len(present) - 1
    while i > 0 and present[i - 1]:
        i -= 1
    return i


def test_corpus_since_marks_are_the_first_release_of_the_current_run() -> None:
    if not (ACP / "INDEX.json").is_file():
        pytest.skip("../shared/corpus is absent: the upstream corpus is read in place, never copied")
    releases = [r["release"] for r in index()["releases"]]
    pages = render(ACP / "main", (str(ACP),))
    md = pages["md/v1/schema.md"]
    marks = page_marks(md)
    stable = [_raw_defs(r, "schema.json") for r in releases]
    files = [(s, _raw_defs(r, "schema.unstable.json")) for r, s in zip(releases, stable)]
    checked = unmarked = 0
    for name, d in stable[-1].items():
        if f"## `{name}`" not in md and f"#### `{name}`" not in md:
            continue  # not shown (x-docs-ignore, a router)
        present = [name in s or name in u for s, u in files]
        start = _run_start(present)
        since = [rel for kind, rel, _ in marks.get(name, []) if kind == "since"]
        assert since == ([releases[start]] if start else []), name
        checked += 1
        unmarked += start == 0
        plain_object = isinstance(d, dict) and not any(k in d for k in ("allOf", "anyOf", "oneOf"))
        for member in _members(d) if plain_object else ():
            run = _run_start([any(member in _members(f.get(name)) for f in both) for both in files])
            got = [rel for kind, rel, _ in marks.get(f"{name}.{member}", []) if kind == "since"]
            # a member that came with its def is not marked: the def says it once
            want = [releases[run]] if run and run != start else []
            assert got == want, f"{name}.{member}"
            checked += 1
    assert checked > 300 and unmarked > 0  # 545 and 2 on the corpus of 2026-11-21
    methods = [set().union(*(_raw_methods(r, n) for n in ("meta.json", "meta.unstable.json", "methods.json"))) for r in releases]
    shown = [m for m in methods[-1] if f"### `{m}` method" in md and m in _raw_methods("main", "meta.json")]
    for m in shown:
        start = _run_start([m in found for found in methods])
        since = [rel for kind, rel, _ in marks.get(f"method:{m}", []) if kind == "since"]
        assert since == ([releases[start]] if start else []), m
    assert len(shown) > 15
    # every mark links to a release section of the changes page
    anchors = anchors_of(pages["md/v1/changes.md"])
    assert all(href.split("#")[1] in anchors for ms in marks.values() for _, _, href in ms)


def test_mdx_pages_with_marks_and_changes_pages_compile(tmp_path: Path) -> None:
    """Through @mdx-js/mdx (tests/render/test_docs_toolchains.py installs it): the marked pages
    and the changes pages of the fixture history and, when present, of the corpus."""
    from ..render.test_docs_toolchains import MDX, _compile
    from ..conftest import npm_install

    npm_install(MDX, "@mdx-js/mdx", "the MDX compile check")
    pages = render(HISTORY / "r4", (str(HISTORY),), ("mdx",))
    if (ACP / "INDEX.json").is_file():
        pages.update({f"corpus/{k}": v for k, v in render(ACP / "main", (str(ACP),), ("mdx",)).items()})
    files = []
    for rel, text in pages.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)
    assert any(p.name == "changes.mdx" for p in files)
    assert [r for r in _compile(MDX / "compile.mjs", files) if not r["ok"]] == []


from ..test_fetch import upstream  # noqa: E402,F401  (the fake upstream of acp@<tag>)


def test_acp_tags_in_a_history_are_fetched_and_pinned(upstream, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    args = ["build", "--schema", "acp@schema-v1.21.0", "--style", "md", "--out", "out"]
    result = runner.invoke(app, args + ["--history", "acp@v0.13.0", "--history", "acp@schema-v1.21.0"])
    assert result.exit_code == 0, result.output
    lock = json.loads(Path("acpgen.lock").read_text())["sources"]
    assert {"acp@v0.13.0", "acp@schema-v1.21.0"} <= set(lock)
    changes = Path("out/md/v2/changes.md").read_text()
    assert '<a id="release-acp-schema-v1-21-0"></a>' in changes and "## `acp@v0.13.0`" in changes
    # v2 had only its unstable file at v0.13.0: its stable page says when it became stable
    assert "*stable since* [`acp@schema-v1.21.0`](changes.md#release-acp-schema-v1-21-0)" in Path("out/md/v2/schema.md").read_text()
