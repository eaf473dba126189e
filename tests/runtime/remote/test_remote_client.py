"""The shared remote client (``_remote_client``) alone, with the transports and the
connection played here (no network): ``connect_url``'s choice of transport by the URL's
scheme, ``reconnect``'s checks, attempts, waits and restored sessions, and which failures
are worth trying again."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from acpgen.runtime import _remote_client
from acpgen.runtime._frames import RemoteError
from acpgen.runtime._remote import RefusedError
from acpgen.runtime._remote_client import (
    Reconnected,
    RemoteInfo,
    SessionLoadUnsupportedError,
    connect_url,
    reconnect,
)

URL = "http://agent.test/acp"


def go(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 10))


class Typed:
    """A value the fake codec loaded: the type it was loaded as and the wire form."""

    def __init__(self, kind: str, value: Any) -> None:
        self.kind, self.value = kind, value

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Typed) and (self.kind, self.value) == (
            other.kind,
            other.value,
        )

    def __repr__(self) -> str:
        return f"Typed({self.kind!r}, {self.value!r})"


class Spec:
    def __init__(self, params: Any) -> None:
        self.params = params


class Codec:
    def load(self, kind: str, value: Any) -> Any:
        return Typed(kind, value)

    def dump(self, value: Any) -> Any:
        return value.value if isinstance(value, Typed) else value


class FakeRpc:
    """An RPC whose methods are ``initialize`` and, unless ``load`` is False,
    ``session/load``; ``untyped`` names a method whose params have no type."""

    def __init__(self, load: bool = True, untyped: str = "") -> None:
        self.codec = Codec()
        self.methods = {"initialize": Spec("InitializeRequest")}
        if load:
            self.methods["session/load"] = Spec("LoadSessionRequest")
        if untyped:
            self.methods[untyped] = Spec(None)

    def spec(self, method: str) -> Any:
        return self.methods.get(method)

    def session_of(self, method: str, kind: str, params: Any) -> Any:
        assert (method, kind) == ("session/load", "request")
        value = params.value if isinstance(params, Typed) else params
        return value.get("sessionId") if isinstance(value, dict) else None


class FakeConn:
    """A connection whose answers the test gives: ``answers[method]`` (a value, an
    exception raised, or a function of the params)."""

    def __init__(self, rpc: Any, answers: dict[str, Any]) -> None:
        self.rpc = rpc
        self.remote: Any = None
        self.answers = answers
        self.handler: Any = None
        self.requests: list[tuple[str, Any]] = []
        self.closed: str | None = None

    def start(self, handler: Any) -> None:
        self.handler = handler

    async def request(self, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        answer = self.answers[method]
        if callable(answer) and not isinstance(answer, type):
            answer = answer(params)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def close(self, reason: str = "") -> None:
        self.closed = reason


CAN_LOAD = {"agentCapabilities": {"loadSession": True}}


class Agent:
    """What ``connect_url`` reaches, attempt after attempt: ``failures`` raised first (one
    an attempt), then connections answering ``answers``."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, *failures: BaseException, **answers: Any
    ) -> None:
        self.failures = list(failures)
        self.answers = {
            "initialize": CAN_LOAD,
            **{k.replace("_", "/"): v for k, v in answers.items()},
        }
        self.calls: list[tuple[Any, str, dict[str, Any]]] = []
        self.conns: list[FakeConn] = []
        self.waits: list[float] = []
        self.spans: list[tuple[float, float]] = []
        monkeypatch.setattr(_remote_client, "connect_url", self.connect)
        monkeypatch.setattr(_remote_client.random, "uniform", self.uniform)
        monkeypatch.setattr(_remote_client.asyncio, "sleep", self.sleep)

    async def connect(self, rpc: Any, url: str, **options: Any) -> Any:
        self.calls.append((rpc, url, options))
        if self.failures:
            raise self.failures.pop(0)
        conn = FakeConn(rpc, self.answers)
        self.conns.append(conn)
        return conn

    def uniform(self, a: float, b: float) -> float:
        self.spans.append((a, b))
        return 0.75

    async def sleep(self, delay: float) -> None:
        self.waits.append(delay)


def info(**kw: Any) -> RemoteInfo:
    return RemoteInfo(URL, "c-1", **kw)


def test_remote_info_defaults() -> None:
    one, two = RemoteInfo(URL), RemoteInfo(URL)
    assert (one.url, one.connection_id, one.headers, one.cookies) == (URL, "", {}, {})
    one.headers["a"] = "1"
    one.cookies["b"] = "2"
    assert two.headers == {} and two.cookies == {}
    done = Reconnected("conn", "init")
    assert (done.loaded, done.failed, done.attempts) == ({}, {}, 1)
    done.loaded["x"] = 1
    assert Reconnected("conn", "init").loaded == {}


@pytest.mark.parametrize(
    "url, module, name",
    [
        ("ws://h/acp", "_ws_client", "connect_websocket"),
        ("WSS://h/acp", "_ws_client", "connect_websocket"),
        ("http://h/acp", "_http_client", "connect_http"),
        ("HTTPS://h/acp", "_http_client", "connect_http"),
        ("http://h:8080/acp", "_http_client", "connect_http"),
        ("ws://user:pw@h:8080/acp", "_ws_client", "connect_websocket"),
    ],
)
def test_connect_url_picks_the_transport_by_scheme(
    monkeypatch: pytest.MonkeyPatch, url: str, module: str, name: str
) -> None:
    import importlib

    calls: list[tuple[Any, ...]] = []

    async def fake(rpc: Any, url: str, **kw: Any) -> str:
        calls.append((rpc, url, kw))
        return "conn"

    target = importlib.import_module(f"acpgen.runtime.{module}")
    monkeypatch.setattr(target, name, fake)
    assert (
        go(
            connect_url(
                "rpc", url, headers={"h": "1"}, cookies={"c": "2"}, max_queued=3
            )
        )
        == "conn"
    )
    expected: dict[str, Any] = {
        "side": "client",
        "headers": {"h": "1"},
        "cookies": {"c": "2"},
        "max_queued": 3,
    }
    if module == "_http_client":
        expected["http2"] = False
    assert calls == [("rpc", url, expected)]
    calls.clear()
    go(connect_url("rpc", url, side="agent", http2=True))
    expected = {"side": "agent", "headers": None, "cookies": None}
    if module == "_http_client":
        expected["http2"] = True
    assert calls == [("rpc", url, expected)]


@pytest.mark.parametrize("url", ["ftp://h/acp", "h/acp", "wsx://h", "http2://h"])
def test_connect_url_refuses_other_schemes(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        go(connect_url("rpc", url))
    assert (
        str(refused.value)
        == f"no ACP transport for {url!r}: use ws://, wss://, http:// or https://"
    )


def test_reconnect_checks_its_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = Agent(monkeypatch)
    rpc = FakeRpc()
    message = "attempts must be >= 1, backoff and max_backoff >= 0"
    for bad in ({"attempts": 0}, {"backoff": -0.1}, {"max_backoff": -1.0}):
        with pytest.raises(ValueError) as refused:
            go(reconnect(info(), None, initialize={}, rpc=rpc, **bad))
        assert str(refused.value) == message
    # the bounds themselves are fine
    go(
        reconnect(
            info(), None, initialize={}, rpc=rpc, attempts=1, backoff=0, max_backoff=0
        )
    )

    class Plain:
        remote = None
        rpc = FakeRpc()

    with pytest.raises(TypeError) as refused:
        go(reconnect(Plain(), None, initialize={}))  # type: ignore[arg-type]
    assert (
        str(refused.value)
        == "reconnect needs a connection made by connect_url (or its RemoteInfo)"
    )
    with pytest.raises(TypeError) as refused:
        go(reconnect(info(), None, initialize={}))
    assert (
        str(refused.value)
        == "reconnect from a RemoteInfo needs rpc= (the module's RPC)"
    )
    with pytest.raises(SessionLoadUnsupportedError) as refused:
        go(reconnect(info(), None, initialize={}, rpc=FakeRpc(load=False)))
    assert (
        str(refused.value)
        == "this module's protocol has no session/load: reconnect follows protocol v1's recipe"
    )
    assert len(agent.calls) == 1


def test_reconnect_from_a_connection_takes_its_rpc_url_headers_and_cookies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = Agent(
        monkeypatch, session_load=lambda params: {"history": params.value["sessionId"]}
    )
    rpc = FakeRpc()

    class Lost:
        pass

    lost = Lost()
    lost.rpc = rpc  # type: ignore[attr-defined]
    lost.remote = RemoteInfo(  # type: ignore[attr-defined]
        URL, "c-1", {"authorization": "old", "x-keep": "1"}, {"lb": "a"}
    )
    served: list[Any] = []

    def handler(conn: Any) -> str:
        served.append(conn)
        return "client"

    done = go(
        reconnect(
            lost,  # type: ignore[arg-type]
            handler,
            initialize={"protocolVersion": 1},
            sessions=[
                {"sessionId": "s1"},
                Typed("LoadSessionRequest", {"sessionId": "s2"}),
            ],
            headers={"authorization": "new"},
            http2=True,
        )
    )
    ((called_rpc, url, options),) = agent.calls
    assert called_rpc is rpc and url == URL
    assert options == {
        "headers": {"authorization": "new", "x-keep": "1"},
        "cookies": {"lb": "a"},
        "http2": True,
    }
    conn = agent.conns[0]
    assert done.conn is conn and served == [conn] and conn.handler == "client"
    assert done.initialized == CAN_LOAD and done.attempts == 1
    assert conn.requests == [
        ("initialize", Typed("InitializeRequest", {"protocolVersion": 1})),
        ("session/load", Typed("LoadSessionRequest", {"sessionId": "s1"})),
        ("session/load", Typed("LoadSessionRequest", {"sessionId": "s2"})),
    ]
    assert done.loaded == {"s1": {"history": "s1"}, "s2": {"history": "s2"}}
    assert done.failed == {} and conn.closed is None
    assert lost.remote.headers == {"authorization": "old", "x-keep": "1"}  # type: ignore[attr-defined]


def test_a_handler_that_is_not_a_function_is_served_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = Agent(monkeypatch)
    handler = object()
    done = go(
        reconnect(
            info(), handler, initialize=Typed("InitializeRequest", {}), rpc=FakeRpc()
        )
    )
    assert agent.conns[0].handler is handler
    # no sessions: nothing checked, nothing loaded
    assert done.loaded == {} and agent.conns[0].requests == [
        ("initialize", Typed("InitializeRequest", {}))
    ]
    # params of a method without a type stay as they are
    assert _remote_client._typed(FakeRpc(untyped="x"), "x", {"a": 1}) == {"a": 1}
    assert _remote_client._typed(FakeRpc(), "nothing", {"a": 1}) == {"a": 1}
    assert _remote_client._typed(FakeRpc(), "initialize", ["a"]) == ["a"]


def test_sessions_the_agent_refuses_are_reported_the_others_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gone = RemoteError(-32002, "no such session", method="session/load", id=2)

    def load(params: Any) -> Any:
        return gone if params.value.get("sessionId") == "s2" else "ok"

    Agent(monkeypatch, session_load=load)
    done = go(
        reconnect(
            info(),
            None,
            initialize={},
            rpc=FakeRpc(),
            sessions=[{"sessionId": "s1"}, {"sessionId": "s2"}, {"other": 1}],
        )
    )
    assert done.loaded == {"s1": "ok", "": "ok"} and done.failed == {"s2": gone}


def test_a_load_that_fails_otherwise_closes_the_new_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = Agent(monkeypatch, session_load=lambda params: ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        go(
            reconnect(
                info(),
                None,
                initialize={},
                rpc=FakeRpc(),
                sessions=[{"sessionId": "s1"}],
                attempts=3,
            )
        )
    assert len(agent.calls) == 1 and agent.conns[0].closed == "the reconnect failed"
    # a failure to connect that is not transient: raised at once
    agent = Agent(monkeypatch, KeyError("x"))
    with pytest.raises(KeyError):
        go(reconnect(info(), None, initialize={}, rpc=FakeRpc(), attempts=3))
    assert len(agent.calls) == 1


@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"agentCapabilities": None},
        {"agentCapabilities": {}},
        {"agentCapabilities": {"loadSession": 1}},
        {"agentCapabilities": {"loadSession": False}},
        ["agentCapabilities"],
    ],
)
def test_an_agent_without_load_session_is_refused_and_not_tried_again(
    monkeypatch: pytest.MonkeyPatch, answer: Any
) -> None:
    agent = Agent(monkeypatch, initialize=answer)
    with pytest.raises(SessionLoadUnsupportedError) as refused:
        go(
            reconnect(
                info(),
                None,
                initialize={},
                rpc=FakeRpc(),
                sessions=[{"sessionId": "s1"}],
                attempts=3,
            )
        )
    assert str(refused.value) == (
        f"the agent at {URL} does not offer session/load (no loadSession capability):"
        " its sessions cannot be restored on a new connection"
    )
    assert len(agent.calls) == 1 and agent.conns[0].closed == "the reconnect failed"
    assert agent.conns[0].requests == [("initialize", Typed("InitializeRequest", {}))]


def test_transient_failures_are_tried_again_with_waits_that_double(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    failures = [
        RefusedError(URL, 503),
        ConnectionResetError("reset"),
        asyncio.TimeoutError(),
        EOFError(),
        OSError("x"),
    ]
    agent = Agent(monkeypatch, *failures)
    with caplog.at_level(logging.INFO, logger="acpgen.runtime._remote_client"):
        done = go(
            reconnect(
                info(),
                None,
                initialize={},
                rpc=FakeRpc(),
                attempts=6,
                backoff=0.5,
                max_backoff=3.0,
            )
        )
    assert done.attempts == 6 and len(agent.calls) == 6
    assert agent.waits == [0.375, 0.75, 1.5, 2.25, 2.25]  # 0.5 s doubled, up to 3 s
    assert agent.spans == [(0.5, 1.0)] * 5  # jitter: half the wait to all of it
    assert caplog.records[1].getMessage() == (
        f"reconnect to {URL}: attempt 2 failed ({failures[1]!r}): again in 0.75 s"
    )
    assert [r.getMessage().split(": attempt ")[1][:1] for r in caplog.records] == [
        "1",
        "2",
        "3",
        "4",
        "5",
    ]
    # the last attempt's failure is raised
    agent = Agent(monkeypatch, OSError("a"), OSError("b"))
    with pytest.raises(OSError, match="^b$"):
        go(
            reconnect(
                info(), None, initialize={}, rpc=FakeRpc(), attempts=2, backoff=0.1
            )
        )
    assert agent.waits == [pytest.approx(0.075)]
    # by default: one attempt; the waits, doubled, stop at 10 s
    agent = Agent(monkeypatch, OSError("a"))
    with pytest.raises(OSError, match="^a$"):
        go(reconnect(info(), None, initialize={}, rpc=FakeRpc()))
    assert len(agent.calls) == 1
    agent = Agent(monkeypatch, OSError("a"), OSError("b"), OSError("c"))
    go(reconnect(info(), None, initialize={}, rpc=FakeRpc(), attempts=4, backoff=6.0))
    assert agent.waits == [4.5, 7.5, 7.5]
    # a failure that is not transient: raised at once
    agent = Agent(monkeypatch, RefusedError(URL, 401), OSError("never"))
    with pytest.raises(RefusedError):
        go(reconnect(info(), None, initialize={}, rpc=FakeRpc(), attempts=5))
    assert len(agent.calls) == 1 and agent.waits == []
    # the new connection lost while initializing: closed, tried again
    agent = Agent(monkeypatch)
    answers = [ConnectionResetError("lost"), CAN_LOAD]
    agent.answers["initialize"] = lambda params: answers.pop(0)
    done = go(reconnect(info(), None, initialize={}, rpc=FakeRpc(), attempts=2))
    assert done.attempts == 2 and agent.conns[0].closed == "the reconnect failed"
    assert agent.conns[1].closed is None and agent.waits == [0.375]


class _Response:
    def __init__(self, status: Any) -> None:
        self.status_code = status


def _error(module: str, name: str) -> BaseException:
    klass = type(name, (Exception,), {"__module__": module})
    return klass("x")


@pytest.mark.parametrize(
    "exc, transient",
    [
        (RefusedError(URL, 503), True),
        (RefusedError(URL, 401), False),
        (RefusedError(URL, 404), False),
        (OSError("refused"), True),
        (ConnectionRefusedError(), True),
        (asyncio.TimeoutError(), True),
        (EOFError(), True),
        (ValueError("x"), False),
        (KeyError("x"), False),
        (_error("websockets.exceptions", "InvalidHandshake"), True),
        (_error("websockets", "InvalidMessage"), True),
        (_error("httpx", "TransportError"), True),
        (_error("httpcore._exceptions", "TransportError"), True),
        (_error("h11._util", "InvalidMessage"), True),
        (_error("h2.exceptions", "InvalidHandshake"), True),
        (_error("mine", "InvalidHandshake"), False),
        (_error("websocketsx", "InvalidHandshake"), False),
        (_error("websockets", "ConnectionClosed"), False),
    ],
)
def test_which_failures_are_worth_trying_again(
    exc: BaseException, transient: bool
) -> None:
    assert _remote_client._transient(exc) is transient


@pytest.mark.parametrize(
    "status",
    sorted(_remote_client._TRANSIENT_STATUSES) + [400, 401, 403, 404, 501, 505],
)
def test_statuses_worth_trying_again(status: int) -> None:
    transient = status in (408, 425, 429, 500, 502, 503, 504)
    assert _remote_client._transient(RefusedError(URL, status)) is transient
    wrapped = RuntimeError("closed")
    wrapped.__cause__ = RefusedError(URL, status)
    assert _remote_client._transient(wrapped) is transient
    library = ValueError("http")
    library.response = _Response(status)  # type: ignore[attr-defined]
    assert _remote_client._transient(library) is transient
    # a library's status error is read by its status, whatever its class
    failed = OSError("http")
    failed.response = _Response(status)  # type: ignore[attr-defined]
    assert _remote_client._transient(failed) is transient


def test_a_subclass_of_a_library_failure_is_transient_and_a_status_that_is_not_a_number_is_not_read() -> (
    None
):
    base = type("TransportError", (Exception,), {"__module__": "httpx"})
    child = type("ConnectTimeout", (base,), {"__module__": "httpx"})
    assert _remote_client._transient(child("x"))
    odd = ValueError("x")
    odd.response = _Response("503")  # type: ignore[attr-defined]
    assert not _remote_client._transient(odd)
    cause = ValueError("y")
    cause.__cause__ = OSError("z")  # only a refusal is read through the cause
    assert not _remote_client._transient(cause)
