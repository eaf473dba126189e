"""What the Streamable HTTP tests share: bindings generated from the schema directory of
the TypeScript SDK (pinned in tests/interop; skipped with a reason without node or the
registry), an agent whose prompt text says what it does, and a client that records
what it receives."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ...conftest import generate, import_file, npm_install

ROOT = Path(__file__).resolve().parents[3]
INTEROP = ROOT / "tests" / "interop"
SDK_SCHEMA = INTEROP / "node_modules" / "@agentclientprotocol" / "sdk" / "schema"

_BINDINGS: dict[str, ModuleType] = {}


def bindings(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The v1 module of pydantic bindings of the SDK's schema (generated once)."""
    if "v1" not in _BINDINGS:
        npm_install(INTEROP, "@agentclientprotocol/sdk", "the Streamable HTTP tests")
        out = generate(SDK_SCHEMA, tmp_path_factory.mktemp("http_bindings"), ("pydantic",))
        _BINDINGS["v1"] = import_file(out / "acp_pydantic" / "v1.py")
    return _BINDINGS["v1"]


class Record:
    """What the agents of one test saw (shared by every connection it serves)."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()
        self.turn_started = asyncio.Event()
        self.received_sizes: list[int] = []
        self.agents: list[Any] = []
        self.said = 0


def agent_class(v1: ModuleType, record: Record) -> Any:
    """An agent whose prompt's first word says what the turn does:

    ``count N``: N agent message chunks "0 ", "1 "... then end_turn; ``ask``: a
    permission request, then a chunk naming the option chosen; ``big N``: one chunk of N
    bytes (and the size of the prompt received is recorded); ``bulk N S``: N chunks of S
    bytes (``record.said`` counts those sent); ``tell S``: a chunk about
    session S; ``wait``: sleeps until
    cancelled (stop reason "cancelled"); ``hang`` in initialize's client name: never
    answers initialize."""

    class TestAgent(v1.Agent):  # type: ignore[name-defined,misc]
        def __init__(self, client: Any) -> None:
            self.client = client
            self.sessions = 0
            self.turns: dict[str, asyncio.Task[Any]] = {}
            record.agents.append(self)

        async def initialize(self, params: Any) -> Any:
            info = params.client_info
            if info is not None and info.name == "hang":
                try:
                    await asyncio.sleep(3600)
                except asyncio.CancelledError:
                    record.cancelled.set()
                    raise
            caps = v1.AgentCapabilities(load_session=True)
            return v1.InitializeResponse(protocol_version=params.protocol_version, agent_capabilities=caps)

        async def session_new(self, params: Any) -> Any:
            self.sessions += 1
            sid = f"s-{self.sessions}-{id(self)}"
            if params.cwd == "/greet":  # says hello once the answer is out

                async def greet() -> None:
                    await asyncio.sleep(0.05)
                    await self.say(sid, "hello")

                self.greeting = asyncio.ensure_future(greet())
            return v1.NewSessionResponse(session_id=sid)

        async def session_load(self, params: Any) -> Any:
            return v1.LoadSessionResponse()

        async def session_prompt(self, params: Any) -> Any:
            sid = params.session_id
            self.turns[sid] = asyncio.current_task()  # type: ignore[assignment]
            text = params.prompt[0].text
            command, _, arg = text.partition(" ")
            record.received_sizes.append(len(text))
            record.turn_started.set()
            try:
                if command == "count":
                    for i in range(int(arg.split(" ")[0])):
                        await self.say(sid, f"{i} ")
                elif command == "ask":
                    option = v1.PermissionOption(option_id="yes", name="Yes", kind="allow_once")
                    no = v1.PermissionOption(option_id="no", name="No", kind="reject_once")
                    asked = v1.RequestPermissionRequest(
                        session_id=sid,
                        tool_call=v1.ToolCallUpdate(tool_call_id="t1"),
                        options=[option, no],
                    )
                    answer = await self.client.session_request_permission(asked)
                    await self.say(sid, f"chose {answer.outcome.option_id}")
                elif command == "big":
                    await self.say(sid, "x" * int(arg.split(" ")[0]))
                elif command == "bulk":
                    count, size = map(int, arg.split(" ")[:2])
                    for _ in range(count):
                        await self.say(sid, "x" * size)
                        record.said += 1
                elif command == "tell":  # about a session the client never named
                    await self.say(arg, "psst")
                elif command == "wait":
                    await asyncio.sleep(3600)
                return v1.PromptResponse(stop_reason="end_turn")
            except asyncio.CancelledError:
                record.cancelled.set()
                return v1.PromptResponse(stop_reason="cancelled")

        async def session_cancel(self, params: Any) -> None:
            turn = self.turns.get(params.session_id)
            if turn is not None:
                turn.cancel()

        async def say(self, sid: str, text: str) -> None:
            chunk = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text=text))
            await self.client.session_update(v1.SessionNotification(session_id=sid, update=chunk))

    return TestAgent


def client_class(v1: ModuleType) -> Any:
    class RecordingClient(v1.Client):  # type: ignore[name-defined,misc]
        """Keeps each session's chunks in order; grants permission with "yes"; sleeps
        ``delay`` s per update (a slow consumer)."""

        def __init__(self, delay: float = 0.0) -> None:
            self.delay = delay
            self.chunks: dict[str, list[str]] = {}
            self.asked: list[str] = []

        async def session_update(self, params: Any) -> None:
            if self.delay:
                await asyncio.sleep(self.delay)
            text = getattr(getattr(params.update, "content", None), "text", None)
            if text is not None:
                self.chunks.setdefault(params.session_id, []).append(text)

        async def session_request_permission(self, params: Any) -> Any:
            self.asked.append(params.session_id)
            choice = v1.SelectedRequestPermissionOutcome(option_id=params.options[0].option_id)
            return v1.RequestPermissionResponse(outcome=choice)

    return RecordingClient


def app_for(v1: ModuleType, record: Record, **options: Any) -> Any:
    agent = agent_class(v1, record)
    return v1.RPC.asgi_app(lambda conn: agent(v1.RemoteClient(conn)), **options)


async def start(v1: ModuleType, url: str, client: Any, **options: Any) -> tuple[Any, Any]:
    """A connection to ``url`` serving ``client``, initialized: (conn, RemoteAgent)."""
    conn = await v1.RPC.connect_url(url, **options)
    conn.start(client)
    agent = v1.RemoteAgent(conn)
    await agent.initialize(v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION))
    return conn, agent


def prompt(v1: ModuleType, sid: str, text: str) -> Any:
    return v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text=text)])


def new_session(v1: ModuleType) -> Any:
    return v1.NewSessionRequest(cwd="/", mcp_servers=[])


class Seen:
    """An ASGI app in front of ``app`` that notes each HTTP request as the server sees
    it: ``(method, headers with lower-case names, body)`` in ``requests``, in the order
    they arrive (the client's HTTP libraries are not asked)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, dict[str, str], str]] = []
        #: the HTTP versions the requests came in ("1.1", "2")
        self.versions: set[str] = set()

    @property
    def state(self) -> Any:
        return self.app.state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.versions.add(scope["http_version"])
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        noted: tuple[str, dict[str, str], str] = (scope["method"], headers, "")
        index = len(self.requests)
        self.requests.append(noted)
        body: list[bytes] = []

        async def reading() -> Any:
            event = await receive()
            if event["type"] == "http.request":
                body.append(event.get("body", b""))
                self.requests[index] = (noted[0], headers, b"".join(body).decode("utf-8", "replace"))
            return event

        await self.app(scope, reading, send)


def package(v1: ModuleType) -> ModuleType:
    """The generated package ``v1`` belongs to (its errors, its runtime)."""
    return sys.modules[str(v1.__package__)]


def run(coro: Any, timeout: float = 60) -> Any:
    """``coro`` to its end, within ``timeout`` s."""
    return asyncio.run(asyncio.wait_for(coro, timeout))
