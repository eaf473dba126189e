"""Sessions as objects, for clients (``acpgen/runtime/_sessions.py``), in the three styles:
the updates of a turn in order as an async iterator, ``prompt()`` returning when its turn
has ended with every update seen, and the snapshot merged from the updates, on turns
recorded from real peers (``tests/fixtures/turns``, written by ``peers/record_turns.py``
from agents on the TypeScript SDK 2.4.0 and the Python SDK 0.12.1) for v1 and v2, an
update variant the bindings do not know included, and on turns made here from the v2
schema; and the bound on an iterator's queue (backpressure, or the oldest dropped)."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, AsyncIterator

import pytest

from .. import corpus
from ..conftest import generate, import_file
from .harness import STYLES, Peer, raw_peer
from .sessions_harness import package, play, run, sdk_module, sdk_packages, turn, typed, update_tags


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sdk_packages(tmp_path_factory)


@asynccontextmanager
async def served(m: ModuleType, max_queued: int | None = None, **options: Any) -> AsyncIterator[tuple[Any, Any, Peer]]:
    """A client connection to a raw agent, served by its sessions' handler: the sessions,
    the connection and the agent's end."""
    async with raw_peer(m, "client", None, start=False, **options) as (conn, peer):
        pkg = package(m)
        sessions = pkg.ClientSessions(conn) if max_queued is None else pkg.ClientSessions(conn, max_queued=max_queued)
        conn.start(sessions.handler())
        yield sessions, conn, peer


class Granting:
    """A client that grants every permission with the first option offered."""

    def __init__(self, m: ModuleType) -> None:
        self.m = m
        self.seen: list[Any] = []

    async def session_request_permission(self, params: Any) -> Any:
        wire = self.m.RPC.codec.dump(params)
        option = wire["options"][0]["optionId"]
        result = {"outcome": {"outcome": "selected", "optionId": option}}
        return self.m.RPC.codec.load(self.m.RPC.spec("session/request_permission").result, result)

    async def session_update(self, params: Any) -> None:
        self.seen.append(params)


async def replay(m: ModuleType, frames: list[dict[str, Any]], **options: Any) -> tuple[Any, Any, list[str], Granting]:
    """The recorded turn between a client on ``m`` (its session object) and the recorded
    agent: (turn end, snapshot, the kinds the turn's iterator gave, the client)."""
    sent = [f["frame"] for f in frames if f["dir"] == "out" and "method" in f["frame"]]
    init, new, prompt = (f["params"] for f in sent[:3])
    client = Granting(m)
    async with raw_peer(m, "client", None, start=False) as (conn, peer):
        sessions = package(m).ClientSessions(conn, **options)
        conn.start(sessions.handler(client))
        agent = asyncio.create_task(play(peer, frames))
        await conn.request("initialize", typed(m, "initialize", init))
        session = await sessions.new(new)
        turn = session.turn(prompt["prompt"][0]["text"])
        kinds = [u.kind async for u in turn]
        end = await turn
        await agent
        return end, session.snapshot(), kinds, client


@pytest.mark.parametrize("style", STYLES)
def test_a_recorded_v1_turn_of_the_typescript_sdk(style: str, sdk: Path) -> None:
    frames = turn("ts-v1")
    m = sdk_module(sdk, style, "v1")
    end, snap, kinds, client = run(replay(m, frames))
    assert kinds == update_tags(frames)  # every update of the turn, in order, by the time it ended
    assert len(client.seen) == len(kinds)  # the client's own handler saw each too
    assert end.stop_reason == "end_turn" and end.state is None
    assert m.RPC.codec.dump(end.response) == {"stopReason": "end_turn"}
    assert [(x.role, x.message_id, x.text) for x in snap.messages] == [
        ("thought", None, "Reading the file first."),
        ("agent", None, "The file says hello."),
    ]
    call = snap.tool_calls["call-1"]
    assert call["status"] == "completed" and call["title"] == "Read a.txt" and call["kind"] == "read"
    assert call["rawInput"] == {"path": "/w/a.txt"} and call["rawOutput"] == {"bytes": 16}
    assert call["locations"] == [{"path": "/w/a.txt"}]
    assert call["content"][0]["content"]["text"] == "hello from a.txt"
    assert [e["status"] for e in snap.plan["entries"]] == ["completed", "completed"]
    assert snap.mode == "code"  # "ask" from session/new, then current_mode_update
    assert snap.commands[0]["name"] == "web" and snap.config_options[0]["currentValue"] == "fast"
    assert snap.info == {"title": "Reading a.txt"}
    assert snap.usage == {"used": 1200, "size": 200000, "cost": {"amount": 0.01, "currency": "USD"}}
    assert snap.others == [] and snap.updates == len(kinds)


@pytest.mark.parametrize("style", STYLES)
def test_an_unknown_variant_is_kept_not_dropped(style: str, sdk: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An agent on the SDK's unstable v1 sends a ``session_message_chunk`` and a
    ``plan_update``; a client built from the stable v1 schema knows neither: its bindings
    reject both frames, the session keeps the first as is and merges the plan."""
    frames = turn("ts-v1-unstable")
    m = sdk_module(sdk, style, "v1")
    with caplog.at_level(logging.WARNING):
        end, snap, kinds, client = run(replay(m, frames))
    unknown = {"sessionUpdate": "session_message_chunk", "messageId": "x1", "content": {"type": "text", "text": "from a subagent"}}
    assert kinds == update_tags(frames) and {"session_message_chunk", "plan_update"} <= set(kinds)
    assert snap.others == [unknown]
    assert snap.plans == {"p9": {"type": "items", "planId": "p9", "entries": []}}
    assert len(client.seen) == len(kinds) - 2  # the bindings' handler never got them
    assert snap.tool_calls["call-1"]["status"] == "completed" and end.stop_reason == "end_turn"
    assert any("Invalid params" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("style", STYLES)
def test_an_update_is_typed_on_demand(style: str, sdk: Path) -> None:
    frames = turn("ts-v1-unstable")

    async def body() -> None:
        m = sdk_module(sdk, style, "v1")
        async with served(m) as (sessions, conn, peer):
            updates = sessions.session("s-1").updates()
            for f in frames:
                if f["frame"].get("method") == "session/update":
                    await peer.send(f["frame"])
            first = await updates.__anext__()
            params = first.typed()
            assert m.RPC.codec.dump(params)["update"] == first.data
            async for u in updates:
                if u.kind == "session_message_chunk":
                    with pytest.raises(m.RPC.codec.errors):
                        u.typed()
                    break
            await updates.aclose()

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_a_recorded_turn_of_the_python_sdk(style: str, sdk: Path) -> None:
    frames = turn("py-sdk-v1")
    m = sdk_module(sdk, style, "v1")
    end, snap, kinds, _ = run(replay(m, frames))
    assert kinds == ["agent_message_chunk"] * 5 and end.stop_reason == "end_turn"
    assert [(x.role, x.text) for x in snap.messages] == [("agent", "granted allow permission to echo this ")]


@pytest.mark.parametrize("style", STYLES)
def test_a_recorded_v2_turn_of_the_typescript_sdk(style: str, sdk: Path) -> None:
    """v2: the prompt's answer only acknowledges it; the turn ends at the idle state."""
    frames = turn("ts-v2")
    m = sdk_module(sdk, style, "v2")
    end, snap, kinds, _ = run(replay(m, frames))
    assert kinds == update_tags(frames) and kinds[-1] == "state_update"
    assert end.stop_reason == "end_turn" and end.state == {"state": "idle", "stopReason": "end_turn"}
    assert m.RPC.codec.dump(end.response) == {"messageId": "u1"}
    assert [(x.role, x.message_id, x.text) for x in snap.messages] == [
        ("thought", "t1", "Reading the file first."),
        ("agent", "m1", "The file says hello."),  # the agent_message upsert replaced the chunks
    ]
    call = snap.tool_calls["call-1"]
    assert call["status"] == "completed" and call["title"] == "Read a.txt" and call["rawOutput"] == {"bytes": 16}
    assert [c["content"]["text"] for c in call["content"]] == ["hello ", "from a.txt"]
    assert snap.plans["p1"]["entries"][0]["status"] == "completed" and snap.plan is snap.plans["p1"] or snap.plan == snap.plans["p1"]
    assert snap.terminals["term-1"] == {"terminalId": "term-1", "command": "cat a.txt", "cwd": "/w", "exitStatus": {"exitCode": 0}}
    assert [base64.b64decode(c) for c in snap.output_chunks["term-1"]] == [b"hello\n"]
    assert snap.others == [{"sessionUpdate": "_acme_progress", "percent": 50}]  # custom: kept
    assert snap.state == {"state": "idle", "stopReason": "end_turn"} and snap.usage == {"used": 1200, "size": 200000}


# -- turns made here from the upstream v2 schema -------------------------------------------


@pytest.fixture(scope="module")
def v2_main(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ModuleType]:
    if not corpus.present():
        pytest.skip(corpus.ABSENT)
    out = generate(corpus.ACP / "main" / "v2" / "schema.json", tmp_path_factory.mktemp("v2-main"), STYLES, formatted=False)
    return {s: import_file(out / f"acp_{s}" / "v2.py") for s in STYLES}


def note(update: dict[str, Any], session: str = "s") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}


def state(value: str, **extra: Any) -> dict[str, Any]:
    return note({"sessionUpdate": "state_update", "state": value, **extra})


async def answer_prompt(peer: Peer, before: list[Any], after: list[Any]) -> None:
    request = await peer.recv()
    assert request["method"] == "session/prompt"
    await peer.send(*before, {"jsonrpc": "2.0", "id": request["id"], "result": {}}, *after)


@pytest.mark.parametrize("style", STYLES)
def test_v2_the_turn_ends_at_idle_even_before_the_answer(style: str, v2_main: dict[str, ModuleType]) -> None:
    m = v2_main[style]

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            session = sessions.session("s")
            # a stale idle (background work ended) before the prompt does not end its turn
            await peer.send(state("idle", stopReason="end_turn"))
            await asyncio.sleep(0.05)
            # the whole turn, idle included, written before the prompt's answer
            chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "hi"}}
            replay = asyncio.create_task(answer_prompt(peer, [state("running"), note(chunk), state("idle", stopReason="max_tokens")], []))
            end = await asyncio.wait_for(session.prompt("go"), 5)
            await replay
            assert end.stop_reason == "max_tokens" and session.snapshot().messages[0].text == "hi"
            # the next turn: its answer first, then the updates, then idle
            turn = session.turn([{"type": "text", "text": "again"}])
            replay = asyncio.create_task(answer_prompt(peer, [], [state("running"), note({**chunk, "messageId": "m2"}), note({"sessionUpdate": "future_kind", "x": 1}), state("idle")]))
            kinds = [u.kind async for u in turn]
            await replay
            assert kinds == ["state_update", "agent_message_chunk", "future_kind", "state_update"]
            assert (await turn).stop_reason is None
            snap = session.snapshot()
            assert [x.message_id for x in snap.messages] == ["m", "m2"]
            assert snap.others == [{"sessionUpdate": "future_kind", "x": 1}]

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_v2_a_prompt_whose_connection_closes_before_idle_raises(style: str, v2_main: dict[str, ModuleType]) -> None:
    m = v2_main[style]
    pkg = package(m)

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            prompt = asyncio.create_task(sessions.session("s").prompt("go"))
            await answer_prompt(peer, [], [state("running")])
            await asyncio.sleep(0.05)
            peer.close_output()
            with pytest.raises(pkg.ConnectionClosedError) as closed:
                await asyncio.wait_for(prompt, 5)
            assert closed.value.reason == "the peer closed the connection"

    run(body())


# -- what a session sends, and what session/new's answer seeds ---------------------------

MODES = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}
OPTIONS = [{"currentValue": "fast", "id": "model", "name": "Model", "options": [{"name": "Fast", "value": "fast"}, {"name": "Deep", "value": "deep"}], "type": "select"}]
NEW = {"cwd": "/w", "mcpServers": []}


async def answer_new(peer: Peer, result: dict[str, Any], before: list[Any] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    request = await peer.recv()
    await peer.send(*before, {"jsonrpc": "2.0", "id": request["id"], "result": result})
    return request  # type: ignore[no-any-return]


@pytest.mark.parametrize("typed_params", [False, True])
@pytest.mark.parametrize("style", STYLES)
def test_new_sends_its_params_and_seeds_the_snapshot_from_the_answer(style: str, typed_params: bool, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")
    answer = {"sessionId": "s-9", "modes": MODES, "configOptions": OPTIONS}

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            params = typed(m, "session/new", NEW) if typed_params else dict(NEW)
            new = asyncio.create_task(sessions.new(params))
            request = await answer_new(peer, answer)
            session = await asyncio.wait_for(new, 5)
            assert request["method"] == "session/new" and request["params"] == NEW
            assert session.id == "s-9" and sessions.session("s-9") is session
            assert m.RPC.codec.dump(session.response) == answer
            snap = session.snapshot()
            assert snap.mode == "ask" and snap.config_options == OPTIONS
            # the snapshot's options are its own: not the answer's (a dict in the TypedDict style)
            wire = m.RPC.codec.dump(session.response)
            wire["configOptions"][0]["currentValue"] = "changed"
            assert session.snapshot().config_options == OPTIONS

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_an_answer_without_modes_or_options_seeds_nothing(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            new = asyncio.create_task(sessions.new(NEW))
            await answer_new(peer, {"sessionId": "s-1"})
            snap = (await asyncio.wait_for(new, 5)).snapshot()
            assert snap.mode is None and snap.config_options is None

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_updates_read_before_the_answer_of_new_are_not_overwritten_by_it(style: str, sdk: Path) -> None:
    """The agent may report the new session's mode and options before it answers
    ``session/new``: what it reported then is newer than the answer and stays."""
    m = sdk_module(sdk, style, "v1")
    newer = [{**OPTIONS[0], "currentValue": "deep"}]
    before = [
        note({"sessionUpdate": "current_mode_update", "currentModeId": "code"}, "s-9"),
        note({"sessionUpdate": "config_option_update", "configOptions": newer}, "s-9"),
    ]

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            new = asyncio.create_task(sessions.new(NEW))
            await answer_new(peer, {"sessionId": "s-9", "modes": MODES, "configOptions": OPTIONS}, before)
            snap = (await asyncio.wait_for(new, 5)).snapshot()
            assert snap.mode == "code" and snap.config_options == newer

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_invalid_params_are_refused_before_anything_is_sent(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            with pytest.raises(m.RPC.codec.errors):
                await sessions.new({"cwd": 5, "mcpServers": []})
            session = sessions.session("s")
            with pytest.raises(m.RPC.codec.errors):
                await session.prompt([{"type": "text"}])  # a text block without its text
            new = asyncio.create_task(sessions.new(NEW))
            first = await answer_new(peer, {"sessionId": "s-2"})
            await asyncio.wait_for(new, 5)
            assert first["params"] == NEW  # the first frame sent

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_a_prompt_of_text_or_blocks_is_sent_as_the_prompts_params(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")
    block = {"type": "text", "text": "typed"}

    async def body() -> list[Any]:
        async with served(m) as (sessions, conn, peer):
            session = sessions.session("s-3")
            sent = []
            for prompt in ("hi", [m.RPC.codec.load(m.ContentBlock, block), {"type": "text", "text": "wire"}]):
                turn = session.turn(prompt)
                request = await peer.recv()
                await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}})
                end = await asyncio.wait_for(turn.end(), 5)
                assert end.stop_reason == "end_turn" and m.RPC.codec.dump(end.response) == {"stopReason": "end_turn"}
                sent.append((request["method"], request["params"]))
            return sent

    assert run(body()) == [
        ("session/prompt", {"sessionId": "s-3", "prompt": [{"type": "text", "text": "hi"}]}),
        ("session/prompt", {"sessionId": "s-3", "prompt": [block, {"type": "text", "text": "wire"}]}),
    ]


@pytest.mark.parametrize("style", STYLES)
def test_a_v2_prompt_closed_without_a_reason_says_closed(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v2")
    pkg = package(m)

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            prompt = asyncio.create_task(sessions.session("s").prompt("go"))
            request = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": request["id"], "result": {"messageId": "u1"}})
            await asyncio.sleep(0.05)
            assert not prompt.done()  # v2: the turn ends at idle, not at the answer
            await conn.close("")
            with pytest.raises(pkg.ConnectionClosedError) as closed:
                await asyncio.wait_for(prompt, 5)
            assert closed.value.reason == "closed"

    run(body())


def test_the_handler_passes_on_what_it_does_not_implement(sdk: Path) -> None:
    """Without an inner handler it implements only ``session/update``: anything else is
    an AttributeError naming what was asked (so the router answers -32601); a module with
    no ``session/update`` at all gets a handler that is the inner one's methods alone."""
    m = sdk_module(sdk, "typeddict", "v1")
    pkg = package(m)

    class Conn:
        def __init__(self, rpc: Any) -> None:
            self.rpc = rpc

        def add_observer(self, observer: Any) -> None:
            pass

    class Inner:
        async def session_request_permission(self, params: Any) -> Any:
            return "inner"

    bare = pkg.ClientSessions(Conn(m.RPC)).handler()
    with pytest.raises(AttributeError) as missing:
        bare.session_request_permission
    assert missing.value.args == ("session_request_permission",)

    class NoUpdate:
        codec = m.RPC.codec

        def spec(self, method: str, kind: str = "request") -> None:
            return None

    handler = pkg.ClientSessions(Conn(NoUpdate())).handler(Inner())
    assert run(handler.session_request_permission({})) == "inner"
    with pytest.raises(AttributeError):
        handler.session_update


@pytest.mark.parametrize("style", STYLES)
def test_the_handler_hands_each_update_on_to_the_inner_clients_own_handler(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")

    class Recording:
        def __init__(self) -> None:
            self.seen: list[Any] = []

        async def session_update(self, params: Any) -> None:
            self.seen.append(params)

    async def body() -> None:
        async with raw_peer(m, "client", None, start=False) as (conn, peer):
            client = Recording()
            conn.start(package(m).ClientSessions(conn).handler(client))
            await peer.send(chunk_note(7))
            for _ in range(500):
                if client.seen:
                    break
                await asyncio.sleep(0.01)
            [params] = client.seen
            wire = m.RPC.codec.dump(params)
            assert wire["sessionId"] == "s" and wire["update"]["content"]["text"] == "7"

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_the_handler_of_a_client_without_an_update_handler_takes_updates_quietly(style: str, sdk: Path, caplog: pytest.LogCaptureFixture) -> None:
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with raw_peer(m, "client", None, start=False) as (conn, peer):
            sessions = package(m).ClientSessions(conn)
            conn.start(sessions.handler(object()))
            await peer.send(chunk_note(1), chunk_note(2))
            for _ in range(500):
                if conn._load() == 0 and sessions.session("s").snapshot().messages:
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            assert sessions.session("s").snapshot().messages[0].text == "12"

    caplog.set_level(logging.DEBUG)
    run(body())
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_forgetting_a_session_never_made_is_nothing(sdk: Path) -> None:
    m = sdk_module(sdk, "typeddict", "v1")

    async def body() -> None:
        async with raw_peer(m, "client", None, start=False) as (conn, peer):
            sessions = package(m).ClientSessions(conn)
            sessions.forget("never")
            session = sessions.session("s")
            sessions.forget("s")
            assert sessions.session("s") is not session

    run(body())


# -- the bound on an iterator ------------------------------------------------------------


def chunk_note(i: int) -> dict[str, Any]:
    return note({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(i)}})


@pytest.mark.parametrize("style", STYLES)
def test_a_full_iterator_holds_the_connection_back(style: str, sdk: Path) -> None:
    """Served through ``sessions.handler``: an iterator never holds more than
    ``max_queued`` plus what the connection reads ahead (``max_in_flight``); reading waits,
    nothing is lost, and the order holds."""
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with served(m, max_in_flight=4, max_queued=5) as (sessions, conn, peer):
            updates = sessions.session("s").updates()
            sending = asyncio.create_task(peer.send(*(chunk_note(i) for i in range(300))))
            await asyncio.sleep(0.3)
            held = len(updates._feed.items)
            assert 5 <= held <= 5 + 4 + 1, held
            got = []
            async for u in updates:
                got.append(u.data["content"]["text"])
                assert len(updates._feed.items) <= 5 + 4 + 1
                if len(got) == 300:
                    break
            await sending
            assert got == [str(i) for i in range(300)] and updates.dropped == 0
            assert sessions.session("s").snapshot().messages[0].text == "".join(got)

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_an_iterator_at_max_queued_stops_the_next_update_being_handled(style: str, sdk: Path) -> None:
    """Reading one notification ahead (``max_in_flight=1``), an iterator holds exactly
    ``max_queued`` updates: the handler of the update that filled it waits for room, and
    reading with it; each update taken makes room for one more."""
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with served(m, max_in_flight=1, max_queued=3) as (sessions, conn, peer):
            updates = sessions.session("s").updates()
            sending = asyncio.create_task(peer.send(*(chunk_note(i) for i in range(20))))
            await asyncio.sleep(0.2)
            assert len(updates._feed.items) == 3
            assert (await updates.__anext__()).data["content"]["text"] == "0"
            await asyncio.sleep(0.1)
            assert len(updates._feed.items) == 3
            await updates.aclose()  # no iterator left to wait for: the rest is read
            await asyncio.wait_for(sending, 5)

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_an_iterator_of_a_session_whose_id_is_empty_holds_the_connection_back_too(style: str, sdk: Path) -> None:
    """The empty string is a session id like any other: its iterator gets the updates
    and holds the connection back at ``max_queued`` (reading one notification ahead)."""
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with served(m, max_in_flight=1, max_queued=3) as (sessions, conn, peer):
            updates = sessions.session("").updates()
            notes = [note({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(i)}}, "") for i in range(20)]
            sending = asyncio.create_task(peer.send(*notes))
            await asyncio.sleep(0.2)
            assert len(updates._feed.items) == 3
            assert (await updates.__anext__()).data["content"]["text"] == "0"
            await updates.aclose()
            await asyncio.wait_for(sending, 5)

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_without_the_handler_an_iterator_left_behind_drops_its_oldest(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with raw_peer(m, "client", None, start=False, max_in_flight=4) as (conn, peer):
            sessions = package(m).ClientSessions(conn, max_queued=5)
            conn.start(Granting(m))  # not sessions.handler(): no backpressure
            updates = sessions.session("s").updates()
            await peer.send(*(chunk_note(i) for i in range(100)))
            while sessions.session("s").snapshot().updates < 100:
                await asyncio.sleep(0.01)
            assert len(updates._feed.items) == 9 and updates.dropped == 91
            assert [(await updates.__anext__()).data["content"]["text"] for _ in range(9)] == [str(i) for i in range(91, 100)]
            assert sessions.session("s").snapshot().messages[0].text == "".join(str(i) for i in range(100))  # the snapshot lost none

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_iterators_end_when_the_connection_closes(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            updates = sessions.session("s").updates()
            await peer.send(chunk_note(1))
            peer.close_output()
            got = [u.kind async for u in updates]
            assert got == ["agent_message_chunk"]

    run(body())


# -- what the session object reads ---------------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
def test_updates_in_a_batch_and_frames_that_are_not_notifications(style: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Where the schema declares batches, the updates of a batch reach their sessions in
    order; a frame that is not a JSON-RPC 2.0 notification is not an update."""
    from .test_batches import batch_schema

    folder = batch_schema(tmp_path_factory.mktemp("batch-schema") / "rpc_batches")
    m = import_file(generate(folder, tmp_path_factory.mktemp(f"batches-{style}"), (style,)) / f"acp_{style}" / "v1.py")
    assert m.RPC.batches

    def text(session: str, value: str, **extra: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": {"type": "text", "text": value}}, **extra}

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            await peer.send([text("a", "1"), text("b", "x"), text("a", "2")])
            await peer.send({**text("a", "no"), "jsonrpc": "1.0"}, text("a", "no", id=7), text("a", "3"))
            while sessions.session("a").snapshot().updates < 3:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            assert [u["text"] for u in sessions.session("a").snapshot().others] == ["1", "2", "3"]
            assert [u["text"] for u in sessions.session("b").snapshot().others] == ["x"]

    run(body())


@pytest.mark.parametrize("style", STYLES)
def test_an_iterator_left_with_break_holds_nothing_back(style: str, sdk: Path) -> None:
    """``async for ... in session.updates(): break`` (and the same of a turn) stops its
    queue: later updates, more than ``max_queued``, do not hold the connection."""
    m = sdk_module(sdk, style, "v1")

    async def scenario() -> None:
        async with served(m, max_in_flight=4, max_queued=3) as (sessions, conn, peer):
            session = sessions.session("s")
            await peer.send(chunk_note(0))
            async for _ in session.updates():
                break
            assert session._feeds == []  # dropped: no longer queued for
            await peer.send(*(chunk_note(i) for i in range(1, 50)))
            while session.snapshot().updates < 50:
                await asyncio.sleep(0.01)
            turn = session.turn("go")
            request = await peer.recv()
            await peer.send(chunk_note(50))
            async for _ in turn:
                break
            await turn.aclose()
            assert session._feeds == []
            await peer.send(*(chunk_note(i) for i in range(51, 100)), {"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}})
            end = await asyncio.wait_for(turn.end(), 5)
            assert end.stop_reason == "end_turn" and session.snapshot().updates == 100

    run(scenario())


@pytest.mark.parametrize("style", STYLES)
def test_a_session_forgotten_ends_its_iterators_and_state(style: str, sdk: Path) -> None:
    m = sdk_module(sdk, style, "v1")

    async def body() -> None:
        async with served(m) as (sessions, conn, peer):
            old = sessions.session("s")
            updates = old.updates()
            await peer.send(chunk_note(1))
            assert (await updates.__anext__()).kind == "agent_message_chunk"
            sessions.forget("s")
            assert [u async for u in updates] == []  # ended
            await peer.send(chunk_note(2))
            while "s" not in sessions._sessions:
                await asyncio.sleep(0.01)
            new = sessions.session("s")
            assert new is not old and new.snapshot().messages[0].text == "2"

    run(body())


# -- the reading of the updates, on the source module with a connection that only holds observers


class _Watched:
    """What ``ClientSessions`` needs of a connection to read its updates: the observers."""

    def __init__(self, batches: bool = False) -> None:
        from types import SimpleNamespace

        self.rpc = SimpleNamespace(batches=batches)
        self.observers: list[Any] = []
        self.max_in_flight = 4
        self.is_closed = False

    def add_observer(self, observer: Any) -> None:
        self.observers.append(observer)

    def remove_observer(self, observer: Any) -> None:
        self.observers.remove(observer)

    def read(self, *frames: Any, direction: str = "in", whole: bool = True) -> None:
        from acpgen.runtime._telemetry import Traffic

        for frame in frames:
            line = frame if isinstance(frame, bytes) else json.dumps(frame).encode()
            for observer in self.observers:
                observer(Traffic(direction, line, len(line), whole))


def _note(session: Any, update: Any, **frame: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}, **frame}


def test_reading_notes_each_update_notification_to_its_session() -> None:
    from acpgen.runtime._sessions import ClientSessions

    conn = _Watched()
    sessions = ClientSessions(conn, max_queued=3)
    assert (sessions.conn, sessions.rpc, sessions.max_queued) == (conn, conn.rpc, 3)
    assert conn.observers == [sessions._observe]
    hello = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    conn.read(_note("s1", hello), _note("s2", "no object"), _note("s2", None))
    assert sorted(sessions._sessions) == ["s1", "s2"]
    one = sessions.session("s1").snapshot()
    assert one.session_id == "s1" and one.updates == 1 and one.messages[0].text == "hi"
    two = sessions.session("s2").snapshot()
    assert two.session_id == "s2" and two.others == [{"value": "no object"}, {"value": None}]
    sessions.close()
    assert conn.observers == []


def test_reading_skips_what_is_no_update_notification() -> None:
    from acpgen.runtime._sessions import ClientSessions

    conn = _Watched()
    sessions = ClientSessions(conn)
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    note = _note("s", update)
    conn.read(
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s", "update": update}},  # another method
        _note("s", update, id=1),  # a request
        _note("s", update, jsonrpc="1.0"),
        {k: v for k, v in note.items() if k != "jsonrpc"},
        {"jsonrpc": "2.0", "method": "session/update", "params": [note["params"]]},
        {"jsonrpc": "2.0", "method": "session/update"},
        _note(7, update),  # no session id
        [note],  # a batch, where the schema has none
        "session/update",
        3,
        b"{session/update: not JSON",
    )
    conn.read(note, direction="out")  # what this side sent
    conn.read(note, whole=False)  # a line not held whole
    assert sessions._sessions == {}
    conn.read(note)
    assert list(sessions._sessions) == ["s"]


def test_reading_a_batch_notes_each_of_its_updates_where_the_schema_has_batches() -> None:
    from acpgen.runtime._sessions import ClientSessions

    conn = _Watched(batches=True)
    sessions = ClientSessions(conn)
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    conn.read([_note("a", chunk), {"jsonrpc": "2.0", "id": 3, "result": {}}, _note("b", chunk), 5])
    assert sorted(sessions._sessions) == ["a", "b"]
    assert sessions.session("a").snapshot().updates == 1 and sessions.session("b").snapshot().updates == 1


def test_reading_feeds_the_iterators_and_counts_the_idle_states() -> None:
    from acpgen.runtime._sessions import ClientSessions

    conn = _Watched()
    sessions = ClientSessions(conn)
    session = sessions.session("s")
    assert sessions.session("s") is session and session.id == "s" and session.response is None
    feed = session._subscribe()
    running = {"sessionUpdate": "state_update", "state": "running"}
    idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
    odd = {"sessionUpdate": 5}
    conn.read(_note("s", running))
    assert session._idles == 0 and not session._idled.is_set()
    conn.read(_note("s", idle), _note("s", odd), _note("s", "text"))
    assert session._idles == 1 and session._idled.is_set()
    assert session._idle == {"state": "idle", "stopReason": "end_turn"}
    got = list(feed.items)
    assert [(u.session_id, u.kind, u.data) for u in got] == [("s", "state_update", running), ("s", "state_update", idle), ("s", None, odd), ("s", None, "text")]
    assert all(u._rpc is conn.rpc for u in got)


def test_reading_bounds_each_iterator_by_max_queued() -> None:
    from acpgen.runtime._sessions import ClientSessions

    assert ClientSessions(_Watched()).max_queued == 1024
    assert ClientSessions(_Watched(), max_queued=1).max_queued == 1
    for bad in (0, -1):
        with pytest.raises(ValueError) as caught:
            ClientSessions(_Watched(), max_queued=bad)
        assert str(caught.value) == "max_queued must be >= 1"
    conn = _Watched()
    sessions = ClientSessions(conn, max_queued=1)
    session = sessions.session("s")
    feed = session._subscribe()
    sessions._room.clear()
    session._unsubscribe(feed)  # room for the connection again
    assert sessions._room.is_set() and feed.done and session._feeds == []
