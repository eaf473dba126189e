"""Schemas from a URL or an upstream tag, against a fake upstream served from loopback
(standard library): the three layouts upstream used, the lock and the cache (no network
once pinned), and each failure (404, a changed file, a timeout, a truncated body, a bad
lock) as one line, exit 2, nothing written."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest
from typer.testing import CliRunner

from acpgen.cli import app

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = (ROOT / "schemas" / "acp" / "v0.1.3" / "schema.json").read_text()
META = (ROOT / "schemas" / "acp" / "v0.1.3" / "meta.json").read_text()
runner = CliRunner()

#: tag -> upstream path -> body: the three layouts of upstream's history
LAYOUTS = {
    "v0.0.5": {"schema.json": SCHEMA},
    "v0.13.0": {
        "schema/schema.json": SCHEMA,
        "schema/meta.json": META,
        "schema/schema.v2.unstable.json": SCHEMA,
        "schema/meta.v2.unstable.json": META.replace('"version": 1', '"version": 2'),
    },
    "schema-v1.21.0": {
        "schema/v1/schema.json": SCHEMA,
        "schema/v1/meta.json": META,
        "schema/v2/schema.json": SCHEMA,
        "schema/v2/meta.json": META.replace('"version": 1', '"version": 2'),
    },
}


class Upstream:
    """Files under ``root``; ``slow`` paths answer after ``delay`` s; ``truncated`` paths
    announce more bytes than they send; ``failing`` paths answer their HTTP error status.
    Every request path is recorded."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.slow: set[str] = set()
        self.truncated: set[str] = set()
        self.failing: dict[str, int] = {}
        self.delay = 2.0
        self.requests: list[str] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                upstream.requests.append(path)
                if path in upstream.slow:
                    time.sleep(upstream.delay)
                if path in upstream.failing:
                    self.send_error(upstream.failing[path])
                    return
                file = upstream.root / path.lstrip("/")
                if not file.is_file():
                    self.send_error(404, "Not Found")
                    return
                body = file.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body) + (100 if path in upstream.truncated else 0)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if path in upstream.truncated:
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/acp"

    def write(self, tag: str, path: str, body: str) -> None:
        target = self.root / "acp" / tag / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Upstream]:
    served = Upstream(tmp_path / "served")
    for tag, files in LAYOUTS.items():
        for path, body in files.items():
            served.write(tag, path, body)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("ACPGEN_UPSTREAM", served.base)
    monkeypatch.setenv("ACPGEN_CACHE_DIR", str(tmp_path / "cache"))
    yield served
    served.stop()


def build(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["build", "--style", "pydantic", *args])


def lines(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line) for line in result.stderr.splitlines()]


@pytest.mark.parametrize(
    "tag,modules",
    [
        ("v0.0.5", ["v1"]),
        ("v0.13.0", ["v1", "v2_unstable"]),
        ("schema-v1.21.0", ["v1", "v2"]),
    ],
)
def test_each_upstream_layout_builds_and_is_pinned(upstream: Upstream, tag: str, modules: list[str]) -> None:
    result = build("--schema", f"acp@{tag}", "--out", "out")
    assert result.exit_code == 0, result.output
    assert sorted(p.stem for p in Path("out/acp_pydantic").glob("v*.py")) == modules
    lock = json.loads(Path("acpgen.lock").read_text())
    entry = lock["sources"][f"acp@{tag}"]
    assert entry["upstream"] == upstream.base
    assert {f["url"].split(f"/{tag}/", 1)[1] for f in entry["files"].values()} == set(LAYOUTS[tag])
    assert all(len(f["sha256"]) == 64 for f in entry["files"].values())


def test_with_the_lock_no_network_is_used(upstream: Upstream) -> None:
    assert build("--schema", "acp@schema-v1.21.0", "--out", "out").exit_code == 0
    lock = Path("acpgen.lock").read_text()
    upstream.stop()  # nothing answers any more
    upstream.requests.clear()
    again = build("--schema", "acp@schema-v1.21.0", "--out", "out2")
    assert again.exit_code == 0, again.output
    assert upstream.requests == []
    assert Path("acpgen.lock").read_text() == lock
    assert Path("out2/acp_pydantic/v2.py").read_text() == Path("out/acp_pydantic/v2.py").read_text()


def test_a_changed_file_against_the_lock_is_refused(upstream: Upstream, tmp_path: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    assert build("--schema", "acp@schema-v1.21.0", "--out", "out").exit_code == 0
    lock = Path("acpgen.lock").read_text()
    before = {p: p.read_bytes() for p in Path("out").rglob("*") if p.is_file()}
    shutil.rmtree(tmp_path / "cache")  # a new machine: the lock, no cache
    upstream.write("schema-v1.21.0", "schema/v2/schema.json", SCHEMA.replace('"description"', '"title"', 1))
    result = build("--schema", "acp@schema-v1.21.0", "--out", "out")
    assert result.exit_code == 2
    (line,) = lines(result)
    assert line.startswith("acp@schema-v1.21.0: ACPG111 /: http://127.0.0.1:PORT/acp/schema-v1.21.0/schema/v2/schema.json changed since acpgen.lock pinned it")
    assert line == snapshot
    assert Path("acpgen.lock").read_text() == lock
    assert {p: p.read_bytes() for p in Path("out").rglob("*") if p.is_file()} == before


def test_a_url_of_a_schema_file_and_its_meta(upstream: Upstream) -> None:
    url = f"{upstream.base}/schema-v1.21.0/schema/v2/schema.json"
    result = build("--schema", url, "--out", "out")
    assert result.exit_code == 0, result.output
    assert [p.stem for p in Path("out/acp_pydantic").glob("v*.py")] == ["v2"]
    files = json.loads(Path("acpgen.lock").read_text())["sources"][url]["files"]
    assert sorted(files) == ["meta.json", "schema.json"]


@pytest.mark.parametrize("status", [403, 500, 503])
def test_an_optional_file_that_fails_other_than_404_fails_the_build(upstream: Upstream, status: int) -> None:
    """Only a 404 says an optional file (the meta beside a schema URL, a layout's other
    files) is not there; any other error is a failure, never read as "absent"."""
    upstream.failing["/acp/schema-v1.21.0/schema/v2/meta.json"] = status
    result = build("--schema", f"{upstream.base}/schema-v1.21.0/schema/v2/schema.json", "--out", "out")
    assert result.exit_code == 2, result.output
    (line,) = lines(result)
    assert f"/acp/schema-v1.21.0/schema/v2/meta.json: HTTP {status} " in line
    assert not Path("out").exists() and not Path("acpgen.lock").exists()


FAILURES = {
    "missing-tag": (["--schema", "acp@v9.9.9"], "acp@v9.9.9: ACPG110 /: no ACP schema at http://127.0.0.1:PORT/acp/v9.9.9 (tried schema/v1/schema.json, schema/schema.json, schema.json)"),
    "url-404": (["--schema", "URL/acp/v0.0.5/nope.json"], "URL/acp/v0.0.5/nope.json: ACPG110 /: URL/acp/v0.0.5/nope.json: HTTP 404 Not Found"),
    "timeout": (["--schema", "URL/acp/v0.0.5/schema.json", "--config", "acpgen.toml"], "timed out after 0.5 s"),
    "truncated": (["--schema", "URL/acp/v0.0.5/schema.json"], "the body was cut off"),
    "unreachable": (["--schema", "http://127.0.0.1:9/acp/schema.json"], "cannot reach it"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failures_are_one_line_exit_2_nothing_written(upstream: Upstream, case: str, snapshot) -> None:  # type: ignore[no-untyped-def]
    args, expected = FAILURES[case]
    if case == "timeout":
        upstream.slow.add("/acp/v0.0.5/schema.json")
        upstream.delay = 2.0
        Path("acpgen.toml").write_text('[[target]]\nschema = "unused"\nout = "unused"\n[fetch]\ntimeout = 0.5\n')
    if case == "truncated":
        upstream.truncated.add("/acp/v0.0.5/schema.json")
    base = upstream.base.removesuffix("/acp")
    result = build(*[a.replace("URL", base) for a in args], "--out", "out")
    assert result.exit_code == 2, result.output
    (line,) = lines(result)
    assert expected.replace("URL", "http://127.0.0.1:PORT") in line
    assert not Path("out").exists() and not Path("acpgen.lock").exists()
    assert line == snapshot


def test_a_bad_lock_file_is_refused(upstream: Upstream, snapshot) -> None:  # type: ignore[no-untyped-def]
    Path("acpgen.lock").write_text('{"version": 1, "sources": {"acp@v0.0.5": {"files": {"schema.json": {"url": 3}}}}}')
    result = build("--schema", "acp@v0.0.5", "--out", "out")
    assert result.exit_code == 2
    assert lines(result) == ["acpgen.lock: ACPG112 /sources/acp@v0.0.5: malformed entry"] == snapshot
    Path("acpgen.lock").write_text("{}")
    result = build("--schema", "acp@v0.0.5", "--out", "out")
    assert result.exit_code == 2 and "not a version 1 lock file" in result.stderr


def test_the_lock_follows_the_upstream_it_was_read_from(upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    assert build("--schema", "acp@v0.0.5", "--out", "out").exit_code == 0
    monkeypatch.setenv("ACPGEN_UPSTREAM", "https://mirror.example/acp")
    result = build("--schema", "acp@v0.0.5", "--out", "out")
    assert result.exit_code == 2 and "remove its entry to fetch it again" in result.stderr


def test_a_config_target_and_diff_and_changelog_read_tags(upstream: Upstream) -> None:
    Path("acpgen.toml").write_text('[[target]]\nschema = "acp@v0.13.0"\nout = "gen"\nstyles = ["md"]\n')
    assert runner.invoke(app, ["build"]).exit_code == 0
    assert Path("gen/md/v2/draft/schema.md").is_file()
    assert runner.invoke(app, ["check"]).exit_code == 0
    diff = runner.invoke(app, ["diff", "acp@v0.0.5", "acp@v0.13.0", "--format", "json"])
    assert diff.exit_code == 0, diff.output
    doc = json.loads(diff.stdout)
    assert (doc["old"], doc["new"]) == ("acp@v0.0.5", "acp@v0.13.0")
    assert {c["rule"] for c in doc["changes"]} == {"file-added"}
    assert "acp@v0.0.5" in json.loads(Path("acpgen.lock").read_text())["sources"]


def test_the_upstream_comes_from_the_config(upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACPGEN_UPSTREAM")
    Path("acpgen.toml").write_text(
        f'[[target]]\nschema = "acp@schema-v1.21.0"\nout = "gen"\nstyles = ["md"]\n[fetch]\nupstream = "{upstream.base}"\ntimeout = 5\n'
    )
    result = runner.invoke(app, ["build"])
    assert result.exit_code == 0, result.output
    assert json.loads(Path("acpgen.lock").read_text())["sources"]["acp@schema-v1.21.0"]["upstream"] == upstream.base
    Path("acpgen.toml").write_text('[[target]]\nschema = "s"\nout = "o"\n[fetch]\ntimeout = -1\n')
    bad = runner.invoke(app, ["build"])
    assert bad.exit_code == 2 and "[fetch] takes upstream" in bad.stderr


def test_a_lock_is_refused_unless_every_entry_is_whole(upstream: Upstream) -> None:
    """One good file pin does not make an entry good, nor one good source a lock."""
    assert build("--schema", "acp@schema-v1.21.0", "--out", "out").exit_code == 0
    good = json.loads(Path("acpgen.lock").read_text())
    files = good["sources"]["acp@schema-v1.21.0"]["files"]
    assert len(files) > 1
    damaged = json.loads(json.dumps(good))
    first = sorted(files)[0]
    del damaged["sources"]["acp@schema-v1.21.0"]["files"][first]["sha256"]
    Path("acpgen.lock").write_text(json.dumps(damaged))
    result = build("--schema", "acp@schema-v1.21.0", "--out", "out")
    assert (result.exit_code, lines(result)) == (2, ["acpgen.lock: ACPG112 /sources/acp@schema-v1.21.0: malformed entry"])
    # a whole entry beside a broken one: the lock is still refused, pointing at the broken one
    other = json.loads(json.dumps(good))
    other["sources"]["acp@v0.0.5"] = {"files": {"schema.json": {"url": "http://x/schema.json", "sha256": 5}}}
    Path("acpgen.lock").write_text(json.dumps(other))
    result = build("--schema", "acp@schema-v1.21.0", "--out", "out")
    assert (result.exit_code, lines(result)) == (2, ["acpgen.lock: ACPG112 /sources/acp@v0.0.5: malformed entry"])


def test_a_cached_blob_is_used_only_when_it_has_its_sha256(upstream: Upstream, tmp_path: Path) -> None:
    assert build("--schema", "acp@schema-v1.21.0", "--out", "out").exit_code == 0
    before = Path("out/acp_pydantic/v2.py").read_text()
    pins = json.loads(Path("acpgen.lock").read_text())["sources"]["acp@schema-v1.21.0"]["files"]
    pin = pins["v2/schema.json"]
    same = sorted("/" + p["url"].split("/", 3)[3] for p in pins.values() if p["sha256"] == pin["sha256"])
    (blob,) = (tmp_path / "cache").rglob(f"blobs/{pin['sha256']}")
    # the cache was damaged: still valid JSON, another schema
    blob.write_text(SCHEMA.replace('"description"', '"title"', 1))
    upstream.requests.clear()
    result = build("--schema", "acp@schema-v1.21.0", "--out", "out2")
    assert result.exit_code == 0, result.output
    # fetched again: the files with that content (v1's is the same here), nothing else
    assert sorted(upstream.requests) == same and "/acp/schema-v1.21.0/schema/v2/schema.json" in same
    assert Path("out2/acp_pydantic/v2.py").read_text() == before
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == pin["sha256"]  # and the cache repaired
