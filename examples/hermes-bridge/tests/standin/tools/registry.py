"""Stand-in for Hermes Agent v0.19.0 ``tools/registry.py``: the process-global tool registry."""

import json
import logging
import threading

logger = logging.getLogger(__name__)


class ToolEntry:
    def __init__(self, name, toolset, schema, handler):
        self.name, self.toolset, self.schema, self.handler = name, toolset, schema, handler


class ToolRegistry:
    def __init__(self):
        self._lock = threading.Lock()
        self._tools = {}

    def register(self, name, toolset, schema, handler, check_fn=None, requires_env=None, is_async=False,
                 description="", emoji="", max_result_size_chars=None, dynamic_schema_overrides=None,
                 override=False):
        """A same-toolset duplicate overwrites; a clash with another toolset is rejected (logged)."""
        with self._lock:
            existing = self._tools.get(name)
            if existing is not None and existing.toolset != toolset and not override:
                logger.warning("Tool %s already registered by toolset %s; rejected", name, existing.toolset)
                return
            self._tools[name] = ToolEntry(name, toolset, schema, handler)

    def get_toolset_for_tool(self, name):
        entry = self._tools.get(name)
        return entry.toolset if entry else None

    def names_for(self, toolsets):
        """The tool names an agent built now gets (``None`` = every toolset)."""
        with self._lock:
            return sorted(n for n, e in self._tools.items() if toolsets is None or e.toolset in toolsets)

    def dispatch(self, name, args, **kw):
        """Runs the handler; an exception becomes ``{"error": …}`` as upstream."""
        entry = self._tools[name]
        try:
            return entry.handler(args, **kw)
        except Exception as error:
            return json.dumps({"error": f"Tool execution failed: {type(error).__name__}: {error}"})


registry = ToolRegistry()
for _name, _toolset in (("terminal", "terminal"), ("todo", "todo"), ("clarify", "clarify")):
    registry.register(_name, _toolset, {"name": _name}, None)
