"""HTTP: the routes of the Hermes Bridge protocol v1 over ``http.server.ThreadingHTTPServer``."""

from __future__ import annotations

import hmac
import json
import logging
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from . import PROTOCOL, admission
from . import attachments as attachments_mod
from . import history as history_mod
from .core import BridgeCore
from .errors import BridgeError, invalid
from .frames import FramesGone
from .runs import Run
from .turn import TurnSpec

log = logging.getLogger("parley_bridge.http")

# W3C Trace Context: version-traceid-parentid-flags, lower-case hex; an all-zero trace id is invalid
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")


def trace_id(traceparent: str | None) -> str | None:
    """The trace id of a W3C ``traceparent`` header, or None for none or one that is not well formed."""
    if traceparent is None:
        return None
    match = _TRACEPARENT.match(traceparent.strip())
    if match is None or match.group(1) == "0" * 32:
        return None
    return match.group(1)

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ROUTES = {  # (path pattern, method)
    "health": (re.compile(r"^/health$"), "GET"),
    "run": (re.compile(r"^/run$"), "POST"),
    "status": (re.compile(r"^/runs/([^/]+)$"), "GET"),
    "events": (re.compile(r"^/runs/([^/]+)/events$"), "GET"),
    "clarify": (re.compile(r"^/runs/([^/]+)/clarify$"), "POST"),
    "cancel": (re.compile(r"^/runs/([^/]+)/cancel$"), "POST"),
    "tool_result": (re.compile(r"^/runs/([^/]+)/tool-result$"), "POST"),
    "approval": (re.compile(r"^/runs/([^/]+)/approval$"), "POST"),
    "expire": (re.compile(r"^/runs/([^/]+)/approval/expire$"), "POST"),
    "forget": (re.compile(r"^/threads/([^/]+)$"), "DELETE"),
}


def _route(path: str) -> tuple[str, str, str | None] | None:
    """(route name, its method, the decoded id in the path) for ``path``; None for no route."""
    for name, (pattern, method) in _ROUTES.items():
        match = pattern.match(path)
        if match is not None:
            return name, method, unquote(match.group(1)) if match.groups() else None
    return None


class BridgeServer(ThreadingHTTPServer):
    """The HTTP server; one thread per connection, daemon threads (a stream may last days)."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, core: BridgeCore) -> None:
        self.core = core
        super().__init__((core.config.host, core.config.port), Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: BridgeServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("%s %s", self.address_string(), format % args)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, method: str) -> None:
        """Headers first (admission: Origin, Host, Content-Type; the route; the token), the body only then."""
        core = self.server.core
        url = urlsplit(self.path)
        self._body_read = False
        route = _route(url.path)
        try:
            admission.check_request(self.headers, method, core.config.token is not None)
            if route is None:
                raise BridgeError(404, "NOT_FOUND", "no such route: " + url.path[:200])
            name, allowed, key = route
            if method != allowed:
                raise BridgeError(405, "METHOD_NOT_ALLOWED", f"use {allowed} for this route")
            if name != "health":
                self._authorize()
            body = self._read_body(core.max_run_body() if name == "run" else core.config.max_body_bytes)
            getattr(self, "_" + name)(core, body, key, parse_qs(url.query))
        except BridgeError as error:
            if error.status in (401, 403, 415):
                log.warning("Refused %s %s from %s: %s", method, url.path[:200], self.client_address[0], error.code)
            self._refuse(error, allow=route[1] if route is not None and error.status == 405 else None)
        except (BrokenPipeError, ConnectionResetError):
            log.debug("The client left")
        except Exception:
            log.exception("%s %s failed", method, url.path[:200])
            self._refuse(BridgeError(500, "INTERNAL", "the Bridge failed; see its log"))

    def _refuse(self, error: BridgeError, allow: str | None = None) -> None:
        """The error answer; the connection is closed if the request's body was left unread."""
        unread = not self._body_read and (bool(self.headers.get("Transfer-Encoding"))
                                          or self.headers.get("Content-Length", "0").strip() not in ("", "0"))
        if unread:
            self.close_connection = True
        self._json(error.status, error.body(), allow=allow, close=unread)

    def _read_body(self, limit: int) -> bytes:
        """The body (an authorized request's only), at most ``limit`` bytes."""
        if self.headers.get("Transfer-Encoding"):
            raise invalid("send the body with a Content-Length (Transfer-Encoding is not supported)")
        length = self.headers.get("Content-Length")
        if not length:
            self._body_read = True
            return b""
        try:
            size = int(length)
        except ValueError:
            raise invalid("Content-Length is not a number") from None
        if size < 0:
            raise invalid("Content-Length is negative")
        if size > limit:
            raise BridgeError(413, "INVALID_REQUEST", f"the body is over {limit} bytes")
        body = self.rfile.read(size)
        self._body_read = True
        return body

    def _authorize(self) -> None:
        token = self.server.core.config.token
        if token is None:
            return
        given = self.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode("utf-8"), ("Bearer " + token).encode("utf-8")):
            raise BridgeError(401, "UNAUTHORIZED", "a missing or wrong bearer token")

    def _json(self, status: int, payload: dict[str, Any], allow: str | None = None, close: bool = False) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if allow:
            self.send_header("Allow", allow)
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    @staticmethod
    def _object(body: bytes) -> dict[str, Any]:
        try:
            value = json.loads(body.decode("utf-8")) if body else None
        except (UnicodeDecodeError, ValueError):
            raise invalid("the body is not JSON") from None
        if not isinstance(value, dict):
            raise invalid("the body must be a JSON object")
        return value

    # ------------------------------------------------------------------ routes

    def _health(self, core: BridgeCore, body: bytes, run_id: str | None, query: dict) -> None:
        self._json(200, {"protocol": PROTOCOL, **core.health()})

    def _run(self, core: BridgeCore, body: bytes, run_id: str | None, query: dict) -> None:
        run = core.start(parse_run_request(self._object(body), core.attachment_limits))
        trace = trace_id(self.headers.get("traceparent"))
        if trace is not None:
            log.info("Run %s: trace %s", run.run_id, trace)
        self._stream(run, 0)

    def _status(self, core: BridgeCore, body: bytes, run_id: str, query: dict) -> None:
        self._json(200, core.run(run_id).snapshot())

    def _events(self, core: BridgeCore, body: bytes, run_id: str, query: dict) -> None:
        run = core.run(run_id)
        given = query["after"][-1] if "after" in query else self.headers.get("Last-Event-ID")
        after = 0
        if given is not None:
            try:
                after = int(given.strip())
            except ValueError:
                after = -1
            if after < 0:
                raise invalid("after must be a non-negative integer")
        try:
            run.frames.read(after, 0)
        except FramesGone as gone:
            raise BridgeError(404, "RUN_NOT_FOUND", str(gone)) from None
        self._stream(run, after)

    def _clarify(self, core: BridgeCore, body: bytes, run_id: str, query: dict) -> None:
        run = core.run(run_id)
        request = self._object(body)
        clarify_id, answer = request.get("clarifyId"), request.get("answer")
        if not isinstance(clarify_id, str) or not clarify_id:
            raise invalid("clarifyId must be a non-blank string")
        if isinstance(answer, str):
            answer = [answer]
        if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
            raise invalid("answer must be a string or a list of strings")
        self._json(200, {"accepted": True, "replayed": run.answer_clarify(clarify_id, answer)})

    def _cancel(self, core: BridgeCore, body: bytes, run_id: str, query: dict) -> None:
        run = core.run(run_id)
        ended = run.cancel()
        if ended is not None:
            self._json(200, {"status": ended})
        else:
            log.info("Run %s: cancel requested", run_id)
            self._json(202, {"status": "cancelling"})

    def _tool_result(self, core: BridgeCore, body: bytes, run_id: str, query: dict) -> None:
        run = core.run(run_id)
        request = self._object(body)
        call_id, result, is_error = request.get("toolCallId"), request.get("result"), request.get("isError", False)
        if not isinstance(call_id, str) or not call_id:
            raise invalid("toolCallId must be a non-blank string")
        if not isinstance(result, str):
            raise invalid("result must be a string")
        if not isinstance(is_error, bool):
            raise invalid("isError must be a boolean")
        self._json(200, {"accepted": True, "replayed": run.submit_tool_result(call_id, result, is_error)})

    def _approval(self, core: BridgeCore, body: bytes, run_id: str, query: dict) -> None:
        run = core.run(run_id)
        request = self._object(body)
        approval_id, decision = request.get("approvalId"), request.get("decision")
        if not isinstance(approval_id, str) or not approval_id or not isinstance(decision, str):
            raise invalid("approvalId and decision must be strings")
        replayed = run.decide_approval(approval_id, decision)
        log.info("Run %s: approval %s decided %s", run_id, approval_id[:100], decision)
        self._json(200, {"accepted": True, "replayed": replayed})

    def _expire(self, core: BridgeCore, body: bytes, run_id: str, query: dict) -> None:
        run = core.run(run_id)
        approval_id = self._object(body).get("approvalId")
        if not isinstance(approval_id, str) or not approval_id:
            raise invalid("approvalId must be a non-blank string")
        self._json(200, {"accepted": True, "replayed": run.expire_approval(approval_id)})

    def _forget(self, core: BridgeCore, body: bytes, thread_id: str, query: dict) -> None:
        if not thread_id.strip():
            raise invalid("threadId must be a non-blank string")
        core.forget_thread(thread_id)
        self.send_response(204)
        self.end_headers()

    # ------------------------------------------------------------------ streams

    def _stream(self, run: Run, after: int) -> None:
        """Frames after ``after``, then live ones and heartbeats, until ``done``. Leaving does not cancel."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Accel-Buffering", "no")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        heartbeat = self.server.core.config.heartbeat
        try:
            while True:
                try:
                    frames, closed = run.frames.read(after, heartbeat)
                except FramesGone:
                    log.warning("Run %s: a stream fell behind the frame buffer; closing it", run.run_id)
                    return
                if frames:
                    self.wfile.write(b"".join(frames))
                    after += len(frames)
                elif closed:
                    return
                else:
                    self.wfile.write(b": ping\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            log.debug("Run %s: a stream's client left after seq %d (the run goes on)", run.run_id, after)


def parse_run_request(body: dict[str, Any], limits: attachments_mod.Limits | None = None) -> TurnSpec:
    """``POST /run``'s body, checked field by field; 400 INVALID_REQUEST names the first bad one (413 TOO_LARGE
    for attachments past ``limits``; without ``limits`` none are taken)."""
    run_id, message, session = body.get("runId"), body.get("userMessage"), body.get("sessionId")
    if not isinstance(run_id, str) or not run_id.strip() or len(run_id) > 200:
        raise invalid("runId must be a non-blank string of at most 200 characters")
    if not isinstance(message, str) or not message.strip():
        raise invalid("userMessage must be a non-blank string")
    if session is not None and (not isinstance(session, str) or not session.strip()):
        raise invalid("sessionId must be a non-blank string or null")
    for name in ("threadId", "systemPrompt"):
        if body.get(name) is not None and not isinstance(body.get(name), str):
            raise invalid(f"{name} must be a string or null")
    iterations = body.get("maxIterations")
    if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1):
        raise invalid("maxIterations must be a positive integer")
    model = body.get("modelConfig") or {}
    if not isinstance(model, dict):
        raise invalid("modelConfig must be an object")
    for key, value in model.items():
        if isinstance(value, bool) or (value is not None and not isinstance(value, (str, int))):
            raise invalid(f"modelConfig.{key} must be a string, a number or null")
    tools = body.get("hostTools") or []
    if not isinstance(tools, list):
        raise invalid("hostTools must be a list")
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not _TOOL_NAME.match(tool["name"]):
            raise invalid(f"hostTools[{index}].name must be 1-64 letters, digits, '_' or '-'")
        if tool.get("parameters") is not None and not isinstance(tool.get("parameters"), dict):
            raise invalid(f"hostTools[{index}].parameters must be a JSON Schema object")
        if tool.get("description") is not None and not isinstance(tool.get("description"), str):
            raise invalid(f"hostTools[{index}].description must be a string")
    capabilities = body.get("clientCapabilities") or []
    if not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities):
        raise invalid("clientCapabilities must be a list of strings")
    context = body.get("context")
    if context is not None and not isinstance(context, dict):
        raise invalid("context must be an object")
    history = body.get("history")
    if history is not None:
        history = history_mod.validate(history)
    files = attachments_mod.parse(body.get("attachments"), limits or attachments_mod.Limits((), 0, 0))
    return TurnSpec(run_id=run_id, thread_id=body.get("threadId") or None, session_id=session,
                    user_message=message, system_prompt=body.get("systemPrompt"), max_iterations=iterations,
                    model={k: v for k, v in model.items() if v is not None},
                    host_tools=[{"name": t["name"], "description": t.get("description") or "",
                                 "parameters": t.get("parameters") or {"type": "object", "properties": {}}}
                                for t in tools],
                    capabilities=frozenset(capabilities), context=context or None, history=history,
                    attachments=files)
