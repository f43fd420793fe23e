"""The ``history`` of ``POST /run`` (a Bridge protocol addition) as Hermes' ``conversation_history``.

Wire entries, oldest first (Parley's ``RunRequest.history()``):
``{"role":"user","text"}``, ``{"role":"assistant","text"}``,
``{"role":"tool_call","toolCallId","toolName","args"}`` (args: JSON text or an object) and
``{"role":"tool_result","toolCallId","toolName","result","isError"}``.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import invalid

ROLES = ("user", "assistant", "tool_call", "tool_result")


def validate(history: Any) -> list[dict[str, Any]]:
    """The entries, checked; raises 400 INVALID_REQUEST naming the first bad entry."""
    if not isinstance(history, list):
        raise invalid("history must be a list")
    for index, entry in enumerate(history):
        where = f"history[{index}]"
        if not isinstance(entry, dict) or entry.get("role") not in ROLES:
            raise invalid(f"{where} must be an object whose role is one of {', '.join(ROLES)}")
        role = entry["role"]
        if role in ("user", "assistant"):
            if not isinstance(entry.get("text"), str):
                raise invalid(f"{where}.text must be a string")
        else:
            if not isinstance(entry.get("toolCallId"), str) or not entry["toolCallId"]:
                raise invalid(f"{where}.toolCallId must be a non-blank string")
            if not isinstance(entry.get("toolName"), str) or not entry["toolName"]:
                raise invalid(f"{where}.toolName must be a non-blank string")
            if role == "tool_result" and not isinstance(entry.get("result"), str):
                raise invalid(f"{where}.result must be a string")
            if role == "tool_call" and not isinstance(entry.get("args", ""), (str, dict)):
                raise invalid(f"{where}.args must be JSON text or an object")
    return history


def to_hermes(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style messages for ``AIAgent.run_conversation(conversation_history=…)``.

    Within one answer (the entries between two user/assistant texts) the tool calls that have a result
    become an assistant message with ``tool_calls`` followed by one ``tool`` message each, placed before the
    answer's text, as Hermes itself orders them. A call without a result (or a result without a call) is
    dropped: providers reject unpaired tool calls. Blank answers without tools are dropped.
    """
    messages: list[dict[str, Any]] = []
    group: dict[str, Any] = {"text": None, "calls": [], "results": {}}

    def flush() -> None:
        paired = [c for c in group["calls"] if c["toolCallId"] in group["results"]]
        if paired:
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": c["toolCallId"], "type": "function",
                 "function": {"name": c["toolName"], "arguments": _arguments(c.get("args"))}} for c in paired]})
            for call in paired:
                result = group["results"][call["toolCallId"]]
                messages.append({"role": "tool", "tool_call_id": call["toolCallId"], "content": result["result"]})
        if group["text"] is not None and group["text"].strip():
            messages.append({"role": "assistant", "content": group["text"]})
        group.update(text=None, calls=[], results={})

    for entry in history:
        role = entry["role"]
        if role == "user":
            flush()
            messages.append({"role": "user", "content": entry["text"]})
        elif role == "assistant":
            flush()
            group["text"] = entry["text"]
        elif role == "tool_call":
            group["calls"].append(entry)
        else:
            group["results"][entry["toolCallId"]] = entry
    flush()
    return messages


def _arguments(args: Any) -> str:
    if isinstance(args, dict):
        return json.dumps(args, ensure_ascii=False)
    return args if isinstance(args, str) and args.strip() else "{}"
