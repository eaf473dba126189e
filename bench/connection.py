"""The connection benchmark (part of ``make bench``): acpgen's generated connection against
the Python SDK's (``agent-client-protocol``), each doing the same work in one process over a
local socket pair.

* **Prompt turn**: a client sends ``session/prompt``; the agent streams ``chunks``
  ``agent_message_chunk`` updates back, then answers; the time from the prompt sent to its
  result, every update handled by the client by then (both connections promise that).
* **Small requests**: ``count`` sequential ``initialize`` requests, each awaited before the
  next (the round trip of a small request through both connections).
* **Sessions**: ``sessions`` prompts at once on one connection, each streaming ``chunks``
  updates of its own session (acpgen orders them per session, the SDK per session too).
* **Observer cost**: the prompt turn again with an observer that sees every frame.
* **Flood**: the agent side sends ``count`` notifications to a client whose handler is
  stuck for one second, then released; the peak traced memory (tracemalloc) while stuck, for
  2,000, 20,000 and 100,000 notifications: a bounded connection's peak does not grow with
  the flood (acpgen's: ``max_in_flight`` frames, plus what its stream reader buffers, twice
  its 1 MiB limit, before the transport pauses).
"""

from __future__ import annotations

import asyncio
import socket
import time
import tracemalloc
from typing import Any, Awaitable, Callable


#: the reader limit each is used with: the SDK reads with ``readline``, so its own default
#: for stdio (50 MiB) bounds its lines; acpgen reads lines itself, whatever the limit
ACPGEN_LIMIT = 2**20  # what RPC.spawn and RPC.stdio give their readers
SDK_LIMIT = 50 * 2**20


async def _streams(limit: int) -> tuple[Any, Any, Any, Any]:
    a, b = socket.socketpair()
    r1, w1 = await asyncio.open_connection(sock=a, limit=limit)
    r2, w2 = await asyncio.open_connection(sock=b, limit=limit)
    return r1, w1, r2, w2


# ---------------------------------------------------------------- acpgen


async def acpgen_turn(v1: Any, chunks: int, observe: bool = False) -> float:
    a_r, a_w, c_r, c_w = await _streams(ACPGEN_LIMIT)
    seen_frames = [0]

    def count(traffic: Any) -> None:
        seen_frames[0] += 1

    observers = [count] if observe else []
    agent_conn = v1.RPC.connect("agent", a_r, a_w, observers=observers)
    client_conn = v1.RPC.connect("client", c_r, c_w, observers=observers)
    remote_client = v1.RemoteClient(agent_conn)
    update = v1.SessionNotification(
        session_id="s", update=v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text="chunk of text"))
    )
    seen = [0]

    class Agent(v1.Agent):  # type: ignore[misc, name-defined]
        async def session_prompt(self, params: Any) -> Any:
            for _ in range(chunks):
                await remote_client.session_update(update)
            return v1.PromptResponse(stop_reason="end_turn")

    class Client(v1.Client):  # type: ignore[misc, name-defined]
        async def session_update(self, params: Any) -> None:
            seen[0] += 1

    agent_conn.start(Agent())
    client_conn.start(Client())
    prompt = v1.PromptRequest(session_id="s", prompt=[v1.TextContentBlock(text="go")])
    start = time.perf_counter()
    await v1.RemoteAgent(client_conn).session_prompt(prompt)
    elapsed = time.perf_counter() - start
    assert seen[0] == chunks, seen
    assert not observe or seen_frames[0] == 2 * (chunks + 2), seen_frames
    await client_conn.close()
    await agent_conn.close()
    return elapsed


async def acpgen_requests(v1: Any, count: int) -> float:
    a_r, a_w, c_r, c_w = await _streams(ACPGEN_LIMIT)
    agent_conn = v1.RPC.connect("agent", a_r, a_w)
    client_conn = v1.RPC.connect("client", c_r, c_w)
    answer = v1.InitializeResponse(protocol_version=1)

    class Agent(v1.Agent):  # type: ignore[misc, name-defined]
        async def initialize(self, params: Any) -> Any:
            return answer

    agent_conn.start(Agent())
    client_conn.start(object())
    remote = v1.RemoteAgent(client_conn)
    request = v1.InitializeRequest(protocol_version=1)
    start = time.perf_counter()
    for _ in range(count):
        await remote.initialize(request)
    elapsed = time.perf_counter() - start
    await client_conn.close()
    await agent_conn.close()
    return elapsed


async def acpgen_sessions(v1: Any, sessions: int, chunks: int) -> float:
    a_r, a_w, c_r, c_w = await _streams(ACPGEN_LIMIT)
    agent_conn = v1.RPC.connect("agent", a_r, a_w)
    client_conn = v1.RPC.connect("client", c_r, c_w)
    remote_client = v1.RemoteClient(agent_conn)
    content = v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text="chunk of text"))
    seen: dict[str, int] = {}

    class Agent(v1.Agent):  # type: ignore[misc, name-defined]
        async def session_prompt(self, params: Any) -> Any:
            update = v1.SessionNotification(session_id=params.session_id, update=content)
            for _ in range(chunks):
                await remote_client.session_update(update)
            return v1.PromptResponse(stop_reason="end_turn")

    class Client(v1.Client):  # type: ignore[misc, name-defined]
        async def session_update(self, params: Any) -> None:
            seen[params.session_id] = seen.get(params.session_id, 0) + 1

    agent_conn.start(Agent())
    client_conn.start(Client())
    remote = v1.RemoteAgent(client_conn)
    prompts = [v1.PromptRequest(session_id=f"s{i}", prompt=[v1.TextContentBlock(text="go")]) for i in range(sessions)]
    start = time.perf_counter()
    await asyncio.gather(*(remote.session_prompt(p) for p in prompts))
    elapsed = time.perf_counter() - start
    assert seen == {f"s{i}": chunks for i in range(sessions)}, seen
    await client_conn.close()
    await agent_conn.close()
    return elapsed


async def acpgen_flood(v1: Any, count: int) -> int:
    a_r, a_w, c_r, c_w = await _streams(ACPGEN_LIMIT)
    agent_conn = v1.RPC.connect("agent", a_r, a_w)
    client_conn = v1.RPC.connect("client", c_r, c_w)
    release = asyncio.Event()
    seen = [0]

    class Client(v1.Client):  # type: ignore[misc, name-defined]
        async def session_update(self, params: Any) -> None:
            await release.wait()
            seen[0] += 1

    agent_conn.start(object())  # the agent side only sends
    client_conn.start(Client())
    update = v1.SessionNotification(
        session_id="s", update=v1.AgentMessageChunkSessionUpdate(content=v1.TextContentBlock(text="chunk of text"))
    )
    remote = v1.RemoteClient(agent_conn)

    async def send() -> None:
        for _ in range(count):
            await remote.session_update(update)

    return await _measure_flood(send, release, lambda: seen[0] == count, (client_conn.close, agent_conn.close))


# ---------------------------------------------------------------- the Python SDK


def _sdk() -> Any:
    import acp
    from acp import schema

    return acp, schema


async def sdk_turn(chunks: int) -> float:
    acp, schema = _sdk()
    a_r, a_w, c_r, c_w = await _streams(SDK_LIMIT)
    holder: dict[str, Any] = {}
    seen = [0]

    class Agent:
        async def prompt(self, session_id: str, prompt: Any, **kwargs: Any) -> Any:
            conn = holder["agent"]
            for _ in range(chunks):
                await conn.session_update(session_id, acp.update_agent_message_text("chunk of text"))
            return schema.PromptResponse(stop_reason="end_turn")

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            seen[0] += 1

    holder["agent"] = acp.AgentSideConnection(Agent(), a_w, a_r)
    client = acp.ClientSideConnection(Client(), c_w, c_r)
    start = time.perf_counter()
    await client.prompt(session_id="s", prompt=[acp.text_block("go")])
    elapsed = time.perf_counter() - start
    assert seen[0] == chunks, seen
    await _sdk_close(client, holder["agent"])
    return elapsed


async def sdk_requests(count: int) -> float:
    acp, schema = _sdk()
    a_r, a_w, c_r, c_w = await _streams(SDK_LIMIT)

    class Agent:
        async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
            return schema.InitializeResponse(protocol_version=protocol_version)

    agent = acp.AgentSideConnection(Agent(), a_w, a_r)
    client = acp.ClientSideConnection(object(), c_w, c_r)
    start = time.perf_counter()
    for _ in range(count):
        await client.initialize(protocol_version=1)
    elapsed = time.perf_counter() - start
    await _sdk_close(client, agent)
    return elapsed


async def sdk_sessions(sessions: int, chunks: int) -> float:
    acp, schema = _sdk()
    a_r, a_w, c_r, c_w = await _streams(SDK_LIMIT)
    holder: dict[str, Any] = {}
    seen: dict[str, int] = {}

    class Agent:
        async def prompt(self, session_id: str, prompt: Any, **kwargs: Any) -> Any:
            conn = holder["agent"]
            for _ in range(chunks):
                await conn.session_update(session_id, acp.update_agent_message_text("chunk of text"))
            return schema.PromptResponse(stop_reason="end_turn")

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            seen[session_id] = seen.get(session_id, 0) + 1

    holder["agent"] = acp.AgentSideConnection(Agent(), a_w, a_r)
    client = acp.ClientSideConnection(Client(), c_w, c_r)
    start = time.perf_counter()
    await asyncio.gather(*(client.prompt(session_id=f"s{i}", prompt=[acp.text_block("go")]) for i in range(sessions)))
    elapsed = time.perf_counter() - start
    assert seen == {f"s{i}": chunks for i in range(sessions)}, seen
    await _sdk_close(client, holder["agent"])
    return elapsed


async def sdk_flood(count: int) -> int:
    acp, _ = _sdk()
    a_r, a_w, c_r, c_w = await _streams(SDK_LIMIT)
    release = asyncio.Event()
    seen = [0]

    class Client:
        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            await release.wait()
            seen[0] += 1

    class Agent:
        pass

    agent = acp.AgentSideConnection(Agent(), a_w, a_r)
    client = acp.ClientSideConnection(Client(), c_w, c_r)

    async def send() -> None:
        for _ in range(count):
            await agent.session_update("s", acp.update_agent_message_text("chunk of text"))

    return await _measure_flood(send, release, lambda: seen[0] == count, (lambda: _sdk_close(client, agent),))


async def _sdk_close(*conns: Any) -> None:
    for conn in conns:
        close = getattr(conn, "close", None)
        if close is not None:
            await close()


# ---------------------------------------------------------------- shared


async def _measure_flood(
    send: Callable[[], Awaitable[None]],
    release: asyncio.Event,
    finished: Callable[[], bool],
    closers: tuple[Callable[[], Awaitable[None]], ...],
) -> int:
    tracemalloc.start()
    sending = asyncio.ensure_future(send())
    await asyncio.sleep(1.0)  # the handler is stuck: whatever is read piles up
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    release.set()
    await asyncio.wait_for(sending, 120)
    while not finished():
        await asyncio.sleep(0.01)
    for close in closers:
        await close()
    return peak


def figures(runs: int, v1: Any, figure: Callable[..., dict[str, Any]]) -> list[dict[str, Any]]:
    """The figures of this benchmark, medians over ``runs``."""
    chunks = 10_000
    ours = [asyncio.run(acpgen_turn(v1, chunks)) for _ in range(runs)]
    sdk = [asyncio.run(sdk_turn(chunks)) for _ in range(runs)]
    observed = [asyncio.run(acpgen_turn(v1, chunks, observe=True)) for _ in range(runs)]
    count = 5_000
    ours_requests = [asyncio.run(acpgen_requests(v1, count)) for _ in range(runs)]
    sdk_requests_ = [asyncio.run(sdk_requests(count)) for _ in range(runs)]
    sessions, per_session = 10, 1_000
    ours_sessions = [asyncio.run(acpgen_sessions(v1, sessions, per_session)) for _ in range(runs)]
    sdk_sessions_ = [asyncio.run(sdk_sessions(sessions, per_session)) for _ in range(runs)]
    total = sessions * per_session
    out = [
        figure(
            f"prompt turn, {chunks:,} chunks end to end through both connections (Pydantic)",
            [chunks / t for t in ours],
            [chunks / t for t in sdk],
            "msg/s",
            ">=1.5x",
            True,
        ),
        figure(
            f"{count:,} sequential small requests (initialize) through both connections",
            [count / t for t in ours_requests],
            [count / t for t in sdk_requests_],
            "req/s",
            ">=1.5x",
            True,
        ),
        figure(
            f"{sessions} sessions at once, {per_session:,} updates each, one connection",
            [total / t for t in ours_sessions],
            [total / t for t in sdk_sessions_],
            "msg/s",
            ">=1.5x",
            True,
        ),
        figure(
            f"prompt turn, {chunks:,} chunks, with an observer on both connections vs without",
            [chunks / t for t in observed],
            [chunks / t for t in ours],
            "msg/s",
            None,
            True,
        ),
    ]
    for count in (2_000, 20_000, 100_000):
        mine = [asyncio.run(acpgen_flood(v1, count)) / 2**20 for _ in range(max(1, runs // 2))]
        theirs = [asyncio.run(sdk_flood(count)) / 2**20 for _ in range(max(1, runs // 2))]
        out.append(
            figure(
                f"peak memory, {count:,}-notification flood, stuck handler (MiB)",
                mine,
                theirs,
                "MiB",
                None,
                False,
            )
        )
    return out
