"""Transport conformance of the docs' echo agent (``examples/echo_agent.py``) over stdio,
probed the way the public ACP conformance kit probes an agent: a process started with
pipes, raw lines written to its stdin, every line of its stdout read and parsed.

* framing: one JSON-RPC object per line on stdout, nothing else (logs go to stderr); CRLF
  endings, blank lines and a last line without newline accepted on stdin;
* a line that is not JSON is answered -32700 with ``"id": null``; an invalid request
  -32600 (with its id when it could be read); an unknown method -32601; the agent goes on
  serving after each;
* a request whose method starts with ``_`` (an extension) is always answered, with a result
  or -32601, even mid-turn; such a notification never is;
* ``_meta`` passes through. What that means for the echo agent (its module docstring says
  it): ``_meta`` is accepted on every request and content block, and the ``_meta`` of
  ``session/new`` and of ``session/prompt`` (a trace id, say) comes back on the answer and
  on every ``session/update`` of that turn, as received; a request without one gets an
  answer without one;
* the process exits within 1 s after its stdin closes, idle or mid-turn;
* a prompt cancelled by ``session/cancel`` (or ``$/cancel_request``) resolves with
  ``stopReason: "cancelled"``.

The bindings are generated from the schema the TypeScript SDK 2.4.0 ships (skipped, saying
why, without node/npm or the registry).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .peers import StdioPeer, echo_agent_command, env_with, sdk_bindings

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND = -32700, -32600, -32601
SLOW = "slow " + " ".join(str(i) for i in range(50))  # 5 s of echo, one word per 0.1 s


@pytest.fixture(scope="module")
def bindings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sdk_bindings(tmp_path_factory)


@pytest.fixture
def agent(bindings: Path) -> Iterator[StdioPeer]:
    peer = StdioPeer(echo_agent_command(), env_with(bindings))
    try:
        yield peer
    finally:
        peer.stop()


@pytest.fixture(scope="module")
def probed(bindings: Path) -> Iterator[StdioPeer]:
    """One agent for the malformed and invalid frames: it must survive them all, in turn."""
    peer = StdioPeer(echo_agent_command(), env_with(bindings))
    try:
        yield peer
    finally:
        peer.stop()


def _error(response: dict[str, object], code: int) -> None:
    assert set(response) == {"jsonrpc", "id", "error"} and response["jsonrpc"] == "2.0", response
    error = response["error"]
    assert isinstance(error, dict) and error["code"] == code and isinstance(error["message"], str), response


def test_framing_one_json_object_per_line_nothing_else(agent: StdioPeer) -> None:
    sid = agent.start_session()
    answer, updates = agent.answer(agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "a b c"}]}))
    assert answer["result"] == {"stopReason": "end_turn"}
    assert [u["params"]["update"]["content"]["text"] for u in updates] == ["a ", "b ", "c "]
    agent.send_raw(b"{not json")  # the agent logs this one: on stderr
    _error(agent.frame(), PARSE_ERROR)
    agent.close_stdin()
    assert agent.wait(5) == 0
    assert agent.out.next() is None  # the end of stdout: read it all
    lines = agent.out.seen
    assert lines and all(line.endswith(b"\n") for line in lines)
    for line in lines:
        frame = json.loads(line)  # the whole line is one JSON value...
        assert isinstance(frame, dict) and frame["jsonrpc"] == "2.0", line  # ...a JSON-RPC object
        assert b"\n" not in line[:-1] and line.strip() == line[:-1], line
        assert ("method" in frame) != ("id" in frame and ("result" in frame or "error" in frame)), frame
    assert len(lines) == 1 + 1 + 3 + 1 + 1  # initialize, session/new, 3 updates, the answer, -32700


def test_crlf_blank_lines_and_a_last_line_without_newline(agent: StdioPeer) -> None:
    """What clients write besides bare LF lines: CRLF endings and whitespace around a frame
    are accepted, blank lines ignored (never answered), and a last frame with no newline
    before stdin closes is still served."""
    init = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}'
    agent.send_raw(init + b"\r\n\n  \r\n\t\n")
    assert agent.frame()["result"]["protocolVersion"] == 1
    agent.send_raw(b'  {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}} \t\r\n')
    assert agent.frame()["result"]["sessionId"] == "s-1"
    agent.stdin.write(b'{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s-1", "prompt": [{"type": "text", "text": "last"}]}}')
    agent.close_stdin()
    answer, updates = agent.answer(3)
    assert answer["result"] == {"stopReason": "end_turn"} and [u["params"]["update"]["content"]["text"] for u in updates] == ["last "]
    assert agent.wait(5) == 0 and agent.out.next() is None


@pytest.mark.parametrize(
    "line",
    [b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "initialize",', b"\xff\xfe{}", b"}", b"nul"],
    ids=["bad-token", "truncated", "not-utf8", "stray-brace", "bad-literal"],
)
def test_malformed_json_is_answered_parse_error_with_null_id(probed: StdioPeer, line: bytes) -> None:
    probed.send_raw(line)
    response = probed.frame()
    _error(response, PARSE_ERROR)
    assert response["id"] is None
    assert probed.call("initialize", {"protocolVersion": 1})["protocolVersion"] == 1  # still serving


@pytest.mark.parametrize(
    ("frame", "rid"),
    [
        ({"jsonrpc": "1.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}, 7),
        ({"id": 7, "method": "initialize", "params": {"protocolVersion": 1}}, 7),
        ({"jsonrpc": "2.0", "id": 7, "method": 5}, 7),
        ({"jsonrpc": "2.0", "id": {"n": 7}, "method": "initialize", "params": {"protocolVersion": 1}}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {"protocolVersion": 1}}, None),
        ({"jsonrpc": "2.0", "params": {}}, None),
        ({}, None),
        (42, None),
        ("initialize", None),
        (None, None),
        ([], None),
        ([{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}], None),
    ],
    ids=["jsonrpc-1.0", "no-jsonrpc", "method-not-string", "object-id", "boolean-id", "no-method-no-id", "empty-object", "number", "string", "null", "empty-batch", "batch"],
)
def test_invalid_requests_are_answered_invalid_request(probed: StdioPeer, frame: object, rid: object) -> None:
    """v1 declares no batches: an array is one invalid request, answered once."""
    probed.send(frame)  # type: ignore[arg-type]
    response = probed.frame()
    _error(response, INVALID_REQUEST)
    assert response["id"] == rid
    assert probed.call("initialize", {"protocolVersion": 1})["protocolVersion"] == 1
    assert probed.out.quiet(0.1)  # one answer each, nothing more


def test_unknown_methods_are_answered_method_not_found(agent: StdioPeer) -> None:
    agent.start_session()
    for method in ("session/unknown", "fs/read_text_file", "initialize/", "x"):  # fs/...: a client method
        response, before = agent.answer(agent.request(method, {"sessionId": "s-1"}))
        _error(response, METHOD_NOT_FOUND)
        assert before == []
    agent.notify("session/unknown", {})  # a notification is never answered
    assert agent.out.quiet(0.3)


def test_extension_requests_are_always_answered(agent: StdioPeer) -> None:
    """Before initialize, with any params or none, and while a turn streams; params that
    are not structured make it an invalid request, answered as such with its id."""
    for params in ({"a": 1}, [1, 2], None):
        response, _ = agent.answer(agent.request("_acpgen/probe", params))
        assert "result" in response or response["error"]["code"] == METHOD_NOT_FOUND, response
    response, _ = agent.answer(agent.request("_acpgen/probe", "text"))
    _error(response, INVALID_REQUEST)
    sid = agent.start_session()
    turn = agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": SLOW}]})
    assert agent.frame()["method"] == "session/update"
    started = time.monotonic()
    response, before = agent.answer(agent.request("_acpgen/probe", {"during": "turn"}))
    assert time.monotonic() - started < 1.5  # the turn has 5 s to go
    assert "result" in response or response["error"]["code"] == METHOD_NOT_FOUND, response
    assert all(f.get("id") != turn for f in before)  # answered while the turn still runs
    agent.notify("_acpgen/note", {"n": 1})  # an extension notification: never answered
    agent.notify("session/cancel", {"sessionId": sid})
    answer, rest = agent.answer(turn)
    assert answer["result"]["stopReason"] == "cancelled"
    assert all(f.get("method") == "session/update" for f in rest)


def test_meta_is_passed_through(agent: StdioPeer) -> None:
    trace = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "nested": {"list": [1, None, "x"]}}
    init = agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {"_meta": {"x": 1}}, "_meta": trace})
    assert init["protocolVersion"] == 1
    session = agent.call("session/new", {"cwd": "/", "mcpServers": [], "_meta": trace})
    assert session["_meta"] == trace
    prompt = [{"type": "text", "text": "hello meta", "_meta": {"block": True}}]
    answer, updates = agent.answer(agent.request("session/prompt", {"sessionId": session["sessionId"], "prompt": prompt, "_meta": trace}))
    assert answer["result"] == {"stopReason": "end_turn", "_meta": trace}
    assert [u["params"]["_meta"] for u in updates] == [trace, trace]
    # without _meta, none comes back (not even "_meta": null)
    answer, updates = agent.answer(agent.request("session/prompt", {"sessionId": session["sessionId"], "prompt": prompt[:1]}))
    assert answer["result"] == {"stopReason": "end_turn"}
    assert all("_meta" not in u["params"] for u in updates)
    assert "_meta" not in agent.call("session/new", {"cwd": "/", "mcpServers": []})


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "mid-turn"])
def test_exits_within_a_second_after_stdin_closes(agent: StdioPeer, busy: bool) -> None:
    sid = agent.start_session()
    if busy:
        agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": SLOW}]})
        assert agent.frame()["method"] == "session/update"
    closed = time.monotonic()
    agent.close_stdin()
    assert agent.wait(5) == 0
    assert time.monotonic() - closed < 1.0, time.monotonic() - closed
    while (line := agent.out.next()) is not None:  # whatever it still wrote is whole frames
        json.loads(line)
    assert "Traceback" not in agent.stderr_text()


def test_session_cancel_resolves_the_prompt_cancelled(agent: StdioPeer) -> None:
    sid = agent.start_session()
    turn = agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": SLOW}]})
    assert agent.frame()["method"] == "session/update"
    cancelled = time.monotonic()
    agent.notify("session/cancel", {"sessionId": sid})
    answer, updates = agent.answer(turn, timeout=2)
    assert time.monotonic() - cancelled < 1.5  # the turn had 5 s to go
    assert answer["result"] == {"stopReason": "cancelled"}
    assert len(updates) < 5 and all(u["method"] == "session/update" for u in updates)
    assert agent.out.quiet(0.3)  # nothing streams after the answer
    # the session goes on: the next prompt is a whole turn
    answer, updates = agent.answer(agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}))
    assert answer["result"] == {"stopReason": "end_turn"} and len(updates) == 1


def test_cancel_request_answers_the_prompt_at_once(agent: StdioPeer) -> None:
    """``$/cancel_request`` (the protocol-level cancel) cancels the prompt's handler: the echo
    agent ends the turn as ``session/cancel`` does (a handler may answer a cancelled request
    with its result; without one the runtime answers -32800)."""
    sid = agent.start_session()
    turn = agent.request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": SLOW}]})
    assert agent.frame()["method"] == "session/update"
    agent.notify("$/cancel_request", {"requestId": turn})
    answer, _ = agent.answer(turn, timeout=2)
    assert answer.get("result") == {"stopReason": "cancelled"}, answer
    agent.notify("$/cancel_request", {"requestId": 999})  # nothing runs with that id: ignored
    assert agent.out.quiet(0.3)


def test_session_cancel_right_behind_the_prompt(agent: StdioPeer) -> None:
    """A cancel written together with its prompt (one write, both lines read at once) still
    finds the turn: the prompt's handler starts before the notification is handled."""
    sid = agent.start_session()
    prompt = {"jsonrpc": "2.0", "id": 99, "method": "session/prompt", "params": {"sessionId": sid, "prompt": [{"type": "text", "text": SLOW}]}}
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": sid}}
    agent.send_raw(f"{json.dumps(prompt)}\n{json.dumps(cancel)}".encode())
    answer, updates = agent.answer(99, timeout=2)
    assert answer["result"] == {"stopReason": "cancelled"} and len(updates) <= 1


def test_unsolicited_responses_are_never_answered(agent: StdioPeer) -> None:
    """A response to nothing the agent asked (a result, an error) is dropped (logged on
    stderr), never answered: answering a response could start an endless exchange."""
    agent.send({"jsonrpc": "2.0", "id": 42, "result": {}})
    agent.send({"jsonrpc": "2.0", "id": "x", "error": {"code": -32603, "message": "Internal error"}})
    assert agent.out.quiet(0.3)
    assert agent.call("initialize", {"protocolVersion": 1})["protocolVersion"] == 1
