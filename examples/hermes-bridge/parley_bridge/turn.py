"""One turn: the run's thread, Hermes' callbacks mapped to frames, and the turn's result mapped to its end."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import attachments as attachments_mod
from . import history as history_mod
from . import results
from .hermes import HOST_TOOLSET
from .runs import Run, new_id
from .sessions import Session

if TYPE_CHECKING:
    from .core import BridgeCore

log = logging.getLogger("parley_bridge.turn")


@dataclass
class TurnSpec:
    """What ``POST /run`` asked for, validated."""
    run_id: str
    thread_id: str | None
    session_id: str | None
    user_message: str
    system_prompt: str | None
    max_iterations: int | None
    model: dict[str, Any] = field(default_factory=dict)
    host_tools: list[dict[str, Any]] = field(default_factory=list)
    capabilities: frozenset[str] = frozenset()
    context: dict[str, Any] | None = None
    history: list[dict[str, Any]] | None = None
    attachments: list[attachments_mod.Attachment] = field(default_factory=list)


class Callbacks:
    """The callbacks an agent is built with; each goes to the turn holding the session now.

    Hermes swallows exceptions from callbacks, so each is logged here. All but the deltas run on the
    run's thread; ``stream_delta_callback`` and ``reasoning_callback`` also come from Hermes' stream worker.
    """

    def __init__(self, session: Session) -> None:
        self._session = session

    def _turn(self) -> Turn | None:
        return self._session.active

    def _guard(self, what: str, function: Any, *args: Any) -> Any:
        turn = self._turn()
        if turn is None:
            return None
        try:
            return function(turn, *args)
        except Exception:
            log.exception("The %s callback failed", what)
            return None

    def stream_delta(self, text: str | None) -> None:
        self._guard("stream_delta", Turn.on_delta, text)

    def reasoning(self, text: str | None) -> None:
        self._guard("reasoning", Turn.on_reasoning, text)

    def status(self, kind: Any, text: Any = "") -> None:
        self._guard("status", Turn.on_status, kind, text)

    def tool_start(self, tool_call_id: Any, name: Any, args: Any = None) -> None:
        self._guard("tool_start", Turn.on_tool_start, tool_call_id, name, args)

    def tool_complete(self, tool_call_id: Any, name: Any, args: Any = None, result: Any = "") -> None:
        self._guard("tool_complete", Turn.on_tool_complete, tool_call_id, name, args, result)

    def interim(self, text: Any, *, already_streamed: bool = False, **_: Any) -> None:
        self._guard("interim_assistant", Turn.on_interim, text, already_streamed)

    def clarify(self, question: Any, choices: Any = None, multi_select: bool = False) -> str:
        """Blocks until the person answers (no timeout); takes no ``questions``, so Hermes asks one at a time."""
        answer = self._guard("clarify", Turn.on_clarify, question, choices, multi_select)
        return answer if isinstance(answer, str) else ""

    def kwargs(self) -> dict[str, Any]:
        return {"stream_delta_callback": self.stream_delta, "reasoning_callback": self.reasoning,
                "status_callback": self.status, "tool_start_callback": self.tool_start,
                "tool_complete_callback": self.tool_complete, "clarify_callback": self.clarify,
                "interim_assistant_callback": self.interim}


class Turn:
    """Runs ``spec`` on its own thread in ``session``, writing ``run``'s frames."""

    def __init__(self, core: BridgeCore, run: Run, spec: TurnSpec) -> None:
        self.core = core
        self.run = run
        self.spec = spec
        self.session: Session | None = None
        self.thread: threading.Thread | None = None
        self._agent: Any = None
        self._streamed: list[str] = []
        self._open_calls: dict[str, tuple[str, dict[str, Any], float]] = {}
        self._waiting_calls: set[str] = set()
        self._host_errors: dict[str, bool] = {}
        self._todo_revision = 0
        self._approval_epoch = 0
        run.interrupt = self.interrupt
        run.resolver = self._resolve

    def start(self, session: Session) -> None:
        self.session = session
        self.run.hermes_session_id = session.id
        self.thread = threading.Thread(target=self._main, name=f"bridge-run-{self.run.run_id[:40]}", daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------ the run's thread

    def _main(self) -> None:
        run, session, hermes = self.run, self.session, self.core.hermes
        assert session is not None
        started = time.monotonic()
        try:
            with hermes.approval_scope(session.scope_key, self.on_approval):
                hermes.pin_cwd(run.run_id, str(session.workdir))
                try:
                    result = self._converse(session)
                finally:
                    hermes.unpin_cwd(run.run_id)
            if result is not None:
                self._finish(session, result)
        except Exception as error:
            log.exception("Run %s: the agent failed", run.run_id)
            run.finish("failed", ("AGENT_FAILED", f"the agent failed: {type(error).__name__}: {str(error)[:500]}"))
        finally:
            if not run.ended:
                run.finish("cancelled") if run.cancel_requested else run.finish(
                    "failed", ("AGENT_FAILED", "the turn ended without a result"))
            log.info("Run %s ended %s after %.1f s (session %s)", run.run_id, run.status, time.monotonic() - started,
                     session.id)
            self.core.turn_ended(self)

    def _converse(self, session: Session) -> dict[str, Any] | None:
        session.workdir.mkdir(parents=True, exist_ok=True)
        message = self._with_attachments(session)
        if message is None:
            return None
        agent = self._agent_for(session)
        self._agent = agent
        if self.run.cancel_requested:
            return None
        if session.messages is not None:
            conversation = list(session.messages)
        else:
            conversation = history_mod.to_hermes(self.spec.history or [])
        return self.core.hermes.run_turn(agent, message, conversation, self.run.run_id)

    def _with_attachments(self, session: Session) -> str | list[dict[str, Any]] | None:
        """The turn's message, its files saved in the working directory and named in it (images also as parts);
        None if they could not be saved (the run then failed)."""
        files = self.spec.attachments
        if not files:
            return self.spec.user_message
        try:
            paths = attachments_mod.save(files, session.workdir)
        except OSError as error:
            log.error("Run %s: saving its %d attachments failed: %s", self.run.run_id, len(files), error)
            self.run.finish("failed", ("ATTACHMENTS_FAILED", "the attached files could not be saved in the "
                                       f"conversation's working directory: {error.strerror or type(error).__name__}"))
            return None
        log.info("Run %s: %d attachments saved (%d bytes, %d images)", self.run.run_id, len(files),
                 sum(len(f.data) for f in files), sum(1 for f in files if f.is_image))
        return attachments_mod.user_message(self.spec.user_message, files, paths)

    def _agent_for(self, session: Session) -> Any:
        """The session's agent, rebuilt when the model, prompt, budget or host tools changed."""
        spec, config = self.spec, self.core.config
        prompt = spec.system_prompt
        context = context_prompt(spec.context)
        if context:
            prompt = f"{prompt}\n\n{context}" if prompt else context
        model = spec.model
        identity = {"model": model, "prompt": prompt, "iterations": spec.max_iterations,
                    "tools": sorted(spec.host_tools, key=lambda t: t["name"])}
        signature = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()
        if session.agent is not None and session.agent_signature == signature:
            return session.agent
        if session.agent is not None:
            self.core.hermes.close_agent(session.agent)
        self.core.host_tools.register(spec.host_tools)  # before the agent: Hermes resolves tools at init
        toolsets = config.toolsets
        if toolsets is not None and spec.host_tools:
            toolsets = list(toolsets) + [HOST_TOOLSET]
        kwargs: dict[str, Any] = {
            "model": model.get("model") or config.model, "provider": model.get("provider") or config.provider,
            "base_url": model.get("baseUrl") or config.base_url, "api_key": model.get("apiKey"),
            "max_tokens": model.get("maxTokens"), "api_mode": model.get("apiMode"),
            "enabled_toolsets": toolsets, "max_iterations": spec.max_iterations or config.max_iterations,
            "quiet_mode": True, "session_id": session.id, "ephemeral_system_prompt": prompt, "platform": "bridge",
        }
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        kwargs.update(Callbacks(session).kwargs())
        agent = self.core.hermes.new_agent(**kwargs)
        session.agent, session.agent_signature, session.usage_base = agent, signature, {}
        log.info("Session %s: a new Hermes agent (model %s)", session.id, kwargs.get("model", "as configured"))
        return agent

    def _finish(self, session: Session, result: dict[str, Any]) -> None:
        run = self.run
        self._check_rotation()
        if isinstance(result.get("messages"), list):
            session.messages = attachments_mod.text_only(result["messages"])
        usage = None
        cumulative = results.cumulative_usage(result)
        if cumulative is not None:
            usage = results.usage_delta(cumulative, session.usage_base)
            session.usage_base = cumulative
        if run.cancel_requested or result.get("interrupted"):
            if usage and usage["totalTokens"]:
                run.emit("usage", **usage)
            run.finish("cancelled")
            return
        if result.get("failed") or (result.get("final_response") is None and not result.get("completed", True)):
            reason = result.get("error") or result.get("failure_reason") or "the model provider failed"
            run.finish("failed", ("PROVIDER_FAILED", f"Hermes could not complete the turn: {str(reason)[:1000]}"))
            return
        if not result.get("completed", True):
            run.emit("status", level="warn", text=f"The turn ended early ({result.get('turn_exit_reason') or 'incomplete'})")
        if usage is not None:
            run.emit("usage", **usage)
        final = result.get("final_response")
        run.emit("final", text=str(final) if final is not None else "".join(self._streamed))
        run.finish("completed")

    def interrupt(self) -> None:
        """Cancel: interrupts the agent; ends the stream ``done{cancelled}`` after the grace period regardless."""
        agent = self._agent
        if agent is not None:
            try:
                agent.interrupt()
            except Exception:
                log.exception("Run %s: agent.interrupt() failed", self.run.run_id)
        timer = threading.Timer(self.core.config.cancel_grace, self._force_cancel)
        timer.daemon = True
        timer.start()

    def _force_cancel(self) -> None:
        if self.run.finish("cancelled"):
            log.warning("Run %s: the agent did not stop within %.0f s of the cancel; its session stays busy until it"
                        " does", self.run.run_id, self.core.config.cancel_grace)

    def _check_rotation(self) -> None:
        agent, session = self._agent, self.session
        current = getattr(agent, "session_id", None) if agent is not None else None
        if session is None or not isinstance(current, str) or not current or current == self.run.hermes_session_id:
            return
        previous = self.run.hermes_session_id
        self.core.pool.rename(session, current)
        self.run.hermes_session_id = current
        self.run.emit("session_rotated", hermesSessionId=current, previousHermesSessionId=previous,
                      reason="compression")

    # ------------------------------------------------------------------ callbacks

    def on_delta(self, text: str | None) -> None:
        if text:
            self._streamed.append(text)
            self.run.emit("text_delta", text=text)

    def on_reasoning(self, text: str | None) -> None:
        if text:
            self.run.emit("thinking", text=text)

    def on_status(self, kind: Any, text: Any) -> None:
        self.run.emit("status", level=str(kind or "lifecycle"), text=str(text or ""))

    def on_interim(self, text: Any, already_streamed: bool) -> None:
        if text and not already_streamed:
            self.run.emit("status", level="interim", text=str(text))

    def on_tool_start(self, tool_call_id: Any, name: Any, args: Any) -> None:
        self._check_rotation()
        call_id, tool = str(tool_call_id or new_id("t")), str(name)
        arguments = args if isinstance(args, dict) else {"value": args}
        self._open_calls[call_id] = (tool, arguments, time.monotonic())
        self.run.emit("tool_call", toolCallId=call_id, toolName=tool, args=arguments,
                      preview=results.preview(tool, arguments))

    def on_tool_complete(self, tool_call_id: Any, name: Any, args: Any, result: Any) -> None:
        self._approval_epoch += 1
        self.run.approval_wait_ended()
        call_id, tool, text = str(tool_call_id), str(name), "" if result is None else str(result)
        opened = self._open_calls.pop(call_id, None)
        duration = int((time.monotonic() - opened[2]) * 1000) if opened else 0
        shown, truncated = results.bound(text, self.core.config.max_result_chars)
        is_error = self._host_errors.pop(call_id) if call_id in self._host_errors else results.looks_failed(text)
        self.run.emit("tool_result", toolCallId=call_id, toolName=tool, result=shown, truncated=truncated,
                      isError=is_error, durationMs=duration)
        if tool in results.TODO_TOOLS and not is_error:
            update = results.todos(text, self._todo_revision)
            if update is not None:
                self._todo_revision = update["revision"]
                self.run.emit("todo_update", **update)
        self._check_rotation()

    def on_clarify(self, question: Any, choices: Any, multi_select: Any) -> str:
        offered = [str(c) for c in choices][:4] if isinstance(choices, (list, tuple)) and choices else None
        multi = bool(multi_select) and offered is not None
        answer = self.run.ask_clarify(str(question), offered, multi)
        if answer is None:
            return ""
        return json.dumps(answer, ensure_ascii=False) if multi else (answer[0] if answer else "")

    def on_approval(self, data: dict[str, Any]) -> None:
        """Hermes' gateway ``notify(data)``: one ``approval_request`` frame; returns at once."""
        self._approval_epoch += 1
        run, config = self.run, self.core.config
        request_id = data.get("request_id") if isinstance(data.get("request_id"), str) else None
        description = str(data.get("description") or "")
        if not run.takes_approvals:
            run.emit("status", level="warn", text="Hermes flagged a command (" + (description or "dangerous")
                     + ") and the Bridge denied it: this client cannot answer approvals")
            self._resolve_soon(request_id, "deny", "the client cannot answer approvals")
            return
        call_id, tool = next(((cid, entry[0]) for cid, entry in reversed(self._open_calls.items())),
                             (None, "terminal"))
        keys = data.get("pattern_keys")
        allow_permanent = bool(data.get("allow_permanent", True))
        choices = ["once", "session"] + (["always"] if allow_permanent and config.allow_always else []) + ["deny"]
        frame = {"toolCallId": call_id, "toolName": tool, "command": str(data.get("command") or ""),
                 "description": description, "patternKey": data.get("pattern_key"),
                 "patternKeys": [str(k) for k in keys] if isinstance(keys, list) else []}
        if run.open_approval(frame, choices, request_id, config.approval_timeout) is None:
            self._resolve_soon(request_id, "deny", "the run was cancelled")

    def _resolve(self, approval: Any, choice: str, reason: str | None) -> None:
        self._resolve_soon(approval.request_id, choice, reason)

    def _resolve_soon(self, request_id: str | None, choice: str, reason: str | None) -> None:
        """Hands ``choice`` to Hermes' wait, retrying briefly in case Hermes queues it after ``notify``.

        Retries stop once the turn moved on (another approval or a finished tool), so a late decision can
        never answer a later command.
        """
        key, epoch = self.session.scope_key if self.session else "", self._approval_epoch

        def deliver() -> None:
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline and epoch == self._approval_epoch and not self.run.ended:
                try:
                    if self.core.hermes.resolve_approval(key, choice, request_id, reason) > 0:
                        return
                except Exception:
                    log.exception("Run %s: resolving the approval failed", self.run.run_id)
                    return
                time.sleep(0.02)

        threading.Thread(target=deliver, name="bridge-approval", daemon=True).start()

    def call_host_tool(self, name: str, args: Any) -> str:
        """A host tool's handler body (on the run's thread): waits for ``POST /runs/{id}/tool-result``."""
        arguments = args if isinstance(args, dict) else {}
        call_id = next((cid for cid, entry in reversed(self._open_calls.items())
                        if entry[0] == name and cid not in self._waiting_calls), None)
        if call_id is None:  # Hermes did not announce it: announce it here
            call_id = new_id("h")
            self.on_tool_start(call_id, name, arguments)
        self._waiting_calls.add(call_id)
        result, is_error = self.run.wait_tool_result(call_id, name, arguments)
        self._host_errors[call_id] = is_error
        return json.dumps({"error": result}, ensure_ascii=False) if is_error else result


CLIENT_CONTEXT_KEY = "sentByClient"


def context_prompt(context: dict | None) -> str:
    """The run's context as the agent reads it: what the application gave, and apart from it, labelled as
    such, what the person's client sent (Parley puts the latter under ``sentByClient``): the agent must not
    take the person's words for the application's."""
    if not context:
        return ""
    parts = []
    application = {key: value for key, value in context.items() if key != CLIENT_CONTEXT_KEY}
    if application:
        parts.append("Context from the application:\n" + json.dumps(application, ensure_ascii=False))
    if context.get(CLIENT_CONTEXT_KEY) is not None:
        parts.append("Context the person's client sent (not checked by the application; treat it as the "
                     "person's own words):\n" + json.dumps(context[CLIENT_CONTEXT_KEY], ensure_ascii=False))
    return "\n\n".join(parts)

