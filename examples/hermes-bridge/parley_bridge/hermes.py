"""The parts of Hermes Agent the Bridge uses, in one place, tolerant of the differences between versions.

Written against Hermes Agent v0.19 (``run_agent.AIAgent``, ``tools/approval.py``, ``tools/registry.py``,
``tools/terminal_tool.py``, ``gateway/session_context.py``) and checked against newer sources; the README's
"How it maps Hermes onto the protocol" says what it relies on. Nothing else in the Bridge imports Hermes.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
from typing import Any, Callable, Iterator

log = logging.getLogger("parley_bridge.hermes")

HOST_TOOLSET = "parley_host"
"""The Hermes toolset the Bridge registers host tools in."""


def _accepted(function: Callable[..., Any]) -> tuple[set[str], bool]:
    """The keyword names ``function`` takes, and whether it takes ``**kwargs``."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return set(), True
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names, any(p.kind == p.VAR_KEYWORD for p in params)


def _call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Calls ``function`` with the keyword arguments it accepts (older Hermes versions take fewer)."""
    names, open_ended = _accepted(function)
    return function(*args, **{k: v for k, v in kwargs.items() if open_ended or k in names})


class HermesApi:
    """Hermes Agent, imported once (the first import takes seconds).

    Raises RuntimeError at construction when Hermes lacks the gateway approval functions: without them
    flagged commands would run without asking, so the Bridge refuses to start (fail closed).
    """

    def __init__(self) -> None:
        run_agent = importlib.import_module("run_agent")
        self.approval = importlib.import_module("tools.approval")
        self.registry = importlib.import_module("tools.registry").registry
        self.terminal = _optional("tools.terminal_tool")
        self.session_context = _optional("gateway.session_context")
        self._agent_class = run_agent.AIAgent
        self._agent_params = _accepted(self._agent_class.__init__)
        self._set_session_key = getattr(self.approval, "set_current_session_key", None) or getattr(
            _optional("tools.approval_context"), "set_current_session_key", None)
        needed = {"set_current_session_key": self._set_session_key}
        for name in ("register_gateway_notify", "unregister_gateway_notify", "resolve_gateway_approval"):
            needed[name] = getattr(self.approval, name, None)
        missing = [name for name, function in needed.items() if not callable(function)]
        if missing:
            raise RuntimeError("this Hermes Agent lacks tools.approval." + ", ".join(missing)
                               + ": without a gateway approval context it would run flagged commands without asking")
        log.info("Hermes Agent loaded from %s", getattr(run_agent, "__file__", "?"))

    # ------------------------------------------------------------------ agents

    def new_agent(self, **kwargs: Any) -> Any:
        """An ``AIAgent`` built with the keyword arguments this Hermes version accepts."""
        names, open_ended = self._agent_params
        dropped = sorted(k for k in kwargs if not open_ended and k not in names)
        if dropped:
            log.debug("This Hermes AIAgent takes no %s; not passed", ", ".join(dropped))
        return self._agent_class(**{k: v for k, v in kwargs.items() if open_ended or k in names})

    @staticmethod
    def run_turn(agent: Any, message: str, history: list[dict[str, Any]], task_id: str) -> dict[str, Any]:
        """``agent.run_conversation``; its result dict (a reduced one on a provider failure)."""
        result = _call(agent.run_conversation, user_message=message, conversation_history=history, task_id=task_id)
        return result if isinstance(result, dict) else {"final_response": str(result), "completed": True}

    @staticmethod
    def close_agent(agent: Any) -> None:
        close = getattr(agent, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                log.debug("agent.close() failed", exc_info=True)

    @staticmethod
    def forget_session(agent: Any, session_ids: list[str]) -> None:
        """Deletes the sessions' rows from Hermes' state db, if the agent opened one.

        The Bridge passes no ``session_db``, but Hermes opens its default one lazily (for its
        ``session_search`` tool) and then writes the conversation to it under the session id.
        """
        delete = getattr(getattr(agent, "_session_db", None), "delete_session", None)
        if not callable(delete):
            return
        for session_id in session_ids:
            _call(delete, session_id, sessions_dir=getattr(agent, "logs_dir", None))

    # ------------------------------------------------------------------ approvals

    def forget_approvals(self, key: str) -> None:
        """Drops Hermes' "session" approvals (and any wait still queued) under ``key``.

        Raises RuntimeError when this Hermes has no ``tools.approval.clear_session``.
        """
        clear = getattr(self.approval, "clear_session", None)
        if not callable(clear):
            raise RuntimeError("this Hermes Agent lacks tools.approval.clear_session: its session approvals under "
                               + key[:200] + " cannot be forgotten")
        clear(key)

    @contextlib.contextmanager
    def approval_scope(self, key: str, notify: Callable[[dict[str, Any]], None]) -> Iterator[None]:
        """Binds the gateway approval context on the calling thread (the run's), as Hermes' API server does.

        Every command Hermes' guards flag then goes to ``notify(data)`` and waits for
        :meth:`resolve_approval`; ``session`` approvals are kept under ``key``.
        """
        token = self._set_session_key(key)
        if self.session_context is not None and callable(getattr(self.session_context, "set_session_vars", None)):
            _call(self.session_context.set_session_vars, platform="bridge", session_key=key)
        self.approval.register_gateway_notify(key, notify)
        try:
            yield
        finally:
            self.approval.unregister_gateway_notify(key)
            reset = getattr(self.approval, "reset_current_session_key", None)
            if callable(reset) and token is not None:
                with contextlib.suppress(Exception):
                    reset(token)

    def resolve_approval(self, key: str, choice: str, request_id: str | None, reason: str | None) -> int:
        """Wakes the run waiting on ``key`` with ``choice``; how many waits were resolved."""
        kwargs: dict[str, Any] = {}
        if reason:
            kwargs["reason"] = reason
        if request_id:
            kwargs["request_id"] = request_id
        return int(_call(self.approval.resolve_gateway_approval, key, choice, **kwargs) or 0)

    # ------------------------------------------------------------------ tools and working directories

    def register_host_tool(self, name: str, description: str, parameters: dict[str, Any],
                           handler: Callable[..., str]) -> None:
        """Registers a host tool in the :data:`HOST_TOOLSET`; ValueError if a Hermes tool has the name."""
        owner = self.toolset_of(name)
        if owner is not None and owner != HOST_TOOLSET:
            raise ValueError(f"host tool {name} has the name of a Hermes tool (toolset {owner})")
        schema = {"name": name, "description": description, "parameters": parameters}
        _call(self.registry.register, name=name, toolset=HOST_TOOLSET, schema=schema, handler=handler,
              description=description)

    def toolset_of(self, name: str) -> str | None:
        lookup = getattr(self.registry, "get_toolset_for_tool", None)
        if callable(lookup):
            return lookup(name)
        entry = getattr(self.registry, "_tools", {}).get(name)
        return getattr(entry, "toolset", None)

    def pin_cwd(self, task_id: str, cwd: str) -> None:
        """Runs the task's terminal commands in ``cwd`` (``register_task_env_overrides``)."""
        register = getattr(self.terminal, "register_task_env_overrides", None)
        if callable(register):
            register(task_id, {"cwd": cwd})
        else:
            log.warning("This Hermes cannot pin a task's working directory; commands run in the Bridge's own")

    def unpin_cwd(self, task_id: str) -> None:
        clear = getattr(self.terminal, "clear_task_env_overrides", None)
        if callable(clear):
            with contextlib.suppress(Exception):
                clear(task_id)


def _optional(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
