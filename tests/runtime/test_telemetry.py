"""Seeing the traffic (acpgen/runtime/_telemetry.py), in the three styles: observers see
every frame read and written exactly once, in order, byte for byte; OpenTelemetry spans,
one per request both ways, with method, id, outcome and duration; nothing of OpenTelemetry
imported or done when unused."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .harness import STYLES, get, line, module, package, pair, raw_peer, run

trace_sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk is not installed")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402


@pytest.fixture(params=STYLES)
def m(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return module(request.param, tmp_path_factory.mktemp(f"rpc-{request.param}"))


def load(m: ModuleType, name: str, wire: Any) -> Any:
    return m.RPC.codec.load(getattr(m, name), wire)


def telemetry_of(m: ModuleType) -> ModuleType:
    return importlib.import_module(package(m).__name__ + "._telemetry")


class Client:
    def __init__(self) -> None:
        self.updates: list[str] = []

    async def session_update(self, params: Any) -> None:
        self.updates.append(get(get(params, "update", "update"), "text", "text"))

    async def fs_read_text_file(self, params: Any) -> Any:
        raise package_of_test.RpcError(-32002, "Resource not found", {"path": "/nope"})


package_of_test: Any = None


def test_an_observer_sees_every_frame_once_in_order(m: ModuleType) -> None:
    """What the peer wrote, the observer saw as "in", byte for byte and in order (a
    malformed line, an oversized one by its head, a batch item too); what the peer read,
    it saw as "out"."""

    async def scenario() -> None:
        seen: list[Any] = []
        async with raw_peer(m, "client", Client(), max_line=4096, observers=[seen.append]) as (conn, peer):
            sent = [
                line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": str(i)}}})
                for i in range(20)
            ]
            sent += [b"{not json", line({"jsonrpc": "2.0", "id": 7, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/x" * 3000}})]
            sent += [line({"jsonrpc": "2.0", "id": "q", "method": "no/such", "params": {}})]
            await peer.send(*(s if s.endswith(b"\n") else s + b"\n" for s in sent))
            answers = await peer.recv_all(3)
            await asyncio.sleep(0.05)
            ins = [t for t in seen if t.direction == "in"]
            outs = [t for t in seen if t.direction == "out"]
            expect_in = [s.rstrip(b"\n") for s in sent]
            assert [t.line for t in ins if t.whole] == [s for s in expect_in if len(s) <= 4096]
            big = [t for t in ins if not t.whole]
            assert len(big) == 1 and big[0].size == len(expect_in[21]) and expect_in[21].startswith(big[0].line)
            assert big[0].whole is False and big[0].direction == "in"
            assert big[0].message() is None and ins[0].message()["method"] == "session/update"
            assert [json.loads(t.line) for t in outs] == answers
            assert all(t.size == len(t.line) for t in outs)

    run(scenario(), timeout=30)


def test_a_failing_observer_is_logged_and_removed(m: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[Any] = []

    def broken(traffic: Any) -> None:
        calls.append(traffic)
        raise RuntimeError("observer bug")

    async def scenario() -> None:
        client = Client()
        async with raw_peer(m, "client", client, observers=[broken]) as (conn, peer):
            await peer.send(*({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"type": "text", "text": str(i)}}} for i in range(3)))
            while len(client.updates) < 3:
                await asyncio.sleep(0.01)
        assert len(calls) == 1 and client.updates == ["0", "1", "2"]

    with caplog.at_level(logging.ERROR):
        run(scenario(), timeout=30)
    assert "observer" in caplog.text and "removed" in caplog.text


class Agent:
    def __init__(self, m: ModuleType) -> None:
        self.m = m
        self.client: Any = None
        self.release = asyncio.Event()

    async def initialize(self, params: Any) -> Any:
        return load(self.m, "InitializeResponse", {"protocolVersion": 1})

    async def session_prompt(self, params: Any) -> Any:
        text = get(get(params, "prompt", "prompt")[0], "text", "text")
        if text == "fail":
            raise package(self.m).RpcError(-32000, "Authentication required")
        if text == "hang":
            await asyncio.sleep(30)
        if text == "read":
            try:
                await self.client.fs_read_text_file(load(self.m, "ReadTextFileRequest", {"sessionId": "s", "path": "/nope"}))
            except package(self.m).RemoteError:
                pass
        return load(self.m, "PromptResponse", {"stopReason": "end_turn"})


def spans_by_name(exporter: InMemorySpanExporter) -> list[Any]:
    return sorted(exporter.get_finished_spans(), key=lambda s: (s.start_time, s.kind.value))


def test_one_span_per_request_both_ways_with_its_outcome(m: ModuleType) -> None:
    global package_of_test
    package_of_test = package(m)
    exporter = InMemorySpanExporter()
    provider = trace_sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel = telemetry_of(m).OpenTelemetry(tracer_provider=provider)

    def prompt(text: str) -> Any:
        return load(m, "PromptRequest", {"sessionId": "s", "prompt": [{"type": "text", "text": text}]})

    async def scenario() -> None:
        agent = Agent(m)
        async with pair(m, agent, Client(), telemetry=otel) as (agent_conn, client_conn):
            agent.client = m.RemoteClient(agent_conn)
            remote = m.RemoteAgent(client_conn)
            await remote.initialize(load(m, "InitializeRequest", {"protocolVersion": 1}))
            await remote.session_prompt(prompt("read"))
            with pytest.raises(package(m).RemoteError):
                await remote.session_prompt(prompt("fail"))
            hung = asyncio.ensure_future(remote.session_prompt(prompt("hang")))
            await asyncio.sleep(0.2)
            hung.cancel()
            with pytest.raises(asyncio.CancelledError):
                await hung
            await asyncio.sleep(0.2)

    run(scenario(), timeout=30)
    spans = exporter.get_finished_spans()
    outcomes = sorted((s.name, s.kind.name, s.attributes["acp.outcome"], s.attributes.get("rpc.jsonrpc.error_code")) for s in spans)
    assert outcomes == sorted(
        [
            ("initialize", "CLIENT", "ok", None),
            ("initialize", "SERVER", "ok", None),
            ("session/prompt", "CLIENT", "ok", None),
            ("session/prompt", "SERVER", "ok", None),
            ("fs/read_text_file", "CLIENT", "error", -32002),
            ("fs/read_text_file", "SERVER", "error", -32002),
            ("session/prompt", "CLIENT", "error", -32000),
            ("session/prompt", "SERVER", "error", -32000),
            ("session/prompt", "CLIENT", "cancelled", None),
            ("session/prompt", "SERVER", "cancelled", -32800),
        ]
    ), outcomes
    for s in spans:
        assert s.attributes["rpc.system"] == "jsonrpc" and s.attributes["rpc.method"] == s.name
        assert json.loads(s.attributes["rpc.jsonrpc.request_id"]) is not None
        assert s.end_time >= s.start_time
        assert (s.status.status_code == StatusCode.ERROR) == (s.attributes["acp.outcome"] != "ok")
    # the agent's read is made inside its prompt's span: nested under it
    read = next(s for s in spans if s.name == "fs/read_text_file" and s.kind == SpanKind.CLIENT)
    outer = next(s for s in spans if s.context.span_id == read.parent.span_id)
    assert outer.name == "session/prompt" and outer.kind == SpanKind.SERVER


def test_a_request_in_flight_at_the_close_ends_its_span_as_closed(m: ModuleType) -> None:
    exporter = InMemorySpanExporter()
    provider = trace_sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel = telemetry_of(m).OpenTelemetry(tracer_provider=provider)

    async def scenario() -> None:
        async with raw_peer(m, "client", Client(), telemetry=otel) as (conn, peer):
            waiting = asyncio.ensure_future(m.RemoteAgent(conn).initialize(load(m, "InitializeRequest", {"protocolVersion": 1})))
            await peer.recv()
            await conn.close()
            with pytest.raises(package(m).ConnectionClosedError):
                await waiting

    run(scenario(), timeout=30)
    [span] = exporter.get_finished_spans()
    assert span.attributes["acp.outcome"] == "closed" and span.status.status_code == StatusCode.ERROR


def test_nothing_of_opentelemetry_is_imported_unless_asked(m: ModuleType) -> None:
    """A package used with observers and no telemetry never imports opentelemetry; asking
    for spans where it is not installed says what to install."""
    root = Path(package(m).__file__).parent
    code = f"""
import asyncio, sys
sys.path.insert(0, {str(root.parent)!r})
pkg = __import__({root.name!r})
from {root.name} import v1
async def main():
    r, w = await asyncio.open_connection(*(await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)).sockets[0].getsockname()[:2])
    conn = v1.RPC.connect("client", r, w, observers=[print])
    await conn.close()
asyncio.run(main())
assert "opentelemetry" not in sys.modules, "imported"
sys.modules["opentelemetry"] = None
try:
    pkg.OpenTelemetry()
except ImportError as exc:
    print("ERR", exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "ERR OpenTelemetry spans need the package opentelemetry-api: pip install opentelemetry-api" in out.stdout


# --- the source module itself: what a span records, on a recording span -----------------

from acpgen.runtime import _telemetry as source  # noqa: E402
from acpgen.runtime._frames import (  # noqa: E402
    ConnectionClosedError,
    InvalidResultError,
    OversizedFrameError,
    RemoteError,
)


class Recording:
    """A span that records what is set on it, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, Any]] = []

    def set_attribute(self, key: str, value: Any) -> None:
        self.calls.append(("attr", key, value))

    def set_status(self, status: Any) -> None:
        self.calls.append(("status", status, None))


def recorded() -> tuple[Any, Recording]:
    span = Recording()
    return source.Span(span, lambda text: ("failed", text)), span


@pytest.mark.parametrize(
    ("args", "calls"),
    [
        (("ok",), [("attr", "acp.outcome", "ok")]),
        (("ok", 0), [("attr", "acp.outcome", "ok"), ("attr", "rpc.jsonrpc.error_code", 0)]),
        (
            ("error", -32000, "Authentication required"),
            [
                ("attr", "acp.outcome", "error"),
                ("attr", "rpc.jsonrpc.error_code", -32000),
                ("attr", "rpc.jsonrpc.error_message", "Authentication required"),
                ("status", ("failed", "Authentication required"), None),
            ],
        ),
        (
            ("error", -32603),
            [("attr", "acp.outcome", "error"), ("attr", "rpc.jsonrpc.error_code", -32603), ("status", ("failed", "error"), None)],
        ),
        (("cancelled",), [("attr", "acp.outcome", "cancelled"), ("status", ("failed", "cancelled"), None)]),
        (("closed", None, "peer gone"), [("attr", "acp.outcome", "closed"), ("status", ("failed", "peer gone"), None)]),
    ],
)
def test_a_span_records_its_outcome_code_message_and_status(args: tuple[Any, ...], calls: list[Any]) -> None:
    span, rec = recorded()
    span.outcome(*args)
    assert rec.calls == calls


@pytest.mark.parametrize(
    ("exc", "calls"),
    [
        (
            RemoteError(-32002, "Resource not found", {"path": "/x"}, method="fs/read_text_file", id=3),
            [
                ("attr", "acp.outcome", "error"),
                ("attr", "rpc.jsonrpc.error_code", -32002),
                ("attr", "rpc.jsonrpc.error_message", "Resource not found"),
                ("status", ("failed", "Resource not found"), None),
            ],
        ),
        (asyncio.CancelledError(), [("attr", "acp.outcome", "cancelled"), ("status", ("failed", "cancelled"), None)]),
        (
            ConnectionClosedError("the peer went away", 3),
            [("attr", "acp.outcome", "closed"), ("status", ("failed", "the peer went away"), None)],
        ),
        (
            InvalidResultError("session/new", 1, {}, "sessionId: missing"),
            [
                ("attr", "acp.outcome", "invalid"),
                ("status", ("failed", "invalid result for 'session/new' (id 1): sessionId: missing"), None),
            ],
        ),
        (
            OversizedFrameError("session/load", "a", 9, 8),
            [
                ("attr", "acp.outcome", "invalid"),
                (
                    "status",
                    ("failed", "the answer to 'session/load' (id 'a') is a line of 9 bytes, over the connection's limit of 8 bytes"),
                    None,
                ),
            ],
        ),
        (ValueError("boom"), [("attr", "acp.outcome", "error"), ("status", ("failed", "ValueError: boom"), None)]),
    ],
)
def test_a_span_of_ours_records_how_it_failed(exc: BaseException, calls: list[Any]) -> None:
    span, rec = recorded()
    span.failed(exc)
    assert rec.calls == calls


@pytest.mark.parametrize(
    ("line", "calls"),
    [
        (None, [("attr", "acp.outcome", "ok")]),
        (b'{"jsonrpc":"2.0","id":1,"result":{"code":5}}\n', [("attr", "acp.outcome", "ok")]),
        (
            b'{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-32800,"message":"Request cancelled"}}\n',
            [("attr", "acp.outcome", "cancelled"), ("attr", "rpc.jsonrpc.error_code", -32800), ("status", ("failed", "cancelled"), None)],
        ),
        (
            b'{"jsonrpc":"2.0","id":"a\\"b","error":{"message":"x","code":-32000}}\n',
            [("attr", "acp.outcome", "error"), ("attr", "rpc.jsonrpc.error_code", -32000), ("status", ("failed", "error"), None)],
        ),
        (
            b'{"jsonrpc":"2.0","id":null,"error":{"code":7,"message":"m"}}\n',
            [("attr", "acp.outcome", "error"), ("attr", "rpc.jsonrpc.error_code", 7), ("status", ("failed", "error"), None)],
        ),
        # not the runtime's own layout: read as answered
        (b'{"id":1,"jsonrpc":"2.0","error":{"code":7,"message":"m"}}\n', [("attr", "acp.outcome", "ok")]),
    ],
)
def test_a_span_of_the_peers_request_reads_its_answer(line: bytes | None, calls: list[Any]) -> None:
    span, rec = recorded()
    span.answered(line)
    assert rec.calls == calls


def test_spans_through_a_given_tracer_or_provider() -> None:
    exporter = InMemorySpanExporter()
    provider = trace_sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel = source.OpenTelemetry(tracer_provider=provider)
    with otel.span("out", "session/new", "x") as ours:
        ours.outcome("ok")
    with pytest.raises(RuntimeError):
        with otel.span("in", "session/prompt", 7) as theirs:
            raise RuntimeError("handler bug")
    mine, peers = exporter.get_finished_spans()
    assert (mine.name, mine.kind, peers.name, peers.kind) == ("session/new", SpanKind.CLIENT, "session/prompt", SpanKind.SERVER)
    assert dict(mine.attributes) == {
        "rpc.system": "jsonrpc",
        "rpc.method": "session/new",
        "rpc.jsonrpc.version": "2.0",
        "rpc.jsonrpc.request_id": '"x"',
        "acp.outcome": "ok",
    }
    assert peers.attributes["rpc.jsonrpc.request_id"] == "7"
    # what escapes a span is recorded by the connection's outcome, not by OpenTelemetry
    assert peers.events == () and peers.status.status_code == StatusCode.UNSET
    assert mine.instrumentation_scope.name == "acp.jsonrpc"
    # a tracer given wins over the provider
    other = InMemorySpanExporter()
    given = trace_sdk.TracerProvider()
    given.add_span_processor(SimpleSpanProcessor(other))
    otel = source.OpenTelemetry(given.get_tracer("mine"), tracer_provider=provider)
    with otel.span("out", "initialize", 0) as span:
        span.outcome("error", -1, "no")
    [done] = other.get_finished_spans()
    assert done.status.status_code == StatusCode.ERROR and done.status.description == "no"
    assert len(exporter.get_finished_spans()) == 2


def test_spans_without_opentelemetry_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(ImportError) as caught:
        source.OpenTelemetry()
    assert str(caught.value) == (
        "OpenTelemetry spans need the package opentelemetry-api: pip install opentelemetry-api (and an SDK to export them)"
    )


@pytest.mark.parametrize(
    ("traffic", "message"),
    [
        (source.Traffic("in", b'{"a":[1]}', 9), {"a": [1]}),
        (source.Traffic("in", b'{"a":[1]}', 9000, False), None),
        (source.Traffic("out", b"{not json", 9), None),
    ],
)
def test_traffic_as_json(traffic: Any, message: Any) -> None:
    assert traffic.message() == message
