"""The echo agent of ``echo_agent.py``, served remotely: ACP over WebSocket and
Streamable HTTP at ``http://HOST:PORT/acp``, until stopped (Ctrl-C or SIGTERM).

    PYTHONPATH=vendor python examples/remote_agent.py --host 127.0.0.1 --port 8000

It needs the remote transports' libraries (``pip install 'acpgen[remote]'`` or the
packages a missing one names). The default security settings hold: bound to a loopback
address, only loopback names are accepted as ``Host`` and ``Origin`` (a web page cannot
reach it by DNS rebinding); ``--allow-host NAME`` adds a name it is reached by (behind a
proxy, say). ``--token TOKEN`` asks every client for ``Authorization: Bearer TOKEN``.
``--http2`` serves HTTP/2 too (with Hypercorn; uvicorn otherwise).
"""

from __future__ import annotations

import argparse
import logging

from acp_pydantic import Security, bearer, run, run_server, v1
from echo_agent import versions


def app(host: str, token: str | None, allow_hosts: list[str]) -> object:
    security = Security.for_bind(host)
    if allow_hosts and security.allowed_hosts is not None:
        security = Security(security.allowed_hosts + tuple(allow_hosts), security.allowed_origins)
    auth = bearer({token: "user"}) if token else None
    return v1.RPC.asgi_app(versions(), security=security, authenticate=auth)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--token", help="the bearer token every client must send")
    parser.add_argument("--allow-host", action="append", default=[], help="another Host name accepted")
    parser.add_argument("--http2", action="store_true", help="serve HTTP/2 as well (Hypercorn)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    def started(port: int) -> None:
        print(f"serving the echo agent at http://{args.host}:{port}/acp", flush=True)

    served = run_server(app(args.host, args.token, args.allow_host), args.host, args.port, http2=args.http2, started=started)
    try:
        run(served)  # on uvloop when it is installed, asyncio's loop otherwise
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
