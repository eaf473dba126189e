"""Past one process, with real parts started here: two agent server processes (the echo
agent with its sessions in one SQLite file, ``examples/session_store.py``, each served by
uvicorn on its own loopback port), Debian's HAProxy in front of them with cookie
stickiness, and 200 concurrent remote clients, each running a whole turn. One server is
killed (SIGKILL) mid-turn: its clients' pending ``session/prompt`` fail at once with
``ConnectionClosedError``; they reconnect through HAProxy (their cookie names the dead
server: HAProxy redispatches), land on the survivor, ``session/load`` restores each
session from the store (mode, and the conversation so far replayed), and a new prompt
completes. The survivor's clients finish their turn undisturbed. Over WebSocket, and over
Streamable HTTP (HAProxy's cookie then has to come back on every POST and GET of a
connection: a request landing on the other server would be answered 404).

Skipped, saying why, when HAProxy is absent (``.ci/run`` installs Debian's package).
The timings are printed (``-s`` shows them): kill to every pending prompt failed, the
reconnects, the whole scenario.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest

from ...conftest import import_file
from ..peers import EXAMPLES, ROOT, sdk_bindings
from . import harness  # noqa: F401 - skips without the remote libraries

CLIENTS = 200
WORDS = 80  # the first turn: "slow" and 80 words, one every 0.1 s (8 s)
SLOW = "slow " + " ".join(f"w{i}" for i in range(WORDS))
BOUND = 90.0  # seconds, the whole scenario
#: seconds from the kill to the last pending prompt failed, beyond how late this process's
#: loop runs (see below)
FAIL_FAST = {"ws": 1.0, "http": 2.0}

SERVER = """
import asyncio, sys
from acp_pydantic import v1
from acp_pydantic._remote_server import run_server
import session_store

db, name = sys.argv[1], sys.argv[2]
app = v1.RPC.asgi_app(session_store.versions(session_store.SqliteStore(db)))
asyncio.run(run_server(app, "127.0.0.1", 0, started=lambda port: print(name, port, flush=True)))
"""

HAPROXY = """
global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # a WebSocket (or a long SSE stream) is a tunnel once upgraded: no idle cut
    timeout tunnel 1h
    timeout client-fin 5s
    timeout http-request 10s
    # a server refusing connections (down, not yet seen so by the checks) is tried
    # again, and on each retry another server is chosen, whatever the cookie says
    retries 3
    option redispatch 1

frontend acp
    # a socket the test bound and passes on: no port to race for between picking and binding
    bind fd@{fd}
    default_backend agents

backend agents
    balance roundrobin
    cookie SRV insert indirect nocache
    server a 127.0.0.1:{a} cookie a check inter 300ms fall 1 rise 2
    server b 127.0.0.1:{b} cookie b check inter 300ms fall 1 rise 2
"""


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.access(p, os.X_OK)), None
    )
    if found is None:
        pytest.skip("HAProxy is absent (Debian: apt-get install haproxy; .ci/run installs it)")
    return found


def listener() -> socket.socket:
    """A loopback socket bound to a free port and listening, for HAProxy to inherit."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port} after {timeout} s")


@dataclass
class Cluster:
    address: str  # host:port/acp of HAProxy
    servers: dict[str, subprocess.Popen[bytes]]
    logs: Path
    db: Path

    def stderr(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.logs.glob("*.log")))


@pytest.fixture
def cluster(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    haproxy = haproxy_binary()
    bindings = sdk_bindings(tmp_path_factory)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=os.pathsep.join([str(bindings), str(EXAMPLES)]), PYTHONUNBUFFERED="1")
    db = tmp_path / "sessions.db"
    started: list[subprocess.Popen[bytes]] = []
    servers: dict[str, subprocess.Popen[bytes]] = {}
    ports: dict[str, int] = {}
    try:
        for name in ("a", "b"):
            proc = subprocess.Popen(
                [sys.executable, "-c", SERVER, str(db), name],
                env=env, stdout=subprocess.PIPE, stderr=(tmp_path / f"{name}.log").open("wb"),
            )  # fmt: skip
            started.append(proc)
            servers[name] = proc
        for name, proc in servers.items():
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            line = proc.stdout.readline().decode().split() if ready else []  # "a 41234" once it listens
            assert line and line[0] == name, (tmp_path / f"{name}.log").read_text()
            ports[name] = int(line[1])
        front = listener()
        port = int(front.getsockname()[1])
        config = tmp_path / "haproxy.cfg"
        config.write_text(HAPROXY.format(fd=front.fileno(), a=ports["a"], b=ports["b"]))
        check = subprocess.run([haproxy, "-c", "-f", str(config)], capture_output=True, text=True, pass_fds=[front.fileno()])
        assert check.returncode == 0, check.stdout + check.stderr
        proxy = subprocess.Popen(
            [haproxy, "-db", "-f", str(config)], pass_fds=[front.fileno()],
            stdout=subprocess.DEVNULL, stderr=(tmp_path / "haproxy.log").open("wb"),
        )  # fmt: skip
        front.close()  # HAProxy has its own descriptor of it
        started.append(proxy)
        wait_listening(port, proxy)
        time.sleep(0.7)  # the first health checks: both servers up
        assert proxy.poll() is None, (tmp_path / "haproxy.log").read_text()
        yield Cluster(f"127.0.0.1:{port}/acp", servers, tmp_path, db)
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.terminate()
        for proc in started:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


class Recorder:
    """The client: the text of every update, in order, and whether the turn streams."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.streaming = asyncio.Event()

    async def session_update(self, params: Any) -> None:
        self.texts.append(params.update.content.text)
        self.streaming.set()


@dataclass
class Outcome:
    server: str = ""  # the sticky cookie's value: the server it landed on first
    failed_at: float | None = None  # when the first turn failed (the killed server's)
    reconnect: float | None = None  # seconds reconnect() took
    attempts: int = 0
    landed: str = ""  # the server it reconnected to
    replayed: list[str] = field(default_factory=list)
    mode: str = ""
    done: bool = False
    ready: asyncio.Event = field(default_factory=asyncio.Event)  # its session made
    streaming: asyncio.Event | None = None  # its first turn streaming


async def one_client(
    v1: ModuleType, closed: type[Exception], url: str, go: asyncio.Event, outcome: Outcome
) -> None:
    acp = importlib.import_module(v1.__package__)
    conn = await v1.RPC.connect_url(url)
    recorder = Recorder()
    conn.start(recorder)
    agent = v1.RemoteAgent(conn)
    init = v1.InitializeRequest(protocol_version=v1.PROTOCOL_VERSION)
    await agent.initialize(init)
    session = await agent.session_new(v1.NewSessionRequest(cwd=str(ROOT), mcp_servers=[]))
    sid = session.session_id
    outcome.server = conn.remote.cookies.get("SRV", "")  # set on the WebSocket's 101, or initialize's answer
    await agent.session_set_mode(v1.SetSessionModeRequest(session_id=sid, mode_id="code"))
    outcome.ready.set()
    await go.wait()  # every client has its session: the turns start together
    turn = asyncio.ensure_future(
        agent.session_prompt(v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text=SLOW)]))
    )
    outcome.streaming = recorder.streaming
    ended: list[float] = []  # when the prompt failed (not when this coroutine gets to run)
    turn.add_done_callback(lambda _: ended.append(time.monotonic()))
    try:
        result = await turn
    except closed:
        outcome.failed_at = ended[0]
    else:
        assert result.stop_reason == "end_turn" and len(recorder.texts) == WORDS + 1
        await conn.close()
        outcome.done = True
        return
    started = time.monotonic()
    replay = Recorder()
    load = v1.LoadSessionRequest(session_id=sid, cwd=str(ROOT), mcp_servers=[])
    again = await acp.reconnect(conn, replay, initialize=init, sessions=[load], attempts=6, backoff=0.2)
    outcome.reconnect = time.monotonic() - started
    assert not again.failed, f"the survivor could not load {sid}: {again.failed}"
    outcome.attempts = again.attempts
    outcome.landed = again.conn.remote.cookies.get("SRV", "")
    outcome.mode = again.loaded[sid].modes.current_mode_id
    agent = v1.RemoteAgent(again.conn)
    result = await agent.session_prompt(v1.PromptRequest(session_id=sid, prompt=[v1.TextContentBlock(text="after the kill")]))
    assert result.stop_reason == "end_turn" and replay.texts[-3:] == ["after ", "the ", "kill "]
    outcome.replayed = list(replay.texts)
    await again.conn.close()
    outcome.done = True


@pytest.mark.parametrize("scheme", ["ws", "http"], ids=["websocket", "streamable-http"])
def test_two_servers_behind_haproxy_one_killed_mid_turn(
    scheme: str, cluster: Cluster, tmp_path_factory: pytest.TempPathFactory
) -> None:
    v1 = import_file(sdk_bindings(tmp_path_factory) / "acp_pydantic" / "v1.py")
    closed = importlib.import_module(v1.__package__).ConnectionClosedError
    if scheme == "http" and not hasattr(importlib.import_module(v1.__package__ + "._http_client"), "connect_http"):
        pytest.skip("this build has no Streamable HTTP client yet (_http_client.connect_http)")

    async def scenario() -> dict[str, float]:
        began = time.monotonic()
        outcomes = [Outcome() for _ in range(CLIENTS)]
        go = asyncio.Event()
        lags: list[float] = []  # how late this process's loop runs a 10 ms timer

        async def watch_loop() -> None:
            while True:
                before = time.monotonic()
                await asyncio.sleep(0.01)
                lags.append(time.monotonic() - before - 0.01)

        watcher = asyncio.ensure_future(watch_loop())
        tasks = [asyncio.ensure_future(one_client(v1, closed, f"{scheme}://{cluster.address}", go, o)) for o in outcomes]

        async def all_of(events: list[asyncio.Event]) -> None:
            for event in events:
                await event.wait()

        async def all_streaming() -> None:
            while any(o.streaming is None for o in outcomes):
                await asyncio.sleep(0.01)
            await all_of([o.streaming for o in outcomes if o.streaming is not None])

        await asyncio.wait_for(all_of([o.ready for o in outcomes]), 40)
        setup = time.monotonic() - began
        on = {name: sum(o.server == name for o in outcomes) for name in ("a", "b")}
        assert on["a"] + on["b"] == CLIENTS and min(on.values()) > CLIENTS // 4, on  # balanced, sticky
        go.set()
        await asyncio.wait_for(all_streaming(), 20)  # every turn under way (8 s each)
        assert not any(o.done for o in outcomes)
        streaming = time.monotonic() - began - setup
        lags.clear()
        killed = time.monotonic()
        cluster.servers["a"].send_signal(signal.SIGKILL)
        done, pending = await asyncio.wait(tasks, timeout=BOUND - (killed - began))
        for task in pending:
            task.cancel()
        errors = [t.exception() for t in done if t.exception() is not None]
        assert not pending and not errors, (len(pending), errors[:3], cluster.stderr())
        finished = time.monotonic()
        watcher.cancel()
        lost = [o for o in outcomes if o.failed_at is not None]
        # exactly the killed server's clients failed, and each came back on the survivor
        assert {o.server for o in lost} == {"a"} and len(lost) == on["a"]
        assert all(o.done for o in outcomes)
        for o in lost:
            assert o.landed == "b" and o.mode == "code"
            assert o.replayed[0] == SLOW  # the user's message of the cut turn, from the store
            assert o.replayed[1:] == ["after ", "the ", "kill "]  # then the new turn
        failed = sorted(o.failed_at - killed for o in lost if o.failed_at is not None)
        reconnects = sorted(o.reconnect for o in lost if o.reconnect is not None)
        return {
            "clients": CLIENTS,
            "on a (killed)": on["a"],
            "setup s": setup,
            "all streaming s": streaming,
            "kill to first failed s": failed[0],
            "kill to median failed s": statistics.median(failed),
            "kill to all pending failed s": failed[-1],
            "reconnect median s": statistics.median(reconnects),
            "reconnect max s": reconnects[-1],
            "reconnect attempts max": max(o.attempts for o in lost),
            "clients' loop lag max s": max(lags),
            "kill to all done s": finished - killed,
            "total s": finished - began,
        }

    measured = asyncio.run(asyncio.wait_for(scenario(), BOUND))
    print("\nscale-out:", ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in measured.items()))
    # fast: long before any timeout would tell (keepalives come every 15 s, HAProxy's
    # timeouts are 60 s; without the drop seen, a prompt would wait for ever). Over
    # WebSocket the last of 100 fails within 0.05-0.15 s; over Streamable HTTP within
    # 2-4.7 s, because the 200 clients of this one process keep its loop busy (httpx and
    # SSE parsing: its timers run 1.3-4.2 s late, against 0.03-0.3 s with WebSocket), so
    # the later failures wait their turn: the bound is on top of that lateness
    lateness = measured["clients' loop lag max s"]
    assert measured["kill to all pending failed s"] < FAIL_FAST[scheme] + lateness
    # the cookie named the dead server: HAProxy redispatched at once (without `option
    # redispatch`, the first attempt gets a 503 and only a retry after the health check
    # marked the server down succeeds)
    assert measured["reconnect attempts max"] == 1
    assert measured["total s"] < BOUND
