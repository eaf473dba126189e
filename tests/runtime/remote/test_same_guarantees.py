"""Every guarantee of the connection, tested the same way over every transport (a socket
pair as stdio is, an in-process channel pair, WebSocket, Streamable HTTP over HTTP/1.1
and HTTP/2): the transport is a seam under one connection core, so each scenario here
must hold on each of them.

* order: the 1,000 updates of a turn are handled in order, all before the prompt returns;
* backpressure: a slow client never holds more than ``max_in_flight`` updates queued,
  and none is dropped;
* cancellation both ways (``$/cancel_request``): the handler is cancelled and answers
  -32800;
* every request answered exactly once: 200 requests at once, both ways;
* limits: a message over ``max_line`` is answered with an error carrying its id, and the
  connection goes on;
* lifecycle: the agent closing ends the client's pending request at once (-32800 from its
  cancelled handler, or ``ConnectionClosedError``), and the client's requests after
  that fail with ``ConnectionClosedError``; the client going
  away cancels the agent's running handler.
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

from ..harness import module, package, run
from ..test_connection import PROMPT, Agent, Client, load
from .pairs import TRANSPORTS, pair_over


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module("pydantic", tmp_path_factory.mktemp("rpc-remote"))


def prompt(m: ModuleType) -> Any:
    return load(m, "PromptRequest", PROMPT)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_updates_of_a_turn_arrive_in_order_before_its_answer(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        client = Client(m, delay=0.0005)
        async with pair_over(m, transport, lambda conn: Agent(m, m.RemoteClient(conn), chunks=1000), client) as (_, conn):
            result = await m.RemoteAgent(conn).session_prompt(prompt(m))
            assert result.stop_reason == "end_turn"
            assert client.handled == [str(i) for i in range(1000)]

    run(scenario(), 60)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_slow_client_holds_at_most_its_bound_and_drops_nothing(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        client = Client(m, delay=0.002)
        most = 0
        async with pair_over(m, transport, lambda conn: Agent(m, m.RemoteClient(conn), chunks=300), client, max_in_flight=4) as (_, conn):
            task = asyncio.ensure_future(m.RemoteAgent(conn).session_prompt(prompt(m)))
            while not task.done():
                most = max(most, conn._queued_notes + conn._notes_running)
                await asyncio.sleep(0.001)
            await task
        assert client.handled == [str(i) for i in range(300)]
        assert 0 < most <= 4

    run(scenario(), 60)


class SlowAgent(Agent):
    """A prompt that waits until cancelled, then says so."""

    def __init__(self, m: ModuleType, client: Any) -> None:
        super().__init__(m, client)
        self.cancelled = asyncio.Event()
        self.started = asyncio.Event()

    async def session_prompt(self, params: Any) -> Any:
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return load(self.m, "PromptResponse", {"stopReason": "end_turn"})


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cancelling_a_request_cancels_the_peers_handler(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        agents: list[SlowAgent] = []

        def make(conn: Any) -> SlowAgent:
            agents.append(SlowAgent(m, m.RemoteClient(conn)))
            return agents[-1]

        async with pair_over(m, transport, make, Client(m)) as (_, conn):
            task = asyncio.ensure_future(m.RemoteAgent(conn).session_prompt(prompt(m)))
            await asyncio.wait_for(agents[0].started.wait(), 10)
            task.cancel()
            await asyncio.wait_for(agents[0].cancelled.wait(), 10)
            with pytest.raises(asyncio.CancelledError):
                await task

    run(scenario(), 30)


class SlowClient(Client):
    def __init__(self, m: ModuleType) -> None:
        super().__init__(m)
        self.cancelled = asyncio.Event()
        self.started = asyncio.Event()

    async def fs_read_text_file(self, params: Any) -> Any:
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return await super().fs_read_text_file(params)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_agent_cancelling_its_request_cancels_the_clients_handler(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        client = SlowClient(m)
        async with pair_over(m, transport, lambda conn: Agent(m, m.RemoteClient(conn)), client) as (agent_conn, conn):
            await m.RemoteAgent(conn).session_prompt(prompt(m))  # the client is in session s
            read = load(m, "ReadTextFileRequest", {"sessionId": "s", "path": "/p"})
            task = asyncio.ensure_future(m.RemoteClient(agent_conn).fs_read_text_file(read))
            await asyncio.wait_for(client.started.wait(), 10)
            task.cancel()
            await asyncio.wait_for(client.cancelled.wait(), 10)

    run(scenario(), 30)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_two_hundred_requests_at_once_each_way_are_each_answered_once(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        client = Client(m, content="c")
        async with pair_over(m, transport, lambda conn: Agent(m, m.RemoteClient(conn)), client) as (agent_conn, conn):
            read = load(m, "ReadTextFileRequest", {"sessionId": "s", "path": "/p"})
            ours = [m.RemoteAgent(conn).session_prompt(prompt(m)) for _ in range(200)]
            theirs = [m.RemoteClient(agent_conn).fs_read_text_file(read) for _ in range(200)]
            results = await asyncio.gather(*ours, *theirs)
            assert [r.stop_reason for r in results[:200]] == ["end_turn"] * 200
            assert [r.content for r in results[200:]] == ["c"] * 200
            assert not conn._pending and not agent_conn._pending

    run(scenario(), 60)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_message_over_the_limit_is_answered_with_its_id_and_the_connection_goes_on(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        pkg = package(m)
        async with pair_over(m, transport, lambda conn: Agent(m, m.RemoteClient(conn)), Client(m), max_line=100_000) as (_, conn):
            big = load(m, "PromptRequest", {"sessionId": "s", "prompt": [{"type": "text", "text": "x" * 200_000}]})
            with pytest.raises(pkg.RemoteError) as caught:
                await asyncio.wait_for(m.RemoteAgent(conn).session_prompt(big), 10)
            assert "limit" in str(caught.value) or "too" in str(caught.value).lower()
            result = await asyncio.wait_for(m.RemoteAgent(conn).session_prompt(prompt(m)), 10)
            assert result.stop_reason == "end_turn"

    run(scenario(), 30)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_agent_going_away_fails_the_pending_request_at_once(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        pkg = package(m)
        agents: list[SlowAgent] = []

        def make(conn: Any) -> SlowAgent:
            agents.append(SlowAgent(m, m.RemoteClient(conn)))
            return agents[-1]

        async with pair_over(m, transport, make, Client(m)) as (agent_conn, conn):
            task = asyncio.ensure_future(m.RemoteAgent(conn).session_prompt(prompt(m)))
            await asyncio.wait_for(agents[0].started.wait(), 10)
            await agent_conn.close("the agent stops")
            # the handler cancelled by the close answers -32800 while it can; else the
            # request fails as the connection closes
            with pytest.raises((pkg.ConnectionClosedError, pkg.RemoteError)) as caught:
                await asyncio.wait_for(task, 5)
            if isinstance(caught.value, pkg.RemoteError):
                assert caught.value.code == -32800
            await asyncio.wait_for(conn.closed, 5)
            with pytest.raises(pkg.ConnectionClosedError):
                await asyncio.wait_for(m.RemoteAgent(conn).session_prompt(prompt(m)), 1)

    run(scenario(), 30)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_client_going_away_cancels_the_agents_handler(m: ModuleType, transport: str) -> None:
    async def scenario() -> None:
        agents: list[SlowAgent] = []

        def make(conn: Any) -> SlowAgent:
            agents.append(SlowAgent(m, m.RemoteClient(conn)))
            return agents[-1]

        async with pair_over(m, transport, make, Client(m)) as (agent_conn, conn):
            asyncio.ensure_future(m.RemoteAgent(conn).session_prompt(prompt(m)))
            await asyncio.wait_for(agents[0].started.wait(), 10)
            await conn.close("the client leaves")
            await asyncio.wait_for(agents[0].cancelled.wait(), 10)
            await asyncio.wait_for(agent_conn.closed, 10)
            assert agent_conn.close_reason

    run(scenario(), 30)
