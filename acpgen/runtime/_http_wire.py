"""The HTTP requests of the Streamable HTTP client (:mod:`._http_client`): its ``POST``,
``DELETE`` and event-stream ``GET`` requests, through one of two libraries.

* Over HTTP/1.1 (``http://`` or ``https://``): ``aiohttp``. Its requests cost about a
  third of httpx's on the same server (its HTTP parser is compiled), and a ``POST`` and
  an event read are most of what a small request costs on this transport. One
  keep-alive connection carries the ``POST`` requests (one at a time); each stream
  holds a connection of its own.
* Over HTTP/2: libcurl, through ``curl_cffi`` (:mod:`._curl_wire`; aiohttp does not
  speak HTTP/2). Its requests cost about a third of httpx+h2's; the requests and
  streams of every connection of a process to a server share one HTTP/2 connection, and
  a stream whose reader falls behind is paused, so that flow control holds the server
  back.

The events are decoded by httpx-sse's decoder in both cases.

Cookies are kept by the channel, not by the libraries (each request names them in a
``Cookie`` header, and :func:`take_cookies` reads the ``Set-Cookie`` headers of each
answer): a balancer's sticky cookie must go with every request of a connection, over
every client it uses.
"""

from __future__ import annotations

import asyncio
import codecs
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from http.cookies import CookieError, SimpleCookie
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Iterable,
    Mapping,
    MutableMapping,
    NamedTuple,
    Protocol,
    TypeVar,
)
from urllib.parse import urlsplit

from ._remote import need, sized_socket

T = TypeVar("T")


class Answer(NamedTuple):
    """An answer: its status, its headers (names in any case), its body (read in full
    for a ``POST``; for a stream, only when its status is not 200) and the
    ``Set-Cookie`` headers it had."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    set_cookies: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class EventStream(NamedTuple):
    """An event stream's answer (``answer``) and, when its status is 200, the data of
    each of its events (``events``; an event without data is skipped)."""

    answer: Answer
    events: AsyncIterator[str]


class Wire(Protocol):
    """Sends the channel's requests."""

    #: the exceptions that say a request failed on the way (a transport error)
    failures: tuple[type[BaseException], ...]

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        """Post ``body``: the answer (any status), or one of :attr:`failures`."""
        ...

    async def delete(self, url: str, headers: Mapping[str, str]) -> None:
        """Send ``DELETE`` (its answer is not read)."""
        ...

    def stream(self, url: str, headers: Mapping[str, str], session: str | None) -> Any:
        """An async context manager giving the :class:`EventStream` of a ``GET``
        (the connection's stream when ``session`` is None, else that session's)."""
        ...

    async def aclose(self) -> None:
        """Close every connection it holds."""
        ...

    @property
    def closed(self) -> bool:
        """Whether it holds no connection (closed, or never used)."""
        ...


async def _decoded(
    chunks: AsyncIterator[bytes], idle: float | None = None
) -> AsyncIterator[str]:
    """The data of each event of a ``text/event-stream`` body, decoded by httpx-sse.
    With ``idle``, a stream that brings nothing (no event, no keepalive comment) for that
    many seconds while it is waited on raises :class:`TimeoutError` (the time its reader
    spends elsewhere, held back by a full queue, does not count)."""
    decoders = need("httpx_sse._decoders", "http")
    lines, events = decoders.SSELineDecoder(), decoders.SSEDecoder()
    text = codecs.getincrementaldecoder("utf-8")("replace")
    watch = _Idle(idle) if idle is not None else None
    source = chunks.__aiter__()
    try:
        while True:
            if watch is None:
                chunk = await anext(source, None)
            else:
                chunk = await watch.wait(source)
            if chunk is None:
                break
            for line in lines.decode(text.decode(chunk)):
                event = events.decode(line)
                if event is not None and event.data:
                    yield event.data
    finally:
        if watch is not None:
            watch.stop()
    for line in lines.flush():
        event = events.decode(line)
        if event is not None and event.data:
            yield event.data


class _Idle:
    """Ends a wait for a stream's next bytes that lasts ``seconds``: a timer that runs
    once per ``seconds`` at most, not one per read."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.loop = asyncio.get_running_loop()
        self.since: float | None = None
        self.task: asyncio.Task[Any] | None = None
        self.expired = False
        self.handle = self.loop.call_later(seconds, self._check)

    async def wait(self, source: AsyncIterator[bytes]) -> bytes | None:
        self.task = asyncio.current_task()
        self.since = self.loop.time()
        try:
            return await anext(source, None)
        except asyncio.CancelledError:
            if self.expired and self.task is not None and self.task.uncancel() == 0:
                raise TimeoutError(
                    f"nothing came on the stream for {self.seconds:g} s"
                ) from None
            raise
        finally:
            self.since = None

    def _check(self) -> None:
        due = self.seconds
        if self.since is not None:
            due = self.since + self.seconds - self.loop.time()
            if due <= 0 and self.task is not None:
                self.expired = True
                self.task.cancel()
                return
        self.handle = self.loop.call_later(max(due, 0.001), self._check)

    def stop(self) -> None:
        self.handle.cancel()


def _not_events(headers: Mapping[str, str]) -> str | None:
    kind = headers.get("content-type", "").partition(";")[0].strip()
    if kind != "text/event-stream":
        return f"the stream's answer is {kind or 'untyped'}, not text/event-stream"
    return None


class AiohttpWire:
    """The requests over HTTP/1.1, with ``aiohttp``: ``open_timeout`` bounds connecting,
    ``post_timeout`` the wait for a ``POST``'s answer and the reading of a stream's
    refusal, ``open_timeout + post_timeout`` the wait for a stream's status and headers
    (a stream's events are watched by ``idle`` instead)."""

    def __init__(
        self, open_timeout: float, post_timeout: float, idle: float | None = None
    ) -> None:
        self._aiohttp = aiohttp = need("aiohttp", "http")
        self._idle = idle
        self.failures: tuple[type[BaseException], ...] = (
            aiohttp.ClientError,
            asyncio.TimeoutError,
        )
        self._post_timeout = aiohttp.ClientTimeout(
            total=None,
            connect=open_timeout,
            sock_connect=open_timeout,
            sock_read=post_timeout,
        )
        self._stream_timeout = aiohttp.ClientTimeout(
            total=None, connect=open_timeout, sock_connect=open_timeout
        )
        #: seconds a stream may wait for its answer's status and headers
        self._head_s = open_timeout + post_timeout
        #: seconds the body of a stream's refusal is read, at most
        self._refusal_s = post_timeout
        self._session: Any = None

    def _client(self) -> Any:
        if self._session is None:  # made on first use: aiohttp wants a running loop
            self._session = self._aiohttp.ClientSession(
                cookie_jar=self._aiohttp.DummyCookieJar(),  # see take_cookies
                connector=self._aiohttp.TCPConnector(
                    limit=0, socket_factory=sized_socket
                ),
                auto_decompress=False,
            )
        return self._session

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        async with self._client().post(
            url, data=body, headers=headers, timeout=self._post_timeout
        ) as response:
            data = await response.read()
            return _answer(response, data)

    async def delete(self, url: str, headers: Mapping[str, str]) -> None:
        async with self._client().delete(
            url, headers=headers, timeout=self._post_timeout
        ):
            pass

    @asynccontextmanager
    async def stream(
        self, url: str, headers: Mapping[str, str], session: str | None
    ) -> AsyncIterator[EventStream]:
        async with AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(self._head_s):
                    response = await stack.enter_async_context(
                        self._client().get(
                            url, headers=headers, timeout=self._stream_timeout
                        )
                    )
            except TimeoutError:
                raise TimeoutError(
                    f"no answer to the request within {self._head_s:g} s"
                ) from None
            if response.status != 200:
                body = await refusal(response.read(), self._refusal_s, b"")
                yield EventStream(_answer(response, body), _none())
                return
            wrong = _not_events(response.headers)
            if wrong:
                raise ValueError(wrong)
            yield EventStream(
                _answer(response, b""),
                _decoded(response.content.iter_any(), self._idle),
            )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def closed(self) -> bool:
        return self._session is None or bool(self._session.closed)


async def refusal(read: Awaitable[T], seconds: float, instead: T) -> T:
    """What ``read`` gives of a stream's refusal (a status other than 200) within
    ``seconds``, else ``instead``: the status says what happened, and a body that never
    ends must not hold the messages waiting for the stream."""
    try:
        async with asyncio.timeout(seconds):
            return await read
    except TimeoutError:
        return instead


def _answer(response: Any, body: bytes) -> Answer:
    cookies = tuple(response.headers.getall("set-cookie", ()))
    return Answer(response.status, response.headers, body, cookies)


async def _none() -> AsyncIterator[str]:
    return
    yield  # an async generator that gives nothing


def take_cookies(
    jar: MutableMapping[str, str], url: str, set_cookies: Iterable[str]
) -> None:
    """Keep in ``jar`` (name to value) what the ``Set-Cookie`` headers of an answer from
    ``url`` set, and drop what they expire. A cookie for another path than ``url``'s
    is not kept (every request of a connection goes to one URL); one that cannot be read
    is skipped."""
    path = urlsplit(url).path or "/"
    for header in set_cookies:
        parsed: SimpleCookie = SimpleCookie()
        try:
            parsed.load(header)
        except CookieError:
            continue
        for name, morsel in parsed.items():
            if morsel["path"] and not path.startswith(morsel["path"]):
                continue
            if _max_age_over(morsel["max-age"]) or _expired(morsel["expires"]):
                jar.pop(name, None)
            else:
                jar[name] = morsel.value


def _max_age_over(max_age: str) -> bool:
    try:
        return int(max_age) <= 0
    except ValueError:
        return False


def _expired(expires: str) -> bool:
    if not expires:
        return False
    try:
        when = parsedate_to_datetime(expires)
    except (TypeError, ValueError):
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when <= datetime.now(timezone.utc)


def cookie_header(jar: Mapping[str, str]) -> str:
    """The ``Cookie`` header that names the cookies of ``jar``."""
    return "; ".join(f"{name}={value}" for name, value in jar.items())


__all__ = [
    "AiohttpWire",
    "Answer",
    "EventStream",
    "Wire",
    "cookie_header",
    "take_cookies",
]
