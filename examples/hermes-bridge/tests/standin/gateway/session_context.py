"""Stand-in for Hermes Agent v0.19.0 ``gateway/session_context.py``: per-context session variables."""

import contextvars

_vars: contextvars.ContextVar = contextvars.ContextVar("hermes_session_vars", default={})


def set_session_vars(platform=None, session_key=None, **extra):
    """Binds the gateway session of the current context (thread); returns a reset token."""
    values = dict(_vars.get(), **extra)
    values.update(platform=platform, session_key=session_key)
    return _vars.set(values)


def get_session_env(name, default=None):
    return _vars.get().get(name, default)
