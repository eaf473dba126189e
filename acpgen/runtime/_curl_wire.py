"""The Streamable HTTP client's requests over HTTP/2 (:class:`CurlWire`, a
:class:`~._http_wire.Wire`): libcurl, with nghttp2, through ``curl_cffi``'s own interface
(its easy and multi handles under asyncio; none of its browser impersonation).

Against the same server a request costs its client about a third of the CPU it costs
through httpx with h2. Every request of a process's connections to a server goes
through one curl multi handle per event loop, so they share one HTTP/2 connection
(curl multiplexes them, and polls each multi handle ten times a second: once per loop,
not once per connection). A stream whose reader falls behind is paused by curl's write
callback, so HTTP/2 flow control holds the server back instead of the client buffering.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Final, Iterable, Mapping

from ._http_wire import Answer, EventStream, _decoded, _none, _not_events, refusal
from ._remote import MAX_BODY, need


class WireError(ConnectionError):
    """A request that failed on the way (curl's reason in the message)."""


class CurlWire:
    """The requests over HTTP/2, with libcurl (through ``curl_cffi``): prior knowledge on
    ``http://``, ALPN on ``https://``. Every request is a transfer of one curl multi
    handle per event loop, so the ``POST`` requests and the streams of every connection
    to a server share one HTTP/2 connection (curl multiplexes them; past
    :data:`STREAMS` streams at once it opens another). ``open_timeout`` bounds
    connecting, ``open_timeout + post_timeout`` a ``POST`` or ``DELETE`` in full and the
    wait for a stream's status and headers, ``post_timeout`` the reading of a stream's
    refusal; a stream's events are watched by ``idle`` instead.

    A stream holds at most :data:`HOLD` chunks not yet read: past it curl pauses the
    transfer (HTTP/2 flow control then holds the server back), and goes on once the
    reader has taken half of them. A ``POST``'s answer over :data:`~._remote.MAX_BODY`
    fails the request."""

    def __init__(
        self,
        open_timeout: float,
        post_timeout: float,
        secure: bool,
        idle: float | None = None,
    ) -> None:
        self._curl = curl = need("curl_cffi", "http2-client")
        self._constants = need("curl_cffi.curl", "http2-client")
        self.failures: tuple[type[BaseException], ...] = (WireError, TimeoutError)
        self._idle = idle
        version = curl.CurlHttpVersion
        opt = curl.CurlOpt
        #: the options every request has, resolved once
        self._fixed = (
            (opt.HTTP_VERSION, version.V2TLS if secure else version.V2_PRIOR_KNOWLEDGE),
            (opt.CONNECTTIMEOUT_MS, max(1, int(open_timeout * 1000))),
            (opt.NOSIGNAL, 1),
            # a request waits for a connection being opened to the server rather than
            # opening another (which would then sit idle until the server closes it)
            (opt.PIPEWAIT, 1),
            # a connection idle this long is not used again: servers close idle ones
            # after a few seconds (Hypercorn and uvicorn after 5), and a request sent
            # as one closes would fail
            (opt.MAXAGE_CONN, IDLE_REUSE),
        )
        self._post_ms = max(1, int((open_timeout + post_timeout) * 1000))
        #: seconds a stream may wait for its answer's status and headers
        self._head_s = open_timeout + post_timeout
        #: seconds the body of a stream's refusal is read, at most
        self._refusal_s = post_timeout
        self._multi: _Multi | None = None
        self._transfers: set[_Transfer] = set()

    def _run(
        self, url: str, headers: Mapping[str, str], whole_ms: int, **options: Any
    ) -> _Transfer:
        if self._multi is None:
            self._multi = _Multi.take(self._curl)
        opt = self._curl.CurlOpt
        handle = self._curl.Curl()
        for option, value in self._fixed:
            handle.setopt(option, value)
        handle.setopt(opt.URL, url.encode())
        handle.setopt(opt.TIMEOUT_MS, whole_ms)  # 0: no bound
        handle.setopt(
            opt.HTTPHEADER, [f"{k}: {v}".encode() for k, v in headers.items()]
        )
        for name, value in options.items():
            handle.setopt(getattr(opt, name), value)
        transfer = _Transfer(
            self._curl, self._constants, handle, self._multi.multi, whole_ms != 0
        )
        self._transfers.add(transfer)
        transfer.finished.add_done_callback(lambda _: self._transfers.discard(transfer))
        return transfer

    async def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Answer:
        return await self._run(
            url,
            headers,
            self._post_ms,
            POST=1,
            POSTFIELDS=body,
            POSTFIELDSIZE=len(body),
        ).whole()

    async def delete(self, url: str, headers: Mapping[str, str]) -> None:
        await self._run(url, headers, self._post_ms, CUSTOMREQUEST=b"DELETE").whole()

    @asynccontextmanager
    async def stream(
        self, url: str, headers: Mapping[str, str], session: str | None
    ) -> AsyncIterator[EventStream]:
        transfer = self._run(url, headers, 0)
        try:
            try:
                answer = await asyncio.wait_for(transfer.head(), self._head_s)
            except asyncio.TimeoutError:
                raise WireError(
                    f"no answer to the request within {self._head_s:g} s"
                ) from None
            if answer.status != 200:
                whole = await refusal(transfer.whole(), self._refusal_s, answer)
                yield EventStream(whole, _none())
                return
            wrong = _not_events(answer.headers)
            if wrong:
                raise ValueError(wrong)
            yield EventStream(answer, _decoded(transfer.chunks(), self._idle))
        finally:
            transfer.stop()

    async def aclose(self) -> None:
        for transfer in list(self._transfers):
            transfer.stop()
        if self._multi is not None:
            multi, self._multi = self._multi, None
            await multi.give_back()

    @property
    def closed(self) -> bool:
        return self._multi is None


class _Multi:
    """The curl multi handle of an event loop, shared by the wires open on it (curl
    polls each multi handle ten times a second: one per loop, not one per connection),
    closed when the last of them closes."""

    _of_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Multi]" = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, multi: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.multi = multi
        self.loop = loop
        self.users = 0

    @classmethod
    def take(cls, curl: Any) -> _Multi:
        loop = asyncio.get_running_loop()
        shared = cls._of_loop.get(loop)
        if shared is None:
            multi = curl.AsyncCurl(loop=loop)
            # Set, curl keeps to it from a connection's first requests on; left unset, a
            # burst of requests waiting for a connection being opened (PIPEWAIT) is all
            # put on it, one more than the server's limit of 100: that one is queued on
            # the connection until a stream there ends, which an event stream never does
            multi.setopt(curl.CurlMOpt.MAX_CONCURRENT_STREAMS, STREAMS)
            shared = cls._of_loop[loop] = cls(multi, loop)
        shared.users += 1
        return shared

    async def give_back(self) -> None:
        self.users -= 1
        if self.users == 0:
            self._of_loop.pop(self.loop, None)
            await self.multi.close()


#: streams at most on one HTTP/2 connection (and the server's limit, when lower): past
#: it curl opens another connection to the server
STREAMS: Final = 100

#: seconds a connection with no request may stay idle and still be used again
IDLE_REUSE: Final = 2

#: chunks (of up to 16 KiB, curl's writes) a stream holds before curl pauses it
HOLD: Final = 8


class _Transfer:
    """One request run by ``multi``: its answer's status and headers (``head()``), then
    its body, read in full (``whole()``, when ``whole`` is true) or chunk by chunk
    (``chunks()``, at most :data:`HOLD` held)."""

    def __init__(
        self, curl: Any, constants: Any, handle: Any, multi: Any, whole: bool
    ) -> None:
        self._curl = curl
        self._constants = constants
        self._handle = handle
        self._multi = multi
        self._whole = whole
        self._lines: list[str] = []
        self._headers: _Headers | None = None
        self._status = 0
        self._pending: deque[bytes] = deque()
        self._size = 0
        self._paused = False
        self._wake: asyncio.Future[None] | None = None
        self._headed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        handle.setopt(curl.CurlOpt.HEADERFUNCTION, self._on_header)
        handle.setopt(curl.CurlOpt.WRITEFUNCTION, self._on_chunk)
        self.finished: asyncio.Future[None] = multi.add_handle(handle)
        self.finished.add_done_callback(self._on_end)

    # curl's callbacks (on the loop's thread): they only keep what curl gives
    def _on_header(self, line: bytes) -> int:
        text = line.decode("latin-1").rstrip("\r\n")
        if text.startswith("HTTP/"):
            self._lines.clear()  # a 1xx answer's headers come before the final ones
        elif text:
            self._lines.append(text)
        elif self._headers is None:
            status = int(self._handle.getinfo(self._curl.CurlInfo.RESPONSE_CODE))
            if status >= 200:
                self._status, self._headers = status, _Headers(self._lines)
                _wake(self._headed)
        return len(line)

    def _on_chunk(self, chunk: bytes) -> int:
        if self._whole:
            self._size += len(chunk)
            if self._size > MAX_BODY:
                return int(self._constants.CURL_WRITEFUNC_ERROR)
        elif len(self._pending) >= HOLD:
            self._paused = True
            return int(self._constants.CURL_WRITEFUNC_PAUSE)  # given again later
        self._pending.append(chunk)
        if self._wake is not None:
            _wake(self._wake)
        return len(chunk)

    def _on_end(self, finished: asyncio.Future[None]) -> None:
        if not finished.cancelled():
            finished.exception()  # retrieved: read by whoever reads the transfer
        _wake(self._headed)
        if self._wake is not None:
            _wake(self._wake)
        self._handle.close()

    def _failure(self) -> WireError:
        if self.finished.cancelled():
            return WireError("the request was stopped")
        exc = self.finished.exception()
        if self._size > MAX_BODY:
            return WireError(f"the answer is over {MAX_BODY} bytes")
        return WireError(str(exc) if exc else "the answer ended before its headers")

    def _broken(self) -> bool:
        return self.finished.cancelled() or self.finished.exception() is not None

    async def head(self) -> Answer:
        await asyncio.shield(self._headed)
        if self._headers is None:  # ended before its headers
            raise self._failure()
        return self._answer(b"")

    async def whole(self) -> Answer:
        if not self._whole:  # a stream's answer that is not a stream: read it all
            self._whole, self._size = True, sum(map(len, self._pending))
            if self._paused:
                self._paused = False
                self._handle.pause(self._constants.CURLPAUSE_CONT)
        await asyncio.wait((self.finished,))  # a caller cancelled: raised here
        if self._broken() or self._headers is None:
            raise self._failure()
        return self._answer(b"".join(self._pending))

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            if self._pending:
                chunk = self._pending.popleft()
                if self._paused and len(self._pending) <= HOLD // 2:
                    self._paused = False
                    self._handle.pause(self._constants.CURLPAUSE_CONT)
                yield chunk
            elif self.finished.done():
                if self._broken():
                    raise self._failure()
                return
            else:
                self._wake = asyncio.get_running_loop().create_future()
                try:
                    await self._wake
                finally:
                    self._wake = None

    def _answer(self, body: bytes) -> Answer:
        headers = self._headers or _Headers([])
        return Answer(self._status, headers, body, headers.cookies)

    def stop(self) -> None:
        """End the transfer now (curl resets its HTTP/2 stream); the handle is freed."""
        if not self.finished.done():
            self._multi.remove_handle(self._handle)  # cancels ``finished``


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _Headers(dict):  # type: ignore[type-arg]
    """An answer's headers (names in lower case; a repeated one keeps its last value),
    and the values of its ``Set-Cookie`` headers."""

    def __init__(self, lines: Iterable[str]) -> None:
        super().__init__()
        cookies = []
        for line in lines:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            self[name] = value
            if name == "set-cookie":
                cookies.append(value)
        self.cookies = tuple(cookies)

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def __getitem__(self, key: str) -> Any:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key.lower() if isinstance(key, str) else key)


__all__ = ["HOLD", "STREAMS", "CurlWire", "WireError"]
