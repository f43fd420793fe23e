"""Stand-in for Hermes Agent v0.19.0 ``run_agent.py`` (``AIAgent``), for the Bridge's tests only.

Mirrors upstream ``run_agent.py``, ``agent/turn_context.py`` (a turn's messages are a copy of
``conversation_history`` plus the new user message; the instance keeps the last turn's list as
``_session_messages`` but never reads it back, so without ``conversation_history`` the model sees nothing
earlier), ``agent/conversation_loop.py`` (each model request is the system prompt, then the messages after
``repair_message_sequence``, contents stripped), ``agent/tool_executor.py`` (tool_start/tool_complete
callbacks with the full result), ``tools/todo_tool.py`` (the result always holds the whole list) and
``tools/clarify_tool.py`` (``clarify_callback(question, choices[, multi_select])`` on the run thread, no
timeout). The model is a script (``SCRIPTS``); every request it gets is kept in ``REQUESTS`` (and appended
as a JSON line to the file ``HERMES_STANDIN_MODEL_LOG`` names). See README.md.
"""

import inspect
import json
import os
import threading
import time
import uuid

from tools import interrupt as _interrupt
from tools import terminal_tool
from tools.registry import registry

SCRIPTS = {}  # word in the user message -> steps; the longest matching word wins
CALLS = []  # one entry per run_conversation: what the "model" was given
REQUESTS = []  # every model request: {"session_id", "task_id", "messages": [system, …]}
AGENTS = []  # every AIAgent built
SYSTEM_PROMPT = "You are Hermes Agent (stand-in)."  # stands for the prompt Hermes builds itself
_SPINNER = "(°ロ°) reflecting..."
_LOG_LOCK = threading.Lock()


def load_scripts(path=None):
    """Loads ``SCRIPTS`` from a JSON file (default: the file ``HERMES_STANDIN_SCRIPTS`` names)."""
    path = path or os.environ.get("HERMES_STANDIN_SCRIPTS")
    if path:
        with open(path, encoding="utf-8") as handle:
            SCRIPTS.update(json.load(handle))


def reset():
    SCRIPTS.clear()
    CALLS.clear()
    REQUESTS.clear()
    AGENTS.clear()


def repair_message_sequence(messages):
    """Upstream's repair before each request (``agent_runtime_helpers.repair_message_sequence``), in place,
    in its three passes: consecutive assistant messages merged (texts stripped, joined by a newline; tool
    calls united), tool results whose call is not in the assistant message before them dropped (a user
    message closes the calls), consecutive user messages merged (joined by a blank line). The number of
    repairs."""
    repairs, assistants = 0, []
    for message in messages:
        previous = assistants[-1] if assistants else None
        if previous is not None and message.get("role") == previous.get("role") == "assistant":
            texts = [t.strip() for t in (previous.get("content") or "", message.get("content") or "") if t.strip()]
            previous["content"] = "\n".join(texts)
            if message.get("tool_calls"):
                previous["tool_calls"] = list(previous.get("tool_calls") or []) + message["tool_calls"]
            repairs += 1
        else:
            assistants.append(message)
    known, paired = set(), []
    for message in assistants:
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") in known:
                known.discard(message["tool_call_id"])
                paired.append(message)
            else:
                repairs += 1
            continue
        if role == "assistant":
            known = {c.get("id") for c in message.get("tool_calls") or []}
        elif role == "user":
            known = set()
        paired.append(message)
    merged = []
    for message in paired:
        previous = merged[-1] if merged else None
        if previous is not None and message.get("role") == previous.get("role") == "user":
            texts = [t for t in (_text(previous.get("content")), _text(message.get("content"))) if t]
            previous["content"] = "\n\n".join(texts)
            repairs += 1
        else:
            merged.append(message)
    if repairs:
        messages[:] = merged
    return repairs


def _text(content):
    """A message's text: its string content, or the text parts of a parts list (upstream's ``_flatten_mt``)."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content or ""


def _api_message(message):
    """The copy of a message a request carries: no bookkeeping keys, the content stripped."""
    copy = {k: v for k, v in message.items() if k in ("role", "content", "tool_calls", "tool_call_id")}
    if isinstance(copy.get("content"), str):
        copy["content"] = copy["content"].strip()
    return copy


class _TodoStore:
    def __init__(self):
        self._items = []

    def write(self, todos, merge=False):
        if not merge:
            self._items = [dict(t) for t in todos]
        else:
            by_id = {t["id"]: t for t in self._items}
            for item in todos:
                if item.get("id") in by_id:
                    by_id[item["id"]].update({k: v for k, v in item.items() if v})
                else:
                    self._items.append(dict(item))
        return self.read()

    def read(self):
        return [dict(t) for t in self._items]


class AIAgent:
    def __init__(self, base_url=None, api_key=None, provider=None, api_mode=None, model="", max_iterations=90,
                 enabled_toolsets=None, disabled_toolsets=None, quiet_mode=False, ephemeral_system_prompt=None,
                 session_id=None, tool_progress_callback=None, tool_start_callback=None,
                 tool_complete_callback=None, thinking_callback=None, reasoning_callback=None,
                 clarify_callback=None, step_callback=None, stream_delta_callback=None,
                 interim_assistant_callback=None, tool_gen_callback=None, status_callback=None,
                 event_callback=None, max_tokens=None, platform=None, skip_context_files=False,
                 skip_memory=False, session_db=None):
        self.model, self.api_key, self.base_url, self.provider = model, api_key, base_url, provider
        self.max_iterations = max_iterations
        self.ephemeral_system_prompt = ephemeral_system_prompt
        self.session_id = session_id or time.strftime("%Y%m%d_%H%M%S_") + uuid.uuid4().hex[:6]
        self.tools = registry.names_for(enabled_toolsets)  # resolved ONCE, as upstream
        self.stream_delta_callback, self.reasoning_callback = stream_delta_callback, reasoning_callback
        self.thinking_callback, self.status_callback = thinking_callback, status_callback
        self.tool_start_callback, self.tool_complete_callback = tool_start_callback, tool_complete_callback
        self.clarify_callback = clarify_callback
        self._todo_store = _TodoStore()
        self.session_prompt_tokens = self.session_completion_tokens = 0
        self._interrupted = threading.Event()
        self._run_thread = None
        self._session_db = session_db  # upstream opens its default one lazily (session_search); tests set one
        self.closed = False
        AGENTS.append(self)

    # ------------------------------------------------------------------ the public surface

    def interrupt(self, message=None):
        """From any thread: aborts the "API call" and a running command; does NOT wake clarify."""
        self._interrupted.set()
        if self._run_thread is not None:
            _interrupt.set_interrupt(True, self._run_thread)

    def close(self):
        self.closed = True

    def run_conversation(self, user_message, system_message=None, conversation_history=None, task_id=None,
                         stream_callback=None, persist_user_message=None):
        self._run_thread = threading.get_ident()
        self._interrupted.clear()
        _interrupt.set_interrupt(False, self._run_thread)
        self.messages = list(conversation_history) if conversation_history else []  # a copy, as upstream
        self.messages.append({"role": "user", "content": user_message})
        self._session_messages = self.messages
        self.task_id, self.final, self.api_calls = task_id, None, 1
        self._requests = []
        CALLS.append({"session_id": self.session_id, "task_id": task_id, "model": self.model,
                      "system": self.ephemeral_system_prompt, "tools": list(self.tools),
                      "user_turns": [m["content"] for m in self.messages if m.get("role") == "user"],
                      "messages": list(self.messages), "requests": self._requests})
        self.session_prompt_tokens += 10
        self.session_completion_tokens += 5
        try:
            for step in self._script(_text(user_message)):
                if self._interrupted.is_set():
                    return self._interrupted_result()
                self._call_model()
                outcome = self._step(step)
                if outcome is not None:
                    return outcome
            if self._interrupted.is_set():
                return self._interrupted_result()
        finally:
            _interrupt.set_interrupt(False, self._run_thread)
        if self.final is None:
            self.final = "(stand-in) " + _text(user_message)
        self.messages.append({"role": "assistant", "content": self.final})
        return self._result(final_response=self.final, completed=True)

    # ------------------------------------------------------------------ the script

    @staticmethod
    def _script(message):
        for word in sorted(SCRIPTS, key=len, reverse=True):
            if word in message:
                return SCRIPTS[word]
        return [{"say": "(stand-in) " + message}]

    def _call_model(self):
        """One request to the "model": recorded as upstream would send it."""
        repair_message_sequence(self.messages)
        system = SYSTEM_PROMPT
        if self.ephemeral_system_prompt:
            system = (system + "\n\n" + self.ephemeral_system_prompt).strip()
        request = [{"role": "system", "content": system}] + [_api_message(m) for m in self.messages]
        self._requests.append(request)
        REQUESTS.append({"session_id": self.session_id, "task_id": self.task_id, "messages": request})
        path = os.environ.get("HERMES_STANDIN_MODEL_LOG")
        if path:
            line = json.dumps({"session_id": self.session_id, "task_id": self.task_id, "messages": request},
                              ensure_ascii=False)
            with _LOG_LOCK, open(path, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        if self.thinking_callback:
            self.thinking_callback(_SPINNER)  # a spinner label, never reasoning

    def _step(self, step):
        if "reasoning" in step:
            for word in step["reasoning"].split(" "):
                self.reasoning_callback and self.reasoning_callback(word + " ")
        elif "say" in step or "recall" in step or "leak" in step:
            text = step.get("say")
            if "recall" in step:
                turns = [_text(m["content"]) for m in self.messages if m.get("role") == "user"]
                text = f"I see {len(turns)} user turns: " + " | ".join(turns)
            if "leak" in step:
                text = f"the key is {self.api_key}"
                self.status_callback and self.status_callback("lifecycle", f"retrying with key {self.api_key}")
            for index, word in enumerate(text.split(" ")):
                self.stream_delta_callback and self.stream_delta_callback(("" if index == 0 else " ") + word)
            self.stream_delta_callback and self.stream_delta_callback(None)
            self.final = text if self.final is None or "recall" in step else self.final + "\n" + text
        elif "tool" in step:
            self._tool(step["tool"], step.get("args") or {})
        elif "sleep" in step:
            self._interrupted.wait(step["sleep"])
            if self._interrupted.is_set():
                return self._interrupted_result(during_api=True)
        elif "stubborn" in step:
            time.sleep(step["stubborn"])  # a call that does not notice interrupt() (a hung provider request)
        elif "fail" in step:
            print(f"❌ API call failed after 3 retries: {step['fail']}")  # upstream prints even when quiet
            self.status_callback and self.status_callback("lifecycle", "❌ API failed after 3 retries")
            return {"final_response": None, "failed": True, "error": step["fail"], "failure_reason": "api_error",
                    "messages": self.messages, "api_calls": 3, "completed": False}
        elif "raise" in step:
            raise RuntimeError(step["raise"])
        elif "rotate" in step:
            self.session_id = step["rotate"]
        elif "print" in step:
            print(step["print"])
        elif "budget" in step:
            self.final = "summary of what was done"
            self.messages.append({"role": "assistant", "content": self.final})
            return self._result(final_response=self.final, completed=False,
                                turn_exit_reason=f"max_iterations_reached({self.max_iterations}/{self.max_iterations})")
        return None

    def _tool(self, name, args):
        call_id = "call_" + uuid.uuid4().hex[:8]
        self.session_prompt_tokens += 3
        self.tool_start_callback and self.tool_start_callback(call_id, name, args)
        if name not in self.tools:
            result = json.dumps({"error": f"Tool '{name}' does not exist"})
        elif name == "terminal":
            result = terminal_tool.terminal_tool(args.get("command", ""), task_id=self.task_id)
        elif name == "todo":
            items = self._todo_store.write(args.get("todos") or [], bool(args.get("merge")))
            result = json.dumps({"todos": items, "summary": {"total": len(items)}})
        elif name == "clarify":
            result = self._clarify(args)
        else:
            result = registry.dispatch(name, args, task_id=self.task_id, session_id=self.session_id, user_task=None)
        self.messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        self.tool_complete_callback and self.tool_complete_callback(call_id, name, args, result)

    def _clarify(self, args):
        callback = self.clarify_callback
        if callback is None:
            return json.dumps({"error": "Clarify tool is not available in this execution context."})
        question, choices = args.get("question", ""), args.get("choices")
        try:
            takes_multi = "multi_select" in inspect.signature(callback).parameters
            if takes_multi:
                answer = callback(question, choices, multi_select=bool(args.get("multi_select")))
            else:
                answer = callback(question, choices)
        except Exception as error:
            return json.dumps({"error": f"Failed to get user input: {error}"})
        return json.dumps({"question": question, "choices_offered": choices, "user_response": str(answer).strip()})

    def _interrupted_result(self, during_api=False):
        return self._result(final_response=None, completed=False, interrupted=True,
                            interrupt_message=None,
                            turn_exit_reason="interrupted_during_api_call" if during_api else "interrupted_by_user")

    def _result(self, **fields):
        prompt, completion = self.session_prompt_tokens, self.session_completion_tokens
        return dict({"messages": self.messages, "api_calls": self.api_calls, "failed": False,
                     "input_tokens": prompt, "output_tokens": completion, "prompt_tokens": prompt,
                     "completion_tokens": completion, "total_tokens": prompt + completion}, **fields)


load_scripts()
