"""Test support: a Bridge on a free loopback port over the stand-in Hermes, and a small HTTP/SSE client."""

from __future__ import annotations

import http.client
import io
import json
import logging
import shutil
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any

import run_agent
from tools import approval, terminal_tool

from parley_bridge.config import BridgeConfig
from parley_bridge.core import BridgeCore
from parley_bridge.hermes import HermesApi
from parley_bridge.redact import RedactingFilter, Secrets
from parley_bridge.server import BridgeServer

TOKEN = "test-bridge-token-0123456789"


class Stream:
    """An open SSE response: frames parsed from ``data:`` lines, heartbeats counted."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self.connection, self.response = connection, response
        self.sock = connection.sock
        self.status = response.status
        self.frames: list[dict[str, Any]] = []
        self.pings = 0
        self.ended = False

    def next(self, timeout: float = 10.0) -> dict[str, Any] | None:
        """The next frame; None when the body ended."""
        self.sock.settimeout(timeout)
        while True:
            line = self.response.fp.readline()
            if not line:
                self.ended = True
                return None
            line = line.decode("utf-8").rstrip("\n")
            if line.startswith(": ping"):
                self.pings += 1
            elif line.startswith("data: "):
                frame = json.loads(line[len("data: "):])
                self.frames.append(frame)
                return frame

    def until(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        """Reads up to and including the first frame of ``kind``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            frame = self.next(max(0.1, deadline - time.monotonic()))
            if frame is None:
                raise AssertionError(f"the stream ended before a {kind} frame: {[f['kind'] for f in self.frames]}")
            if frame["kind"] == kind:
                return frame
        raise AssertionError(f"no {kind} frame within {timeout} s")

    def rest(self, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Every frame up to the end of the body (which must come with ``done``)."""
        while self.next(timeout) is not None:
            pass
        self.close()
        return self.frames

    def kinds(self) -> list[str]:
        return [f["kind"] for f in self.frames]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f["kind"] == kind]

    def close(self) -> None:
        self.response.close()
        self.connection.close()


class BridgeTestCase(unittest.TestCase):
    """Starts a Bridge per test (fresh stand-in state); ``self.log`` holds everything it logged."""

    config_overrides: dict[str, Any] = {}

    def setUp(self) -> None:
        run_agent.reset()
        terminal_tool.COMMANDS_RUN.clear()
        with approval._lock:
            approval._session_approved.clear()
            approval._permanent_approved.clear()
        self.work = Path(tempfile.mkdtemp(prefix="bridge-test-"))
        self.addCleanup(shutil.rmtree, self.work, True)
        self.log = io.StringIO()
        self.secrets = Secrets()
        handler = logging.StreamHandler(self.log)
        handler.addFilter(RedactingFilter(self.secrets))
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.DEBUG)
        self.addCleanup(root.removeHandler, handler)
        self.start_bridge()

    def start_bridge(self, **overrides: Any) -> None:
        """(Re)starts the Bridge: a restarted one has no sessions and no runs."""
        if getattr(self, "server", None) is not None:
            self.stop_bridge()
        settings = dict(port=0, token=TOKEN, heartbeat=0.5, work_root=self.work / "work", approval_timeout=5.0,
                        cancel_grace=5.0)
        settings.update(self.config_overrides)
        settings.update(overrides)
        config = BridgeConfig(**settings)
        self.secrets.add(config.token)
        self.core = BridgeCore(config, HermesApi(), self.secrets)
        self.server = BridgeServer(self.core)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.addCleanup(self.stop_bridge)

    def stop_bridge(self) -> None:
        server, self.server = getattr(self, "server", None), None
        if server is not None:
            server.shutdown()
            server.server_close()

    # ------------------------------------------------------------------ HTTP

    def _connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=10)

    def call(self, method: str, path: str, body: Any = None, token: str | None = TOKEN,
             raw: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        """A JSON call: (status, parsed body)."""
        connection = self._connection()
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if token:
            all_headers["Authorization"] = "Bearer " + token
        connection.request(method, path, body=data, headers=all_headers)
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        return response.status, json.loads(payload) if payload else {}

    def open(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Stream:
        connection = self._connection()
        connection.connect()
        sock = connection.sock
        all_headers = {"Accept": "text/event-stream", "Content-Type": "application/json",
                       "Authorization": "Bearer " + TOKEN, **(headers or {})}
        connection.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                           headers=all_headers)
        response = connection.getresponse()
        if response.status != 200:
            raise AssertionError(f"{method} {path} answered {response.status}: {response.read()!r}")
        stream = Stream(connection, response)
        stream.sock = sock
        return stream

    def start_run(self, message: str, run_id: str = "r1", **fields: Any) -> Stream:
        body = {"runId": run_id, "threadId": "t1", "sessionId": None, "userMessage": message,
                "clientCapabilities": ["approvals", "history"]}
        body.update(fields)
        return self.open("POST", "/run", body)

    def finished(self, stream: Stream) -> list[dict[str, Any]]:
        frames = stream.rest()
        self.assert_well_formed(frames)
        return frames

    def assert_well_formed(self, frames: list[dict[str, Any]]) -> None:
        """seq 1, 2, 3 …; run_started first; exactly one done, last."""
        self.assertEqual([f["seq"] for f in frames], list(range(1, len(frames) + 1)))
        self.assertEqual(frames[0]["kind"], "run_started")
        self.assertEqual([f["kind"] for f in frames].count("done"), 1)
        self.assertEqual(frames[-1]["kind"], "done")

    def wait_for(self, condition: Any, timeout: float = 5.0, what: str = "the condition") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.02)
        self.fail(f"{what} did not happen within {timeout} s")
