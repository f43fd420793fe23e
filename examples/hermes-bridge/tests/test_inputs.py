"""Inputs the run waits for: clarify, host tools, and cancel releasing them (interrupt alone does not)."""

import json

import run_agent

from tests.support import BridgeTestCase

ASK = [{"tool": "clarify", "args": {"question": "Which city?", "choices": ["Paris", "Rome"]}}, {"say": "ok"}]
LOOKUP = {"name": "lookup_order", "description": "Finds an order", "parameters": {
    "type": "object", "properties": {"id": {"type": "string"}}}}


class ClarifyTest(BridgeTestCase):
    def test_a_clarify_blocks_until_answered_and_answers_are_idempotent(self):
        run_agent.SCRIPTS["ask"] = ASK
        stream = self.start_run("ask me")
        request = stream.until("clarify_request")
        self.assertEqual((request["question"], request["choices"], request["multiSelect"], request["questions"]),
                         ("Which city?", ["Paris", "Rome"], False, None))
        status = self.call("GET", "/runs/r1")[1]
        self.assertEqual(status["status"], "waiting_for_clarification")
        self.assertEqual(status["pendingClarify"]["clarifyId"], request["clarifyId"])
        answer = {"clarifyId": request["clarifyId"], "answer": ["Paris"]}
        self.assertEqual(self.call("POST", "/runs/r1/clarify", answer), (200, {"accepted": True, "replayed": False}))
        self.assertEqual(self.call("POST", "/runs/r1/clarify", answer), (200, {"accepted": True, "replayed": True}))
        other = self.call("POST", "/runs/r1/clarify", {"clarifyId": request["clarifyId"], "answer": "Rome"})
        self.assertEqual((other[0], other[1]["error"]["code"]), (409, "CLARIFY_NOT_PENDING"))
        unknown = self.call("POST", "/runs/r1/clarify", {"clarifyId": "c99", "answer": "Rome"})
        self.assertEqual(unknown[0], 409)
        frames = self.finished(stream)
        self.assertIn({"clarifyId": request["clarifyId"], "outcome": "answered"},
                      [{k: f[k] for k in ("clarifyId", "outcome")} for f in frames if f["kind"] == "clarify_resolved"])
        result = next(f for f in frames if f["kind"] == "tool_result")
        self.assertEqual(json.loads(result["result"])["user_response"], "Paris")
        self.assertEqual(frames[-1]["status"], "completed")

    def test_a_multi_select_answer_reaches_hermes_as_a_json_list(self):
        run_agent.SCRIPTS["pick"] = [{"tool": "clarify", "args": {"question": "Which?", "choices": ["a", "b", "c"],
                                                                  "multi_select": True}}]
        stream = self.start_run("pick")
        request = stream.until("clarify_request")
        self.assertTrue(request["multiSelect"])
        self.call("POST", "/runs/r1/clarify", {"clarifyId": request["clarifyId"], "answer": ["a", "c"]})
        result = next(f for f in self.finished(stream) if f["kind"] == "tool_result")
        self.assertEqual(json.loads(json.loads(result["result"])["user_response"]), ["a", "c"])

    def test_cancel_releases_a_waiting_clarify(self):
        run_agent.SCRIPTS["ask"] = ASK
        stream = self.start_run("ask me")
        request = stream.until("clarify_request")
        self.assertEqual(self.call("POST", "/runs/r1/cancel"), (202, {"status": "cancelling"}))
        frames = self.finished(stream)
        self.assertEqual([f["kind"] for f in frames][-2:], ["clarify_resolved", "done"])
        self.assertEqual(frames[-2]["outcome"], "cancelled")
        self.assertEqual(frames[-1]["status"], "cancelled")
        self.assertNotIn("final", [f["kind"] for f in frames])
        self.assertTrue(run_agent.AGENTS[0]._interrupted.is_set())
        self.assertEqual(self.call("POST", "/runs/r1/cancel"), (200, {"status": "cancelled"}))
        late = self.call("POST", "/runs/r1/clarify", {"clarifyId": request["clarifyId"], "answer": "Paris"})
        self.assertEqual(late[0], 409)

    def test_cancel_interrupts_a_model_call_and_a_running_command(self):
        run_agent.SCRIPTS["think"] = [{"sleep": 30}]
        run_agent.SCRIPTS["run"] = [{"tool": "terminal", "args": {"command": "sleep 30"}}]
        for run_id, message in (("r1", "think hard"), ("r2", "run it")):
            with self.subTest(message=message):
                stream = self.start_run(message, run_id=run_id, threadId=run_id)
                stream.until("run_started" if message == "think hard" else "tool_call")
                self.assertEqual(self.call("POST", f"/runs/{run_id}/cancel")[0], 202)
                frames = self.finished(stream)
                self.assertEqual(frames[-1]["status"], "cancelled")
                self.assertEqual([f["kind"] for f in frames].count("tool_result"), 0)
        killed = json.loads(run_agent.AGENTS[1].messages[-1]["content"])
        self.assertEqual(killed["exit_code"], 130)  # interrupt killed it; the 30 s sleep did not finish

    def test_cancel_before_anything_happened_still_ends_the_stream(self):
        run_agent.SCRIPTS["wait"] = [{"sleep": 30}]
        stream = self.start_run("wait")
        self.call("POST", "/runs/r1/cancel")
        self.assertEqual(self.finished(stream)[-1]["status"], "cancelled")


class HostToolsTest(BridgeTestCase):
    def test_a_host_tool_call_round_trips_to_the_client(self):
        run_agent.SCRIPTS["order"] = [{"tool": "lookup_order", "args": {"id": "42"}}, {"say": "found it"}]
        stream = self.start_run("order 42", hostTools=[LOOKUP])
        call = stream.until("tool_call")
        self.assertEqual((call["toolName"], call["args"]), ("lookup_order", {"id": "42"}))
        self.wait_for(lambda: self.call("GET", "/runs/r1")[1]["status"] == "waiting_for_tool_result")
        self.assertEqual(self.call("GET", "/runs/r1")[1]["pendingToolCall"]["toolCallId"], call["toolCallId"])
        answer = {"toolCallId": call["toolCallId"], "result": "order 42: shipped", "isError": False}
        self.assertEqual(self.call("POST", "/runs/r1/tool-result", answer)[1], {"accepted": True, "replayed": False})
        self.assertEqual(self.call("POST", "/runs/r1/tool-result", answer)[1], {"accepted": True, "replayed": True})
        other = self.call("POST", "/runs/r1/tool-result", dict(answer, result="other"))
        self.assertEqual((other[0], other[1]["error"]["code"]), (409, "TOOL_CALL_NOT_PENDING"))
        frames = self.finished(stream)
        result = next(f for f in frames if f["kind"] == "tool_result")
        self.assertEqual((result["result"], result["isError"]), ("order 42: shipped", False))
        self.assertIn("lookup_order", run_agent.CALLS[0]["tools"])  # registered before the agent was built
        tool_message = next(m for m in run_agent.AGENTS[0].messages if m.get("role") == "tool")
        self.assertEqual(tool_message["content"], "order 42: shipped")

    def test_a_host_error_result_is_an_error_for_the_agent(self):
        run_agent.SCRIPTS["order"] = [{"tool": "lookup_order", "args": {"id": "1"}}]
        stream = self.start_run("order", hostTools=[LOOKUP])
        call = stream.until("tool_call")
        self.wait_for(lambda: self.call("GET", "/runs/r1")[1]["status"] == "waiting_for_tool_result")
        self.call("POST", "/runs/r1/tool-result", {"toolCallId": call["toolCallId"], "result": "no", "isError": True})
        result = next(f for f in self.finished(stream) if f["kind"] == "tool_result")
        self.assertTrue(result["isError"])
        self.assertEqual(json.loads(result["result"]), {"error": "no"})

    def test_a_run_may_only_call_the_host_tools_it_declared(self):
        run_agent.SCRIPTS["order"] = [{"tool": "lookup_order", "args": {"id": "1"}}]
        stream = self.start_run("order", hostTools=[LOOKUP])
        call = stream.until("tool_call")
        self.wait_for(lambda: self.call("GET", "/runs/r1")[1]["status"] == "waiting_for_tool_result")
        self.call("POST", "/runs/r1/tool-result", {"toolCallId": call["toolCallId"], "result": "ok"})
        self.finished(stream)
        other = self.finished(self.start_run("order", run_id="r2", threadId="t2"))  # declares none
        result = next(f for f in other if f["kind"] == "tool_result")
        self.assertTrue(result["isError"])
        self.assertIn("not available in this conversation", result["result"])

    def test_a_host_tool_named_like_a_hermes_tool_is_refused(self):
        status, body = self.call("POST", "/run", {"runId": "r1", "userMessage": "x",
                                                  "hostTools": [dict(LOOKUP, name="terminal")]})
        self.assertEqual((status, body["error"]["code"]), (400, "INVALID_REQUEST"))

    def test_cancel_releases_a_host_tool_wait(self):
        run_agent.SCRIPTS["order"] = [{"tool": "lookup_order", "args": {"id": "1"}}, {"say": "never"}]
        stream = self.start_run("order", hostTools=[LOOKUP])
        stream.until("tool_call")
        self.wait_for(lambda: self.call("GET", "/runs/r1")[1]["status"] == "waiting_for_tool_result")
        self.call("POST", "/runs/r1/cancel")
        frames = self.finished(stream)
        self.assertEqual(frames[-1]["status"], "cancelled")
        self.assertNotIn("final", [f["kind"] for f in frames])
