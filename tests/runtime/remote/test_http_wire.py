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
