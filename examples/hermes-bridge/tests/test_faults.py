"""Faults end streams (never a hung one); secrets never reach frames or logs; stdout stays clean."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request
from pathlib import Path

import run_agent

from parley_bridge.history import to_hermes, validate
from tests.support import TOKEN, BridgeTestCase

HERE = Path(__file__).resolve().parent
API_KEY = "sk-test-secret-9f8e7d6c5b4a"


class FaultsTest(BridgeTestCase):
    def test_a_provider_failure_is_an_error_frame_then_done_failed(self):
        run_agent.SCRIPTS["fail"] = [{"fail": "upstream 503 from the provider"}]
        started = time.monotonic()
        with contextlib.redirect_stdout(io.StringIO()):  # Hermes prints; the process test covers where to
            frames = self.finished(self.start_run("fail now"))
        self.assertLess(time.monotonic() - started, 3)
        self.assertEqual([f["kind"] for f in frames][-2:], ["error", "done"])
        self.assertEqual(frames[-2]["code"], "PROVIDER_FAILED")
        self.assertIn("upstream 503", frames[-2]["message"])
        self.assertEqual(frames[-1]["status"], "failed")
        self.assertNotIn("final", [f["kind"] for f in frames])

    def test_an_exception_in_the_agent_is_an_error_frame_then_done_failed(self):
        run_agent.SCRIPTS["boom"] = [{"raise": "kaboom"}]
        frames = self.finished(self.start_run("boom"))
        self.assertEqual((frames[-2]["kind"], frames[-2]["code"]), ("error", "AGENT_FAILED"))
        self.assertIn("kaboom", frames[-2]["message"])
        self.assertEqual(frames[-1]["status"], "failed")
        self.turn_after_failure()

    def turn_after_failure(self):
        session = self.call("GET", "/runs/r1")[1]["hermesSessionId"]
        frames = self.finished(self.start_run("hello", run_id="r2", sessionId=session))
        self.assertEqual(frames[-1]["status"], "completed")  # the session was released

    def test_an_iteration_budget_spent_is_said_then_the_summary_is_final(self):
        run_agent.SCRIPTS["budget"] = [{"budget": True}]
        frames = self.finished(self.start_run("budget", maxIterations=3))
        warning = next(f for f in frames if f["kind"] == "status")
        self.assertIn("max_iterations_reached(3/3)", warning["text"])
        self.assertEqual((frames[-2]["kind"], frames[-2]["text"]), ("final", "summary of what was done"))

    def test_secrets_never_reach_frames_or_logs(self):
        run_agent.SCRIPTS["leak"] = [{"leak": True}, {"tool": "terminal", "args": {"command": f"echo {API_KEY}"}},
                                     {"raise": f"failed with key {API_KEY} and token {TOKEN}"}]
        frames = self.finished(self.start_run("leak", modelConfig={"model": "m", "apiKey": API_KEY}))
        self.assertEqual(run_agent.AGENTS[0].api_key, API_KEY)  # Hermes got it ...
        text = json.dumps(frames)
        self.assertNotIn(API_KEY, text)  # ... nobody else
        self.assertNotIn(TOKEN, text)
        self.assertIn("****", text)
        self.assertNotIn(API_KEY, self.log.getvalue())
        self.assertNotIn(TOKEN, self.log.getvalue())
        self.assertNotIn(API_KEY, json.dumps(self.call("GET", "/runs/r1")[1]))


class HistoryTest(unittest.TestCase):
    def test_parley_order_becomes_hermes_order_and_unpaired_calls_are_dropped(self):
        history = validate([
            {"role": "user", "text": "q1"},
            {"role": "assistant", "text": "a1"},
            {"role": "tool_call", "toolCallId": "c1", "toolName": "terminal", "args": {"command": "ls"}},
            {"role": "tool_result", "toolCallId": "c1", "toolName": "terminal", "result": "x", "isError": False},
            {"role": "tool_call", "toolCallId": "c2", "toolName": "terminal", "args": "{}"},
            {"role": "user", "text": "q2"},
            {"role": "assistant", "text": "  "},
        ])
        self.assertEqual(to_hermes(history), [
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "x"},
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "q2"},
        ])


class ProcessTest(unittest.TestCase):
    """``python -m parley_bridge`` as a process: the port file, the token from the environment, no stdout."""

    def test_the_bridge_process_serves_and_keeps_stdout_clean(self):
        work = Path(tempfile.mkdtemp(prefix="bridge-process-"))
        self.addCleanup(shutil.rmtree, work, True)
        scripts = work / "scripts.json"
        scripts.write_text(json.dumps({"noisy": [{"print": "hermes was here"}, {"say": "quiet answer"}]}))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE / "standin"), str(HERE.parent)]),
                   HERMES_STANDIN_SCRIPTS=str(scripts), PARLEY_BRIDGE_TOKEN=TOKEN)
        process = subprocess.Popen([sys.executable, "-m", "parley_bridge", "--port", "0", "--port-file",
                                    str(work / "port"), "--work-root", str(work / "work")], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 20
            while not (work / "port").exists() and time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.05)
            port = int((work / "port").read_text())
            request = urllib.request.Request(f"http://127.0.0.1:{port}/run", method="POST", data=json.dumps(
                {"runId": "p1", "userMessage": "noisy"}).encode(), headers={"Authorization": "Bearer " + TOKEN,
                                                                           "Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as response:
                body = response.read().decode()
            self.assertIn('"kind":"final","text":"quiet answer"', body)
        finally:
            process.terminate()
            out, err = process.communicate(timeout=10)
        self.assertEqual(out, "")
        self.assertIn("listening on http://127.0.0.1:", err)
        self.assertIn("hermes was here", err)
        self.assertNotIn(TOKEN, err)
