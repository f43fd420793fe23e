"""The Bridge without HTTP: starting runs, finding them, keeping finished ones, routing host tool calls."""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections import OrderedDict
from typing import Any

from .attachments import Limits
from .config import BridgeConfig
from .errors import BridgeError, conflict, invalid, run_not_found
from .frames import FrameLog
from .hermes import HOST_TOOLSET, HermesApi
from .redact import Secrets
from .runs import Run
from .sessions import Session, SessionPool
from .turn import Turn, TurnSpec

log = logging.getLogger("parley_bridge.core")

CAPABILITIES = ["clarify", "cancel", "resume-stream", "host-tools", "approvals", "history", "forget-thread"]
"""What every reference Bridge does; ``attachments`` is added where :attr:`BridgeCore.attachment_limits` takes any."""
FORGET_WAIT = 10.0
"""Seconds ``DELETE /threads/{id}`` waits at most for the thread's cancelled run to stop before it erases."""


def thread_scope(thread_id: str) -> str:
    """The key of a Parley thread's conversation: its working directory and Hermes' "session" approvals."""
    return "thread:" + thread_id


class HostTools:
    """Host tools as Hermes tools: registered (process-wide, once per name and schema) before an agent is
    built; a call goes to the turn whose task it is, and only if that run declared the tool."""

    def __init__(self, core: BridgeCore) -> None:
        self._core = core
        self._lock = threading.Lock()
        self._registered: dict[str, str] = {}

    def register(self, tools: list[dict[str, Any]]) -> None:
        with self._lock:
            for tool in tools:
                schema = json.dumps(tool, sort_keys=True)
                if self._registered.get(tool["name"]) == schema:
                    continue
                self._core.hermes.register_host_tool(tool["name"], tool.get("description") or "",
                                                     tool.get("parameters") or {"type": "object", "properties": {}},
                                                     self._handler(tool["name"]))
                self._registered[tool["name"]] = schema

    def check(self, tools: list[dict[str, Any]]) -> None:
        """400 for a host tool named like one of Hermes' own tools."""
        for tool in tools:
            owner = self._core.hermes.toolset_of(tool["name"])
            if owner is not None and owner != HOST_TOOLSET:
                raise invalid(f"host tool {tool['name']} has the name of a Hermes tool (toolset {owner})")

    def _handler(self, name: str) -> Any:
        def handler(args: Any = None, **kw: Any) -> str:
            turn = self._core.turn_for(kw.get("task_id"))
            if turn is None or name not in turn.run.host_tools:
                return json.dumps({"error": f"the tool {name} is not available in this conversation"})
            return turn.call_host_tool(name, args)
        handler.__name__ = f"parley_host_{name}"
        return handler


class BridgeCore:
    """Runs by id, sessions by id, and the rules of ``POST /run``. Thread-safe."""

    def __init__(self, config: BridgeConfig, hermes: HermesApi, secrets: Secrets) -> None:
        self.config = config
        self.hermes = hermes
        self.secrets = secrets
        self.host_tools = HostTools(self)
        self.attachment_limits = Limits(tuple(config.attachment_types), config.max_attachment_bytes,
                                        config.max_attachments)
        self.pool = SessionPool(config.max_sessions, config.work_root, self._evicted)
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}
        self._active: dict[str, Turn] = {}
        self._finished: OrderedDict[str, Run] = OrderedDict()
        self._forgotten: set[str] = set()  # ids of active runs whose thread was deleted
        self._erasing = threading.Lock()  # one erase at a time (a delete and a late run's end may race)

    def capabilities(self) -> list[str]:
        """``GET /health``'s ``capabilities``."""
        return CAPABILITIES + (["attachments"] if self.attachment_limits.enabled else [])

    def health(self) -> dict[str, Any]:
        """``GET /health``'s answer: the protocol, the capabilities, what files it takes, the active runs."""
        answer: dict[str, Any] = {"status": "ok", "capabilities": self.capabilities(), "activeRuns": self.active_runs()}
        if self.attachment_limits.enabled:
            answer["attachments"] = self.attachment_limits.health()
        return answer

    def max_run_body(self) -> int:
        """The largest ``POST /run`` body: the general limit, plus the Base64 of the attachment limit."""
        return self.config.max_body_bytes + self.attachment_limits.body_allowance()

    # ------------------------------------------------------------------ runs

    def start(self, spec: TurnSpec) -> Run:
        """Claims the session, writes ``run_started`` (seq 1) and starts the turn's thread.

        Raises 409 RUN_ID_CONFLICT / SESSION_BUSY, 410 SESSION_NOT_FOUND, 400 for a host tool clash.
        """
        self.secrets.add(spec.model.get("apiKey"))
        self.host_tools.check(spec.host_tools)
        wants_history = "history" in spec.capabilities
        with self._lock:
            if spec.run_id in self._runs:
                raise conflict("RUN_ID_CONFLICT", "a run with this id exists already")
            known = spec.session_id is not None and self.pool.knows(spec.session_id)
            if spec.session_id is not None and not known and spec.history is None and (
                    wants_history or self.config.strict_sessions):
                raise BridgeError(410, "SESSION_NOT_FOUND",
                                  "this Bridge does not hold the session (it restarted or evicted it); send the "
                                  "request again with sessionId null" + (" and the conversation as history"
                                                                         if wants_history else ""))
            frames = FrameLog(spec.run_id, self.config.max_run_frames, self.config.max_run_bytes)
            run = Run(spec.run_id, spec.thread_id, frames, self.secrets, "approvals" in spec.capabilities,
                      frozenset(t["name"] for t in spec.host_tools))
            turn = Turn(self, run, spec)
            scope = thread_scope(spec.thread_id) if spec.thread_id else None
            session, resumed = self.pool.claim(spec.session_id, scope, spec.run_id, turn, create=True)
            if resumed:
                spec.history = None  # the session's own messages are the conversation
            elif session.messages is None and spec.history is not None:
                log.info("Run %s: building session %s from %d history entries", spec.run_id, session.id,
                         len(spec.history))
            self._runs[spec.run_id] = run
            self._active[spec.run_id] = turn
        started = {"sessionId": spec.session_id, "hermesSessionId": session.id, "resumedSession": resumed}
        if not resumed and spec.history:
            started["historyEntries"] = len(spec.history)
        run.emit("run_started", **started)
        log.info("Run %s started in session %s (%s)", spec.run_id, session.id, "resumed" if resumed else "new")
        turn.start(session)
        return run

    def run(self, run_id: str) -> Run:
        """The run (active or kept); 404 RUN_NOT_FOUND otherwise."""
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:
            raise run_not_found(run_id)
        return run

    def turn_for(self, run_id: Any) -> Turn | None:
        if isinstance(run_id, str):
            with self._lock:
                turn = self._active.get(run_id)
            if turn is not None:
                return turn
        current = threading.current_thread()
        with self._lock:
            return next((t for t in self._active.values() if t.thread is current), None)

    def active_runs(self) -> int:
        with self._lock:
            return len(self._active)

    def turn_ended(self, turn: Turn) -> None:
        """The turn's thread is done: frees the session; keeps the run for re-attaching, within bounds.

        A run whose thread was deleted meanwhile is not kept, and its conversation is erased once more (the
        run may have written to it after the delete) before the conversation is free for a new run.
        """
        run_id = turn.run.run_id
        with self._lock:
            forgotten = run_id in self._forgotten
            self._forgotten.discard(run_id)
        if forgotten and turn.run.thread_id is not None:
            try:
                self._erase(thread_scope(turn.run.thread_id))
            except Exception:
                log.exception("Run %s: erasing its deleted thread's conversation again failed", run_id)
        if turn.session is not None:
            self.pool.release(turn.session, turn)
        with self._lock:
            self._active.pop(run_id, None)
            if forgotten:
                self._runs.pop(run_id, None)
            else:
                self._finished[run_id] = turn.run
            while len(self._finished) > self.config.retained_runs:
                gone, _ = self._finished.popitem(last=False)
                self._runs.pop(gone, None)

    # ------------------------------------------------------------------ forgetting a thread

    def forget_thread(self, thread_id: str) -> None:
        """``DELETE /threads/{threadId}``: the conversation is gone from the Bridge and from Hermes' memory.

        Cancels the thread's active runs (waiting up to :data:`FORGET_WAIT` s for them to stop), drops its
        runs' frames, its sessions and their agents (and any Hermes state-db rows of them), Hermes' "session"
        approvals under its key, and its working directory. Idempotent: an unknown thread is no error.
        No run of the thread can start meanwhile (409 SESSION_BUSY). Raises OSError or RuntimeError when
        something could not be erased (the caller answers 500; calling again finishes the job).
        """
        scope = thread_scope(thread_id)
        self.pool.hold(scope)
        try:
            with self._lock:
                active = [t for t in self._active.values() if t.run.thread_id == thread_id]
                for run_id in [r.run_id for r in self._runs.values() if r.thread_id == thread_id]:
                    self._finished.pop(run_id, None)
                    self._runs.pop(run_id, None)
                self._forgotten.update(t.run.run_id for t in active)
            for turn in active:
                turn.run.cancel()
            deadline = time.monotonic() + min(self.config.cancel_grace, FORGET_WAIT)
            for turn in active:
                if turn.thread is not None:
                    turn.thread.join(max(0.0, deadline - time.monotonic()))
            self._erase(scope)
        finally:
            self.pool.unhold(scope)
        log.info("Thread %s forgotten (%d active runs cancelled)", thread_id[:200], len(active))

    def _erase(self, scope: str) -> None:
        """Erases what the Bridge and Hermes keep under ``scope``: sessions, approvals, the working directory."""
        with self._erasing:
            sessions = self.pool.forget(scope)
            for session, ids in sessions:
                if session.agent is not None:
                    self.hermes.forget_session(session.agent, ids)
                    self.hermes.close_agent(session.agent)
                    session.agent = None
                session.messages = None
            for workdir in {self.pool.workdir_for(scope)} | {session.workdir for session, _ in sessions}:
                if workdir.is_symlink():
                    workdir.unlink()
                elif workdir.exists():
                    shutil.rmtree(workdir)
            self.hermes.forget_approvals(scope)

    def _evicted(self, session: Session) -> None:
        if session.agent is not None:
            self.hermes.close_agent(session.agent)
            session.agent = None
