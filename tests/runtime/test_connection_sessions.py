"""Order per session (acpgen/runtime/_connection.py), in the three styles: the updates of
a session are handled in arrival order within it, sessions independently; the answer to
our request about a session comes after that session's earlier updates; messages about no
session keep their order among themselves; backpressure counts every session."""

from __future__ import annotations

import asyncio
import random
import time
from types import ModuleType
from typing import Any

import pytest

from .harness import STYLES, get, line, module, pair, raw_peer, run


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


def load(m: ModuleType, name: str, wire: Any) -> Any:
    return m.RPC.codec.load(getattr(m, name), wire)


def update(session: str, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": {"type": "text", "text": text}}}


class Agent:
    """Streams ``chunks`` updates to the session each prompt names."""

    def __init__(self, m: ModuleType, chunks: int) -> None:
        self.m = m
        self.chunks = chunks
        self.client: Any = None

    async def session_prompt(self, params: Any) -> Any:
        session = get(params, "sessionId", "session_id")
        for i in range(self.chunks):
            await self.client.session_update(load(self.m, "SessionNotification", {"sessionId": session, "update": {"type": "text", "text": f"{session}{i}"}}))
        return load(self.m, "PromptResponse", {"stopReason": "end_turn"})


class Client:
    """Records the updates it handles, per session; slow for the sessions in ``slow``."""

    def __init__(self, slow: dict[str, float] | None = None, jitter: float = 0.0) -> None:
        self.slow = slow or {}
        self.jitter = jitter
        self.rng = random.Random(11)
        self.handled: dict[str, list[str]] = {}
        self.done_at: dict[str, float] = {}

    async def session_update(self, params: Any) -> None:
        session = get(params, "sessionId", "session_id")
        delay = self.slow.get(session, 0.0) + (self.rng.uniform(0, self.jitter) if self.jitter else 0.0)
        if delay:
            await asyncio.sleep(delay)
        text = get(get(params, "update", "update"), "text", "text")
        self.handled.setdefault(session, []).append(text)
        self.done_at[session] = time.monotonic()


def test_the_method_table_names_the_session_member(m: ModuleType) -> None:
    """Generated from the schema: the params member that names the session, per style."""
    by_key = isinstance(load(m, "InitializeRequest", {"protocolVersion": 1}), dict)
    expected = "sessionId" if by_key else "session_id"
    assert m.RPC.spec("session/update", "notification").session == expected
    assert m.RPC.spec("session/prompt", "request").session == expected
    assert m.RPC.spec("initialize", "request").session is None
    assert m.RPC.session_of("session/update", "notification", load(m, "SessionNotification", update("a", "x")["params"])) == "a"
    assert m.RPC.session_of("initialize", "request", load(m, "InitializeRequest", {"protocolVersion": 1})) is None



def test_params_in_wire_form_name_their_session(m: ModuleType) -> None:
    """Params given in wire form (a dict, as ``conn.request`` takes them in every style)
    are about the session their ``sessionId`` names: the answer waits for that session's
    updates, not for the notifications about no session."""
    assert m.RPC.session_of("session/prompt", "request", {"sessionId": "a", "prompt": []}) == "a"
    assert m.RPC.session_of("session/update", "notification", update("a", "x")["params"]) == "a"
    assert m.RPC.session_of("session/prompt", "request", {"sessionId": 5, "prompt": []}) is None
    assert m.RPC.session_of("initialize", "request", {"protocolVersion": 1}) is None

def test_a_slow_session_does_not_delay_another(m: ModuleType) -> None:
    """Session A's update handler takes 0.4 s an update; session B's turn, started after
    A's, returns with all its updates handled long before A's ends (it waited for A's
    whole turn when order was kept on the whole connection)."""

    async def scenario() -> None:
        client = Client(slow={"a": 0.4})
        agent = Agent(m, chunks=3)
        async with pair(m, agent, client) as (agent_conn, client_conn):
            agent.client = m.RemoteClient(agent_conn)
            remote = m.RemoteAgent(client_conn)
            started = time.monotonic()
            turn_a = asyncio.ensure_future(remote.session_prompt(load(m, "PromptRequest", {"sessionId": "a", "prompt": []})))
            await asyncio.sleep(0.05)
            await remote.session_prompt(load(m, "PromptRequest", {"sessionId": "b", "prompt": []}))
            b_took = time.monotonic() - started
            assert client.handled["b"] == ["b0", "b1", "b2"]
            assert not turn_a.done() and len(client.handled.get("a", [])) < 3
            await turn_a
            a_took = time.monotonic() - started
            assert client.handled["a"] == ["a0", "a1", "a2"]  # and A's answer after its updates
            assert b_took < 0.6 < 1.2 <= a_took, (b_took, a_took)

    run(scenario(), timeout=30)


def test_order_within_each_of_ten_interleaved_sessions(m: ModuleType) -> None:
    """1,000 updates over 10 interleaved sessions, handlers taking 0-2 ms at random: each
    session's updates handled in its arrival order, and each prompt's answer delivered
    after every update of its own session that came before it."""

    sessions = [f"s{k}" for k in range(10)]
    rng = random.Random(5)
    order = [s for s in sessions for _ in range(100)]
    rng.shuffle(order)

    async def scenario() -> None:
        client = Client(jitter=0.002)
        async with raw_peer(m, "client", client) as (conn, peer):
            remote = m.RemoteAgent(conn)
            turns = {s: asyncio.ensure_future(remote.session_prompt(load(m, "PromptRequest", {"sessionId": s, "prompt": []}))) for s in sessions}
            requests = [await peer.recv() for _ in sessions]
            ids = {r["params"]["sessionId"]: r["id"] for r in requests}
            counts = dict.fromkeys(sessions, 0)
            frames: list[Any] = []
            for s in order:
                frames.append(update(s, f"{s}-{counts[s]}"))
                counts[s] += 1
                if counts[s] == 100:  # the session's last update: its answer right behind
                    frames.append({"jsonrpc": "2.0", "id": ids[s], "result": {"stopReason": "end_turn"}})
            await peer.send(*frames)
            for s in sessions:
                await turns[s]
                assert client.handled[s] == [f"{s}-{i}" for i in range(100)], s
            assert not conn._lanes  # a lane lives while it has work, no longer

    run(scenario(), timeout=60)


def test_an_answer_waits_only_for_its_own_sessions_updates(m: ModuleType) -> None:
    """Session A's handler is stuck: the answer about session B, behind A's updates on
    the wire, is delivered at once; the answer about A waits until A's updates are
    handled."""

    class Stuck(Client):
        def __init__(self) -> None:
            super().__init__()
            self.release = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            if get(params, "sessionId", "session_id") == "a":
                await self.release.wait()
            await super().session_update(params)

    async def scenario() -> None:
        client = Stuck()
        async with raw_peer(m, "client", client) as (conn, peer):
            remote = m.RemoteAgent(conn)
            turn_a = asyncio.ensure_future(remote.session_prompt(load(m, "PromptRequest", {"sessionId": "a", "prompt": []})))
            turn_b = asyncio.ensure_future(remote.session_prompt(load(m, "PromptRequest", {"sessionId": "b", "prompt": []})))
            ids = {r["params"]["sessionId"]: r["id"] for r in [await peer.recv(), await peer.recv()]}
            done = {"stopReason": "end_turn"}
            await peer.send(update("a", "a0"), update("b", "b0"), {"jsonrpc": "2.0", "id": ids["a"], "result": done}, {"jsonrpc": "2.0", "id": ids["b"], "result": done})
            await asyncio.wait_for(turn_b, 5)
            assert client.handled == {"b": ["b0"]}
            await asyncio.sleep(0.1)
            assert not turn_a.done()  # A's update is not handled yet: its answer waits
            client.release.set()
            await asyncio.wait_for(turn_a, 5)
            assert client.handled["a"] == ["a0"]

    run(scenario(), timeout=30)


def test_messages_about_no_session_keep_their_order(m: ModuleType) -> None:
    """Extension notifications (no session) are handled one at a time, in arrival order,
    even while a session's handler is stuck; an answer about no session waits for them."""

    class Ext(Client):
        def __init__(self) -> None:
            super().__init__(slow={"a": 0.5})
            self.ext: list[Any] = []
            self.running = 0
            self.overlap = False

        async def extension_notification(self, method: str, params: Any) -> None:
            self.running += 1
            self.overlap |= self.running > 1
            await asyncio.sleep(0.001 * (len(self.ext) % 3))
            self.ext.append(params["n"])
            self.running -= 1

    async def scenario() -> None:
        client = Ext()
        async with raw_peer(m, "client", client) as (conn, peer):
            remote = m.RemoteAgent(conn)
            init = asyncio.ensure_future(remote.initialize(load(m, "InitializeRequest", {"protocolVersion": 1})))
            request = await peer.recv()
            notes = [{"jsonrpc": "2.0", "method": "_x/note", "params": {"n": i}} for i in range(50)]
            await peer.send(update("a", "stuck"), *notes, {"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 1}})
            await asyncio.wait_for(init, 5)
            assert client.ext == list(range(50)) and not client.overlap

    run(scenario(), timeout=30)


def test_backpressure_counts_every_session(m: ModuleType) -> None:
    """Every session's handler stuck, 4,000 updates over 20 sessions: reading stops at
    ``max_in_flight`` work in all (not per session), then every update is handled in its
    session's order."""

    class Stuck(Client):
        def __init__(self) -> None:
            super().__init__()
            self.release = asyncio.Event()

        async def session_update(self, params: Any) -> None:
            await self.release.wait()
            await super().session_update(params)

    async def scenario() -> None:
        client = Stuck()
        async with raw_peer(m, "client", client, max_in_flight=32) as (conn, peer):
            frames = [line(update(f"s{i % 20}", str(i))) for i in range(4000)]
            writing = asyncio.ensure_future(peer.send(*frames))
            await asyncio.sleep(0.3)
            assert conn._load() <= 32 + 1
            assert len(conn._lanes) <= 20
            client.release.set()
            await asyncio.wait_for(writing, 30)
            while sum(map(len, client.handled.values())) < 4000:
                await asyncio.sleep(0.01)
            for k in range(20):
                assert client.handled[f"s{k}"] == [str(i) for i in range(k, 4000, 20)]

    run(scenario(), timeout=60)


def test_closing_handles_every_sessions_queued_updates(m: ModuleType) -> None:
    """Updates of several sessions already received when the connection starts closing
    are all handled (each lane drained, together within ``drain_timeout``). Reading never
    pauses here (``max_in_flight`` over the count): every line read is a frame received."""

    async def scenario() -> None:
        client = Client(jitter=0.002)
        async with raw_peer(m, "client", client, max_in_flight=256) as (conn, peer):
            frames = [line(update(f"s{i % 5}", str(i))) for i in range(100)]
            await peer.send(*frames)
            while conn._received < sum(map(len, frames)):  # every line read, not all handled
                await asyncio.sleep(0.001)
            await conn.close()
        assert sorted(int(t) for h in client.handled.values() for t in h) == list(range(100))

    run(scenario(), timeout=30)
