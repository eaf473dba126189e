"""The Streamable HTTP client's requests (``_http_wire.py``): the cookies it keeps from
``Set-Cookie`` headers, the events it decodes from a stream however the bytes are cut,
and a stream that is not one refused with a clear reason, through both libraries."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest

from ..harness import run
from .harness import served

pytest.importorskip("aiohttp", reason="the Streamable HTTP client needs aiohttp (pip install 'acpgen[remote]')")
pytest.importorskip("httpx_sse", reason="the Streamable HTTP client needs httpx-sse (pip install 'acpgen[remote]')")

from acpgen.runtime._curl_wire import CurlWire  # noqa: E402
from acpgen.runtime._http_wire import AiohttpWire, _decoded, cookie_header, take_cookies  # noqa: E402

URL = "http://balancer.example/acp"


def test_a_cookie_set_is_kept_and_replaces_one_of_its_name() -> None:
    jar = {"given": "1", "SERVERID": "old"}
    take_cookies(jar, URL, ["SERVERID=s2; Path=/; HttpOnly", "lang=en; Max-Age=3600"])
    assert jar == {"given": "1", "SERVERID": "s2", "lang": "en"}
    assert cookie_header(jar) == "given=1; SERVERID=s2; lang=en"


def test_a_cookie_expired_or_of_another_path_is_not_kept() -> None:
    jar = {"a": "1", "b": "2", "c": "3"}
    take_cookies(
        jar,
        URL,
        [
            "a=gone; Max-Age=0",
            "b=gone; Expires=Wed, 21 Oct 2015 07:28:00 GMT",
            "d=elsewhere; Path=/other",
            "e=here; Path=/acp",
            "f=future; Expires=Fri, 01 Jan 2100 00:00:00 GMT",
        ],
    )
    assert jar == {"c": "3", "e": "here", "f": "future"}


def test_a_set_cookie_that_cannot_be_read_is_skipped() -> None:
    jar: dict[str, str] = {}
    take_cookies(jar, URL, ['bad"name=1', "ok=1"])
    assert jar == {"ok": "1"}


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def _events(body: bytes, cut: int) -> list[str]:
    parts = [body[i : i + cut] for i in range(0, len(body), cut)]

    async def read() -> list[str]:
        return [event async for event in _decoded(_chunks(parts))]

    return asyncio.run(read())


@pytest.mark.parametrize("cut", [1, 2, 3, 7, 1000])
def test_events_are_decoded_however_the_bytes_are_cut(cut: int) -> None:
    """A character of several bytes, a CRLF, a comment (a keepalive) and an event
    without data, split at every place: the same events, whole."""
    body = (
        ": keepalive\r\n\r\n"
        'data: {"text": "caf\u00e9 \u2713 \U0001f600"}\r\n\r\n'
        "event: ping\n\n"
        "data: first line\ndata: second line\n\n"
        'data: {"last": true}\n\n'
    ).encode()
    assert _events(body, cut) == [
        '{"text": "caf\u00e9 \u2713 \U0001f600"}',
        "first line\nsecond line",
        '{"last": true}',
    ]


def test_a_last_event_without_its_blank_line_is_not_given() -> None:
    """An event is dispatched by its blank line: a stream cut before it gives nothing
    of that event (as a browser's EventSource)."""
    assert _events(b"data: whole\n\ndata: cut", 4) == ["whole"]


async def _plain(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"not events"})


def wire_of(library: str) -> Any:
    """The wire over HTTP/1.1 (aiohttp) or HTTP/2 (curl)."""
    if library == "aiohttp":
        return AiohttpWire(5.0, 5.0)
    return CurlWire(5.0, 5.0, secure=False)


@pytest.mark.parametrize("library", ["aiohttp", "curl"])
def test_a_stream_answered_with_another_content_type_fails_saying_so(library: str) -> None:
    async def main() -> None:
        async with served(_plain, http2=library == "curl") as base:
            wire = wire_of(library)
            try:
                with pytest.raises(Exception, match="text/event-stream"):
                    async with wire.stream(base + "/acp", {}, None) as stream:
                        [e async for e in stream.events]
            finally:
                await wire.aclose()
            assert wire.closed

    run(main(), 30)


@pytest.mark.parametrize("library", ["aiohttp", "curl"])
def test_a_stream_refused_gives_its_status_and_body(library: str) -> None:
    async def refuse(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 404, "headers": [(b"set-cookie", b"seen=1")]})
        await send({"type": "http.response.body", "body": b"no such connection\n"})

    async def main() -> None:
        async with served(refuse, http2=library == "curl") as base:
            wire = wire_of(library)
            try:
                async with wire.stream(base + "/acp", {}, "s1") as stream:
                    assert stream.answer.status == 404
                    assert stream.answer.text == "no such connection\n"
                    assert stream.answer.set_cookies == ("seen=1",)
                    assert [e async for e in stream.events] == []
                answer = await wire.post(base + "/acp", b"{}", {"content-type": "application/json"})
                assert (answer.status, answer.body) == (404, b"no such connection\n")
            finally:
                await wire.aclose()

    run(main(), 30)


async def _paced(parts: list[tuple[float, bytes]]) -> AsyncIterator[bytes]:
    for pause, part in parts:
        await asyncio.sleep(pause)
        yield part


def test_a_stream_that_brings_nothing_for_its_idle_bound_fails() -> None:
    """Waiting longer than ``idle`` for a stream's next bytes raises TimeoutError (the
    events before it given), soon after the bound."""

    async def main() -> None:
        got: list[str] = []
        began = asyncio.get_running_loop().time()
        with pytest.raises(TimeoutError, match="nothing came on the stream for 0.2 s"):
            async for event in _decoded(_paced([(0, b"data: one\n\n"), (5, b"data: two\n\n")]), 0.2):
                got.append(event)
        assert got == ["one"]
        assert asyncio.get_running_loop().time() - began < 1

    run(main(), 10)


def test_keepalives_and_a_slow_reader_do_not_count_as_idle() -> None:
    """Keepalive comments keep a stream alive; so does a reader that takes longer than
    ``idle`` to come back for the next event (the stream was not waited on)."""

    async def main() -> None:
        keepalives = [(0.1, b": keepalive\n\n")] * 6
        source = _paced([(0, b"data: one\n\n"), *keepalives, (0, b"data: two\n\ndata: three\n\n")])
        got: list[str] = []
        async for event in _decoded(source, 0.3):
            got.append(event)
            await asyncio.sleep(0.5)  # the reader is slow
        assert got == ["one", "two", "three"]

    run(main(), 10)


def test_a_stream_cancelled_from_outside_is_cancelled_not_timed_out() -> None:
    async def main() -> None:
        async def read() -> None:
            async for _ in _decoded(_paced([(5, b"data: late\n\n")]), 0.3):
                pass

        task = asyncio.ensure_future(read())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main(), 10)


# --- more of the pieces, one at a time --------------------------------------------

import gzip  # noqa: E402
import sys  # noqa: E402

from acpgen.runtime import _http_wire, _remote  # noqa: E402


def test_cookies_of_a_url_without_a_path_and_of_one_header() -> None:
    jar: dict[str, str] = {}
    take_cookies(jar, "http://balancer.example", ["a=1; Path=/"])
    assert jar == {"a": "1"}
    # one header may set several cookies: one of another path is skipped, not the rest
    take_cookies(jar, URL, ["b=2; Path=/nope; c=3; Path=/"])
    assert jar == {"a": "1", "c": "3"}
    # a header that cannot be read does not stop the ones after it
    take_cookies(jar, URL, ["a@b=1", "d=4"])  # an illegal name: http.cookies raises
    assert jar == {"a": "1", "c": "3", "d": "4"}


def test_cookie_lifetimes() -> None:
    jar = {"kept": "0"}
    take_cookies(jar, URL, ["gone=1; Max-Age=0", "short=1; Max-Age=1", "never=1; Max-Age=-5"])
    assert jar == {"kept": "0", "short": "1"}  # expiring one never held is no error
    take_cookies(jar, URL, ["odd=1; Expires=garbage", "bad=1; Max-Age=soon"])
    assert jar == {"kept": "0", "short": "1", "odd": "1", "bad": "1"}
    # a date without a zone is read as UTC
    take_cookies(jar, URL, ['old=1; Expires="Wed, 21 Oct 2015 07:28:00"', 'new=1; Expires="Wed, 21 Oct 2099 07:28:00"'])
    assert "old" not in jar and jar["new"] == "1"
    take_cookies(jar, URL, ["kept=; Expires=Wed, 21 Oct 2015 07:28:00 GMT"])
    assert "kept" not in jar


@pytest.mark.parametrize(
    ("headers", "wrong"),
    [
        ({"content-type": "text/event-stream"}, None),
        ({"content-type": "text/event-stream; charset=utf-8"}, None),
        ({"content-type": " text/event-stream ;a=b;c=d"}, None),
        ({"content-type": "application/json; charset=utf-8"}, "the stream's answer is application/json, not text/event-stream"),
        ({"content-type": "TEXT/EVENT-STREAM"}, "the stream's answer is TEXT/EVENT-STREAM, not text/event-stream"),
        ({}, "the stream's answer is untyped, not text/event-stream"),
        ({"content-type": ""}, "the stream's answer is untyped, not text/event-stream"),
    ],
)
def test_what_is_not_an_event_stream(headers: dict[str, str], wrong: str | None) -> None:
    assert _http_wire._not_events(headers) == wrong


def test_events_a_stream_ends_with_and_bytes_that_are_not_utf8() -> None:
    # the last event's blank line ended by a lone CR: given when the stream ends
    assert _events(b"data: x\n\r", 1000) == ["x"]
    assert _events(b"data: x\r\r", 1) == ["x"]
    assert _events(b"data: caf\xff\n\n", 2) == ["caf\ufffd"]
    # an event not ended when the stream ends is not given, its data line read or not
    assert _events(b"data: x\ndata: y", 3) == []


def test_decoding_events_without_httpx_sse_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx_sse", None)
    monkeypatch.setitem(sys.modules, "httpx_sse._decoders", None)
    with pytest.raises(_remote.RemoteDependencyError) as caught:
        _events(b"data: x\n\n", 10)
    assert str(caught.value) == (
        "the ACP remote transport (http) needs the Python package 'httpx-sse', which is not installed:"
        " pip install 'httpx' 'httpx-sse' 'aiohttp'"
    )


@pytest.mark.parametrize("away", [0.1, 0.3])
def test_an_idle_stream_times_out_after_a_slow_reader_comes_back(away: float) -> None:
    """The watch goes on while the reader is away: once it waits again, nothing for
    ``idle`` seconds is a timeout, soon after the bound (the watch started before the
    first wait too)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        events = _decoded(_paced([(0, b"data: one\n\n"), (30, b"data: two\n\n")]), 0.2)
        await asyncio.sleep(0.3)  # the watch runs before anything is read
        assert await anext(events) == "one"
        await asyncio.sleep(away)  # away, while the watch checks (0.3) or not (0.1)
        began = loop.time()
        with pytest.raises(TimeoutError, match="nothing came on the stream for 0.2 s"):
            await anext(events)
        assert loop.time() - began < 0.7

    run(main(), 10)


def test_a_refusal_that_never_ends_is_cut_short() -> None:
    async def main() -> None:
        never = asyncio.get_running_loop().create_future()
        assert await _http_wire.refusal(never, 0.05, b"instead") == b"instead"
        done = asyncio.get_running_loop().create_future()
        done.set_result(b"body")
        assert await _http_wire.refusal(done, 5, b"instead") == b"body"

    run(main(), 5)


aiohttp = pytest.importorskip("aiohttp")
from aiohttp import web  # noqa: E402
from multidict import CIMultiDict, CIMultiDictProxy  # noqa: E402


def test_an_answer_keeps_its_headers_and_every_set_cookie() -> None:
    class Response:
        status = 202
        headers = CIMultiDictProxy(CIMultiDict([("Set-Cookie", "a=1"), ("X-Y", "z"), ("set-cookie", "b=2")]))

    answer = _http_wire._answer(Response(), b"ok")
    assert answer == (202, Response.headers, b"ok", ("a=1", "b=2")) and answer.headers is Response.headers
    assert answer.text == "ok"

    class Plain:
        status = 200
        headers = CIMultiDictProxy(CIMultiDict())

    assert _http_wire._answer(Plain(), b"\xff").set_cookies == () and _http_wire._answer(Plain(), b"\xff").text == "\ufffd"


class Server:
    """An aiohttp server recording each request: method, path, headers, body."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, Any, bytes]] = []
        self.hold = asyncio.Event()
        self.release = asyncio.Event()
        self.holding = 0

    async def handle(self, request: Any) -> Any:
        body = await request.read()
        self.seen.append((request.method, request.path, request.headers, body))
        if request.path == "/slow":
            await asyncio.wait_for(self.release.wait(), 30)
        if request.path == "/hold":
            self.holding += 1
            await asyncio.wait_for(self.hold.wait(), 10)
        if request.path == "/zipped":
            return web.Response(body=gzip.compress(b"z" * 1000), headers={"Content-Encoding": "gzip"})
        response = web.Response(status=202, body=b"answer:" + body, headers={"X-Seen": request.method})
        response.headers.add("Set-Cookie", "SERVERID=s1; Path=/")
        response.headers.add("Set-Cookie", "lang=en")
        return response

    async def __aenter__(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = self.runner.addresses[0][1]
        return f"http://localhost:{port}"  # a name: aiohttp's own cookie jar takes no IP's

    async def __aexit__(self, *exc: Any) -> None:
        self.release.set()
        self.hold.set()
        await self.runner.cleanup()


def test_the_aiohttp_wire_posts_and_deletes_what_it_is_given() -> None:
    async def main() -> None:
        server = Server()
        async with server as base:
            wire = AiohttpWire(5, 5)
            assert wire.closed
            try:
                answer = await wire.post(base + "/acp", b'{"a":1}', {"Acp-Connection-Id": "c1", "Cookie": "k=v"})
                assert (answer.status, answer.body, answer.set_cookies) == (202, b'answer:{"a":1}', ("SERVERID=s1; Path=/", "lang=en"))
                assert answer.headers["x-seen"] == "POST" and not wire.closed
                await wire.delete(base + "/acp/gone", {"Acp-Connection-Id": "c2"})
                # the library keeps no cookie of its own: only those named are sent
                await wire.post(base + "/acp", b"", {})
            finally:
                await wire.aclose()
            assert wire.closed
        (m1, p1, h1, b1), (m2, p2, h2, b2), (_, _, h3, _) = server.seen
        assert (m1, p1, b1, h1["acp-connection-id"], h1["cookie"]) == ("POST", "/acp", b'{"a":1}', "c1", "k=v")
        assert (m2, p2, b2, h2["acp-connection-id"]) == ("DELETE", "/acp/gone", b"", "c2")
        assert "cookie" not in h3

    run(main(), 30)


def test_the_aiohttp_wire_bounds_the_wait_for_an_answer() -> None:
    async def main() -> None:
        server = Server()
        async with server as base:
            wire = AiohttpWire(5, 0.2)
            try:
                began = asyncio.get_running_loop().time()
                with pytest.raises(wire.failures):
                    await wire.post(base + "/slow", b"x", {})
                with pytest.raises(wire.failures):
                    await wire.delete(base + "/slow", {})
                assert asyncio.get_running_loop().time() - began < 3
            finally:
                await wire.aclose()
        assert aiohttp.ClientError in wire.failures and asyncio.TimeoutError in wire.failures

    run(main(), 30)


def test_the_aiohttp_wire_without_aiohttp_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    with pytest.raises(_remote.RemoteDependencyError) as caught:
        AiohttpWire(1, 1)
    assert str(caught.value) == (
        "the ACP remote transport (http) needs the Python package 'aiohttp', which is not installed:"
        " pip install 'httpx' 'httpx-sse' 'aiohttp'"
    )


def test_the_aiohttp_wire_timeouts_are_the_ones_given() -> None:
    wire = AiohttpWire(2, 3, 4)
    assert wire._post_timeout == aiohttp.ClientTimeout(total=None, connect=2, sock_connect=2, sock_read=3)
    assert wire._stream_timeout == aiohttp.ClientTimeout(total=None, connect=2, sock_connect=2)
    assert (wire._head_s, wire._refusal_s, wire._idle) == (5, 3, 4)


def test_the_aiohttp_wire_reads_with_sized_sockets_and_leaves_bodies_as_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    recv = _remote.SizedSocket.recv

    def counted(self: Any, bufsize: int, flags: int = 0, /) -> bytes:
        data = recv(self, bufsize, flags)
        reads.append(len(data))
        return data

    monkeypatch.setattr(_remote.SizedSocket, "recv", counted)

    async def main() -> None:
        server = Server()
        async with server as base:
            wire = AiohttpWire(5, 5)
            try:
                answer = await wire.post(base + "/zipped", b"", {})
                assert answer.body == gzip.compress(b"z" * 1000)  # not decompressed
                assert answer.headers["content-encoding"] == "gzip"
            finally:
                await wire.aclose()

    run(main(), 30)
    assert reads and max(reads) <= _remote.READ_SIZE


def test_the_aiohttp_wire_opens_as_many_connections_as_it_needs() -> None:
    """Requests at once each get a connection (no pool limit): two held by the server at
    the same time both arrive."""

    async def main() -> None:
        server = Server()
        async with server as base:
            wire = AiohttpWire(5, 10)
            try:
                # past aiohttp's default pool of 100
                posts = [asyncio.ensure_future(wire.post(base + "/hold", b"", {})) for _ in range(101)]
                async with asyncio.timeout(10):
                    while server.holding < 101:
                        await asyncio.sleep(0.01)
                server.hold.set()
                assert [a.status for a in await asyncio.gather(*posts)] == [202] * 101
            finally:
                await wire.aclose()

    run(main(), 30)
