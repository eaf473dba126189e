"""The echo agent of ``echo_agent.py`` with its sessions kept in a store that several
agent processes share: a client whose server went away reconnects (through the load
balancer, to another process) and ``session/load`` restores its session there: the mode,
the ``voice`` option and the conversation so far, replayed as ``session/update``.

The store here is SQLite (the standard library's ``sqlite3``): one database file that
every process opens (WAL mode: readers never wait for the writer). To keep sessions
elsewhere (Redis, PostgreSQL, a key-value service), write a class with the two methods of
:class:`SessionStore`, ``async get(session_id) -> Saved | None`` and
``async put(saved)``, and pass it to :func:`versions`; a session is saved as a small JSON
document (:meth:`Saved.to_json`, :meth:`Saved.from_json`).

Session ids are random (``s-<uuid>``), so that two processes never give out the same one.
The agent saves a session when it is created, when its mode or option changes, when a
prompt arrives (the user's message) and when the turn ends (the echo); a turn cut short
by the process dying keeps the user's message, not the part of the echo already sent.

Over stdio, as ``echo_agent.py``::

    PYTHONPATH=vendor python examples/session_store.py --db sessions.db

Served remotely by several processes sharing the file, each (with the remote extra)::

    app = v1.RPC.asgi_app(session_store.versions(SqliteStore("sessions.db")))

It speaks protocol v1 (``session/load`` is v1's; v2 resumes sessions differently).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sqlite3
import uuid
from dataclasses import dataclass, field
from typing import Protocol

from acp_pydantic import INVALID_PARAMS, Versions, v1
from echo_agent import EchoAgent, Session, meta


@dataclass
class Saved:
    """A session as the store keeps it: its id, mode and voice, and its conversation
    as (role, text) pairs, role "user" or "agent"."""

    session_id: str
    mode: str = "ask"
    voice: str = "plain"
    history: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps({"mode": self.mode, "voice": self.voice, "history": self.history})

    @classmethod
    def from_json(cls, session_id: str, text: str) -> Saved:
        data = json.loads(text)
        history = [(str(role), str(said)) for role, said in data["history"]]
        return cls(session_id, str(data["mode"]), str(data["voice"]), history)


class SessionStore(Protocol):
    """Where sessions are kept, shared by every agent process."""

    async def get(self, session_id: str) -> Saved | None:
        """The session saved under this id, or None."""
        ...

    async def put(self, saved: Saved) -> None:
        """Save the session (replacing what was saved under its id)."""
        ...


class SqliteStore:
    """A :class:`SessionStore` in one SQLite file, opened by every process that uses it
    (each call on its own connection, in a worker thread: the event loop never waits
    for the disk or for another process's write)."""

    def __init__(self, path: str) -> None:
        self.path = path
        with self._open() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, data TEXT NOT NULL)")
            db.commit()

    def _open(self) -> contextlib.closing[sqlite3.Connection]:
        return contextlib.closing(sqlite3.connect(self.path, timeout=30))

    async def get(self, session_id: str) -> Saved | None:
        return await asyncio.to_thread(self._get, session_id)

    async def put(self, saved: Saved) -> None:
        await asyncio.to_thread(self._put, saved.session_id, saved.to_json())

    def _get(self, session_id: str) -> Saved | None:
        with self._open() as db:
            row = db.execute("SELECT data FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return None if row is None else Saved.from_json(session_id, str(row[0]))

    def _put(self, session_id: str, data: str) -> None:
        with self._open() as db:
            db.execute("INSERT OR REPLACE INTO sessions (id, data) VALUES (?, ?)", (session_id, data))
            db.commit()


class StoredEchoAgent(EchoAgent):
    """The echo agent, its sessions saved in ``store`` and loaded from it."""

    def __init__(self, client: v1.RemoteClient, store: SessionStore) -> None:
        super().__init__(client)
        self.store = store
        self.history: dict[str, list[tuple[str, str]]] = {}

    async def _save(self, session_id: str) -> None:
        session = self.sessions[session_id]
        history = self.history.setdefault(session_id, [])
        await self.store.put(Saved(session_id, session.mode, session.voice, list(history)))

    async def _restore(self, session_id: str) -> Saved | None:
        saved = await self.store.get(session_id)
        if saved is not None:
            self.sessions[session_id] = Session(mode=saved.mode, voice=saved.voice)
            self.history[session_id] = list(saved.history)
        return saved

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        session_id = f"s-{uuid.uuid4().hex}"
        session = self.sessions[session_id] = Session()
        await self._save(session_id)
        modes, options = session.modes(), session.config_options()
        return v1.NewSessionResponse(session_id=session_id, modes=modes, config_options=options, **meta(params))

    async def session_load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        saved = await self._restore(params.session_id)
        if saved is None:
            raise v1.RpcError(INVALID_PARAMS, "Invalid params", {"sessionId": params.session_id, "reason": "unknown session"})
        for role, text in saved.history:  # the conversation, replayed before the answer
            block = v1.TextContentBlock(text=text)
            chunk: v1.SessionUpdate = (
                v1.UserMessageChunkSessionUpdate(content=block)
                if role == "user"
                else v1.AgentMessageChunkSessionUpdate(content=block)
            )
            await self.client.session_update(v1.SessionNotification(session_id=params.session_id, update=chunk))
        session = self.sessions[params.session_id]
        return v1.LoadSessionResponse(modes=session.modes(), config_options=session.config_options())

    async def session_set_mode(self, params: v1.SetSessionModeRequest) -> None:
        if params.session_id not in self.sessions:
            await self._restore(params.session_id)
        await super().session_set_mode(params)
        await self._save(params.session_id)

    async def session_set_config_option(
        self, params: v1.SetSessionConfigOptionRequest
    ) -> v1.SetSessionConfigOptionResponse:
        if params.session_id not in self.sessions:
            await self._restore(params.session_id)
        answer = await super().session_set_config_option(params)
        await self._save(params.session_id)
        return answer

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        if params.session_id not in self.sessions and await self._restore(params.session_id) is None:
            self.sessions[params.session_id] = Session()
        text = " ".join(getattr(block, "text", "") for block in params.prompt)
        history = self.history.setdefault(params.session_id, [])
        history.append(("user", text))
        await self._save(params.session_id)
        answer = await super().session_prompt(params)
        if answer.stop_reason == "end_turn":
            loud = self.sessions[params.session_id].voice == "loud"
            history.append(("agent", text.upper() if loud else text))
            await self._save(params.session_id)
        return answer


def versions(store: SessionStore) -> Versions:
    """The versions this agent speaks (v1), its sessions in ``store``."""
    return Versions().add(v1.RPC, lambda conn: StoredEchoAgent(v1.RemoteClient(conn), store))


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    default = os.environ.get("ACP_SESSION_DB", "sessions.db")
    parser.add_argument("--db", default=default, help="the SQLite file (default: $ACP_SESSION_DB or sessions.db)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)  # to stderr: stdout carries only the protocol
    conn = await v1.RPC.stdio("agent")
    await conn.serve(versions(SqliteStore(args.db)))  # returns when the client closes stdin


if __name__ == "__main__":
    asyncio.run(main())
