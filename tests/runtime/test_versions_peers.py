"""Version negotiation with peers nobody here wrote, each in its own process:

* the official TypeScript SDK 2.4.0 (``@agentclientprotocol/sdk``, pinned in
  tests/interop, installed by the test; skipped, saying why, without node/npm or the
  registry): its v1 entry point and ``./experimental/v2`` as clients, and its
  ``agentProtocolRouter`` with the v1 app, the v2 app or both as agents
  (``tests/interop/versions.mjs``), against acpgen agents and clients speaking v1, v2 or
  both (``peers/versions.py``, on bindings built from the SDK's schema directory, both
  trees, in the three styles);
* acpx (v1, pinned in tests/peers), driving the echo agent built on both trees;
* the echo agent (``examples/echo_agent.py``) itself: v2 to a client offering v2, v1 to a
  v1 client, and v1 on bindings that have only the v1 tree.

A whole turn each (initialize, session/new, a prompt with its updates; v2 ends with an idle
``state_update``), or the error when the two share no version."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..conftest import generate, npm_install
from ..corpus import ACP, needs_corpus
from .harness import STYLES
from .peers import EXAMPLES, INTEROP, PEERS_DIR, SDK, env_with

VERSIONS_PEER = Path(__file__).parent / "peers" / "versions.py"
SPEAKS = {"v1": "1", "v2": "2", "both": "1,2"}
TEXT = "hello across versions"


@pytest.fixture(scope="module")
def bindings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three styles built from the SDK's schema directory (trees v1 and v2)."""
    npm_install(INTEROP, "@agentclientprotocol/sdk", "the version negotiation interop test")
    return generate(SDK / "schema", tmp_path_factory.mktemp("versions-sdk"), STYLES, formatted=False)


@pytest.fixture(scope="module")
def v1_bindings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm_install(INTEROP, "@agentclientprotocol/sdk", "the version negotiation interop test")
    return generate(SDK / "schema" / "v1" / "schema.json", tmp_path_factory.mktemp("versions-sdk-v1"), ("pydantic",), formatted=False)


def _python(bindings: Path, *args: str) -> list[str]:
    return ["env", f"PYTHONPATH={bindings}", sys.executable, str(VERSIONS_PEER), *args]


def _run(args: list[str], bindings: Path) -> dict[str, Any]:
    done = subprocess.run(args, cwd=INTEROP, capture_output=True, text=True, timeout=60, env=env_with(bindings))
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, f"{shlex.join(args)}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def _check(record: dict[str, Any], version: int, words: list[str]) -> None:
    assert "error" not in record, record
    assert record["initialize"]["protocolVersion"] == version
    assert ("info" in record["initialize"]) == (version == 2)
    if version == 1:
        assert record["prompt"] == {"stopReason": "end_turn"}
        chunks = [u for u in record["updates"] if u["sessionUpdate"] == "agent_message_chunk"]
        assert [c["content"]["text"].strip() for c in chunks] == words
        return
    assert isinstance(record["prompt"]["messageId"], str)
    chunks = [u for u in record["updates"] if u["sessionUpdate"] == "agent_message_chunk"]
    assert [c["content"]["text"].strip() for c in chunks] == words
    assert len({c["messageId"] for c in chunks}) == 1
    assert record["updates"][-1] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


def _router_choice(agent: str, offered: int) -> int | None:
    """The SDK router's choice: a v1-only router answers v1 to anything (its legacy
    fallback); otherwise the highest configured version at or below the request."""
    if agent == "v1":
        return 1
    if offered >= 2:
        return 2
    return 1 if agent == "both" else None


@pytest.mark.parametrize("agent", SPEAKS)
@pytest.mark.parametrize("client", ("v1", "v2"))
@pytest.mark.parametrize("style", STYLES)
def test_ts_client_drives_an_acpgen_agent(style: str, client: str, agent: str, bindings: Path) -> None:
    python = _python(bindings, "agent", str(bindings), style, SPEAKS[agent])
    record = _run(["node", "versions.mjs", "client", client, TEXT, *python], bindings)
    offered = int(client[1])
    spoken = [int(v) for v in SPEAKS[agent].split(",")]
    below = [v for v in spoken if v <= offered]
    if not below:  # a v1 client, a v2-only agent: the protocol's error
        assert record["error"]["code"] == -32022, record
        assert record["error"]["data"] == {"requested": 1, "supported": [2]}
    elif max(below) != offered:  # a v2 client, a v1-only agent: v1's answer, which the v2 SDK refuses
        assert "error" in record and "initialize" not in record, record
    else:
        _check(record, offered, TEXT.split())


@pytest.mark.parametrize("agent", SPEAKS)
@pytest.mark.parametrize("client", SPEAKS)
@pytest.mark.parametrize("style", STYLES)
def test_acpgen_client_drives_a_ts_agent(style: str, client: str, agent: str, bindings: Path) -> None:
    args = _python(bindings, "client", str(bindings), style, SPEAKS[client], TEXT, "node", "versions.mjs", "agent", agent)
    record = _run(args, bindings)
    offered = max(int(v) for v in SPEAKS[client].split(","))
    chosen = _router_choice(agent, offered)
    if chosen is None:  # the router's -32022, raised by initialize
        assert record["error"]["code"] == -32022 and record["version"] is None, record
        assert record["error"]["data"] == {"requested": 1, "supported": [2]}
    elif str(chosen) not in SPEAKS[client]:  # the agent answered a version the client does not speak
        assert record["error"]["code"] == -32022 and record["version"] is None, record
        assert f"answered protocol version {chosen}" in record["error"]["str"]
    else:
        assert record["version"] == chosen and record["typed"], record
        _check(record, chosen, TEXT.split())


# -- the echo agent ----------------------------------------------------------------------


def _echo(bindings: Path) -> list[str]:
    return ["env", f"PYTHONPATH={bindings}", sys.executable, str(EXAMPLES / "echo_agent.py")]


@pytest.mark.parametrize("client", ("v1", "v2"))
def test_the_echo_agent_answers_ts_clients_of_each_version(client: str, bindings: Path) -> None:
    record = _run(["node", "versions.mjs", "client", client, TEXT, *_echo(bindings)], bindings)
    _check(record, int(client[1]), TEXT.split())
    if client == "v2":  # the user message echoed, then running, the chunks, idle
        kinds = [u["sessionUpdate"] + ("/" + u["state"] if "state" in u else "") for u in record["updates"]]
        assert kinds[:2] == ["user_message", "state_update/running"] and kinds[-1] == "state_update/idle"
        assert record["updates"][0]["messageId"] == record["prompt"]["messageId"]


@pytest.mark.parametrize("client", SPEAKS)
def test_the_echo_agent_answers_acpgen_clients_of_each_version(client: str, bindings: Path) -> None:
    record = _run(_python(bindings, "client", str(bindings), "pydantic", SPEAKS[client], TEXT, *_echo(bindings)), bindings)
    _check(record, 1 if client == "v1" else 2, TEXT.split())


def test_the_echo_agent_on_v1_only_bindings_answers_v1(v1_bindings: Path, bindings: Path) -> None:
    """Built from the v1 tree alone, it still serves: a client offering 2 gets 1."""
    record = _run(_python(bindings, "client", str(bindings), "pydantic", "1,2", TEXT, *_echo(v1_bindings)), bindings)
    assert record["version"] == 1, record
    _check(record, 1, TEXT.split())


@needs_corpus
def test_the_echo_agent_on_the_corpus_main(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Built from the corpus's ``main`` (v1 and v2 as upstream has them, a draft of v2 older
    than the SDK's), it answers a client offering 2 with a v2 turn, and one offering 1 with v1."""
    main = generate(ACP / "main", tmp_path_factory.mktemp("versions-main"), ("pydantic",), formatted=False)
    for speaks, version in (("1,2", 2), ("1", 1)):
        record = _run(_python(main, "client", str(main), "pydantic", speaks, TEXT, *_echo(main)), main)
        assert record["version"] == version, record
        _check(record, version, TEXT.split())


def test_acpx_drives_the_echo_agent_on_both_trees(bindings: Path, tmp_path: Path) -> None:
    """acpx (a v1 client) offers 1: the echo agent built on both trees answers 1."""
    npm_install(PEERS_DIR, "acpx", "the acpx negotiation test")
    cli = PEERS_DIR / "node_modules" / "acpx" / "dist" / "cli.js"
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = env_with(bindings, HOME=str(home), NO_COLOR="1")
    env.pop("XDG_CONFIG_HOME", None)
    agent = shlex.join([sys.executable, str(EXAMPLES / "echo_agent.py")])
    done = subprocess.run(
        ["node", str(cli), "--agent", agent, "--format", "json", "exec", TEXT],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    frames = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert frames[0]["method"] == "initialize" and frames[0]["params"]["protocolVersion"] == 1
    assert frames[1]["result"]["protocolVersion"] == 1
    echoed = "".join(
        f["params"]["update"]["content"]["text"]
        for f in frames
        if f.get("method") == "session/update" and f["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert echoed == TEXT + " "
    assert any(f.get("result", {}).get("stopReason") == "end_turn" for f in frames)
