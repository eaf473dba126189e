"""The installed tool, end to end: the wheel is built, installed into a fresh virtual
environment outside the repository, and used from another directory as a new user would:
``init``, ``build`` (a schema file, a bundled release, a URL through the fake upstream),
``check``, ``overlay list``, ``diff``. Nothing may come from the checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.test_fetch import LAYOUTS, Upstream

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``<env>/bin``: acpgen from its wheel, with its declared dependencies."""
    dist = tmp_path_factory.mktemp("dist")
    made = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)], capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr[-3000:]
    (wheel,) = dist.glob("acpgen-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for packaged in ("acpgen/schemas/acp/v0.1.3/schema.json", "acpgen/schemas/rfds/open-enums.yaml", "acpgen/templates/docs/md/page.md.jinja"):
        assert packaged in names, packaged
    env = tmp_path_factory.mktemp("env") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, capture_output=True)
    pip = subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return env / "bin"


def run(bin_dir: Path, cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    clean["PATH"] = f"{bin_dir}{os.pathsep}{clean.get('PATH', '')}"
    return subprocess.run([str(bin_dir / "acpgen"), *args], cwd=cwd, capture_output=True, text=True, env={**clean, **(env or {})})


def test_a_new_user_from_another_directory(installed: Path, tmp_path: Path) -> None:
    work = tmp_path / "somewhere"
    work.mkdir()
    cache = {"ACPGEN_CACHE_DIR": str(tmp_path / "cache")}
    where = subprocess.run([str(installed / "python"), "-c", "import acpgen.locate as l, acpgen.render.env as e; print(l.assets_dir(), e.templates_dir())"], capture_output=True, text=True, cwd=work)
    assert str(ROOT) not in where.stdout and "site-packages" in where.stdout, where.stdout
    version = run(installed, work, "--version")
    assert version.returncode == 0 and version.stdout.startswith("acpgen ")
    # init, build, check
    assert run(installed, work, "init", "--style", "pydantic", "--style", "md", env=cache).returncode == 0
    built = run(installed, work, "build", env=cache)
    assert built.returncode == 0, built.stderr
    assert (work / "generated/v0.1.3/acp_pydantic/py.typed").is_file() and (work / "generated/v0.1.3/md/v1/schema.md").is_file()
    manifest = json.loads((work / "generated/v0.1.3/acpgen-manifest.json").read_text())
    assert {f.get("source") for f in manifest["files"]} >= {"bundled:v0.1.3/schema.json"}
    checked = run(installed, work, "check", env=cache)
    assert checked.returncode == 0 and "up to date" in checked.stdout
    # what the installed tool builds is what the checkout builds
    assert (work / "generated/v0.1.3/md/v1/schema.md").read_text() == (ROOT / "generated/v0.1.3/md/v1/schema.md").read_text()
    # a schema file of one's own
    own = work / "mine" / "schema.json"
    own.parent.mkdir()
    own.write_text((ROOT / "tests/fixtures/diff/base.json").read_text())
    file_build = run(installed, work, "build", "--schema", "mine/schema.json", "--out", "out-file", "--style", "dataclasses", env=cache)
    assert file_build.returncode == 0, file_build.stderr
    imported = subprocess.run([str(installed / "python"), "-c", "from acp_dataclasses import v1; print(v1.RPC.parse('{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\"}}').method)"], cwd=work / "out-file", capture_output=True, text=True)
    assert imported.stdout.strip() == "session/cancel", imported.stderr
    # the bundled overlays
    listed = run(installed, work, "overlay", "list")
    assert listed.returncode == 0 and "rfd:open-enums" in listed.stdout and "bundled:v0.1.3" in listed.stdout
    diff = run(installed, work, "diff", "bundled:v0.1.3", "bundled:v0.1.3", "--overlay-new", "rfd:open-enums", "--fail-on", "warning")
    assert diff.returncode == 1 and "enum-opened StopReason" in diff.stdout


def test_a_url_through_the_fake_upstream(installed: Path, tmp_path: Path) -> None:
    served = Upstream(tmp_path / "served")
    try:
        for path, body in LAYOUTS["schema-v1.21.0"].items():
            served.write("schema-v1.21.0", path, body)
        work = tmp_path / "w"
        work.mkdir()
        env = {"ACPGEN_CACHE_DIR": str(tmp_path / "cache"), "ACPGEN_UPSTREAM": served.base}
        url = f"{served.base}/schema-v1.21.0/schema/v1/schema.json"
        by_url = run(installed, work, "build", "--schema", url, "--out", "from-url", env=env)
        assert by_url.returncode == 0, by_url.stderr
        by_tag = run(installed, work, "build", "--schema", "acp@schema-v1.21.0", "--out", "from-tag", "--style", "md", env=env)
        assert by_tag.returncode == 0, by_tag.stderr
        assert sorted(json.loads((work / "acpgen.lock").read_text())["sources"]) == ["acp@schema-v1.21.0", url]
        assert (work / "from-tag/md/v2/schema.md").is_file()
        assert run(installed, work, "check", "--schema", "acp@schema-v1.21.0", "--out", "from-tag", "--style", "md", env=env).returncode == 0
    finally:
        served.stop()
