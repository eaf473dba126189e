"""Both protocol versions from one program (acpgen/runtime/_versions.py), in the three
styles: an agent and a client, each speaking v1 only, v2 only or both (packages built from
one tree or from a schema directory with both), negotiate on ``initialize`` and play a whole
turn in the version chosen, or fail with the protocol's error when they share none.

The schemas: the small fixture directory ``tests/fixtures/schemas/versions`` (trees v1 and
v2), and the corpus's ``main`` (v1 and v2 as upstream has them, skipped without it)."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import SCHEMAS, generate, import_file
from ..corpus import ACP, needs_corpus
from .harness import STYLES, Peer, run, socket_streams
from .peers import versions as peers

FIXTURE = SCHEMAS / "versions"
SPEAKS = {"v1": (1,), "v2": (2,), "both": (1, 2)}
_BUILT: dict[tuple[str, str, str], dict[int, ModuleType]] = {}


def bindings(schema: Path, style: str, speaks: str, tmp: pytest.TempPathFactory) -> dict[int, ModuleType]:
    """The modules of a package built from the tree(s) ``speaks`` names: one tree alone
    (v1-only, v2-only) or the whole directory (both)."""
    key = (str(schema), style, speaks)
    if key not in _BUILT:
        trees = SPEAKS[speaks]
        source = schema if len(trees) > 1 else schema / f"v{trees[0]}"
        out = generate(source, tmp.mktemp(f"versions-{speaks}-{style}"), (style,), formatted=False)
        first = import_file(out / f"acp_{style}" / f"v{trees[0]}.py")
        pkg = first.__package__
        _BUILT[key] = {v: importlib.import_module(f"{pkg}.v{v}") for v in trees}
    return _BUILT[key]


async def _turn(agent_modules: dict[int, ModuleType], client_modules: dict[int, ModuleType], text: str) -> tuple[dict[str, Any], list[Any], Any]:
    a_r, a_w, c_r, c_w = await socket_streams()
    log: list[Any] = []
    agent_any = agent_modules[max(agent_modules)]
    client_any = client_modules[max(client_modules)]
    agent_conn = agent_any.RPC.connect("agent", a_r, a_w)
    client_conn = client_any.RPC.connect("client", c_r, c_w)
    agent_conn.start(peers.agent_versions(agent_modules, log))
    try:
        record = await peers.client_turn(client_conn, client_modules, text)
    finally:
        await asyncio.wait_for(client_conn.close(), 10)
        await asyncio.wait_for(agent_conn.close(), 10)
    return record, log, agent_conn.version


def expected(agent: str, client: str) -> int | None:
    """What the protocol gives: the agent's highest version at or below the client's newest,
    which the client must speak."""
    offered = max(SPEAKS[client])
    below = [v for v in SPEAKS[agent] if v <= offered]
    chosen = max(below) if below else None
    return chosen if chosen in SPEAKS[client] else None


def check_turn(record: dict[str, Any], log: list[Any], version: int, text: str) -> None:
    assert record["version"] == version, record
    assert record["typed"]  # the answer was parsed with the chosen version's types
    assert record["initialize"]["protocolVersion"] == version
    assert ("info" in record["initialize"]) == (version >= 2)
    assert log[0] == ["initialize", version, version]  # the handler sees its own version
    assert [entry[:2] for entry in log] == [["initialize", version], ["session/new", version], ["session/prompt", version]]
    assert record["session"] == {"sessionId": f"s-v{version}"}
    words = text.split()
    if version == 1:
        assert record["prompt"] == {"stopReason": "end_turn"}
        assert [u["content"]["text"] for u in record["updates"]] == words
    else:
        assert record["prompt"]["messageId"] == "u-1"
        *chunks, last = record["updates"]
        assert [u["content"]["text"] for u in chunks] == words
        assert {u["messageId"] for u in chunks} == {"a-1"}
        assert last == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}


@pytest.mark.parametrize("client", SPEAKS)
@pytest.mark.parametrize("agent", SPEAKS)
@pytest.mark.parametrize("style", STYLES)
def test_every_pair_negotiates(style: str, agent: str, client: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """v1-only, v2-only and both, as agent and as client: the turn runs in the version
    chosen, or the client's initialize raises UnsupportedProtocolVersionError."""
    text = "hello from both sides"
    record, log, agent_version = run(_turn(
        bindings(FIXTURE, style, agent, tmp_path_factory), bindings(FIXTURE, style, client, tmp_path_factory), text
    ))  # fmt: skip
    version = expected(agent, client)
    if version is not None:
        check_turn(record, log, version, text)
        assert agent_version == version
        return
    error = record["error"]
    assert error["code"] == -32022 and record["version"] is None, record
    if agent == "v2":  # the client offered 1: the agent has nothing at or below it
        assert error["data"] == {"requested": 1, "supported": [2]}
        assert "speaks no protocol version at or below 1" in error["str"]
        assert log == [] and agent_version is None
    else:  # the agent answered 1 to the offer of 2: the client does not speak 1
        assert "answered protocol version 1, which this program does not speak" in error["str"]


@needs_corpus
@pytest.mark.parametrize("client", SPEAKS)
@pytest.mark.parametrize("agent", SPEAKS)
@pytest.mark.parametrize("style", STYLES)
def test_every_pair_negotiates_on_the_corpus_main(style: str, agent: str, client: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The same with ACP's own schemas as the corpus's ``main`` has them (v1 and v2)."""
    text = "upstream schemas"
    record, log, _ = run(_turn(
        bindings(ACP / "main", style, agent, tmp_path_factory), bindings(ACP / "main", style, client, tmp_path_factory), text
    ))  # fmt: skip
    version = expected(agent, client)
    if version is None:
        assert record["error"]["code"] == -32022, record
    else:
        check_turn(record, log, version, text)


# -- the agent side, frame by frame ------------------------------------------------------


@pytest.fixture(params=STYLES)
def both(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[int, ModuleType]:
    return bindings(FIXTURE, request.param, "both", tmp_path_factory)


async def _raw_agent(modules: dict[int, ModuleType], log: list[Any], **options: Any) -> tuple[Any, Peer]:
    reader, writer, peer_r, peer_w = await socket_streams()
    conn = modules[2].RPC.connect("agent", reader, writer, **options)
    conn.start(peers.agent_versions(modules, log))
    return conn, Peer(peer_r, peer_w)


def init(rid: Any, version: Any, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": {"protocolVersion": version, **params}}


INFO = {"name": "raw", "version": "0"}


def test_the_agent_answers_the_highest_version_at_or_below_the_request(both: dict[int, ModuleType]) -> None:
    """Asked for 7 (newer than any it speaks), the agent answers 2, and its v2 handler is
    asked for 2; asked for 1 on another connection, it answers 1 with its v1 handler."""

    async def scenario() -> None:
        for asked, chosen in ((7, 2), (2, 2), (1, 1)):
            log: list[Any] = []
            conn, peer = await _raw_agent(both, log)
            await peer.send(init(1, asked, info=INFO))
            answer = await peer.recv()
            assert answer["result"]["protocolVersion"] == chosen, answer
            assert log == [["initialize", chosen, chosen]] and conn.version == chosen
            assert conn.rpc is both[chosen].RPC
            # the rest of the connection is the chosen version's: v1 answers a prompt with a
            # stop reason, v2 with a message id
            prompt = {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}]}
            await peer.send({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt})
            answer = await peer.recv()
            while answer.get("id") != 2:  # v2: the turn's updates may come first
                answer = await peer.recv()
            assert list(answer["result"]) == (["stopReason"] if chosen == 1 else ["messageId"]), answer
            await conn.close()

    run(scenario())


def test_no_common_version_is_answered_32022_and_initialize_may_come_again(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A v2-only agent asked for 1 (or 0) answers -32022 with what it supports; the
    connection stays open and undecided: a second initialize asking for 2 succeeds."""
    for style in STYLES:
        modules = bindings(FIXTURE, style, "v2", tmp_path_factory)

        async def scenario() -> None:
            log: list[Any] = []
            reader, writer, peer_r, peer_w = await socket_streams()
            conn = modules[2].RPC.connect("agent", reader, writer)
            conn.start(peers.agent_versions(modules, log))
            peer = Peer(peer_r, peer_w)
            for asked in (1, 0):
                await peer.send(init(asked, asked))
                answer = await peer.recv()
                assert answer["id"] == asked and answer["error"]["code"] == -32022, answer
                assert answer["error"]["data"] == {"requested": asked, "supported": [2]}
                assert conn.version is None and log == []
            await peer.send(init("again", 2, info=INFO))
            answer = await peer.recv()
            assert answer == {"jsonrpc": "2.0", "id": "again", "result": {"protocolVersion": 2, "info": peers.AGENT_INFO}}
            await conn.close()

        run(scenario())


def test_an_initialize_invalid_for_the_chosen_version_leaves_the_version_open(both: dict[int, ModuleType]) -> None:
    """Asking for 2 without v2's required ``info`` is answered -32602 (as the v2 module
    reads it), and nothing is chosen: asking for 1 then gets v1."""

    async def scenario() -> None:
        log: list[Any] = []
        conn, peer = await _raw_agent(both, log)
        await peer.send(init(1, 2))
        answer = await peer.recv()
        assert answer["id"] == 1 and answer["error"]["code"] == -32602, answer
        assert conn.version is None and log == [] and "_dispatch" in vars(conn)
        await peer.send(init(2, 1))
        assert (await peer.recv())["result"] == {"protocolVersion": 1}
        assert conn.version == 1 and log == [["initialize", 1, 1]]
        await conn.close()

    run(scenario())


def test_before_initialize_requests_are_refused_and_notifications_ignored(both: dict[int, ModuleType]) -> None:
    async def scenario() -> None:
        log: list[Any] = []
        seen: list[Any] = []
        conn, peer = await _raw_agent(both, log, observers=[seen.append])
        await peer.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}})
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/"}})
        assert (await peer.recv())["error"]["code"] == -32600
        await peer.send({"jsonrpc": "2.0", "id": "x", "method": "_vendor/probe", "params": {}})
        assert (await peer.recv())["error"] == {"code": -32601, "message": "Method not found", "data": {"method": "_vendor/probe"}}
        await peer.send(init(2, "two"), init(3, -1), {"jsonrpc": "2.0", "id": 4, "method": "initialize"})
        for rid in (2, 3, 4):
            answer = await peer.recv()
            assert answer["id"] == rid and answer["error"]["code"] == -32602, answer
        await peer.send([init(5, 2, info=INFO)])  # a batch
        answer = await peer.recv()
        assert answer["id"] is None and answer["error"]["code"] == -32600
        await peer.send(b"{not json\n")
        assert (await peer.recv())["error"]["code"] == -32700
        assert conn.version is None and log == []
        await peer.send(init(6, 2, info=INFO))
        assert (await peer.recv())["result"]["protocolVersion"] == 2
        # every frame read was seen once, as it came (the initialize too, unchanged)
        ins = [t.line for t in seen if t.direction == "in"]
        assert len(ins) == 9 and json.loads(ins[-1]) == init(6, 2, info=INFO)
        await conn.close()

    run(scenario())


def test_a_refusal_before_initialize_is_the_whole_error_with_the_request_id_where_valid(both: dict[int, ModuleType]) -> None:
    """Each refusal read before the version is chosen is the JSON-RPC error in full (code,
    message and what was wrong as ``data``), with the request's id where it is one JSON-RPC
    allows (a string or a number) and ``null`` where it is not."""

    def error(rid: Any, code: int, message: str, data: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message, "data": data}}

    first = "the first request must be initialize"
    version = "initialize.protocolVersion must be an integer from 0 to 65535"

    async def scenario() -> None:
        conn, peer = await _raw_agent(both, [])
        for rid, answered in ((1, 1), ("x", "x"), (1.5, 1.5), (True, None), ({"a": 1}, None), ([1], None), (None, None)):
            await peer.send({"jsonrpc": "2.0", "id": rid, "method": "session/new", "params": {"cwd": "/"}})
            assert await peer.recv() == error(answered, -32600, "Invalid request", first)
        for params in ({"protocolVersion": "two"}, {"protocolVersion": -1}, {"protocolVersion": 65536}, {"protocolVersion": True}, None):
            frame = init(7, 0)
            frame["params"] = params
            await peer.send(frame)
            assert await peer.recv() == error(7, -32602, "Invalid params", version)
        await peer.send([init(5, 2, info=INFO)])
        assert await peer.recv() == error(None, -32600, "Invalid request", "batches are not supported")
        assert conn.version is None
        await peer.send(init(8, 65535, info=INFO))  # the highest version there may be
        assert (await peer.recv())["result"]["protocolVersion"] == 2
        await conn.close()

    run(scenario())


def test_no_common_version_is_the_protocols_error_in_full(tmp_path_factory: pytest.TempPathFactory) -> None:
    modules = bindings(FIXTURE, "typeddict", "v2", tmp_path_factory)

    async def scenario() -> None:
        conn, peer = await _raw_agent(modules, [])
        await peer.send(init("i", 1))
        answer = await peer.recv()
        assert answer == {"jsonrpc": "2.0", "id": "i", "error": {"code": -32022, "message": "Unsupported protocol version", "data": {"requested": 1, "supported": [2]}}}
        await conn.close()

    run(scenario())


def test_the_unsupported_version_error_says_what_was_asked_and_what_is_spoken(both: dict[int, ModuleType]) -> None:
    pkg = sys.modules[both[1].__package__]
    error = pkg.UnsupportedProtocolVersionError(1, [2, 3])
    assert (error.code, error.message, error.data) == (-32022, "Unsupported protocol version", {"requested": 1, "supported": [2, 3]})
    assert (error.requested, error.supported) == (1, [2, 3])
    assert str(error) == "no protocol version at or below 1 is spoken by the other side (it speaks 2, 3)"
    assert str(pkg.UnsupportedProtocolVersionError(4, [])).endswith("(it speaks none)")
    assert str(pkg.UnsupportedProtocolVersionError(4, [1], "the agent answered 9")) == "the agent answered 9"
    assert isinstance(error, pkg.RpcError)


def test_a_single_handler_connection_negotiates_nothing(both: dict[int, ModuleType]) -> None:
    """Without Versions, the connection reads through the class's own path (nothing is put
    in front of it) and its version is its module's."""

    async def scenario() -> None:
        reader, writer, peer_r, peer_w = await socket_streams()
        conn = both[1].RPC.connect("agent", reader, writer)
        conn.start(peers.Agent(both[1], conn, []))
        assert "_dispatch" not in vars(conn) and conn.version == 1
        peer = Peer(peer_r, peer_w)
        await peer.send(init(1, 5))
        assert (await peer.recv())["result"] == {"protocolVersion": 5}  # its handler decides
        await conn.close()
        # a negotiating connection stops negotiating once the version is chosen
        log: list[Any] = []
        conn, peer = await _raw_agent(both, log)
        assert "_dispatch" in vars(conn)
        await peer.send(init(1, 2, info=INFO))
        await peer.recv()
        assert "_dispatch" not in vars(conn)
        await conn.close()

    run(scenario())


# -- the client side ---------------------------------------------------------------------


async def _raw_client(modules: dict[int, ModuleType]) -> tuple[Any, Peer, asyncio.Task[Any]]:
    reader, writer, peer_r, peer_w = await socket_streams()
    conn = modules[max(modules)].RPC.connect("client", reader, writer)
    peer = Peer(peer_r, peer_w)
    turn = asyncio.create_task(peers.client_turn(conn, modules, "a b"))
    return conn, peer, turn


def test_the_client_offers_its_newest_and_follows_the_answer(both: dict[int, ModuleType]) -> None:
    """The client offers 2; the agent answers 1: the answer is parsed with v1's types, and
    the turn goes on in v1 (v1 params, v1 answers, the v1 client handler)."""

    async def scenario() -> None:
        conn, peer, turn = await _raw_client(both)
        offer = await peer.recv()
        assert offer["method"] == "initialize" and offer["params"]["protocolVersion"] == 2
        assert offer["params"]["info"] == peers.CLIENT_INFO
        await peer.send({"jsonrpc": "2.0", "id": offer["id"], "result": {"protocolVersion": 1}})
        new = await peer.recv()
        assert new["method"] == "session/new" and conn.version == 1 and conn.rpc is both[1].RPC
        await peer.send({"jsonrpc": "2.0", "id": new["id"], "result": {"sessionId": "s"}})
        prompt = await peer.recv()
        chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a"}}
        await peer.send(
            {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": chunk}},
            {"jsonrpc": "2.0", "id": prompt["id"], "result": {"stopReason": "end_turn"}},
        )
        record = await asyncio.wait_for(turn, 5)
        assert record["version"] == 1 and record["typed"] and record["updates"] == [chunk]
        await conn.close()

    run(scenario())


def test_the_client_raises_on_a_version_it_does_not_speak(both: dict[int, ModuleType]) -> None:
    """An answer naming version 3, or the agent's -32022, raises
    UnsupportedProtocolVersionError from initialize; nothing is negotiated."""

    async def scenario() -> None:
        for answer in (
            {"result": {"protocolVersion": 3, "info": INFO}},
            {"error": {"code": -32022, "message": "Unsupported protocol version", "data": {"requested": 2, "supported": [7]}}},
        ):
            conn, peer, turn = await _raw_client(both)
            offer = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": offer["id"], **answer})
            record = await asyncio.wait_for(turn, 5)
            assert record["error"]["code"] == -32022 and record["version"] is None, record
            assert conn.version is None
            if "result" in answer:
                assert record["error"]["data"] == {"requested": None, "supported": [3]}
                assert "answered protocol version 3" in record["error"]["str"]
            else:
                assert record["error"]["data"] == {"requested": 2, "supported": [7]}
            await conn.close()

    run(scenario())


def test_an_invalid_answer_to_initialize_chooses_nothing(both: dict[int, ModuleType]) -> None:
    """An answer without a usable protocolVersion (a list, none at all) fails initialize
    with InvalidResultError, as any invalid result does; the version stays open."""

    async def scenario() -> None:
        pkg = sys.modules[both[1].__package__]  # type: ignore[index]
        for result in ({"protocolVersion": [2], "info": INFO}, {"info": INFO}, "2"):
            reader, writer, peer_r, peer_w = await socket_streams()
            conn = both[2].RPC.connect("client", reader, writer)
            conn.start(pkg.Versions().add(both[1].RPC, lambda c: object()).add(both[2].RPC, lambda c: object()))
            peer = Peer(peer_r, peer_w)
            offer = peers.load(both[2], "initialize", {"protocolVersion": 2, "info": INFO})
            asking = asyncio.create_task(conn.request("initialize", offer))
            frame = await peer.recv()
            await peer.send({"jsonrpc": "2.0", "id": frame["id"], "result": result})
            with pytest.raises(pkg.InvalidResultError):
                await asyncio.wait_for(asking, 5)
            assert conn.version is None
            await conn.close()

    run(scenario())


async def _asking_client(modules: dict[int, ModuleType], seen: list[Any]) -> tuple[Any, Peer, asyncio.Task[Any], dict[str, Any]]:
    """A client speaking v1 and v2 whose handlers implement nothing, its initialize sent
    (and read by the peer); ``seen`` gets what its observer sees."""
    pkg = sys.modules[modules[1].__package__]
    reader, writer, peer_r, peer_w = await socket_streams()
    conn = modules[2].RPC.connect("client", reader, writer, observers=[seen.append])
    conn.start(pkg.Versions().add(modules[1].RPC, lambda c: object()).add(modules[2].RPC, lambda c: object()))
    peer = Peer(peer_r, peer_w)
    offer = peers.load(modules[2], "initialize", {"protocolVersion": 2, "info": INFO})
    asking = asyncio.create_task(conn.request("initialize", offer))
    return conn, peer, asking, await peer.recv()


def test_the_client_reads_the_agents_other_frames_as_usual_until_the_answer(both: dict[int, ModuleType]) -> None:
    """Before the answer to its initialize, a client takes what else the agent sends as
    it would after: an unreadable line is answered -32700, a request of the agent's (its
    id the same as the initialize's) -32601 as nothing implements it yet, an answer to no
    request of ours or with an id JSON-RPC does not allow is let go; its observers see
    every line once. Then the answer chooses the version."""

    async def scenario() -> None:
        seen: list[Any] = []
        conn, peer, asking, offer = await _asking_client(both, seen)
        request = {"jsonrpc": "2.0", "id": offer["id"], "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/a"}}
        await peer.send(b"{not json\n", {"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}, {"jsonrpc": "2.0", "id": 99, "result": {}}, request)
        assert (await peer.recv())["error"]["code"] == -32700
        answer = await peer.recv()
        assert answer["id"] == offer["id"] and answer["error"]["code"] == -32601, answer
        assert not asking.done() and conn.version is None
        # the answer to another request of ours, even one naming a version, chooses nothing
        probe = asyncio.create_task(conn.request("_vendor/probe", {}))
        asked = await peer.recv()
        await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"protocolVersion": 1}})
        assert await asyncio.wait_for(probe, 5) == {"protocolVersion": 1}
        assert not asking.done() and conn.version is None
        await peer.send({"jsonrpc": "2.0", "id": offer["id"], "result": {"protocolVersion": 1}})
        await asyncio.wait_for(asking, 5)
        assert conn.version == 1 and not conn.is_closed
        ins = [t.line for t in seen if t.direction == "in"]
        assert len(ins) == 6 and all(type(line) is bytes for line in ins), ins
        await conn.close()

    run(scenario())


def test_the_client_says_what_the_agent_speaks_when_they_share_no_version(both: dict[int, ModuleType]) -> None:
    """The agent's -32022, however its ``data`` is given, or an answer naming a version
    this client does not speak, fails initialize with the protocol's error, its text
    saying what each side speaks; the observers see the answer."""
    pkg = sys.modules[both[1].__package__]

    async def failed(answer: dict[str, Any]) -> tuple[Any, list[Any]]:
        seen: list[Any] = []
        conn, peer, asking, offer = await _asking_client(both, seen)
        await peer.send({"jsonrpc": "2.0", "id": offer["id"], **answer})
        with pytest.raises(pkg.UnsupportedProtocolVersionError) as error:
            await asyncio.wait_for(asking, 5)
        assert conn.version is None
        await conn.close()
        return error.value, [t.line for t in seen if t.direction == "in"]

    async def scenario() -> None:
        unsupported = {"code": -32022, "message": "Unsupported protocol version"}
        for data, requested, supported in (({"requested": 2, "supported": [7, 8]}, 2, [7, 8]), ("x", None, []), ({"requested": 2}, 2, []), ({"supported": "7"}, None, [])):
            error, ins = await failed({"error": {**unsupported, "data": data}})
            assert (error.requested, error.supported) == (requested, supported)
            shown = data.get("supported") if isinstance(data, dict) else None
            assert str(error) == f"the agent speaks no protocol version at or below {requested!r} (it speaks {shown!r}): Unsupported protocol version"
            assert len(ins) == 1 and json.loads(ins[0])["error"]["data"] == data
        error, ins = await failed({"result": {"protocolVersion": 3, "info": INFO}})
        assert str(error) == "the agent answered protocol version 3, which this program does not speak (it speaks 1, 2)"
        assert (error.requested, error.supported) == (None, [3]) and len(ins) == 1

    run(scenario())


def test_versions_are_checked_when_added(both: dict[int, ModuleType]) -> None:
    versions = sys.modules[both[1].__package__].Versions()  # type: ignore[index]
    versions.add(both[1].RPC, lambda conn: None).add(both[2].RPC, lambda conn: None)
    assert versions.supported == [1, 2] and versions.newest == 2
    assert [versions.choose(n) for n in (0, 1, 2, 3, 65535)] == [None, 1, 2, 2, 2]
    with pytest.raises(ValueError, match="added already"):
        versions.add(both[1].RPC, lambda conn: None)


async def _logged(records: list[Any], text: str) -> None:
    """Wait (up to 10 s) for ``text`` among the messages logged."""
    for _ in range(1000):
        if any(message == text for _, message in records):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{text!r} not logged: {records}")


def _keeping(records: list[Any]) -> logging.Logger:
    """A logger of its own that keeps (level, message) of everything logged to it."""

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append((record.levelname, record.getMessage()))

    logger = logging.getLogger(f"test_versions.kept.{id(records)}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.addHandler(Keep())
    return logger


def test_the_connections_logger_gets_the_version_chosen(
    both: dict[int, ModuleType],
) -> None:
    """What the connection logs before the version is chosen and after (here a
    notification of a method nobody knows, ignored) goes to the connection's logger, and
    so does the version chosen, in between."""
    pkg = sys.modules[both[1].__package__]
    records: list[Any] = []
    logger = _keeping(records)

    async def scenario() -> None:
        reader, writer, peer_r, peer_w = await socket_streams()
        conn = both[2].RPC.connect("client", reader, writer, logger=logger)
        conn.start(
            pkg.Versions()
            .add(both[1].RPC, lambda c: object())
            .add(both[2].RPC, lambda c: object())
        )
        peer = Peer(peer_r, peer_w)
        offer = peers.load(both[2], "initialize", {"protocolVersion": 2, "info": INFO})
        asking = asyncio.create_task(conn.request("initialize", offer))
        sent = await peer.recv()
        await peer.send({"jsonrpc": "2.0", "method": "x/before"})
        await _logged(records, "notification of unknown method 'x/before' ignored")
        await peer.send(
            {"jsonrpc": "2.0", "id": sent["id"], "result": {"protocolVersion": 1}}
        )
        await asyncio.wait_for(asking, 5)
        assert conn.version == 1
        await peer.send({"jsonrpc": "2.0", "method": "x/after"})
        await _logged(records, "notification of unknown method 'x/after' ignored")
        await conn.close()

    run(scenario())
    assert ("DEBUG", "protocol version 1 negotiated") in records
    assert records.index(("DEBUG", "protocol version 1 negotiated")) < records.index(
        ("WARNING", "notification of unknown method 'x/after' ignored")
    )


def test_the_chosen_version_serves_the_methods_of_its_side(
    both: dict[int, ModuleType],
) -> None:
    """The initialize that chooses the version is read as this side's method, and once the
    version is chosen a request goes to the handler of the method as this side implements
    it (here methods both sides declare: the other side's spec comes first, with other
    params or another handler)."""
    pkg = sys.modules[both[1].__package__]
    base = both[1].RPC.spec("session/new")
    theirs = base._replace(method="x/same", side="client", handler="client_same")
    ours = base._replace(method="x/same", side="agent", handler="agent_same")
    init_theirs = both[1].RPC.spec("initialize")._replace(side="client", params=base.params)
    rpc = type(both[1].RPC)(
        (init_theirs, theirs, *both[1].RPC.methods, ours),
        both[1].RPC.codec,
        both[1].RPC.error_type,
        version=1,
    )

    class Agent:
        async def initialize(self, params: Any) -> Any:
            return peers.load(both[1], "initialize", {"protocolVersion": 1}, "result")

        async def agent_same(self, params: Any) -> Any:
            return peers.load(both[1], "session/new", {"sessionId": "n"}, "result")

    async def scenario() -> None:
        reader, writer, peer_r, peer_w = await socket_streams()
        conn = rpc.connect("agent", reader, writer)
        conn.start(pkg.Versions().add(rpc, lambda c: Agent()))
        peer = Peer(peer_r, peer_w)
        await peer.send(init(1, 1))
        assert (await peer.recv())["result"] == {"protocolVersion": 1}
        await peer.send(
            {"jsonrpc": "2.0", "id": 2, "method": "x/same", "params": {"cwd": "/"}}
        )
        assert await peer.recv() == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"sessionId": "n"},
        }
        await conn.close()

    run(scenario())


def test_the_handler_of_the_chosen_version_fails_into_the_connections_logger(
    both: dict[int, ModuleType],
) -> None:
    """A handler of the chosen version that raises is answered -32603 and logged to the
    connection's logger."""
    pkg = sys.modules[both[1].__package__]
    records: list[Any] = []
    logger = _keeping(records)

    class Agent:
        async def initialize(self, params: Any) -> Any:
            return peers.load(both[1], "initialize", {"protocolVersion": 1}, "result")

        async def session_new(self, params: Any) -> Any:
            raise RuntimeError("boom")

    async def scenario() -> None:
        reader, writer, peer_r, peer_w = await socket_streams()
        conn = both[2].RPC.connect("agent", reader, writer, logger=logger)
        conn.start(pkg.Versions().add(both[1].RPC, lambda c: Agent()))
        peer = Peer(peer_r, peer_w)
        await peer.send(init(1, 1))
        assert (await peer.recv())["result"] == {"protocolVersion": 1}
        await peer.send(
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/"}}
        )
        answer = await peer.recv()
        assert answer["id"] == 2 and answer["error"]["code"] == -32603, answer
        await _logged(records, "handler of 'session/new' failed")
        await conn.close()

    run(scenario())


def test_what_the_agent_ignores_or_refuses_before_initialize_is_logged(
    both: dict[int, ModuleType],
) -> None:
    """A notification before initialize is logged as ignored, and an initialize asking
    for a version below every one spoken as refused, to the connection's logger."""
    records: list[Any] = []
    logger = _keeping(records)
    seen: list[Any] = []
    sent = [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        init(1, 0),
    ]

    async def scenario() -> None:
        conn, peer = await _raw_agent(both, [], logger=logger, observers=[seen.append])
        await peer.send(*sent)
        assert (await peer.recv())["error"]["code"] == -32022
        await conn.close()

    run(scenario())
    ins = [t.line for t in seen if t.direction == "in"]
    assert (
        all(type(line) is bytes for line in ins)
        and [json.loads(line) for line in ins] == sent
    )
    assert (
        "WARNING",
        "notification 'session/cancel' before initialize ignored",
    ) in records
    assert (
        "WARNING",
        "initialize: no protocol version at or below 0 is spoken by the other side (it speaks 1, 2)",
    ) in records


def test_a_module_without_a_protocol_version_is_not_added(both: dict[int, ModuleType]) -> None:
    pkg = sys.modules[both[1].__package__]
    rpc = type(both[1].RPC)(both[1].RPC.methods, both[1].RPC.codec, both[1].RPC.error_type)
    with pytest.raises(ValueError) as error:
        pkg.Versions().add(rpc, lambda conn: None)
    assert str(error.value) == "this module's schema declares no protocol version"


def test_a_request_given_up_is_cancelled_in_the_version_chosen(both: dict[int, ModuleType]) -> None:
    """Before the answer to initialize and after the version is chosen, a request given up
    sends ``$/cancel_request`` naming it, as the version in use has it."""

    async def scenario() -> None:
        conn, peer, asking, offer = await _asking_client(both, [])
        early = asyncio.create_task(conn.request("_vendor/early", {}))
        asked = await asyncio.wait_for(peer.recv(), 5)
        early.cancel()
        cancel = await asyncio.wait_for(peer.recv(), 5)
        assert cancel == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": asked["id"]}}
        await peer.send({"jsonrpc": "2.0", "id": offer["id"], "result": {"protocolVersion": 1}})
        await asyncio.wait_for(asking, 5)
        assert conn.version == 1
        probe = asyncio.create_task(conn.request("_vendor/probe", {}))
        asked = await asyncio.wait_for(peer.recv(), 5)
        probe.cancel()
        cancel = await asyncio.wait_for(peer.recv(), 5)
        assert cancel == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": asked["id"]}}
        await conn.close()

    run(scenario())
