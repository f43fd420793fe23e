"""Sessions: one Hermes agent and its conversation per session id, bounded with LRU eviction."""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from .errors import conflict

log = logging.getLogger("parley_bridge.sessions")


class Session:
    """A Hermes session: the agent serving it, the conversation so far, its working directory.

    ``messages`` is the agent's own ``result["messages"]`` after the last turn (None before the first):
    Hermes keeps no transcript in the instance, so the Bridge passes it back as ``conversation_history``.
    Mutated only by the one run that holds the session (``active``).
    """

    def __init__(self, session_id: str, scope_key: str, workdir: Path) -> None:
        self.id = session_id
        self.scope_key = scope_key
        self.workdir = workdir
        self.messages: list[dict[str, Any]] | None = None
        self.agent: Any = None
        self.agent_signature: str | None = None
        self.usage_base: dict[str, int] = {}
        self.active: Any = None  # the Turn running now, if any


class SessionPool:
    """Sessions by id (and by the ids they had before Hermes rotated them), at most ``capacity`` kept.

    Contract: :meth:`claim` gives a session to one run at a time (``409 SESSION_BUSY`` otherwise), also per
    approval scope (a Parley thread); :meth:`release` gives it back. Eviction drops the least recently used
    idle sessions beyond ``capacity`` and calls ``on_evict`` for each (outside the lock).
    """

    def __init__(self, capacity: int, work_root: Path, on_evict: Callable[[Session], None]) -> None:
        self._capacity = max(1, capacity)
        self._work_root = work_root
        self._on_evict = on_evict
        self._lock = threading.Lock()
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._aliases: dict[str, str] = {}
        self._busy_scopes: dict[str, str] = {}
        self._held_scopes: dict[str, int] = {}  # scope -> how many deletes hold it

    def knows(self, session_id: str) -> bool:
        with self._lock:
            return self._lookup(session_id) is not None

    def _lookup(self, session_id: str) -> Session | None:
        return self._sessions.get(self._aliases.get(session_id, session_id))

    def claim(self, requested: str | None, scope_key: str | None, run_id: str, turn: Any,
              create: bool) -> tuple[Session, bool]:
        """The session for a run, marked busy: the known one (resumed) or, if ``create``, a new one.

        ``scope_key`` is the approval scope (``thread:<threadId>``); None means the session's own.
        Raises 409 SESSION_BUSY when the session or the scope has an active run.
        """
        with self._lock:
            session = self._lookup(requested) if requested else None
            if session is None and not create:
                raise AssertionError("claim(create=False) for an unknown session")
            if session is not None and session.active is not None:
                raise conflict("SESSION_BUSY", "the session has an active run: " + session.active.run.run_id, True)
            resumed = session is not None
            if session is None:
                session_id = requested or "hs-" + uuid.uuid4().hex
                key = scope_key or "session:" + session_id
                session = Session(session_id, key, self._workdir(key))
            key = scope_key or session.scope_key
            if key in self._held_scopes:
                raise conflict("SESSION_BUSY", "this conversation is being deleted", True)
            busy = self._busy_scopes.get(key)
            if busy is not None:
                raise conflict("SESSION_BUSY", "this conversation has an active run: " + busy, True)
            session.scope_key = key
            self._sessions[session.id] = session
            self._sessions.move_to_end(session.id)
            session.active = turn
            self._busy_scopes[session.scope_key] = run_id
            return session, resumed

    def release(self, session: Session, turn: Any) -> None:
        """The run holding ``session`` ended; evicts beyond capacity."""
        evicted: list[Session] = []
        with self._lock:
            if session.active is turn:
                session.active = None
                self._busy_scopes.pop(session.scope_key, None)
            idle = [s for s in self._sessions.values() if s.active is None]
            while len(self._sessions) > self._capacity and idle:
                oldest = idle.pop(0)
                del self._sessions[oldest.id]
                for alias in [a for a, target in self._aliases.items() if target == oldest.id]:
                    del self._aliases[alias]
                evicted.append(oldest)
        for gone in evicted:
            log.info("Session %s evicted (least recently used)", gone.id)
            self._on_evict(gone)

    def rename(self, session: Session, new_id: str) -> None:
        """Hermes rotated the session (context compression): known by the new id, the old one still works."""
        with self._lock:
            old = session.id
            if self._sessions.get(old) is not session:
                return
            self._sessions = OrderedDict((new_id if k == old else k, v) for k, v in self._sessions.items())
            for alias, target in list(self._aliases.items()):
                if target == old:
                    self._aliases[alias] = new_id
            self._aliases[old] = new_id
            session.id = new_id

    def hold(self, scope_key: str) -> None:
        """No run may claim a session of ``scope_key`` until as many :meth:`unhold` calls (``409 SESSION_BUSY``)."""
        with self._lock:
            self._held_scopes[scope_key] = self._held_scopes.get(scope_key, 0) + 1

    def unhold(self, scope_key: str) -> None:
        with self._lock:
            left = self._held_scopes.pop(scope_key, 1) - 1
            if left > 0:
                self._held_scopes[scope_key] = left

    def forget(self, scope_key: str) -> list[tuple[Session, list[str]]]:
        """Drops every session of ``scope_key``, busy or not, with each one's ids (its own and earlier ones).

        A busy session's run goes on with it detached; the scope stays busy until that run ends.
        """
        with self._lock:
            gone = [s for s in self._sessions.values() if s.scope_key == scope_key]
            result = []
            for session in gone:
                del self._sessions[session.id]
                earlier = [a for a, target in self._aliases.items() if target == session.id]
                for alias in earlier:
                    del self._aliases[alias]
                result.append((session, [session.id] + earlier))
            return result

    def workdir_for(self, scope_key: str) -> Path:
        """The working directory a new session of ``scope_key`` gets."""
        return self._workdir(scope_key)

    def sessions(self) -> list[Session]:
        with self._lock:
            return list(self._sessions.values())

    def _workdir(self, scope_key: str) -> Path:
        """``<work root>/<readable part of the scope>-<hash>``: one directory per conversation."""
        readable = re.sub(r"[^A-Za-z0-9._-]", "_", scope_key)[:60]
        digest = hashlib.sha256(scope_key.encode("utf-8")).hexdigest()[:10]
        return self._work_root / f"{readable}-{digest}"
