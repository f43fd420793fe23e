"""The protocol's error answer: an HTTP status and ``{"error":{"code","message","retryable"}}``."""

from __future__ import annotations


class BridgeError(Exception):
    """A request the Bridge refuses, before any stream starts. ``message`` never holds a secret."""

    def __init__(self, status: int, code: str, message: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retryable = retryable

    def body(self) -> dict:
        return {"error": {"code": self.code, "message": self.message, "retryable": self.retryable}}


def invalid(message: str) -> BridgeError:
    """``400 INVALID_REQUEST``."""
    return BridgeError(400, "INVALID_REQUEST", message)


def conflict(code: str, message: str, retryable: bool = False) -> BridgeError:
    """``409`` with ``code``."""
    return BridgeError(409, code, message, retryable)


def run_not_found(run_id: str) -> BridgeError:
    """``404 RUN_NOT_FOUND``."""
    return BridgeError(404, "RUN_NOT_FOUND", f"no such run: {run_id[:200]}")
