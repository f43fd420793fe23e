"""One run's state on the Bridge: its frames, status, and the inputs it waits for (clarify, approval, host tool).

Every method is thread-safe. The run's thread asks (and blocks); HTTP threads answer, cancel and read.
Each pending input is decided exactly once: answered, expired or cancelled.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import BridgeError, conflict, invalid
from .frames import FrameLog
from .redact import Secrets

TERMINAL = ("completed", "failed", "cancelled")
DECISIONS = ("once", "session", "always", "deny")


@dataclass
class Clarify:
    clarify_id: str
    question: str
    choices: list[str] | None
    multi_select: bool
    event: threading.Event = field(default_factory=threading.Event)
    outcome: str | None = None  # answered | cancelled
    answer: list[str] | None = None


@dataclass
class Approval:
    approval_id: str
    frame: dict[str, Any]
    choices: list[str]
    request_id: str | None
    outcome: str | None = None  # answered | expired | cancelled
    decision: str | None = None
    timer: threading.Timer | None = None


@dataclass
class ToolWait:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    event: threading.Event = field(default_factory=threading.Event)
    outcome: str | None = None  # answered | cancelled
    result: str = ""
    is_error: bool = False


def new_id(prefix: str) -> str:
    """``<prefix>-`` and 128 random bits: an id no web page or other client can guess (approval, clarify, call)."""
    return f"{prefix}-{secrets.token_urlsafe(16)}"


Resolver = Callable[[Approval, str, str | None], None]
"""Hands an approval's outcome to Hermes: ``resolver(approval, choice, reason)``."""


class Run:
    """A run: ``runId`` chosen by the client, the frames it produced, and what it waits for."""

    def __init__(self, run_id: str, thread_id: str | None, frames: FrameLog, secrets: Secrets,
                 takes_approvals: bool, host_tools: frozenset[str]) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self.frames = frames
        self.takes_approvals = takes_approvals
        self.host_tools = host_tools
        self.hermes_session_id = ""
        self.cancel_requested = False
        self.ended_at: float | None = None
        self._secrets = secrets
        self._lock = threading.RLock()
        self._status = "running"
        self._clarifies: dict[str, Clarify] = {}
        self._approvals: dict[str, Approval] = {}
        self._tools: dict[str, ToolWait] = {}
        self._pending: Clarify | Approval | ToolWait | None = None
        self.resolver: Resolver = lambda approval, choice, reason: None
        self.interrupt: Callable[[], None] = lambda: None

    # ------------------------------------------------------------------ frames and the end

    @property
    def status(self) -> str:
        with self._lock:
            return self._status

    @property
    def ended(self) -> bool:
        with self._lock:
            return self._status in TERMINAL

    def emit(self, kind: str, **payload: Any) -> int:
        """Appends a frame (secrets masked in every string of it); 0 once the run ended or is cancelled
        (a cancelled run's stream ends with what :meth:`cancel` withdrew, then ``done``)."""
        with self._lock:
            if self.cancel_requested:
                return 0
            return self._append(kind, payload)

    def _append(self, kind: str, payload: dict[str, Any]) -> int:
        if self._status in TERMINAL:
            return 0
        return self.frames.append(kind, self._clean(payload))

    def finish(self, status: str, error: tuple[str, str] | None = None) -> bool:
        """Ends the run: an ``error`` frame if given, then ``done``. False if it had ended already."""
        with self._lock:
            if self._status in TERMINAL:
                return False
            if error is not None:
                self.frames.append("error", self._clean({"code": error[0], "message": error[1], "retryable": False}))
            self.frames.append("done", {"status": status, "hermesSessionId": self.hermes_session_id}, last=True)
            self._status = status
            self.ended_at = time.monotonic()
            pending = [a for a in self._approvals.values() if a.timer is not None]
        for approval in pending:
            approval.timer.cancel()
        return True

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._secrets.redact(value)
        if isinstance(value, dict):
            return {k: self._clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._clean(v) for v in value]
        return value

    def _wait_state(self, pending: Clarify | Approval | ToolWait | None, status: str) -> None:
        self._pending = pending
        if self._status not in TERMINAL:
            self._status = status

    # ------------------------------------------------------------------ clarify

    def ask_clarify(self, question: str, choices: list[str] | None, multi_select: bool) -> list[str] | None:
        """Sends ``clarify_request`` and blocks until answered (the answer) or cancelled (None)."""
        with self._lock:
            if self.cancel_requested or self._status in TERMINAL:
                return None
            clarify = Clarify(new_id("c"), question, choices, multi_select)
            self._clarifies[clarify.clarify_id] = clarify
            self.emit("clarify_request", clarifyId=clarify.clarify_id, question=question, choices=choices,
                      multiSelect=multi_select, questions=None)
            self._wait_state(clarify, "waiting_for_clarification")
        clarify.event.wait()
        with self._lock:
            self._wait_state(None, "running")
            return clarify.answer if clarify.outcome == "answered" else None

    def answer_clarify(self, clarify_id: str, answer: list[str]) -> bool:
        """Takes an answer; True if it is a replay of the one taken. Raises 409 CLARIFY_NOT_PENDING."""
        with self._lock:
            clarify = self._clarifies.get(clarify_id)
            if clarify is not None and clarify.outcome == "answered":
                if clarify.answer == answer:
                    return True
                raise conflict("CLARIFY_NOT_PENDING", "this question took another answer")
            if clarify is None or clarify.outcome is not None or self._status in TERMINAL:
                raise conflict("CLARIFY_NOT_PENDING", "the run does not wait for an answer to " + clarify_id[:100])
            clarify.outcome, clarify.answer = "answered", answer
            self.emit("clarify_resolved", clarifyId=clarify_id, outcome="answered")
            clarify.event.set()
            return False

    # ------------------------------------------------------------------ approvals

    def open_approval(self, frame: dict[str, Any], choices: list[str], request_id: str | None,
                      timeout: float) -> Approval | None:
        """Sends ``approval_request`` under a new random id; None if the run is cancelled (the caller denies).

        With ``timeout > 0`` a timer expires the approval then, as Hermes' own timeout would.
        """
        with self._lock:
            if self.cancel_requested or self._status in TERMINAL:
                return None
            aid = new_id("a")
            expires = int(time.time() * 1000 + timeout * 1000) if timeout > 0 else None
            approval = Approval(aid, dict(frame, approvalId=aid, choices=choices, expiresAt=expires), choices,
                                request_id)
            self._approvals[aid] = approval
            self.emit("approval_request", **approval.frame)
            self._wait_state(approval, "waiting_for_approval")
            if timeout > 0:
                approval.timer = threading.Timer(timeout, self.expire_approval, args=(aid,))
                approval.timer.daemon = True
                approval.timer.start()
            return approval

    def decide_approval(self, approval_id: str, decision: str) -> bool:
        """Takes a decision; True if it repeats the one taken. Raises 404/409/400 as the protocol says."""
        if decision not in DECISIONS:
            raise invalid("decision must be one of once, session, always, deny")
        with self._lock:
            approval = self._approvals.get(approval_id)
            if approval is None:
                raise BridgeError(404, "APPROVAL_NOT_FOUND", "the run never asked approval " + approval_id[:100])
            if approval.outcome == "answered" and approval.decision == decision:
                return True
            if approval.outcome is not None or self._status in TERMINAL:
                raise conflict("APPROVAL_NOT_PENDING", "the approval was decided otherwise, expired or withdrawn")
            if decision not in approval.choices:
                raise invalid(f"{decision} is not among the offered choices {approval.choices}")
            approval.outcome, approval.decision = "answered", decision
            self._settle(approval)
            self.emit("approval_resolved", approvalId=approval_id, outcome="answered", decision=decision)
        self.resolver(approval, decision, None)
        return False

    def expire_approval(self, approval_id: str) -> bool:
        """Expires a pending approval (deny, timed out); True if it had expired already. Raises 404/409."""
        with self._lock:
            approval = self._approvals.get(approval_id)
            if approval is None:
                raise BridgeError(404, "APPROVAL_NOT_FOUND", "the run never asked approval " + approval_id[:100])
            if approval.outcome == "expired":
                return True
            if approval.outcome is not None or self._status in TERMINAL:
                raise conflict("APPROVAL_NOT_PENDING", "the approval was decided or withdrawn")
            approval.outcome = "expired"
            self._settle(approval)
            self.emit("approval_resolved", approvalId=approval_id, outcome="expired", decision=None)
        self.resolver(approval, "deny", "the approval timed out")
        return False

    def approval_wait_ended(self) -> None:
        """Hermes stopped waiting on its own (its timeout): a still-pending approval reads as expired."""
        with self._lock:
            approval = self._pending if isinstance(self._pending, Approval) else None
            if approval is None or approval.outcome is not None:
                return
            approval.outcome = "expired"
            self._settle(approval)
            self.emit("approval_resolved", approvalId=approval.approval_id, outcome="expired", decision=None)

    def _settle(self, approval: Approval) -> None:
        if approval.timer is not None:
            approval.timer.cancel()
        if self._pending is approval:
            self._wait_state(None, "running")

    # ------------------------------------------------------------------ host tools

    def wait_tool_result(self, tool_call_id: str, tool_name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Blocks until ``POST /runs/{id}/tool-result`` for the call, or cancel (an error result)."""
        with self._lock:
            wait = ToolWait(tool_call_id, tool_name, args)
            if self.cancel_requested or self._status in TERMINAL:
                return "the run was cancelled", True
            self._tools[tool_call_id] = wait
            self._wait_state(wait, "waiting_for_tool_result")
        wait.event.wait()
        with self._lock:
            self._wait_state(None, "running")
        if wait.outcome != "answered":
            return "the run was cancelled before the host answered", True
        return wait.result, wait.is_error

    def submit_tool_result(self, tool_call_id: str, result: str, is_error: bool) -> bool:
        """Takes a host tool's result; True if it repeats the one taken. Raises 409 TOOL_CALL_NOT_PENDING."""
        with self._lock:
            wait = self._tools.get(tool_call_id)
            if wait is not None and wait.outcome == "answered":
                if (wait.result, wait.is_error) == (result, is_error):
                    return True
                raise conflict("TOOL_CALL_NOT_PENDING", "this tool call took another result")
            if wait is None or wait.outcome is not None or self._status in TERMINAL:
                raise conflict("TOOL_CALL_NOT_PENDING", "the run does not wait for a result of " + tool_call_id[:100])
            wait.outcome, wait.result, wait.is_error = "answered", result, is_error
            wait.event.set()
            return False

    # ------------------------------------------------------------------ cancel and status

    def cancel(self) -> str | None:
        """Withdraws what the run waits for and interrupts the agent; the terminal status if it had ended."""
        to_deny: list[Approval] = []
        with self._lock:
            if self._status in TERMINAL:
                return self._status
            if self.cancel_requested:
                return None
            self.cancel_requested = True
            for clarify in self._clarifies.values():
                if clarify.outcome is None:
                    clarify.outcome = "cancelled"
                    self._append("clarify_resolved", {"clarifyId": clarify.clarify_id, "outcome": "cancelled"})
                    clarify.event.set()
            for approval in self._approvals.values():
                if approval.outcome is None:
                    approval.outcome = "cancelled"
                    self._settle(approval)
                    self._append("approval_resolved", {"approvalId": approval.approval_id, "outcome": "cancelled",
                                                        "decision": None})
                    to_deny.append(approval)
            for wait in self._tools.values():
                if wait.outcome is None:
                    wait.outcome = "cancelled"
                    wait.event.set()
        for approval in to_deny:
            self.resolver(approval, "deny", "the run was cancelled")
        self.interrupt()
        return None

    def snapshot(self) -> dict[str, Any]:
        """``GET /runs/{runId}``."""
        with self._lock:
            pending = self._pending
            clarify = approval = tool = None
            if isinstance(pending, Clarify):
                clarify = {"clarifyId": pending.clarify_id, "question": pending.question, "choices": pending.choices,
                           "multiSelect": pending.multi_select}
            elif isinstance(pending, Approval):
                approval = dict(pending.frame)
            elif isinstance(pending, ToolWait):
                tool = {"toolCallId": pending.tool_call_id, "toolName": pending.tool_name, "args": pending.args}
            return self._clean({"runId": self.run_id, "status": self._status, "hermesSessionId": self.hermes_session_id,
                                "lastSeq": self.frames.last_seq, "pendingClarify": clarify, "pendingToolCall": tool,
                                "pendingApproval": approval})
