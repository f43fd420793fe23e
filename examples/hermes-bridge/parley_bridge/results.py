"""Reading Hermes' tool results and turn results into frame payloads (pure functions)."""

from __future__ import annotations

import json
from typing import Any

TODO_TOOLS = ("todo", "todo_list")
TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled")
_USAGE_KEYS = (("inputTokens", ("input_tokens", "prompt_tokens")),
               ("outputTokens", ("output_tokens", "completion_tokens")),
               ("totalTokens", ("total_tokens",)))


def bound(result: str, limit: int) -> tuple[str, bool]:
    """``result`` cut to ``limit`` characters with a marker saying so, and whether it was cut."""
    if len(result) <= limit:
        return result, False
    return result[:limit] + f"\n… [truncated by the Bridge: {limit} of {len(result)} characters shown]", True


def looks_failed(result: str) -> bool:
    """True for Hermes' blocked and error results: ``BLOCKED: …`` or a JSON object with an ``error``."""
    head = result.lstrip()
    if head.startswith("BLOCKED") or head.startswith("Error:"):
        return True
    if head.startswith("{"):
        try:
            data = json.loads(head)
        except ValueError:
            return False
        if isinstance(data, dict):
            error = data.get("error")
            return bool(error) or data.get("success") is False or str(data.get("status", "")).lower() == "blocked"
    return False


def todos(result: str, previous_revision: int) -> dict[str, Any] | None:
    """The ``todo_update`` payload from the todo tool's result (which always holds the whole list)."""
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("todos"), list):
        return None
    items = []
    for item in data["todos"]:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status", "pending")).lower()
        items.append({"id": str(item.get("id", "")), "content": str(item.get("content", "")),
                      "status": status if status in TODO_STATUSES else "pending",
                      "parent": str(item["parent"]) if item.get("parent") else None})
    revision = data.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision <= previous_revision:
        revision = previous_revision + 1
    return {"revision": revision, "todos": items}


def cumulative_usage(result: dict[str, Any]) -> dict[str, int] | None:
    """Hermes' cumulative token counters in a turn result; None when it has none (a provider failure)."""
    found: dict[str, int] = {}
    for name, keys in _USAGE_KEYS:
        for key in keys:
            value = result.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[name] = int(value)
                break
    if "inputTokens" not in found and "outputTokens" not in found:
        return None
    found.setdefault("inputTokens", 0)
    found.setdefault("outputTokens", 0)
    found.setdefault("totalTokens", found["inputTokens"] + found["outputTokens"])
    return found


def usage_delta(now: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """This turn's usage: the counters' growth since the agent's previous turn."""
    return {name: max(0, now.get(name, 0) - before.get(name, 0)) for name, _ in _USAGE_KEYS}


def preview(name: str, args: dict[str, Any]) -> str:
    """A one-line summary of a tool call: the command, path or first text argument, at most 120 characters."""
    for key in ("command", "path", "query", "url", "question"):
        if isinstance(args.get(key), str):
            return args[key][:120]
    for value in args.values():
        if isinstance(value, str):
            return value[:120]
    return name
