"""Secrets (the bearer token, model API keys) and their removal from frames and log lines."""

from __future__ import annotations

import logging
import threading

MASK = "****"
_MIN_SECRET = 4


class Secrets:
    """A thread-safe set of secret strings; :meth:`redact` replaces every one of them with ``****``.

    Contract: once :meth:`add` returned, no text passed through :meth:`redact` contains the secret.
    Strings shorter than 4 characters are not treated as secrets (they would mask ordinary words).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: tuple[str, ...] = ()

    def add(self, secret: str | None) -> None:
        """Remembers ``secret`` (ignored when None or shorter than 4 characters)."""
        if not secret or len(secret) < _MIN_SECRET:
            return
        with self._lock:
            if secret not in self._secrets:
                # longest first, so a secret containing another one is masked whole
                self._secrets = tuple(sorted(self._secrets + (secret,), key=len, reverse=True))

    def redact(self, text: str) -> str:
        """``text`` with every known secret replaced by ``****``."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text


class RedactingFilter(logging.Filter):
    """A logging filter that formats each record and masks the secrets in it (message and traceback)."""

    def __init__(self, secrets: Secrets) -> None:
        super().__init__()
        self._secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep the raw message
            message = str(record.msg)
        record.msg = self._secrets.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._secrets.redact(record.exc_text)
        return True
