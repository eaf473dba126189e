"""The bundled default (schemas/acp/v0.1.3, written from seed 004) and its committed output."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from acpgen import api, ir
from acpgen.config import load_config
from acpgen.render import STYLES
from tests.corpus import ACP, needs_corpus

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "schemas" / "acp" / "v0.1.3"
UPSTREAM = ACP / "v0.1.3-alpha.0" / "v1" / "schema.json"

#: What the seed page cannot show, so the bundled schema cannot carry it. Each entry is
#: a regex over the difference path printed by ``_diff`` below, with the reason.
CANNOT_SHOW = {
    # `integer | null` / `number | null` fields: the page prints no format for nullable
    # scalars (docs-format-and-overlays.md A5), so uint32/double are unknown
    r"^ReadTextFileRequest\.(line|limit)/type/inner/constraints/format$": "format of a nullable integer",
    r"^ToolCallLocation\.line/type/inner/constraints/format$": "format of a nullable integer",
    r"^Annotations\.priority/type/inner/constraints/format$": "format of a nullable number",
    r"^(ResourceLink|ContentBlock\[ContentBlock#resource_link\])\.size/type/inner/constraints/format$": "format of a nullable integer",
    # x-docs-ignore defs are not on the page: the unstable terminal methods and their types
    r"^(CreateTerminal|TerminalOutput|ReleaseTerminal|WaitForTerminalExit)(Request|Response)$": "x-docs-ignore def",
    r"^TerminalExitStatus$": "x-docs-ignore def",
    r"^methods\[terminal/[a-z_]+@client\]$": "method of an x-docs-ignore def",
    # the routers are x-docs-ignore: their prose and their terminal members are not shown.
    # The bundled routers carry the method prose the page shows (as later upstream does)
    r"^(Agent|Client)(Request|Response|Notification)/description$": "router prose (x-docs-ignore)",
    r"^(Agent|Client)(Request|Response|Notification)\[[A-Za-z]+\]/description$": "method prose on a router member",
    r"^methods\[[a-z_/]+@(agent|client)\]/description$": "method prose, read from those router members",
    r"^AgentRequest\[(CreateTerminal|TerminalOutput|ReleaseTerminal|WaitForTerminalExit)Request\]$": "terminal member",
    r"^ClientResponse\[(CreateTerminal|TerminalOutput|ReleaseTerminal|WaitForTerminalExit)Response\]$": "terminal member",
    # rustdoc intra-doc links: the page unwraps [`X`] to `X` (A7)
    r"^(PromptCapabilities|PromptRequest)(\.[A-Za-z]+)?/description$": "rustdoc link unwrapped by the page",
}


def _norm_text(text: str) -> str:
    text = re.sub(r"^\s*[-*]\s+", "- ", text, flags=re.M)
    return " ".join(text.split())


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in ("origin", "source", "source_sha256", "meta_sha256", "meta_source")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str):
        return _norm_text(value)
    return value


def _key(value: dict[str, Any]) -> str:
    if value.get("node") == "Method":
        return f"{value['name']}@{value['side']}"
    for k in ("key", "wire_name", "value", "title"):
        if isinstance(value.get(k), (str, int)):
            return str(value[k])
    return json.dumps(value, sort_keys=True)


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}")
            else:
                _diff(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and all(isinstance(x, dict) for x in a + b) and (a or b):
        ka, kb = {_key(x): x for x in a}, {_key(x): x for x in b}
        for k in sorted(set(ka) | set(kb)):
            if k not in ka or k not in kb:
                out.append(f"{path}[{k}]")
            else:
                _diff(ka[k], kb[k], f"{path}[{k}]", out)
    elif a != b:
        out.append(path)


def _paths(protocol: ir.Protocol) -> dict[str, Any]:
    data = _strip(ir.to_jsonable(protocol))
    return data  # type: ignore[no-any-return]


def _readable(path: str) -> str:
    """/defs[Foo]/fields[bar]/type -> Foo.bar/type; /defs[Foo] -> Foo; /defs[U]/members[M] -> U[M]"""
    path = re.sub(r"^/defs\[([^\]]+)\]", r"\1", path)
    path = re.sub(r"/fields\[([^\]]+)\]", r".\1", path)
    path = re.sub(r"/(members|variants|values)\[([^\]]+)\]", r"[\2]", path)
    return re.sub(r"^/methods", "methods", path)


def test_bundled_builds_every_def_the_page_shows() -> None:
    (built,) = api.build_ir(BUNDLED)
    keys = {d.key for d in built.protocol.defs}
    assert len(keys) == 59  # 53 types on the page + 6 routers
    assert {m.name for m in built.protocol.methods} == {
        "authenticate",
        "initialize",
        "session/cancel",
        "session/load",
        "session/new",
        "session/prompt",
        "fs/read_text_file",
        "fs/write_text_file",
        "session/request_permission",
        "session/update",
    }
    results = {m.name: m.result for m in built.protocol.methods}
    assert results["fs/read_text_file"] == "ReadTextFileResponse"  # paired by name, no x-method


@needs_corpus
def test_bundled_ir_equals_upstream_release_except_what_the_page_cannot_show() -> None:
    (ours,) = api.build_ir(BUNDLED)
    (theirs,) = api.build_ir(UPSTREAM)
    found: list[str] = []
    _diff(_paths(ours.protocol), _paths(theirs.protocol), "", found)
    readable = [_readable(p) for p in found]
    unexplained = [p for p in readable if not any(re.search(rx, p) for rx in CANNOT_SHOW)]
    assert unexplained == []
    # every allow-list entry is still needed: the list cannot rot
    unused = [rx for rx in CANNOT_SHOW if not any(re.search(rx, p) for p in readable)]
    assert unused == []


def test_generated_is_up_to_date() -> None:
    """`acpgen check` on the repository: generated/ is what `make build` writes."""
    config = load_config(ROOT / "acpgen.toml", STYLES)
    assert [(t.name, d) for t, d in api.check_all(config) if not d.clean] == []


def test_bundled_meta_matches_x_method() -> None:
    """meta.json lists exactly the x-method values per side (as upstream's generator writes it)."""
    schema = json.loads((BUNDLED / "schema.json").read_text())
    meta = json.loads((BUNDLED / "meta.json").read_text())
    for side in ("agent", "client"):
        declared = {d["x-method"] for d in schema["$defs"].values() if d.get("x-side") == side and "x-method" in d}
        assert set(meta[f"{side}Methods"].values()) == declared


@pytest.mark.parametrize("name", ["InitializeRequest", "SessionNotification", "RequestPermissionResponse"])
def test_bundled_pydantic_module_exports(name: str) -> None:
    import importlib
    import sys

    sys.path.insert(0, str(ROOT / "generated" / "v0.1.3"))
    try:
        module = importlib.import_module("acp_pydantic.v1")
        assert hasattr(module, name)
    finally:
        sys.path.remove(str(ROOT / "generated" / "v0.1.3"))
