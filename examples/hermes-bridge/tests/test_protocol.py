"""The protocol's shapes: auth, errors, a turn's frames from Hermes' callbacks, re-attach, heartbeats."""

import json
import time

import run_agent

from tests.support import TOKEN, BridgeTestCase

TURN = [
    {"reasoning": "I should list the files first"},
    {"tool": "terminal", "args": {"command": "echo hello"}},
    {"tool": "todo", "args": {"todos": [{"id": "1", "content": "look", "status": "completed"},
                                        {"id": "2", "content": "answer", "status": "in_progress"}]}},
    {"say": "All done."},
]


class ErrorsTest(BridgeTestCase):
    def assert_error(self, answer, status, code):
        self.assertEqual(answer[0], status, answer)
        error = answer[1]["error"]
        self.assertEqual(error["code"], code)
        self.assertIsInstance(error["message"], str)
        self.assertIsInstance(error["retryable"], bool)

    def test_health_needs_no_token_and_names_the_protocol(self):
        status, body = self.call("GET", "/health", token=None)
        self.assertEqual(status, 200)
        self.assertEqual(body["protocol"], "hermes-bridge/1")
        self.assertEqual(body["activeRuns"], 0)
        for capability in ("clarify", "cancel", "resume-stream", "host-tools", "approvals", "history"):
            self.assertIn(capability, body["capabilities"])

    def test_every_other_route_needs_the_bearer_token(self):
        self.assert_error(self.call("GET", "/runs/r1", token=None), 401, "UNAUTHORIZED")
        self.assert_error(self.call("POST", "/run", {"runId": "r1", "userMessage": "x"}, token="wrong"), 401,
                          "UNAUTHORIZED")
        self.assertNotIn(TOKEN, self.log.getvalue())

    def test_malformed_requests_are_400_with_the_error_shape(self):
        bad = [
            b"not json", b"[1,2]", json.dumps({"userMessage": "x"}).encode(),
            json.dumps({"runId": "r", "userMessage": "  "}).encode(),
            json.dumps({"runId": "x" * 201, "userMessage": "m"}).encode(),
            json.dumps({"runId": "r", "userMessage": "m", "maxIterations": 0}).encode(),
            json.dumps({"runId": "r", "userMessage": "m", "maxIterations": True}).encode(),
            json.dumps({"runId": "r", "userMessage": "m", "sessionId": ""}).encode(),
            json.dumps({"runId": "r", "userMessage": "m", "hostTools": [{"name": "bad name"}]}).encode(),
            json.dumps({"runId": "r", "userMessage": "m", "history": [{"role": "system", "text": "x"}]}).encode(),
            json.dumps({"runId": "r", "userMessage": "m", "history": [{"role": "tool_result", "toolCallId": "c"}]})
            .encode(),
            json.dumps({"runId": "r", "userMessage": "m", "clientCapabilities": "approvals"}).encode(),
            json.dumps({"runId": "r", "userMessage": "m", "modelConfig": {"model": ["x"]}}).encode(),
        ]
        for raw in bad:
            with self.subTest(raw=raw[:60]):
                self.assert_error(self.call("POST", "/run", raw=raw), 400, "INVALID_REQUEST")
        self.assertEqual(self.core.active_runs(), 0)

    def test_a_body_over_the_limit_is_413(self):
        self.start_bridge(max_body_bytes=1000, attachment_types=[])  # no room added for files
        body = {"runId": "r1", "userMessage": "m" * 2000}
        self.assert_error(self.call("POST", "/run", body), 413, "INVALID_REQUEST")

    def test_unknown_runs_are_404_and_wrong_methods_405(self):
        for method, path in (("GET", "/runs/nope"), ("GET", "/runs/nope/events"), ("POST", "/runs/nope/cancel"),
                             ("POST", "/runs/nope/clarify"), ("POST", "/runs/nope/approval"),
                             ("POST", "/runs/nope/tool-result"), ("POST", "/runs/nope/approval/expire")):
            with self.subTest(path=path):
                self.assert_error(self.call(method, path, {"clarifyId": "c1", "answer": "x"}), 404, "RUN_NOT_FOUND")
        self.assert_error(self.call("GET", "/run"), 405, "METHOD_NOT_ALLOWED")
        self.assert_error(self.call("DELETE", "/runs/nope"), 405, "METHOD_NOT_ALLOWED")
        self.assert_error(self.call("GET", "/elsewhere"), 404, "NOT_FOUND")

    def test_a_second_run_with_the_same_id_is_a_conflict(self):
        self.finished(self.start_run("hello"))
        self.assert_error(self.call("POST", "/run", {"runId": "r1", "userMessage": "again"}), 409, "RUN_ID_CONFLICT")


class TurnTest(BridgeTestCase):
    def test_a_turn_maps_hermes_callbacks_to_frames(self):
        run_agent.SCRIPTS["work"] = TURN
        frames = self.finished(self.start_run("work please"))
        kinds = [f["kind"] for f in frames]
        self.assertEqual(kinds[0], "run_started")
        self.assertFalse(frames[0]["resumedSession"])
        session = frames[0]["hermesSessionId"]
        for frame in frames:
            self.assertEqual(frame["runId"], "r1")
            self.assertIsInstance(frame["ts"], int)
            self.assertIsInstance(frame["tsMicros"], int)
            self.assertNotIn("reflecting", json.dumps(frame))  # thinking_callback is a spinner, not reasoning
        thinking = "".join(f["text"] for f in frames if f["kind"] == "thinking")
        self.assertEqual(thinking.strip(), "I should list the files first")
        call = next(f for f in frames if f["kind"] == "tool_call" and f["toolName"] == "terminal")
        self.assertEqual(call["args"], {"command": "echo hello"})
        self.assertEqual(call["preview"], "echo hello")
        result = next(f for f in frames if f["kind"] == "tool_result" and f["toolCallId"] == call["toolCallId"])
        self.assertIn("hello", json.loads(result["result"])["output"])
        self.assertFalse(result["isError"])
        self.assertFalse(result["truncated"])
        self.assertIsInstance(result["durationMs"], int)
        todo = next(f for f in frames if f["kind"] == "todo_update")
        self.assertEqual(todo["todos"], [{"id": "1", "content": "look", "status": "completed", "parent": None},
                                         {"id": "2", "content": "answer", "status": "in_progress", "parent": None}])
        self.assertEqual(todo["revision"], 1)
        deltas = "".join(f["text"] for f in frames if f["kind"] == "text_delta")
        self.assertEqual(deltas, "All done.")
        self.assertEqual(kinds[-3:], ["usage", "final", "done"])
        self.assertEqual(frames[-3]["inputTokens"], 16)  # 10 for the call, 3 per tool
        self.assertEqual(frames[-3]["outputTokens"], 5)
        self.assertEqual(frames[-3]["totalTokens"], 21)
        self.assertEqual(frames[-2]["text"], "All done.")
        self.assertEqual(frames[-1]["status"], "completed")
        self.assertEqual(frames[-1]["hermesSessionId"], session)

    def test_a_long_tool_result_is_bounded_with_a_marker(self):
        self.start_bridge(max_result_chars=100)
        run_agent.SCRIPTS["long"] = [{"tool": "terminal", "args": {"command": "printf 'x%.0s' $(seq 1 500)"}}]
        frames = self.finished(self.start_run("long output"))
        result = next(f for f in frames if f["kind"] == "tool_result")
        self.assertTrue(result["truncated"])
        self.assertTrue(result["result"].startswith('{"output": "xxxx'))
        self.assertIn("[truncated by the Bridge: 100 of", result["result"])

    def test_a_todo_merge_still_sends_the_whole_list(self):
        run_agent.SCRIPTS["plan"] = [
            {"tool": "todo", "args": {"todos": [{"id": "a", "content": "one", "status": "pending"},
                                                {"id": "b", "content": "two", "status": "pending"}]}},
            {"tool": "todo", "args": {"merge": True, "todos": [{"id": "a", "status": "completed"}]}},
        ]
        updates = [f for f in self.finished(self.start_run("plan")) if f["kind"] == "todo_update"]
        self.assertEqual([u["revision"] for u in updates], [1, 2])
        self.assertEqual([(t["id"], t["status"]) for t in updates[1]["todos"]], [("a", "completed"), ("b", "pending")])

    def test_usage_is_per_turn_although_hermes_counts_per_agent(self):
        first = self.finished(self.start_run("one"))
        session = first[0]["hermesSessionId"]
        second = self.finished(self.start_run("two", run_id="r2", sessionId=session))
        for frames in (first, second):
            usage = next(f for f in frames if f["kind"] == "usage")
            self.assertEqual((usage["inputTokens"], usage["outputTokens"], usage["totalTokens"]), (10, 5, 15))
        self.assertEqual(len(run_agent.AGENTS), 1)


class StreamTest(BridgeTestCase):
    def test_reattaching_after_a_seq_resumes_exactly(self):
        run_agent.SCRIPTS["count"] = [{"say": " ".join(str(i) for i in range(20))}, {"sleep": 0.3},
                                      {"say": "end"}]
        stream = self.start_run("count")
        for _ in range(5):
            stream.next()
        stream.close()
        replay = self.open("GET", "/runs/r1/events?after=3").rest()
        self.assertEqual(replay[0]["seq"], 4)
        self.assertEqual([f["seq"] for f in replay], list(range(4, 4 + len(replay))))
        self.assertEqual(replay[-1]["kind"], "done")
        by_header = self.open("GET", "/runs/r1/events", headers={"Last-Event-ID": "10"}).rest()
        self.assertEqual(by_header[0]["seq"], 11)
        self.assertEqual(by_header, replay[7:])
        whole = self.open("GET", "/runs/r1/events?after=0").rest()
        self.assert_well_formed(whole)
        for bad in ("-1", "x"):
            status, body = self.call("GET", "/runs/r1/events?after=" + bad)
            self.assertEqual((status, body["error"]["code"]), (400, "INVALID_REQUEST"))

    def test_disconnect_is_not_stop(self):
        run_agent.SCRIPTS["slow"] = [{"sleep": 0.4}, {"say": "finished anyway"}]
        stream = self.start_run("slow")
        stream.next()
        stream.close()
        self.wait_for(lambda: self.call("GET", "/runs/r1")[1]["status"] == "completed", what="the run's end")
        status = self.call("GET", "/runs/r1")[1]
        self.assertEqual(status["lastSeq"], len(self.open("GET", "/runs/r1/events").rest()))
        self.assertIsNone(status["pendingClarify"])

    def test_heartbeats_keep_an_idle_stream_alive(self):
        run_agent.SCRIPTS["ask"] = [{"tool": "clarify", "args": {"question": "Which city?"}}]
        stream = self.start_run("ask")
        stream.until("clarify_request")
        started = time.monotonic()
        while stream.pings < 2 and time.monotonic() - started < 3:
            self.assertIsNone(self.read_with_timeout(stream))
        self.assertGreaterEqual(stream.pings, 2)
        self.call("POST", "/runs/r1/cancel")
        self.assertEqual(self.finished(stream)[-1]["status"], "cancelled")

    def read_with_timeout(self, stream):
        stream.sock.settimeout(2)
        line = stream.response.fp.readline().decode()
        if line.startswith(": ping"):
            stream.pings += 1
            return None
        return line.strip() or None

    def test_frames_evicted_from_the_buffer_cannot_be_resumed_silently(self):
        self.start_bridge(max_run_frames=16)
        run_agent.SCRIPTS["many"] = [{"say": " ".join(["w"] * 40)}]
        self.start_run("many").rest()
        status, body = self.call("GET", "/runs/r1/events?after=1")
        self.assertEqual((status, body["error"]["code"]), (404, "RUN_NOT_FOUND"))
        self.assertIn("no longer kept", body["error"]["message"])
        tail = self.open("GET", "/runs/r1/events?after=40").rest()
        self.assertEqual(tail[-1]["kind"], "done")
