"""Stand-in for Hermes Agent v0.19.0 ``tools/approval.py``: dangerous-command guards and the gateway queue.

As upstream (verified on v0.19.0): without a gateway context (a session key with a registered notify
callback, on a thread whose gateway session has a platform) a flagged command is approved SILENTLY.
"""

import contextvars
import os
import re
import threading

from tools import interrupt

_session_key = contextvars.ContextVar("approval_session_key", default=None)
_lock = threading.Lock()
_gateway_queues = {}
_gateway_notify_cbs = {}
_session_approved = {}
_permanent_approved = set()

APPROVAL_TIMEOUT = float(os.environ.get("HERMES_STANDIN_APPROVAL_TIMEOUT", "60"))  # config approvals.timeout
DANGEROUS = ((re.compile(r"\brm\s+-[a-zA-Z]*(rf|fr)"), "recursive delete"),
             (re.compile(r"\bchmod\s+(-R\s+)?777"), "world-writable permissions"),
             (re.compile(r"\bcurl\b[^|]*\|\s*(ba)?sh"), "pipe a download to a shell"))
HARDLINE = (re.compile(r"\brm\s+-[a-zA-Z]*(rf|fr)[a-zA-Z]*\s+/(\s|$)"), re.compile(r"\bmkfs\b"))


class _Entry:
    def __init__(self, data):
        self.data, self.event, self.result, self.reason = data, threading.Event(), None, None


def set_current_session_key(key):
    return _session_key.set(key)


def reset_current_session_key(token):
    _session_key.reset(token)


def get_current_session_key(default="default"):
    return _session_key.get() or default


def register_gateway_notify(session_key, cb):
    with _lock:
        _gateway_notify_cbs[session_key] = cb


def unregister_gateway_notify(session_key):
    """Unregisters and wakes every wait of the key (they read as denied)."""
    with _lock:
        _gateway_notify_cbs.pop(session_key, None)
        entries = _gateway_queues.pop(session_key, [])
    for entry in entries:
        entry.event.set()


def resolve_gateway_approval(session_key, choice, resolve_all=False, reason=None):
    """Wakes the oldest wait of the key (all with ``resolve_all``) with ``choice``; returns how many."""
    with _lock:
        queue = _gateway_queues.get(session_key) or []
        targets = list(queue) if resolve_all else queue[:1]
        del queue[:len(targets)]
    for entry in targets:
        entry.result, entry.reason = choice, reason
        entry.event.set()
    return len(targets)


def approve_session(session_key, pattern_key):
    with _lock:
        _session_approved.setdefault(session_key, set()).add(pattern_key)


def is_approved(session_key, pattern_key):
    with _lock:
        return pattern_key in _permanent_approved or pattern_key in _session_approved.get(session_key, set())


def clear_session(session_key):
    """Drops the key's "session" approvals and denies every wait still queued under it, as upstream."""
    with _lock:
        _session_approved.pop(session_key, None)
        entries = _gateway_queues.pop(session_key, [])
    for entry in entries:
        entry.result = "deny"
        entry.event.set()


def detect_dangerous_command(command):
    for pattern, description in DANGEROUS:
        if pattern.search(command):
            return description, description
    return None


def _in_gateway_context():
    from gateway import session_context
    return session_context.get_session_env("platform") is not None


def check_all_command_guards(command, env_type="local", approval_context=None):
    """``{"approved": bool, "message": str}``; may block on the gateway queue up to ``APPROVAL_TIMEOUT``."""
    if any(p.search(command) for p in HARDLINE):
        return {"approved": False, "message": "BLOCKED: this command is never allowed (hardline pattern)"}
    found = detect_dangerous_command(command)
    if found is None:
        return {"approved": True, "message": ""}
    pattern_key, description = found
    key = get_current_session_key()
    if is_approved(key, pattern_key):
        return {"approved": True, "message": ""}
    with _lock:
        notify = _gateway_notify_cbs.get(key) if _in_gateway_context() else None
    if notify is None:
        return {"approved": True, "message": ""}  # upstream's silent auto-approval
    entry = _Entry({"command": command, "pattern_key": pattern_key, "pattern_keys": [pattern_key],
                    "description": description, "allow_permanent": True})
    with _lock:
        _gateway_queues.setdefault(key, []).append(entry)
    try:
        notify(dict(entry.data))
    except Exception:
        pass
    waited = 0.0
    while not entry.event.wait(0.05):
        waited += 0.05
        if interrupt.is_interrupted():
            entry.result = "deny"
            break
        if APPROVAL_TIMEOUT > 0 and waited >= APPROVAL_TIMEOUT:
            with _lock:
                queue = _gateway_queues.get(key) or []
                if entry in queue:
                    queue.remove(entry)
            return {"approved": False, "message": "BLOCKED: the approval request timed out"}
    choice = entry.result
    if choice in ("once", "session", "always"):
        if choice in ("session", "always"):
            approve_session(key, pattern_key)
        if choice == "always":
            with _lock:
                _permanent_approved.add(pattern_key)
        return {"approved": True, "message": ""}
    reason = f" ({entry.reason})" if entry.reason else ""
    return {"approved": False, "message": f"BLOCKED: the user denied this command{reason}"}
