"""A real peer nobody here wrote, both ways: the Python SDK ``agent-client-protocol`` 0.12.1
(``import acp``, a pinned dev dependency; skipped when it is not installed).

* As **client** of the docs' echo agent (``examples/echo_agent.py``, a subprocess on
  bindings generated from the TypeScript SDK 2.4.0's schema): a whole prompt turn (modes,
  config option, session load), a turn cancelled by ``session/cancel``, and lines over 64
  KiB the agent writes: a 100 KB ``agent_message_chunk`` and a ~100 KB ``session/new``
  result (its ``_meta``, which the echo agent passes back), each received intact.
* As **agent** (``peers/sdk_agent.py``) for acpgen clients: the docs' client
  (``examples/client.py``, spawning the agent with ``v1.RPC.spawn``) for a whole turn and
  for a turn it cancels on its timeout; and a client written here on the same API whose
  ``session_update`` handler awaits: every chunk handled, in order, before
  ``session_prompt`` returns, a 100 KB chunk intact, and a turn cancelled mid-stream.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import import_file
from .peers import CLIENT, ECHO_AGENT, ROOT, env_with, sdk_bindings

acp = pytest.importorskip("acp", reason="the Python SDK agent-client-protocol is not installed")

SDK_AGENT = Path(__file__).parent / "peers" / "sdk_agent.py"
SLOW = "slow " + " ".join(str(i) for i in range(50))  # 5 s of echo, one word per 0.1 s
BIG = "x" * 100_000  # one word: one chunk of 100,001 characters, a line over 64 KiB


@pytest.fixture(scope="module")
def bindings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sdk_bindings(tmp_path_factory)


@pytest.fixture(scope="module")
def v1(bindings: Path) -> ModuleType:
    return import_file(bindings / "acp_pydantic" / "v1.py")


def run(coro: Any, timeout: float = 30.0) -> Any:
    """Run a test's coroutine, bounded."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


# -- the SDK as client of the acpgen echo agent ----------------------------------------------


class SdkClient:
    """What the echo agent may call on an SDK client: updates are recorded."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.streaming = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.chunks.append(update.content.text)
        self.streaming.set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def _with_echo_agent(bindings: Path, body: Any) -> Any:
    client = SdkClient()
    env = env_with(bindings)
    async with acp.spawn_agent_process(client, sys.executable, str(ECHO_AGENT), env=env) as (conn, process):
        init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert init.protocol_version == 1 and init.agent_capabilities.load_session is True
        result = await body(conn, client)
    assert process.returncode == 0  # the SDK closed its stdin: the agent exited by itself
    return result


def test_sdk_client_whole_turn(bindings: Path) -> None:
    async def body(conn: Any, client: SdkClient) -> None:
        session = await conn.new_session(cwd=str(ROOT), mcp_servers=[])
        assert session.session_id == "s-1" and session.modes.current_mode_id == "ask"
        assert [o.id for o in session.config_options] == ["voice"]
        done = await conn.prompt(session_id="s-1", prompt=[acp.text_block("hello from the python sdk")])
        assert done.stop_reason == "end_turn"
        assert client.chunks == ["hello ", "from ", "the ", "python ", "sdk "]  # all, in order, before the answer
        await conn.set_session_mode(session_id="s-1", mode_id="code")
        options = await conn.set_config_option(config_id="voice", session_id="s-1", value="loud")
        assert options.config_options[0].current_value == "loud"
        with pytest.raises(acp.RequestError) as refused:
            await conn.set_session_mode(session_id="s-1", mode_id="bogus")
        assert refused.value.code == -32602
        loaded = await conn.load_session(cwd=str(ROOT), session_id="s-1", mcp_servers=[])
        assert loaded.modes.current_mode_id == "code"
        client.chunks.clear()
        done = await conn.prompt(session_id="s-1", prompt=[acp.text_block("now loud")])
        assert (done.stop_reason, client.chunks) == ("end_turn", ["NOW ", "LOUD "])

    run(_with_echo_agent(bindings, body))


def test_sdk_client_cancels_a_turn(bindings: Path) -> None:
    async def body(conn: Any, client: SdkClient) -> None:
        session = await conn.new_session(cwd=str(ROOT), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[acp.text_block(SLOW)]))
        await asyncio.wait_for(client.streaming.wait(), 10)
        started = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        done = await asyncio.wait_for(turn, 5)
        assert done.stop_reason == "cancelled" and time.monotonic() - started < 1.5
        assert 1 <= len(client.chunks) < 10
        client.chunks.clear()  # the session goes on
        again = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("again")])
        assert (again.stop_reason, client.chunks) == ("end_turn", ["again "])

    run(_with_echo_agent(bindings, body))


def test_sdk_client_receives_lines_over_64_kib_intact(bindings: Path) -> None:
    async def body(conn: Any, client: SdkClient) -> None:
        blob = {"blob": BIG, "n": 1}
        session = await conn.new_session(cwd=str(ROOT), mcp_servers=[], **blob)  # the SDK sends kwargs as _meta
        assert session.field_meta == blob and session.session_id == "s-1"  # a ~100 KB result
        done = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block(BIG)])
        assert done.stop_reason == "end_turn"
        assert client.chunks == [BIG + " "]  # a ~100 KB notification

    run(_with_echo_agent(bindings, body))


# -- the SDK as agent for acpgen clients -----------------------------------------------------


def _example_client(bindings: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(CLIENT), *args, "--", sys.executable, str(SDK_AGENT)]
    return subprocess.run(command, env=env_with(bindings), capture_output=True, text=True, timeout=60)


def test_example_client_drives_the_sdk_agent(bindings: Path) -> None:
    done = _example_client(bindings, "hello from acpgen")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "hello from acpgen \n"
    assert done.stderr.strip().splitlines()[-1] == "stop reason: end_turn"


def test_example_client_grants_the_sdk_agent_permission(bindings: Path) -> None:
    """The SDK agent asks ``session/request_permission`` mid-turn: the example client grants
    the first option."""
    done = _example_client(bindings, "permission to echo")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "granted allow permission to echo \n"
    assert done.stderr.strip().splitlines()[-1] == "stop reason: end_turn"


def test_example_client_cancels_a_slow_turn_of_the_sdk_agent(bindings: Path) -> None:
    started = time.monotonic()
    done = _example_client(bindings, "--timeout", "0.5", SLOW)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == "stop reason: cancelled"
    assert done.stdout.startswith("slow ") and len(done.stdout.split()) < 40
    assert time.monotonic() - started < 20


def test_acpgen_client_with_an_awaiting_handler_drives_the_sdk_agent(v1: ModuleType) -> None:
    class SlowClient(v1.Client):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.chunks: list[str] = []
            self.streaming = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            await asyncio.sleep(0.001 * (len(self.chunks) % 3))  # an awaiting handler
            self.chunks.append(params.update.content.text)
            self.streaming.set()

    async def main() -> None:
        client = SlowClient()
        async with await v1.RPC.spawn(sys.executable, str(SDK_AGENT)) as conn:
            conn.start(client)
            agent = v1.RemoteAgent(conn)
            init = await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
            assert init.protocol_version == 1
            session = await agent.session_new(v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))

            def prompt(text: str) -> Any:
                return v1.PromptRequest(session_id=session.session_id, prompt=[v1.TextContentBlock(text=text)])

            words = [f"w{i}" for i in range(300)]
            done = await agent.session_prompt(prompt(" ".join(words)))
            assert done.stop_reason == "end_turn"
            assert client.chunks == [w + " " for w in words]  # every chunk handled, in order, before the answer
            client.chunks.clear()
            done = await agent.session_prompt(prompt(BIG))
            assert (done.stop_reason, client.chunks) == ("end_turn", [BIG + " "])
            client.chunks.clear()
            client.streaming.clear()
            turn = asyncio.ensure_future(agent.session_prompt(prompt(SLOW)))
            await asyncio.wait_for(client.streaming.wait(), 10)
            await agent.session_cancel(v1.CancelNotification(session_id=session.session_id))
            done = await asyncio.wait_for(turn, 5)
            assert done.stop_reason == "cancelled" and 1 <= len(client.chunks) < 10
        assert conn.process.returncode == 0  # closing ended the agent: it saw its stdin close

    run(main())


def test_acpgen_client_cancels_the_task_awaiting_a_prompt(v1: ModuleType) -> None:
    """Cancelling the task that awaits ``session_prompt`` sends ``$/cancel_request``, which
    this SDK version ignores; ``session/cancel`` (ACP's own way) then ends the turn, and its
    late answer is dropped quietly: no warning, the next turn is whole."""
    records: list[logging.LogRecord] = []
    logger = logging.getLogger("test_peer_python_sdk.cancel")
    logger.addHandler(_Collect(records))
    logger.setLevel(logging.DEBUG)

    class Client(v1.Client):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.chunks: list[str] = []
            self.streaming = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            self.chunks.append(params.update.content.text)
            self.streaming.set()

    async def main() -> None:
        client = Client()
        async with await v1.RPC.spawn(sys.executable, str(SDK_AGENT), logger=logger) as conn:
            conn.start(client)
            agent = v1.RemoteAgent(conn)
            await agent.initialize(v1.InitializeRequest(protocol_version=1))
            session = await agent.session_new(v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
            sid = session.session_id
            turn = asyncio.ensure_future(agent.session_prompt(v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text=SLOW)])))
            await asyncio.wait_for(client.streaming.wait(), 10)
            turn.cancel()
            with pytest.raises(asyncio.CancelledError):
                await turn
            await agent.session_cancel(v1.CancelNotification(session_id=sid))
            await asyncio.sleep(0.5)  # the SDK agent's answer to the cancelled request comes now
            client.chunks.clear()
            done = await agent.session_prompt(v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="after")]))
            assert (done.stop_reason, client.chunks) == ("end_turn", ["after "])

    run(main())
    assert [r.getMessage() for r in records if r.levelno >= logging.WARNING] == []
    assert any(r.getMessage().startswith("late answer to cancelled request") for r in records)


class _Collect(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__()
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
