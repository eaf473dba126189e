"""The Streamable HTTP client's requests over HTTP/2 (``_curl_wire.py``): a stream read
slowly is paused and holds the server back, a stream left ends at once, an answer over
the body limit fails, and the wires of a loop share one curl multi handle."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ..harness import run
from .harness import served

pytest.importorskip("curl_cffi", reason="the HTTP/2 client needs curl_cffi (pip install 'acpgen[remote]')")
pytest.importorskip("httpx_sse", reason="the Streamable HTTP client needs httpx-sse (pip install 'acpgen[remote]')")

from acpgen.runtime import _curl_wire  # noqa: E402
from acpgen.runtime._curl_wire import CurlWire, WireError, _Multi  # noqa: E402


def _wire() -> CurlWire:
    return CurlWire(5.0, 5.0, secure=False)


def _events_app(count: int, size: int, sent: list[int], ended: asyncio.Event) -> Any:
    """An ASGI app streaming ``count`` events of ``size`` bytes (``sent`` counts them;
    with ``count`` 0 it holds the stream open, sending nothing); ``ended`` is set when
    the stream ends or the client goes away."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        try:
            for i in range(count):
                await send({"type": "http.response.body", "body": f"data: {i} {'x' * size}\n\n".encode(), "more_body": True})
                sent.append(i)
            if count:
                await send({"type": "http.response.body", "body": b""})
            else:
                while (await receive())["type"] != "http.disconnect":
                    pass  # until the client leaves
        finally:
            ended.set()

    return app


async def _plain(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"plain"})


def _recording(seen: list[dict[str, Any]], status: int = 200, body: bytes = b"{}", kind: bytes = b"application/json") -> Any:
    """An ASGI app noting each request (method, HTTP version, headers, body) and
    answering ``status`` with ``body``."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        data = b""
        while True:
            event = await receive()
            data += event.get("body", b"")
            if not event.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        seen.append({"method": scope["method"], "version": scope["http_version"], "headers": headers, "body": data})
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", kind)]})
        await send({"type": "http.response.body", "body": body})

    return app


def test_a_post_sends_its_body_and_headers_and_a_delete_its_method() -> None:
    """Over HTTP/2 with prior knowledge on ``http://`` (and HTTP/1.1 there when the wire
    is for ``https://``, where HTTP/2 comes by ALPN); a fresh wire is not open yet."""

    async def main() -> None:
        seen: list[dict[str, Any]] = []
        async with served(_recording(seen), http2=True) as base:
            wire = _wire()
            assert wire.closed
            try:
                answer = await wire.post(base + "/acp", b'{"x": 1}\x00 after', {"X-Token": "t", "Content-Type": "application/json"})
                assert not wire.closed
                assert (answer.status, answer.body, answer.set_cookies) == (200, b"{}", ())
                assert await wire.delete(base + "/acp", {"X-Token": "u"}) is None
            finally:
                await wire.aclose()
            assert wire.closed
            secure = CurlWire(5.0, 5.0, secure=True)
            try:
                await secure.post(base + "/acp", b"{}", {})
            finally:
                await secure.aclose()
        async with served(_recording(seen)) as base:  # HTTP/1.1, which keeps a method's case
            secure = CurlWire(5.0, 5.0, secure=True)
            try:
                await secure.delete(base + "/acp", {})
            finally:
                await secure.aclose()
        post, delete, tls, delete11 = seen
        assert delete11["method"] == "DELETE"
        assert (post["method"], post["version"], post["body"]) == ("POST", "2", b'{"x": 1}\x00 after')
        assert post["headers"]["x-token"] == "t" and post["headers"]["content-type"] == "application/json"
        assert (delete["method"], delete["version"], delete["body"]) == ("DELETE", "2", b"")
        assert delete["headers"]["x-token"] == "u"
        assert tls["version"] == "1.1"

    run(main(), 30)


def test_the_failures_are_connection_errors_and_timeouts() -> None:
    assert _wire().failures == (WireError, TimeoutError)
    assert issubclass(WireError, ConnectionError)


def test_an_answer_of_exactly_the_body_limit_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_curl_wire, "MAX_BODY", 5000)

    async def main() -> None:
        async with served(_recording([], body=b"y" * 5000), http2=True) as base:
            wire = _wire()
            try:
                answer = await wire.post(base + "/acp", b"{}", {})
                assert answer.body == b"y" * 5000
            finally:
                await wire.aclose()

    run(main(), 30)


def test_answer_headers_are_the_final_ones_and_repeated_names_keep_the_last() -> None:
    headers = _curl_wire._Headers(["Content-Type: a/b", "X-A:  1 ", "x-a: 2", "Set-Cookie: c=1", "set-cookie: d=2; Path=/"])
    assert dict(headers) == {"content-type": "a/b", "x-a": "2", "set-cookie": "d=2; Path=/"}
    assert headers.cookies == ("c=1", "d=2; Path=/")
    assert headers.get("X-A") == "2" and headers["X-A"] == "2" and headers.get("nope", 5) == 5
    assert "CONTENT-TYPE" in headers and 3 not in headers

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 202, "headers": [(b"x-b", b"1X")]})
            await send({"type": "http.response.body", "body": b""})

    async def main() -> None:
        async with served(app, http2=True) as base:
            wire = _wire()
            try:
                answer = await wire.post(base + "/acp", b"{}", {})
                assert answer.status == 202 and answer.headers["x-b"] == "1X"
                assert sorted(answer.headers) == ["date", "server", "x-b"]  # no status line
            finally:
                await wire.aclose()

    run(main(), 30)


def test_a_refused_stream_gives_its_status_and_whole_body_and_no_events() -> None:
    """A refusal's body read in full though the stream holds HOLD chunks at most (the
    paused transfer goes on), and one that never ends given up after post_timeout."""
    big = b"z" * 1_000_000

    async def endless(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b"wait", "more_body": True})
            while (await receive())["type"] != "http.disconnect":
                pass

    async def main() -> None:
        async with served(_recording([], status=404, body=big, kind=b"text/plain"), http2=True) as base:
            wire = _wire()
            try:
                async with wire.stream(base + "/acp", {}, None) as stream:
                    assert (stream.answer.status, stream.answer.body) == (404, big)
                    assert [e async for e in stream.events] == []
            finally:
                await wire.aclose()
        async with served(endless, http2=True) as base:
            wire = CurlWire(5.0, 0.3, secure=False)
            loop = asyncio.get_running_loop()
            began = loop.time()
            try:
                async with wire.stream(base + "/acp", {}, None) as stream:
                    assert (stream.answer.status, stream.answer.body) == (503, b"")
                assert loop.time() - began < 3
            finally:
                await wire.aclose()

    run(main(), 30)


def test_a_stream_that_is_not_an_event_stream_is_refused() -> None:
    async def main() -> None:
        async with served(_recording([]), http2=True) as base:
            wire = _wire()
            try:
                with pytest.raises(ValueError) as wrong:
                    async with wire.stream(base + "/acp", {}, None):
                        pass
                assert str(wrong.value) == "the stream's answer is application/json, not text/event-stream"
                await asyncio.sleep(0.1)
                assert not wire._transfers
            finally:
                await wire.aclose()

    run(main(), 30)


def test_a_stream_gives_its_events_and_ends_with_its_body() -> None:
    async def main() -> None:
        async with served(_events_app(3, 1, [], asyncio.Event()), http2=True) as base:
            wire = _wire()
            try:
                async with wire.stream(base + "/acp", {"X-Token": "t"}, None) as stream:
                    assert stream.answer.headers["content-type"] == "text/event-stream"
                    assert [e async for e in stream.events] == ["0 x", "1 x", "2 x"]
            finally:
                await wire.aclose()

    run(main(), 30)


def test_a_stream_read_when_its_wire_closes_fails() -> None:
    """A reader waiting for a stream's next event when the wire closes: the stream ends
    with the reason (after the events that came)."""

    async def main() -> None:
        async with served(_held_events, http2=True) as base:
            wire = _wire()
            got: list[str] = []

            async def read() -> None:
                async with wire.stream(base + "/acp", {}, None) as stream:
                    async for event in stream.events:
                        got.append(event)

            reader = asyncio.ensure_future(read())
            try:
                for _ in range(50):
                    if got:
                        break
                    await asyncio.sleep(0.05)
            finally:
                await wire.aclose()
            with pytest.raises(WireError) as stopped:
                await asyncio.wait_for(reader, 2)
            assert got == ["1"] and str(stopped.value) == "the request was stopped"

    run(main(), 30)


def _held_stream(first: bytes) -> Any:
    """An event stream app: ``first`` sent, then the stream held open until the client
    leaves."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": first, "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass

    return app


#: one event, then held open
_held_events = _held_stream(b"data: 1\n\n")


def test_a_post_not_answered_fails_within_its_bound_and_one_stopped_says_so() -> None:
    async def mute(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            while (await receive())["type"] != "http.disconnect":
                pass

    async def main() -> None:
        async with served(mute, http2=True) as base:
            wire = CurlWire(0.3, 0.3, secure=False)
            loop = asyncio.get_running_loop()
            began = loop.time()
            try:
                with pytest.raises(WireError, match="timed out"):
                    await wire.post(base + "/acp", b"{}", {})
                assert 0.5 < loop.time() - began < 3
                began = loop.time()
                with pytest.raises(WireError, match="timed out"):
                    await wire.delete(base + "/acp", {})
                assert 0.5 < loop.time() - began < 3
                pending = asyncio.ensure_future(wire.post(base + "/acp", b"{}", {}))
                await asyncio.sleep(0.1)
            finally:
                await wire.aclose()
            with pytest.raises(WireError) as stopped:
                await asyncio.wait_for(pending, 2)
            assert str(stopped.value) == "the request was stopped"
            assert not wire._transfers

    run(main(), 30)


@pytest.mark.parametrize("missing", ["curl_cffi", "curl_cffi.curl"])
def test_the_wire_names_the_packages_it_needs(missing: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from acpgen.runtime._remote import RemoteDependencyError

    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(RemoteDependencyError) as absent:
        _wire()
    assert str(absent.value) == (
        "the ACP remote transport (http2-client) needs the Python package 'curl_cffi',"
        " which is not installed: pip install 'httpx' 'httpx-sse' 'curl_cffi'"
    )


def test_a_stream_silent_past_idle_fails() -> None:
    async def main() -> None:
        async with served(_events_app(0, 0, [], asyncio.Event()), http2=True) as base:
            wire = CurlWire(5.0, 5.0, secure=False, idle=0.3)
            try:
                with pytest.raises(TimeoutError) as silent:
                    async with wire.stream(base + "/acp", {}, None) as stream:
                        await asyncio.wait_for(anext(stream.events), 3)
                assert str(silent.value) == "nothing came on the stream for 0.3 s"
            finally:
                await wire.aclose()

    run(main(), 30)


def test_a_slow_reader_pauses_the_stream_and_holds_at_most_its_bound() -> None:
    """A stream of 20,000 events (20 MB) read slowly: curl holds at most HOLD chunks
    for it, flow control holds the server back (it has sent a few MB, a window's worth,
    while the reader waits at the start; with Hypercorn's stream buffer unmended it
    sends everything), and every event arrives, in order."""

    async def main() -> None:
        sent: list[int] = []
        ended = asyncio.Event()
        async with served(_events_app(20_000, 1000, sent, ended), http2=True) as base:
            wire = _wire()
            try:
                got: list[int] = []
                most = 0
                async with wire.stream(base + "/acp", {}, None) as stream:
                    (transfer,) = wire._transfers
                    async for event in stream.events:
                        got.append(int(event.split()[0]))
                        most = max(most, len(transfer._pending))
                        if len(got) == 100:
                            await asyncio.sleep(1)  # time enough to send it all
                            assert transfer._paused
                            assert len(sent) < 6000, len(sent)
                assert got == list(range(20_000))
                assert most == _curl_wire.HOLD
            finally:
                await wire.aclose()

    run(main(), 60)


def test_leaving_an_idle_stream_ends_it_at_once() -> None:
    """A stream that sends nothing is ended as soon as its reader leaves (curl resets
    it): the server sees the client go, the wire holds no transfer."""

    async def main() -> None:
        ended = asyncio.Event()
        async with served(_events_app(0, 0, [], ended), http2=True) as base:
            wire = _wire()
            try:
                async with wire.stream(base + "/acp", {}, None) as stream:
                    assert stream.answer.status == 200
                await asyncio.wait_for(ended.wait(), 2)
                assert not wire._transfers
            finally:
                await wire.aclose()

    run(main(), 30)


def test_an_answer_over_the_body_limit_fails_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    async def big(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x" * 5000})

    async def parts(scope: Any, receive: Any, send: Any) -> None:
        """The body in parts under the limit, over it together."""
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for _ in range(3):
            await send({"type": "http.response.body", "body": b"x" * 2000, "more_body": True})
            await asyncio.sleep(0.05)
        await send({"type": "http.response.body", "body": b""})

    monkeypatch.setattr(_curl_wire, "MAX_BODY", 4096)

    async def main() -> None:
        async with served(big, http2=True) as base:
            wire = _wire()
            try:
                with pytest.raises(WireError, match="over 4096 bytes"):
                    await wire.post(base + "/acp", b"{}", {})
                monkeypatch.setattr(_curl_wire, "MAX_BODY", 8192)
                answer = await wire.post(base + "/acp", b"{}", {})  # the wire goes on
                assert (answer.status, len(answer.body)) == (200, 5000)
            finally:
                await wire.aclose()
        monkeypatch.setattr(_curl_wire, "MAX_BODY", 4096)
        async with served(parts, http2=True) as base:
            wire = _wire()
            try:
                with pytest.raises(WireError, match="^the answer is over 4096 bytes$"):
                    await wire.post(base + "/acp", b"{}", {})
            finally:
                await wire.aclose()

    run(main(), 30)


def test_headers_are_read_in_any_case_and_cookies_kept_apart() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"application/json"), (b"acp-connection-id", b"c-1"), (b"set-cookie", b"a=1"), (b"set-cookie", b"b=2; Path=/")]
        await send({"type": "http.response.start", "status": 201, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    async def main() -> None:
        async with served(app, http2=True) as base:
            wire = _wire()
            try:
                answer = await wire.post(base + "/acp", b"{}", {"content-type": "application/json"})
                assert (answer.status, answer.body) == (201, b"{}")
                assert answer.headers.get("Acp-Connection-Id") == "c-1" and "CONTENT-TYPE" in answer.headers
                assert answer.set_cookies == ("a=1", "b=2; Path=/")
            finally:
                await wire.aclose()

    run(main(), 30)


def test_the_wires_of_a_loop_share_one_curl_multi_closed_with_the_last() -> None:
    """Two connections' wires share the loop's multi handle (one poll a loop, one
    HTTP/2 connection to a server); it is closed when the last wire closes, and a
    request that cannot connect fails with a ConnectionError (which reconnect retries)."""

    async def main() -> None:
        async with served(_plain, http2=True) as base:
            first, second = _wire(), _wire()
            assert (await first.post(base + "/acp", b"{}", {})).status == 200
            assert (await second.post(base + "/acp", b"{}", {})).status == 200
            loop = asyncio.get_running_loop()
            shared = _Multi._of_loop[loop]
            assert first._multi is second._multi is shared and shared.users == 2
            await first.aclose()
            assert first.closed and _Multi._of_loop[loop] is shared
            await second.aclose()
            assert loop not in _Multi._of_loop and shared.multi._curlm is None
        wire = _wire()
        try:
            with pytest.raises(WireError) as failed:
                await wire.post(base + "/acp", b"{}", {})  # the server is gone
            assert isinstance(failed.value, ConnectionError)
        finally:
            await wire.aclose()

    run(main(), 30)


def test_requests_after_the_servers_keepalive_do_not_fail_on_a_closed_connection() -> None:
    """50 connections' requests at once, then a pause past the server's keep-alive
    (Hypercorn closes a connection idle 5 s): the next requests all succeed. Curl
    neither opened spare connections in the burst (which the server then closes) nor
    sends on a connection idle long enough to be closed ("Send failure: Broken pipe")."""

    async def main() -> None:
        async with served(_plain, http2=True) as base:
            wires = [_wire() for _ in range(50)]
            try:
                answers = await asyncio.gather(*(w.post(base + "/acp", b"{}", {}) for w in wires))
                assert {a.status for a in answers} == {200}
                await asyncio.sleep(6)
                answers = await asyncio.gather(*(w.post(base + "/acp", b"{}", {}) for w in wires))
                assert {a.status for a in answers} == {200}
            finally:
                await asyncio.gather(*(w.aclose() for w in wires))

    run(main(), 60)


#: headers and one comment, then held open
_held = _held_stream(b": open\n\n")


def test_more_streams_at_once_than_the_server_allows_a_connection_all_open() -> None:
    """101 streams asked for at once (50 ACP connections and their first sessions): the
    server allows 100 a connection (Hypercorn's default). Every one is answered: curl
    opens another connection for the 101st instead of queueing it for ever on the
    first, behind 100 streams that never end."""

    async def main() -> None:
        async with served(_held, http2=True) as base:
            wires = [_wire() for _ in range(101)]
            opened: list[int] = []

            async def hold(wire: CurlWire) -> None:
                async with wire.stream(base + "/acp", {}, None) as stream:
                    assert stream.answer.status == 200
                    opened.append(1)
                    await asyncio.sleep(3600)

            holders = [asyncio.ensure_future(hold(w)) for w in wires]
            try:
                for _ in range(100):
                    if len(opened) == len(wires) or any(h.done() for h in holders):
                        break
                    await asyncio.sleep(0.1)
                assert not [h.exception() for h in holders if h.done()]
                assert len(opened) == len(wires)
            finally:
                for holder in holders:
                    holder.cancel()
                await asyncio.gather(*holders, return_exceptions=True)
                await asyncio.gather(*(w.aclose() for w in wires))

    run(main(), 60)


def test_a_stream_never_answered_fails_within_the_bound() -> None:
    """A server that takes a stream's request and never answers it (no status, no
    headers): opening the stream fails with a WireError once open_timeout and
    post_timeout have passed, instead of waiting for ever (a connection's initialize
    would wait on it)."""

    async def mute(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            while (await receive())["type"] != "http.disconnect":
                pass

    async def main() -> None:
        async with served(mute, http2=True) as base:
            wire = CurlWire(0.5, 0.5, secure=False)
            loop = asyncio.get_running_loop()
            began = loop.time()
            try:
                with pytest.raises(WireError, match="no answer"):
                    async with wire.stream(base + "/acp", {}, None):
                        pass
                assert loop.time() - began < 5
            finally:
                await wire.aclose()

    run(main(), 30)



def test_a_post_failing_after_exactly_the_body_limit_says_why_it_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An answer that stops after exactly ``MAX_BODY`` bytes (not over it) and then
    times out fails for its time-out, not for its size."""

    async def stalled(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send(
            {"type": "http.response.body", "body": b"x" * 4096, "more_body": True}
        )
        while (await receive())["type"] != "http.disconnect":
            pass

    monkeypatch.setattr(_curl_wire, "MAX_BODY", 4096)

    async def main() -> None:
        async with served(stalled, http2=True) as base:
            wire = CurlWire(5.0, 0.5, secure=False)
            try:
                with pytest.raises(WireError) as failed:
                    await wire.post(base + "/acp", b"{}", {})
                assert "timed out" in str(failed.value) and "over" not in str(
                    failed.value
                )
            finally:
                await wire.aclose()

    run(main(), 30)


def test_a_refusal_whose_transfer_curl_paused_is_read_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream refused with a body of more than ``HOLD`` chunks, read only once curl has
    paused its transfer (the reader late after the headers): the transfer is resumed and
    the body read in full."""
    big = b"z" * 1_000_000
    paused: list[bool] = []
    head, whole = _curl_wire._Transfer.head, _curl_wire._Transfer.whole

    async def late_head(self: Any) -> Any:
        answer = await head(self)
        for _ in range(100):  # until curl has paused it (HOLD chunks held)
            if self._paused:
                break
            await asyncio.sleep(0.02)
        return answer

    async def noted_whole(self: Any) -> Any:
        paused.append(self._paused)
        return await whole(self)

    monkeypatch.setattr(_curl_wire._Transfer, "head", late_head)
    monkeypatch.setattr(_curl_wire._Transfer, "whole", noted_whole)

    async def main() -> None:
        async with served(
            _recording([], status=404, body=big, kind=b"text/plain"), http2=True
        ) as base:
            wire = _wire()
            try:
                async with wire.stream(base + "/acp", {}, None) as stream:
                    assert (stream.answer.status, stream.answer.body) == (404, big)
            finally:
                await wire.aclose()

    run(main(), 30)
    assert paused == [True]
