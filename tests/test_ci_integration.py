"""acpgen where CI runs it: ``action.yml`` and the workflows of the README and the site
against the GitHub schemas check-jsonschema vendors, and the pre-commit hooks (``.pre-commit-hooks.yaml``) run
by pre-commit itself on a throwaway git repository."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} (a dev dependency) is not installed")
    return str(path)


def test_action_is_a_valid_github_action() -> None:
    ran = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ROOT / "action.yml")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    # inputs reach shell commands through env, never pasted into the script
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step


def _workflows() -> dict[str, str]:
    """The workflows shown to users, in the README and the site's pages (docs/): each name
    once, or the same text wherever it is shown."""
    flows: dict[str, str] = {}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for name, body in re.findall(r"<!-- workflow: (\w+) -->\n```yaml\n(.*?)```", page.read_text(), flags=re.S):
            assert flows.setdefault(name, body) == body, (name, page)
    return flows


def test_readme_workflows_are_valid(tmp_path: Path) -> None:
    flows = _workflows()
    assert set(flows) == {"sdk", "schema"}
    for name, body in flows.items():
        path = tmp_path / f"{name}.yml"
        path.write_text(body)
        ran = subprocess.run(
            [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path)], capture_output=True, text=True
        )
        assert ran.returncode == 0, (name, ran.stdout + ran.stderr)
        assert "acpgen@" in body


def test_hook_manifest_is_valid() -> None:
    ran = subprocess.run([_tool("pre-commit"), "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"acpgen-check", "acpgen-diff"}
    assert hooks["acpgen-diff"]["entry"].endswith("--fail-on error")


# ----------------------------------------------------------------------- pre-commit runs


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env).stdout.strip()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("pre-commit needs git and this repository's history")
    return {**os.environ, "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home"))}


def _throwaway(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "acpgen.toml").write_text('[[target]]\nschema = "bundled:v0.1.3"\nstyles = ["md"]\nout = "generated"\n')
    built = subprocess.run([str(BIN / "acpgen"), "build", "--quiet"], cwd=repo, capture_output=True, text=True, env={**os.environ, "ACPGEN_CACHE_DIR": ""})
    assert built.returncode == 0, built.stderr
    shutil.copytree(ROOT / "schemas" / "acp" / "v0.1.3", repo / "schema")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    return repo


def test_check_hook_with_try_repo(tmp_path: Path, home: dict[str, str]) -> None:
    repo = _throwaway(tmp_path)
    run = [_tool("pre-commit"), "try-repo", str(ROOT), "acpgen-check", "--all-files"]
    passed = subprocess.run(run, cwd=repo, capture_output=True, text=True, env=home)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert re.search(r"acpgen check\.+Passed", passed.stdout)
    page = repo / "generated" / "md" / "v1" / "schema.md"
    page.write_text(page.read_text() + "edited\n")
    _git(repo, "add", "-A")
    failed = subprocess.run(run, cwd=repo, capture_output=True, text=True, env=home)
    assert failed.returncode == 1 and "stale:" in failed.stdout and "md/v1/schema.md" in failed.stdout


def test_diff_hook_from_a_config(tmp_path: Path, home: dict[str, str]) -> None:
    repo = _throwaway(tmp_path)
    rev = _git(ROOT, "stash", "create") or _git(ROOT, "rev-parse", "HEAD")  # the working tree, as a commit
    config = {
        "repos": [{"repo": str(ROOT), "rev": rev, "hooks": [{"id": "acpgen-diff", "args": ["bundled:v0.1.3", "schema"]}]}]
    }
    (repo / ".pre-commit-config.yaml").write_text(json.dumps(config))
    _git(repo, "add", "-A")
    run = [_tool("pre-commit"), "run", "acpgen-diff", "--all-files"]
    passed = subprocess.run(run, cwd=repo, capture_output=True, text=True, env=home)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    schema = repo / "schema" / "schema.json"
    doc = json.loads(schema.read_text())
    doc["$defs"]["StopReason"]["oneOf"] = doc["$defs"]["StopReason"]["oneOf"][:-1]  # a value gone: old agents send it
    schema.write_text(json.dumps(doc, indent=2))
    _git(repo, "add", "-A")
    failed = subprocess.run(run, cwd=repo, capture_output=True, text=True, env=home)
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert "enum-value-removed StopReason" in failed.stdout
